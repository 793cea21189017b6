"""The README's main job, end to end on the embedded sample (the probe step is covered in tests/probe)."""

from pathlib import Path

import pytest

from factatlas.errors import ConfigError
from factatlas.pipeline import QuickstartConfig, prepare_run_dir, run_quickstart
from factatlas.tables import read_rows


def test_quickstart_publishes_what_it_built_and_reads_it_back(tmp_path):
    run = tmp_path / "qs"
    result = run_quickstart(QuickstartConfig(run=run, skip_probe=True), say=lambda _msg: None)
    prompts = read_rows(run / "build" / "prompts.parquet")
    per_lang: dict[str, dict[str, int]] = {}
    for row in prompts:
        splits = per_lang.setdefault(f"arab-west.{row['lang']}", {})
        splits[row["split"]] = splits.get(row["split"], 0) + 1
    # every config of the tagged release loads with datasets and holds exactly the built rows
    assert {k: v for k, v in result.loaded.items() if k != "all"} == per_lang
    assert sum(result.loaded["all"].values()) == len(prompts)
    assert result.counts["facts"] > 1000
    # a rerun starts afresh in its own folder and publishes v1.0.0 again without clashing
    again = run_quickstart(QuickstartConfig(run=run, skip_probe=True), say=lambda _msg: None)
    assert again.loaded == result.loaded


def test_quickstart_never_deletes_a_folder_it_did_not_make(tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="was not made by `factatlas quickstart`"):
        prepare_run_dir(foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"
    prepare_run_dir(Path(tmp_path / "fresh"))
    assert (tmp_path / "fresh" / ".factatlas-quickstart").exists()
