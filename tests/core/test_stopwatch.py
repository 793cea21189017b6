"""The quickstart's account of where the time went: sections record only inside a recording, the table's
parts add up to their stage, and what no stage covered is shown, not hidden."""

from __future__ import annotations

import pytest

from factatlas.stopwatch import Stopwatch, recording, section, time_table


def _busy(seconds: float) -> None:
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_sections_record_only_while_recording_and_nest_by_name():
    with section("nowhere"):
        _busy(0.01)
    with recording(Stopwatch()) as watch:
        with section("probe"):
            with section("probe/score"):
                _busy(0.05)
            with section("probe/score"):  # a part entered twice adds up
                _busy(0.05)
        with pytest.raises(ValueError), section("report"):
            raise ValueError("a failing stage is still timed")
    with section("after"):
        pass
    assert list(watch.sections) == ["probe", "probe/score", "report"]
    probe_wall, probe_cpu = watch.sections["probe"]
    score_wall, score_cpu = watch.sections["probe/score"]
    assert 0.1 <= score_cpu <= probe_cpu and score_wall <= probe_wall


def test_time_table_exact_lines():
    watch = Stopwatch(sections={"probe": [10.0, 12.0], "probe/fine-tune": [4.0, 4.5], "probe/score": [3.0, 3.5],
                                "report": [2.0, 2.0], "orphan/part": [1.0, 1.0]}, collections=12, collector_cpu=0.72)
    assert time_table(watch, process_cpu=16.4) == [
        "where the time went                        CPU s   wall s",
        "probe                                       12.0     10.0",
        "  fine-tune                                  4.5      4.0",
        "  score                                      3.5      3.0",
        "  the rest                                   4.0      3.0",
        "report                                       2.0      2.0",
        "orphan/part                                  1.0      1.0",
        "outside the stages (start-up)                2.4",
        "process total                               16.4",
        "  of it: garbage collection                  0.7  (12 runs)",
    ]


def test_recording_counts_the_garbage_collector_and_lets_go_of_it():
    import gc

    # the young generations only: a full collection walks every object of the worker (2.7 CPU-s in the suite)
    with recording(Stopwatch()) as watch:
        gc.collect(1)
        gc.collect(0)
    assert watch.collections == 2 and watch.collector_cpu >= 0.0
    gc.collect(0)  # after the recording: no longer counted, and its callback is gone
    assert watch.collections == 2
    assert all(getattr(cb, "__qualname__", "").split(".")[0] != "recording" for cb in gc.callbacks)


def test_the_benchmark_script_reads_the_table_back(monkeypatch):
    """benchmarks/quickstart_time.py parses what ``time_table`` prints: stages, their parts as
    ``stage/part``, and the totals without a stage."""
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "quickstart_time.py"
    spec = importlib.util.spec_from_file_location("quickstart_time", script)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "quickstart_time", bench)  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    watch = Stopwatch(sections={"load libraries": [4.5, 3.4], "probe": [30.6, 11.3],
                                "probe/score": [13.3, 4.6], "report": [11.8, 3.9]}, collections=2, collector_cpu=0.3)
    printed = "── report ──\n   report: 11.8 s\n" + "\n".join(time_table(watch, process_cpu=22.7)) + "\n"
    assert bench.parse_table(printed) == {
        "load libraries": (3.4, 4.5), "probe": (11.3, 30.6), "probe/score": (4.6, 13.3),
        "probe/the rest": (6.7, 17.3), "report": (3.9, 11.8), "outside the stages (start-up)": (4.1, None),
        "process total": (22.7, None), "of it: garbage collection": (0.3, None)}
