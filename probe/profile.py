"""The dataset itself, no model needed: PROBING.md "Validating a dataset" checks and statistics
(multi-parallel, golds among candidates, leakage, entropy, majority class, balance). Moved out of
``evaluate.py`` unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factatlas.probe import metrics as M
from factatlas.records import Prompt

if TYPE_CHECKING:
    from factatlas.benchmark import Benchmark


def _gold_label(bench: Benchmark, prompt: Prompt, i: int, qid: str) -> str:
    """The object's label in the prompt's language; the slot filler when labels.parquet lacks it."""
    label = bench.display_labels.get((qid, prompt.lang))
    if label:
        return label
    forms = prompt.gold_forms
    return forms[i][0] if i < len(forms) and forms[i] else ""


def leaks(bench: Benchmark, prompt: Prompt) -> bool:
    """An object label inside the subject label (NFKC + casefold): the prompt gives the answer away.
    Same rule as the build's stats.json leakage rate (factatlas.forms.leaks)."""
    from factatlas.forms import leaks as label_leaks

    labels = [_gold_label(bench, prompt, i, q) for i, q in enumerate(prompt.gold_qids)]
    return bool(prompt.subject_label) and label_leaks(prompt.subject_label, labels)


def dataset_profile(bench: Benchmark, max_examples: int = 5) -> dict[str, Any]:
    """The checks and statistics of PROBING.md "Validating a dataset" that need no model."""
    prompts = bench.prompts  # in prompt_id order
    langs = bench.languages
    # facts: one culture, predicate and valid-object set each
    facts: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for p in prompts:
        facts.setdefault(p.fact_id, (p.predicate, p.culture, tuple(p.gold_qids)))
    per_predicate = _predicate_profile(bench, prompts, facts)
    cultures = bench.cultures
    facts_per_culture = {c: sum(1 for _, c_, _ in facts.values() if c_ == c) for c in cultures}
    majority_values = [e["majority"]["p@1"] for e in per_predicate.values()]
    return {
        "languages": list(langs), "cultures": list(cultures), "n_prompts": len(prompts), "n_facts": len(facts),
        "templates": {lang: sorted({p.template_id for p in prompts if p.lang == lang}) for lang in langs},
        "parallel": _parallel_profile(prompts, langs, max_examples),
        "gold_in_candidates": _gold_profile(prompts, max_examples),
        "leakage": _leakage_profile(bench, prompts, langs, max_examples),
        "balance": {"facts_per_culture": facts_per_culture,
                    "ratio": (max(facts_per_culture.values()) / min(facts_per_culture.values())
                              if facts_per_culture and min(facts_per_culture.values()) > 0 else None)},
        "majority_macro": sum(majority_values) / len(majority_values) if majority_values else None,
        "predicates": per_predicate,
    }


def _parallel_profile(prompts: Sequence[Prompt], langs: Sequence[str], max_examples: int
                      ) -> dict[str, Any]:
    """Multi-parallel: every fact in every language with the same candidates and golds (each language asks
    it with the templates it has)."""
    groups: dict[str, list[Prompt]] = defaultdict(list)
    for p in prompts:
        groups[p.fact_id].append(p)
    missing_lang, cand_mismatch, gold_mismatch, examples = 0, 0, 0, []
    for key, ps in sorted(groups.items()):
        have = {p.lang for p in ps}
        problems = []
        if have != set(langs):
            missing_lang += 1
            problems.append(f"languages {sorted(have)} instead of {sorted(langs)}")
        if len({tuple(p.candidate_qids) for p in ps}) > 1:
            cand_mismatch += 1
            problems.append("candidate QIDs differ between languages")
        if len({tuple(sorted(p.gold_qids)) for p in ps}) > 1:
            gold_mismatch += 1
            problems.append("gold QIDs differ between languages")
        if problems and len(examples) < max_examples:
            examples.append(f"{key}: {'; '.join(problems)}")
    return {"groups": len(groups), "missing_language": missing_lang, "candidate_mismatch": cand_mismatch,
            "gold_mismatch": gold_mismatch, "examples": examples}


def _gold_profile(prompts: Sequence[Prompt], max_examples: int) -> dict[str, Any]:
    """Golds outside their candidate list, and prompts whose candidates hold no gold."""
    gold_outside, prompts_without_gold, gold_examples = 0, 0, []
    for p in prompts:
        cands = set(p.candidate_qids)
        outside = [q for q in p.gold_qids if q not in cands]
        gold_outside += len(outside)
        if outside and len(gold_examples) < max_examples:
            gold_examples.append(f"{p.prompt_id}: {', '.join(outside)} not among the candidates")
        if not cands & set(p.gold_qids):
            prompts_without_gold += 1
    return {"gold_outside": gold_outside, "prompts_without_gold": prompts_without_gold, "examples": gold_examples}


def _leakage_profile(bench: Benchmark, prompts: Sequence[Prompt], langs: Sequence[str],
                     max_examples: int) -> dict[str, Any]:
    """Subjects whose label contains the answer, per (fact, language)."""
    leak_units: dict[tuple[str, str], bool] = {}
    leak_examples = []
    for p in prompts:
        key = (p.fact_id, p.lang)
        if leak_units.get(key):
            continue
        leak = leaks(bench, p)
        leak_units[key] = leak
        if leak and len(leak_examples) < max_examples:
            leak_examples.append(f"{p.lang}: subject '{p.subject_label}' contains the answer "
                                 f"({', '.join(bench.label(q, [p.lang]) for q in p.gold_qids)})")
    leak_by_lang = {}
    for lang in langs:
        units = [v for (_, lang_), v in leak_units.items() if lang_ == lang]
        leak_by_lang[lang] = {"n": sum(units), "units": len(units), "share": sum(units) / len(units) if units else 0.0}
    n_leak = sum(leak_units.values())
    return {"n": n_leak, "units": len(leak_units), "share": n_leak / len(leak_units) if leak_units else 0.0,
            "by_lang": leak_by_lang, "examples": leak_examples}


def _predicate_profile(bench: Benchmark, prompts: Sequence[Prompt],
                       facts: Mapping[str, tuple[str, str, tuple[str, ...]]]) -> dict[str, Any]:
    """Per predicate and culture: facts, entropy, the majority class, candidates, imbalance."""
    by_pc: dict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    for pred, culture, objs in facts.values():
        by_pc[(pred, culture)].append(objs)
    predicates = sorted({k[0] for k in by_pc})
    cultures = bench.cultures
    n_candidates: dict[str, list[int]] = defaultdict(list)
    for p in prompts:
        n_candidates[p.predicate].append(len(p.candidate_qids))
    per_predicate: dict[str, Any] = {}
    for pred in predicates:
        all_objs = [objs for (p_, _), lst in by_pc.items() if p_ == pred for objs in lst]
        qid, acc = M.majority_baseline(all_objs)
        entry: dict[str, Any] = {
            "facts": {c: len(by_pc.get((pred, c), [])) for c in cultures},
            "entropy": {c: M.predicate_entropy(by_pc[(pred, c)]) for c in cultures if by_pc.get((pred, c))},
            "majority": {"qid": qid, "label": bench.label(qid), "p@1": acc, "tied": M.majority_ties(all_objs),
                         "by_culture": {}},
            "mean_candidates": sum(n_candidates[pred]) / len(n_candidates[pred]),
        }
        for c in cultures:
            if by_pc.get((pred, c)):
                # the predicate-wide majority object, scored on this culture's facts
                hits = sum(1 for objs in by_pc[(pred, c)] if qid in objs)
                entry["majority"]["by_culture"][c] = hits / len(by_pc[(pred, c)])
        counts = [n for n in entry["facts"].values()]
        entry["imbalance"] = (max(counts) / min(counts)) if counts and min(counts) > 0 else None
        per_predicate[pred] = entry
    return per_predicate
