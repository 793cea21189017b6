"""BMLAMA-17/53 importer against the published files in ../shared/reference (skipped when absent)."""

from __future__ import annotations

import functools
import json

import pytest

from factatlas.benchmark import BENCHMARK_FILES, Benchmark
from factatlas.builder.importers import bmlama
from factatlas.builder.importers.common import paused_gc
from factatlas.builder.invariants import check_directory
from factatlas.errors import ConfigError
from tests.builder.importers import reference

REFERENCE = reference("bmlama")
needs_bmlama = pytest.mark.skipif(not (REFERENCE / "BMLAMA17").is_dir(), reason=f"reference absent: {REFERENCE}")

# Published sizes: queries and candidate slots per language (identical in every language).
PUBLISHED = {"BMLAMA17": (17, 6792, 65935), "BMLAMA53": (53, 3070, 29354)}


@functools.cache
def published(name: str) -> bmlama.BmlamaData:
    """The published files read once per module (113k rows for BMLAMA17; the reads are not what is tested)."""
    return bmlama.read_bmlama(REFERENCE / name)


@pytest.fixture(scope="module", autouse=True)
def _large_fixtures():
    """While this module's fixtures hold the published rows, imports and validations (~10^6 acyclic records),
    the cyclic garbage collector is paused (its full passes re-walk all of them: 7.8 of this module's 30 CPU
    seconds); the 273k rows are let go when the module ends: alive, they would make every full collection of
    the rest of the worker's tests slower (0.2 s each on this machine)."""
    with paused_gc():
        yield
        published.cache_clear()


# BMLAMA-53's 53 languages read, converted and checked whole run in the extended tier (README.md "Run the
# tests"); BMLAMA-17 runs the same checks in the README's command.
VARIANTS = ["BMLAMA17", pytest.param("BMLAMA53", marks=pytest.mark.extended)]


@pytest.fixture(scope="module", params=VARIANTS)
def data(request):
    if not (REFERENCE / request.param).is_dir():
        pytest.skip(f"reference absent: {REFERENCE / request.param}")
    d = published(request.param)
    return request.param, d, bmlama.convert(d)


@pytest.mark.slow
@needs_bmlama
def test_published_queries_and_candidates_per_language(data):
    name, d, _ = data
    n_langs, queries, candidates = PUBLISHED[name]
    assert len(d.languages) == n_langs
    assert d.counts() == {lang: {"queries": queries, "candidates": candidates} for lang in d.languages}


@pytest.mark.slow
@needs_bmlama
def test_quote_defects_match_known_data_defects(data):
    name, d, conv = data
    known = json.loads((REFERENCE / "known_data_defects.json").read_text("utf-8"))[name]
    quote_drops = [x for x in conv.drops if x.reason.startswith("csv-quote-defect:")]
    assert {x.reason for x in quote_drops} == {"csv-quote-defect:he"}
    lines = {d.rows["he"][int(x.item.rsplit(":", 1)[1]) - 1].line for x in quote_drops}
    assert lines == {k["line"] for k in known}
    assert len(quote_drops) == {"BMLAMA17": 134, "BMLAMA53": 44}[name]
    # every imported query keeps its gold among its candidates, in every language
    assert all(p.gold_qids[0] in p.candidate_qids for p in conv.prompts)


@pytest.mark.slow
@needs_bmlama
def test_truncated_labels_are_dropped_not_imported(data):
    name, d, conv = data
    truncated = [x for x in conv.drops if x.reason.startswith("label-truncated:")]
    if name == "BMLAMA53":
        # Cebuano "Miami (kapital sa kondado sa Estados Unidos" lost its tail at ", "
        assert {x.reason for x in truncated} == {"label-truncated:ceb"} and len(truncated) == 240
        assert any("'Miami (kapital sa kondado sa Estados Unidos'" in x.detail for x in truncated)
    else:
        assert truncated == []
    forms = {f for p in conv.prompts for f in p.candidate_forms}
    assert not any(bmlama.unbalanced(f) for f in forms)
    if name == "BMLAMA17":  # negatives drawn differently per language in some rows (line 4985: Aberdeen/Hiroshima)
        varying = conv.defects["inconsistent_translations"]["varying_per_language"]
        assert {k: varying[k] for k in ("el", "fa", "ja", "vi", "ar")} == {"el": 270, "fa": 212, "ja": 196, "vi": 170,
                                                                          "ar": 161}
    suspected = conv.defects["suspected_truncations"]
    assert suspected["entities_with_unsplit_comma"] > 0 and suspected["short_label_languages"]["en"] > 0


@pytest.mark.slow
@needs_bmlama
def test_relations_entities_and_prompts(data):
    name, d, conv = data
    assert len(conv.relations) == {"BMLAMA17": 38, "BMLAMA53": 27}[name]
    assert conv.relations["shares-border-with"] == "[X] shares border with [Y]."
    first = {p.lang: p for p in conv.prompts if p.fact_id == f"{d.name}:00001"}
    if name == "BMLAMA17":
        assert first["en"].text == "Charles II of Spain was born in [Y]."
        assert first["en"].candidate_forms[-1] == "Madrid" and first["ar"].candidate_forms[-1] == "مدريد"
    # one entity id per aligned candidate: the same ids in every language, gold last as published
    assert len({p.candidate_qids for p in first.values()}) == 1
    assert first["en"].gold_qids == (first["en"].candidate_qids[-1],)


def test_csv_quoted_fields_are_decoded():
    assert bmlama.unquote_csv_field('"נאט""ו"') == ('נאט"ו', True)
    assert bmlama.unquote_csv_field('"a, b"') == ("a, b", True)
    assert bmlama.unquote_csv_field('plain "x') == ('plain "x', False)
    assert bmlama.unbalanced("Miami (kapital sa kondado") and not bmlama.unbalanced("Paris (Texas)")


@needs_bmlama
@pytest.mark.slow
@pytest.mark.extended  # 113k prompts written and checked; test_cli_as_published writes a small one
def test_import_bmlama17_writes_a_valid_benchmark(tmp_path):
    result = bmlama.import_bmlama(REFERENCE / "BMLAMA17", out=tmp_path / "run")
    assert result.counts == {"input_queries": 6792, "facts": 6658, "prompts": 6658 * 17, "dropped": 134}
    out = tmp_path / "run" / "build"
    assert check_directory(out) == []
    bench = Benchmark.open(out, require=BENCHMARK_FILES)
    assert bench.meta["candidate_mode"] == "sampled" and bench.meta["k"] == 10
    assert bench.meta["source"]["published_counts"]["he"] == {"queries": 6792, "candidates": 65935}
    assert {d.reason for d in bench.drops} == {"csv-quote-defect:he"}


@pytest.mark.slow
@needs_bmlama
def test_relations_get_pids_from_mlama_english_templates():
    from factatlas.builder.importers.dlama import read_mlama_templates

    templates = REFERENCE.parent / "mlama" / "templates"
    if not templates.is_dir():
        pytest.skip(f"reference absent: {templates}")
    names = bmlama.relation_names(read_mlama_templates(templates, ["en"])["en"])
    assert names["[X] was born in [Y]."] == "P19"
    assert "[X] is located in [Y]." not in names  # P17, P30, P131 and P276 share it: no guess
    d = published("BMLAMA17")
    conv = bmlama.convert(d, names)
    assert sorted(conv.relations) == sorted([
        "P19", "P20", "P279", "P37", "P413", "P449", "P47", "P138", "P364", "P463", "P101", "P106", "P527", "P530",
        "P176", "P27", "P407", "is-located-in", "P178", "P1376", "P1412", "P108", "P136", "P39", "P264", "P937",
        "P140", "P1303", "P127", "P103", "P190", "P1001", "P31", "P495", "P159", "P36", "P740", "P361"])
    first = next(p for p in conv.prompts if p.fact_id == "bmlama17:00001" and p.lang == "en")
    assert first.predicate == "P19" and first.template_id == "P19/1"


@pytest.fixture(scope="module")
def as_published(data):
    """(name, published data, default conversion, as-published import) of the same variant; the import is
    ``import_bmlama(REFERENCE / name, write=False, as_published=True)`` on the files read once."""
    name, d, conv = data
    return name, d, conv, bmlama.bmlama_benchmark(d, path=REFERENCE / name, as_published=True)


@needs_bmlama
@pytest.mark.slow
def test_as_published_keeps_every_row_and_the_published_counts(as_published):
    name, d, _, result = as_published
    n_langs, queries, candidates = PUBLISHED[name]
    content = result.content
    per_lang: dict[str, dict[str, int]] = {}
    for p in content.prompts:
        c = per_lang.setdefault(p.lang, {"queries": 0, "candidates": 0})
        c["queries"] += 1
        c["candidates"] += len(p.candidate_qids)
    assert per_lang == {lang: {"queries": queries, "candidates": candidates} for lang in d.languages}
    assert result.counts == {"input_queries": queries, "facts": queries, "prompts": queries * n_langs, "dropped": 0,
                             "flagged": {"BMLAMA17": 134, "BMLAMA53": 256}[name]}
    assert content.drops == [] and content.meta["name"] == f"{d.name}-as-published"
    # unchanged: the published prompt (mask -> marker), gold field and candidate list, in the published order
    by_fact_lang = {(p.fact_id, p.lang): p for p in content.prompts}
    for lang in d.languages:
        for row in d.rows[lang]:
            p = by_fact_lang[(f"{d.name}:{row.index + 1:05d}", lang)]
            assert p.text == row.prompt.replace("<mask>", "[Y]")
            assert list(p.candidate_forms) == list(row.candidates) and p.gold_forms == ((row.raw_gold,),)
            assert p.gold_qids == (p.candidate_qids[-1],)
    from factatlas.builder.invariants import check_content

    assert check_content(content) == []


@needs_bmlama
@pytest.mark.slow
def test_as_published_flags_what_the_default_import_drops(as_published):
    name, d, default, result = as_published
    defects = result.content.meta["source"]["defects"]
    assert defects["flagged"] == {"BMLAMA17": {"csv-quote-defect:he": 134},
                                  "BMLAMA53": {"csv-quote-defect:he": 44, "label-truncated:ceb": 212}}[name]
    flagged = defects["flagged_queries"]
    # every query the default import drops is flagged, and no other (candidate drops flag their query)
    dropped_queries = {x.item.split("|")[0] for x in default.drops}
    assert set(flagged) == dropped_queries
    known = json.loads((REFERENCE / "known_data_defects.json").read_text("utf-8"))[name]
    quote_lines = {d.rows["he"][int(f.rsplit(":", 1)[1]) - 1].line for f, rs in flagged.items()
                   if "csv-quote-defect:he" in rs}
    assert quote_lines == {k["line"] for k in known}
    # the default import's facts are a subset with the same ids, so results of the two line up by fact id
    assert {f.id for f in default.facts} <= {f.id for f in result.content.facts}


def write_small_bmlama(folder):
    """Two aligned queries in en/he; the first has the Hebrew CSV-quote defect of the published files."""
    folder.mkdir(parents=True)
    header = "Prompt\tAns\tCandidate Ans\tSubject\n"
    (folder / "en.tsv").write_text(header + "The capital of Egypt is <mask>.\tCairo\tParis, Cairo\tEgypt\n"
                                   "The capital of France is <mask>.\tParis\tCairo, Paris\tFrance\n", "utf-8")
    (folder / "he.tsv").write_text(header + 'בירת מצרים היא <mask>.\tקהיר\tפריז, קהיר"\tמצרים\n'
                                   "בירת צרפת היא <mask>.\tפריז\tקהיר, פריז\tצרפת\n", "utf-8")
    return folder


def test_candidate_counts_that_differ_between_languages_name_the_first_query(tmp_path):
    folder = write_small_bmlama(tmp_path / "BMLAMA3")
    he = folder / "he.tsv"
    he.write_text(he.read_text("utf-8").replace("\tקהיר, פריז\t", "\tקהיר, רומא, פריז\t"), "utf-8")
    with pytest.raises(ConfigError, match=r"query 2 has different candidate counts per language: "
                                          r"\{'en': 2, 'he': 3\}"):
        bmlama.read_bmlama(folder)
    (folder / "fr.tsv").write_text("Prompt\tAns\tCandidate Ans\tSubject\n"
                                   "La capitale de l'Égypte est <mask>.\tLe Caire\tParis, Rome, Le Caire\tÉgypte\n"
                                   "La capitale de la France est <mask>.\tParis\tLe Caire, Paris\tFrance\n", "utf-8")
    with pytest.raises(ConfigError, match=r"query 1 has different candidate counts per language: "
                                          r"\{'en': 2, 'fr': 3, 'he': 2\}"):
        bmlama.read_bmlama(folder)


def test_cli_as_published_keeps_the_defective_row_flagged(tmp_path):
    from typer.testing import CliRunner

    from factatlas.app.cli import app

    src = write_small_bmlama(tmp_path / "BMLAMA2")
    runner = CliRunner()
    res = runner.invoke(app, ["import", "bmlama", str(src), "--out", str(tmp_path / "default")])
    assert res.exit_code == 0, res.output
    default = Benchmark.open(tmp_path / "default")
    assert [f.id for f in default.facts] == ["bmlama2:00002"]
    assert [(d.item, d.reason) for d in default.drops] == [("bmlama2:00001", "csv-quote-defect:he")]

    res = runner.invoke(app, ["import", "bmlama", str(src), "--out", str(tmp_path / "pub"), "--as-published"])
    assert res.exit_code == 0, res.output
    assert "1 queries kept unchanged but flagged as defective" in res.output
    assert check_directory(tmp_path / "pub" / "build") == []
    bench = Benchmark.open(tmp_path / "pub")
    assert [f.id for f in bench.facts] == ["bmlama2:00001", "bmlama2:00002"] and bench.drops == []
    he = next(p for p in bench.prompts if p.prompt_id.startswith("bmlama2:00001|he|"))
    assert (he.text, he.gold_forms, list(he.candidate_forms)) == (
        "בירת מצרים היא [Y].", (("קהיר",),), ["פריז", 'קהיר"'])
    assert he.gold_qids == (he.candidate_qids[-1],)
    source = bench.meta["source"]
    assert source["defects"]["flagged"] == {"csv-quote-defect:he": 1}
    assert source["defects"]["flagged_queries"] == {"bmlama2:00001": ["csv-quote-defect:he"]}
    assert bench.meta["name"] == "bmlama2-as-published" and source["mode"].startswith("as-published")
