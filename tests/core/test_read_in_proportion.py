"""Issue 41 item 3: no command holds every prompt of the benchmark as records (``Benchmark.prompts``, the
whole-table read); each reads the rows it needs, filtered or a row group at a time. Each test runs the
command in-process and counts what went through the reader: the whole-table read, and the rows each
``decode_prompts`` call turned into records."""

from __future__ import annotations

import gc
import json
import subprocess
from functools import cached_property
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from factatlas import benchmark as B
from factatlas.records import Prompt
from tests import clirun
from tests.builder.builder_fixtures import build, write

REPO = Path(__file__).resolve().parents[2]


def factatlas(*args: object) -> subprocess.CompletedProcess:
    return clirun.factatlas(*args, env={"COLUMNS": "200"}, cwd=REPO)


@pytest.fixture(autouse=True)
def only_new_objects_are_listed():
    """The counts below are differences of records alive (now less before the command), so the objects alive
    when a test starts can be left out of ``gc.get_objects()``: frozen into the permanent generation, which it
    does not list. A listing then walks what the test made, not the worker's millions (torch, the other tests'
    fixtures): this file took 18 CPU-s, most of it in those walks. No collection first: garbage frozen with the
    rest is listed by no test, and a full collection of a worker that holds torch cost 0.3-0.5 s a test."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture
def reads(monkeypatch):
    """What the reader was asked for: ``whole`` counts reads of every prompt as records, ``decoded`` the rows
    of each decoded batch (language of each row)."""
    seen = {"whole": 0, "decoded": []}
    whole = B.Benchmark.__dict__["prompts"].func

    def counted_whole(self):
        seen["whole"] += 1
        return whole(self)

    decode = B.decode_prompts

    def counted_decode(table, interned):
        seen["decoded"].append(table.column("lang").to_pylist())
        if "before" in seen:  # records alive as this batch is decoded, less those alive before the command
            seen["alive"] = max(seen.get("alive", 0), live_prompts() - seen["before"])
        return decode(table, interned)

    prompts = cached_property(counted_whole)
    prompts.__set_name__(B.Benchmark, "prompts")
    monkeypatch.setattr(B.Benchmark, "prompts", prompts)
    monkeypatch.setattr(B, "decode_prompts", counted_decode)
    return seen


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    run = tmp_path_factory.mktemp("read-in-proportion") / "run"
    write(build(), run / "build")
    return run


GROUP_ROWS = 2


def live_prompts() -> int:
    """Prompt records alive in this process (other tests' fixtures included: compare with a count before)."""
    return sum(type(o) is Prompt for o in gc.get_objects())


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    """The built benchmark with prompts.parquet in row groups of 2 rows (the writer's 2048 hold it whole)."""
    run = tmp_path_factory.mktemp("grouped") / "run"
    write(build(), run / "build")
    path = run / "build" / "prompts.parquet"
    table = pq.read_table(path)
    pq.write_table(table, path, row_group_size=GROUP_ROWS, compression="zstd", store_schema=True)
    assert pq.ParquetFile(path).num_row_groups >= 5
    return run


def rows_of(run: Path, lang: str | None = None) -> int:
    table = pq.read_table(run / "build" / "prompts.parquet", columns=["lang"])
    return table.num_rows if lang is None else table.column("lang").to_pylist().count(lang)


def test_validate_benchmark_streams_the_prompts(grouped, reads):
    reads["before"] = live_prompts()
    res = factatlas("validate-benchmark", grouped / "build")
    assert res.returncode == 0, res.stdout + res.stderr
    assert reads["whole"] == 0
    assert len(reads["decoded"]) >= 5 and reads["alive"] <= 2 * GROUP_ROWS  # a row group or two, never all


def test_publish_dry_run_streams_the_prompts(grouped, reads, tmp_path):
    reads["before"] = live_prompts()
    res = factatlas("publish", grouped, "--repo", "org/bench", "--version", "1.0.0", "--target",
                    f"git:{tmp_path / 'release.git'}", "--dry-run")
    assert res.returncode == 0, res.stdout + res.stderr
    assert reads["whole"] == 0
    # the shards and the digest read Arrow columns (tests/publish/test_publish_in_proportion.py): the only
    # records made are the first row and the card's example row
    assert reads["alive"] <= 2
    decoded = [lang for batch in reads["decoded"] for lang in batch]
    assert len(decoded) <= 2


def test_the_dataset_profile_and_the_answer_labels_make_no_prompt_record(grouped, reads):
    """The metrics' two passes over every row of the benchmark (the dataset profile; the display labels of the
    answers) count over columns: no prompt is decoded into a record (until session 52 both made every one)."""
    from factatlas.probe.profile import dataset_profile

    bench = B.Benchmark.open(grouped)
    profile = dataset_profile(bench)
    assert reads["whole"] == 0 and reads["decoded"] == []
    assert profile["n_prompts"] == rows_of(grouped) and profile["parallel"]["groups"] == len(bench.fact_keys)
    assert bench.answer_labels and reads["decoded"] == []


def test_the_lm_eval_export_streams_the_prompts(grouped, reads, tmp_path):
    """``export lm-eval`` turns each prompt into its JSON line as it reads it, a row group at a time: the task
    files are held (written together), the prompts never all as records (seen red with ``bench.prompts``)."""
    from factatlas.publish.lmeval import export_lmeval

    reads["before"] = live_prompts()
    done = export_lmeval(grouped, tmp_path / "tasks")
    assert reads["whole"] == 0
    assert len(reads["decoded"]) >= 5 and reads["alive"] <= 2 * GROUP_ROWS
    assert done.counts["mc/docs"] + done.counts["gen/docs"] + sum(
        n for key, n in done.counts.items() if "skipped" in key) == rows_of(grouped)


@pytest.fixture(scope="module")
def tiny_model(built, tmp_path_factory):
    """A tiny BERT trained once (training reads every prompt: its training set), then probed as a folder."""
    import shutil

    res = factatlas("probe", built, "--model", "tiny-bert", "--tiny-steps", "1", "--out-name", "train")
    assert res.returncode == 0, res.stdout + res.stderr
    model = tmp_path_factory.mktemp("model") / "tiny-bert"
    shutil.copytree(built / "probe" / "_models" / "tiny-bert", model)
    return model


@pytest.mark.slow
def test_probe_of_one_language_decodes_that_language_for_scoring_and_metrics(built, tiny_model, reads):
    res = factatlas("probe", built, "--model", tiny_model, "--langs", "en", "--out-name", "en",
                    "--no-template-only")
    assert res.returncode == 0, res.stdout + res.stderr
    assert reads["whole"] == 0
    # the whole-table passes (the answers' display labels, the dataset profile) read columns; everything
    # decoded is English
    full = [b for b in reads["decoded"] if set(b) != {"en"}]
    english = [b for b in reads["decoded"] if set(b) == {"en"}]
    assert full == []
    assert english and sum(map(len, english)) <= 4 * rows_of(built, "en")
    # the coverage still counts the whole benchmark (its kind column), not the prompts the join decoded
    coverage = json.loads((built / "probe" / "en" / "metrics.json").read_text("utf-8"))["coverage"]
    assert coverage["benchmark_prompts"] == rows_of(built)
    kinds = pq.read_table(built / "build" / "prompts.parquet", columns=["kind"]).column("kind").to_pylist()
    assert coverage["eligible_prompts"] == kinds.count("cloze") > coverage["used"]


# ---- rows held at once: the rankings (writer, metrics, probe, report) and the release's shards ----------

def live_results() -> int:
    """ProbeResult records alive in this process."""
    from factatlas.records import ProbeResult

    return sum(type(o) is ProbeResult for o in gc.get_objects())


@pytest.fixture
def joins(monkeypatch):
    """The rankings records alive while the metrics' join reads them, sampled every few rows (the reader makes
    them ``PROBE_RESULT_BATCH`` = 2 at a time here), less those alive before the command; one entry a join."""
    from factatlas import forked
    from factatlas import tables as T
    from factatlas.probe import evaluate as E

    monkeypatch.setattr(T, "PROBE_RESULT_BATCH", 2)
    monkeypatch.setattr(forked, "FORK", False)  # the report's metrics in this process, where the join is watched
    seen = {"before": live_results(), "held": [], "rows": []}
    join = E.join

    def sampled(rankings, *args, **kwargs):
        held, rows = [0], [0]

        def watched():
            for i, r in enumerate(rankings):
                if i % 2 == 1:
                    held[0] = max(held[0], live_results() - seen["before"])
                rows[0] += 1
                yield r

        out = join(watched(), *args, **kwargs)
        seen["held"].append(held[0])
        seen["rows"].append(rows[0])
        return out

    monkeypatch.setattr(E, "join", sampled)
    return seen


@pytest.mark.slow
def test_probe_and_report_never_hold_every_ranking_for_the_metrics(built, tiny_model, joins):
    """The probe hands its rows over once written and both commands' metrics stream the written files:
    the rankings records alive during the join are a batch or two, not the run's (seen red with the probe
    computing its metrics from its lists, and with the report reading the files whole)."""
    res = factatlas("probe", built, "--model", tiny_model, "--out-name", "held")
    assert res.returncode == 0, res.stdout + res.stderr
    probe_rows = list(joins["rows"])
    assert len(probe_rows) == 2 and min(probe_rows) >= 10  # the rankings and the template-only baseline
    assert max(joins["held"]) <= 2 * 2 + 1
    joins["held"].clear()
    joins["rows"].clear()
    res = factatlas("report", built, "--model", "held", "--bootstrap", "10", "--no-plots")
    assert res.returncode == 0, res.stdout + res.stderr
    assert joins["rows"] == probe_rows
    assert max(joins["held"]) <= 2 * 2 + 1


def ranking(pid: str, n: int, seed: int):
    import random

    from factatlas.records import ProbeResult

    rng = random.Random(seed)
    return ProbeResult("m", "mlm", pid, "F1", "en", "t1", "US", "P19", tuple(f"Q{i}" for i in range(n)),
                       tuple(rng.random() for _ in range(n)), bool(seed % 2))


def test_rankings_writer_makes_no_dict_and_no_second_table_with_the_bytes_of_one_write(monkeypatch, tmp_path):
    """The writer builds each column whole from the records: no row becomes a dict and no batch table is made
    to be joined (batches + their joined copy held the table twice; seen red with the writer of e529784,
    dicts 4,096 rows at a time), and the file is byte for byte the one write of every row, sorted."""
    import pyarrow as pa

    from factatlas import tables as T

    class Counted:
        def __getattr__(self, name):
            return getattr(pa, name)

        def concat_tables(self, tables, **kwargs):
            made.append(("concat_tables", len(tables)))
            return pa.concat_tables(tables, **kwargs)

        class Table:
            @staticmethod
            def from_pylist(rows, schema=None):
                made.append(("from_pylist", len(rows)))
                return pa.Table.from_pylist(rows, schema=schema)

            empty_table = pa.Table.from_pylist

    made: list[tuple[str, int]] = []
    rows = [ranking(f"p{i:02d}", 2_000, i) for i in (6, 3, 0, 5, 1, 4, 2)]
    whole = T.write_table(tmp_path / "whole.parquet", [T.probe_result_to_row(r) for r in rows], T.RANKINGS_SCHEMA,
                          sort_by=("prompt_id",))
    monkeypatch.setattr(T, "pa", Counted())
    monkeypatch.setattr(T, "probe_result_to_row", lambda r: made.append(("dict", 1)))
    batched = T.write_probe_results(tmp_path / "batched.parquet", rows)
    assert made == []
    assert batched.read_bytes() == whole.read_bytes()
    assert [r.prompt_id for r in T.read_probe_results(batched)] == [f"p{i:02d}" for i in range(7)]


def test_rankings_longer_than_a_row_group_are_written_a_row_group_at_a_time_and_read_back_equal(monkeypatch,
                                                                                               tmp_path):
    """A rankings file of more than ``PROBE_ROW_GROUP`` rows is row groups of that many rows (the last one the
    rest), each made and written in turn: no table the writer makes holds more than a group (seen red with
    the writer of 1becc2a, the whole table written once), and it reads back equal, row for row, to the one
    write of every row sorted by prompt_id."""
    import pyarrow.parquet as pq

    from factatlas import tables as T

    rows = [ranking(f"p{i:02d}", 30, i) for i in (9, 3, 0, 10, 5, 1, 8, 4, 2, 7, 6)]
    whole = T.write_table(tmp_path / "whole.parquet", [T.probe_result_to_row(r) for r in rows], T.RANKINGS_SCHEMA,
                          sort_by=("prompt_id",))
    monkeypatch.setattr(T, "PROBE_ROW_GROUP", 3)
    monkeypatch.setattr(T, "PROBE_WRITE_BATCH", 2)
    tables = []
    made = T.pa.table

    def watched(*args, **kwargs):
        tables.append(made(*args, **kwargs))
        return tables[-1]

    monkeypatch.setattr(T.pa, "table", watched)
    grouped = T.write_probe_results(tmp_path / "grouped.parquet", rows)
    meta = pq.ParquetFile(grouped).metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [3, 3, 3, 2]
    assert tables and max(t.num_rows for t in tables) <= 3
    assert pq.read_table(grouped).equals(pq.read_table(whole))
    assert T.read_probe_results(grouped) == T.read_probe_results(whole) == sorted(rows, key=lambda r: r.prompt_id)


def test_metrics_of_a_rankings_file_equal_those_of_its_records(built, tmp_path):
    """The streamed reading (prompt ids, then records a batch at a time) gives exactly the metrics of the
    records in memory, and names its rows in the error when none matches."""
    from factatlas.benchmark import Benchmark
    from factatlas.probe.evaluate import MetricsConfig, MetricsError, compute_metrics
    from factatlas.records import ProbeResult
    from factatlas.tables import ProbeResultsFile, write_probe_results

    bench = Benchmark.open(built / "build")
    rows = [ProbeResult("m", "mlm", p.prompt_id, p.fact_id, p.lang, p.template_id, p.culture, p.predicate,
                        tuple(reversed(p.candidate_qids)) if i % 3 else p.candidate_qids,
                        tuple(float(-k) for k in range(len(p.candidate_qids))), False)
            for i, p in enumerate(p for batch in bench.iter_prompts() for p in batch if p.kind == "cloze")]
    path = write_probe_results(tmp_path / "rankings.parquet", rows)
    config = MetricsConfig(bootstrap=20)
    in_memory = compute_metrics(rows, bench, config, template_only_rows=rows[::2])
    streamed = compute_metrics(ProbeResultsFile(path), bench, config,
                               template_only_rows=ProbeResultsFile(write_probe_results(tmp_path / "t.parquet", rows[::2])))
    assert streamed == in_memory
    assert streamed["coverage"]["rows"] == len(rows)
    foreign = write_probe_results(tmp_path / "foreign.parquet", [ranking("nowhere", 3, 1)])
    with pytest.raises(MetricsError, match="none of the 1 rankings rows"):
        compute_metrics(ProbeResultsFile(foreign), bench, config)


def test_prompt_records_share_their_repeated_strings_within_a_row_group(built):
    """A fact's prompts are adjacent in prompt_id order and the short columns have a handful of values: one
    string object per distinct value of a row group (seen red with every row's own strings), the records
    equal to the rows."""
    from factatlas.benchmark import Benchmark
    from factatlas.tables import prompt_from_row

    bench = Benchmark.open(built / "build")
    batches = list(bench.iter_prompts())
    for batch in batches:
        for name in B.SHARED_STRING_COLUMNS:
            values = [getattr(p, name) for p in batch]
            assert len({id(v) for v in values}) == len(set(values)), name
    rows = pq.read_table(built / "build" / "prompts.parquet").to_pylist()
    assert [p for batch in batches for p in batch] == [prompt_from_row(r) for r in rows]


def cloze_rankings(bench):
    """A ranking of every cloze prompt (reversed candidates for two in three, so some are right)."""
    from factatlas.records import ProbeResult

    return [ProbeResult("m", "mlm", p.prompt_id, p.fact_id, p.lang, p.template_id, p.culture, p.predicate,
                        tuple(reversed(p.candidate_qids)) if i % 3 else p.candidate_qids,
                        tuple(float(-k) for k in range(len(p.candidate_qids))), False)
            for i, p in enumerate(p for batch in bench.iter_prompts() for p in batch if p.kind == "cloze")]


def test_the_join_of_the_ranked_prompts_as_it_reads_them_equals_the_join_of_their_records(built):
    """``join_prompts`` leaves out what the join never reads (text, candidate forms, all but the first gold
    form): the join's records and counts are those of the full records, the subword counts and the rows it
    refuses included (seen red with the gold forms left out too: every gold_subwords became None)."""
    from factatlas.benchmark import Benchmark
    from factatlas.probe.aggregate import join, join_prompts

    bench = Benchmark.open(built / "build")
    rows = cloze_rankings(bench)
    bad = rows[1]  # ranks one candidate short: foreign candidates
    rows[1] = type(bad)(*[getattr(bad, f) for f in bad.__slots__][:8], bad.ranked_qids[:-1], bad.scores[:-1], False)
    rows += [rows[0], ranking("nowhere", 3, 1)]  # a duplicate and an unknown prompt
    ids = {r.prompt_id for r in rows}
    slim = join_prompts(bench, ids)
    full = bench.prompts_with_ids(ids)
    assert slim.keys() == full.keys() and len(slim) == len(rows) - 2
    assert all(p.text == "" and p.candidate_forms == () for p in slim.values())

    def tokenize(text):
        return text.split()

    a = join(rows, slim, model="m", facts=bench.facts_by_id, tokenize=tokenize)
    b = join(rows, full, model="m", facts=bench.facts_by_id, tokenize=tokenize)
    assert a.scored == b.scored and a.counts == b.counts
    assert (a.counts["unknown_prompt"], a.counts["duplicate_prompt"], a.counts["foreign_candidates"]) == (1, 1, 1)
    assert any(s.gold_subwords for s in a.scored)


def test_the_join_holds_one_fact_s_golds_and_sorts_only_rankings_out_of_order(built, monkeypatch):
    """Rankings in prompt_id order keep a fact's prompts together: the join's shared golds are those of the
    fact at hand (seen red, 1 -> every fact's, with a cache of every fact), and its results need no sort
    (``ascending``); rankings out of order are sorted, to the same results and counts."""
    from factatlas.benchmark import Benchmark
    from factatlas.probe import aggregate as A
    from factatlas.probe.analysis.records import join_results

    bench = Benchmark.open(built / "build")
    rows = cloze_rankings(bench)
    assert [r.prompt_id for r in rows] == sorted(r.prompt_id for r in rows)
    shared, held = A._shared_golds, []

    def watched(cache, prompt, facts):
        made = shared(cache, prompt, facts)
        held.append(len({fact for fact, _golds in cache}))
        return made

    monkeypatch.setattr(A, "_shared_golds", watched)
    facts = bench.facts_by_id
    in_order = A.join(rows, bench.prompts_by_id, model="m", facts=facts)
    assert in_order.ascending and max(held) == 1 and len({r.fact_id for r in rows}) == 6
    shuffled = A.join(rows[::-1], bench.prompts_by_id, model="m", facts=facts)
    assert not shuffled.ascending and list(shuffled.scored) == list(in_order.scored)[::-1]
    a = join_results("m", rows, bench.prompts_by_id, facts)
    b = join_results("m", rows[::-1], bench.prompts_by_id, facts)
    assert list(a.results) == list(b.results) == list(in_order.scored) and a.skipped == b.skipped


def test_the_analyses_join_the_rankings_a_batch_at_a_time(grouped, tmp_path, monkeypatch):
    """The analyses' adapter (``read_model_results``) streams the rankings into the join: the rankings records
    alive during the join are a batch or two (``PROBE_RESULT_BATCH`` = 2 here), and the prompts alive are a
    row group or two (``GROUP_ROWS`` = 2 here: the rankings ascend, so the prompts stream beside them); its
    results are those of the records read whole (seen red with the adapter of cac2a06, which read every
    ranking and every ranked prompt's record before the join, and with the ranked prompts held by id,
    ``join_prompts``, in place of the stream: 12 prompts alive)."""
    from factatlas import tables as T
    from factatlas.benchmark import Benchmark
    from factatlas.probe.analysis import records as R

    bench = Benchmark.open(grouped / "build")
    rows = cloze_rankings(bench)
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    T.write_probe_results(model_dir / "rankings.parquet", rows)
    expected = R.join_results("m", rows, bench.prompts_with_ids({r.prompt_id for r in rows}), bench.facts_by_id)
    del rows


    monkeypatch.setattr(T, "PROBE_RESULT_BATCH", 2)
    seen = {"results": live_results(), "prompts": live_prompts(), "held": 0, "full": 0, "rows": 0}
    join = R.join

    def sampled(rankings, *args, **kwargs):
        def watched():
            for i, r in enumerate(rankings):
                if i % 2 == 1:
                    seen["held"] = max(seen["held"], live_results() - seen["results"])
                    seen["full"] = max(seen["full"], live_prompts() - seen["prompts"])
                seen["rows"] += 1
                yield r

        return join(watched(), *args, **kwargs)

    monkeypatch.setattr(R, "join", sampled)
    got = R.read_model_results(grouped, model_dir, Benchmark.open(grouped / "build"), with_tokenizer=False)
    assert seen["rows"] == len(expected.results) >= 10
    assert seen["held"] <= 2 * 2 + 1
    assert seen["full"] <= 2 * GROUP_ROWS
    assert got.results == expected.results and got.skipped == expected.skipped


class HashScorer:
    """Scores a candidate by a hash of (text, form), with ties (one score in five is 0.0)."""

    scoring = "fake"

    def score(self, queries):
        import zlib

        return [[0.0 if zlib.crc32(f"{q.text}|{f}".encode()) % 5 == 0 else -(zlib.crc32(f"{q.text}|{f}".encode()) % 97)
                 for f in q.forms] for q in queries]


def test_the_probe_holds_its_rankings_as_columns_and_writes_them_a_batch_of_records_at_a_time(built, monkeypatch,
                                                                                             tmp_path):
    """``ranked_rows`` (the probe's scoring) keeps no ``ProbeResult`` alive, only columns (seen red with the
    list of records of cac2a06's ``rank_prompts``); its rows are the records ``ranking_row`` makes from
    ``rank_candidates`` (ties included), and the writer reads them ``PROBE_WRITE_BATCH`` at a time into the
    bytes of the records' one write."""
    from factatlas import tables as T
    from factatlas.benchmark import Benchmark
    from factatlas.probe.protocol import rank_candidates
    from factatlas.probe.ranking import ranked_rows, ranking_row

    bench = Benchmark.open(built / "build")
    prompts = [p for batch in bench.iter_prompts() for p in batch if p.kind == "cloze"][::-1]
    texts = [p.text for p in prompts]
    texts[1] = texts[0]  # two prompts sharing a query
    before = live_results()
    rows = ranked_rows(HashScorer(), prompts, texts, "m", chunk=3)
    assert live_results() - before == 0 and len(rows) == len(prompts) >= 10
    scores = HashScorer().score([type("Q", (), {"text": t, "forms": p.candidate_forms})() for p, t in
                                 zip(prompts, texts, strict=True)])
    expected = []
    for p, s in zip(prompts, scores, strict=True):
        ranked, ordered = rank_candidates(p.candidate_qids, s)
        expected.append(ranking_row(p, "m", "fake", ranked, ordered, bool(ranked) and ranked[0] in set(p.gold_qids)))
    assert list(rows) == expected and rows[-1] == expected[-1] and rows[2:4] == expected[2:4]
    assert any(r.correct_at_1 for r in expected) and any(len(set(r.scores)) < len(r.scores) for r in expected)

    class Watched(list):
        """The rows as the writer reads them, counting the records alive at each read."""

        def __getitem__(self, i):
            held[0] = max(held[0], live_results() - held[1])
            return rows[i]

        def prompt_ids(self):
            return rows.prompt_ids()

    held = [0, live_results()]  # the most alive at a read, less those alive before (``expected``'s)
    monkeypatch.setattr(T, "PROBE_WRITE_BATCH", 2)
    written = T.write_probe_results(tmp_path / "rows.parquet", Watched(range(len(rows))))
    assert held[0] <= 2 + 1
    assert written.read_bytes() == T.write_probe_results(tmp_path / "records.parquet", expected).read_bytes()


def test_the_probe_s_selection_holds_no_prompt_record_per_selected_row(grouped, reads):
    """The probe's selection is columns (``SelectedPrompts``, the fields a ranking probe reads): selecting one
    language, choosing the work, the template-only inputs and ranking both read the columns and make no
    ``Prompt`` record (seen red, every selected row alive, with the list of records of 1becc2a's
    ``select_prompts``); the rankings are those of the records; a selection of every field makes its records
    a row group at a time."""
    from collections import Counter
    from types import SimpleNamespace

    from factatlas.benchmark import Benchmark
    from factatlas.probe.probing import SCORED_FIELDS, select_work
    from factatlas.probe.ranking import ranked_rows
    from factatlas.probe.selection import prompt_fields, select_prompts
    from factatlas.probe.template_only import template_only_inputs

    rule = SimpleNamespace(prompts="cloze", name="fake")
    before = live_prompts()
    selected = select_prompts(Benchmark.open(grouped / "build"), ("en",), None, SCORED_FIELDS)  # a ranking probe's
    work = select_work(selected, rule, counts := Counter())
    kept, texts = template_only_inputs(work, Counter())
    rows = ranked_rows(HashScorer(), work, [t for (t,) in prompt_fields(work, "text")], "m", chunk=3)
    baseline = ranked_rows(HashScorer(), kept, texts, "m")
    assert live_prompts() - before == 0 and reads["decoded"] == []
    assert len(selected) == rows_of(grouped, "en") > 4 * GROUP_ROWS and len(kept) > 2 * GROUP_ROWS

    def same(view, prompts):
        return list(view.fields(*SCORED_FIELDS)) == [tuple(getattr(p, n) for n in SCORED_FIELDS) for p in prompts]

    records = [p for p in Benchmark.open(grouped / "build").prompts if p.lang == "en"]
    assert same(selected, records)
    with pytest.raises(ValueError, match="a record needs every field"):
        selected[0]
    assert select_prompts(Benchmark.open(grouped / "build"), ("en",), None) == records  # every field: records
    work_records = select_work(records, rule, expected_counts := Counter())
    assert same(work, work_records) and counts == expected_counts and len(work) < len(selected)
    kept_records, expected_texts = template_only_inputs(work_records, Counter())
    assert same(kept, kept_records) and texts == expected_texts
    assert list(rows) == list(ranked_rows(HashScorer(), work_records, [p.text for p in work_records], "m", chunk=3))
    assert list(baseline) == list(ranked_rows(HashScorer(), kept_records, expected_texts, "m"))
    middle = kept_records[len(kept) // 2]
    del records, work_records, kept_records
    gc.collect()
    reads["before"] = live_prompts() - 1
    kept = template_only_inputs(select_work(select_prompts(Benchmark.open(grouped / "build"), ("en",), None), rule,
                                            Counter()), Counter())[0]
    assert sum(1 for _ in kept) == len(kept) and kept[len(kept) // 2] == middle
    assert reads["alive"] <= 2 * GROUP_ROWS


def live_facts() -> int:
    from factatlas.records import Fact

    return sum(type(o) is Fact for o in gc.get_objects())


def test_the_analyses_read_the_facts_as_columns_a_batch_of_records_at_a_time(built, monkeypatch):
    """``FactTable`` (the analyses' facts, ``benchmark_facts``) holds no ``Fact`` per fact: made, it holds none;
    read whole (``values()``) or by id in fact_id order, at most a batch is alive (seen red, every fact
    alive, with ``benchmark_facts`` returning 1becc2a's ``facts_by_id``); its records are ``read_facts``'s."""
    from factatlas import tables as T
    from factatlas.benchmark import Benchmark
    from factatlas.probe.analysis.records import benchmark_facts

    monkeypatch.setattr(T, "FACT_BATCH", 2)
    expected = {f.id: f for f in T.read_facts(built / "build" / "facts.parquet")}
    assert len(expected) > 2 * 2
    before = live_facts()
    facts = benchmark_facts(Benchmark.open(built / "build"))
    assert live_facts() - before == 0
    alive = 0
    for f in facts.values():
        alive = max(alive, live_facts() - before)
        assert f == expected[f.id]
    for fact_id in sorted(expected):
        alive = max(alive, live_facts() - before)
        assert facts[fact_id] == expected[fact_id] and facts.get(fact_id) == expected[fact_id]
    assert alive <= 2 * 2
    assert list(facts) == list(expected) and len(facts.values()) == len(expected) and "x" not in facts


def test_the_popularity_buckets_keep_three_fields_of_each_fact_not_its_record(built, monkeypatch):
    """The popularity section's buckets walk the facts once (``FactTable`` makes them a batch at a time) and
    keep a fact's id, predicate and popularity: at most a batch of ``Fact`` records is alive (seen red with
    the facts listed whole, the report's peak at a million prompts); the buckets are those of the records."""
    from factatlas import tables as T
    from factatlas.benchmark import Benchmark
    from factatlas.popbuckets import popularity_buckets
    from factatlas.probe.analysis import popularity as Pop
    from factatlas.probe.analysis.records import benchmark_facts

    monkeypatch.setattr(T, "FACT_BATCH", 2)
    expected = T.read_facts(built / "build" / "facts.parquet")
    assert len(expected) > 2 * 2
    facts = benchmark_facts(Benchmark.open(built / "build"))
    seen = {"alive": 0}
    before = live_facts()
    buckets = popularity_buckets

    def counted(rows, *args):
        seen["alive"] = max(seen["alive"], live_facts() - before)
        return buckets(rows, *args)

    monkeypatch.setattr(Pop, "popularity_buckets", counted)
    got, popularity = Pop.fact_buckets(facts.values())
    assert seen["alive"] <= 2
    assert got == popularity_buckets(expected) and popularity == {f.id: f.popularity for f in expected}


def test_publish_holds_one_row_group_of_a_shard(built, grouped, monkeypatch):
    """A shard is written a row group at a time: the rows held as Arrow columns never reach a shard's (seen
    red with the shard held whole), the row groups are every ``ROW_GROUP_ROWS`` rows of a shard, and the files
    do not depend on how the benchmark's row groups batched the rows."""
    import io

    from factatlas.publish import render as R
    from factatlas.release_input import read_release_input

    monkeypatch.setattr(R, "ROW_GROUP_ROWS", 5)
    held: list[int] = []
    add = R._Shards.add

    def watched(self, rows):
        add(self, rows)
        held.append(self.held)

    monkeypatch.setattr(R._Shards, "add", watched)
    files, configs = R.render_data(read_release_input(grouped), 12)
    assert held and max(held) < 5
    all_config = next(c for c in configs if c.lang is None)
    assert sum(n for _, _, n in all_config.splits) == rows_of(grouped)
    for _split, paths, n in all_config.splits:
        groups = []
        for path in paths:
            meta = pq.ParquetFile(io.BytesIO(files[path])).metadata
            groups.append([meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
        assert sum(map(sum, groups)) == n
        assert all(shard == [5, 5, 2] for shard in groups[:-1])  # 12 rows a shard, row groups of 5
        assert groups[-1] and all(g == 5 for g in groups[-1][:-1]) and 0 < groups[-1][-1] <= 5
    # the same rows batched by one big row group: the same bytes
    assert R.render_data(read_release_input(built), 12)[0] == files
    # and the content of shards of one row group each (the layout up to ec070aa): the same rows, paths, configs
    monkeypatch.setattr(R, "ROW_GROUP_ROWS", 100)
    whole, whole_configs = R.render_data(read_release_input(grouped), 12)
    assert whole_configs == configs and sorted(whole) == sorted(files)
    for path, data in files.items():
        one = pq.ParquetFile(io.BytesIO(whole[path]))
        assert one.num_row_groups == 1 and one.read().equals(pq.read_table(io.BytesIO(data)))


# ---- the scored prompts as columns: the metrics and the analyses hold no record per prompt ----------------

@pytest.fixture
def scored_records(monkeypatch):
    """``ScoredPrompt`` records made and alive (most at once) while the fixture holds; a record is made on
    read from the columns (``factatlas.probe.scored``), two rows at a time here (``CHUNK`` = 2)."""
    from factatlas.probe import scored as S
    from factatlas.records import ScoredPrompt

    seen = {"made": 0, "live": 0, "peak": 0}
    init = ScoredPrompt.__init__

    def counted(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen["made"] += 1
        seen["live"] += 1
        seen["peak"] = max(seen["peak"], seen["live"])

    def finalized(self):
        seen["live"] -= 1

    monkeypatch.setattr(ScoredPrompt, "__init__", counted)
    monkeypatch.setattr(ScoredPrompt, "__del__", finalized, raising=False)
    monkeypatch.setattr(S, "CHUNK", 2)
    return seen


@pytest.mark.slow
def test_the_metrics_and_the_analyses_hold_no_scored_record_per_prompt(built, tmp_path, scored_records):
    """The join writes columns (``ScoredColumns``) and every section reads them or a record at a time: the
    ``ScoredPrompt`` records alive at once while metrics.json and every analysis of ``compare`` are computed
    are a chunk or two (2 rows here), never a run's (seen red, 12 alive, with the join returning its
    records as a tuple, and with the analyses' adapter holding them as a tuple)."""
    from factatlas import tables as T
    from factatlas.benchmark import Benchmark
    from factatlas.probe.evaluate import compute_metrics

    bench = Benchmark.open(built / "build")
    rows = cloze_rankings(bench)
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    T.write_probe_results(model_dir / "rankings.parquet", rows)
    n = len(rows)
    del rows
    gc.collect()
    metrics = compute_metrics(T.ProbeResultsFile(model_dir / "rankings.parquet"), bench)
    assert metrics["coverage"]["used"] == n >= 10
    assert scored_records["peak"] <= 2 * 2, scored_records  # a chunk or two at most; the run has n
    scored_records.update(peak=0, made=0)
    res = factatlas("compare", built, "--models", model_dir, "--out", tmp_path / "compare", "--bootstrap", "10",
                    "--no-plots", "--split", "all")
    assert res.returncode == 0, res.stdout + res.stderr
    assert scored_records["made"] >= n  # the sections read records (made on read)
    assert scored_records["peak"] <= 2 * 2, scored_records


def test_the_probe_s_rankings_hold_one_byte_positions_widened_when_a_list_needs_more():
    """``RankedRows`` keeps a ranking as 1-byte candidate positions while the lists have under 256 candidates
    and widens them (2 bytes, then 4) when one needs more, with every row before and after the same (seen
    red with the widening dropped: an OverflowError on the 300-candidate list)."""
    from factatlas.probe.protocol import rank_candidates
    from factatlas.probe.ranking import RankedRows, ranking_row
    from factatlas.records import Prompt

    def prompt(n: int, k: int) -> Prompt:
        cands = tuple(f"Q{i}" for i in range(n))
        return Prompt(f"F{k}|en|t", f"F{k}", "en", "t", "cloze", "x [Y]", 2, "p", "west", "P17", "test", "Q5", "S",
                      (f"Q{n // 2}",), ((f"o{n // 2}",),), cands, cands, "reviewed")

    rows, expected = RankedRows("m", "fake"), []
    for k, n in enumerate((3, 300, 5, 40_000, 2)):
        p = prompt(n, k)
        scores = [float((i * 7919) % 101) for i in range(n)]
        rows.add([getattr(p, f) for f in ("prompt_id", "fact_id", "lang", "template_id", "culture", "predicate",
                                          "candidate_qids", "gold_qids")], rows.add_scores(scores))
        ranked, ordered = rank_candidates(p.candidate_qids, scores)
        expected.append(ranking_row(p, "m", "fake", ranked, ordered, ranked[0] in p.gold_qids))
        if k == 0:
            assert rows._order.typecode == "B"
    assert rows._order.typecode == "i" and list(rows) == expected
