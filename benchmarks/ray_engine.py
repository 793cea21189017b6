"""Wall and CPU of ``factatlas probe --engine ray`` (a local loopback Ray, CPU actors): this tree against a
git ref, on the test suite's inputs (the capitals benchmark and the tiny GPT-2 of tests/probe/conftest.py,
built once by this tree).

Each side runs the same command as tests/probe/test_ray_engine.py (``--ray-cpus 2 --ray-actors 2
--ray-shards 4``) as a child process, the ref checked out into a temporary git worktree, in alternating order
round by round so that a change of load hits both. The child is started by a launcher that makes itself
the child subreaper (``PR_SET_CHILD_SUBREAPER``): Ray's processes (gcs, raylet, the actor workers) that the
driver does not wait for are re-parented to it and reaped by it, so the CPU printed is that of every
process the probe started. Wall is until the driver exits. The rankings of every run (prompt order,
``ranked_qids``, ``correct_at_1``, scores) must equal those of the single-process run, else the script
exits 1 before printing a ratio.

    python benchmarks/ray_engine.py --against f880369            # 2 rounds
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from big_benchmark import add_ref_tree, remove_ref_tree, run_launched  # noqa: E402  (a launcher's usage fields, or the command's error)

# the launcher: child subreaper, runs factatlas, then reaps every descendant; writes "CPU-s wall-s"
LAUNCHER = """
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "factatlas", *sys.argv[2:]])
cpu, wall, code = 0.0, None, None
while True:
    try:
        got, status, usage = os.wait4(-1, 0)
    except ChildProcessError:
        break
    cpu += usage.ru_utime + usage.ru_stime
    if got == pid:
        wall, code = time.perf_counter() - t0, os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as f:
    f.write(f"{cpu} {wall}")
sys.exit(code)
"""


def run_side(argv: list[str], tree: Path, tmp: Path) -> tuple[float, float]:
    """(CPU seconds of all processes, wall seconds of the driver) of ``factatlas *argv`` from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", TMPDIR=str(tmp))
    cpu, wall = run_launched(LAUNCHER, argv, tree, tree, env)
    return float(cpu), float(wall)


def rankings(folder: Path) -> list[tuple]:
    from factatlas.tables import RANKINGS_SCHEMA, read_rows

    return [(r["prompt_id"], tuple(r["ranked_qids"]), r["correct_at_1"], tuple(round(s, 5) for s in r["scores"]))
            for name in ("rankings.parquet", "rankings_template_only.parquet")
            for r in read_rows(folder / name, RANKINGS_SCHEMA)]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    from tests.probe.probe_capitals import capital_prompt_rows, prompts_of, question_examples, write_benchmark

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", required=True, help="git ref of the old engine (a temporary worktree)")
    ap.add_argument("--rounds", type=int, default=2, help="runs per side")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    work = Path(tempfile.mkdtemp(prefix="ray-engine-"))
    worktree = work / "ref"
    try:
        add_ref_tree(args.against, worktree)
        from factatlas.probe.tiny import make_tiny_model, tokenizer_texts, true_fact_examples

        rows = capital_prompt_rows()
        model = make_tiny_model(work / "model", "gpt2", tokenizer_texts(prompts_of(rows)),
                                examples=true_fact_examples(prompts_of(rows), splits=("train",))
                                + question_examples(rows), steps=300, vocab_size=300)
        run = work / "run"
        write_benchmark(run / "build", rows)
        common = ["probe", str(run), "--model", str(model), "--scoring", "causal-sum", "--device", "cpu"]
        run_side([*common, "--out-name", "single"], ROOT, work)
        single = rankings(run / "probe" / "single")
        sides = {args.against: worktree, "this tree": ROOT}
        print(f"machine: {os.cpu_count()} cores; load {load()}")
        cpu: dict[str, list[float]] = {}
        wall: dict[str, list[float]] = {}
        for round_ in range(args.rounds):
            order = list(sides.items()) if round_ % 2 == 0 else list(sides.items())[::-1]
            for name, tree in order:
                tmp = Path(tempfile.mkdtemp(prefix="fr-", dir="/tmp"))  # short: Ray's socket paths live under it
                seconds, took = run_side([*common, "--engine", "ray", "--ray-cpus", "2", "--ray-actors", "2",
                                          "--ray-shards", "4", "--out-name", "ray"], tree, tmp)
                if rankings(run / "probe" / "ray") != single:
                    print(f"error: the Ray run of {name} (round {round_ + 1}) differs from the single-process run")
                    return 1
                shutil.rmtree(run / "probe" / "ray")
                shutil.rmtree(tmp, ignore_errors=True)
                cpu.setdefault(name, []).append(seconds)
                wall.setdefault(name, []).append(took)
                print(f"round {round_ + 1} {name:12} {seconds:6.1f} CPU-s {took:6.1f} wall-s   load {load()}",
                      flush=True)
        print(f"rankings equal to the single-process run ({len(single)} rows) in every run")
        old, new = args.against, "this tree"
        print(f"CPU-s (all processes, median): {statistics.median(cpu[old]):.1f} -> "
              f"{statistics.median(cpu[new]):.1f}, {statistics.median(cpu[old]) / statistics.median(cpu[new]):.2f}x")
        print(f"wall-s (median): {statistics.median(wall[old]):.1f} -> {statistics.median(wall[new]):.1f}, "
              f"{statistics.median(wall[old]) / statistics.median(wall[new]):.2f}x")
        return 0
    finally:
        remove_ref_tree(worktree)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
