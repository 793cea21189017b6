"""The dataset itself, no model needed: PROBING.md "Validating a dataset" checks and statistics
(multi-parallel, golds among candidates, leakage, entropy, majority class, balance). Moved out of
``evaluate.py`` unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    """The checks and statistics of PROBING.md "Validating a dataset" that need no model.

    One pass over the prompts a row group at a time (``Benchmark.iter_prompts``), keeping per-fact and
    per-language aggregates only, so its memory grows with the facts, not with the prompts."""
    langs = bench.languages
    facts = bench.fact_keys  # fact_id -> (predicate, culture, golds) of its first prompt, in prompt_id order
    scan = _ProfileScan(bench, max_examples)
    for batch in bench.iter_prompts():
        scan.feed(batch)
    per_predicate = _predicate_profile(bench, scan.n_candidates, facts)
    cultures = bench.cultures
    facts_per_culture = {c: sum(1 for _, c_, _ in facts.values() if c_ == c) for c in cultures}
    majority_values = [e["majority"]["p@1"] for e in per_predicate.values()]
    return {
        "languages": list(langs), "cultures": list(cultures), "n_prompts": scan.n_prompts, "n_facts": len(facts),
        "templates": {lang: sorted(scan.templates.get(lang, ())) for lang in langs},
        "parallel": scan.parallel(langs),
        "gold_in_candidates": scan.gold(),
        "leakage": scan.leakage(langs),
        "balance": {"facts_per_culture": facts_per_culture,
                    "ratio": (max(facts_per_culture.values()) / min(facts_per_culture.values())
                              if facts_per_culture and min(facts_per_culture.values()) > 0 else None)},
        "majority_macro": sum(majority_values) / len(majority_values) if majority_values else None,
        "predicates": per_predicate,
    }


@dataclass(slots=True)
class _FactState:
    """What the multi-parallel check keeps of a fact: its languages, its first candidate list and gold set,
    and whether a later prompt disagreed."""

    langs: set[str]
    candidates: tuple[str, ...]
    golds: tuple[str, ...]
    candidates_differ: bool = False
    golds_differ: bool = False


class _ProfileScan:
    """The per-prompt checks of the dataset profile as one streaming pass (``feed`` batches in prompt_id order)."""

    def __init__(self, bench: Benchmark, max_examples: int) -> None:
        self.bench, self.max_examples = bench, max_examples
        self.n_prompts = 0
        self.templates: dict[str, set[str]] = defaultdict(set)
        self.n_candidates: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # predicate -> [sum, prompts]
        self.facts: dict[str, _FactState] = {}
        self.gold_outside = self.prompts_without_gold = 0
        self.gold_examples: list[str] = []
        self.leak_units: dict[tuple[str, str], bool] = {}  # (fact, language): any prompt there leaks
        self.leak_examples: list[str] = []
        self._names: dict[str, str] = {}  # one string object per fact id and language (dictionary keys)

    def feed(self, prompts: Sequence[Prompt]) -> None:
        bench, names = self.bench, self._names
        for p in prompts:
            self.n_prompts += 1
            fact_id, lang = names.setdefault(p.fact_id, p.fact_id), names.setdefault(p.lang, p.lang)
            self.templates[lang].add(p.template_id)
            counted = self.n_candidates[p.predicate]
            counted[0] += len(p.candidate_qids)
            counted[1] += 1
            # multi-parallel: every fact in every language with the same candidates and golds
            golds = tuple(sorted(p.gold_qids))
            state = self.facts.get(fact_id)
            if state is None:
                self.facts[fact_id] = _FactState({lang}, tuple(p.candidate_qids), golds)
            else:
                state.langs.add(lang)
                state.candidates_differ |= tuple(p.candidate_qids) != state.candidates
                state.golds_differ |= golds != state.golds
            # golds outside their candidate list, and prompts whose candidates hold no gold
            cands = set(p.candidate_qids)
            outside = [q for q in p.gold_qids if q not in cands]
            self.gold_outside += len(outside)
            if outside and len(self.gold_examples) < self.max_examples:
                self.gold_examples.append(f"{p.prompt_id}: {', '.join(outside)} not among the candidates")
            if not cands & set(p.gold_qids):
                self.prompts_without_gold += 1
            # subjects whose label contains the answer, per (fact, language)
            key = (fact_id, lang)
            if self.leak_units.get(key):
                continue
            leak = leaks(bench, p)
            self.leak_units[key] = leak
            if leak and len(self.leak_examples) < self.max_examples:
                self.leak_examples.append(f"{p.lang}: subject '{p.subject_label}' contains the answer "
                                          f"({', '.join(bench.label(q, [p.lang]) for q in p.gold_qids)})")

    def parallel(self, langs: Sequence[str]) -> dict[str, Any]:
        missing_lang, cand_mismatch, gold_mismatch, examples = 0, 0, 0, []
        for key, state in sorted(self.facts.items()):
            problems = []
            if state.langs != set(langs):
                missing_lang += 1
                problems.append(f"languages {sorted(state.langs)} instead of {sorted(langs)}")
            if state.candidates_differ:
                cand_mismatch += 1
                problems.append("candidate QIDs differ between languages")
            if state.golds_differ:
                gold_mismatch += 1
                problems.append("gold QIDs differ between languages")
            if problems and len(examples) < self.max_examples:
                examples.append(f"{key}: {'; '.join(problems)}")
        return {"groups": len(self.facts), "missing_language": missing_lang, "candidate_mismatch": cand_mismatch,
                "gold_mismatch": gold_mismatch, "examples": examples}

    def gold(self) -> dict[str, Any]:
        return {"gold_outside": self.gold_outside, "prompts_without_gold": self.prompts_without_gold,
                "examples": self.gold_examples}

    def leakage(self, langs: Sequence[str]) -> dict[str, Any]:
        per_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # language -> [leaking units, units]
        for (_, lang), leak in self.leak_units.items():
            per_lang[lang][0] += leak
            per_lang[lang][1] += 1
        leak_by_lang = {}
        for lang in langs:
            n, units = per_lang.get(lang, (0, 0))
            leak_by_lang[lang] = {"n": n, "units": units, "share": n / units if units else 0.0}
        n_leak = sum(self.leak_units.values())
        units = len(self.leak_units)
        return {"n": n_leak, "units": units, "share": n_leak / units if units else 0.0,
                "by_lang": leak_by_lang, "examples": self.leak_examples}


def _predicate_profile(bench: Benchmark, n_candidates: Mapping[str, Sequence[int]],
                       facts: Mapping[str, tuple[str, str, tuple[str, ...]]]) -> dict[str, Any]:
    """Per predicate and culture: facts, entropy, the majority class, candidates, imbalance."""
    by_pc: dict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    for pred, culture, objs in facts.values():
        by_pc[(pred, culture)].append(objs)
    predicates = sorted({k[0] for k in by_pc})
    cultures = bench.cultures
    per_predicate: dict[str, Any] = {}
    for pred in predicates:
        all_objs = [objs for (p_, _), lst in by_pc.items() if p_ == pred for objs in lst]
        qid, acc = M.majority_baseline(all_objs)
        entry: dict[str, Any] = {
            "facts": {c: len(by_pc.get((pred, c), [])) for c in cultures},
            "entropy": {c: M.predicate_entropy(by_pc[(pred, c)]) for c in cultures if by_pc.get((pred, c))},
            "majority": {"qid": qid, "label": bench.label(qid), "p@1": acc, "tied": M.majority_ties(all_objs),
                         "by_culture": {}},
            "mean_candidates": n_candidates[pred][0] / n_candidates[pred][1],  # [candidates summed, prompts]
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
