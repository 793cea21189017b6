"""Virtuoso's augment queries (step 5's P279*/P131* closures) in two forms, at 1x and 30x the sample: the
product's (the starts in a ``VALUES`` block before the path) against one ``UNION`` branch per start. Checks
each query's rows equal in both forms, replays both 3 interleaved rounds, and prints the least round's CPU
(client + server, from /proc) and each form's exponent against the rows (docs/curate.md, Virtuoso's augment).

    python benchmarks/augment_forms.py /tmp/augment-forms     # about 10 minutes on 2 cores

Needs Virtuoso 7 (virtuoso-opensource-7-bin). A Virtuoso subquery holding the ``VALUES`` is refused by the
engine ("transitive start not given"), so it is not among the forms.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import curate_scaling as CS  # noqa: E402  (the scaled samples, the curation's query texts, the timed pass)

ROUNDS = 3


def union_form(text: str) -> str:
    """The product's augment query with its closure written as one UNION branch per start (same rows)."""
    head, body = text.split("SELECT DISTINCT ?sub ?super WHERE {\n", 1)
    values, path, edge = (line.strip() for line in body.rstrip().rstrip("}").rstrip().splitlines()[:3])
    if not values.startswith("VALUES ?start") or "*" not in path:
        raise ValueError(f"not an augment query: {body[:200]!r}")
    starts = values.split("{", 1)[1].rsplit("}", 1)[0].split()
    prop = path.split()[1]
    union = " UNION ".join(f"{{ {s} {prop} ?sub }}" for s in starts)
    return head + f"SELECT DISTINCT ?sub ?super WHERE {{\n  {union}\n  {edge}\n}}\n"


def main() -> int:
    from factatlas.curate.endpoints import HttpSparqlEndpoint
    from factatlas.curate.localengines import VirtuosoServer
    from factatlas.http import HttpPolicy

    work = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/augment-forms")
    work.mkdir(parents=True, exist_ok=True)
    out = {}
    for scale in (1, 30):
        sample = work / f"x{scale}" / "sample.nt"
        if not sample.exists():
            sample = CS.write_sample(scale, work / f"x{scale}")
        with VirtuosoServer(sample, work / f"virtuoso{scale}", buffers=100000) as engine:
            if not (work / f"texts{scale}.json").exists():
                CS.run_scale(scale, work, engine.url, engine.pid)  # the curation: its query texts by kind
            texts = json.loads((work / f"texts{scale}.json").read_text("utf-8"))["augment"]
            endpoint = HttpSparqlEndpoint(engine.url, policy=HttpPolicy(timeout_s=600))
            forms = {"values": texts, "union": [union_form(t) for t in texts]}
            rows = 0
            for a, b in zip(forms["values"], forms["union"], strict=True):
                got, union = endpoint.select(a), endpoint.select(b)
                if sorted(map(json.dumps, got)) != sorted(map(json.dumps, union)):
                    raise SystemExit(f"error: the two forms answer differently at {scale}x:\n{a}")
                rows += len(got)
            best = dict.fromkeys(forms, math.inf)
            for r in range(ROUNDS):
                for name in (forms if r % 2 == 0 else reversed(list(forms))):
                    cpu, _wall = CS.timed_pass(endpoint, forms[name], engine.pid, 1)
                    best[name] = min(best[name], cpu)
            out[scale] = {"queries": len(texts), "rows": rows, **best}
            print(f"{scale}x: {len(texts)} queries, {rows} rows; least round CPU (client + server): "
                  + ", ".join(f"{name} {best[name]:.3f} s" for name in forms), flush=True)
    for name in ("values", "union"):
        exponent = math.log(out[30][name] / out[1][name]) / math.log(out[30]["rows"] / out[1]["rows"])
        print(f"{name}: {out[1][name]:.3f} -> {out[30][name]:.3f} s for {out[1]['rows']} -> {out[30]['rows']} "
              f"rows: exponent {exponent:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
