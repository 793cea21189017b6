"""The template-only baseline: the same prompts with the subject label replaced by a neutral word of the
prompt's language, so a benchmark whose templates give the answers away shows it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from factatlas.records import ANSWER_MARKER, Prompt

# A word meaning "something" per language: the template-only baseline keeps the template and drops the
# subject. Languages not listed fall back to "X" (counted in probe.json as template_only/generic-placeholder).
PLACEHOLDERS = {
    "ar": "شيء", "ca": "alguna cosa", "de": "etwas", "en": "something", "es": "algo", "fa": "چیزی", "fr": "quelque chose",
    "he": "משהו", "hi": "कुछ", "id": "sesuatu", "it": "qualcosa", "ja": "何か", "ko": "무언가",
    "nl": "iets", "pl": "coś", "pt": "algo", "ru": "что-то", "sw": "kitu", "tr": "bir şey",
    "uk": "щось", "ur": "کچھ", "vi": "cái gì đó", "zh": "某物",
}
GENERIC_PLACEHOLDER = "X"


def placeholder_for(lang: str) -> str:
    return PLACEHOLDERS.get(lang, PLACEHOLDERS.get(lang.split("-")[0], GENERIC_PLACEHOLDER))


def template_only_text(text: str, subject_label: str, lang: str) -> str | None:
    """The prompt with the subject label replaced by the language's placeholder; None if not found
    (e.g. the subject was inflected by the template), so the caller can count the skip."""
    if not subject_label or subject_label not in text:
        return None
    return text.replace(subject_label, placeholder_for(lang))


def template_only_inputs(work: Sequence[Prompt], counts: Counter) -> tuple[list[Prompt], list[str]]:
    """(prompts, texts with the subject replaced) for the template-only baseline; skips are counted."""
    kept, texts = [], []
    for r in work:
        text = template_only_text(r.text, r.subject_label, r.lang)
        if text is None:
            counts["template_only/skipped:subject-not-in-text"] += 1
            continue
        if text.count(ANSWER_MARKER) != r.text.count(ANSWER_MARKER) or r.text.count(ANSWER_MARKER) > 1:
            counts["template_only/skipped:marker-lost"] += 1
            continue
        if placeholder_for(r.lang) == GENERIC_PLACEHOLDER:
            counts["template_only/generic-placeholder"] += 1
        kept.append(r)
        texts.append(text)
    return kept, texts
