"""A hand-sized set of ScoredPrompts whose aggregates are worked out by hand in the tests."""

from __future__ import annotations

from factatlas.records import GoldObject, ScoredPrompt


def result(model: str, fact: str, lang: str, culture: str, predicate: str, correct: bool, *,
           template: str = "T/1", gold: str = "Qg", top: str | None = None, golds: tuple[GoldObject, ...] = (),
           candidates: tuple[str, ...] = (), countries: tuple[str, ...] = (), ranked: tuple[str, ...] = (),
           subwords: int | None = None) -> ScoredPrompt:
    golds = golds or (GoldObject(gold),)
    if not ranked:
        top = top or (golds[0].qid if correct else "Qwrong")
        ranked = (top, *(c for c in candidates if c != top))
    return ScoredPrompt(model, f"{fact}|{lang}|{template}", fact, lang, template, culture, predicate, golds, ranked,
                        1 if correct else None, candidates=candidates or ranked, countries=countries,
                        gold_subwords=subwords)


# (fact, culture, predicate) -> correct in (en, ar) for model A
MODEL_A = {
    ("f1", "west", "P1"): (True, True),
    ("f2", "west", "P1"): (True, False),
    ("f3", "west", "P2"): (False, False),
    ("f4", "arab", "P1"): (False, True),
    ("f5", "arab", "P2"): (False, False),
    ("f6", "arab", "P2"): (True, True),
    ("f7", "west", "P1"): (True, True),
}


def model_results(model: str, table: dict) -> list[ScoredPrompt]:
    out = []
    for (fact, culture, pred), (en, ar) in table.items():
        out.append(result(model, fact, "en", culture, pred, en))
        out.append(result(model, fact, "ar", culture, pred, ar))
    return out
