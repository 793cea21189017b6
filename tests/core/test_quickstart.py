"""The README's main job, end to end on the embedded sample (the probe step is covered in tests/probe).

The two checks of a whole quickstart run are in the extended tier (README.md "Run the tests"): the README's first
command run as written, as the docs pages are; every stage it chains is tested in its own room."""

import re
from pathlib import Path

import pytest

from factatlas.app.pipeline import QuickstartConfig, prepare_run_dir, run_quickstart
from factatlas.errors import ConfigError
from factatlas.stopwatch import Stopwatch, recording, time_table
from factatlas.tables import read_rows


def _has_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    """One quickstart for the module's checks (probe included where torch is installed; few fine-tuning
    steps: the lines, not the scores, are tested): its result, its lines on screen, its stopwatch."""
    said: list[str] = []
    run = tmp_path_factory.mktemp("quickstart") / "qs"
    with recording(Stopwatch()) as watch:
        result = run_quickstart(QuickstartConfig(run=run, tiny_steps=20, skip_probe=not _has_torch()),
                                say=said.append)
    return run, result, said, watch


@pytest.mark.slow
@pytest.mark.extended
def test_quickstart_publishes_what_it_built_and_reads_it_back(quickstart):
    run, result, _said, _watch = quickstart
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


@pytest.mark.slow
@pytest.mark.extended
def test_quickstart_says_which_split_each_number_comes_from(quickstart):
    """The tiny model learns the dev split; the numbers are printed per split and the verdict names the
    held-out split it was computed on (issue 13)."""
    pytest.importorskip("torch")
    _run, result, said, watch = quickstart
    stages = ["load libraries", "curate", "build", "probe", "report", "publish", "read back"]
    assert list(result.seconds) == stages
    # where the time went: every stage, and the parts of the probe and the report, in the order they ran
    assert list(watch.sections) == ["load libraries", "curate", "build", "probe", "probe/tiny model: tokenizer",
                                    "probe/tiny model: fine-tune", "probe/score", "probe/score template-only",
                                    "probe/metrics", "report", "report/metrics", "report/plots", "report/analyses",
                                    "publish", "read back"]
    table = time_table(watch)
    assert [line[:40].strip() for line in table[1:]] == [
        "load libraries", "curate", "build", "probe", "tiny model: tokenizer", "tiny model: fine-tune", "score",
        "score template-only", "metrics", "the rest", "report", "metrics", "plots", "analyses", "the rest",
        "publish", "read back", "outside the stages (start-up)", "process total", "of it: garbage collection"]
    per_split = [line for line in said if line.startswith("P@1 on ")]
    assert [line.split(" (")[0] for line in per_split] == ["P@1 on dev", "P@1 on test"]
    assert all(re.search(r"\(\d+ prompts\): 0\.\d{3} full prompt vs 0\.\d{3} template-only$", line)
               for line in per_split), per_split
    verdict_at = next(i for i, line in enumerate(said) if line.startswith("report: "))
    assert said[verdict_at].endswith("verdict FAIL")
    assert said[verdict_at + 1].startswith("  verdict computed on the held-out split test: "), said[verdict_at + 1]
    assert "(trained on dev)" in said[verdict_at + 1]
    # the report reuses the metrics the probe computed for it (tests/probe/test_validation.py: when it may)
    assert "  metrics: reused metrics.json: same inputs and configuration" in said[verdict_at:]
