"""Korean particles chosen by the final consonant (batchim) of the name, from Hangul syllable arithmetic.

A Hangul syllable is U+AC00 + (initial * 21 + medial) * 28 + final; final 0 = no batchim, 8 = ㄹ.
Alternating particles: 은/는, 이/가, 을/를, 와/과, (으)로 (ㄹ takes 로), 이나/나, 이랑/랑, 아/야,
(이)라는/라는. Names ending in a digit or a Latin letter use the digit's / letter name's Korean reading
(1 일, 3 삼, L 엘, M 엠, N 엔, R 알); other endings get the combined form, e.g. ``은(는)``, flagged guessed.
"""

from __future__ import annotations

import unicodedata

from factatlas.templates.morphology import EXACT, GUESSED, Features, InflectionRequest, InflectionResult

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
RIEUL = 8  # final ㄹ

# particle as written (either allomorph) -> (form after a consonant, form after a vowel)
ALTERNATING: dict[str, tuple[str, str]] = {}
for _after_consonant, _after_vowel in (("은", "는"), ("이", "가"), ("을", "를"), ("과", "와"), ("으로", "로"),
                                       ("이나", "나"), ("이랑", "랑"), ("아", "야"), ("이라는", "라는"),
                                       ("으로서", "로서"), ("으로써", "로써"), ("이다", "다"), ("이며", "며")):
    ALTERNATING[_after_consonant] = ALTERNATING[_after_vowel] = (_after_consonant, _after_vowel)
INVARIANT = frozenset({"에서", "의", "에", "도", "만", "에게", "부터", "까지", "보다", "한테", "께서", "처럼", "에서의",
                       "에는", "에서는", "으로는", "와는", "과는"})
PARTICLES = frozenset(ALTERNATING) | INVARIANT

# Korean reading of digits and of Latin letter names: True when the reading ends in a consonant, and
# whether that consonant is ㄹ.
DIGIT_FINAL = {"0": (True, False), "1": (True, True), "2": (False, False), "3": (True, False),
               "4": (False, False), "5": (False, False), "6": (True, False), "7": (True, True),
               "8": (True, True), "9": (False, False)}
LETTER_FINAL = {c: (False, False) for c in "abcdefghijkopqstuvwxyz"}
LETTER_FINAL.update({"l": (True, True), "m": (True, False), "n": (True, False), "r": (True, True)})


def final_consonant(name: str) -> tuple[bool, bool] | None:
    """(has batchim, batchim is ㄹ) of the name's last pronounced character; None when unknown."""
    stripped = name.rstrip(" )]}\"'.,!?」』〉》")
    if not stripped:
        return None
    ch = stripped[-1]
    code = ord(ch)
    if HANGUL_FIRST <= code <= HANGUL_LAST:
        final = (code - HANGUL_FIRST) % 28
        return final != 0, final == RIEUL
    if ch in DIGIT_FINAL:
        return DIGIT_FINAL[ch]
    low = ch.lower()
    if low in LETTER_FINAL and unicodedata.category(ch).startswith("L"):
        # Letter names are read as letters only in acronyms (KBS, MBC) and single letters.
        word = stripped.split()[-1]
        if word.isupper() or len(word) == 1:
            return LETTER_FINAL[low]
    return None


def attach(name: str, particle: str) -> tuple[str, str]:
    """(name + the right allomorph, status). Unknown endings get the combined form and 'guessed'."""
    if particle in INVARIANT:
        return name + particle, EXACT
    after_consonant, after_vowel = ALTERNATING[particle]
    final = final_consonant(name)
    if final is None:
        if after_consonant.startswith("으"):
            return f"{name}(으){after_vowel}", GUESSED
        return f"{name}{after_consonant}({after_vowel})", GUESSED
    has_batchim, is_rieul = final
    if after_consonant.startswith("으") and is_rieul:  # (으)로: ㄹ behaves like a vowel
        return name + after_vowel, EXACT
    return name + (after_consonant if has_batchim else after_vowel), EXACT


class KoreanBackend:
    name = "korean"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if features.case or features.number or features.article or features.preposition:
            return None
        if not features.particle:
            return InflectionResult(label, "none", self.name)
        if features.particle not in PARTICLES:
            return None
        form, status = attach(label, features.particle)
        detail = "" if status == EXACT else "final sound unknown: combined particle form"
        return InflectionResult(form, status, self.name, detail)
