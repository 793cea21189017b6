"""RankC over every language pair of BMLAMA-17 (136 pairs, 6,792 queries each, BLOOM-3b's own rankings).

Sides, interleaved and repeated in one process (process CPU time, min and median):
- the released code's loop (cumulative top-j sets per query), on ``--released-pairs`` pairs only (it
  takes about 0.2 s a pair), scaled to 136 pairs for its ratio;
- ``rankc`` called per pair (converts both languages' ranking lists to arrays for every pair);
- ``rankc_matrix`` (converts each language once, then every pair).
All three must agree (to 1e-12 with the loop, exactly between ours) before any time is printed.
Needs ``../shared/reference/bmlama`` (``--bmlama DIR``).

    python benchmarks/rankc_speed.py
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the project's shared folder beside the checkout (or beside the folder of worktrees)
DEFAULT = next((p for p in (ROOT.parent / "shared" / "reference" / "bmlama", ROOT.parents[1] / "shared" / "reference" / "bmlama")
                if p.exists()), ROOT.parent / "shared" / "reference" / "bmlama")


def released_consist(r1, r2) -> float:
    order = [len(r1) - i for i in range(len(r1))]
    z = sum(math.exp(o) for o in order)
    total = 0.0
    for j in range(len(r1)):
        s1, s2 = set(r1[: j + 1]), set(r2[: j + 1])
        total += math.exp(order[j]) / z * len(s1 & s2) / len(s1)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bmlama", type=Path, default=DEFAULT)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--released-pairs", type=int, default=2)
    args = ap.parse_args(argv)
    path = args.bmlama / "bloom-3b_rankings" / "bloom-3b_BMLAMA17_rank_indices.json.gz"
    if not path.exists():
        print(f"reference rankings absent: {path}", file=sys.stderr)
        return 2
    from factatlas.probe.metrics import rankc, rankc_matrix

    with gzip.open(path, "rt", encoding="utf-8") as f:
        rankings = json.load(f)
    langs = sorted(rankings)
    pairs = list(itertools.combinations(langs, 2))
    released = {p: sum(released_consist(a, b) for a, b in zip(rankings[p[0]], rankings[p[1]], strict=True))
                / len(rankings[p[0]]) for p in pairs[: args.released_pairs]}
    pairwise = {(a, b): rankc(rankings[a], rankings[b]) for a, b in pairs}
    matrix = rankc_matrix({lang: rankings[lang] for lang in langs})
    bad = [p for p in pairs if matrix[p] != pairwise[p]]
    bad += [p for p, v in released.items() if abs(v - matrix[p]) > 1e-12]
    if bad:
        print(f"FAILED: RankC differs on {len(bad)} pairs, e.g. {bad[0]}", file=sys.stderr)
        return 1
    print(f"{len(pairs)} pairs x {len(rankings[langs[0]])} queries: rankc_matrix == rankc per pair (exactly) on "
          f"all, == the released loop (1e-12) on {len(released)}")
    times: dict[str, list[float]] = {"released loop (scaled)": [], "rankc per pair": [], "rankc_matrix": []}
    some = pairs[: args.released_pairs]
    for _ in range(args.repeats):
        t0 = time.process_time()
        for a, b in some:
            sum(released_consist(x, y) for x, y in zip(rankings[a], rankings[b], strict=True))
        times["released loop (scaled)"].append((time.process_time() - t0) * len(pairs) / max(len(some), 1))
        t0 = time.process_time()
        for a, b in pairs:
            rankc(rankings[a], rankings[b])
        times["rankc per pair"].append(time.process_time() - t0)
        t0 = time.process_time()
        rankc_matrix({lang: rankings[lang] for lang in langs})
        times["rankc_matrix"].append(time.process_time() - t0)
    for name, ts in times.items():
        print(f"{name:>24}: {len(pairs)} pairs in {min(ts):7.3f} s CPU (min), {statistics.median(ts):7.3f} s (median)")
    best = min(times["rankc_matrix"])
    print(f"RATIO rankc_matrix vs rankc per pair: {min(times['rankc per pair']) / best:.1f}x; vs the released "
          f"loop: {min(times['released loop (scaled)']) / best:.0f}x; goal < 0.2 s CPU: "
          f"{'met' if best < 0.2 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
