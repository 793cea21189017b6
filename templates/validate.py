"""The template validator: every defect class gets an Issue with ``file:line:col`` and a fix.

Checked per file: unknown keys, unknown or mismatched language, unknown scripts/genders; per template:
syntax, unknown predicate, ids, slots that do not fit the predicate/kind (missing or duplicate [Y] in a
cloze, [Y] in a question, no [X]), features the language does not have, Korean, Turkish and Hungarian
particles, agreement groups that agree with the answer [Y] away from it (next to [Y] they are part of the answer) or do not cover the
language's genders (without ``other``), mixed-script words (a Cyrillic letter inside a Latin word and vice
versa, letters of undeclared scripts), and placeholders that would survive rendering (a probe render per
gender/number).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from importlib import resources

import yaml

from factatlas.errors import did_you_mean
from factatlas.records import ANSWER_MARKER
from factatlas.templates.language_file import Issue, LanguageFile, Template, read_language_file
from factatlas.templates.morphology import language_registry
from factatlas.templates.predicates import PREDICATES
from factatlas.templates.syntax import (
    GENDER_VALUES,
    LIFE_VALUES,
    Group,
    Slot,
    TemplateSyntaxError,
    Text,
    parse,
)

KNOWN_GENDERS = GENDER_VALUES
_SCRIPT_PREFIXES = {
    "LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek", "ARABIC": "Arabic", "HEBREW": "Hebrew",
    "HANGUL": "Hangul", "CJK": "Han", "HIRAGANA": "Hiragana", "KATAKANA": "Katakana", "DEVANAGARI": "Devanagari",
    "THAI": "Thai", "BENGALI": "Bengali", "TAMIL": "Tamil", "TELUGU": "Telugu", "GEORGIAN": "Georgian",
    "ARMENIAN": "Armenian", "ETHIOPIC": "Ethiopic", "GUJARATI": "Gujarati", "GURMUKHI": "Gurmukhi",
    "KANNADA": "Kannada", "MALAYALAM": "Malayalam", "SINHALA": "Sinhala", "KHMER": "Khmer", "LAO": "Lao",
    "MYANMAR": "Myanmar", "TIBETAN": "Tibetan", "IDEOGRAPHIC": "Han", "FULLWIDTH": "Latin",
    "HALFWIDTH": "Katakana", "BOPOMOFO": "Bopomofo", "SYRIAC": "Syriac", "THAANA": "Thaana",
}
KNOWN_SCRIPTS = frozenset(_SCRIPT_PREFIXES.values())
# Alphabets whose letters look alike: a word must not mix them, whatever the file declares.
CONFUSABLE_SCRIPTS = frozenset({"Latin", "Cyrillic", "Greek"})
LOOKALIKE_LETTERS = {
    "а": "a", "с": "c", "е": "e", "о": "o", "р": "p", "х": "x", "у": "y", "і": "i", "ј": "j", "ѕ": "s",
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "К": "K", "М": "M", "О": "O", "Р": "P", "Т": "T",
    "Х": "X", "α": "a", "ο": "o", "ρ": "p", "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I", "Κ": "K",
    "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Χ": "X", "Υ": "Y", "Ζ": "Z",
}


def lookalike(ch: str, script: str) -> str | None:
    """The letter of ``script`` that looks like ``ch`` (Cyrillic 'а' -> Latin 'a', Latin 'P' -> Cyrillic 'Р')."""
    if script == "Latin":
        return LOOKALIKE_LETTERS.get(ch)
    for other, latin in LOOKALIKE_LETTERS.items():
        if latin == ch and script_of(other) == script:
            return other
    return None

_SLOT_LIKE = re.compile(r"[［【〔（(〈<«]\s*[XYХУＸＹΧΥxy]\s*[］】〕）)〉>»]")
_SOURCE = re.compile(r"^(human|mt:[a-z0-9_-]+(\+[a-z0-9_-]+)*)$")
_ID = re.compile(r"^(P[1-9][0-9]*)/(q?)([1-9][0-9]*)$")


def script_of(ch: str) -> str | None:
    """The Unicode script of a letter or mark (by its character name); None for others/inherited."""
    cat = unicodedata.category(ch)
    if not (cat.startswith("L") or cat.startswith("M")):
        return None
    name = unicodedata.name(ch, "")
    first = name.split(" ", 1)[0].split("-", 1)[0]
    return _SCRIPT_PREFIXES.get(first)


def _words(text: str, base: int) -> Iterable[tuple[str, int]]:
    """(word, offset) for every run of letters and marks in ``text``."""
    start = None
    for i, ch in enumerate(text + " "):
        is_letter = unicodedata.category(ch)[0] in "LM"
        if is_letter and start is None:
            start = i
        elif not is_letter and start is not None:
            yield text[start:i], base + start
            start = None


def script_issues(text: str, base: int, declared: frozenset[str]) -> list[tuple[int, str, str]]:
    """(offset, message, hint) for letters of undeclared scripts and words mixing look-alike alphabets."""
    out = []
    for word, offset in _words(text, base):
        scripts = [(script_of(ch), ch, offset + i) for i, ch in enumerate(word)]
        present = {s for s, _, _ in scripts if s}
        bad = next(((s, ch, pos) for s, ch, pos in scripts if s and s not in declared), None)
        mixed = present & CONFUSABLE_SCRIPTS
        if len(mixed) > 1:
            majority = max(mixed, key=lambda s: sum(1 for t, _, _ in scripts if t == s))
            odd = next((s, ch, pos) for s, ch, pos in scripts if s in mixed and s != majority)
            s, ch, pos = odd
            look = lookalike(ch, majority)
            hint = (f"type the {majority} letter '{look}' instead" if look else f"write the word in {majority} only")
            out.append((pos, f"mixed-script word '{word}': '{ch}' (U+{ord(ch):04X} {unicodedata.name(ch, '?')}) "
                             f"is {s} inside a {majority} word", hint))
        elif bad is not None:
            s, ch, pos = bad
            out.append((pos, f"letter '{ch}' (U+{ord(ch):04X} {unicodedata.name(ch, '?')}) in '{word}' is {s}, "
                             f"but the file declares scripts {sorted(declared)}",
                        f"retype the word in {'/'.join(sorted(declared))} or add {s} to 'scripts'"))
    return out


def validate_file(lf: LanguageFile, structural: bool = True) -> list[Issue]:
    """All problems of one parsed template file (``structural`` adds the reader's own issues)."""
    issues: list[Issue] = list(lf.issues) if structural else []
    top = lf.positions

    def at(key: str, message: str, hint: str, code: str) -> None:
        ln, col = top.get(key, (1, 1))
        issues.append(Issue(lf.path, ln, col, message, hint, code))

    registry = language_registry()
    spec = registry.get(lf.lang)
    if lf.lang and lf.lang != lf.stem:
        at("lang", f"lang '{lf.lang}' differs from the file name '{lf.stem}.yaml'",
           f"rename the file to {lf.lang}.yaml or set lang: {lf.stem}", "language")
    if lf.lang and spec is None:
        at("lang", f"unknown language '{lf.lang}'.{did_you_mean(lf.lang, registry)}",
           "add it to templates/data/languages.yaml first (docs/templates.md, 'Add a language')", "unknown-language")
    for s in lf.scripts:
        if s not in KNOWN_SCRIPTS:
            at("scripts", f"unknown script '{s}'.{did_you_mean(s, KNOWN_SCRIPTS)}",
               "scripts: " + ", ".join(sorted(KNOWN_SCRIPTS)), "unknown-script")
    for g in lf.genders:
        if g not in KNOWN_GENDERS:
            at("genders", f"unknown gender '{g}'.{did_you_mean(g, KNOWN_GENDERS)}",
               "genders: " + " ".join(KNOWN_GENDERS), "unknown-gender")
    seen: dict[str, int] = {}
    for t in lf.templates:
        if t.id in seen:
            issues.append(Issue(lf.path, t.line, 0, f"duplicate template id '{t.id}' (first at line {seen[t.id]})",
                                "give each paraphrase its own number", "duplicate-id"))
        seen.setdefault(t.id, t.line)
        issues.extend(validate_template(t, lf, spec))
        issues.extend(meaning_issues(t))
    return issues


@cache
def glossary() -> dict:
    """templates/data/glossary.yaml: per predicate and scope, the words that carry its meaning."""
    text = resources.files("factatlas.templates").joinpath("data/glossary.yaml").read_text("utf-8")
    return yaml.safe_load(text) or {}


def meaning_issues(t: Template) -> list[Issue]:
    """A template whose words do not say what its predicate means in its language (glossary.yaml)."""
    issues = []
    entry = glossary().get(t.predicate, {})
    low = t.text.lower()
    for scope in ("all", t.kind):
        rules = entry.get(scope) or {}
        means = (rules.get("means") or {}).get(t.lang)
        if means and not any(w.lower() in low for w in means):
            issues.append(Issue(t.path, t.line, 0, f"{t.id}: the text does not say what {t.predicate} means "
                                f"here: none of {', '.join(means)} occurs in {t.text!r}",
                                f"reword it, or extend {t.predicate} {scope} means {t.lang} in "
                                "templates/data/glossary.yaml if the wording is right", "meaning-drift"))
        for word in (rules.get("never") or {}).get(t.lang, ()):
            if word.lower() in low:
                issues.append(Issue(t.path, t.line, 0, f"{t.id}: {word!r} gives {t.predicate} another meaning "
                                    f"in {t.text!r}", "see the comment of the entry in "
                                    "templates/data/glossary.yaml", "meaning-drift"))
    return issues


def _feature_issues(t: Template, parsed, spec, at) -> None:
    """Features and '+' particles of every slot that the language does not have."""
    allowed = spec.features if spec else frozenset()
    for slot in parsed.slots():
        f = slot.features
        for value in (f.case, f.number, f.article, f.preposition):
            if value and value not in allowed:
                at(slot.start, f"feature '{value}' in {slot.raw} is not available in {t.lang}",
                   (f"{t.lang} slots may use: {' '.join(sorted(allowed))}" if allowed
                    else f"{t.lang} slots take no features: write [{slot.name}]"), "unknown-feature")
        if f.particle:
            from factatlas.templates.backend_registry import particle_inventory

            inventory = particle_inventory(spec.backend) if spec is not None else None
            if inventory is None:
                at(slot.start, f"particle '+{f.particle}' in {slot.raw}: particles exist for Korean, Turkish and "
                   "Hungarian only", "write the affix as literal text glued to the slot, e.g. [Y]에서",
                   "unknown-feature")
            elif f.particle not in inventory[1]:
                name, particles = inventory
                at(slot.start, f"unknown {name} particle '{f.particle}'.{did_you_mean(f.particle, particles)}",
                   "particles: " + " ".join(sorted(particles)), "unknown-feature")


def _writing_issues(parsed, lf: LanguageFile, spec, at) -> None:
    """The template's text in a script the file does not declare, or against the language's orthography
    (``letters``, ``half_space`` in languages.yaml)."""
    declared = frozenset(lf.scripts)
    if declared:
        for node in parsed.nodes:
            chunks = [(node.value, node.start)] if isinstance(node, Text) else (
                [(o.form, o.form_start) for o in node.options] if isinstance(node, Group) else [])
            for text, base in chunks:
                for offset, message, hint in script_issues(text, base, declared):
                    at(offset, message, hint, "mixed-script")
    if spec is not None and (spec.options.get("letters") or spec.options.get("half_space")):
        for node in parsed.nodes:
            chunks = [(node.value, node.start)] if isinstance(node, Text) else (
                [(o.form, o.form_start) for o in node.options] if isinstance(node, Group) else [])
            for text, base in chunks:
                for offset, message, hint in orthography_issues(text, base, spec.options):
                    at(offset, message, hint, "orthography")


def validate_template(t: Template, lf: LanguageFile, spec=None) -> list[Issue]:
    issues: list[Issue] = []

    def at(offset: int | None, message: str, hint: str, code: str) -> None:
        if offset is not None and t.anchor.line:
            ln, col = t.anchor.locate(offset)
        else:
            ln, col = t.line, 0
        issues.append(Issue(t.path, ln, col, f"{t.id}: {message}", hint, code))

    if t.predicate not in PREDICATES:
        at(None, f"unknown predicate '{t.predicate}'.{did_you_mean(t.predicate, PREDICATES)}",
           "templates exist for the curated predicates: " + ", ".join(PREDICATES), "unknown-predicate")
    m = _ID.match(t.id)
    if not m or m.group(1) != t.predicate:
        at(None, f"id '{t.id}' does not match its predicate {t.predicate}",
           f"cloze ids are {t.predicate}/1, {t.predicate}/2 ...; questions {t.predicate}/q1", "bad-id")
    elif (m.group(2) == "q") != (t.kind == "question"):
        at(None, f"id '{t.id}' and kind '{t.kind}' disagree",
           "question ids carry 'q' (P19/q1) and 'kind: question'; cloze ids do not", "bad-id")
    if t.source and not _SOURCE.match(t.source):
        at(None, f"source '{t.source}' is neither 'human' nor 'mt:<system>+<system>'",
           "e.g. source: human, or source: mt:googletrans+deepl", "bad-source")
    try:
        parsed = parse(t.text)
    except TemplateSyntaxError as e:
        at(e.offset, e.message, e.hint, "syntax")
        return issues

    xs, ys = parsed.slots("X"), parsed.slots("Y")
    if t.kind == "cloze":
        if not ys:
            at(len(t.text), "cloze template without the answer slot [Y]", "add [Y] where the answer goes",
               "slots")
        elif len(ys) > 1:
            at(ys[1].start, f"cloze template with {len(ys)} answer slots [Y]", "keep exactly one [Y]", "slots")
    else:
        for y in ys:
            at(y.start, "question with an answer slot [Y]", "a question asks for the answer: remove [Y]", "slots")
    if not xs:
        at(0, "template without the subject slot [X]", "mention the subject with [X]", "slots")

    _feature_issues(t, parsed, spec, at)
    issues.extend(_life_issues(t, parsed, at))
    genders = tuple(lf.genders)
    span = parsed.answer_span()
    for i, g in enumerate(parsed.nodes):
        if isinstance(g, Group):
            _check_group(g, t, genders, at, span is not None and span[0] <= i <= span[1])

    _writing_issues(parsed, lf, spec, at)
    for offset, message, hint in probe_render(t, parsed):
        at(offset, message, hint, "placeholder")
    return issues


PERSON = "person"


def _life_issues(t: Template, parsed, at) -> list[Issue]:
    """Life status is grammar: a template whose subject is a person either agrees with the subject's life
    status (a ``{X: …}`` group with ``alive``/``dead`` forms) or says why it holds of the dead as of the
    living (``timeless: <reason>``: a completed event, a language without tense, a definition said of the
    dead in encyclopedic style). Checked for every language file, so a new language is held to it too; a
    draft (machine translation, ``status: draft``) is held to it once reviewed."""
    predicate = PREDICATES.get(t.predicate)
    if predicate is None or t.status == "draft":  # a machine-translated draft waits for its review
        return []
    agrees = any(isinstance(n, Group) and n.slot == "X" and n.atoms & set(LIFE_VALUES) for n in parsed.nodes)
    if predicate.subject_type != PERSON:
        if t.timeless:
            at(None, f"'timeless' on a template whose subject is a {predicate.subject_type}, not a person",
               "remove the key: life status is said of people", "life-status")
        return []
    if agrees and t.timeless:
        at(None, "declared timeless but agrees with life status", "keep one: the agreement group or 'timeless'",
           "life-status")
    elif not agrees and not t.timeless:
        at(None, "a template about a person neither agrees with life status nor is declared timeless",
           "agree with the subject's life status ({X: alive=… | dead=… | other=<true of both>}) where the tense "
           "shows, or add 'timeless: <why it holds of the dead as of the living>'", "life-status")
    return []


def orthography_issues(text: str, base: int, options) -> list[tuple[int, str, str]]:
    """(offset, message, hint) for a language's orthography (languages.yaml): `letters`, letters of another
    language that look alike and must not be typed (fa: the Arabic «ي» and «ك» for the Persian «ی» and
    «ک»); `half_space`, affixes joined to their word by a zero-width non-joiner, never a space (fa «می‌شود»,
    «زبان‌ها»): a prefix ends with «-», a suffix starts with «-»."""
    out = []
    for i, ch in enumerate(text):
        right = (options.get("letters") or {}).get(ch)
        if right:
            out.append((base + i, f"'{ch}' (U+{ord(ch):04X} {unicodedata.name(ch, '?')}) belongs to another "
                                  f"language's alphabet", f"type '{right}' (U+{ord(right):04X} "
                                                          f"{unicodedata.name(right, '?')})"))
    for affix in options.get("half_space") or ():
        bare = affix.strip("-")
        pattern = rf"(?<!\S){bare} (?=\w)" if affix.endswith("-") else rf"(?<=\w) {bare}(?!\S)"
        for m in re.finditer(pattern, text):
            out.append((base + m.start(), f"'{bare}' written apart from its word with a space",
                        f"join it with a half-space (ZWNJ, U+200C): '{m.group().replace(' ', chr(0x200C))}'"))
    return out


def _check_group(g: Group, t: Template, genders: tuple[str, ...], at, in_answer: bool = False) -> None:
    if g.slot == "Y" and not in_answer:
        at(g.start, "agreement with the answer slot Y away from [Y] leaks the answer's gender or number "
           "into the prompt", "put the group right next to [Y] (it is then rendered per candidate, inside the "
           "answer: {Y: sg=ist | pl=sind} [Y]), agree with [X], or rephrase", "agreement-with-answer")
        return
    gender_values = g.atoms & set(GENDER_VALUES)
    if gender_values and not genders:
        at(g.start, f"gender forms {sorted(gender_values)} but the file declares no genders",
           "add 'genders:' to the file or drop the gender forms", "coverage")
    if g.slot == "Y" and g.atoms & set(LIFE_VALUES):
        at(g.start, "life status forms agree with the subject", "write them in a {X: ...} group", "coverage")
    # Forms by life status refine the others: a person whose life status is unknown takes the options
    # without alive/dead, so those alone must cover every gender and number, as in a group without them.
    values = {o.value for o in g.options if not set(o.values) & set(LIFE_VALUES)}
    if g.atoms & set(LIFE_VALUES) and not values:
        at(g.start, "agreement group has forms for the living and the dead only",
           "add other=... (a form true of both, used when the life status is unknown)", "coverage")
        return
    gender_values = {v for v in values if v in GENDER_VALUES}
    if "other" in values:
        return
    if gender_values or not values & {"sg", "pl"}:
        missing = [x for x in genders if x not in values]
        if missing:
            at(g.start, f"agreement group misses {', '.join(missing)} and has no 'other' form",
               f"add {' | '.join(m + '=...' for m in missing)} or 'other=...' (used for non-binary and unknown "
               "gender)", "coverage")
    if values & {"sg", "pl"} and not gender_values and not {"sg", "pl"} <= values:
        missing = sorted({"sg", "pl"} - values)
        at(g.start, f"agreement group misses {', '.join(missing)} and has no 'other' form",
           f"add {missing[0]}=... or other=...", "coverage")


def probe_render(t: Template, parsed) -> list[tuple[int, str, str]]:
    """Render the template structurally for every agreement value and report anything slot-like left.

    Slots are replaced by neutral fillers; what remains must hold no bracket or brace, nothing that looks
    like a slot written with other brackets or look-alike letters, and (cloze) the answer marker once.
    """
    out = []
    values = sorted({v for g in parsed.groups for v in g.values}) or ["other"]
    for value in values:
        pieces = []
        for node in parsed.nodes:
            if isinstance(node, Text):
                pieces.append((node.value, node.start))
            elif isinstance(node, Slot):
                pieces.append((ANSWER_MARKER if node.name == "Y" else "Subject", None))
            else:
                form = node.form(value) if node.form(value) is not None else node.form("other") or ""
                pieces.append((form, node.start))
        for text, base in pieces:
            if base is None:
                continue
            m = _SLOT_LIKE.search(text)
            if m:
                out.append((base + m.start(), f"'{m.group()}' looks like a slot but is not one and would "
                                              "survive rendering", "write the slot as [X] or [Y] with ASCII "
                                                                   "brackets and Latin capitals"))
                return out
            m = re.search(r"[\[\]{}]", text)
            if m:  # pragma: no cover - the tokenizer rejects these; kept as the invariant's last guard
                out.append((base + m.start(), f"'{m.group()}' would survive rendering", "remove it"))
                return out
    return out


def validate_paths(paths: Iterable[str]) -> list[Issue]:
    """Validate files on disk (the `factatlas templates validate` command)."""
    issues: list[Issue] = []
    for p in paths:
        issues.extend(validate_file(read_language_file(p)))
    return issues
