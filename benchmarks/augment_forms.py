"""Step 5's P279/P131 chains fetched in three forms on Virtuoso, the Oxigraph server and the embedded store, at 1x
and 30x the sample: the path from a ``VALUES``-bound start (``?start wdt:P279* ?sub . ?sub wdt:P279 ?super``,
one query per 200 of the object pool: the product's form until 29 Nov 2026), one ``UNION`` branch per start,
and the product's walk (``curate.augment.closure_edges``: one hop at a time, one query per 200 new items a
hop). The pools are the direct objects of the curated facts of each augmented predicate. Checks the three
forms' edges equal per pool, replays each form's queries 3 interleaved rounds, and prints the least round's
CPU (client + server, from /proc) and each form's exponent against the edges (docs/curate.md, Virtuoso's
augment).

    python benchmarks/augment_forms.py /tmp/augment-forms --engines virtuoso,oxigraph,embedded

Needs Virtuoso 7 (virtuoso-opensource-7-bin) for virtuoso. A Virtuoso subquery holding the ``VALUES`` is
refused by the engine ("transitive start not given"), so it is not among the forms.
"""

from __future__ import annotations

import argparse
import math
import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import curate_scaling as CS  # noqa: E402  (the scaled samples, the curation, the timed pass)

ROUNDS = 3


PROPS = {"superclass": "P279", "admin": "P131"}


def augment_pools(run: Path) -> dict[str, list[str]]:
    """mode -> the direct objects of the curated facts whose predicate is augmented that way (step 5's pools)."""
    import pyarrow.parquet as pq

    from factatlas.predicates import load_predicates
    from factatlas.records import id_order

    specs = load_predicates()
    pools: dict[str, set[str]] = {mode: set() for mode in PROPS}
    table = pq.read_table(run / "curate" / "facts.parquet", columns=["predicate", "object_qids", "object_provenance"])
    for fact in table.to_pylist():
        mode = specs[fact["predicate"]].augment
        if mode in pools:
            pools[mode].update(o for o, how in zip(fact["object_qids"], fact["object_provenance"], strict=True)
                               if how == "direct")
    return {mode: sorted(pool, key=id_order) for mode, pool in pools.items()}


def path_form(prop: str, starts: list[str]) -> str:
    from factatlas.curate import sparql

    return sparql.PREFIXES + ("SELECT DISTINCT ?sub ?super WHERE {\n"
                              f"  {sparql.values('start', [sparql.qid(x) for x in starts])}\n"
                              f"  ?start wdt:{prop}* ?sub .\n  ?sub wdt:{prop} ?super .\n}}\n")


def union_form(prop: str, starts: list[str]) -> str:
    from factatlas.curate import sparql

    union = " UNION ".join(f"{{ {sparql.qid(s)} wdt:{prop}* ?sub }}" for s in starts)
    return sparql.PREFIXES + f"SELECT DISTINCT ?sub ?super WHERE {{\n  {union}\n  ?sub wdt:{prop} ?super .\n}}\n"


def edges_of(rows) -> set[tuple[str, str]]:
    from factatlas.curate import sparql

    return {(sparql.qid_of(r, "sub"), sparql.qid_of(r, "super")) for r in rows}


def forms_for(endpoint, mode: str, pool: list[str], checked: list[str], batch: int = 200
              ) -> tuple[dict[str, list[str]], int]:
    """form -> the query texts that fetch ``pool``'s chains, and the edges they return (the ``checked`` forms'
    edges checked equal to the walk's)."""
    from factatlas.curate import sparql
    from factatlas.curate.augment import closure_edges

    prop = PROPS[mode]
    build = sparql.superclass_edges_query if mode == "superclass" else sparql.admin_edges_query
    batches = [pool[i:i + batch] for i in range(0, len(pool), batch)]
    forms = {"path": [path_form(prop, b) for b in batches], "union": [union_form(prop, b) for b in batches],
             "hops": []}

    def parent_edges(items):
        out = []
        for i in range(0, len(items), batch):
            forms["hops"].append(build(items[i:i + batch]))
            out += sorted(edges_of(endpoint.select(forms["hops"][-1])))
        return out

    walked = set(closure_edges(pool, parent_edges))
    for name in (x for x in checked if x != "hops"):
        got = set().union(*(edges_of(endpoint.select(q)) for q in forms[name]))
        if got != walked:
            raise SystemExit(f"error: the {name} form and the walk fetch different {prop} edges")
    return forms, len(walked)


@contextmanager
def engine_at(name: str, sample: Path, workdir: Path):
    """(endpoint, server pid or None) of ``name`` over ``sample``: the embedded store in this process, or a
    local server."""
    from factatlas.curate.endpoints import EmbeddedEndpoint, HttpSparqlEndpoint
    from factatlas.curate.localengines import OxigraphServer, VirtuosoServer
    from factatlas.http import HttpPolicy

    if name == "embedded":
        yield EmbeddedEndpoint(sample), None, None
        return
    server = VirtuosoServer(sample, workdir, buffers=100000) if name == "virtuoso" else OxigraphServer(sample, workdir)
    with server as engine:
        yield HttpSparqlEndpoint(engine.url, policy=HttpPolicy(timeout_s=600)), engine.pid, engine.url


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir", nargs="?", default="/tmp/augment-forms")
    ap.add_argument("--engines", default="virtuoso", help="comma-separated: virtuoso, oxigraph, embedded")
    ap.add_argument("--forms", default="path,union,hops", help="comma-separated: path, union, hops (each checked "
                    "equal to the walk; the union form is slow on Oxigraph)")
    args = ap.parse_args()
    chosen = args.forms.split(",")
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    for name in args.engines.split(","):
        out = {}
        for scale in (1, 30):
            sample = work / f"x{scale}" / "sample.nt"
            if not sample.exists():
                sample = CS.write_sample(scale, work / f"x{scale}")
            with engine_at(name, sample, work / f"{name}{scale}") as (endpoint, pid, url):
                if not (work / f"run{scale}" / "curate" / "facts.parquet").exists():  # the curation
                    CS.run_scale(scale, work, url, pid)
                forms: dict[str, list[str]] = {form: [] for form in chosen}
                rows = 0
                for mode, pool in augment_pools(work / f"run{scale}").items():
                    if pool:
                        per_mode, edges = forms_for(endpoint, mode, pool, chosen)
                        for form in chosen:
                            forms[form] += per_mode[form]
                        rows += edges
                first, _ = CS.timed_pass(endpoint, forms["path"], pid, 1)
                repeats = max(1, math.ceil(0.3 / max(first, 1e-4)))  # each timed pass at least ~0.3 s
                best = dict.fromkeys(forms, math.inf)
                for r in range(ROUNDS):
                    for form in (forms if r % 2 == 0 else reversed(list(forms))):
                        cpu, _wall = CS.timed_pass(endpoint, forms[form], pid, repeats)
                        best[form] = min(best[form], cpu)
                out[scale] = {"queries": len(forms["path"]), "rows": rows, **best}
                print(f"[{name}] {scale}x: {len(forms['path'])} path queries ({len(forms['hops'])} one-hop), "
                      f"{rows} edges; "
                      f"least round CPU (client + server, x{repeats}): "
                      + ", ".join(f"{form} {best[form]:.4f} s" for form in forms), flush=True)
        for form in chosen:
            exponent = math.log(out[30][form] / out[1][form]) / math.log(out[30]["rows"] / out[1]["rows"])
            print(f"[{name}] {form}: {out[1][form]:.4f} -> {out[30][form]:.4f} s for {out[1]['rows']} -> "
                  f"{out[30]['rows']} edges: exponent {exponent:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
