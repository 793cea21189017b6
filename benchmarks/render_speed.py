"""Rendering speed: N facts x 12 languages x 3 templates, prompt + answer filler per (fact, language, template).

Synthetic people and cities with labels in every language (names built from syllables of each script, so
the Russian backend meets unseen words as real data does). Prints:
  * the rate of the production path (Renderer: parsed templates, gender decisions and inflections cached);
  * the rate of the baseline (every render parses its template and inflects its names again) on a subset,
    with the outputs of both checked equal, and the speed-up ratio.

    python benchmarks/render_speed.py               # 10 000 facts
    python benchmarks/render_speed.py --facts 2000 --baseline-facts 200
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter

from factatlas.records import Entity, Gender, frozen_mapping
from factatlas.templates import load_library
from factatlas.templates.backend_ru import inflect_russian
from factatlas.templates.backend_slavic import parse_word
from factatlas.templates.render import FAILURE_REASONS, RenderedPrompt, Renderer
from factatlas.templates.syntax import _Parser

LANGS = ("en", "ar", "es", "ko", "zh", "ru", "fr", "de", "ja", "pt", "hi", "sw")
TEMPLATE_IDS = ("P19/1", "P19/2", "P19/3")
SYLLABLES = {
    "Latin": ["ka", "lo", "mi", "na", "re", "so", "tu", "vi", "den", "mar", "sel", "tor"],
    "ru": ["ка", "ло", "ми", "на", "ре", "со", "ту", "ви", "ден", "мар", "сел", "тор"],
    "ar": ["كا", "لو", "مي", "نا", "ري", "سو", "تو", "في", "دن", "مر", "سل", "تر"],
    "ko": ["가", "로", "미", "나", "레", "소", "투", "비", "덴", "마르", "셀", "토르"],
    "zh": ["卡", "洛", "米", "纳", "雷", "索", "图", "维", "登", "马", "塞", "托"],
    "ja": ["カ", "ロ", "ミ", "ナ", "レ", "ソ", "ト", "ヴィ", "デン", "マル", "セル", "トル"],
    "hi": ["का", "लो", "मी", "ना", "रे", "सो", "तु", "वि", "डेन", "मार", "सेल", "तोर"],
}


def _word(rng: random.Random, lang: str, n: int) -> str:
    parts = SYLLABLES.get(lang, SYLLABLES["Latin"])
    word = "".join(rng.choice(parts) for _ in range(n))
    return word if lang in ("ar", "ko", "zh", "ja", "hi") else word.capitalize()


def synthetic_entities(n_people: int, n_cities: int, seed: int = 0) -> dict[str, Entity]:
    rng = random.Random(seed)
    out: dict[str, Entity] = {}
    for i in range(n_cities):
        qid = f"Q{9_000_000 + i}"
        labels = {lang: _word(rng, lang, 3) + ("а" if lang == "ru" and i % 2 else "") for lang in LANGS}
        out[qid] = Entity(qid, frozen_mapping(labels), classes=("Q515",))
    for i in range(n_people):
        qid = f"Q{8_000_000 + i}"
        gender = Gender.FEMININE if i % 2 else Gender.MASCULINE
        labels = {}
        for lang in LANGS:
            first, last = _word(rng, lang, 2), _word(rng, lang, 3)
            if lang == "ru":
                last += "ова" if gender is Gender.FEMININE else "ов"
            sep = "" if lang in ("zh", "ja") else " "
            labels[lang] = first + sep + last
        out[qid] = Entity(qid, frozen_mapping(labels), frozen_mapping(), gender, "P21", ("Q5",))
    return out


class BaselineRenderer(Renderer):
    """Re-parses the template and re-inflects every name on every call: what an uncached engine does."""

    def _parse(self, template):
        return _Parser(template.text).parse()

    def fill(self, *args, **kwargs):
        self._inflections.clear()
        self._agreements.clear()
        inflect_russian.cache_clear()
        parse_word.cache_clear()
        return super().fill(*args, **kwargs)

    def render_prompt(self, template, subject_qid):
        self._agreements.clear()
        return super().render_prompt(template, subject_qid)


def run(renderer: Renderer, facts, templates) -> tuple[list, float]:
    out = []
    start = time.perf_counter()
    for subject, obj in facts:
        for t in templates:
            prompt = renderer.render_prompt(t, subject)
            answer = renderer.render_answer(t, obj, subject)
            out.append((prompt.text if isinstance(prompt, RenderedPrompt) else prompt.reason,
                        getattr(answer, "forms", None) or answer.reason))
    return out, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=10_000)
    ap.add_argument("--cities", type=int, default=300)
    ap.add_argument("--baseline-facts", type=int, default=300)
    args = ap.parse_args(argv)

    lib = load_library(LANGS)
    templates = [t for lang in LANGS for tid in TEMPLATE_IDS if (t := lib.get(lang, tid)) is not None]
    entities = synthetic_entities(args.facts, args.cities)
    people = [q for q in entities if q.startswith("Q8")]
    cities = [q for q in entities if q.startswith("Q9")]
    rng = random.Random(1)
    facts = [(p, rng.choice(cities)) for p in people]
    n = len(facts) * len(templates)
    print(f"{len(facts)} facts x {len(LANGS)} languages x {len(TEMPLATE_IDS)} templates "
          f"({len(templates)} templates) = {n} prompts, each with its answer filler")

    results, seconds = run(Renderer(entities), facts, templates)
    failures = Counter(text for text, _ in results if text in FAILURE_REASONS)
    print(f"cached renderer : {seconds:7.2f} s  {n / seconds:10.0f} renders/s")
    print(f"  failed prompts by reason: {dict(failures)}")

    subset = facts[: args.baseline_facts]
    m = len(subset) * len(templates)
    fast, fast_s = run(Renderer(entities), subset, templates)
    slow, slow_s = run(BaselineRenderer(entities), subset, templates)
    if fast != slow:
        print("ERROR: baseline and cached renders differ", file=sys.stderr)
        return 1
    print(f"subset of {len(subset)} facts ({m} renders), outputs identical:")
    print(f"  baseline (no caches): {slow_s:7.2f} s  {m / slow_s:10.0f} renders/s")
    print(f"  cached renderer     : {fast_s:7.2f} s  {m / fast_s:10.0f} renders/s")
    print(f"  speed-up: {slow_s / fast_s:.1f}x (a cold cache on the subset; the full run amortises more)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
