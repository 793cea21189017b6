"""Where the test suite's CPU goes, from the per-phase log that tests/conftest.py writes under
FACTATLAS_TEST_CPU_LOG=PREFIX (one file per xdist worker): CPU seconds (the worker's own and its reaped
children's) and wall seconds, summed by test file and by test, largest first.

    FACTATLAS_TEST_CPU_LOG=/tmp/cpu python3 -m pytest -q && python3 benchmarks/suite_cpu.py /tmp/cpu
"""

from __future__ import annotations

import argparse
import glob
from collections import defaultdict

ORDER_HEADER = """\
# The order in which the xdist workers take test files (tests/conftest.py), longest first: a file runs
# whole on one worker (--dist loadfile), so a long file taken last is the suite's tail. Written by
# `python3 benchmarks/suite_cpu.py PREFIX --write-order tests/file_order.txt` from a measured run (wall
# seconds of the file, the suite's sum over its phases); a file not listed here is taken after these.
"""


def write_order(path: str, by_file: dict[str, list[float]]) -> None:
    ranked = sorted(by_file.items(), key=lambda kv: -kv[1][2])
    with open(path, "w", encoding="utf-8") as out:
        out.write(ORDER_HEADER)
        out.writelines(f"{name}\t{wall:.1f}\n" for name, (_, _, wall) in ranked if wall >= 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prefix", help="the FACTATLAS_TEST_CPU_LOG prefix the suite ran with")
    parser.add_argument("--top", type=int, default=40, help="how many files and tests to list (default 40)")
    parser.add_argument("--write-order", metavar="FILE", help="write the test files, longest wall first, to FILE "
                        "(tests/file_order.txt: the order in which the workers take files)")
    args = parser.parse_args()
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    by_test: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    paths = sorted(glob.glob(f"{args.prefix}.gw*") + glob.glob(f"{args.prefix}.main"))  # xdist workers, or -n 0
    if not paths:
        raise SystemExit(f"error: no log at {args.prefix}.gw* or {args.prefix}.main: run the suite with FACTATLAS_TEST_CPU_LOG={args.prefix}")
    for path in paths:
        with open(path, encoding="utf-8") as log:
            for line in log:
                nodeid, phase, own, kids, wall = line.rstrip("\n").split("\t")
                for table, key in ((by_file, nodeid.split("::")[0]), (by_test, f"{nodeid} [{phase}]")):
                    row = table[key]
                    row[0] += float(own)
                    row[1] += float(kids)
                    row[2] += float(wall)
    if args.write_order:
        write_order(args.write_order, by_file)
    total = [sum(r[i] for r in by_file.values()) for i in range(3)]
    print(f"{len(paths)} worker log(s): {total[0] + total[1]:.0f} CPU-s ({total[0]:.0f} in the workers, "
          f"{total[1]:.0f} in their children), {total[2]:.0f} wall-s summed over workers")
    for title, table in (("files", by_file), ("test phases", by_test)):
        print(f"\nlargest {title} (CPU-s: all = own + children; wall-s)")
        ranked = sorted(table.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
        for name, (own, kids, wall) in ranked[: args.top]:
            print(f"{own + kids:8.1f} = {own:7.1f} + {kids:7.1f}   {wall:8.1f}   {name}")


if __name__ == "__main__":
    main()
