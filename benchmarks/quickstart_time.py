"""The quickstart's time, stage by stage, beside the box's matmul rate; optionally against another commit.

Each run is a whole ``python -m factatlas quickstart`` process in a fresh temporary working directory.
Per stage it prints the process CPU and wall from the quickstart's own stopwatch table (min and median
over the runs), and for the whole process the CPU of the child (user + system, from ``getrusage`` of the
children: every thread and every process the quickstart starts, git included) and its wall time.

Beside them: the box's fp32 matrix-product rate, one thread, on a 2048-cubed product (best of 5, process
CPU, measured before and after the runs as ``benchmarks/probe_speed.py`` measures its peak), so that a
figure can be set against another machine's: about a third of the quickstart's CPU is matrix products
(fine-tuning and scoring), the rest is the interpreter (imports, tables, figures), which follows the
box's single-thread speed more than its matmul rate; ``--rate-elsewhere GFLOPS`` prints the total
scaled both ways as a range.

``--against REF`` checks REF out into a temporary git worktree and runs both sides interleaved (the order
alternating each round), then prints each stage's ratio REF / this tree on the mins. The box is shared:
use process CPU, the min of several interleaved runs, and run both sides at the same priority.

    python benchmarks/quickstart_time.py --runs 3
    python benchmarks/quickstart_time.py --runs 3 --against main
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEADER = "where the time went"
TOTAL_LABELS = ("process total", "outside the stages (start-up)")
ROW = re.compile(r"^(?P<label>.*?\S)\s+(?P<cpu>-?\d+\.\d)(?:\s+(?P<wall>-?\d+\.\d))?(?:\s+\(.*\))?$")
# the share of the quickstart's CPU that is matrix products (fine-tuning and scoring), for the scaling hint
MATMUL_SHARE = 0.35

MATMUL_CODE = """
import time, torch
torch.set_num_threads(1)
n = 2048
a, b = torch.randn(n, n), torch.randn(n, n)
a @ b
best = float("inf")
for _ in range(5):
    t0 = time.process_time()
    a @ b
    best = min(best, time.process_time() - t0)
print(2 * n**3 / best / 1e9)
"""


@dataclass(frozen=True)
class Run:
    """One quickstart process: its stopwatch rows (label -> (cpu, wall or None)) and its own totals."""

    rows: dict[str, tuple[float, float | None]]
    child_cpu: float
    wall: float


@dataclass
class Side:
    name: str
    root: Path
    runs: list[Run] = field(default_factory=list)


def parse_table(stderr: str) -> dict[str, tuple[float, float | None]]:
    """The rows of the quickstart's "where the time went" table; a part is named ``stage/part``."""
    lines = stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(HEADER)), None)
    if start is None:
        raise ValueError("the quickstart printed no 'where the time went' table on stderr")
    rows: dict[str, tuple[float, float | None]] = {}
    stage = ""
    for line in lines[start + 1:]:
        match = ROW.match(line.rstrip())
        if not match:
            continue
        label = match["label"].strip()
        wall = float(match["wall"]) if match["wall"] else None
        if line.startswith("  ") and stage:
            label = f"{stage}/{label}"
        else:
            stage = "" if label in TOTAL_LABELS else label
        rows[label] = (float(match["cpu"]), wall)
    return rows


def run_once(root: Path, python: str) -> Run:
    with tempfile.TemporaryDirectory(prefix="quickstart-time-") as cwd:
        env = dict(os.environ, PYTHONPATH=str(root))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run([python, "-m", "factatlas", "quickstart"], cwd=cwd, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"error: the quickstart in {root} exited {done.returncode}:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(parse_table(done.stderr), cpu, wall)


def matmul_rate(python: str) -> float:
    """GFLOP/s of one fp32 2048-cubed product on one thread (best of 5, process CPU)."""
    out = subprocess.run([python, "-c", MATMUL_CODE], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def fmt(values: list[float]) -> str:
    return f"{min(values):7.1f} {statistics.median(values):7.1f}"


def print_side(side: Side) -> None:
    print(f"\n{side.name} ({side.root}), {len(side.runs)} runs: min and median")
    print(f"{'stage':<40}{'CPU min':>8}{'med':>8}{'wall min':>10}{'med':>8}")
    labels = list(dict.fromkeys(label for run in side.runs for label in run.rows))
    for label in labels:
        cpus = [run.rows[label][0] for run in side.runs if label in run.rows]
        walls = [w for run in side.runs if label in run.rows and (w := run.rows[label][1]) is not None]
        shown = "  " + label.split("/", 1)[1] if "/" in label else label
        print(f"{shown:<40}{fmt(cpus)}" + (f"  {fmt(walls)}" if walls else ""))
    print(f"{'whole process (rusage, children)':<40}{fmt([r.child_cpu for r in side.runs])}"
          f"  {fmt([r.wall for r in side.runs])}")


def print_ratios(ours: Side, ref: Side) -> None:
    print(f"\nratio {ref.name} / {ours.name} (mins; above 1: this tree uses less)")
    print(f"{'stage':<40}{'CPU':>8}{'wall':>8}")
    for label in ours.runs[0].rows:
        if not all(label in r.rows for r in ref.runs + ours.runs):
            continue
        a = min(r.rows[label][0] for r in ref.runs)
        b = min(r.rows[label][0] for r in ours.runs)
        walls_a = [r.rows[label][1] for r in ref.runs if r.rows[label][1] is not None]
        walls_b = [r.rows[label][1] for r in ours.runs if r.rows[label][1] is not None]
        wall = f"{min(walls_a) / min(walls_b):8.2f}" if walls_a and walls_b and min(walls_b) > 0 else ""
        cpu = f"{a / b:8.2f}" if b > 0 else f"{'-':>8}"
        shown = "  " + label.split("/", 1)[1] if "/" in label else label
        print(f"{shown:<40}{cpu}{wall}")
    a, b = min(r.child_cpu for r in ref.runs), min(r.child_cpu for r in ours.runs)
    wa, wb = min(r.wall for r in ref.runs), min(r.wall for r in ours.runs)
    print(f"{'whole process (rusage, children)':<40}{a / b:8.2f}{wa / wb:8.2f}")
    print(f"RATIO quickstart process CPU {ref.name} / {ours.name}: {a:.1f} s / {b:.1f} s = {a / b:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="quickstart processes per side (default 3)")
    ap.add_argument("--against", metavar="REF", help="a git ref to time interleaved with this tree")
    ap.add_argument("--rate-elsewhere", type=float, metavar="GFLOPS",
                    help="another box's one-thread 2048^3 fp32 rate: print this tree's total scaled to it")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()

    print(f"# quickstart_time: {args.runs} runs per side, {os.cpu_count()} CPUs, load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()), file=sys.stderr)
    rates = [matmul_rate(args.python)]
    ours = Side("this tree", REPO)
    sides = [ours]
    worktree = None
    if args.against:
        worktree = Path(tempfile.mkdtemp(prefix="quickstart-ref-")) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), args.against],
                       check=True, capture_output=True)
        sides.append(Side(args.against, worktree))
    try:
        for i in range(args.runs):
            for side in sides if i % 2 == 0 else sides[::-1]:
                run = run_once(side.root, args.python)
                side.runs.append(run)
                print(f"# run {i + 1}/{args.runs} {side.name}: {run.child_cpu:.1f} s CPU, {run.wall:.1f} s wall",
                      file=sys.stderr)
    finally:
        if worktree is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)],
                           capture_output=True)
            shutil.rmtree(worktree.parent, ignore_errors=True)
    rates.append(matmul_rate(args.python))

    print(f"MATMUL fp32 2048^3, one thread: {min(rates):.1f}-{max(rates):.1f} GFLOP/s (before and after the runs)")
    for side in sides:
        print_side(side)
    if len(sides) == 2:
        print_ratios(ours, sides[1])
    best = min(r.child_cpu for r in ours.runs)
    rate = max(rates)
    print(f"\nTOTAL this tree: {best:.1f} s process CPU (min of {len(ours.runs)}) at {rate:.1f} GFLOP/s one-thread fp32")
    if args.rate_elsewhere:
        only_matmul = best * (MATMUL_SHARE * rate / args.rate_elsewhere + 1 - MATMUL_SHARE)
        all_matmul = best * rate / args.rate_elsewhere
        lo, hi = sorted((only_matmul, all_matmul))
        print(f"SCALED to {args.rate_elsewhere:.1f} GFLOP/s: about {lo:.1f}-{hi:.1f} s (the matrix products "
              f"alone scaled, or everything scaled)")


if __name__ == "__main__":
    main()
