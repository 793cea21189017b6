"""``factatlas curate --dry-run``: the queries a curation sends before any answer can change them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from factatlas.curate import sparql
from factatlas.curate.candidates import candidate_request
from factatlas.curate.config import load_culture_config, load_pair, load_predicates, select_predicates
from factatlas.curate.engine import CurationConfig
from factatlas.records import id_order


@dataclass(frozen=True)
class QueryPlan:
    """What ``--dry-run`` prints: the queries the configuration alone fixes, in the order a run sends them,
    and how many queries each later step sends at most or per what (they depend on the answers)."""

    queries: tuple[tuple[str, str], ...]  # (kind, text)
    later: tuple[str, ...]


def plan_queries(config: CurationConfig) -> QueryPlan:
    """The queries a curation sends before any answer can change them; sends nothing. A culture whose
    countries come from a membership rule (``use: rule``) is known only once the rule is answered, so its
    candidate queries (and the country descriptions) are counted from its checked list, not printed."""
    config = config.validated()
    pair = load_pair(config.pair)
    specs = select_predicates(load_predicates(config.predicates_file), config.predicates)
    cultures = [load_culture_config(c) for c in pair.cultures]
    batch = config.batch_size

    def batched(kind: str, items: Sequence[str], build: Callable[[Sequence[str]], str]) -> list[tuple[str, str]]:
        items = list(dict.fromkeys(items))
        return [(kind, build(items[i:i + batch])) for i in range(0, len(items), batch)]

    by_rule = [cc for cc in cultures if cc.culture.membership_rule and cc.membership_use != "list"]
    countries = sorted({q for cc in cultures for q in cc.culture.country_qids}, key=id_order)
    out = [("label-languages", sparql.label_languages_query(countries, config.langs))] if countries else []
    out += [("membership", sparql.membership_query(r.predicate, r.target))
            for cc in cultures if (r := cc.culture.membership_rule)]
    later = []
    if not by_rule:
        listed = sorted({c.qid for cc in cultures for c in cc.culture.countries}, key=id_order)
        out += batched("describe", listed, lambda b: sparql.describe_query(b, config.langs))
    else:
        later.append(f"describe: 1 per {batch} countries, once the membership rule is answered")
    for cc in cultures:
        if cc in by_rule:
            n = sum(len(batched("", candidate_request(cc.culture, spec)[0], str)) for spec in specs.values())
            later.append(f"candidates for {cc.culture.name}: {n} with its checked list of "
                         f"{len(cc.culture.countries)} countries; the countries its rule resolves to decide")
            continue
        for pid_, spec in specs.items():
            out += batched(f"candidates:{pid_}", *candidate_request(cc.culture, spec))
    per_predicate = -(-len(cultures) * config.max_subjects // batch)
    popularity = (f"1 sitelinks query per {batch} candidates" if config.popularity == "sitelinks" else
                  "MediaWiki API requests (50 titles each) unless --page-lengths or the embedded sample")
    later += [
        f"class reach: 1 per {batch} classes met (subjects', objects', superclasses')",
        f"popularity: {popularity}",
        f"objects: at most {per_predicate} per predicate ({len(specs)} predicates: at most "
        f"{per_predicate * len(specs)}), 1 per {batch} kept subjects",
        f"labels: 1 describe query per {batch} subjects and objects",
        f"augmentation: 1 per {batch} objects of the superclass and admin predicates, then 1 describe per "
        f"{batch} new entities",
    ]
    return QueryPlan(tuple(out), tuple(later))
