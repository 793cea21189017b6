"""The peak memory of a command and every process it forks: the summed proportional set size (PSS) of the
process tree, sampled, beside ``wait4``'s ru_maxrss (the largest single process, exact).

A forked child's RSS counts the pages it shares with its parent, and the parent keeps the originals of the
pages the child writes, so neither process's own peak is the memory the command needs; the sum of PSS is (a
shared page counted once). Sampling can miss a short peak, and misses more when the sampler shares a core with
the command (``big_benchmark.py`` pins both to one): run this unpinned on an idle box to cross-check.

    python benchmarks/tree_peak.py --runs 3 -- python3 -m factatlas report RUN --model en --bootstrap 100

Each run prints ``tree PSS peak``, ``largest process`` and CPU; ``--copy-from DIR --to DIR`` copies a folder
before each run (a report rewrites its run's model folder).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux's /proc/PID/task/TID/children)."""
    out = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [q for c in f.read().split() for q in tree(int(c))]
    except OSError:
        pass
    return out


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def measure(argv: list[str], interval: float) -> tuple[float, float, float, int]:
    """(tree PSS peak MB, largest process MB, CPU s of the tree, exit status) of one run of ``argv``."""
    proc = subprocess.Popen(argv)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(interval):
            peak[0] = max(peak[0], sum(map(pss_kb, tree(proc.pid))))

    threading.Thread(target=sample, daemon=True).start()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return peak[0] / 1024, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--interval", type=float, default=0.02, help="seconds between samples")
    ap.add_argument("--copy-from", type=Path, help="copy this folder to --to before each run")
    ap.add_argument("--to", type=Path)
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = ap.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not argv:
        ap.error("no command: give it after --")
    if (args.copy_from is None) != (args.to is None):
        ap.error("--copy-from and --to go together")
    failed = 0
    for run in range(1, args.runs + 1):
        if args.copy_from is not None:
            shutil.rmtree(args.to, ignore_errors=True)
            shutil.copytree(args.copy_from, args.to, symlinks=True)
        start = time.perf_counter()
        tree_mb, largest_mb, cpu, rc = measure(argv, args.interval)
        failed |= rc != 0
        print(f"run {run}: tree PSS peak {tree_mb:.0f} MB, largest process {largest_mb:.0f} MB, CPU {cpu:.1f} s, "
              f"wall {time.perf_counter() - start:.1f} s, exit {rc}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
