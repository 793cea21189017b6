"""Surface forms, compared one way everywhere: the build's duplicate-form and leakage statistics and the
metrics' dataset profile use these two functions."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=1 << 18)  # the same labels are compared again and again across pools and prompts
def normalise_form(form: str) -> str:
    """NFKC + casefold + strip: "Ｃａｉｒｏ " and "cairo" are one form."""
    return unicodedata.normalize("NFKC", form).casefold().strip()


def leaks(subject_label: str, object_labels: Iterable[str]) -> bool:
    """True when an object label occurs inside the subject label (the prompt gives the answer away)."""
    subject = normalise_form(subject_label)
    return any(lbl and normalise_form(lbl) in subject for lbl in object_labels)
