"""Knowledge locality for curation: in which Wikipedia editions each kept subject has an article.

ECLeKTic (Goldman et al. 2025) measures cross-lingual transfer on facts written down in one language's
Wikipedia only; this step records, per subject, the editions (among the probe languages' and the
culture's) that have an article, from the sitelinks (``schema:about`` / ``schema:isPartOf``). One batched
query per batch of subjects; the rest is pure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from factatlas.curate import sparql
from factatlas.curate.cache import QueryRunner
from factatlas.records import Culture, wikipedia_site


def articles_query(subjects: Sequence[str], sites: Sequence[str]) -> str:
    """Which of ``sites`` (edition codes) have an article on each subject. Rows: ?s ?site.

    The editions are a FILTER after the ``schema:about`` lookup, not a second VALUES block: given both
    blocks, Oxigraph starts from the editions and scans every article of them for each batch, so the query
    grew with the whole store (0.56 s at 3x the sample, 70.7 s at 30x) instead of with the batch's
    articles (benchmarks/curate_scaling.py prints each query kind's exponent)."""
    return sparql.PREFIXES + (
        "SELECT DISTINCT ?s ?site WHERE {\n"
        f"  {sparql.values('s', [sparql.qid(s) for s in subjects])}\n"
        "  ?article schema:about ?s ;\n"
        "           schema:isPartOf ?site .\n"
        f"  FILTER(?site IN ({', '.join(sparql.site_iri(x) for x in sites)}))\n"
        "}\n"
    )


def locality_sites(langs: Iterable[str], cultures: Mapping[str, Culture]) -> tuple[str, ...]:
    """The editions asked about: those of the probe languages and of every culture's countries, sorted."""
    sites = {wikipedia_site(x) for x in langs}
    sites.update(s for c in cultures.values() for country in c.countries for s in country.wikipedia_sites)
    return tuple(sorted(sites))


def article_sites(runner: QueryRunner, subjects: Iterable[str], sites: Sequence[str], batch_size: int
                  ) -> dict[str, tuple[str, ...]]:
    """subject -> the editions among ``sites`` with an article on it, sorted (subjects without one: absent)."""
    subjects = sorted(set(subjects), key=lambda q: (int(q[1:]), q))
    if not subjects or not sites:
        return {}
    rows = runner.select_batched("articles", subjects, lambda b: articles_query(b, sites), batch_size)
    found: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        q, site = sparql.qid_of(row, "s"), sparql.site_from_iri(sparql.iri(row, "site") or "")
        if q and site:
            found[q].add(site)
    return {q: tuple(sorted(v)) for q, v in found.items()}
