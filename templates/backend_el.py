"""Greek: the definite article by gender, number and case, σε fused with it, and the noun's case forms.

A Greek place name always takes the article (η Αίγυπτος, το Κάιρο, οι Ηνωμένες Πολιτείες), and «σε» fuses
with it (στην Αίγυπτο, στο Κάιρο, στις Ηνωμένες Πολιτείες, στον Καναδά). The feminine accusative «την»
keeps its -ν only before a vowel or a stop (την Αίγυπτο, την Κίνα, τη Γαλλία, στη Ρώμη). The noun itself
declines, and so do the adjectives inside a name (οι Ηνωμένες Πολιτείες -> των Ηνωμένων Πολιτειών).

Every form comes from the entity's lexicon entry (``templates/data/lexicon/el.yaml``: gender, number and
the forms a rule cannot make: Αίγυπτος -> Αιγύπτου, Κάιρο -> Καΐρου, Παρίσι -> Παρισιού, Τόκιο -> Τόκιο)
or from a named rule, recorded as the result's ``choice``:

- ``el-indeclinable``: a name whose last word ends in a consonant other than -ς is foreign and does
  not decline (του Ιράκ, στο Ριάντ, της Ιερουσαλήμ);
- ``el-neuter-acc``: a neuter's accusative is its nominative (στο Λονδίνο, στο Μείζον Λονδίνο);
- ``el-fem-acc``: a feminine singular's accusative is its nominative, but -ος loses its -ς (την Αίγυπτο);
- ``el-masc-acc``: a masculine singular's words in -ος/-ας/-ης lose the -ς (τον Καναδά, τον Πύργο του
  Άιφελ); a genitive or prepositional complement (του Άιφελ) stays as it is;
- ``el-fem-gen``: a feminine singular's words in -α/-η add -ς, stress unchanged (της Ιταλίας, της Νέας
  Υόρκης, της Σαουδικής Αραβίας);
- ``el-masc-gen``: a masculine in -ας/-ης drops the -ς (του Καναδά, του Νίγηρα, του Δούναβη);
- ``el-admin-head``: a name headed by an administrative common noun (`admin_heads` in articles.yaml:
  Κυβερνείο, Επαρχία, Πολιτεία, Καντόνι, Εμιράτο …), capitalised as a Wikipedia title, is written with a
  small letter after its article: «στο κυβερνείο της Αλεξάνδρειας», «την επαρχία του Ριάντ».

Everything else — a neuter or a plural in the genitive, a masculine in -ος (the stress may move:
Λίβανος -> Λιβάνου), a foreign name in a vowel that may or may not decline (Μεξικό -> Μεξικού, Τόκιο ->
Τόκιο) — needs the lexicon's form; without one the slot fails with the reason and the fix, never the
nominative in its place.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from factatlas.records import Gender
from factatlas.templates.morphology import (
    EXACT,
    FAILED,
    GUESSED,
    NONE,
    Features,
    InflectionRequest,
    InflectionResult,
)
from factatlas.templates.rules_base import article_tables

_GREEK_VOWELS = set("αεηιουωάέήίόύώϊϋΐΰ")
# the feminine accusative article keeps its -ν before these (the 2004 school grammar's rule)
_KEEP_N_LETTERS = set("κπτξψ") | _GREEK_VOWELS
_KEEP_N_PAIRS = ("μπ", "ντ", "γκ", "τσ", "τζ")
# words after which a name's complement starts: it stays as it is (Πύργος του Άιφελ -> Πύργο του Άιφελ)
_COMPLEMENT_WORDS = frozenset({"του", "της", "των", "και"})


class _Cannot(Exception):
    pass


def _bare(text: str) -> str:
    """Lower case without accents or diaeresis, for matching endings."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))


def _gender_key(gender: Gender, number: str) -> str:
    base = {Gender.MASCULINE: "masc", Gender.FEMININE: "fem", Gender.NEUTER: "neut"}.get(gender, "")
    if not base:
        raise _Cannot("gender unknown: the article and the endings need it; give the entity a lexicon "
                      "entry with `gender` in templates/data/lexicon/el.yaml")
    return f"{base}.pl" if number == "pl" else base


def keeps_final_n(word: str) -> bool:
    """Whether «την»/«στην» keep their -ν before ``word``: before a vowel or a stop (κ π τ ξ ψ μπ ντ γκ τσ
    τζ), so «την Αίγυπτο», «στην Κίνα», but «τη Γαλλία», «στη Ρώμη». Latin letters and digits keep it."""
    bare = _bare(word.lstrip("«\"'("))
    if not bare:
        return True
    if not ("α" <= bare[0] <= "ω"):
        return True  # στην CBS, στην 2M: read as a name, the full form is the safe one
    return bare[0] in _KEEP_N_LETTERS or bare[:2] in _KEEP_N_PAIRS


def _declinable_words(label: str) -> tuple[list[str], list[str]]:
    """(the words that take the case, the complement that does not): «Πύργος του Άιφελ» -> (["Πύργος"],
    ["του", "Άιφελ"]); «Νέα Υόρκη» -> (["Νέα", "Υόρκη"], [])."""
    words = label.split(" ")
    for i, w in enumerate(words):
        if i > 0 and w in _COMPLEMENT_WORDS:
            return words[:i], words[i:]
    return words, []


def _indeclinable(label: str) -> bool:
    head, _ = _declinable_words(label)
    last = _bare(head[-1]).rstrip(".")
    return bool(last) and ("α" <= last[-1] <= "ω") and last[-1] not in _GREEK_VOWELS and last[-1] not in "ςσ"


def _drop_s(word: str, endings: tuple[str, ...]) -> str:
    return word[:-1] if _bare(word).endswith(endings) else word


def decline(label: str, case: str, gkey: str) -> tuple[str, str]:
    """(form, rule) of a label in ``case`` by the named rules, or _Cannot when only a lexicon can say."""
    if case == "nom":
        return label, ""
    if _indeclinable(label):
        return label, "el-indeclinable"
    head, rest = _declinable_words(label)
    if case == "acc":
        if gkey.startswith("neut"):
            return label, "el-neuter-acc"
        if gkey.endswith(".pl"):
            if all(_bare(w).endswith(("ες", "α")) or not _bare(w)[-1:].isalpha() for w in head):
                return label, "el-plural-acc"
            raise _Cannot(f"no accusative rule for the plural '{label}'; give its `acc` form in the lexicon")
        if gkey == "fem":
            return " ".join([*(_drop_s(w, ("ος",)) for w in head), *rest]), "el-fem-acc"
        return " ".join([*(_drop_s(w, ("ος", "ας", "ης")) for w in head), *rest]), "el-masc-acc"
    if case != "gen":
        raise _Cannot(f"case '{case}' does not exist in Greek; use nom, gen or acc")
    if gkey == "fem":
        words = []
        for w in head:
            if not _bare(w).endswith(("α", "η")) or "-" in w:
                raise _Cannot(f"no genitive rule for '{w}' in '{label}' (a feminine in -ος, a foreign or "
                              "hyphenated name); give its `gen` form in the lexicon")
            words.append(w + "ς")
        return " ".join([*words, *rest]), "el-fem-gen"
    if gkey == "masc":
        words = []
        for w in head:
            if not _bare(w).endswith(("ας", "ης")):
                raise _Cannot(f"no genitive rule for '{w}' in '{label}' (a masculine in -ος may move its stress: "
                              "Λίβανος -> Λιβάνου); give its `gen` form in the lexicon")
            words.append(w[:-1])
        return " ".join([*words, *rest]), "el-masc-gen"
    raise _Cannot(f"the genitive of the {gkey} name '{label}' is lexical (Μεξικό -> Μεξικού but Τόκιο -> "
                  "Τόκιο, Εμιράτα -> Εμιράτων); give its `gen` form in the lexicon")


def _admin_head(label: str, noun: str, spec: Mapping) -> str | None:
    """``noun`` (the label in a case) with its administrative head noun in small letters, when the label
    opens with one (the table lists the nominatives: Πολιτεία -> της πολιτείας της Νέας Υόρκης)."""
    head, _, rest = label.partition(" ")
    if rest and head in spec.get("admin_heads", ()):
        return noun[:1].lower() + noun[1:]
    return None


class GreekBackend:
    name = "greek"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        spec = article_tables().get(lang)
        if lang != "el" or spec is None or features.particle or features.number:
            return None
        if features.is_plain:
            return InflectionResult(_capitalise(label, request), NONE, self.name)
        try:
            form, decided_by, rule = _greek(label, features, request, spec)
        except _Cannot as e:
            return InflectionResult(label, FAILED, self.name, f"el {features.describe()} of '{label}': {e}")
        entry = request.entry
        where = entry.where if entry is not None else ""
        if decided_by == "lexicon":
            status, detail, choice = EXACT, f"lexicon {where}", ("lexicon", f"{label} <- {where}")
        else:
            status = GUESSED
            detail = f"{rule or 'article table'}; gender from {request.agreement.source or 'nothing'}"
            choice = (f"rule:{rule}", form) if rule else None
        return InflectionResult(_capitalise(form, request), status, self.name, detail, choice)


def _capitalise(text: str, request: InflectionRequest) -> str:
    return text[:1].upper() + text[1:] if request.sentence_initial and text else text


def _greek(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, str, str]:
    """(form, "lexicon" | "rule", the rule's name). The lexicon decides when its entry gave the gender
    and either the form or nothing to change (a nominative, an indeclinable name)."""
    if f.preposition not in (None, "se"):
        raise _Cannot(f"preposition '{f.preposition}' is not Greek; use se (σε)")
    case = f.case or ("acc" if f.preposition else "nom")
    if f.preposition and case != "acc":
        raise _Cannot("σε takes the accusative")
    if req.entity_type == "work" and f.article:
        raise _Cannot("a work is named by its kind (η ταινία «…»): add its P31 class to `title_nouns` in "
                      "templates/data/languages.yaml")
    if req.entity_type == "person" and f.article:
        raise _Cannot("a person's article is written by the template ({X: masc=ο | fem=η | other=ο/η})")
    entry = req.entry
    ag = req.agreement
    gkey = _gender_key(ag.gender, ag.number)
    written = entry.forms.get(case) if entry is not None and case != "nom" else None
    if written is not None:
        noun, rule = written, ""
    else:
        noun, rule = decline(label, case, gkey)
    lowered = _admin_head(label, noun, spec) if f.article else None
    if lowered is not None:
        noun = lowered
        rule = rule or "el-admin-head"
    article = None
    if f.article == "def":
        article = spec["definite"][case][gkey]
        if article == "την" and not keeps_final_n(noun):
            article = "τη"
    elif f.article == "indef":
        table = spec["indefinite"][case]
        if gkey not in table:
            raise _Cannot(f"no indefinite article for '{gkey}'")
        article = table[gkey]
    if f.preposition:
        text = (("σ" + article) if article else "σε") + " " + noun
    else:
        text = f"{article} {noun}" if article else noun
    entry_gender = entry is not None and entry.gender is not None and ag.source.startswith("lexicon")
    certain_rule = rule in ("", "el-indeclinable", "el-neuter-acc", "el-plural-acc", "el-admin-head") or (
        rule == "el-fem-acc" and noun == label)
    decided = "lexicon" if entry_gender and (written is not None or certain_rule) else "rule"
    return text, decided, rule
