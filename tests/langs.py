"""The shipped languages, found once: every template file in templates/lang/ (the first thirteen in their
historical order, then the others by code), so a language added to the library is checked everywhere."""

from __future__ import annotations

from pathlib import Path

_TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "templates" / "lang"
FIRST_THIRTEEN = ("en", "ar", "es", "ko", "zh", "ru", "fr", "de", "ja", "pt", "hi", "sw", "it")
_FILES = {path.stem for path in _TEMPLATE_DIR.glob("*.yaml")}
SHIPPED_LANGS: tuple[str, ...] = (*(code for code in FIRST_THIRTEEN if code in _FILES),
                                  *sorted(_FILES - set(FIRST_THIRTEEN)))
