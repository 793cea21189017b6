"""How many SPARQL and MediaWiki requests does curating one pair cost: our scheme vs DLAMA's scheme.

Both schemes run on the same inputs — the embedded Wikidata sample (or --sample), its page-length table
served by the local MediaWiki-API stand-in — and every request is really sent and counted:

ours   (factatlas.curate.engine): one candidates query per (culture, predicate) with the culture's
       countries in one VALUES list; titles deduplicated across predicates, 50 per MediaWiki request;
       objects, the labels/metadata pass, class checks and augmentation batched by 200 over the whole pair;
       the P279 chains above the object pool walked one hop at a time, one query per 200 new items a hop.
DLAMA  (WIKIDATA.md's description of the reference method): one candidates query per (predicate,
       country); article lengths per (predicate, country, edition), 50 titles per request; objects by
       batches of 50 subjects; labels per language by batches of 50 entities; P279 relations among the
       objects of a predicate by pairs of batches, ceil(n/50)^2 queries; P131 per batch of 50 places.

The results are checked equal where the schemes overlap: the per-country candidate rows union to our
batched rows, and the pairwise P279 relations equal our closure restricted to the pool.

    python3 benchmarks/curate_requests.py [--pair arab-west] [--langs ar,en] [--sample F --page-lengths T]
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from factatlas.curate import sparql
from factatlas.curate.config import load_culture_config, load_pair, load_predicates
from factatlas.curate.endpoints import SAMPLE_PATH, EmbeddedEndpoint, load_store, run_on_store
from factatlas.curate.engine import CurationConfig, curate
from factatlas.curate.localserver import MediaWikiApp, serve
from factatlas.curate.mediawiki import MediaWikiClient
from factatlas.curate.popularity import SAMPLE_PAGE_LENGTHS, MediaWikiLengths, read_redirects
from factatlas.curate.steps import resolve_culture

UA = "factatlas-benchmark/1.0 (local stand-in; benchmark@example.org)"
DLAMA_BATCH = 50


class Counting:
    """An endpoint wrapper that counts requests per kind of query."""

    def __init__(self, inner):
        self.inner = inner
        self.by_kind: dict[str, int] = defaultdict(int)

    @property
    def id(self) -> str:
        return self.inner.id

    def select(self, query: str):
        self.by_kind[_kind(query)] += 1
        return self.inner.select(query)


def _kind(query: str) -> str:
    if "schema:about" in query:
        return "candidates"
    if "SELECT DISTINCT ?x ?p ?v" in query:  # describe_query
        return "labels+metadata"
    if "VALUES ?root" in query:  # class_reach_query: the object types' roots
        return "class checks"
    if "wdt:P279" in query:
        return "P279 augmentation"
    if "wdt:P131" in query:
        return "P131 augmentation"
    if "wikibase:sitelinks" in query:
        return "sitelinks"
    if "SELECT DISTINCT ?country" in query:
        return "membership"
    return "objects"


def read_lengths(path: Path) -> dict[tuple[str, str], int]:
    with open(path, encoding="utf-8", newline="") as f:
        return {(r["site"], r["title"]): int(float(r["length"]))
                for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)}


def chunks(items: list, n: int) -> list[list]:
    return [items[i:i + n] for i in range(0, len(items), n)]


def dlama_scheme(store, pair: str, langs: tuple[str, ...], kept: dict, client: MediaWikiClient,
                 ours_candidates: dict) -> tuple[dict[str, int], int, bool]:
    """Run DLAMA's request pattern on the same store; returns (SPARQL requests by kind, MediaWiki requests,
    results-equal flag)."""
    specs = load_predicates()
    counts: dict[str, int] = defaultdict(int)
    equal = True

    def ask(kind: str, query: str):
        counts[kind] += 1
        return run_on_store(store, query)

    endpoint = EmbeddedEndpoint(SAMPLE_PATH, store=store)
    for cname in load_pair(pair).cultures:
        cc = load_culture_config(cname)
        if cc.culture.membership_rule is not None:
            counts["membership"] += 1

        class _Runner:  # resolve_culture needs a runner; answer from the store directly
            def select(self, kind, query):
                return run_on_store(store, query)

        culture, _ = resolve_culture(cc, _Runner()) if cc.culture.membership_rule else (cc.culture, {})
        for pid, spec in specs.items():
            rows_union = set()
            per_country_titles: dict[tuple[str, str], set[str]] = defaultdict(set)
            for country in culture.countries:
                rows = ask("candidates", sparql.candidates_query(pid, spec.culture_filter.side, spec.culture_filter.via,
                                                                 [country.qid], country.wikipedia_sites))
                for r in rows:
                    rows_union.add((sparql.qid_of(r, "s"), sparql.qid_of(r, "country")))
                    site = sparql.site_from_iri(sparql.iri(r, "site") or "")
                    per_country_titles[(country.qid, site)].add(sparql.literal(r, "title")[0])
            equal &= rows_union == ours_candidates[(culture.name, pid)]
            for (_, site), titles in sorted(per_country_titles.items()):
                client.page_lengths(site, sorted(titles))  # DLAMA: per predicate and country, no dedup
            subjects = sorted(kept.get((culture.name, pid), ()))
            objects: set[str] = set()
            for batch in chunks(subjects, DLAMA_BATCH):
                for r in ask("objects", sparql.objects_query(pid, batch)):
                    if (o := sparql.qid_of(r, "o")):
                        objects.add(o)
            entities = sorted(set(subjects) | objects)
            for lang in langs:
                for batch in chunks(entities, DLAMA_BATCH):
                    ask("labels+metadata", sparql.describe_query(batch, [lang]))
            pool = sorted(objects)
            if spec.augment == "superclass" and pool:
                pairs = set()
                for a in chunks(pool, DLAMA_BATCH):
                    for b in chunks(pool, DLAMA_BATCH):
                        q = sparql.PREFIXES + ("SELECT ?sub ?super WHERE {\n"
                                               f"  {sparql.values('sub', [sparql.qid(x) for x in a])}\n"
                                               f"  {sparql.values('super', [sparql.qid(x) for x in b])}\n"
                                               "  ?sub wdt:P279+ ?super .\n}\n")
                        pairs |= {(sparql.qid_of(r, "sub"), sparql.qid_of(r, "super")) for r in ask("P279 augmentation", q)}
                equal &= pairs == _closure_pairs(endpoint, pool)
            if spec.augment == "admin":
                for batch in chunks(pool, DLAMA_BATCH):
                    ask("P131 augmentation", sparql.admin_edges_query(batch))
    return dict(counts), client.stats.requests, equal


def _closure_pairs(endpoint, pool: list[str]) -> set[tuple[str, str]]:
    """Our scheme's answer: the closure's edges walked hop by hop, restricted to pairs inside the pool."""
    import networkx as nx

    from factatlas.curate.augment import build_graph, closure_edges

    def parent_edges(items):
        return [(sparql.qid_of(r, "sub"), sparql.qid_of(r, "super"))
                for batch in chunks(items, 200) for r in endpoint.select(sparql.superclass_edges_query(batch))]

    g = build_graph(closure_edges(pool, parent_edges))
    inside = set(pool)
    return {(a, b) for a in pool if a in g for b in nx.descendants(g, a) if b in inside and b != a}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="arab-west")
    parser.add_argument("--langs", default="ar,en")
    parser.add_argument("--sample", type=Path, default=SAMPLE_PATH)
    parser.add_argument("--page-lengths", type=Path, default=SAMPLE_PAGE_LENGTHS)
    parser.add_argument("--max-subjects", type=int, default=1000)
    args = parser.parse_args(argv)
    langs = tuple(args.langs.split(","))
    store = load_store(args.sample)
    lengths = read_lengths(args.page_lengths)

    redirects = read_redirects(args.page_lengths.with_name("redirects.tsv"))
    with tempfile.TemporaryDirectory() as tmp, serve(MediaWikiApp(lengths, redirects)) as url:
        api, rest = url + "/{site}/w/api.php", url + "/{site}/w/rest.php"
        ours_client = MediaWikiClient(UA, api_url=api, rest_url=rest)
        ours = Counting(EmbeddedEndpoint(args.sample, store=store))
        config = CurationConfig(pair=args.pair, langs=langs, sample=str(args.sample),
                                max_subjects=args.max_subjects)
        result = curate(config, Path(tmp) / "run", endpoint=ours, popularity_source=MediaWikiLengths(ours_client))
        kept: dict[tuple[str, str], set[str]] = defaultdict(set)
        for f in result.facts:
            kept[(f.culture, f.predicate)].add(f.subject)
        for d in result.drops:
            if d.step in ("objects", "labels"):
                kept[(d.culture, d.predicate)].add(d.item.split(":")[2])
        ours_candidates = {}
        for cname, culture in result.cultures.items():
            sites = sorted({s for c in culture.countries for s in c.wikipedia_sites})
            for pid, spec in load_predicates().items():
                rows = run_on_store(store, sparql.candidates_query(pid, spec.culture_filter.side,
                                                                   spec.culture_filter.via, culture.country_qids, sites))
                ours_candidates[(cname, pid)] = {(sparql.qid_of(r, "s"), sparql.qid_of(r, "country")) for r in rows}
        dl_client = MediaWikiClient(UA, api_url=api, rest_url=rest)
        dl_sparql, dl_mw, equal = dlama_scheme(store, args.pair, langs, kept, dl_client, ours_candidates)

    if not equal:  # a ratio is only meaningful between schemes that return the same results
        print("FAILED: results differ (per-country candidates vs batched, or pairwise P279 vs closure)",
              file=sys.stderr)
        return 1
    kinds = sorted(set(ours.by_kind) | set(dl_sparql))
    print(f"requests to curate {args.pair} ({','.join(langs)}) on {args.sample.name}: "
          f"{len(result.facts)} facts, max {args.max_subjects} subjects per predicate and culture")
    print(f"{'SPARQL requests':<22}{'ours':>8}{'DLAMA':>10}")
    for k in kinds:
        print(f"  {k:<20}{ours.by_kind.get(k, 0):>8}{dl_sparql.get(k, 0):>10}")
    ours_total, dl_total = sum(ours.by_kind.values()), sum(dl_sparql.values())
    print(f"{'SPARQL total':<22}{ours_total:>8}{dl_total:>10}   ratio DLAMA/ours = {dl_total / ours_total:.1f}x")
    print(f"{'MediaWiki requests':<22}{ours_client.stats.requests:>8}{dl_mw:>10}   "
          f"ratio DLAMA/ours = {dl_mw / max(1, ours_client.stats.requests):.1f}x")
    both_ours, both_dl = ours_total + ours_client.stats.requests, dl_total + dl_mw
    print(f"{'all requests':<22}{both_ours:>8}{both_dl:>10}   ratio DLAMA/ours = {both_dl / both_ours:.1f}x")
    print("results checked equal (per-country candidates = batched; pairwise P279 = closure)")
    n = 1000
    print(f"P279 at DLAMA-v1 scale (a pool of {n} objects): ours {math.ceil(n / 200)} queries for the first hop "
          "and one per 200 new classes on each hop above it (the chains' depth), "
          f"DLAMA ceil(n/50)^2 = {math.ceil(n / DLAMA_BATCH) ** 2}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
