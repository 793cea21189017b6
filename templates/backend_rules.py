"""Article and preposition rules: English "the", es/fr/pt/it/ca articles and fusions, the French country preposition,
German articles by case, Dutch de/het and in/op, the Arabic definite prefix (Greek and Hebrew have their
own backends: backend_el.py, backend_he.py).

Tables live in templates/data/articles.yaml. Whether a name takes an article depends on its semantic
type (common nouns always; countries in French/Portuguese/Italian; German masculine, feminine
and plural place names) and on per-name exceptions. A form that needs the gender of an entity whose
gender is unknown fails with a reason; it never falls back to a guess silently.
"""

from __future__ import annotations

from collections.abc import Mapping

from factatlas.records import Gender
from factatlas.templates.gender import is_region
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
from factatlas.templates.rules_base import (  # noqa: F401 (article_tables, takes_article: importable here)
    IT_LO,
    OWN_BACKENDS,
    VOWELS,
    Cannot,
    article_tables,
    capitalise,
    composed_status,
    entry_decides,
    gender_key,
    join_phrase,
    pick_form,
    semivowel,
    starts_with_vowel,
    takes_article,
)
from factatlas.templates.rules_germanic import _dutch, _german


class RulesBackend:
    name = "rules"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        spec = article_tables().get(lang)
        if spec is None or lang in OWN_BACKENDS or features.particle or features.number:
            return None
        if features.is_plain:
            return InflectionResult(capitalise(label, request), NONE, self.name)
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
        except Cannot as e:
            return InflectionResult(label, FAILED, self.name, f"{lang} {features.describe()} of '{label}': {e}")
        detail = ""
        if status == GUESSED:
            detail = f"gender from {request.agreement.source or 'nothing'}"
        elif status == EXACT and not entry_decides(request):
            # the rules composed the phrase (an article, a preposition, an ending from a table): only a form
            # found whole, or a phrase whose every choice the lexicon entry made, is exact
            status, detail = GUESSED, f"composed by the {lang} rules"
        return InflectionResult(capitalise(form, request), status, self.name, detail, choice)


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
        raise Cannot("English templates may only ask for `def`")
    if req.entry is not None and req.entry.article:
        takes = req.entry.article == "def"  # the lexicon entry decides before the name patterns
    else:
        takes = english_takes_the(label, req.entity_type, spec)
    if label[:4].lower() == "the " or not takes:
        return label, EXACT
    return join_phrase(spec["definite"], label), EXACT


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


def _takes(label: str, req: InflectionRequest, spec: Mapping, entry: LexiconEntry | None, lang: str = "") -> bool:
    if entry is not None and entry.article:
        return entry.article == "def"
    if lang and is_region(req.classes, lang) and label not in spec.get("without_article", ()):
        return True  # a region takes the article as a country does: la Bretagne, il Piemonte, le Marche
    return takes_article(label, req.entity_type, spec)


def _place_kind(label: str, lang: str, req: InflectionRequest, spec: Mapping, entry: LexiconEntry | None
                ) -> str | None:
    """"country" or "region" for a name that takes the place prepositions of a country (fr en/au/aux, it
    in/nel/negli, di + article), None for one that takes a city's (à Cuba, a Malta: the names listed
    `without_article`, or an entry that says `article: none`)."""
    if req.entity_type == "country":
        kind = "country"
    elif is_region(req.classes, lang):
        kind = "region"
    else:
        return None
    return kind if _takes(label, req, spec, entry, lang) else None


def _french_place(label: str, prep: str, req: InflectionRequest, spec: Mapping, kind: str = "country") -> str:
    """fr «en», «au», «aux» (prep `a` or `en`) or «de», «du», «des» (prep `de`) before a country or region
    that takes the article: a plural takes aux/des (aux États-Unis), a feminine or vowel-initial singular en/de
    without article (en France, en Irak, de France, d'Irak), a masculine au/du (au Kenya, du Kenya); a plural
    region is a land one is in, not a destination: dans les Pouilles. An unknown gender is a failure: a name
    in -s may be a plural as well as a masculine (genders.yaml `type_suffixes`)."""
    ag = req.agreement
    if ag.number == "pl":
        if prep == "de":
            return join_phrase("des", label)
        return join_phrase("dans les" if kind == "region" else "aux", label)
    if ag.gender is Gender.UNKNOWN:
        raise Cannot(f"gender unknown ({ag.source or 'no rule'}): cannot choose between "
                     + ("'de', 'du' and 'des'" if prep == "de" else "'en', 'au' and 'aux'"))
    vowel = starts_with_vowel(label, spec)
    if ag.gender is Gender.FEMININE or vowel:
        if prep == "de":
            return join_phrase("d'", label) if vowel else join_phrase("de", label)
        return join_phrase("en", label)
    return join_phrase("du" if prep == "de" else "au", label)


def _italian_place(label: str, prep: str, req: InflectionRequest, spec: Mapping) -> str:
    """it «in» or «di» before a country or region that takes the article: a singular proper name takes «in»
    without article (in Kenya, in Zimbabwe, in Francia, in Lombardia), a plural or a name headed by a common
    noun (`article_heads`: Regno, Repubblica) «in» with it (negli Stati Uniti, nel Regno Unito, nelle Marche);
    «di» always fuses the article (del Kenya, dello Zimbabwe, dell'Uganda, della Francia, degli Stati Uniti),
    which fails when the gender it needs is unknown (a country in -a: genders.yaml `type_suffixes`)."""
    first = label.split(" ", 1)[0]
    headed = " " in label and first in spec.get("article_heads", ())
    if prep in ("a", "in") and req.agreement.number != "pl" and not headed:
        return join_phrase("in", label)
    article, body = _definite_phrase(label, "it", req, spec)
    return _fuse("di" if prep == "di" else "in", article, body, spec)


def _definite_phrase(label: str, lang: str, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    """(article, noun phrase) of a name that takes the article: an administrative head noun is lower-cased
    («le gouvernorat de Monastir», «lo Stato di New York»), other names keep their capital («il Lazio»)."""
    found = _admin_head_article(label, spec, lang)
    if found is not None:
        return found
    ag = req.agreement
    if "elided" in spec and ag.number != "pl" and starts_with_vowel(label, spec):
        return spec["elided"], label
    article = pick_form(spec["definite"], gender_key(ag.gender, ag.number), "definite article")
    if lang == "it":
        article = _italian_article(article, label, ag.number)
    return article, label


def _fuse(prep: str, article: str, body: str, spec: Mapping) -> str:
    fused = spec.get("fusions", {}).get(prep, {}).get(article)
    written = spec.get("prepositions", {}).get(prep, prep)
    return join_phrase(fused, body) if fused else join_phrase(written, article, body)


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
        # a country or region without a preposition class of its own takes a country's, from its gender and
        # number (never a city's «à»: «né à Zimbabwe»); one listed without article keeps «à» (à Cuba)
        exceptions = spec.get("en_exceptions", {})
        if f.preposition in ("a", "en") and label in exceptions and req.entity_type == "country":
            return exceptions[label], "rule:country"  # né en Israël, à Oman (a country named bare)
        kind = _place_kind(label, "fr", req, spec, entry) if own_article is None else None
        return (_french_place(label, f.preposition, req, spec, kind), f"rule:{kind}") if kind else None
    if cls == "à":
        if own_article is not None:  # Le Caire -> au Caire, du Caire
            return None
        if f.preposition == "de":
            return None
        return join_phrase("à", label), rule
    if f.preposition in ("a", "en"):
        if cls == "dans":
            return join_phrase("dans", *_definite_phrase(label, "fr", req, spec)), rule
        return join_phrase(cls, label), rule
    # `de`: en-class names take no article (originaire de Californie, d'Ontario), the others fuse it
    if cls == "en":
        return (join_phrase("d'", label) if starts_with_vowel(label, spec) else join_phrase("de", label)), rule
    if cls in ("au", "aux"):
        return join_phrase("du" if cls == "au" else "des", label), rule
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
    if not cls:
        # a country or region without a preposition class of its own takes a country's (never a city's «a»:
        # «nato a Zimbabwe»); one listed without article keeps «a» (a Cuba, di Malta)
        exceptions = spec.get("in_exceptions", {})
        if f.preposition in ("a", "in") and label in exceptions and req.entity_type == "country":
            return exceptions[label], "rule:country"  # nato in Israele (a country named bare, not an island)
        kind = _place_kind(label, "it", req, spec, entry)
        if kind:
            return _italian_place(label, f.preposition, req, spec), f"rule:{kind}"
    with_article = cls == "in" or (cls == "a" and entry is not None and entry.article == "def")
    if not with_article:
        euphonic = _euphonic(f.preposition, label, spec)
        return (join_phrase(euphonic, label), "rule:euphonic-d") if euphonic else None
    ag = req.agreement
    article, body = _definite_phrase(label, "it", req, spec)
    if f.preposition == "di":
        return _fuse("di", article, body, spec), rule
    if cls == "in" and admin is None and ag.gender is Gender.FEMININE and ag.number != "pl":
        return join_phrase("in", label), rule  # in California, in Toscana (feminine regions drop the article)
    return _fuse("in" if cls == "in" else "a", article, body, spec), rule


def _romance(label: str, lang: str, f: Features, req: InflectionRequest, spec: Mapping,
             entry: LexiconEntry | None = None) -> tuple[str, str]:
    ag = req.agreement
    key = gender_key(ag.gender, ag.number)
    if f.preposition == "en":
        return _french_en(label, req, spec, entry)
    used_gender = False
    own_article, body = _split_label_article(label, spec)
    if own_article is not None and spec.get("label_article_mode", "fuse") == "separate":
        # es: an article that is part of the name is written as is and never contracted (RAE: «de El
        # Cairo», «en El Cairo»); `def` adds nothing
        prep = spec.get("prepositions", {}).get(f.preposition) if f.preposition else None
        return join_phrase(prep or "", label), EXACT
    label_has_article = own_article is not None
    head_article = (_admin_head_article(label, spec, lang)
                    if f.article == "def" and own_article is None and (entry is None or entry.article != "none")
                    else None)
    if head_article is not None:  # «Gouvernorat de Ninive» -> «le gouvernorat de Ninive»
        own_article, body = head_article
        label = join_phrase(own_article, body)
    article = None
    if f.article == "def" and own_article is None and _takes(label, req, spec, entry, lang):
        vowel = starts_with_vowel(body, spec)
        if "elided" in spec and vowel and ag.number != "pl":
            article = spec["elided"]
        else:
            article = pick_form(spec["definite"], key, "definite article")
            used_gender = True
            if lang == "it":
                article = _italian_article(article, body, ag.number)
    elif f.article == "indef":
        article = pick_form(spec["indefinite"], key, "indefinite article")
        used_gender = True
    prep = None
    if f.preposition:
        prep = spec.get("prepositions", {}).get(f.preposition)
        if prep is None:
            raise Cannot(f"preposition '{f.preposition}' is not defined for {lang}")
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
            text = join_phrase(fused, body)
        elif label_has_article and article == own_article:
            text = join_phrase(prep, label)  # an article of the name that does not contract keeps its capital: fr «à La Mecque»
        else:
            text = join_phrase(prep, article, body)
    elif prep:
        elided = spec.get("elide", {}).get(f.preposition)
        euphonic = _euphonic(f.preposition, body, spec)
        if euphonic:
            text = join_phrase(euphonic, body)
        else:
            text = join_phrase(elided, body) if elided and starts_with_vowel(body, spec) else join_phrase(prep, body)
    elif label_has_article and f.article == "def" and _opens_with(label, spec.get("label_article_lower", ())):
        text = join_phrase(own_article, body)  # it: «è il Cairo», «la Mecca» (the article is not part of the name)
    else:
        text = join_phrase(article or "", body if article else label)
    return text, composed_status(req, used_gender)


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
    if "elided" in spec and starts_with_vowel(noun, spec):
        return spec["elided"], body
    article = spec["definite"][heads[first]]
    if lang == "it":
        article = _italian_article(article, noun, "sg")
    return article, body


def _italian_article(article: str, body: str, number: str) -> str:
    low = body.lower()
    vowel = bool(low) and low[0] in "aeiouàèéìòù"
    lo_case = low.startswith(IT_LO) and not (low.startswith("s") and len(low) > 1 and low[1] in "aeiou")
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
        return join_phrase(fused or "à " + own_article, body), EXACT
    if not _takes(label, req, spec, entry, "fr"):
        return join_phrase("à", label), EXACT
    ag = req.agreement
    form = _french_place(label, "en", req, spec, "region" if is_region(req.classes, "fr") else "country")
    return form, EXACT if ag.number == "pl" else composed_status(req, ag.gender is Gender.FEMININE or form[:2] == "au")


# ---- Arabic ------------------------------------------------------------------------------------

def _semitic(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, str]:
    if f.preposition or f.article == "indef":
        raise Cannot("only the definite article is defined")
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
