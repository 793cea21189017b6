"""mLAMA importer: the published templates (../shared/reference, skipped when absent) and facts in the
mLAMA 1.1 file format written by the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factatlas.benchmark import BENCHMARK_FILES, Benchmark
from factatlas.builder.importers import mlama
from factatlas.builder.invariants import check_directory
from tests.builder.importers import reference

TEMPLATES = reference("mlama", "templates")
needs_templates = pytest.mark.skipif(not TEMPLATES.is_dir(), reason=f"reference absent: {TEMPLATES}")

TRIPLES = {
    "en": [("P36", "Q79", "Egypt", "Q85", "Cairo"), ("P36", "Q142", "France", "Q90", "Paris"),
           ("P36", "Q183", "Germany", "Q64", "Berlin"), ("P37", "Q79", "Egypt", "Q13955", "Arabic")],
    "fr": [("P36", "Q79", "Égypte", "Q85", "Le Caire"), ("P36", "Q142", "France", "Q90", "Paris"),
           ("P37", "Q79", "Égypte", "Q13955", "arabe")],  # Germany has no French triple
}
TEMPLATE_TEXT = {"en": {"P36": "The capital of [X] is [Y] .", "P37": "The official language of [X] is [Y] ."},
                 "fr": {"P36": "La capitale de [X] est [Y] .", "P37": "La langue officielle de [X] est [Y] ."}}


def _write_mlama(root: Path) -> None:
    for lang, triples in TRIPLES.items():
        folder = root / lang
        folder.mkdir(parents=True)
        by_rel: dict[str, list[str]] = {}
        for n, (rel, sub, sub_label, obj, obj_label) in enumerate(triples):
            by_rel.setdefault(rel, []).append(json.dumps({"obj_uri": obj, "obj_label": obj_label, "sub_uri": sub,
                                                          "sub_label": sub_label, "uuid": f"u{n}"}))
        for rel, lines in by_rel.items():
            (folder / f"{rel}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / "templates.jsonl").write_text(
            "".join(json.dumps({"relation": r, "template": t}) + "\n" for r, t in TEMPLATE_TEXT[lang].items()),
            encoding="utf-8")


@needs_templates
def test_published_templates_have_49_relations_in_53_languages():
    langs = sorted(p.stem for p in TEMPLATES.glob("*.jsonl"))
    assert len(langs) == 53
    for lang in langs:
        assert len(mlama.read_templates(TEMPLATES, lang)) == 49, lang
    assert mlama.read_templates(TEMPLATES, "en")["P19"] == "[X] was born in [Y] ."


def test_import_keeps_triples_every_language_has(tmp_path):
    _write_mlama(tmp_path / "mlama1.1")
    result = mlama.import_mlama(tmp_path / "mlama1.1", ["en", "fr"], out=tmp_path / "run")
    out = tmp_path / "run" / "build"
    assert check_directory(out) == []
    bench = Benchmark.open(out, require=BENCHMARK_FILES)
    texts = {p.prompt_id: p.text for p in bench.prompts}
    assert texts == {
        "global:P36:Q142|en|P36/mlama": "The capital of France is [Y] .",
        "global:P36:Q142|fr|P36/mlama": "La capitale de France est [Y] .",
        "global:P36:Q79|en|P36/mlama": "The capital of Egypt is [Y] .",
        "global:P36:Q79|fr|P36/mlama": "La capitale de Égypte est [Y] .",
        "global:P37:Q79|en|P37/mlama": "The official language of Egypt is [Y] .",
        "global:P37:Q79|fr|P37/mlama": "La langue officielle de Égypte est [Y] .",
    }
    p36 = next(p for p in bench.prompts if p.prompt_id == "global:P36:Q79|fr|P36/mlama")
    assert p36.candidate_qids == ("Q85", "Q90") and p36.candidate_forms == ("Le Caire", "Paris")
    assert [(d.item, d.reason) for d in bench.drops] == [("P36:Q183:Q64", "missing-in:fr")]
    assert result.counts["facts"] == 3


@needs_templates
def test_import_with_the_published_templates_folder(tmp_path):
    _write_mlama(tmp_path / "m")
    mlama.import_mlama(tmp_path / "m", ["en", "fr"], out=tmp_path / "run", templates=TEMPLATES)
    bench = Benchmark.open(tmp_path / "run", require=BENCHMARK_FILES)
    en = next(p for p in bench.prompts if p.prompt_id == "global:P36:Q79|en|P36/mlama")
    assert en.text == mlama.read_templates(TEMPLATES, "en")["P36"].replace("[X]", "Egypt")


def test_import_is_byte_identical_for_identical_inputs(tmp_path):
    _write_mlama(tmp_path / "m")
    mlama.import_mlama(tmp_path / "m", ["en", "fr"], out=tmp_path / "a")
    mlama.import_mlama(tmp_path / "m", ["en", "fr"], out=tmp_path / "b")
    for name in BENCHMARK_FILES:
        assert (tmp_path / "a" / "build" / name).read_bytes() == (tmp_path / "b" / "build" / name).read_bytes()


def test_import_command(tmp_path):
    from typer.testing import CliRunner

    from factatlas.app.cli import app

    _write_mlama(tmp_path / "m")
    res = CliRunner().invoke(app, ["import", "mlama", str(tmp_path / "m"), "--langs", "en,fr", "--out",
                                   str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert "imported mlama" in res.output and check_directory(tmp_path / "run" / "build") == []
    bad = CliRunner().invoke(app, ["import", "mlama", str(tmp_path / "m"), "--langs", "en,de"])
    assert bad.exit_code != 0 and "no folder for language 'de'" in str(bad.exception)


def test_malformed_lines_are_named_by_file_and_line(tmp_path):
    from factatlas.builder.importers.mlama import read_triples
    from factatlas.errors import ConfigError

    (tmp_path / "en").mkdir()
    good = '{"sub_uri": "Q90", "obj_uri": "Q142", "sub_label": "Paris", "obj_label": "France"}'
    (tmp_path / "en" / "P17.jsonl").write_text(good + "\n\n" + '{"sub_uri": "Q64"}\n', "utf-8")
    with pytest.raises(ConfigError) as e:
        read_triples(tmp_path, "en")
    assert str(e.value).startswith(f"{tmp_path / 'en' / 'P17.jsonl'}:3: not an mLAMA triple: ")
