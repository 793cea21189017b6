"""CPU of `factatlas build` on the shipped pairs in every shipped language: this tree against a git ref.

Each pair is curated once (this tree's curate, into a temporary folder); then, round by round, both sides
build a fresh copy of that curated run as child processes (``python3 -m factatlas build RUN --langs ...``,
the ref checked out into a temporary git worktree, as ``big_benchmark.py --against`` does), in alternating
order so that a change of load hits both. A child's CPU is its user + system time from ``wait4``. The
sha256 of every file under each build/ must be the same on both sides and in every round, else the
script exits 1 before printing a ratio. The box's one-thread matmul rate (``quickstart_time.MATMUL_CODE``)
and the load average are printed before and after.

    python benchmarks/build_speed.py --against cac2a06                 # arab-west, 2 rounds
    python benchmarks/build_speed.py --against cac2a06 --pairs arab-west,asia-west,south-america-west
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(ROOT))
from big_benchmark import LAUNCHER, add_ref_tree, matmul_rate, remove_ref_tree, run_launched  # noqa: E402  (the launcher: the command's peak RSS and CPU)


def run_child(argv: list[str], tree: Path) -> tuple[float, float]:
    """(CPU seconds, peak MB) of ``factatlas *argv`` run with ``tree`` first on the path; exits on failure."""
    peak_kb, cpu, _tree_kb = run_launched(LAUNCHER, argv, tree, tree, dict(os.environ, PYTHONPATH=str(tree)))
    return float(cpu), int(peak_kb) / 1024


def digests(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``folder``."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    from tests.langs import SHIPPED_LANGS

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", required=True, help="git ref of the old build (a temporary worktree)")
    ap.add_argument("--pairs", default="arab-west", help="comma-separated shipped pairs (curate/pairs.yaml)")
    ap.add_argument("--langs", default=",".join(SHIPPED_LANGS), help="default: every shipped language")
    ap.add_argument("--rounds", type=int, default=2, help="builds per side and pair")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    pairs = [p for p in args.pairs.split(",") if p]
    # a terminated run leaves through ``finally``: the temporary worktree is removed
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    work = Path(tempfile.mkdtemp(prefix="build-speed-"))
    worktree = work / "ref"
    try:
        add_ref_tree(args.against, worktree)
        sides = {args.against: worktree, "this tree": ROOT}
        print(f"machine: {os.cpu_count()} cores; load {load()}; one-thread fp32 matmul {matmul_rate():.1f} GFLOP/s")
        cpu: dict[tuple[str, str], list[float]] = {}
        peak: dict[tuple[str, str], list[float]] = {}
        for pair in pairs:
            curated = work / "curated" / pair
            run_child(["curate", str(curated), "--pair", pair, "--langs", args.langs], ROOT)
            seen: dict[str, str] | None = None
            for round_ in range(args.rounds):
                order = list(sides.items()) if round_ % 2 == 0 else list(sides.items())[::-1]
                for name, tree in order:
                    run = work / "runs" / pair  # one path for both sides: benchmark.json records the run's name
                    shutil.copytree(curated, run)
                    seconds, mb = run_child(["build", str(run), "--langs", args.langs], tree)
                    files = digests(run / "build")
                    if seen is None:
                        seen = files
                    elif files != seen:
                        differ = sorted(k for k in seen.keys() | files.keys() if seen.get(k) != files.get(k))
                        print(f"error: {pair}: the build of {name} (round {round_ + 1}) differs in {differ}")
                        return 1
                    cpu.setdefault((pair, name), []).append(seconds)
                    peak.setdefault((pair, name), []).append(mb)
                    shutil.rmtree(run)
            print(f"{pair}: {len(seen or {})} files under build/, sha256 equal on both sides in all {args.rounds} "
                  "rounds")
        print(f"\n{'pair':20} {'side':12} {'CPU s min':>9} {'median':>7} {'peak MB':>8}")
        for (pair, name), values in cpu.items():
            print(f"{pair:20} {name[:12]:12} {min(values):9.2f} {statistics.median(values):7.2f} "
                  f"{max(peak[pair, name]):8.0f}")
        for pair in pairs:
            old, new = cpu[pair, args.against], cpu[pair, "this tree"]
            print(f"{pair}: {args.against} / this tree = {min(old) / min(new):.2f}x (min), "
                  f"{statistics.median(old) / statistics.median(new):.2f}x (median)")
        old_total = sum(min(cpu[p, args.against]) for p in pairs)
        new_total = sum(min(cpu[p, "this tree"]) for p in pairs)
        print(f"all pairs: {old_total:.1f} -> {new_total:.1f} CPU s, {old_total / new_total:.2f}x")
        print(f"after: load {load()}; one-thread fp32 matmul {matmul_rate():.1f} GFLOP/s")
        return 0
    finally:
        remove_ref_tree(worktree)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
