"""Reading a probe's prompts: the whole table then `--langs`/`--shard` filtering (before) vs filtering while
reading (``Benchmark.prompts_where``: key columns first, only kept rows decoded).

Sides, interleaved and repeated in one process (process CPU time, min and median), each on a freshly
opened benchmark so no cache is shared: ``select_rows(Benchmark.open(b).prompts, ...)`` and
``select_prompts(Benchmark.open(b), ...)``. The two must return equal Prompt lists before any time is
printed. The default benchmark is BMLAMA-17 (113k prompts, 17 languages) imported from
``../shared/reference/bmlama`` into a temporary folder; ``--benchmark DIR`` takes any built one.

    python benchmarks/probe_read.py
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BMLAMA17 = next((p for p in (ROOT.parent / "shared" / "reference" / "bmlama" / "BMLAMA17",
                             ROOT.parents[1] / "shared" / "reference" / "bmlama" / "BMLAMA17") if p.exists()), None)
CASES = (("--langs en", ("en",), None), ("--langs en,fr", ("en", "fr"), None), ("--shard 0/8", None, (0, 8)),
         ("--langs en --shard 0/4", ("en",), (0, 4)))


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", type=Path, help="a built benchmark or run directory (default: BMLAMA-17)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    from factatlas.benchmark import Benchmark
    from factatlas.probe.runner import select_prompts, select_rows

    path = args.benchmark
    if path is None:
        if BMLAMA17 is None:
            print("BMLAMA-17 absent (../shared/reference/bmlama/BMLAMA17); pass --benchmark DIR", file=sys.stderr)
            return 2
        path = Path(tempfile.mkdtemp(prefix="probe-read-")) / "bmlama17"
        subprocess.run([sys.executable, "-m", "factatlas", "import", "bmlama", str(BMLAMA17), str(path)],
                       check=True, capture_output=True)
    total = Benchmark.open(path).prompt_count
    print(f"benchmark {path}: {total:,} prompts")
    for name, langs, shard in CASES:
        old = select_rows(Benchmark.open(path).prompts, langs, shard)
        new = select_prompts(Benchmark.open(path), langs, shard)
        if old != new:
            print(f"{name}: the selections differ ({len(old)} vs {len(new)} prompts); no time printed")
            return 1
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(args.repeats):
            times["before"].append(cpu(lambda langs=langs, shard=shard: select_rows(Benchmark.open(path).prompts, langs, shard))[0])
            times["after"].append(cpu(lambda langs=langs, shard=shard: select_prompts(Benchmark.open(path), langs, shard))[0])
        b, a = min(times["before"]), min(times["after"])
        print(f"{name:<24} {len(new):>7,} prompts  read+select before {b:6.2f} s (median "
              f"{statistics.median(times['before']):.2f})  after {a:6.2f} s (median "
              f"{statistics.median(times['after']):.2f})  ratio {b / a:5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
