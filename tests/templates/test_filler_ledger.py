"""The filler ledger (templates/ledger.py) and the entity lexicon (templates/lexicon.py).

Every gold, candidate and subject filler a build renders is in the committed review as `ok`: over a fixed
subset (the place predicates of arab-west in 13 languages, built in-process once per session; quick tier)
and over the three shipped pairs in full (slow tier, about 40 s of CPU on one worker). A morphology change lists every
filler it changes (the ru accusative regression «арабский музыку» is caught); the lexicon decides first.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from factatlas.errors import ConfigError
from factatlas.templates.ledger import (
    UNREVIEWED,
    answer_context,
    answer_rows,
    as_mapping,
    build_instances,
    check_failures,
    filler_diff,
    format_diff,
    ledger_for_run,
    read_review,
    review_dir,
    subject_contexts,
)
from factatlas.templates.lexicon import load_lexicon, read_lexicon
from factatlas.templates.library import load_library

from .conftest import PAIRS, PLACE_PREDICATES, SHIPPED_LANGS, SHIPPED_PAIRS


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factatlas", *args], capture_output=True, text=True,
                          env=os.environ.copy())


def _cli_in_process(*args: str):
    from typer.testing import CliRunner

    from factatlas.app.cli import app

    return CliRunner().invoke(app, list(args))


def test_answer_context_shows_the_answer_where_it_stands():
    assert answer_context("[X] {X: masc=родился | fem=родилась | other=родился(-ась)} [Y.loc.в].") == \
        "родился(-ась) [Y.loc.в]"
    assert answer_context("يقع [X] في قارة [Y].") == "قارة [Y]"
    assert answer_context("[X] liegt {Y: pl=in den | other=in} [Y.def.dat]!") == "liegt {Y: pl=in den | other=in} [Y.def.dat]"
    assert answer_context("[X]의 수도는 [Y]에서 멀다.") == "수도는 [Y]에서"
    assert answer_context("[X]の首都は[Y]である。") == "首都は[Y]である"  # no spaces: three characters before


def test_contexts_are_rendered_for_the_subject():
    """Issue 40: a context shows the forms agreement chose for the line's subject, never the template's first
    or ``other`` form: «يقع [X]» for every subject hid the feminine «تقع» a feminine city takes."""
    from factatlas.records import Gender, Life
    from factatlas.templates.gender import Agreement
    from factatlas.templates.render import choose_option

    def chooser(gender: Gender, life: Life):
        return lambda g: choose_option(g, Agreement(gender, "sg", "P21"), life) or g.form("other")

    dead_woman, living_man = chooser(Gender.FEMININE, Life.DEAD), chooser(Gender.MASCULINE, Life.ALIVE)
    text = "[X] {X: alive=ist | other=war} {X: masc=Staatsbürger | fem=Staatsbürgerin | other=Staatsbürger*in} [Y.def.gen]."
    assert answer_context(text) == "Staatsbürger*in [Y.def.gen]"  # as contexts were written before
    assert answer_context(text, dead_woman) == "Staatsbürgerin [Y.def.gen]"
    assert answer_context(text, living_man) == "Staatsbürger [Y.def.gen]"
    assert answer_context("[X] {X: alive=ist | other=war} [Y].", dead_woman) == "war [Y]"
    city = "{X: masc=يقع | fem=تقع | other=يقع} [X] في [Y]."
    assert subject_contexts(city) == [(2, "يقع [X]")]
    assert subject_contexts(city, dead_woman) == [(2, "تقع [X]")]
    # a group that agrees with the answer stays as written: the filler shows the form it chose
    assert answer_context("[X] liegt {Y: pl=in den | other=in} [Y.def.dat]!", dead_woman) == \
        "liegt {Y: pl=in den | other=in} [Y.def.dat]"


def test_a_build_line_is_kept_per_rendered_context(place_build):
    """One ledger line per (language, template, object, variant, context): the ar subjects of P20/1 read
    «توفي [X]» for a man and «توفيت [X]» for a woman, each on lines of its own."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from factatlas.tables import read_entities
    from factatlas.templates.ledger import subject_lines

    table = pq.read_table(place_build / "build" / "prompts.parquet",
                          columns=["lang", "template_id", "kind", "subject_qid"])
    table = table.filter(pc.equal(table["lang"], "ar"))
    entities = read_entities(place_build / "curate")
    lines = subject_lines(table.to_pylist(), entities, load_library(("ar",)))
    ctx = {(x.template, x.qid): x.context for x in lines}
    assert ctx[("P20/1", "Q1110560")] == "توفيت [X]"  # Umm Kulthum
    assert ctx[("P20/1", "Q2831")] == "توفي [X]"  # Michael Jackson
    assert ctx[("P19/1", "Q7176")] == "ولد [X]"  # Naguib Mahfouz


def test_the_templates_room_imports_nothing_of_the_builder():
    """Issue 43: the build calls the templates (builder/sources.py, its one door), never the other way round:
    no module of templates/ imports factatlas.builder, even inside a function."""
    import ast
    from pathlib import Path

    import factatlas.templates

    room = Path(factatlas.templates.__file__).parent
    offences = []
    for path in sorted(room.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.startswith("factatlas.builder") for n in names):
                offences.append(f"{path.name}:{node.lineno}")
    assert offences == []


def test_lexicon_errors_point_at_the_entry(tmp_path):
    good = tmp_path / "ru.yaml"
    good.write_text("lang: ru\nentries:\n  Q85:\n    label: Каир\n    gender: masc\n    prep: в\n"
                    "    forms: {loc: Каире}\n    source: reviewed\n", "utf-8")
    entry = read_lexicon(good)["Q85"]
    assert (entry.label, entry.prep, entry.forms["loc"], entry.how) == ("Каир", "в", "Каире", "lexicon:reviewed")
    bad = tmp_path / "de.yaml"
    bad.write_text("lang: de\nentries:\n  Q99:\n    label: Kalifornien\n    genus: neut\n    source: reviewed\n",
                   "utf-8")
    with pytest.raises(ConfigError, match=r"de\.yaml:5:5: entries\.Q99: unknown key 'genus'"):
        read_lexicon(bad)
    bad.write_text("lang: de\nentries:\n  Q99:\n    label: Kalifornien\n    gender: neutr\n    source: reviewed\n",
                   "utf-8")
    with pytest.raises(ConfigError, match=r"de\.yaml:5:13: entries\.Q99\.gender: 'neutr'; expected masc"):
        read_lexicon(bad)
    bad.write_text("lang: de\nentries:\n  Q99:\n    label: Kalifornien\n    source: wikidata\n", "utf-8")
    with pytest.raises(ConfigError, match=r"source: 'wikidata'; expected reviewed, wikidata:L<id> or rule:<name>"):
        read_lexicon(bad)


def test_every_packaged_lexicon_loads():
    for lang in SHIPPED_LANGS:
        load_lexicon(lang)  # raises ConfigError with file:line:col on any problem


def _not_reviewed_ok(ledgers: dict) -> list[str]:
    """The product's gate (``check_failures``, what `templates audit --fillers --check` exits on) per pair;
    for the message, the lines of the languages it fails, named by what the review says of them."""
    problems = []
    for pair, ledger in ledgers.items():
        assert ledger.stale == 0, f"{pair}: the ledger renders other fillers than the build stored"
        failing = check_failures(ledger)
        problems += [f"{lang}: {counts}  ({pair})" for lang, counts in failing.items()]
        problems += [f"{x.lang} [{x.verdict}] {x.context} => {x.filler}  ({pair} {x.template} {x.qid}; "
                     f"{' | '.join(x.sources)})" for x in ledger.lines if x.lang in failing and x.verdict != "ok"]
    return sorted(set(problems))


@pytest.fixture(scope="module")
def place_ledger(place_build):
    return ledger_for_run(place_build, load_library(SHIPPED_LANGS), subjects=True)


def test_the_rows_the_ledger_reads_give_the_instances_of_every_row(place_build):
    """``answer_rows`` leaves out the gold and candidate lists that repeat an earlier row's: the instances, each
    with its first subject and filler, are those of every cloze row, on far fewer answers."""
    import pyarrow.parquet as pq

    from factatlas.builder.sources import answer_variant
    from factatlas.tables import read_entities

    table = pq.read_table(place_build / "build" / "prompts.parquet")
    entities = read_entities(place_build / "curate")
    every = [r for r in table.to_pylist() if r["kind"] == "cloze"]
    read = answer_rows(table, entities)
    variant = lambda q, s: answer_variant(entities, q, s)  # noqa: E731
    assert build_instances(read, variant) == build_instances(every, variant)
    answers = sum(len(r["gold_qids"]) + len(r["candidate_qids"]) for r in every)
    assert sum(len(r["gold_qids"]) + len(r["candidate_qids"]) for r in read) < answers / 4


def test_every_place_filler_of_a_shipped_pair_is_reviewed_ok(place_ledger):
    """The fast check: every gold, candidate and subject filler of the place predicates of arab-west, in the
    13 shipped languages, is in templates/review/<lang>.tsv as ok."""
    assert {x.lang for x in place_ledger.lines} == set(SHIPPED_LANGS)
    assert {x.lang for x in place_ledger.lines if x.role == "subject"} == set(SHIPPED_LANGS)
    assert {x.template.split("/")[0] for x in place_ledger.lines} == set(PLACE_PREDICATES)
    problems = _not_reviewed_ok({"arab-west": place_ledger})
    assert not problems, f"{len(problems)} filler(s) not reviewed ok:\n" + "\n".join(problems[:60])


def test_a_filler_the_review_has_not_seen_fails_the_check(place_build, tmp_path):
    """One fr line taken out of a copy of the review: the same ledger now holds exactly that filler as
    unreviewed (and one flipped to wrong shows as wrong)."""
    folder = tmp_path / "review"
    folder.mkdir()
    for path in review_dir().glob("*.tsv"):
        (folder / path.name).write_text(path.read_text("utf-8"), "utf-8")
    header, *lines = (folder / "fr.tsv").read_text("utf-8").splitlines()
    dropped = next(line for line in lines if line.startswith("jour [Y.a]\tà Paris\t"))
    flipped = next(line for line in lines if line.startswith("originaire [Y.de]\tdu Caire\t"))
    kept = [line.replace("\tok\t", "\twrong\t") if line == flipped else line for line in lines if line != dropped]
    (folder / "fr.tsv").write_text("\n".join([header, *kept]) + "\n", "utf-8")
    ledger = ledger_for_run(place_build, load_library(("fr",)), review_folder=str(folder), langs=("fr",))
    assert check_failures(ledger) == {"fr": {"wrong": 1, "unreviewed": 1}}  # the gate --check exits on
    problems = _not_reviewed_ok({"arab-west": ledger})
    assert [p.split("  (")[0] for p in problems] == ["fr [unreviewed] jour [Y.a] => à Paris",
                                                    "fr [wrong] originaire [Y.de] => du Caire",
                                                    "fr: {'wrong': 1, 'unreviewed': 1}"], problems


def test_the_check_gate_by_hand():
    """``check_failures`` (what `--check` exits on) on hand-made lines: a language fails on one filler reviewed
    wrong alone, or one unreviewed alone, counted by distinct (context, filler); ok lines never fail."""
    from factatlas.templates.ledger import Ledger, LedgerLine

    def line(lang: str, filler: str, verdict: str, template: str = "P36/1") -> LedgerLine:
        return LedgerLine(lang, template, "Q85", "", "gold", "est [Y]", filler, "exact", (), verdict)

    ledger = Ledger((line("de", "Kairo", "ok"), line("fr", "le Caire", "wrong"), line("fr", "le Caire", "wrong", "P36/2"),
                     line("fr", "Le Caire", "ok"), line("es", "El Cairo", UNREVIEWED), line("it", "Il Cairo", "ok")))
    assert check_failures(ledger) == {"es": {"wrong": 0, "unreviewed": 1}, "fr": {"wrong": 1, "unreviewed": 0}}
    assert check_failures(Ledger(tuple(x for x in ledger.lines if x.verdict == "ok"))) == {}


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_every_filler_of_the_shipped_pairs_is_reviewed_ok(shipped_builds, pair):
    """Every gold, candidate and subject filler of each shipped pair is in templates/review/<lang>.tsv as ok."""
    ledger = ledger_for_run(shipped_builds[pair], load_library(SHIPPED_LANGS), subjects=True)
    assert {x.lang for x in ledger.lines} == set(SHIPPED_LANGS)
    problems = _not_reviewed_ok({pair: ledger})
    assert not problems, f"{len(problems)} filler(s) not reviewed ok:\n" + "\n".join(problems[:60])


def test_a_review_row_needs_four_fields_and_a_verdict_of_ok_or_wrong(tmp_path):
    """Each bad row is refused naming its file and line: four fields with another verdict, or a verdict
    of ok with a field missing."""
    head = "context\tfiller\tverdict\tnote\n"
    path = tmp_path / "fr.tsv"
    path.write_text(head + "est [Y]\tle Caire\tok\t\n", "utf-8")
    assert read_review(path) == {("est [Y]", "le Caire"): ("ok", "")}
    for bad in ("est [Y]\tle Caire\tmaybe\t\n", "est [Y]\tle Caire\tok\n"):
        path.write_text(head + "est [Y]\tLe Caire\twrong\tcapital letter\n" + bad, "utf-8")
        with pytest.raises(ConfigError, match=f"^{path}:3: expected 4 tab-separated fields"):
            read_review(path)


def test_the_listing_shows_limit_fillers_per_language_then_says_more():
    from factatlas.templates.ledger import Ledger, LedgerLine, format_ledger

    lines = tuple(LedgerLine("fr", "P36/1", f"Q{i}", "", "gold", "est [Y]", f"ville {i}", "guessed", (), UNREVIEWED)
                  for i in range(3))
    listed = [x for x in format_ledger(Ledger(lines), limit=2).splitlines() if x.startswith("  ")]
    assert listed[:2] == ["  [unreviewed] est [Y]  =>  ville 0   (guessed; gold; Q0; P36/1; )",
                          "  [unreviewed] est [Y]  =>  ville 1   (guessed; gold; Q1; P36/1; )"]
    assert listed[2:] == ["  ... more (--limit 0 for all)"]
    assert "more" not in format_ledger(Ledger(lines), limit=3) and "ville 2" in format_ledger(Ledger(lines), limit=3)


def test_review_files_are_well_formed_and_cover_the_shipped_languages():
    for lang in SHIPPED_LANGS:
        assert (review_dir() / f"{lang}.tsv").exists(), f"templates/review/{lang}.tsv is missing"
    for path in review_dir().glob("*.tsv"):
        read_review(path)  # header, four fields, verdict ok|wrong


def test_the_filler_diff_catches_the_ru_accusative_regression(genre_build, monkeypatch):
    """An animacy change that puts every modifier's accusative in the inanimate masculine — the regression
    «арабский музыку» (was «арабскую музыку») — shows as a changed filler, before -> after."""
    from factatlas.templates import backend_ru, backend_slavic

    library = load_library(("ru",))
    before = as_mapping(ledger_for_run(genre_build, library, langs=("ru",)))
    monkeypatch.setattr(backend_slavic, "accusative_animacy", lambda head: head.tag.animacy)
    backend_ru.inflect_russian.cache_clear()
    try:
        after = as_mapping(ledger_for_run(genre_build, library, langs=("ru",)))
    finally:
        backend_ru.inflect_russian.cache_clear()
    changes = filler_diff(before, after)
    pairs = {(c.before, c.after) for c in changes}
    assert ("арабскую музыку", "арабский музыку") in pairs, format_diff(changes)
    assert ("классическую музыку", "классический музыку") in pairs
    assert all(c.lang == "ru" and "[Y.acc]" in c.context for c in changes), format_diff(changes)
    # an unchanged build has no diff
    assert filler_diff(before, before) == []


def test_cli_writes_the_ledger_and_diffs_against_it(genre_build, tmp_path):
    run = genre_build
    out = tmp_path / "before.tsv"
    done = _cli_in_process("templates", "audit", "--fillers", str(run), "--langs", "ru,de", "--out", str(out))
    assert done.exit_code == 0, done.output
    assert "== de:" in done.stdout and "== ru:" in done.stdout
    header, *lines = out.read_text("utf-8").splitlines()
    assert header.split("\t")[:7] == ["lang", "template", "qid", "variant", "role", "context", "filler"]
    assert {line.split("\t")[0] for line in lines} == {"de", "ru"}
    done = _cli_in_process("templates", "audit", "--fillers", str(run), "--langs", "ru,de", "--against", str(out))
    assert (done.exit_code, done.stdout.strip()) == (0, "no filler changed")
    # a ledger whose filler differs from today's render is listed as a change
    edited = out.read_text("utf-8").replace("\tарабскую музыку\t", "\tарабский музыку\t")
    assert edited != out.read_text("utf-8")
    out.write_text(edited, "utf-8")
    done = _cli_in_process("templates", "audit", "--fillers", str(run), "--langs", "ru", "--against", str(out))
    assert "арабский музыку  ->  арабскую музыку" in done.stdout
    # --check fails on fillers a review does not hold (an empty review folder)
    empty = tmp_path / "review"
    empty.mkdir()
    done = _cli("templates", "audit", "--fillers", str(run), "--langs", "ru", "--check", "--review-dir", str(empty))
    assert done.returncode == 2 and "unreviewed" in done.stderr and "Traceback" not in done.stderr
    assert f"[{UNREVIEWED}]" in done.stdout


def test_shipped_pairs_are_the_curated_pairs():
    import yaml

    pairs = yaml.safe_load((Path(__file__).resolve().parents[2] / "curate" / "pairs.yaml").read_text("utf-8"))["pairs"]
    assert set(SHIPPED_PAIRS) == set(pairs)


def test_the_lexicon_entry_decides_before_the_rules_and_a_renamed_item_is_recorded():
    from factatlas.templates.library import Template
    from factatlas.templates.render import Renderer

    from .templates_fixtures import CITY, COUNTRY, entity

    def tpl(lang: str, predicate: str, text: str) -> Template:
        return Template(id=f"{predicate}/1", lang=lang, predicate=predicate, kind="cloze", text=text,
                        status="reviewed", source="human")

    entities = {e.qid: e for e in (
        entity("Q928", {"de": "Philippinen", "en": "Philippines"}, (COUNTRY,)),
        entity("Q134509", {"ru": "Порт-Саид"}, (CITY,)),
        entity("Q970", {"de": "Union der Komoren"}, (COUNTRY,)),  # not the label the entry is about
    )}
    r = Renderer(entities)
    got = r.render_answer(tpl("de", "P17", "[X] liegt [Y.def.in]."), "Q928")
    assert (got.forms[0], got.backend) == ("auf den Philippinen", "rules")
    got = r.render_answer(tpl("ru", "P19", "[X] родился [Y.loc.в]."), "Q134509")
    assert (got.forms[0], got.backend, got.inflection) == ("в Порт-Саиде", "lexicon", "exact")
    got = r.render_answer(tpl("de", "P17", "[X] liegt [Y.def.in]."), "Q970")
    assert not got.forms[0].startswith("auf ")  # the entry was not used for another label
    mismatches = [d for (lang, what, how, d) in r.decisions if how == "label-mismatch"]
    assert mismatches and mismatches[0].startswith("Q970: entry for 'Komoren'")


def test_indeclinable_foreign_places_are_singular_subjects_in_russian():
    from factatlas.records import Gender
    from factatlas.templates.gender import resolve_agreement

    from .templates_fixtures import entity

    tennessee = entity("Q1509", {"ru": "Теннесси"}, ("Q35657",))  # a US state: no class default
    got = resolve_agreement(tennessee, "ru", "Теннесси", "place")
    assert (got.gender, got.number, got.source) == (Gender.MASCULINE, "sg", "rule:ru-indeclinable")
    philippines = entity("Q928", {"ru": "Филиппины"}, ("Q6256",))
    assert resolve_agreement(philippines, "ru", "Филиппины", "country").number == "pl"  # a real plural stays


def test_subject_fillers_are_ledger_lines_too(genre_build):
    """--subjects: the form each subject takes in each template is a ledger line (role subject) with its
    context, status and sources, and its verdict from the review (the ru subjects are reviewed)."""
    ledger = ledger_for_run(genre_build, load_library(("ru",)), langs=("ru",), subjects=True)
    subjects = {(x.template, x.qid, x.context): x for x in ledger.lines if x.role == "subject"}
    dylan = subjects[("P136/1", "Q392", "жанр [X.gen]")]
    assert (dylan.filler, dylan.status, dylan.verdict) == ("Боба Дилана", "guessed", "ok")
    assert "composed" in dylan.sources[0]
    assert subjects[("P136/2", "Q392", "Творчество [X.gen]")].filler == "Боба Дилана"
    assert not any(x.role == "subject" for x in ledger_for_run(genre_build, load_library(("ru",)),
                                                                langs=("ru",)).lines)
    assert subject_contexts("Столица [X.gen] — [Y].") == [(1, "Столица [X.gen]")]
