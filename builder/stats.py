"""Benchmark statistics (stats.json) and the printed summary table.

Definitions (docs/build.md repeats them):
- facts per culture x predicate x language: distinct fact ids with at least one prompt in that language;
- entropy (DLAMA): within one culture and predicate, each fact is mapped to its valid object that is most
  frequent among that cell's facts; entropy = -sum p log2 p of that distribution, in bits;
- valid objects per fact: mean number of valid objects (augmented ones included);
- western share: facts whose culture is the Western one / all facts;
- label coverage per language: share of referenced entities that have a label in that language;
- leakage rate: share of facts whose subject label (in that language) contains the label of one of its
  gold objects (NFKC + casefold), e.g. "Cairo University" -> "Cairo".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from factatlas.entropy import predicate_entropy
from factatlas.forms import leaks
from factatlas.records import Entity, Fact, Prompt, id_order

WESTERN_CULTURE = "west"


def compute_stats(facts: Sequence[Fact], prompts: Sequence[Prompt], entities: Mapping[str, Entity],
                  languages: Sequence[str], *, western: str = WESTERN_CULTURE,
                  input_facts: Sequence[Fact] | None = None, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """stats.json for a benchmark. ``input_facts`` (the curated facts before the build) gives label
    coverage of the input; without it coverage is computed on the benchmark's own facts."""
    facts_by_cell: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    for f in facts:
        facts_by_cell[(f.culture, f.predicate)].append(f)

    per_lang: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    prompts_per_lang: Counter[str] = Counter()
    templates_per_lang: dict[str, set[str]] = defaultdict(set)
    gold_of: dict[str, tuple[str, ...]] = {}
    for p in prompts:
        per_lang[(p.culture, p.predicate, p.lang)].add(p.fact_id)
        prompts_per_lang[p.lang] += 1
        templates_per_lang[p.lang].add(p.template_id)
        gold_of.setdefault(p.fact_id, tuple(p.gold_qids))

    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for (culture, predicate), cell_facts in sorted(facts_by_cell.items()):
        objs = [f.object_qids for f in cell_facts]
        cells.setdefault(culture, {})[predicate] = {
            "facts": {lang: len(per_lang.get((culture, predicate, lang), ())) for lang in languages},
            "entropy_bits": round(predicate_entropy(objs), 6),
            "valid_objects_per_fact": round(sum(map(len, objs)) / len(objs), 6),
            "distinct_objects": len({o for os_ in objs for o in os_}),
        }

    cultures = sorted({f.culture for f in facts})
    n = len(facts)
    leakage = _leakage(facts, entities, languages, gold_of)
    coverage_facts = input_facts if input_facts is not None else facts
    stats: dict[str, Any] = {
        "facts": n,
        "prompts": sum(prompts_per_lang.values()),
        "prompts_per_language": dict(sorted(prompts_per_lang.items())),
        "templates_per_language": {lang: len(templates_per_lang.get(lang, ())) for lang in languages},
        "facts_per_culture": {c: sum(1 for f in facts if f.culture == c) for c in cultures},
        "western_culture": western,
        # None (n/a) when no culture is the Western one: a pair of two non-Western cultures has no share
        "western_share": (round(sum(1 for f in facts if f.culture == western) / n, 6)
                          if n and western in cultures else None),
        "valid_objects_per_fact": round(sum(len(f.objects) for f in facts) / n, 6) if n else 0.0,
        "label_coverage": label_coverage(coverage_facts, entities, languages),
        "label_coverage_scope": "input facts" if input_facts is not None else "benchmark facts",
        "leakage_rate": leakage,
        "cells": cells,
    }
    if extra:
        stats.update(extra)
    return stats


def label_coverage(facts: Sequence[Fact], entities: Mapping[str, Entity], languages: Sequence[str]) -> dict[str, float]:
    qids = sorted({q for f in facts for q in (f.subject, *f.object_qids)})
    if not qids:
        return {lang: 0.0 for lang in languages}
    return {lang: round(sum(1 for q in qids if q in entities and entities[q].labels.get(lang)) / len(qids), 6)
            for lang in languages}


def _leakage(facts: Sequence[Fact], entities: Mapping[str, Entity], languages: Sequence[str],
             gold_of: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang in languages:
        leaked: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for f in facts:
            subj = entities.get(f.subject)
            if subj is None or not subj.labels.get(lang):
                continue
            golds = gold_of.get(f.id, f.object_qids)
            labels = [entities[q].labels.get(lang, "") for q in golds if q in entities]
            total[f.culture] += 1
            leaked[f.culture] += leaks(subj.labels[lang], labels)
        all_total = sum(total.values())
        out[lang] = {
            "rate": round(sum(leaked.values()) / all_total, 6) if all_total else 0.0,
            "facts": sum(leaked.values()),
            "per_culture": {c: round(leaked[c] / total[c], 6) for c in sorted(total)},
        }
    return out


def stats_table(stats: Mapping[str, Any], languages: Sequence[str]):
    """A rich Table: culture x predicate rows; facts per language, entropy, objects per fact."""
    from rich.table import Table

    table = Table(title=f"benchmark: {stats['facts']} facts, {stats['prompts']} prompts", show_lines=False)
    table.add_column("culture")
    table.add_column("predicate")
    for lang in languages:
        table.add_column(f"facts {lang}", justify="right")
    table.add_column("entropy (bits)", justify="right")
    table.add_column("objects/fact", justify="right")
    table.add_column("distinct objects", justify="right")
    splits = stats.get("splits") or {}
    split_names = list((stats.get("split_fractions") or {}).get("target", {})) if splits else []
    for name in split_names:
        table.add_column(f"{name} (share)", justify="right")
    for culture, preds in sorted(stats["cells"].items()):
        for pred, cell in sorted(preds.items(), key=lambda kv: id_order(kv[0])):
            per_split = splits.get(culture, {}).get(pred, {})
            table.add_row(culture, pred, *(str(cell["facts"].get(lang, 0)) for lang in languages),
                          f"{cell['entropy_bits']:.2f}", f"{cell['valid_objects_per_fact']:.2f}",
                          str(cell["distinct_objects"]), *(split_cell(per_split, name) for name in split_names))
    cov = ", ".join(f"{lang} {v:.1%}" for lang, v in stats["label_coverage"].items())
    leak = ", ".join(f"{lang} {v['rate']:.1%}" for lang, v in stats["leakage_rate"].items())
    share = stats["western_share"]
    western = (f"{share:.1%}" if share is not None
               else f"n/a (no '{stats.get('western_culture', 'west')}' culture)")
    caption = (f"western share {western} · label coverage ({stats['label_coverage_scope']}) "
               f"{cov} · leakage {leak}")
    if split_names:
        realised = stats["split_fractions"]
        caption += (" · splits realised (target): " + ", ".join(
            f"{name} {realised['overall'][name]:.1%} ({realised['target'][name]:.0%})" for name in split_names)
            + f", largest cell deviation {realised['max_deviation']:.1%}")
    removed = {reason: sum(per_pred.values()) for reason, per_pred in (stats.get("candidates_removed") or {}).items()
               if isinstance(per_pred, dict)}
    if removed:
        caption += " · " + ", ".join(f"{'subject removed from its candidates' if r == 'subject' else r}: {n} facts"
                                    for r, n in sorted(removed.items()))
    table.caption = caption
    return table


def split_cell(counts: Mapping[str, int], name: str) -> str:
    """'3 (30.0%)': facts of one split in one culture x predicate cell and their share of the cell."""
    total = sum(counts.values())
    n = counts.get(name, 0)
    return f"{n} ({n / total:.1%})" if total else "0"


