"""The contract between the stages: one benchmark reader, typed row records, one entropy."""

from __future__ import annotations

import json
import math

import pytest

from factatlas.benchmark import BENCHMARK_FILES, Benchmark, BenchmarkError, locate
from factatlas.entropy import entropy_bits, predicate_entropy
from factatlas.records import CandidateSet, ProbeResult, Prompt
from factatlas.tables import (
    PROMPTS_SCHEMA,
    candidate_set_rows,
    candidate_sets_from_rows,
    prompt_from_row,
    prompt_to_row,
    read_probe_results,
    write_probe_results,
)
from tests.publish.publish_fixtures import make_benchmark


def test_one_reader_opens_run_benchmark_and_release_alike(tmp_path):
    from factatlas.publish.render import ReleaseOptions, render_release, write_release
    from factatlas.publish.source import load_source
    from factatlas.publish.versions import Version

    # two splits: the release holds data/all/dev-*.parquet and test-*.parquet, read back in prompt_id order
    run = make_benchmark(tmp_path / "run", splits={"west:P19:Q2": "dev", "west:P36:Q183": "dev"})
    via_run, via_dir = Benchmark.open(run), Benchmark.open(run / "build")
    write_release(render_release(load_source(run), ReleaseOptions("org/atlas", Version(1, 0, 0))), tmp_path / "rel")
    via_release = Benchmark.open(tmp_path / "rel")
    assert via_run.path == via_dir.path == run / "build" and via_run.run == via_dir.run == run
    assert via_release.location.release == tmp_path / "rel" and via_release.run is None
    assert [p.name.split("-")[0] for p in via_release.location.prompt_files] == ["dev", "test"]
    ids = [p.prompt_id for p in via_run.prompts]
    assert ids == sorted(ids) and len(ids) == 2 * len(via_run.facts)
    for other in (via_dir, via_release):
        assert other.meta == via_run.meta
        assert other.prompts == via_run.prompts
        assert other.facts == via_run.facts and other.entities == via_run.entities


def test_candidate_lists_stay_shared_across_rows(tmp_path):
    bench = Benchmark.open(make_benchmark(tmp_path / "run"))
    prompts = [p for p in bench.prompts if p.predicate == "P36" and p.lang == "en"]
    assert len(prompts) > 1 and len({id(p.candidate_qids) for p in prompts}) == 1
    row = prompt_to_row(prompts[0])  # the row keeps the record's tuple, and the record the row's
    assert row["candidate_qids"] is prompts[0].candidate_qids
    assert prompt_from_row(row).candidate_qids is prompts[0].candidate_qids


def test_missing_artifacts_are_named(tmp_path):
    run = make_benchmark(tmp_path / "run")
    with pytest.raises(BenchmarkError, match="not a run directory"):
        Benchmark.open(tmp_path / "nowhere")
    (run / "build" / "facts.parquet").unlink()
    bench = Benchmark.open(run)  # prompts and metadata are enough to open it
    with pytest.raises(BenchmarkError, match=r"build/facts.parquet: missing from the benchmark"):
        _ = bench.facts
    with pytest.raises(BenchmarkError, match="lacks facts.parquet"):
        Benchmark.open(run, require=BENCHMARK_FILES)
    meta = json.loads((run / "build" / "benchmark.json").read_text("utf-8"))
    (run / "build" / "benchmark.json").write_text(json.dumps({**meta, "schema_version": 2}), "utf-8")
    with pytest.raises(BenchmarkError, match="schema_version 2 is not 1"):
        Benchmark.open(run)
    assert locate(run).benchmark == run / "build"


@pytest.mark.parametrize("column, read", [("split", "splits"), ("kind", "kind_counts")])
def test_a_prompts_file_without_a_column_a_reader_needs_is_named(tmp_path, column, read):
    """The split and kind readers (what `export lm-eval` and the coverage read first) on a prompts file that lost
    the column: the file and the column named, not an IndexError (found by the damaged-inputs property test)."""
    import pyarrow.parquet as pq

    run = make_benchmark(tmp_path / "run")
    path = run / "build" / "prompts.parquet"
    table = pq.read_table(path)
    pq.write_table(table.drop_columns([column]), path)
    with pytest.raises(BenchmarkError, match=rf"cannot read prompts.parquet: it has no '{column}' column; rebuild"):
        getattr(Benchmark.open(run), read)


def test_a_cut_prompts_file_is_named(tmp_path):
    """Every reader of the prompts names the file it could not read (was the folder and "prompts", which the
    damaged-inputs property test drew for compare)."""
    run = make_benchmark(tmp_path / "run")
    path = run / "build" / "prompts.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    bench = Benchmark.open(run)
    from factatlas.tables import UnreadableTable

    for read in (lambda: bench.prompt_count, lambda: bench.kind_counts, lambda: list(bench.iter_prompts())):
        with pytest.raises((BenchmarkError, UnreadableTable)) as e:
            read()
        assert str(e.value).startswith((f"{run / 'build'}: cannot read prompts.parquet: ",
                                        f"{run / 'build' / 'prompts.parquet'}: not a readable parquet file")), e.value


def test_prompt_records_round_trip_rows(tmp_path):
    import pyarrow.parquet as pq

    run = make_benchmark(tmp_path / "run")
    row = pq.read_table(run / "build" / "prompts.parquet").slice(0, 1).to_pylist()[0]
    p = prompt_from_row(row)
    assert isinstance(p, Prompt) and list(prompt_to_row(p)) == PROMPTS_SCHEMA.names
    assert p == Benchmark.open(run).prompts[0]  # the reader decodes the row as prompt_from_row does
    assert prompt_to_row(p) == {k: tuple(v) if isinstance(v, list) else v for k, v in row.items()
                                if k != "gold_forms"} | {"gold_forms": tuple(tuple(f) for f in row["gold_forms"])}
    assert p.text[p.answer_start:].startswith("[Y]")


def test_every_prompt_accessor_hands_out_records_and_the_old_names_warn(tmp_path):
    from factatlas.benchmark import read_prompts

    run = make_benchmark(tmp_path / "run", splits={"west:P19:Q2": "dev"})
    bench = Benchmark.open(run)
    en = [p for p in bench.prompts if p.lang == "en"]
    by_shard = Benchmark.open(run).prompts_where(lambda pid, lang: lang == "en")  # filtered while reading
    batches = [p for batch in Benchmark.open(run).iter_prompts() for p in batch]
    for got in (bench.prompts, bench.prompts_for("en"), by_shard, batches, read_prompts(run / "build" / "prompts.parquet"),
                list(bench.prompts_by_id.values())):
        assert got and all(type(p) is Prompt for p in got)
    assert bench.prompts_for("en") == by_shard == en and batches == bench.prompts
    assert Benchmark.open(run).splits == bench.splits == ("dev", "test")  # the first from the split column alone
    with pytest.warns(DeprecationWarning, match="prompt_records is deprecated"):
        assert bench.prompt_records == bench.prompts
    with pytest.warns(DeprecationWarning, match="use Benchmark.prompts_where"):
        assert bench.prompt_records_where(lambda pid, lang: lang == "en") == en


def test_probe_results_round_trip_parquet(tmp_path):
    results = [ProbeResult("m", "mlm-independent", f"f{i}|en|P36/1", f"f{i}", "en", "P36/1", "arab", "P36",
                           ("Q85", "Q90"), (-0.5, -2.25), i % 2 == 0) for i in (2, 1)]
    write_probe_results(tmp_path / "a.parquet", results)
    write_probe_results(tmp_path / "b.parquet", list(reversed(results)))
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert read_probe_results(tmp_path / "a.parquet") == sorted(results, key=lambda r: r.prompt_id)


def test_candidate_sets_group_rows_and_ungroup_back():
    rows = [{"predicate": "P36", "lang": "en", "qid": "Q85", "label": "Cairo"},
            {"predicate": "P36", "lang": "en", "qid": "Q90", "label": "Paris"},
            {"predicate": "P36", "lang": "ar", "qid": "Q85", "label": "القاهرة"}]
    sets = candidate_sets_from_rows(rows)
    assert sets == [CandidateSet("P36", "en", ("Q85", "Q90"), ("Cairo", "Paris")),
                    CandidateSet("P36", "ar", ("Q85",), ("القاهرة",))]
    assert candidate_set_rows(sets) == rows


def test_one_entropy_keeps_the_published_numbers():
    assert entropy_bits([1, 1]) == 1.0 and entropy_bits([4]) == 0.0 and entropy_bits([]) == 0.0
    assert entropy_bits([1, 1, 2]) == 1.5
    assert entropy_bits([0, 1, 1, 0.0]) == 1.0  # zero weights are left out, not a math domain error
    # DLAMA: each fact counts once, at its valid object most frequent among the facts
    assert predicate_entropy([("Q1",), ("Q1", "Q2"), ("Q2", "Q1"), ("Q3",)]) == pytest.approx(
        -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25)))
    assert predicate_entropy([(), ("Q1",)]) == 0.0


def test_card_and_report_name_predicates_from_the_benchmark_itself(tmp_path):
    from factatlas.errors import ConfigError
    from factatlas.probe.report import ReportError, predicate_labeller
    from factatlas.publish.render import ReleaseOptions, render_release
    from factatlas.publish.source import load_source
    from factatlas.publish.versions import Version

    run = make_benchmark(tmp_path / "run")
    meta_path = run / "build" / "benchmark.json"
    meta = json.loads(meta_path.read_text("utf-8"))
    # what the build records; the card's predicate table reads it, not curate's config
    meta["predicate_labels"] = {"P19": "born in (as recorded)", "P36": "capital"}
    meta_path.write_text(json.dumps(meta), "utf-8")
    readme = render_release(load_source(run), ReleaseOptions("org/atlas", Version(1, 0, 0))).files["README.md"]
    assert "| P19 born in (as recorded) |" in readme.decode("utf-8")
    assert predicate_labeller(meta, meta_path)("P36") == "P36 capital"
    assert predicate_labeller(meta, meta_path)("P999") == "P999"  # not in the registry: the bare PID
    del meta["predicate_labels"]
    meta_path.write_text(json.dumps(meta), "utf-8")
    with pytest.raises(ConfigError, match=r"build/benchmark.json: no 'predicate_labels'; .* rebuild it"):
        load_source(run)
    with pytest.raises(ReportError, match=r"benchmark.json: no 'predicate_labels'"):
        predicate_labeller(meta, meta_path)


def test_the_build_records_display_labels_from_the_registry_and_its_entities():
    from factatlas.builder.build import display_labels
    from factatlas.records import Entity, Fact, ObjectRef, frozen_mapping

    facts = [Fact("arab:P19:Q1", "P19", "Q1", (ObjectRef("Q85"),), "arab", ("Q79",), 1.0, 1),
             Fact("x:P9999:Q2", "P9999", "Q2", (ObjectRef("Q3"),), "x", ("Q810", "Q79"), 1.0, 1)]
    entities = {"Q79": Entity("Q79", frozen_mapping({"ar": "مصر", "en": "Egypt"})),
                "Q810": Entity("Q810", frozen_mapping({"fr": "Jordanie", "ar": "الأردن"}))}
    assert display_labels(facts, entities) == {
        "predicate_labels": {"P19": "place of birth"},  # P9999 is not in the registry
        "country_labels": {"Q79": "Egypt", "Q810": "الأردن"},  # English, else the first language code
    }


def test_the_core_imports_no_stage_room_and_no_app():
    """factatlas/*.py is the contract every stage shares: it may import itself, never a stage room nor the
    app layer (factatlas.app: the command and the quickstart), even inside a function. ``__main__`` only
    delegates to the app."""
    import ast
    from pathlib import Path

    import factatlas

    rooms = {*factatlas.STAGES, "app"}
    core = Path(factatlas.__file__).parent
    offences = []
    for path in sorted(core.glob("*.py")):
        if path.name == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from .x import y / from . import x
                    base = "factatlas" + (f".{base}" if base else "")
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            rooms_named = sorted({n.split(".")[1] for n in names if n.startswith("factatlas.")} & rooms)
            if rooms_named:
                offences.append(f"{path.name}:{node.lineno}: imports factatlas.{rooms_named[0]}")
    assert offences == []


# ---- the shape of the code (issue 43 item 2): each rule a test that names every offence -------------

REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
# every room: the contract (with the app layer under factatlas/app), the five stages
SHAPED = ("factatlas", "curate", "templates", "builder", "probe", "publish")
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 600, 80
# The floors of DESIGN.md ("The pipeline and its rooms"): the core at the bottom, the stages above it in
# the order data flows (curate -> templates -> build -> probe -> publish: nothing downstream is needed
# upstream), the app layer (the command, the quickstart, ``python -m factatlas``) on top. An import may
# point down a floor or stay on its own, never up.
FLOORS = {"core": 0, "curate": 1, "templates": 2, "builder": 3, "probe": 4, "publish": 5, "app": 6}


def _python_files(*folders: str):
    for folder in folders:
        yield from sorted(p for p in (REPO_ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    name = ".".join(parts if parts[0] == "factatlas" else ("factatlas", *parts))
    return name.removesuffix(".__init__")


def _imports(path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, lazy, TYPE_CHECKING and relative ones included (``from .x
    import y`` in factatlas/templates/render.py is ``factatlas.templates.x``); ``from m import x`` gives ``m``
    and ``m.x`` (x may be a module)."""
    import ast

    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x (level 1: this package), from ..y import z (level 2: its parent)
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def _floor(module: str) -> str:
    """The floor of a factatlas module: ``core``, a stage's name or ``app`` (``factatlas.__main__`` only
    hands the command line to the app)."""
    parts = module.split(".")
    if len(parts) > 1 and (parts[1] in FLOORS or parts[1] == "__main__"):
        return "app" if parts[1] == "__main__" else parts[1]
    return "core"


def shape_offences(folders=SHAPED) -> list[str]:
    import ast

    offences = []
    for path in _python_files(*folders):
        text = path.read_text("utf-8")
        where = path.relative_to(REPO_ROOT)
        if text.count("\n") > MAX_MODULE_LINES:
            offences.append(f"{where}: {text.count(chr(10))} lines (at most {MAX_MODULE_LINES}; split it by job)")
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    offences.append(f"{where}:{node.lineno}: {node.name} is {length} lines (at most "
                                    f"{MAX_FUNCTION_LINES})")
    return offences


def import_cycles(folders=SHAPED) -> list[list[str]]:
    """The cycles of the module import graph of ``folders`` (strongly connected components of two or more)."""
    modules = {_module_name(p): p for p in _python_files(*folders)}
    graph = {m: sorted({name for _, name in _imports(p) if name in modules and name != m}) for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for m in sorted(graph):
        if m not in index:
            visit(m)
    return cycles


def room_imports(room: str, forbidden: tuple[str, ...]) -> list[str]:
    """Imports in ``room`` of another room's modules that it must not name (lazy ones included)."""
    named = dict.fromkeys(f"{p.relative_to(REPO_ROOT)}:{line}: imports {'.'.join(name.split('.')[:3])}"
                          for p in _python_files(room) for line, name in _imports(p)
                          if name.split(".")[:2] in [["factatlas", r] for r in forbidden])
    return list(named)


def upward_imports(folders=SHAPED) -> list[str]:
    """Imports that point up a floor (``FLOORS``), lazy, TYPE_CHECKING and relative ones included."""
    offences = []
    for path in _python_files(*folders):
        here = _floor(_module_name(path))
        for line, name in _imports(path):
            there = _floor(name) if name.split(".")[0] == "factatlas" else here
            if FLOORS[there] > FLOORS[here]:
                offences.append(f"{path.relative_to(REPO_ROOT)}:{line}: {here} imports {name} ({there}, a floor "
                                f"above)")
    return list(dict.fromkeys(offences))


def test_no_module_over_600_lines_and_no_function_over_80():
    assert shape_offences() == []


def test_no_import_cycle_between_files_of_any_room():
    assert import_cycles() == []


def test_no_import_points_up_a_floor():
    """Down or level only. probe/analysis/crosslingual.py reads templates' language registry (family, genus,
    script of each language, templates/data/languages.yaml): probe stands above templates, so that import
    points down a floor, and what it reads is the languages' fixed description, not a run's config (DESIGN.md:
    nothing downstream reads upstream *config*)."""
    assert upward_imports() == []


def test_the_build_and_the_release_import_no_curate_and_no_app():
    """builder and publish read cultures through factatlas.cultures (the app layer provides curate's); no room
    imports the app layer."""
    assert room_imports("builder", ("curate", "app")) == []
    assert room_imports("publish", ("curate", "builder", "app")) == []
    assert [x for room in ("curate", "templates", "probe") for x in room_imports(room, ("app",))] == []


def test_the_shape_rules_find_what_they_forbid(tmp_path, monkeypatch):
    """Each rule, fed a planted offence, names it: a long module and function, a cycle, a room import, an
    import up a floor; relative imports (``from .x import y``, ``from .. import z``) are seen as absolute ones."""
    import sys

    def plant(path: str, text: str) -> None:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, "utf-8")

    plant("factatlas/a.py", "from factatlas.b import x\n" + "\n" * 600)
    plant("factatlas/b.py", "def x():\n    from factatlas.a import y\n" + "    pass\n" * 80)
    plant("builder/c.py", "def f():\n    from factatlas.curate.config import load_culture\n")
    # relative: a cycle inside a room, a room import and an import up a floor, from a module and a package
    plant("templates/__init__.py", "from . import render\n")
    plant("templates/render.py", "from .morph import inflect\n")
    plant("templates/morph.py", "def inflect():\n    from .render import fill\n")
    plant("templates/ledger.py", "from ..builder.sources import Source\n")
    plant("builder/__init__.py", "from .. import curate\n")
    plant("probe/cli.py", "from factatlas.app import cli\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO_ROOT", tmp_path)
    assert shape_offences(("factatlas",)) == ["factatlas/a.py: 601 lines (at most 600; split it by job)",
                                              "factatlas/b.py:1: x is 82 lines (at most 80)"]
    assert import_cycles(("factatlas",)) == [["factatlas.a", "factatlas.b"]]
    assert import_cycles(("templates",)) == [["factatlas.templates.morph", "factatlas.templates.render"]]
    assert room_imports("builder", ("curate",)) == ["builder/__init__.py:1: imports factatlas.curate",
                                                    "builder/c.py:2: imports factatlas.curate.config"]
    assert upward_imports(("builder", "probe", "templates")) == [
        "probe/cli.py:1: probe imports factatlas.app (app, a floor above)",
        "probe/cli.py:1: probe imports factatlas.app.cli (app, a floor above)",
        "templates/ledger.py:1: templates imports factatlas.builder.sources (builder, a floor above)",
        "templates/ledger.py:1: templates imports factatlas.builder.sources.Source (builder, a floor above)"]


def test_a_row_group_damaged_past_the_first_is_named_while_streaming(tmp_path):
    """The footer is whole, the first row group reads, the second does not: the failure comes mid-stream,
    from a later ``next``, and still names the file (``Benchmark._read_each``)."""
    import pyarrow.parquet as pq

    run = make_benchmark(tmp_path / "run")
    path = run / "build" / "prompts.parquet"
    table = pq.read_table(path)
    pq.write_table(table, path, row_group_size=max(1, table.num_rows // 2), compression="zstd", store_schema=True)
    chunk = pq.ParquetFile(path).metadata.row_group(1).column(0)
    data = bytearray(path.read_bytes())
    start = chunk.data_page_offset
    data[start:start + chunk.total_compressed_size] = b"\xff" * chunk.total_compressed_size
    path.write_bytes(bytes(data))
    batches = Benchmark.open(run).iter_prompts()
    assert next(batches)  # the first row group is whole
    with pytest.raises(BenchmarkError) as e:
        list(batches)
    assert str(e.value).startswith(f"{run / 'build'}: cannot read prompts.parquet: "), e.value
