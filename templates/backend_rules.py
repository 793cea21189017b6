"""Article and preposition rules: English "the", es/fr/pt/it/ca articles and fusions, the French country preposition,
German articles by case, Dutch de/het and in/op, the Arabic definite prefix (Greek and Hebrew have their
own backends: backend_el.py, backend_he.py).

Tables live in templates/data/articles.yaml. Whether a name takes an article depends on its semantic
type (common nouns always; countries in French/Portuguese/Italian; German masculine, feminine
and plural place names) and on per-name exceptions. A form that needs the gender of an entity whose
gender is unknown fails with a reason; it never falls back to a guess silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources

import yaml

from factatlas.records import Gender
from factatlas.templates.lexicon import LexiconEntry
from factatlas.templates.morphology import (
    EXACT,
    FAILED,
    GUESSED,
    NONE,
    Features,
    InflectionRequest,
    InflectionResult,
)

# languages whose tables in articles.yaml are read by a backend of their own (backend_el.py, backend_he.py)
OWN_BACKENDS = ("el", "he")
VOWELS = set("aeiouyàâäáéèêëíìîïóòôöúùûüœæAEIOUYÀÂÄÁÉÈÊËÍÌÎÏÓÒÔÖÚÙÛÜŒÆ")
_IT_LO = ("s", "z", "gn", "ps", "x", "y", "pn")


@cache
def article_tables() -> Mapping[str, Mapping]:
    return yaml.safe_load(resources.files("factatlas.templates").joinpath("data/articles.yaml").read_text("utf-8"))


class _Cannot(Exception):
    pass


def _gender_key(gender: Gender, number: str) -> str:
    base = {Gender.MASCULINE: "masc", Gender.FEMININE: "fem", Gender.NEUTER: "neut"}.get(gender, "")
    if number == "pl":
        return f"{base}.pl" if base else "pl"
    return base


def _pick(table: Mapping[str, str], key: str, what: str) -> str:
    if key in table:
        return table[key]
    if key.endswith(".pl") and "pl" in table:
        return table["pl"]
    if key == "pl":
        values = {v for k, v in table.items() if k.endswith("pl")}
        if len(values) == 1:
            return values.pop()
    raise _Cannot(f"no {what} for gender/number '{key or 'unknown'}'")


def _starts_with_vowel(text: str, spec: Mapping) -> bool:
    if not text:
        return False
    if any(text == w or text.startswith(w + " ") for w in spec.get("no_elision", ())):
        return False  # a vowel letter read as a consonant: «de One Piece» (/wan/), never «d'One Piece»
    if _semivowel(text, spec.get("semivowels", ())):
        return False  # ca: «el Iemen», «de Iàssir Arafat», «de Huelva»: a semivowel i/u is a consonant
    if text[0] in "hH":
        aspire = spec.get("h_aspire", ())
        return not any(text == w or text.startswith(w + " ") or text.lower().startswith(w.lower())
                       for w in aspire)
    if text[0] in "yY" and len(text) > 1 and text[1] in VOWELS:
        return False  # a consonantal y: le Yémen, au Yémen, la Yougoslavie
    return text[0] in VOWELS


def _semivowel(text: str, letters) -> bool:
    """An initial ``letters`` (ca i/u, also after h) before another vowel is a semivowel: «el Iemen», «de Huelva»."""
    low = text.lower()
    if low[:1] == "h":
        low = low[1:]
    return len(low) > 1 and low[0] in letters and low[1] in VOWELS


def _capitalise(text: str, request: InflectionRequest) -> str:
    return text[:1].upper() + text[1:] if request.sentence_initial and text else text


def takes_article(label: str, etype: str, spec: Mapping) -> bool:
    if label in spec.get("without_article", ()):
        return False
    if label in spec.get("with_article", ()):
        return True
    if etype in spec.get("article_types", ()):
        return True
    # a place named by a common noun (fr «tour Eiffel», «gouvernorat de …») takes the article; a proper
    # name (Marrakech, Burj Khalifa) does not
    if etype in spec.get("common_head_types", ()):
        first = label.split(" ", 1)[0]
        return label[:1].islower() or first in spec.get("admin_heads", {}) or first in spec.get("article_heads", ())
    return False


def _join(*parts: str) -> str:
    out = ""
    for p in parts:
        if not p:
            continue
        out = p if not out else (out + p if out.endswith("'") else out + " " + p)
    return out


class RulesBackend:
    name = "rules"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        spec = article_tables().get(lang)
        if spec is None or lang in OWN_BACKENDS or features.particle or features.number:
            return None
        if features.is_plain:
            return InflectionResult(_capitalise(label, request), NONE, self.name)
        try:
            choice = None
            if lang == "en":
                form, status = _english(label, features, request, spec)
            elif lang == "ar":
                form, status = _semitic(label, features, request, spec)
            elif lang == "de":
                form, status = _german(label, features, request, spec)
            elif lang == "nl":
                form, status = _dutch(label, features, request, spec)
            else:
                form, status, choice = _romance_form(label, lang, features, request, spec)
        except _Cannot as e:
            return InflectionResult(label, FAILED, self.name, f"{lang} {features.describe()} of '{label}': {e}")
        detail = ""
        if status == GUESSED:
            detail = f"gender from {request.agreement.source or 'nothing'}"
        elif status == EXACT and not _entry_decides(request):
            # the rules composed the phrase (an article, a preposition, an ending from a table): only a form
            # found whole, or a phrase whose every choice the lexicon entry made, is exact
            status, detail = GUESSED, f"composed by the {lang} rules"
        return InflectionResult(_capitalise(form, request), status, self.name, detail, choice)


def _entry_decides(request: InflectionRequest) -> bool:
    """The entity's lexicon entry made the choices of the phrase (its article class, preposition class or
    gender): the rule only spelled them out."""
    entry = request.entry
    return entry is not None and bool(entry.article or entry.prep or entry.gender)


def _status(request: InflectionRequest, used_gender: bool) -> str:
    src = request.agreement.source
    return GUESSED if used_gender and (src.startswith("suffix") or not src) else EXACT


# ---- English -----------------------------------------------------------------------------------

def english_takes_the(label: str, etype: str, spec: Mapping) -> bool:
    """Whether a name takes "the": the United States, the Netherlands, the Eiffel Tower — not France.

    Listed names first (``with_article`` / ``without_article``), then name patterns from the table
    (``prefixes`` such as "United ", "Republic of "; ``suffixes`` such as " Islands", " Tower"), then the
    semantic types that are common nouns (``article_types``)."""
    if label in spec.get("without_article", ()):
        return False
    if label in spec.get("with_article", ()):
        return True
    if any(label.startswith(p) for p in spec.get("prefixes", ())):
        return True
    if any(label.endswith(x) for x in spec.get("suffixes", ())):
        return True
    return etype in spec.get("article_types", ())


def _english(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    if f.article != "def" or f.preposition or f.case:
        raise _Cannot("English templates may only ask for `def`")
    if req.entry is not None and req.entry.article:
        takes = req.entry.article == "def"  # the lexicon entry decides before the name patterns
    else:
        takes = english_takes_the(label, req.entity_type, spec)
    if label[:4].lower() == "the " or not takes:
        return label, EXACT
    return _join(spec["definite"], label), EXACT


# ---- Romance -----------------------------------------------------------------------------------

def _split_label_article(label: str, spec: Mapping) -> tuple[str | None, str]:
    """«Le Caire» -> ("le", "Caire"); «Il Cairo» -> ("il", "Cairo"); «L'Aquila» -> ("l'", "Aquila")."""
    if label in spec.get("keep_label_article", ()):
        return None, label
    for art in spec.get("label_articles", ()):
        sep = "" if art.endswith("'") else " "
        if label.startswith(art + sep) and len(label) > len(art) + len(sep):
            return art.lower(), label[len(art) + len(sep):]
    return None, label


def _romance_form(label: str, lang: str, f: Features, req: InflectionRequest, spec: Mapping
                  ) -> tuple[str, str, tuple[str, str] | None]:
    """(form, status, choice): the lexicon entry of the entity first (a whole form for the slot, else its
    gender, article and preposition class feed the rules), then the rule tables. ``choice`` names the
    source of a decision the audit lists: ("lexicon", file:line) or ("rule:<name>", what)."""
    entry = req.entry  # a whole form of the entry for this slot was already taken by the renderer
    where = ("lexicon", f"{label} <- {entry.where}") if entry is not None else None
    if lang == "fr":
        found = _french_locative(label, f, req, spec, entry)
    elif lang == "it":
        found = _italian_locative(label, f, req, spec, entry)
    else:
        found = None
    if found is not None:
        form, rule = found
        return form, EXACT, where if entry is not None and entry.prep else ((rule, form) if rule else None)
    form, status = _romance(label, lang, f, req, spec, entry)
    return form, status, where


def _takes(label: str, req: InflectionRequest, spec: Mapping, entry: LexiconEntry | None) -> bool:
    if entry is not None and entry.article:
        return entry.article == "def"
    return takes_article(label, req.entity_type, spec)


def _definite_phrase(label: str, lang: str, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    """(article, noun phrase) of a name that takes the article: an administrative head noun is lower-cased
    («le gouvernorat de Monastir», «lo Stato di New York»), other names keep their capital («il Lazio»)."""
    found = _admin_head_article(label, spec, lang)
    if found is not None:
        return found
    ag = req.agreement
    if "elided" in spec and ag.number != "pl" and _starts_with_vowel(label, spec):
        return spec["elided"], label
    article = _pick(spec["definite"], _gender_key(ag.gender, ag.number), "definite article")
    if lang == "it":
        article = _italian_article(article, label, ag.number)
    return article, label


def _fuse(prep: str, article: str, body: str, spec: Mapping) -> str:
    fused = spec.get("fusions", {}).get(prep, {}).get(article)
    written = spec.get("prepositions", {}).get(prep, prep)
    return _join(fused, body) if fused else _join(written, article, body)


def _french_locative(label: str, f: Features, req: InflectionRequest, spec: Mapping,
                     entry: LexiconEntry | None) -> tuple[str, str] | None:
    """fr `[Y.a]`, `[Y.en]`, `[Y.de]` of a place by its preposition class: en Californie, au Texas, aux
    Comores, à Cuba, dans le gouvernorat de Monastir; originaire de Californie, du Texas, du gouvernorat."""
    if f.article is not None or f.preposition not in ("a", "en", "de"):
        return None
    own_article, _ = _split_label_article(label, spec)
    admin = _admin_head_article(label, spec, "fr") if own_article is None else None
    cls = entry.prep if entry is not None and entry.prep else ("dans" if admin is not None else "")
    rule = "" if entry is not None and entry.prep else "rule:admin-head"
    if not cls:
        return None
    if cls == "à":
        if own_article is not None:  # Le Caire -> au Caire, du Caire
            return None
        if f.preposition == "de":
            return None
        return _join("à", label), rule
    if f.preposition in ("a", "en"):
        if cls == "dans":
            return _join("dans", *_definite_phrase(label, "fr", req, spec)), rule
        return _join(cls, label), rule
    # `de`: en-class names take no article (originaire de Californie, d'Ontario), the others fuse it
    if cls == "en":
        return (_join("d'", label) if _starts_with_vowel(label, spec) else _join("de", label)), rule
    if cls in ("au", "aux"):
        return _join("du" if cls == "au" else "des", label), rule
    article, body = _definite_phrase(label, "fr", req, spec)
    return _fuse("de", article, body, spec), rule


def _italian_locative(label: str, f: Features, req: InflectionRequest, spec: Mapping,
                      entry: LexiconEntry | None) -> tuple[str, str] | None:
    """it `[Y.a]`, `[Y.in]`, `[Y.di]` of a place: cities take «a» (ad before a-), regions «in» — bare for a
    feminine singular name (in California), with the article otherwise (nel Lazio, nella provincia di
    Riad); «di» fuses the article of a region (della California, del governatorato di Monastir)."""
    if f.article is not None or f.preposition not in ("a", "in", "di"):
        return None
    own_article, _ = _split_label_article(label, spec)
    if own_article is not None:  # Il Cairo -> al Cairo, La Mecca -> della Mecca
        return None
    admin = _admin_head_article(label, spec, "it")
    cls = entry.prep if entry is not None and entry.prep else ("in" if admin is not None else "")
    rule = "" if entry is not None and entry.prep else "rule:admin-head"
    with_article = cls == "in" or (cls == "a" and entry is not None and entry.article == "def")
    if not with_article:
        euphonic = _euphonic(f.preposition, label, spec)
        return (_join(euphonic, label), "rule:euphonic-d") if euphonic else None
    ag = req.agreement
    article, body = _definite_phrase(label, "it", req, spec)
    if f.preposition == "di":
        return _fuse("di", article, body, spec), rule
    if cls == "in" and admin is None and ag.gender is Gender.FEMININE and ag.number != "pl":
        return _join("in", label), rule  # in California, in Toscana (feminine regions drop the article)
    return _fuse("in" if cls == "in" else "a", article, body, spec), rule


def _romance(label: str, lang: str, f: Features, req: InflectionRequest, spec: Mapping,
             entry: LexiconEntry | None = None) -> tuple[str, str]:
    ag = req.agreement
    key = _gender_key(ag.gender, ag.number)
    if f.preposition == "en":
        return _french_en(label, req, spec, entry)
    used_gender = False
    own_article, body = _split_label_article(label, spec)
    if own_article is not None and spec.get("label_article_mode", "fuse") == "separate":
        # es: an article that is part of the name is written as is and never contracted (RAE: «de El
        # Cairo», «en El Cairo»); `def` adds nothing
        prep = spec.get("prepositions", {}).get(f.preposition) if f.preposition else None
        return _join(prep or "", label), EXACT
    label_has_article = own_article is not None
    head_article = (_admin_head_article(label, spec, lang)
                    if f.article == "def" and own_article is None and (entry is None or entry.article != "none")
                    else None)
    if head_article is not None:  # «Gouvernorat de Ninive» -> «le gouvernorat de Ninive»
        own_article, body = head_article
        label = _join(own_article, body)
    article = None
    if f.article == "def" and own_article is None and _takes(label, req, spec, entry):
        vowel = _starts_with_vowel(body, spec)
        if "elided" in spec and vowel and ag.number != "pl":
            article = spec["elided"]
        else:
            article = _pick(spec["definite"], key, "definite article")
            used_gender = True
            if lang == "it":
                article = _italian_article(article, body, ag.number)
    elif f.article == "indef":
        article = _pick(spec["indefinite"], key, "indefinite article")
        used_gender = True
    prep = None
    if f.preposition:
        prep = spec.get("prepositions", {}).get(f.preposition)
        if prep is None:
            raise _Cannot(f"preposition '{f.preposition}' is not defined for {lang}")
        if own_article is not None and article is None:
            # the name's own article fuses with the preposition; a title keeps its capital: it «Il
            # padrino» -> «del Padrino», pt «O Poderoso Chefão» -> «do Poderoso Chefão»
            article = own_article
            if label_has_article:
                body = body[:1].upper() + body[1:]
        else:
            body = label
    if prep and article:
        fused = spec.get("fusions", {}).get(f.preposition, {}).get(article)
        if fused:
            text = _join(fused, body)
        elif label_has_article and article == own_article:
            text = _join(prep, label)  # an article of the name that does not contract keeps its capital: fr «à La Mecque»
        else:
            text = _join(prep, article, body)
    elif prep:
        elided = spec.get("elide", {}).get(f.preposition)
        euphonic = _euphonic(f.preposition, body, spec)
        if euphonic:
            text = _join(euphonic, body)
        else:
            text = _join(elided, body) if elided and _starts_with_vowel(body, spec) else _join(prep, body)
    elif label_has_article and f.article == "def" and _opens_with(label, spec.get("label_article_lower", ())):
        text = _join(own_article, body)  # it: «è il Cairo», «la Mecca» (the article is not part of the name)
    else:
        text = _join(article or "", body if article else label)
    return text, _status(req, used_gender)


def _opens_with(label: str, articles) -> bool:
    return any(label.startswith(a if a.endswith("'") else a + " ") for a in articles)


def _euphonic(prep: str | None, body: str, spec: Mapping) -> str | None:
    """it «ad» before the same vowel (ad Amburgo, ad Andorra): `euphonic: {a: [ad, a]}` in articles.yaml."""
    rule = spec.get("euphonic", {}).get(prep) if prep else None
    if rule and body[:1].lower() in rule[1]:
        return rule[0]
    return None


def _admin_head_article(label: str, spec: Mapping, lang: str = "") -> tuple[str, str] | None:
    """(article, label with the head noun lower-cased) for a label opening with an administrative or
    landmark common noun listed in ``admin_heads``: «Musée du Louvre» -> ("le", "musée du Louvre")."""
    heads = spec.get("admin_heads", {})
    first, _, rest = label.partition(" ")
    if first not in heads:
        return None
    # État keeps its capital in the political sense (l'État de New York); the other heads are common nouns
    noun = first if first in spec.get("capitalised_heads", ()) else first[0].lower() + first[1:]
    body = " ".join(x for x in (noun, rest) if x)
    if "elided" in spec and _starts_with_vowel(noun, spec):
        return spec["elided"], body
    article = spec["definite"][heads[first]]
    if lang == "it":
        article = _italian_article(article, noun, "sg")
    return article, body


def _italian_article(article: str, body: str, number: str) -> str:
    low = body.lower()
    vowel = bool(low) and low[0] in "aeiouàèéìòù"
    lo_case = low.startswith(_IT_LO) and not (low.startswith("s") and len(low) > 1 and low[1] in "aeiou")
    if article == "il" and lo_case:
        return "lo"
    if article == "i" and (vowel or lo_case):
        return "gli"
    return article


def _french_en(label: str, req: InflectionRequest, spec: Mapping, entry: LexiconEntry | None = None
               ) -> tuple[str, str]:
    exceptions = spec.get("en_exceptions", {})
    if label in exceptions:
        return exceptions[label], EXACT
    own_article, body = _split_label_article(label, spec)
    if own_article is not None:  # Le Caire -> au Caire
        fused = spec["fusions"]["a"].get(own_article)
        return _join(fused or "à " + own_article, body), EXACT
    if not _takes(label, req, spec, entry):
        return _join("à", label), EXACT
    ag = req.agreement
    if ag.number == "pl":
        return _join("aux", label), EXACT
    if ag.gender is Gender.FEMININE or _starts_with_vowel(label, spec):
        return _join("en", label), _status(req, ag.gender is Gender.FEMININE)
    if ag.gender is Gender.MASCULINE:
        return _join("au", label), _status(req, True)
    raise _Cannot("gender unknown: cannot choose between 'en' and 'au'")


# ---- German ------------------------------------------------------------------------------------

def _german(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    ag = req.agreement
    case = f.case or (spec["preposition_case"].get(f.preposition) if f.preposition else None) or "nom"
    common = req.entity_type in spec.get("article_types", ())
    gkey = "pl" if ag.number == "pl" else _gender_key(ag.gender, "sg")
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
        article = _pick(spec["definite"][case], gkey, f"definite article ({case})")
        used_gender = True
    elif f.article == "indef":
        if not common:
            raise _Cannot("an indefinite article needs a common noun")
        article = _pick(spec["indefinite"][case], gkey, f"indefinite article ({case})")
        used_gender = True
    elif f.article == "def" and not gkey:
        raise _Cannot("gender unknown: cannot tell whether the name takes an article")
    noun = _german_adjectives(label, case, gkey) if article else label
    if case == "dat" and gkey == "pl" and noun[-1:] not in ("n", "s"):
        noun += "n"  # dative plural: den Vereinigten Arabischen Emiraten
    if case == "gen":
        if article is None:
            # Proper names without article: Deutschlands, Paris' (Duden: apostrophe after s, ß, x, z)
            noun = label + ("'" if label[-1:].lower() in ("s", "ß", "x", "z") else "s")
        elif gkey in ("masc", "neut") and apposition:
            head, _, rest = noun.partition(" ")  # the head noun first: des Königreichs der Niederlande
            noun = _join(head + "s", rest)
        elif gkey in ("masc", "neut") and (common or label in spec.get("with_article", ())):
            noun += "s"  # des Klaviers, des Vereinigten Königreichs
    text = _join(article or "", noun)
    if f.preposition:
        prep = spec["prepositions"][f.preposition]
        if f.preposition == "in" and req.entry is not None and req.entry.prep in spec.get("place_prepositions", ()):
            prep = req.entry.prep  # islands: auf den Philippinen, auf den Komoren (lexicon)
        fused = spec["fusions"].get(prep, {}).get(article) if article else None
        text = _join(fused, noun) if fused else _join(prep, text)
    if _entry_decides(req):
        return text, EXACT  # article, preposition and gender decided by the lexicon entry
    return text, _status(req, used_gender)


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
        raise _Cannot("Dutch templates may ask for `def` and `in` only")
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
        key = "pl" if ag.number == "pl" else _gender_key(ag.gender, "sg")
        article = _pick(spec["definite"], key, "definite article")
    noun = _dutch_adjectives(label, article, spec) if article else label
    text = _join(article or "", noun)
    if f.preposition == "in":
        prep = "in"
        if entry is not None and entry.prep:
            if entry.prep not in spec.get("place_prepositions", ()):
                raise _Cannot(f"lexicon preposition {entry.prep!r} is not one of {spec.get('place_prepositions')}")
            prep = entry.prep
        text = _join(prep, text)
    if _entry_decides(req):
        return text, EXACT
    return text, _status(req, article is not None)


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


# ---- Arabic ------------------------------------------------------------------------------------

def _semitic(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    if f.preposition or f.article == "indef":
        raise _Cannot("only the definite article is defined")
    prefix = spec["prefix"]
    if label.startswith(prefix) or not takes_article(label, req.entity_type, spec):
        return label, EXACT
    if " " in label:
        words = label.split(" ")
        if any(w.startswith(prefix) for w in words[1:]):
            # a construct state (إضافة) already definite through its last noun: موسيقى الروك stays as is
            return label, EXACT
        definite = " ".join(w if w.startswith(prefix) else prefix + w for w in words)
        # noun + agreeing adjectives all take the article: موسيقى كلاسيكية -> الموسيقى الكلاسيكية. When
        # every word after the head ends like an adjective (nisba -ي/-ية, listed in `adjective_endings`)
        # that is certain; otherwise the phrase may be an indefinite construct (طقم طبول -> طقم الطبول),
        # which a label does not tell: flagged guessed
        endings = tuple(spec.get("adjective_endings", ()))
        sure = bool(endings) and all(w.endswith(endings) for w in words[1:])
        return definite, EXACT if sure else GUESSED
    return prefix + label, EXACT
