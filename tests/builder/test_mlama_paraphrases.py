"""mParaRel's extra paraphrases: each language's mLAMA template of a relation joins the library as the cloze
template <P>/mlama (Fierro & Søgaard 2022, dataset construction)."""

from __future__ import annotations

import json

import pytest

from factatlas.builder.pararel import read_mlama_paraphrases, with_mlama_paraphrases
from factatlas.errors import ConfigError
from factatlas.templates import load_library
from tests.builder.importers import reference
from tests.clirun import factatlas

MLAMA = reference("mlama", "templates")


def test_added_skipped_and_counted_by_hand():
    library = load_library(["en", "fr", "ja"])
    mlama = {"en": {"P19": "[X] was born in [Y] .",      # = P19/1 "[X] was born in [Y.def]." up to features
                    "P36": "[X] has the capital [Y] .",   # new: added, LAMA's " ." closed up
                    "P101": "[X] works in the field of [Y] .",  # P101 is not a curated predicate
                    "P17": "[X] is located in"},          # no [Y]
             "fr": {"P36": "La capitale de [X] est [Y] ."}}  # P36/1 is "La capitale [X.def.de] est [Y].": new
    got = with_mlama_paraphrases(library, mlama, "mine")
    assert got.added == {"en": ("P36",), "fr": ("P36",)}
    assert got.skipped == {"en:no-slots": 1, "en:unknown-predicate": 1, "en:same-as": 1, "ja:no-mlama-templates": 1}
    en = got.library.get("en", "P36/mlama")
    assert (en.text, en.kind, en.predicate, en.source) == ("[X] has the capital [Y].", "cloze", "P36", "mlama")
    assert en.status == "draft"  # mLAMA's wording, not read by us: the release card lists it as a draft
    assert got.library.get("fr", "P36/mlama").text == "La capitale de [X] est [Y]."
    assert got.library.get("en", "P19/mlama") is None
    # the library's own templates are untouched and come first
    assert got.library.templates("en", "P36")[:-1] == library.templates("en", "P36")
    assert library.get("en", "P36/mlama") is None


def test_a_folder_without_the_languages_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"no mLAMA templates for en, fr .*<lang>.jsonl"):
        read_mlama_paraphrases(tmp_path, ["en", "fr"])


@pytest.mark.skipif(not MLAMA.is_dir(), reason="no mLAMA reference templates on this machine")
def test_build_option_renders_the_mlama_templates(tmp_path):
    run = tmp_path / "run"
    done = factatlas("curate", run, "--pair", "arab-west", "--langs", "en,fr", "--predicates", "P19,P36")
    assert done.returncode == 0, done.stderr
    done = factatlas("build", run, "--langs", "en,fr", "--mlama-paraphrases", MLAMA)
    assert done.returncode == 0, done.stderr
    # en 12: its P103 template now agrees with life status ({X: alive=is | other=was}), so mLAMA's present-tense
    # wording is no longer the same as P103/1 and is added (only P19 and P36 are built here)
    assert "mLAMA templates added as <P>/mlama: en 12, fr 19" in done.stderr
    from factatlas.tables import PROMPTS_SCHEMA, read_rows

    rows = read_rows(run / "build" / "prompts.parquet", PROMPTS_SCHEMA)
    texts = {json.loads(line)["relation"]: json.loads(line)["template"]
             for line in (MLAMA / "fr.jsonl").read_text("utf-8").splitlines()}
    mlama_rows = [r for r in rows if r["template_id"].endswith("/mlama")]
    facts = {p: len({r["fact_id"] for r in rows if r["predicate"] == p}) for p in ("P19", "P36")}
    # English's mLAMA templates equal P19/1 and P36/1 up to features: only French gets new prompts
    assert {(r["lang"], r["template_id"]) for r in mlama_rows} == {("fr", "P19/mlama"), ("fr", "P36/mlama")}
    assert sum(r["template_id"] == "P36/mlama" for r in mlama_rows) == facts["P36"]
    for r in mlama_rows:  # plain substitution of the subject label, as mParaRel and mLAMA do
        assert r["text"] == texts[r["predicate"]].replace("[X]", r["subject_label"]), r["text"]
    meta = json.loads((run / "build" / "benchmark.json").read_text("utf-8"))
    assert meta["source"]["mlama_paraphrases"]["added"]["fr"][:3] == ["P103", "P106", "P1303"]
    assert "P19/mlama" in meta["templates"]["fr"] and "P19/mlama" not in meta["templates"]["en"]
    # the added templates travel with the benchmark beside the copied template files
    shipped = [json.loads(line) for line in
               (run / "build" / "templates" / "mlama_paraphrases.jsonl").read_text("utf-8").splitlines()]
    fr_p19 = next(t for t in shipped if (t["lang"], t["id"]) == ("fr", "P19/mlama"))
    assert fr_p19["text"] == texts["P19"] and fr_p19["source"] == "mlama"
    assert len(shipped) == 12 + 19


def test_inclusion_thresholds_count_the_added_templates(tmp_path):
    import yaml

    from factatlas.builder.cli import _languages_by_coverage
    from factatlas.templates.library import templates_dir
    from tests.builder.test_pararel_coverage import _trimmed

    n_rel = len(yaml.safe_load((templates_dir() / "en.yaml").read_text("utf-8"))["templates"])
    keep = -(-6 * n_rel // 10)  # ceil(60 % of the relations): fr with one fewer falls below
    mine, mlama = tmp_path / "templates", tmp_path / "mlama"
    mine.mkdir()
    mlama.mkdir()
    _trimmed(mine, keep - 1)
    missing = list(yaml.safe_load((templates_dir() / "fr.yaml").read_text("utf-8"))["templates"])[keep - 1]
    assert _languages_by_coverage(["en", "fr"], None, mine, "en", 0.6, 0.2) == ["en"]
    (mlama / "fr.jsonl").write_text(json.dumps({"relation": missing, "template": "[X] : [Y] ."}) + "\n", "utf-8")
    # the mLAMA template gives fr the relation its file lacks: 60 % of the relations, kept
    assert _languages_by_coverage(["en", "fr"], None, mine, "en", 0.6, 0.2, mlama) == ["en", "fr"]
