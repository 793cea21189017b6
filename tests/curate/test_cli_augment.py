"""CLI commands of the curate stage, and the augmentation graphs' stopping rule."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.curate.augment import build_graph, closure_edges, containing_areas, superclasses

runner = CliRunner()


def test_curate_command_prints_counts_and_names_empty_countries(fixture_files, tmp_path):
    graph, table = fixture_files
    result = runner.invoke(app, ["curate", "--pair", "arab-west", "--langs", "ar,en", "--sample", str(graph),
                                 "--page-lengths", str(table), "--run", str(tmp_path / "run"),
                                 "--predicates", "P36,P19"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:5] == ["facts per predicate x culture",
                         "predicate  arab  west",
                         "---------  ----  ----",
                         "P36           2     2",
                         "P19           2     2"]
    assert "Egypt (Q79)         2           2" in result.stdout
    assert "west: countries that produced no fact: Andorra (Q228), Austria (Q40)" in result.stdout
    assert "only in the checked list: Q262," in result.stdout
    assert (tmp_path / "run" / "curate" / "facts.parquet").exists()


def test_curate_command_errors_exit_2_without_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "from factatlas.app.cli import main; main()", "curate", "--pair",
                           "arab-wset"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown pair 'arab-wset'. Did you mean 'arab-west'?" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cultures_predicates_validate_commands(tmp_path):
    out = runner.invoke(app, ["cultures", "list"]).stdout
    assert out.splitlines()[0].startswith("arab") and "rule ?c wdt:P463 wd:Q7172" in out
    assert "pairs: arab-west, asia-west, south-america-west" in out
    out = runner.invoke(app, ["cultures", "show", "west"]).stdout
    assert "Q55       Netherlands                  nl, en" in out
    out = runner.invoke(app, ["predicates", "list"]).stdout
    assert len(out.splitlines()) == 20 and "P1303  instrument" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text("label: X\ncountries:\n  - {qid: Q1, label: X, wikipedia_sites: [en]}\nlabels: {}\n")
    res = runner.invoke(app, ["validate", str(bad)])
    assert res.exit_code != 0
    assert "unknown key 'labels'. Did you mean 'label'?" in str(res.exception)
    res = runner.invoke(app, ["validate", "curate/cultures/arab.yaml"])
    assert res.exit_code == 0 and "ok — culture arab: 22 countries" in res.stdout


def test_containing_areas_stop_before_countries():
    # Madrid -> Community of Madrid -> Spain -> Europe (a chain that must stop at Spain)
    g = build_graph([("Q2807", "Q5756"), ("Q5756", "Q29"), ("Q29", "Q46"), ("Q2807", "Q29")])
    assert containing_areas(g, "Q2807", lambda q: q == "Q29") == ["Q5756"]
    assert containing_areas(g, "Q5756", lambda q: q == "Q29") == []
    assert containing_areas(g, "Q999", lambda q: False) == []
    # cycles in P131 data do not loop forever
    cyc = build_graph([("Q1", "Q2"), ("Q2", "Q3"), ("Q3", "Q2")])
    assert containing_areas(cyc, "Q1", lambda q: False) == ["Q2", "Q3"]


def test_superclasses_are_the_whole_chain_in_qid_order():
    g = build_graph([("Q177220", "Q639669"), ("Q639669", "Q483501"), ("Q483501", "Q215627")])
    assert superclasses(g, "Q177220") == ["Q215627", "Q483501", "Q639669"]
    assert superclasses(g, "Q215627") == []


def test_the_closure_walk_asks_each_item_once_and_ends_on_cycles():
    # a diamond (1 -> 2, 3 -> 4), a cycle (4 -> 5 -> 4), a start that is another start's super (2), and a
    # chain nobody starts on (9 -> 10)
    parents = {"Q1": ["Q2", "Q3"], "Q2": ["Q4"], "Q3": ["Q4"], "Q4": ["Q5"], "Q5": ["Q4"], "Q9": ["Q10"]}
    asked: list[list[str]] = []

    def parent_edges(items):
        asked.append(list(items))
        return [(a, b) for a in items for b in parents.get(a, [])]

    edges = closure_edges(["Q2", "Q1", "Q7"], parent_edges)
    assert sorted(edges) == [("Q1", "Q2"), ("Q1", "Q3"), ("Q2", "Q4"), ("Q3", "Q4"), ("Q4", "Q5"), ("Q5", "Q4")]
    assert asked == [["Q2", "Q1", "Q7"], ["Q3", "Q4"], ["Q5"]]  # hop by hop, each item asked once
    assert closure_edges([], parent_edges) == [] and len(asked) == 3


def test_the_closure_walk_answers_what_the_path_query_answers_on_the_sample():
    """The walk's edges against ``?start wdt:P279* ?sub . ?sub wdt:P279 ?super`` (the form step 5 sent until
    29 Nov 2026) evaluated by the store itself, from every item at the foot of a P279 or P131 chain in the
    sample."""
    import pytest

    from factatlas.curate import sparql
    from factatlas.curate.endpoints import SAMPLE_PATH, load_store, run_on_store

    if not SAMPLE_PATH.exists():
        pytest.skip("the embedded Wikidata sample is not built")
    store = load_store(SAMPLE_PATH)

    def edges_of(rows):
        return {(sparql.qid_of(r, "sub"), sparql.qid_of(r, "super")) for r in rows}

    for prop, build in (("P279", sparql.superclass_edges_query), ("P131", sparql.admin_edges_query)):
        # the chains' lowest items: the walk has to climb from them, hop by hop
        starts = sorted({sparql.qid_of(r, "s") for r in run_on_store(store, sparql.PREFIXES + (
            f"SELECT DISTINCT ?s WHERE {{ ?s wdt:{prop} ?o . FILTER NOT EXISTS {{ ?x wdt:{prop} ?s }} }}"))})
        path = sparql.PREFIXES + ("SELECT DISTINCT ?sub ?super WHERE {\n"
                                  f"  {sparql.values('start', [sparql.qid(x) for x in starts])}\n"
                                  f"  ?start wdt:{prop}* ?sub .\n  ?sub wdt:{prop} ?super .\n}}\n")
        want = edges_of(run_on_store(store, path))
        for batch in (200, 7):
            walked = closure_edges(starts, lambda items, b=batch, build=build: [
                e for i in range(0, len(items), b) for e in edges_of(run_on_store(store, build(items[i:i + b])))])
            assert len(walked) == len(set(walked)) and set(walked) == want, (prop, batch)
        assert len(want) > 30 and not {sub for sub, _ in want} <= set(starts), prop  # chains worth walking
