"""benchmarks/curate_scaling.py's replay: the scales' rounds interleaved, the control at every scale in every
round, and the control's correction (issue 41 item 1: exponents robust to a changing load)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "curate_scaling.py"


@pytest.fixture(scope="module")
def scaling():
    spec = importlib.util.spec_from_file_location("curate_scaling", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Recorded:
    """An endpoint that answers nothing and notes (scale, query) of each query sent."""

    def __init__(self, scale: int, log: list):
        self.scale, self.log = scale, log

    def stream(self, query: str, sink) -> int:
        self.log.append((self.scale, query))
        return 0


def test_the_rounds_alternate_the_scales_and_time_the_control_at_each(scaling, monkeypatch):
    monkeypatch.setattr(scaling, "repeats_for", lambda first, least: 1)  # one pass per turn: the order is read
    log: list = []
    sides = [{"scale": s, "endpoint": Recorded(s, log), "pid": None} for s in (1, 30)]
    texts = {1: {"a": ["a1"], "b": ["b1", "b2"]}, 30: {"a": ["a30"], "b": ["b30"]}}
    out = scaling.replay(sides, texts, "control", rounds=2)
    calibration = [(1, "control"), (1, "a1"), (1, "b1"), (1, "b2"), (30, "control"), (30, "a30"), (30, "b30")]
    first = [(1, "control"), (30, "control"), (1, "a1"), (30, "a30"), (1, "b1"), (1, "b2"), (30, "b30")]
    second = [(30, "control"), (1, "control"), (30, "a30"), (1, "a1"), (30, "b30"), (1, "b1"), (1, "b2")]
    assert log == calibration + first + second
    assert sorted(out["kinds"]) == ["a", "b"] and sorted(out["control"]) == ["1", "30"]
    assert all(len(per["cpu_s"]) == len(per["wall_s"]) == 2 for kind in out["kinds"].values() for per in kind.values())
    assert all(len(c["cpu_s"]) == 2 for c in out["control"].values())


def test_the_control_takes_each_rounds_load_out(scaling):
    # the second round ran on a box twice as busy: the control says so, and the kind's cost is scaled back
    assert scaling.corrected([1.0, 2.2], [0.1, 0.2]) == pytest.approx([1.0, 1.1])
    assert scaling.growth_exponent(1.0, 30.0, 100, 3000, 0.0) == pytest.approx(1.0)


def test_without_a_replay_no_kind_is_judged(scaling, capsys):
    """--rounds 0 (a run for memory only) printed "every query kind at most 1.1" beside single-pass exponents
    of 1.18-1.25: kinds are judged on the replay, so without one the line says they were not judged."""
    def result(scale: int, cpu: float) -> dict:
        return {"scale": scale, "total_cpu_s": cpu, "rows": 1000 * scale, "facts": 100 * scale,
                "requests": 10 * scale, "describe_s": 0.1,
                "kinds": {"augment": {"queries": 2 * scale, "rows": 100 * scale, "cpu_s": 0.1 * scale ** 1.25}}}

    scaling.report("oxigraph", [result(1, 1.0), result(100, 200.0)], None)
    out = capsys.readouterr().out
    assert "kind augment" in out and "(exp  1.25)" in out
    assert "[oxigraph] query kinds not judged (1x -> 100x): no replay (--rounds 0)" in out
    assert "at most" not in out and "above" not in out
