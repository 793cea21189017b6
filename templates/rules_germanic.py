"""German and Dutch article rules: German articles and adjective endings by case (im/in der/in den, des
Irak), Dutch de/het and in/op, and the adjectives before a name."""

from __future__ import annotations

import re
from collections.abc import Mapping

from factatlas.templates.morphology import EXACT, Features, InflectionRequest
from factatlas.templates.rules_base import (
    Cannot,
    composed_status,
    entry_decides,
    gender_key,
    join_phrase,
    pick_form,
)

# ---- German ------------------------------------------------------------------------------------

def _german(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    ag = req.agreement
    case = f.case or (spec["preposition_case"].get(f.preposition) if f.preposition else None) or "nom"
    common = req.entity_type in spec.get("article_types", ())
    gkey = "pl" if ag.number == "pl" else gender_key(ag.gender, "sg")
    article = None
    used_gender = False
    if req.entity_type in spec.get("common_head_types", ()):
        # a place takes the article when named by a common noun whose gender a lexicon gave (der
        # Eiffelturm, das Kolosseum, der Kanton Bern, die Toskana) and none as a bare proper name (Bayern,
        # Texas) — a gender from a suffix rule or the type default does not decide that
        takes = label in spec.get("with_article", ()) or ag.source.startswith("lexicon")
        if req.entry is not None and req.entry.article:
            takes = req.entry.article == "def"  # the lexicon entry says whether the name takes it
        if f.article == "def" and not takes:
            f = Features(case=f.case, preposition=f.preposition)
        common = takes
    elif req.entry is not None and req.entry.article == "none" and f.article == "def":
        f = Features(case=f.case, preposition=f.preposition)  # a name the lexicon says is used bare
    # a name headed by a common noun takes its article whatever its gender: das Königreich der Niederlande
    apposition = ag.source == "lexicon:apposition"
    listed = req.entry is not None and req.entry.article == "def"
    if f.article == "def" and (common or apposition or listed or gkey in spec.get("proper_article_genders", ())
                               or label in spec.get("with_article", ())):
        article = pick_form(spec["definite"][case], gkey, f"definite article ({case})")
        used_gender = True
    elif f.article == "indef":
        if not common:
            raise Cannot("an indefinite article needs a common noun")
        article = pick_form(spec["indefinite"][case], gkey, f"indefinite article ({case})")
        used_gender = True
    elif f.article == "def" and not gkey:
        raise Cannot("gender unknown: cannot tell whether the name takes an article")
    noun = _german_adjectives(label, case, gkey) if article else label
    if case == "dat" and gkey == "pl" and noun[-1:] not in ("n", "s"):
        noun += "n"  # dative plural: den Vereinigten Arabischen Emiraten
    if case == "gen":
        if article is None:
            # Proper names without article: Deutschlands, Paris' (Duden: apostrophe after s, ß, x, z)
            noun = label + ("'" if label[-1:].lower() in ("s", "ß", "x", "z") else "s")
        elif gkey in ("masc", "neut") and apposition:
            head, _, rest = noun.partition(" ")  # the head noun first: des Königreichs der Niederlande
            noun = join_phrase(head + "s", rest)
        elif gkey in ("masc", "neut") and (common or label in spec.get("with_article", ())):
            noun += "s"  # des Klaviers, des Vereinigten Königreichs
    text = join_phrase(article or "", noun)
    if f.preposition:
        prep = spec["prepositions"][f.preposition]
        if f.preposition == "in" and req.entry is not None and req.entry.prep in spec.get("place_prepositions", ()):
            prep = req.entry.prep  # islands: auf den Philippinen, auf den Komoren (lexicon)
        fused = spec["fusions"].get(prep, {}).get(article) if article else None
        text = join_phrase(fused, noun) if fused else join_phrase(prep, text)
    if entry_decides(req):
        return text, EXACT  # article, preposition and gender decided by the lexicon entry
    return text, composed_status(req, used_gender)


def _german_adjectives(label: str, case: str, gkey: str) -> str:
    """Weak adjective endings after the definite article: die Vereinigten Staaten, der Dominikanischen Republik.

    Capitalised words ending in -e before the last word are the name's adjectives; they end in -e in the
    nominative singular (and the accusative singular feminine/neuter) and in -en everywhere else.
    """
    words = label.split()
    if len(words) < 2:
        return label
    weak_e = gkey != "pl" and (case == "nom" or (case == "acc" and gkey in ("fem", "neut")))
    out = []
    for w in words[:-1]:
        if w[:1].isupper():
            # a strong ending of the article-less label (Vereinigtes Königreich, Arabischer Pop) becomes
            # weak after the article: das Vereinigte Königreich, im Vereinigten Königreich
            w = _GERMAN_STRONG.sub(r"\1e", w)
            if w.endswith("e"):
                w += "" if weak_e else "n"
        out.append(w)
    return " ".join([*out, words[-1]])


_GERMAN_STRONG = re.compile(r"^(\w+(?:isch|ig|lich|t))(?:es|er)$")


# ---- Dutch -------------------------------------------------------------------------------------

def _dutch(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    """nl `def`: «de» for common-gender nouns and every plural, «het» for neuter singulars, only where the name
    takes the article (lexicon entry, common nouns, a place headed by a lower-case kind noun: «het gouvernement
    Caïro»); `in`: «in», or the entry's island preposition («op Hawaï», «op de Filipijnen»). Adjectives of the
    name take -e after the article (`_dutch_adjectives`), except in names that keep them bare («het Verenigd
    Koninkrijk»)."""
    if f.case or f.article == "indef" or (f.preposition and f.preposition != "in"):
        raise Cannot("Dutch templates may ask for `def` and `in` only")
    entry = req.entry
    ag = req.agreement
    if entry is not None and entry.article:
        takes = entry.article == "def"
    elif req.entity_type in spec.get("common_head_types", ()):
        # a place takes the article when named by a common noun before the name («het kanton Bern», «de staat
        # New York»: the disambiguator made head) or listed; a bare proper name does not (Caïro, Beieren)
        takes = label[:1].islower() or label in spec.get("with_article", ())
    else:
        takes = req.entity_type in spec.get("article_types", ()) or label in spec.get("with_article", ())
    article = None
    if f.article == "def" and takes:
        key = "pl" if ag.number == "pl" else gender_key(ag.gender, "sg")
        article = pick_form(spec["definite"], key, "definite article")
    noun = _dutch_adjectives(label, article, spec) if article else label
    text = join_phrase(article or "", noun)
    if f.preposition == "in":
        prep = "in"
        if entry is not None and entry.prep:
            if entry.prep not in spec.get("place_prepositions", ()):
                raise Cannot(f"lexicon preposition {entry.prep!r} is not one of {spec.get('place_prepositions')}")
            prep = entry.prep
        text = join_phrase(prep, text)
    if entry_decides(req):
        return text, EXACT
    return text, composed_status(req, article is not None)


# adjective endings that no noun or foreign name of the sample shares (a bare «Port», «Mont», «Big» is not an
# adjective): -isch, -lijk, -baar, -aal, -eel, -ig (two syllables or more), and the participle «verenigd»
_DUTCH_ADJECTIVE = re.compile(r"(?:isch|lijk|baar|aal|eel|\w\w[^aeiou\s]ig|^verenigd)$")
_DUTCH_STOPS = ("van", "der", "den", "de", "het", "en")


def _dutch_adjectives(label: str, article: str | None, spec: Mapping) -> str:
    """A bare adjective before the head noun of a name takes -e after the article, with Dutch spelling
    (one vowel of a long closed syllable dropped): «Arabisch Museum» -> «het Arabische Museum», «Nationaal
    Park» -> «het Nationale Park», «Verenigd Emiraat» -> «het Verenigde Emiraat». Names listed in
    `bare_adjective_names` keep it bare, as Dutch writes them («het Verenigd Koninkrijk», «het Egyptisch
    Museum»); a hyphenated compound is one word («het Egyptisch-Arabisch»)."""
    words = label.split(" ")
    if article is None or len(words) < 2 or label in spec.get("bare_adjective_names", ()):
        return label
    head = next((i for i, w in enumerate(words) if i > 0 and w in _DUTCH_STOPS), len(words)) - 1
    out = []
    for i, w in enumerate(words):
        if i < head and w[:1].isupper() and "-" not in w and _DUTCH_ADJECTIVE.search(w.lower()):
            if re.search(r"([aeou])\1[^aeiou]$", w):
                w = w[:-2] + w[-1]  # Nationaal -> Nationale, Groot -> Grote
            w += "e"
        out.append(w)
    return " ".join(out)
