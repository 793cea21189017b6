"""The validation report: verdict rules, the HTML and its PNGs, the `factatlas report` command."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser

import pytest
import typer
from typer.testing import CliRunner

from factatlas.errors import FactatlasError
from factatlas.probe import report as R
from factatlas.probe.evaluate import MetricsConfig
from factatlas.probe.report_cli import parse_associations, register
from tests.probe.test_report_fixtures import write_run


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images.append(a["src"])
        if tag == "link" and a.get("href"):
            self.links.append(a["href"])


@pytest.fixture(scope="module")
def passing_run(tmp_path_factory):
    root = write_run(tmp_path_factory.mktemp("runs") / "arab-west")
    results = R.write_report(root, None, MetricsConfig(bootstrap=100))
    return root, results


def test_report_passes_and_is_one_self_contained_page(passing_run):
    root, results = passing_run
    (res,) = results
    assert res.verdict.passed, res.verdict.reasons
    assert res.html == root / "probe" / "synth-model" / "report.html"
    page = res.html.read_text("utf-8")
    refs = _Refs()
    refs.feed(page)
    assert not refs.links  # CSS is inlined: the folder is readable without the toolkit
    expected = {"p_at_1.png", "rankc.png", "coverlap.png", "baselines.png", "entropy.png", "balance.png",
                "language_bias.png", "xfakt.png"}
    beside = {R.embed_png(res.html.parent / name): name for name in expected}
    assert len(refs.images) == len(expected)
    for src in refs.images:  # every figure embedded: the page alone is the whole report
        assert src.startswith("data:image/png;base64,")
        assert src in beside  # the same image as the PNG written beside it
    assert {beside[src] for src in refs.images} == expected
    assert "src=\"p_at_1.png" not in page and ".png\"" not in page
    assert "{'" not in page and "': " not in page  # no Python reprs of dicts
    assert "macro P@1 (DLAMA)" in page and "micro P@1 (BMLAMA)" in page
    assert "Headline P@1 on the held-out split" in page
    assert page.count("<table") == page.count("<div class=scroll><table") > 10  # wide tables scroll
    for section in ("Verdict: PASS", "P@1 by predicate × culture", "Cross-lingual consistency", "Baselines",
                    "language bias", "Most common predictions", "Paraphrase consistency", "X-FaKT", "Leakage",
                    "Balance between cultures"):
        assert section in page
    assert "Cairo" in page and "<script" not in page
    verdict = json.loads((res.html.parent / "verdict.json").read_text("utf-8"))
    assert verdict["verdict"] == "PASS" and verdict["reasons"] == []
    assert verdict["thresholds"]["max_leakage_share"] == R.MAX_LEAKAGE_SHARE


@pytest.mark.slow
def test_report_is_byte_stable(passing_run):
    root, results = passing_run
    before = {p.name: p.read_bytes() for p in results[0].html.parent.iterdir() if p.suffix in (".html", ".png")}
    assert len(before) == 9
    R.write_report(root, "synth-model", MetricsConfig(bootstrap=100))
    after = {p.name: p.read_bytes() for p in results[0].html.parent.iterdir() if p.suffix in (".html", ".png")}
    assert before == after


def test_no_plots_gives_the_same_verdict_tables_and_pages_without_a_figure(passing_run, tmp_path):
    import shutil

    from factatlas.probe.analysis.page import NO_PLOTS

    root, results = passing_run
    drawn_folder = results[0].html.parent
    copy_root = tmp_path / root.name
    shutil.copytree(root, copy_root)

    def files(folder):
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    drawn = files(drawn_folder)
    (res,) = R.write_report(copy_root, "synth-model", MetricsConfig(bootstrap=100), plots=False)
    bare = files(res.html.parent)
    assert res.plots == () and sum(name.endswith(".png") for name in drawn) >= 9
    assert sorted(bare) == sorted(name for name in drawn if not name.endswith(".png"))
    pages = {"report.html", "analyses/analyses.html", "analyses/analyses.md"}
    assert {name: bare[name] for name in bare if name not in pages} == \
        {name: drawn[name] for name in bare if name not in pages}  # verdict, metrics, every CSV: byte-equal
    for name in pages:
        text = bare[name].decode("utf-8")
        assert "<img" not in text and "![" not in text and ("<img" in drawn[name].decode() or "![" in drawn[name].decode())
    assert "figures not drawn (--no-plots)" in bare["report.html"].decode()
    assert NO_PLOTS in bare["analyses/analyses.html"].decode()


def test_a_figure_names_a_known_plot_and_a_page_holds_one_figure_per_file(tmp_path):
    from factatlas.probe.analysis.page import Section, write_page
    from factatlas.probe.figures import figure

    with pytest.raises(ValueError, match="unknown plot 'pie'; expected one of heatmap, grouped_bars"):
        figure("pie", "x.png", [1])
    twice = figure("grouped_bars", "x.png", ["a"], {"m": [0.5]}, "t")
    with pytest.raises(ValueError, match="two figures share a file name"):
        write_page(tmp_path, "p", "t", "s", [Section("a", "f", plots=(twice,)), Section("b", "f", plots=(twice,))])


@pytest.mark.slow
def test_leaking_benchmark_fails_with_that_reason(tmp_path):
    root = write_run(tmp_path / "leaky", leaky=True)
    (res,) = R.write_report(root, None, MetricsConfig(), plots=False)
    assert not res.verdict.passed
    assert [r.split(":")[0] for r in res.verdict.reasons] == ["leakage"]
    # 4 of 30 (fact, language) units leak in each language: 13.3% > 5%
    assert "13.3%" in res.verdict.reasons[0]
    assert "Verdict: FAIL" in res.html.read_text("utf-8")


@pytest.mark.slow
def test_template_only_baseline_as_good_as_the_model_fails(tmp_path):
    root = write_run(tmp_path / "giveaway", template_only="same")
    (res,) = R.write_report(root, None, MetricsConfig(), plots=False)
    assert [r.split(":")[0] for r in res.verdict.reasons] == ["template-only baseline"]
    assert "gap +0.0 points" in res.verdict.reasons[0]


@pytest.mark.slow
def test_missing_template_only_baseline_fails(tmp_path):
    root = write_run(tmp_path / "nobaseline", template_only=None)
    (res,) = R.write_report(root, None, MetricsConfig(), plots=False)
    assert not res.verdict.passed
    assert "rankings_template_only.parquet" in res.verdict.reasons[0]
    assert "not run" in res.html.read_text("utf-8")


def test_verdict_rules_on_metrics(passing_run):
    root, _ = passing_run
    import pyarrow.parquet as pq

    from factatlas.probe.evaluate import compute_metrics

    folder = root / "probe" / "synth-model"
    base = compute_metrics(pq.read_table(folder / "rankings.parquet").to_pylist(), root / "build",
                           template_only_rows=pq.read_table(folder / "rankings_template_only.parquet").to_pylist())
    assert R.verdict(base).passed

    def failing(mutate) -> list[str]:
        m = copy.deepcopy(base)
        mutate(m)
        return [c.name for c in R.verdict(m).checks if c.status == R.FAIL]

    def parallel(m):
        m["dataset"]["parallel"]["candidate_mismatch"] = 2

    def gold(m):
        m["dataset"]["gold_in_candidates"]["gold_outside"] = 1

    def one_language(m):
        m["cross_lingual"]["languages"] = ["en"]

    def small_gap(m):  # template-only P@1 just under the full prompt's: 4.9 points < 5, intervals apart
        t = m["validation"]["template_only"]
        t["baseline"]["macro"] = t["model"]["macro"] - 0.049
        t["baseline"]["ci"] = {"macro": [0.0, 0.01], "micro": [0.0, 0.01]}
        t["model"]["ci"] = {"macro": [0.5, 0.9], "micro": [0.5, 0.9]}

    def overlapping_template_only(m):  # 20 points apart, but the intervals overlap (micro)
        t = m["validation"]["template_only"]
        t["model"]["macro"], t["baseline"]["macro"] = 0.6, 0.4
        t["model"]["ci"] = {"macro": [0.55, 0.65], "micro": [0.3, 0.8]}
        t["baseline"]["ci"] = {"macro": [0.35, 0.45], "micro": [0.2, 0.5]}

    def below_majority(m):  # the reported case: PASS at 26.6 % P@1 below a majority baseline at 34.7 %
        v = m["validation"]
        v["model"].update(macro=0.266, micro=0.266, ci={"macro": [0.22, 0.31], "micro": [0.22, 0.31]})
        v["majority"].update(macro=0.347, micro=0.347, ci={"macro": [0.30, 0.39], "micro": [0.30, 0.39]})

    def majority_within_interval(m):  # above the majority, but not beyond its interval
        v = m["validation"]
        v["model"]["ci"] = {"macro": [0.30, 0.50], "micro": [0.40, 0.60]}
        v["majority"]["ci"] = {"macro": [0.10, 0.35], "micro": [0.10, 0.20]}

    assert failing(parallel) == ["multi-parallel"]
    assert failing(gold) == ["gold among candidates"]
    assert failing(one_language) == ["P@1 table and RankC heat-map"]
    assert failing(small_gap) == ["template-only baseline"]
    assert failing(overlapping_template_only) == ["template-only baseline"]
    assert failing(below_majority) == ["majority-class baseline"]
    assert failing(majority_within_interval) == ["majority-class baseline"]

    def no_entropy(m):  # a predicate whose majority baseline and entropy were never computed
        m["dataset"]["predicates"]["P36"]["entropy"] = {}

    def no_majority(m):
        last = sorted(m["dataset"]["predicates"])[-1]
        m["dataset"]["predicates"][last]["majority"]["p@1"] = None

    assert failing(no_entropy) == ["majority baseline and entropy"]
    assert failing(no_majority) == ["majority baseline and entropy"]
    reported = next(c for c in R.verdict(base).checks if c.name == "majority baseline and entropy")
    assert reported.status == R.INFO and reported.summary.startswith("reported for 2 predicates")

    def skewed(m):
        m["dataset"]["predicates"]["P36"]["imbalance"] = R.MAX_CULTURE_IMBALANCE + 1

    m = copy.deepcopy(base)
    skewed(m)
    balance = next(c for c in R.verdict(m).checks if c.name == "balance between cultures")
    assert balance.status == R.WARN and R.verdict(m).passed  # reported, not a failure


def test_verdict_thresholds_at_their_edges(passing_run):
    """docs/metrics.md's rules at their edges: leakage fails *above* 5 % (5 % passes), imbalance warns when it
    *exceeds* 3 (3 is fine), the template-only gap fails *below* 5 points (exactly 5 passes), and that gap is
    the macro one (a micro gap of 1 point with the macro gap at 10 and both intervals apart passes)."""
    root, _ = passing_run
    import pyarrow.parquet as pq

    from factatlas.probe.evaluate import compute_metrics

    folder = root / "probe" / "synth-model"
    base = compute_metrics(pq.read_table(folder / "rankings.parquet").to_pylist(), root / "build",
                           template_only_rows=pq.read_table(folder / "rankings_template_only.parquet").to_pylist())

    def status(name: str, mutate) -> str:
        m = copy.deepcopy(base)
        mutate(m)
        return next(c.status for c in R.verdict(m).checks if c.name == name)

    def leak(share: float):
        def mutate(m):
            lang = sorted(m["dataset"]["leakage"]["by_lang"])[0]
            m["dataset"]["leakage"]["by_lang"][lang]["share"] = share
        return mutate

    assert R.MAX_LEAKAGE_SHARE == 0.05
    assert (status("leakage", leak(0.05)), status("leakage", leak(0.0501))) == (R.PASS, R.FAIL)

    def imbalance(ratio: float):
        def mutate(m):
            for e in m["dataset"]["predicates"].values():
                e["imbalance"] = 1.0
            m["dataset"]["predicates"]["P36"]["imbalance"] = ratio
        return mutate

    assert R.MAX_CULTURE_IMBALANCE == 3.0
    assert (status("balance between cultures", imbalance(3.0)),
            status("balance between cultures", imbalance(3.01))) == (R.INFO, R.WARN)

    def template_only(model_macro: float, base_macro: float, model_micro: float = 0.9, base_micro: float = 0.1):
        def mutate(m):
            t = m["validation"]["template_only"]
            t["model"].update(macro=model_macro, micro=model_micro, ci={"macro": [0.09, 0.2], "micro": [0.8, 0.95]})
            t["baseline"].update(macro=base_macro, micro=base_micro, ci={"macro": [0.0, 0.08], "micro": [0.0, 0.2]})
        return mutate

    assert R.MIN_TEMPLATE_ONLY_GAP == 0.05 and 0.1 - 0.05 == 0.05  # an exact gap of 5 points
    assert status("template-only baseline", template_only(0.1, 0.05)) == R.PASS
    assert status("template-only baseline", template_only(0.1, 0.0501)) == R.FAIL
    assert status("template-only baseline", template_only(0.15, 0.05, model_micro=0.9, base_micro=0.89)) == R.PASS


@pytest.mark.slow
def test_report_command(passing_run, tmp_path):
    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:  # keep "report" a sub-command
        pass

    root = write_run(tmp_path / "cli-run", template_only="same")
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(root), "--model", "synth-model", "--bootstrap", "0", "--no-plots",
                              "--associate", "en=arab"])
    assert res.exit_code == 0, res.output
    assert re.search(r"FAIL synth-model: .*report\.html", res.output)
    assert "template-only baseline" in res.output
    assert "en → arab" in (root / "probe" / "synth-model" / "report.html").read_text("utf-8")
    assert runner.invoke(app, ["report", str(root), "--strict", "--bootstrap", "0", "--no-plots"]).exit_code == 1
    bad = runner.invoke(app, ["report", str(root), "--model", "synth-modl"])
    assert isinstance(bad.exception, FactatlasError)
    assert "Did you mean 'synth-model'?" in str(bad.exception)


def test_parse_associations():
    assert parse_associations(["ar=arab", "es=south-america+west"]) == {"ar": ("arab",),
                                                                        "es": ("south-america", "west")}
    with pytest.raises(FactatlasError, match="expected LANG=CULTURE"):
        parse_associations(["ar"])


def test_report_without_rankings_names_the_fix(tmp_path):
    root = write_run(tmp_path / "r")
    (root / "probe" / "synth-model" / "rankings.parquet").unlink()
    with pytest.raises(R.ReportError, match="factatlas probe"):
        R.write_report(root)


@pytest.mark.slow
def test_the_default_report_shows_interval_values(tmp_path):
    """`write_report(run)` as the quickstart calls it: the CI columns hold numbers, not dashes."""
    root = write_run(tmp_path / "default")
    (res,) = R.write_report(root)
    page = res.html.read_text("utf-8")
    accuracy = page.split("Accuracy by language and culture", 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr><td>.*?</tr>", accuracy)
    assert len(rows) == 2 * 3 + 1  # (ar, en) x (arab, west, all) + all
    for row in rows:
        cells = re.findall(r"<td>(.*?)</td>", row)  # ..., P@1 macro 95% CI (7th), ...
        assert re.fullmatch(r"\[\d\.\d{3}, \d\.\d{3}\]", cells[6]), row
    headline = page.split("Headline P@1", 1)[1].split("</section>", 1)[0]
    assert "–" not in headline and headline.count("[") >= 8


def test_open_answer_rules_get_their_own_baseline_and_no_ranking_metrics(tmp_path):
    """Generative rows (the answer matched to one candidate, no ranking): the verdict compares with the
    question-only baseline, RankC is n/a rather than a failure, and P@5, P@10, MRR are n/a, not P@1 again."""
    from factatlas.tables import RANKINGS_SCHEMA, read_rows, write_table

    root = write_run(tmp_path / "open")
    folder = root / "probe" / "synth-model"
    for name in ("rankings.parquet", "rankings_template_only.parquet"):
        rows = read_rows(folder / name, RANKINGS_SCHEMA)
        for r in rows:
            r.update(scoring="generative", ranked_qids=r["ranked_qids"][:1], scores=[0.0], prediction="an answer")
        write_table(folder / name, rows, RANKINGS_SCHEMA, sort_by=("prompt_id",))
    (res,) = R.write_report(root, None, MetricsConfig(bootstrap=100), plots=False)
    checks = {c.name: c for c in res.verdict.checks}
    assert res.verdict.passed, res.verdict.reasons
    assert "template-only baseline" not in checks and checks["question-only baseline"].status == R.PASS
    tables = checks["P@1 table and RankC heat-map"]
    assert tables.status == R.PASS and "RankC n/a" in tables.summary and "ar, en" in tables.summary
    page = res.html.read_text("utf-8")
    assert "question-only baseline (paired)" in page and "n/a" in page
    from factatlas.probe.evaluate import compute_metrics

    computed = compute_metrics(read_rows(folder / "rankings.parquet", RANKINGS_SCHEMA), root / "build")
    overall = computed["summary"]["overall"]
    assert computed["ranking"] is False and overall["p@1"] is not None
    assert (overall["p@5"], overall["p@10"], overall["mrr"], overall["mrr_micro"]) == (None, None, None, None)

    (folder / "rankings_template_only.parquet").unlink()
    (res,) = R.write_report(root, None, MetricsConfig(bootstrap=100), plots=False)
    assert [r.split(":")[0] for r in res.verdict.reasons] == ["question-only baseline"]
    assert "--model synth-model --scoring generative" in res.verdict.reasons[0]


def test_predicates_are_listed_in_numeric_order():
    """Tables and figures order PIDs as numbers: P103, P106, P136, P1303 (not P103, P106, P1303, P136)."""
    metrics_keys = {"P1303": 1, "P136": 2, "P106": 3, "P103": 4, "P17": 5}
    assert [p for p, _ in R._by_id(metrics_keys)] == ["P17", "P103", "P106", "P136", "P1303"]


def test_a_report_given_the_open_benchmark_reads_its_tables_there_and_writes_the_same_page(passing_run, tmp_path):
    """The quickstart hands its one open benchmark to the probe and the report, so that its tables are read
    once in the process: the page is the one the report makes on its own. The report never holds every
    prompt as records (issue 41 item 3): the display labels and the dataset profile stream the prompts, the
    joins decode the ranked ones."""
    from factatlas.benchmark import Benchmark

    _, (alone,) = passing_run
    root = write_run(tmp_path / "arab-west")
    bench = Benchmark.open(root)
    (shared,) = R.write_report(root, None, MetricsConfig(bootstrap=100), benchmark=bench)
    assert "answer_labels" in vars(bench) and "prompts" not in vars(bench)
    # every fact's key (the profile's and the majority baseline's) is let go once the metrics are made: the
    # analyses do not hold it (126,336 keys at a million prompts); asked again, it is read again, the same
    assert "fact_keys" not in vars(bench)
    assert shared.html.read_text("utf-8") == alone.html.read_text("utf-8")
    assert shared.verdict == alone.verdict
    keys = bench.fact_keys
    bench.forget("fact_keys")
    assert "fact_keys" not in vars(bench) and bench.fact_keys == keys
    with pytest.raises(AttributeError, match="not a cached read"):
        bench.forget("meta")
