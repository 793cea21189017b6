"""`factatlas render` over a curated run directory, and the templates CLI commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.records import Fact, ObjectRef, fact_id
from factatlas.tables import PROMPTS_SCHEMA, read_drops, read_rows, write_entities, write_facts
from factatlas.templates.batch import render_run
from factatlas.templates.library import load_library
from tests.templates.templates_fixtures import ENTITIES

FILES = {
    "en": """lang: en
name: English
scripts: [Latin]
genders: []
templates:
  P19:
    - {id: P19/1, text: "[X] was born in [Y].", status: reviewed, source: human, timeless: a birth}
    - {id: P19/2, text: "[X]'s place of birth is [Y].", status: draft, source: "mt:a+b", timeless: a birth}
    - {id: P19/q1, kind: question, text: "Where was [X] born?", status: reviewed, source: human, timeless: a birth}
  P36:
    - {id: P36/1, text: "The capital of [X] is [Y].", status: reviewed, source: human}
""",
    "ru": """lang: ru
name: Russian
scripts: [Cyrillic]
genders: [masc, fem, neut]
templates:
  P19:
    - id: P19/1
      text: "[X] {X: masc=родился | fem=родилась | neut=родилось | other=родился(-ась)} в [Y.loc]."
      status: reviewed
      source: human
      timeless: a birth
  P36:
    - {id: P36/1, text: "Столица [X.gen] — [Y].", status: reviewed, source: human}
""",
    "fr": """lang: fr
name: French
scripts: [Latin]
genders: [masc, fem]
templates:
  P19:
    - {id: P19/1, text: "[X] est {X: masc=né | fem=née | other=né(e)} [Y.a].", status: reviewed, source: human,
       timeless: a birth}
""",
}


@pytest.fixture()
def template_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "lang"
    folder.mkdir()
    for lang, text in FILES.items():
        (folder / f"{lang}.yaml").write_text(text, "utf-8")
    return folder


def fact(culture: str, predicate: str, subject: str, *objects: str) -> Fact:
    return Fact(fact_id(culture, predicate, subject), predicate, subject, tuple(ObjectRef(o) for o in objects),
                culture, ("Q159",), 1.0, 1)


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "runs" / "demo"
    curate = run / "curate"
    curate.mkdir(parents=True)
    facts = [fact("east", "P19", "Q7200", "Q649"), fact("east", "P19", "Q80440", "Q649", "Q656"),
             fact("east", "P36", "Q142", "Q90"), fact("east", "P19", "Q42", "Q90")]
    write_facts(curate / "facts.parquet", facts)
    write_entities(curate, ENTITIES.values())
    return run


def test_render_run_writes_prompts_gold_forms_and_counted_drops(run_dir, template_dir):
    lib = load_library(("en", "ru", "fr"), root=template_dir)
    report = render_run(run_dir, ("en", "ru", "fr"), lib)
    rows = {r["prompt_id"]: r for r in read_rows(run_dir / "render" / "prompts.parquet", PROMPTS_SCHEMA)}
    ru = rows["east:P19:Q80440|ru|P19/1"]
    assert ru["text"] == "Анна Ахматова родилась в [Y]."
    assert ru["answer_start"] == ru["text"].index("[Y]")
    assert ru["gold_qids"] == ["Q649", "Q656"]  # every valid object, each with its own filler
    assert ru["gold_forms"] == [["Москве", "Москва", "Москве-реке", "Москва-река"], ["Санкт-Петербурге", "Санкт-Петербург"]]  # the alias inflected like the label, then as written
    assert rows["east:P19:Q80440|fr|P19/1"]["gold_qids"] == ["Q649"]  # Q656 has no French label
    assert ("east:P19:Q80440|fr|P19/1|Q656", "no-label") in {(d.item, d.reason) for d in
                                                            read_drops(run_dir / "render" / "dropped.parquet")}
    assert rows["east:P36:Q142|ru|P36/1"]["text"] == "Столица Франции — [Y]."
    assert rows["east:P19:Q7200|fr|P19/1"]["gold_forms"] == [["à Moscou", "Moscou"]]
    assert rows["east:P19:Q7200|en|P19/q1"]["answer_start"] == -1
    assert rows["east:P19:Q7200|en|P19/2"]["template_status"] == "draft"
    drops = read_drops(run_dir / "render" / "dropped.parquet")
    reasons = sorted((d.item, d.reason) for d in drops)
    assert ("east:P19:Q42|ru|P19/1", "no-label") in reasons  # Douglas Adams has no Russian label
    assert ("east:P19:Q42|en|P19/1", "no-gold") in reasons  # Paris has no English label in the fixture
    assert ("east:P19:Q42|en|P19/1|Q90", "no-label") in reasons
    assert report.counts["rendered"] == len(rows)
    assert sum(v for k, v in report.counts.items() if k.startswith("dropped/")) == sum(
        1 for d in drops if d.item.count("|") == 2)
    manifest = (run_dir / "manifest.json").read_text("utf-8")
    assert '"render"' in manifest and '"rendered"' in manifest


def test_render_run_is_byte_identical_on_rerun(run_dir, template_dir):
    lib = load_library(("en", "ru"), root=template_dir)
    render_run(run_dir, ("en", "ru"), lib)
    first = (run_dir / "render" / "prompts.parquet").read_bytes()
    render_run(run_dir, ("en", "ru"), lib)
    assert (run_dir / "render" / "prompts.parquet").read_bytes() == first


def test_cli_render_and_coverage(run_dir, template_dir):
    runner = CliRunner()
    result = runner.invoke(app, ["render", str(run_dir), "--langs", "en,ru", "--templates", str(template_dir)])
    assert result.exit_code == 0, result.output
    assert "rendered" in result.output and "prompts.parquet" in result.output
    # the folder is laid over the packaged files: name its languages to see only them
    cov = runner.invoke(app, ["templates", "coverage", "--templates", str(template_dir), "--langs", "en,fr,ru",
                              "--min", "1"])
    assert cov.exit_code == 0, cov.output
    lines = cov.output.splitlines()
    assert lines[0].split()[:4] == ["lang", "P17", "P19", "P20"]
    en = next(line for line in lines if line.startswith("en "))
    assert en.split()[2] == "2q*" and en.split()[6] == "1"  # P19: 2 cloze + question, a draft; P36: 1
    assert "gaps:" in en
    assert lines[-1] == ("0/3 languages have P/1 and a question for all 20 predicates; fewest cloze "
                         "paraphrases per predicate: en 0, fr 0, ru 0")


def test_cli_validate_reports_file_line_col_and_exits_2(tmp_path):
    bad = tmp_path / "en.yaml"
    bad.write_text(FILES["en"].replace("[X] was born in [Y].", "[X] was born in [Y.lok]."), "utf-8")
    proc = subprocess.run([sys.executable, "-c", "from factatlas.app.cli import main; main()", "templates", "validate",
                           str(bad)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert f"{bad}:7:" in proc.stderr.replace("\n", "") or "en.yaml:7:" in proc.stderr
    assert "unknown feature 'lok'" in proc.stderr
    good = tmp_path / "ok" / "en.yaml"
    good.parent.mkdir()
    good.write_text(FILES["en"], "utf-8")
    ok = CliRunner().invoke(app, ["templates", "validate", str(good)])
    assert ok.exit_code == 0 and "ok: 1 file(s) valid" in ok.output
