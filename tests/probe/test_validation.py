"""The verdict's comparison: held-out split only, baselines on the same prompts, intervals apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factatlas import forked
from factatlas.probe import report as R
from factatlas.probe.evaluate import MetricsConfig, compute_metrics
from factatlas.tables import RANKINGS_SCHEMA, write_table
from tests.probe.test_metrics_evaluate import ranking
from tests.probe.test_report_fixtures import entities, prompt_rows, write_benchmark_dir

CONFIG = MetricsConfig(bootstrap=200)


@pytest.fixture(scope="module")
def split_bench(tmp_path_factory):
    """Western facts in dev (what a model was tuned on), Arab facts in test."""
    rows = [dict(p, split="dev" if p["culture"] == "west" else "test") for p in prompt_rows()]
    return write_benchmark_dir(tmp_path_factory.mktemp("split") / "build", rows, entities()), rows


def test_only_the_split_the_model_was_not_trained_on_validates(split_bench):
    path, rows = split_bench
    memorised = [ranking(p, p["split"] == "dev") for p in rows]  # knows its training split only
    m = compute_metrics(memorised, path, CONFIG, trained_on=["dev"])
    v = m["validation"]
    assert v["splits"] == ["test"] and "trained on dev" in v["split_source"]
    assert (v["model"]["macro"], v["model"]["micro"]) == (0.0, 0.0)
    assert m["summary"]["overall"]["p@1"] == 0.5  # the aggregate mixes in the split it was taught
    check = R.check_majority(m)
    assert check.status == R.FAIL and "held-out split test" in check.details[0]
    # nothing recorded: the test split; no training at all: every split
    assert compute_metrics(memorised, path, CONFIG)["validation"]["splits"] == ["test"]
    everything = compute_metrics(memorised, path, CONFIG, trained_on=[])["validation"]
    assert everything["splits"] == ["dev", "test"] and everything["model"]["micro"] == 0.5


def _probed_run(root, rows):
    """A run whose model memorised its training split (dev), as probe.json records it."""
    run = root / "run"
    write_benchmark_dir(run / "build", rows, entities())
    folder = run / "probe" / "m"
    folder.mkdir(parents=True)
    write_table(folder / "rankings.parquet", [ranking(p, p["split"] == "dev") for p in rows], RANKINGS_SCHEMA)
    write_table(folder / "rankings_template_only.parquet", [ranking(p, False) for p in rows], RANKINGS_SCHEMA)
    (folder / "probe.json").write_text(json.dumps({"tiny_model": {"trained_on_splits": ["dev"]}}), "utf-8")
    return run, folder


def test_the_report_reads_the_training_split_from_probe_json(split_bench, tmp_path):
    _path, rows = split_bench
    run, folder = _probed_run(tmp_path, rows)
    (res,) = R.write_report(run, None, CONFIG, plots=False)
    failing = {c.name: c for c in res.verdict.checks if c.status == R.FAIL}
    assert set(failing) == {"template-only baseline", "majority-class baseline"}
    assert "held-out split test" in failing["majority-class baseline"].details[0]
    verdict = json.loads((folder / "verdict.json").read_text("utf-8"))
    assert verdict["verdict"] == "FAIL"


def test_the_metrics_computed_in_a_child_make_the_page_the_metrics_computed_here_make(split_bench, tmp_path,
                                                                                      monkeypatch):
    """The report's metrics come back from a forked child pickled: the page, the verdict and the analyses are
    byte for byte those of the metrics computed in the report's own process."""
    if forked.fork_refused() is not None:
        pytest.skip("this platform does not fork the metrics")
    _path, rows = split_bench
    outputs = []
    for fork in (True, False):
        monkeypatch.setattr(forked, "FORK", fork)
        run, folder = _probed_run(tmp_path / ("forked" if fork else "inprocess"), rows)
        (res,) = R.write_report(run, None, CONFIG, plots=False)
        assert res.metrics_source.endswith(forked.IN_CHILD if fork else "forking turned off (factatlas.forked.FORK)")
        outputs.append({path.relative_to(folder): path.read_bytes() for path in sorted(folder.rglob("*"))
                        if path.is_file() and path.suffix in (".html", ".json", ".csv", ".md")})
    in_child, here = outputs
    assert len(in_child) >= 5 and in_child.keys() == here.keys()
    assert {p for p in in_child if in_child[p] != here[p]} <= {Path("analyses/analyses.html"),
                                                               Path("analyses/analyses.md"), Path("report.html")}
    for name in in_child:  # the pages name their run's folder: the rest is equal
        assert in_child[name].replace(b"forked", b"RUN") == here[name].replace(b"inprocess", b"RUN"), name


def test_template_only_is_compared_on_the_same_prompts(tmp_path):
    rows = prompt_rows()
    path = write_benchmark_dir(tmp_path / "build", rows, entities())
    # right in Arabic, wrong in English; the baseline could only replace the English subjects (as when
    # the Arabic subject is inflected in the text) and knows nothing
    model = [ranking(p, p["lang"] == "ar") for p in rows]
    baseline = [ranking(p, False) for p in rows if p["lang"] == "en"]
    m = compute_metrics(model, path, CONFIG, template_only_rows=baseline)
    t = m["validation"]["template_only"]
    n_en = sum(1 for p in rows if p["lang"] == "en")
    assert t["n_pairs"] == n_en == t["model"]["n_prompts"] == t["baseline"]["n_prompts"]  # the same prompts
    assert m["validation"]["bootstrap"] == CONFIG.bootstrap  # the intervals' resamples, as asked
    assert t["excluded"]["prompts"] == len(rows) - n_en and t["excluded"]["by_lang"] == {"ar": len(rows) - n_en}
    assert (t["model"]["macro"], t["baseline"]["macro"]) == (0.0, 0.0)  # the model on the baseline's prompts
    assert m["summary"]["overall"]["p@1"] == 0.5  # unpaired, it would have looked 50 points better
    check = R.check_template_only(m)
    assert check.status == R.FAIL
    assert any(f"{len(rows) - n_en} held-out prompts excluded from the comparison (ar {len(rows) - n_en})" in d
               for d in check.details)


@pytest.mark.slow
def test_report_command_takes_the_training_split(split_bench, tmp_path):
    import typer
    from typer.testing import CliRunner

    from factatlas.probe.report_cli import register

    path, rows = split_bench
    run = tmp_path / "run"
    write_benchmark_dir(run / "build", rows, entities())
    folder = run / "probe" / "m"
    folder.mkdir(parents=True)
    # right on the dev facts, and on one Arab (test) fact in three: P@1 1/3 there
    known = {p["fact_id"] for p in rows if p["split"] == "test"}
    known = set(sorted(known)[::3])
    write_table(folder / "rankings.parquet", [ranking(p, p["split"] == "dev" or p["fact_id"] in known)
                                              for p in rows], RANKINGS_SCHEMA)
    write_table(folder / "rankings_template_only.parquet", [ranking(p, False) for p in rows], RANKINGS_SCHEMA)
    app = typer.Typer()
    register(app)

    @app.callback()
    def main() -> None: ...

    res = CliRunner().invoke(app, ["report", str(run), "--bootstrap", "200", "--trained-on", "dev", "--no-plots"])
    assert res.exit_code == 0, res.output
    metrics_split = json.loads((folder / "verdict.json").read_text("utf-8"))
    majority = next(c for c in metrics_split["checks"] if c["name"] == "majority-class baseline")
    assert "held-out split test: the splits the model was not trained on (trained on dev)" in \
        majority["details"][0]


@pytest.mark.slow
def test_the_report_reuses_the_probes_metrics_only_while_their_inputs_hold(split_bench, tmp_path, monkeypatch):
    """metrics.json as the probe writes it is reused for the same rankings, benchmark files, code, training
    splits and configuration; any change makes the report compute again, and its page follow the change."""
    from factatlas.benchmark import Benchmark
    from factatlas.probe.analysis import hook
    from factatlas.probe.evaluate import VALIDATION_BOOTSTRAP
    from factatlas.probe.runner import write_metrics
    from factatlas.tables import read_probe_results

    _path, rows = split_bench
    run, folder = _probed_run(tmp_path, rows)
    write_metrics(folder, read_probe_results(folder / "rankings.parquet"),
                  read_probe_results(folder / "rankings_template_only.parquet"), Benchmark.open(run), ["dev"])
    config = MetricsConfig(bootstrap=VALIDATION_BOOTSTRAP)

    def report(**kwargs) -> str:
        (res,) = R.write_report(run, None, kwargs.pop("config", config), **kwargs)
        return res.metrics_source

    where = "; " + (forked.fork_refused() or forked.IN_CHILD)  # computed metrics: where

    assert report() == "reused metrics.json: same inputs and configuration"
    assert (folder / "report.html").is_file() and (folder / "analyses" / "analyses.html").is_file()
    # the whole page once; the figures and analyses (90 % of a report's time) are drawn after the metrics and
    # the verdict are decided, and nothing below reads them
    monkeypatch.setattr(R, "report_figures", lambda *_args, **_kwargs: {})
    monkeypatch.setattr(hook, "with_analyses", lambda page, *_args, **_kwargs: page)
    reused = (folder / "verdict.json").read_bytes()
    written = (folder / "metrics.json").read_text("utf-8")
    (folder / "metrics.json").unlink()
    assert report() == "computed: no metrics.json" + where
    assert (folder / "verdict.json").read_bytes() == reused  # reuse gives the page a fresh computation gives
    older = {k: v for k, v in json.loads(written).items() if k != "inputs"}
    (folder / "metrics.json").write_text(json.dumps(older), "utf-8")
    assert report() == "computed: metrics.json records no inputs (written before factatlas recorded them)" + where
    (folder / "metrics.json").write_text(written, "utf-8")
    assert report(config=CONFIG) == "computed: metrics.json has another configuration" + where
    stale = "computed: metrics.json was computed from other inputs (rankings, benchmark, code or training splits)" + where
    assert report(trained_on=["test"]) == stale
    assert "held-out split dev" in (folder / "verdict.json").read_text("utf-8")
    (run / "build" / "notes.txt").write_text("one file more in the benchmark directory")
    assert report() == stale
    (run / "build" / "notes.txt").unlink()
    assert report() == "reused metrics.json: same inputs and configuration"
    # other rankings: the model now knows the held-out facts too, and the page says so
    write_table(folder / "rankings.parquet", [ranking(p, True) for p in rows], RANKINGS_SCHEMA)
    assert report() == stale
    majority = next(c for c in json.loads((folder / "verdict.json").read_text("utf-8"))["checks"]
                    if c["name"] == "majority-class baseline")
    assert majority["status"] == R.PASS


def test_reuse_benchmark_prints_no_time_unless_reuse_equals_a_fresh_computation(split_bench, tmp_path, capsys,
                                                                               monkeypatch):
    import importlib.util
    import sys
    from pathlib import Path

    from factatlas.benchmark import Benchmark
    from factatlas.probe.runner import write_metrics
    from factatlas.tables import read_probe_results

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "report_metrics.py"
    spec = importlib.util.spec_from_file_location("report_metrics", script)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "report_metrics", bench)
    spec.loader.exec_module(bench)
    _path, rows = split_bench
    run, folder = _probed_run(tmp_path, rows)
    write_metrics(folder, read_probe_results(folder / "rankings.parquet"),
                  read_probe_results(folder / "rankings_template_only.parquet"), Benchmark.open(run), ["dev"])
    assert bench.main(["--run", str(run), "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "check m: same" in out and "RATIO m: reused is" in out
    # a metrics.json whose numbers were edited but whose inputs still match: caught, no time printed
    metrics = json.loads((folder / "metrics.json").read_text("utf-8"))
    metrics["summary"]["overall"]["p@1"] = 0.99
    (folder / "metrics.json").write_text(json.dumps(metrics), "utf-8")
    assert bench.main(["--run", str(run), "--repeats", "1"]) == 1
    out = capsys.readouterr().out
    assert "differs from a fresh computation" in out and "RATIO" not in out


def test_metrics_inputs_follow_the_numerical_libraries(split_bench, tmp_path, monkeypatch):
    """Another NumPy (its generator draws the bootstrap) makes a metrics.json stale, like other code."""
    from factatlas import rundir
    from factatlas.probe.evaluate import metrics_inputs

    _path, rows = split_bench
    run, folder = _probed_run(tmp_path, rows)

    def inputs():
        return metrics_inputs(folder / "rankings.parquet", None, run / "build", ["dev"])

    before = inputs()
    real = rundir.installed_version
    monkeypatch.setattr(rundir, "installed_version", lambda name: "1.0.0" if name == "numpy" else real(name))
    after = inputs()
    assert after["code"] != before["code"]
    assert {k: v for k, v in after.items() if k != "code"} == {k: v for k, v in before.items() if k != "code"}


def test_validating_the_benchmark_leaves_the_metrics_inputs_as_they_were(split_bench, tmp_path):
    """validate-benchmark's record beside the tables (validated.json) is not an input of the metrics: a probe's
    metrics.json stays reusable after a validation; a changed table still changes the hash."""
    from factatlas.probe.evaluate import metrics_inputs
    from tests.clirun import factatlas

    _path, rows = split_bench
    run, folder = _probed_run(tmp_path, rows)

    def inputs():
        return metrics_inputs(folder / "rankings.parquet", None, run / "build", ["dev"])

    (run / "build" / "validated.json").unlink(missing_ok=True)
    before = inputs()
    assert factatlas("validate-benchmark", run).returncode == 0
    assert (run / "build" / "validated.json").is_file() and inputs() == before
    (run / "build" / "stats.json").write_text("{}", "utf-8")
    assert inputs()["benchmark_files"] != before["benchmark_files"]


def test_a_model_trained_on_every_split_has_nothing_to_validate_with(split_bench):
    """Trained on dev and test: no held-out prompt is left, and the majority rule fails saying so."""
    path, rows = split_bench
    m = compute_metrics([ranking(p, True) for p in rows], path, CONFIG, trained_on=["dev", "test"])
    assert m["validation"]["splits"] == [] and m["validation"]["model"]["n_prompts"] == 0
    check = R.check_majority(m)
    assert check.status == R.FAIL
    assert check.summary.startswith("no ranked prompt on the held-out split none")
