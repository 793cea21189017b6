"""The dataset itself, no model needed: PROBING.md "Validating a dataset" checks and statistics
(multi-parallel, golds among candidates, leakage, entropy, majority class, balance). Moved out of
``evaluate.py`` unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from factatlas.probe import metrics as M
from factatlas.prompt_tables import LIST_SEP, column_codes, distinct_rows
from factatlas.records import Prompt

if TYPE_CHECKING:
    from factatlas.benchmark import Benchmark


PROFILE_COLUMNS = ("fact_id", "lang", "template_id", "predicate", "subject_label", "gold_qids", "gold_forms",
                   "candidate_qids")


def _gold_label(bench: Benchmark, prompt: Prompt, i: int, qid: str) -> str:
    """The object's label in the prompt's language; the slot filler when labels.parquet lacks it."""
    label = bench.answer_labels.get((qid, prompt.lang))
    if label:
        return label
    forms = prompt.gold_forms
    return forms[i][0] if i < len(forms) and forms[i] else ""


def leaks(bench: Benchmark, prompt: Prompt) -> bool:
    """An object label inside the subject label (NFKC + casefold): the prompt gives the answer away.
    Same rule as the build's stats.json leakage rate (factatlas.forms.leaks)."""
    return _leaks(bench, prompt.subject_label, prompt.lang, prompt.gold_qids, prompt.gold_forms)


def _leaks(bench: Benchmark, subject_label: str, lang: str, golds: Sequence[str],
           gold_forms: Sequence[Sequence[str]] | None) -> bool | None:
    """``leaks`` of a prompt's fields; None when a gold has no label in ``lang`` and ``gold_forms`` (its slot
    fillers, the fallback) is None: the caller then asks again with the row's forms."""
    from factatlas.forms import leaks as label_leaks

    labels = []
    for i, qid in enumerate(golds):
        label = bench.answer_labels.get((qid, lang))
        if not label:
            if gold_forms is None:
                return None
            label = gold_forms[i][0] if i < len(gold_forms) and gold_forms[i] else ""
        labels.append(label)
    return bool(subject_label) and label_leaks(subject_label, labels)


def dataset_profile(bench: Benchmark, max_examples: int = 5) -> dict[str, Any]:
    """The checks and statistics of PROBING.md "Validating a dataset" that need no model.

    One pass over a few columns of the prompts a row group at a time (``Benchmark.prompt_tables``), counting
    with arrays over the facts and the languages: no prompt is made a record, and each check runs once per
    distinct value of what it reads in a row group (a candidate list, a subject label with its golds)."""
    langs = bench.languages
    facts = bench.fact_keys  # fact_id -> (predicate, culture, golds) of its first prompt, in prompt_id order
    scan = _ProfileScan(bench, facts, max_examples)
    for table in bench.prompt_tables(PROFILE_COLUMNS):
        scan.feed(table)
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


def _codes(column: Any) -> tuple[np.ndarray, list[Any]]:
    """A column's values as int codes per row and the distinct values (``column_codes``, the values as Python)."""
    codes, values = column_codes(column)
    return codes, values.to_pylist()


def _list_codes(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """A list column's rows as int codes (equal lists, equal codes) and, per code, a row holding it."""
    import pyarrow.compute as pc

    codes, _ = _codes(pc.binary_join(column, LIST_SEP))
    return codes, np.unique(codes, return_index=True)[1]


class _ProfileScan:
    """The per-prompt checks of the dataset profile as one streaming pass over columns (``feed`` tables in
    prompt_id order). Per fact an array slot (its first candidate list and sorted golds as codes, whether a
    later prompt disagreed); per language a boolean array over the facts (a prompt there, a leaking one)."""

    def __init__(self, bench: Benchmark, facts: Mapping[str, Any], max_examples: int) -> None:
        self.bench, self.max_examples = bench, max_examples
        self.fact_ids = list(facts)
        self.fact_index = {fact_id: i for i, fact_id in enumerate(self.fact_ids)}
        n = len(self.fact_ids)
        self.first_candidates = np.full(n, -1, np.int64)
        self.first_golds = np.full(n, -1, np.int64)
        self.candidates_differ = np.zeros(n, bool)
        self.golds_differ = np.zeros(n, bool)
        self.lang_codes: dict[str, int] = {}
        self.seen: list[np.ndarray] = []  # per language code: the facts with a prompt there
        self.leaking: list[np.ndarray] = []  # per language code: the facts with a prompt there that leaks
        self.candidate_codes: dict[str, int] = {}  # a candidate list (joined) -> its code
        self.gold_codes: dict[tuple[str, ...], int] = {}  # a sorted gold list -> its code
        self.n_prompts = 0
        self.templates: dict[str, set[str]] = defaultdict(set)
        self.n_candidates: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # predicate -> [sum, prompts]
        self.gold_outside = self.prompts_without_gold = 0
        self.gold_examples: list[str] = []
        self.leak_examples: list[str] = []

    def _lang(self, lang: str) -> int:
        if lang not in self.lang_codes:
            self.lang_codes[lang] = len(self.seen)
            self.seen.append(np.zeros(len(self.fact_ids), bool))
            self.leaking.append(np.zeros(len(self.fact_ids), bool))
        return self.lang_codes[lang]

    def feed(self, table: Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = table.combine_chunks()
        if not table.num_rows:
            return
        self.n_prompts += table.num_rows
        column = table.column
        fact_local, fact_values = _codes(column("fact_id"))
        fact = np.array([self.fact_index[f] for f in fact_values], np.int64)[fact_local]
        lang_local, lang_values = _codes(column("lang"))
        lang = np.array([self._lang(v) for v in lang_values], np.int64)[lang_local]
        template_local, template_values = _codes(column("template_id"))
        for combo_row in distinct_rows(lang_local, template_local)[1]:
            self.templates[lang_values[lang_local[combo_row]]].add(template_values[template_local[combo_row]])
        predicate_local, predicate_values = _codes(column("predicate"))
        lengths = pc.list_value_length(column("candidate_qids")).to_numpy(zero_copy_only=False).astype(np.int64)
        sums = np.bincount(predicate_local, weights=lengths, minlength=len(predicate_values))
        rows = np.bincount(predicate_local, minlength=len(predicate_values))
        for i, predicate in enumerate(predicate_values):
            counted = self.n_candidates[predicate]
            counted[0] += int(sums[i])
            counted[1] += int(rows[i])

        # multi-parallel: every fact in every language with the same candidates and golds
        candidate_local, candidate_rows = _list_codes(column("candidate_qids"))
        candidate_lists = column("candidate_qids").take(pa.array(candidate_rows)).to_pylist()
        joined = pc.binary_join(column("candidate_qids").take(pa.array(candidate_rows)), LIST_SEP).to_pylist()
        candidates = np.array([self.candidate_codes.setdefault(j, len(self.candidate_codes)) for j in joined],
                              np.int64)[candidate_local]
        gold_local, gold_rows = _list_codes(column("gold_qids"))
        gold_lists = column("gold_qids").take(pa.array(gold_rows)).to_pylist()
        golds = np.array([self.gold_codes.setdefault(tuple(sorted(g)), len(self.gold_codes)) for g in gold_lists],
                         np.int64)[gold_local]
        for code in np.unique(lang):
            self.seen[code][fact[lang == code]] = True
        new = self.first_candidates[fact] < 0
        firsts = np.unique(fact[new], return_index=True)  # each new fact's first row of this group
        self.first_candidates[firsts[0]] = candidates[new][firsts[1]]
        self.first_golds[firsts[0]] = golds[new][firsts[1]]
        self.candidates_differ[fact[candidates != self.first_candidates[fact]]] = True
        self.golds_differ[fact[golds != self.first_golds[fact]]] = True

        self._golds_among_candidates(column("prompt_id"), candidate_local, candidate_lists, gold_local, gold_lists)
        # subjects whose label contains the answer, per (fact, language): a unit leaks when any prompt does
        subject_local, subject_values = _codes(column("subject_label"))
        combo, combo_rows = distinct_rows(subject_local, lang_local, gold_local)
        leak = np.zeros(table.num_rows, bool)
        for c, row in enumerate(combo_rows):
            args = (subject_values[subject_local[row]], lang_values[lang_local[row]], gold_lists[gold_local[row]])
            verdict = _leaks(self.bench, *args, None)
            if verdict is None:  # a gold without a label: each row's own slot fillers decide
                members = np.flatnonzero(combo == c)
                forms = column("gold_forms").take(pa.array(members)).to_pylist()
                leak[members] = [bool(_leaks(self.bench, *args, f)) for f in forms]
            else:
                leak[combo == c] = verdict
        unit = fact * len(self.seen) + lang
        was = np.zeros(table.num_rows, bool)  # the row's (fact, language) leaked in an earlier group
        for code in np.unique(lang):
            mine = lang == code
            was[mine] = self.leaking[code][fact[mine]]
        newly = np.flatnonzero(leak & ~was)
        first_rows = newly[np.unique(unit[newly], return_index=True)[1]]
        for row in np.sort(first_rows)[: max(0, self.max_examples - len(self.leak_examples))]:
            row_lang = lang_values[lang_local[row]]
            gold = gold_lists[gold_local[row]]
            self.leak_examples.append(f"{row_lang}: subject '{subject_values[subject_local[row]]}' contains the "
                                      f"answer ({', '.join(self.bench.label(q, [row_lang]) for q in gold)})")
        for code in np.unique(lang[leak]):
            self.leaking[code][fact[leak & (lang == code)]] = True

    def _golds_among_candidates(self, prompt_ids: Any, candidate_local: np.ndarray, candidate_lists: list[Any],
                                gold_local: np.ndarray, gold_lists: list[Any]) -> None:
        """Golds outside their candidate list, and prompts whose candidates hold no gold: once per distinct
        (candidate list, gold list) of the group."""
        pair, pair_rows = distinct_rows(candidate_local, gold_local)
        outside, without = [], []
        for row in pair_rows:
            cands = set(candidate_lists[candidate_local[row]])
            gold = gold_lists[gold_local[row]]
            outside.append([q for q in gold if q not in cands])
            without.append(not cands & set(gold))
        counts = np.array([len(o) for o in outside], np.int64)[pair]
        self.gold_outside += int(counts.sum())
        self.prompts_without_gold += int(np.array(without, bool)[pair].sum())
        for row in np.flatnonzero(counts)[: max(0, self.max_examples - len(self.gold_examples))]:
            self.gold_examples.append(f"{prompt_ids[int(row)].as_py()}: {', '.join(outside[pair[row]])} "
                                      "not among the candidates")

    def parallel(self, langs: Sequence[str]) -> dict[str, Any]:
        seen = np.logical_or.reduce(self.seen) if self.seen else np.zeros(len(self.fact_ids), bool)
        expected = set(langs)
        missing = np.zeros(len(self.fact_ids), bool)
        for lang in expected | set(self.lang_codes):
            there = self.seen[self.lang_codes[lang]] if lang in self.lang_codes else np.zeros(len(self.fact_ids), bool)
            missing |= ~there if lang in expected else there
        missing &= seen
        examples = []
        for i in sorted(np.flatnonzero(missing | self.candidates_differ | self.golds_differ),
                        key=lambda i: self.fact_ids[i]):
            if len(examples) == self.max_examples:
                break
            problems = []
            if missing[i]:
                had = sorted(lang for lang, code in self.lang_codes.items() if self.seen[code][i])
                problems.append(f"languages {had} instead of {sorted(langs)}")
            if self.candidates_differ[i]:
                problems.append("candidate QIDs differ between languages")
            if self.golds_differ[i]:
                problems.append("gold QIDs differ between languages")
            examples.append(f"{self.fact_ids[i]}: {'; '.join(problems)}")
        return {"groups": int(seen.sum()), "missing_language": int(missing.sum()),
                "candidate_mismatch": int((self.candidates_differ & seen).sum()),
                "gold_mismatch": int((self.golds_differ & seen).sum()), "examples": examples}

    def gold(self) -> dict[str, Any]:
        return {"gold_outside": self.gold_outside, "prompts_without_gold": self.prompts_without_gold,
                "examples": self.gold_examples}

    def leakage(self, langs: Sequence[str]) -> dict[str, Any]:
        leak_by_lang = {}
        for lang in langs:
            code = self.lang_codes.get(lang)
            n, units = (0, 0) if code is None else (int(self.leaking[code].sum()), int(self.seen[code].sum()))
            leak_by_lang[lang] = {"n": n, "units": units, "share": n / units if units else 0.0}
        n_leak = sum(int(a.sum()) for a in self.leaking)
        units = sum(int(a.sum()) for a in self.seen)
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
