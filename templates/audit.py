"""`factatlas templates audit RUN`: how every answer- and subject-dependent decision was made, per language.

A native reviewer reads this before the prompts: per language, the source of each agreement (P21,
lexicon, class default, suffix rule), each inflection (dictionary, rules, analogy; exact or guessed),
each gendered label (P2521/P3321 or a counted fallback), each answer-dependent word (ru в/на and
во/со: lexicon, island rule or default; a copula that agrees with the answer: the answer's agreement
source) and each surface clean-up (a removed
disambiguator, an alias that could not be formed), followed by the list of guesses to check first.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from factatlas.templates.morphology import GUESSED
from factatlas.templates.render import Renderer, source_kind


@dataclass
class LanguageAudit:
    lang: str
    decisions: Counter = field(default_factory=Counter)  # (what, how) -> times
    guesses: list[tuple[str, str]] = field(default_factory=list)  # (what, detail), sorted

    def as_dict(self) -> dict:
        return {"decisions": [{"what": w, "how": h, "count": n} for (w, h), n in sorted(self.decisions.items())],
                "guesses": [{"what": w, "detail": d} for w, d in self.guesses]}


def audit_renderer(renderer: Renderer, langs: tuple[str, ...] | None = None) -> dict[str, LanguageAudit]:
    """Every decision the renderer made (it caches each one, so every distinct decision counts once)."""
    out: dict[str, LanguageAudit] = defaultdict(lambda: LanguageAudit(""))
    guesses: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for (qid, lang, _slot, label), ag in renderer.agreement_decisions().items():
        kind = source_kind(ag.source)
        out[lang].decisions[("agreement", kind)] += 1
        if kind in ("suffix", "unknown"):
            guesses[lang].add(("agreement", f"{qid} '{label}': {ag.gender}/{ag.number} from {ag.source or 'nothing'}"))
    for (lang, label, features, *_context), res in renderer.inflection_decisions().items():
        if res is None:
            out[lang].decisions[("inflection", "unsupported")] += 1
            continue
        out[lang].decisions[("inflection", f"{res.backend or 'none'}:{res.status}")] += 1
        if res.status == GUESSED:
            guesses[lang].add(("inflection", f"'{label}' as {features.describe()} -> '{res.form}': {res.detail}"))
    for (lang, what, how, detail), _n in renderer.decisions.items():
        out[lang].decisions[(what, how)] += 1
        if how.startswith(("label:", "rule:")) or how == "not-inflected" or (
                what == "answer agreement" and how in ("suffix", "unknown")):
            guesses[lang].add((what, f"{how}: {detail}"))
    result = {}
    for lang in sorted(out):
        if langs and lang not in langs:
            continue
        audit = out[lang]
        audit.lang = lang
        audit.guesses = sorted(guesses[lang])
        result[lang] = audit
    return result


def format_audit(audits: Mapping[str, LanguageAudit], review: Mapping[str, str], limit: int = 20) -> str:
    lines = []
    for lang, a in audits.items():
        lines.append(f"== {lang} (templates: {review.get(lang, '?')})")
        width = max((len(w) + len(h) + 2 for w, h in a.decisions), default=10)
        for (what, how), n in sorted(a.decisions.items()):
            lines.append(f"  {what + '  ' + how:<{width}}  {n}")
        lines.append(f"  guesses to check: {len(a.guesses)}")
        for what, detail in a.guesses[:limit]:
            lines.append(f"    {what}: {detail}")
        if len(a.guesses) > limit:
            lines.append(f"    ... {len(a.guesses) - limit} more (--limit 0 for all)")
    return "\n".join(lines)
