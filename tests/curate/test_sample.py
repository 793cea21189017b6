"""The embedded Wikidata sample: well-formed, complete for the curate engine, and reproducible."""

from __future__ import annotations

import gzip
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from tests.langs import SHIPPED_LANGS

pyoxigraph = pytest.importorskip("pyoxigraph")

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "curate" / "sample"
SCRIPT = REPO / "scripts" / "build_wikidata_sample.py"

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
# The template languages (templates/lang/*.yaml); every entity a fact can use is labelled in all.
LANGS = SHIPPED_LANGS
PREDICATES = (
    "P17", "P19", "P20", "P27", "P30", "P36", "P37", "P47", "P103", "P106",
    "P136", "P190", "P264", "P364", "P449", "P495", "P530", "P1303", "P1376", "P1412",
)
# DLAMA-v1's 22 Arab League members and the 20 Western countries (WIKIDATA.md).
ARAB = (
    "Q262", "Q398", "Q970", "Q977", "Q79", "Q796", "Q810", "Q817",
    "Q822", "Q1016", "Q1025", "Q1028", "Q842", "Q219060", "Q846", "Q851",
    "Q1045", "Q1049", "Q858", "Q948", "Q878", "Q805",
)
WEST = (
    "Q228", "Q40", "Q31", "Q142", "Q183", "Q27", "Q38", "Q347", "Q32", "Q235",
    "Q55", "Q45", "Q238", "Q29", "Q39", "Q145", "Q16", "Q30", "Q408", "Q664",
)
# The seed cultures (curate/cultures/asia.yaml, south-america.yaml).
ASIA = (
    "Q148", "Q252", "Q17", "Q833", "Q711", "Q836", "Q423", "Q928", "Q334", "Q884", "Q865", "Q869", "Q881",
)
SOUTH_AMERICA = ("Q414", "Q750", "Q155", "Q298", "Q739", "Q736", "Q734", "Q733", "Q419", "Q730", "Q77", "Q717")
VOICE = "Q17172850"  # the P1303 pollution the engine excludes

# How a fact is tied to a culture's countries (the DLAMA table in WIKIDATA.md).
_SUBJECT_IS_COUNTRY = {"P30", "P36", "P37", "P47", "P530"}
_OBJECT_IS_COUNTRY = {"P17", "P27", "P495", "P1376"}
_OBJECT_IN_COUNTRY = {"P19", "P20"}
_VIA = {"P190": "P17", "P364": "P495", "P449": "P495"} | {
    p: "P27" for p in ("P103", "P106", "P136", "P264", "P1303", "P1412")
}


def _load_script():
    spec = importlib.util.spec_from_file_location("build_wikidata_sample", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_wikidata_sample"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def builder():
    return _load_script()


@pytest.fixture(scope="module")
def ntriples() -> bytes:
    return gzip.decompress((SAMPLE / "wikidata-sample.nt.gz").read_bytes())


@pytest.fixture(scope="module")
def store(ntriples):
    store = pyoxigraph.Store()
    store.bulk_load(ntriples, pyoxigraph.RdfFormat.N_TRIPLES)
    return store


def _select(store, query: str) -> list[tuple[str, ...]]:
    return [tuple(term.value for term in row) for row in store.query(query)]


def _qid(iri: str) -> str:
    return iri[len(WD):]


def test_sample_parses_and_is_small(store, ntriples):
    assert len(store) == ntriples.count(b"\n") > 20_000
    assert (SAMPLE / "wikidata-sample.nt.gz").stat().st_size < 1_000_000


def test_every_entity_and_property_iri_is_well_formed(ntriples):
    entity_iris = set(re.findall(rb"<http://www\.wikidata\.org/entity/([^>]*)>", ntriples))
    prop_iris = set(re.findall(rb"<http://www\.wikidata\.org/prop/direct/([^>]*)>", ntriples))
    bad = sorted(i for i in entity_iris if not re.fullmatch(rb"Q[1-9][0-9]*", i))
    bad += sorted(i for i in prop_iris if not re.fullmatch(rb"P[1-9][0-9]*", i))
    assert not bad
    assert len(entity_iris) > 500


def test_lines_are_sorted_and_unique(ntriples):
    lines = ntriples.decode("utf-8").splitlines()
    assert lines == sorted(set(lines))


def test_every_entity_used_by_the_20_predicates_has_a_label_in_every_template_language(store):
    values = " ".join(f"wdt:{p}" for p in PREDICATES)
    used = {
        _qid(e)
        for s, o in _select(
            store, f"PREFIX wdt: <{WDT}> SELECT ?s ?o WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?o }}"
        )
        for e in (s, o)
    }
    labels: dict[str, set[str]] = {}
    for s, _, o, _ in store.quads_for_pattern(None, pyoxigraph.NamedNode(LABEL), None):
        labels.setdefault(_qid(s.value), set()).add(o.language)
    missing = {q: sorted(set(LANGS) - labels.get(q, set())) for q in sorted(used)}
    missing = {q: langs for q, langs in missing.items() if langs}
    assert not missing, f"entities lacking labels (qid: languages): {missing}"
    assert len(used) > 400


def test_every_human_has_sex_or_gender_and_one_is_non_binary(store):
    rows = _select(
        store,
        f"PREFIX wd: <{WD}> PREFIX wdt: <{WDT}> "
        "SELECT ?h (SAMPLE(?g) AS ?gender) WHERE { ?h wdt:P31 wd:Q5 OPTIONAL { ?h wdt:P21 ?g } } GROUP BY ?h",
    )
    assert len(rows) > 80
    assert [h for h, g in rows if g is None] == []
    genders = {_qid(g) for _, g in rows}
    assert genders == {"Q6581097", "Q6581072", "Q48270"}


def test_all_22_arab_league_members_carry_the_membership_rule(store):
    rows = _select(
        store, f"PREFIX wd: <{WD}> PREFIX wdt: <{WDT}> SELECT ?c WHERE {{ ?c wdt:P463 wd:Q7172 }}"
    )
    assert sorted(_qid(c) for (c,) in rows) == sorted(ARAB)


def _culture_subjects(store, predicate: str, countries: list[str]) -> set[str]:
    values = " ".join(f"wd:{c}" for c in countries)
    if predicate in _SUBJECT_IS_COUNTRY:
        pattern = f"VALUES ?s {{ {values} }} ?s wdt:{predicate} ?o ."
    elif predicate in _OBJECT_IS_COUNTRY:
        pattern = f"VALUES ?c {{ {values} }} ?s wdt:{predicate} ?c ."
    elif predicate in _OBJECT_IN_COUNTRY:
        pattern = f"VALUES ?c {{ {values} }} ?s wdt:{predicate} ?o . ?o wdt:P17 ?c ."
    else:
        pattern = f"VALUES ?c {{ {values} }} ?s wdt:{predicate} ?o . ?s wdt:{_VIA[predicate]} ?c ."
    if predicate == "P1303":
        pattern += f" FILTER(?o != wd:{VOICE})"
    query = f"PREFIX wd: <{WD}> PREFIX wdt: <{WDT}> SELECT DISTINCT ?s WHERE {{ {pattern} }}"
    return {_qid(s) for (s,) in _select(store, query)}


@pytest.mark.parametrize("predicate", PREDICATES)
def test_each_predicate_has_subjects_in_both_cultures(store, predicate):
    arab = _culture_subjects(store, predicate, ARAB)
    west = _culture_subjects(store, predicate, WEST)
    assert len(arab) >= 8, f"{predicate}: arab subjects {sorted(arab)}"
    assert len(west) >= 8, f"{predicate}: west subjects {sorted(west)}"


@pytest.mark.parametrize("predicate", PREDICATES)
def test_each_predicate_has_subjects_in_the_asia_and_south_america_seeds(store, predicate):
    asia = _culture_subjects(store, predicate, ASIA)
    south_america = _culture_subjects(store, predicate, SOUTH_AMERICA)
    assert len(asia) >= 3, f"{predicate}: asia subjects {sorted(asia)}"
    assert len(south_america) >= 3, f"{predicate}: south-america subjects {sorted(south_america)}"


def test_class_hierarchy_rows_of_the_contract_exist(store):
    expected = [
        ("Q3624078", "Q6256"), ("Q15304003", "Q6256"), ("Q1549591", "Q515"), ("Q5119", "Q515"),
        ("Q515", "Q486972"), ("Q486972", "Q2221906"), ("Q10864048", "Q56061"), ("Q56061", "Q2221906"),
        ("Q8502", "Q2221906"), ("Q4022", "Q2221906"), ("Q811979", "Q2221906"), ("Q11424", "Q2431196"),
        ("Q5398426", "Q2431196"), ("Q1288568", "Q34770"), ("Q29919", "Q13955"), ("Q28640", "Q12737077"),
        ("Q177220", "Q639669"), ("Q937857", "Q2066131"), ("Q624081", "Q37073"), ("Q78987", "Q6607"),
        ("Q1616075", "Q15265344"),
    ]
    rows = set(_select(store, f"SELECT ?a ?b WHERE {{ ?a <{WDT}P279> ?b }}"))
    missing = [(a, b) for a, b in expected if (WD + a, WD + b) not in rows]
    assert not missing
    for structure in ("Q32815", "Q23413", "Q33506"):  # mosque, castle, museum reach the structure class
        ask = f"ASK {{ <{WD}{structure}> <{WDT}P279>+ <{WD}Q811979> }}"
        assert store.query(ask), structure


def test_netherlands_is_a_constituent_country_and_the_kingdom_a_sovereign_state(store):
    classes = {
        q: {_qid(c) for (c,) in _select(store, f"SELECT ?c WHERE {{ <{WD}{q}> <{WDT}P31> ?c }}")}
        for q in ("Q55", "Q29999")
    }
    assert classes == {"Q55": {"Q15304003", "Q6256"}, "Q29999": {"Q3624078", "Q6256"}}


def test_pollution_the_engine_must_filter_is_present(store):
    def classes_of_p17_subjects(country: str) -> set[str]:
        rows = _select(
            store, f"SELECT ?c WHERE {{ ?s <{WDT}P17> <{WD}{country}> . ?s <{WDT}P31> ?c }}"
        )
        return {_qid(c) for (c,) in rows}

    assert {"Q178561", "Q220505"} <= classes_of_p17_subjects("Q145") | classes_of_p17_subjects("Q142")
    assert "Q13406463" in classes_of_p17_subjects("Q817")  # a Wikimedia list article
    kurds = _select(store, f"SELECT ?c WHERE {{ <{WD}Q12223> <{WDT}P495> ?c }}")
    assert len(kurds) >= 2
    voice_users = _select(store, f"SELECT ?s WHERE {{ ?s <{WDT}P1303> <{WD}Q17172850> }}")
    assert len(voice_users) > 20


def test_admin_chains_lead_from_city_through_a_division_to_the_country(store):
    chain = _select(
        store,
        f"SELECT ?div ?country WHERE {{ <{WD}Q85> <{WDT}P131> ?div . ?div <{WDT}P131> ?country }}",
    )
    assert chain == [(WD + "Q30805", WD + "Q79")]


def _tsv(path: Path) -> list[list[str]]:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    assert all(len(row) == len(rows[0]) for row in rows)
    return rows


def test_sitelinks_page_lengths_and_redirects_are_consistent(store):
    lengths = _tsv(SAMPLE / "page_lengths.tsv")
    redirects = _tsv(SAMPLE / "redirects.tsv")
    assert lengths[0] == ["site", "title", "length"] and redirects[0] == ["site", "from", "to"]
    articles = {(site, title): int(n) for site, title, n in lengths[1:]}
    moved = {(site, source): target for site, source, target in redirects[1:]}
    assert len(moved) >= 3 and all((site, target) in articles for (site, _), target in moved.items())
    assert all(n > 0 for n in articles.values())

    links = _select(
        store,
        "SELECT ?item ?site ?name WHERE { ?a <http://schema.org/about> ?item ; "
        "<http://schema.org/inLanguage> ?site ; <http://schema.org/name> ?name }",
    )
    assert len(links) > 2000
    for item, site, name in links:
        key = (site, name)
        assert key in articles or key in moved, f"{_qid(item)}: {site}:{name} has no page length"
    counts = dict(_select(store, "SELECT ?i ?n WHERE { ?i <http://wikiba.se/ontology#sitelinks> ?n }"))
    per_item: dict[str, int] = {}
    for item, _, _ in links:
        per_item[item] = per_item.get(item, 0) + 1
    assert all(int(counts[item]) >= n for item, n in per_item.items())


def test_subjects_are_linked_in_their_cultures_editions(store):
    def sites(qid: str) -> set[str]:
        query = f"SELECT ?s WHERE {{ ?a <http://schema.org/about> <{WD}{qid}> ; <http://schema.org/inLanguage> ?s }}"
        return {s for (s,) in _select(store, query)}

    assert {"ar", "en", "fr"} <= sites("Q7176")  # Naguib Mahfouz (Egypt)
    assert {"de", "fr", "it", "rm", "en"} <= sites("Q39")  # Switzerland
    assert {"it", "en"} <= sites("Q220")  # Rome
    assert sites("Q100261220") == {"ar"}  # a list only the Arabic Wikipedia has


def test_regeneration_is_byte_identical(builder, tmp_path):
    assert builder.main(["--out", str(tmp_path)]) == 0
    for name in ("wikidata-sample.nt.gz", "page_lengths.tsv", "redirects.tsv", "page_views.tsv"):
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_gzip_header_carries_no_timestamp_or_name():
    header = (SAMPLE / "wikidata-sample.nt.gz").read_bytes()[:10]
    assert header[:3] == b"\x1f\x8b\x08"
    assert header[3] == 0  # no FNAME/FCOMMENT/FEXTRA flags
    assert header[4:8] == b"\x00\x00\x00\x00"  # mtime 0


def _write_source(folder: Path, body: str) -> Path:
    folder.mkdir()
    (folder / "editions.yaml").write_text("editions:\n  Q79: [ar, en, fr]\n", encoding="utf-8")
    (folder / "things.yaml").write_text(body, encoding="utf-8")
    return folder


def test_builder_names_file_and_entity_for_an_undefined_object(builder, tmp_path):
    source = _write_source(
        tmp_path / "src",
        "entities:\n  Q79:\n    label: {en: Egypt}\n    P36: Q85\n",
    )
    with pytest.raises(builder.SourceError, match=r"things\.yaml: Q79 P36 Q85: Q85 is not defined"):
        builder.render(source)


def test_a_language_file_adds_labels_aliases_and_gendered_forms_to_other_files_entities(builder, tmp_path):
    source = _write_source(tmp_path / "src", "entities:\n  Q79:\n    label: {en: Egypt}\n"
                           "  Q33999:\n    label: {en: actor}\n    female: {en: actress}\n")
    (source / "labels_ca.yaml").write_text("labels: {ca: {Q79: Egipte, Q33999: actor}}\naliases: {ca: {Q79: [Misr]}}\n"
                                           "female: {ca: {Q33999: actriu}}\n", encoding="utf-8")
    lines = gzip.decompress(builder.render(source)["wikidata-sample.nt.gz"]).decode("utf-8").splitlines()
    assert f'<{WD}Q79> <{LABEL}> "Egipte"@ca .' in lines
    assert f'<{WD}Q79> <http://www.w3.org/2004/02/skos/core#altLabel> "Misr"@ca .' in lines
    assert f'<{WD}Q33999> <{WDT}P2521> "actriu"@ca .' in lines
    assert f'<{WD}Q33999> <{WDT}P2521> "actress"@en .' in lines
    (source / "labels_ca.yaml").write_text("female: {ca: {Q33999: [actriu]}}\n", encoding="utf-8")
    with pytest.raises(builder.SourceError, match=r"labels_ca\.yaml: female ca: Q33999: \['actriu'\] is not a text"):
        builder.render(source)
    (source / "labels_ca.yaml").write_text("female: {en: {Q33999: actrice}}\n", encoding="utf-8")
    with pytest.raises(builder.SourceError, match=r"Q33999 already has the en female form 'actress'"):
        builder.render(source)


def test_a_language_file_label_replaces_a_latin_default_but_not_a_written_label(builder, tmp_path):
    source = _write_source(tmp_path / "src", "latin_defaults: true\nentities:\n"
                           "  Q85:\n    label: {en: Cairo, it: Il Cairo}\n")
    (source / "labels_ca.yaml").write_text("labels: {ca: {Q85: el Caire}}\n", encoding="utf-8")
    lines = gzip.decompress(builder.render(source)["wikidata-sample.nt.gz"]).decode("utf-8").splitlines()
    assert f'<{WD}Q85> <{LABEL}> "el Caire"@ca .' in lines
    assert f'<{WD}Q85> <{LABEL}> "Cairo"@ca .' not in lines
    (source / "labels_ca.yaml").write_text("labels: {it: {Q85: Cairo}}\n", encoding="utf-8")
    with pytest.raises(builder.SourceError, match=r"Q85 already has the it label 'Il Cairo'"):
        builder.render(source)


def test_builder_rejects_a_label_split_by_an_unquoted_comma(builder, tmp_path):
    source = _write_source(
        tmp_path / "src", "entities:\n  Q61:\n    label: {en: Washington, D.C., fr: Washington}\n"
    )
    with pytest.raises(builder.SourceError, match=r"Q61: .*D\.C\."):
        builder.render(source)


def test_builder_makes_borders_symmetric_and_derives_sitelinks(builder, tmp_path):
    source = _write_source(
        tmp_path / "src",
        "entities:\n"
        "  Q79:\n    label: {en: Egypt, ar: مصر, fr: Égypte}\n    P47: Q1016\n    sitelinks: 10\n"
        "  Q1016:\n    label: {en: Libya}\n",
    )
    files = builder.render(source)
    text = gzip.decompress(files["wikidata-sample.nt.gz"]).decode("utf-8")
    assert f"<{WD}Q1016> <{WDT}P47> <{WD}Q79> ." in text
    pages = files["page_lengths.tsv"].decode("utf-8").splitlines()
    assert [row.split("\t")[:2] for row in pages[1:]] == [["ar", "مصر"], ["en", "Egypt"], ["fr", "Égypte"]]
    assert files["redirects.tsv"] == b"site\tfrom\tto\n"


def test_every_article_is_the_sitelink_of_exactly_one_item(store):
    rows = _select(store, "SELECT ?a (COUNT(?i) AS ?n) WHERE { ?a <http://schema.org/about> ?i } GROUP BY ?a")
    assert [a for a, n in rows if int(n) != 1] == []


def test_builder_refuses_two_items_sharing_one_article(builder, tmp_path):
    source = _write_source(
        tmp_path / "src",
        "entities:\n"
        "  Q79:\n    label: {en: Egypt}\n    sitelinks: 5\n"
        "  Q85:\n    label: {en: Egypt}\n    P17: Q79\n    sitelinks: 5\n",
    )
    with pytest.raises(builder.SourceError, match=r"things\.yaml: Q85: the \w+ article 'Egypt' is already the sitelink of Q79"):
        builder.render(source)


_SCRIPTS = {
    "ar": r"[\u0600-\u06FF]", "ru": r"[\u0400-\u04FF]", "zh": r"[\u4E00-\u9FFF]",
    "ja": r"[\u3040-\u30FF\u4E00-\u9FFF]", "ko": r"[\uAC00-\uD7AF]", "hi": r"[\u0900-\u097F]",
    "el": r"[\u0370-\u03FF]", "he": r"[\u05D0-\u05EA]",
}


def test_labels_are_written_in_their_languages_script(store):
    """Catches a label pasted into the wrong language; brand names (record labels, TV channels, some
    series titles) are legitimately written in Latin letters in these Wikipedias."""
    latin_ok = {
        _qid(s)
        for (s,) in _select(
            store,
            f"SELECT ?s WHERE {{ VALUES ?c {{ <{WD}Q18127> <{WD}Q1616075> <{WD}Q2001305> <{WD}Q5398426> "
            f"<{WD}Q11424> }} ?s <{WDT}P31> ?c }}",
        )
    }
    wrong = []
    for s, _, o, _ in store.quads_for_pattern(None, pyoxigraph.NamedNode(LABEL), None):
        pattern = _SCRIPTS.get(o.language)
        if pattern and _qid(s.value) not in latin_ok and not re.search(pattern, o.value):
            wrong.append((_qid(s.value), o.language, o.value))
    assert wrong == []


def test_label_languages_are_the_template_languages(builder):
    """A language added to the template library must be added to the sample (labels) as well."""
    template_langs = {path.stem for path in (REPO / "templates" / "lang").glob("*.yaml")}
    assert template_langs == set(LANGS)
    assert set(builder.LABEL_LANGS) == set(LANGS)


def _labels_in(store, lang: str) -> dict[str, str]:
    return {
        _qid(s.value): o.value
        for s, _, o, _ in store.quads_for_pattern(None, pyoxigraph.NamedNode(LABEL), None)
        if o.language == lang
    }


def test_italian_labels_are_italian_exonyms_not_english_copies(store):
    italian, english = _labels_in(store, "it"), _labels_in(store, "en")
    assert {q: italian[q] for q in ("Q85", "Q30", "Q145", "Q55", "Q84", "Q1741", "Q13955", "Q23572")} == {
        "Q85": "Il Cairo", "Q30": "Stati Uniti d'America", "Q145": "Regno Unito", "Q55": "Paesi Bassi",
        "Q84": "Londra", "Q1741": "Vienna", "Q13955": "arabo", "Q23572": "Il Trono di Spade",
    }
    countries = [_qid(s) for (s,) in _select(store, f"SELECT ?s WHERE {{ ?s <{WDT}P31> <{WD}Q3624078> }}")]
    copied = [q for q in countries if italian[q] == english[q]]
    assert len(copied) < len(countries) / 2, f"Italian country names equal to the English ones: {copied}"


@pytest.mark.parametrize(("lang", "expected"), [
    ("ca", {"Q85": "el Caire", "Q30": "Estats Units d'Amèrica", "Q84": "Londres", "Q956": "Pequín",
            "Q13955": "àrab", "Q1110560": "Umm Kulthum", "Q34211": "Iàssir Arafat", "Q639669": "músic"}),
    ("nl", {"Q85": "Caïro", "Q30": "Verenigde Staten", "Q84": "Londen", "Q956": "Peking",
            "Q13955": "Arabisch", "Q17163": "Johan Cruijff", "Q30805": "Caïro (gouvernement)", "Q639669": "musicus"}),
    ("id", {"Q85": "Kairo", "Q30": "Amerika Serikat", "Q84": "London", "Q956": "Beijing",
            "Q13955": "bahasa Arab", "Q35178": "Kota Kuwait", "Q5806": "Mekkah", "Q639669": "musisi"}),
])
def test_catalan_dutch_indonesian_labels_are_their_wikipedias_names(store, lang, expected):
    """The labels of source/labels_<lang>.yaml reach the sample, over the English copies `latin_defaults`
    made for people and companies (Iàssir Arafat, Johan Cruijff), and their countries are exonyms."""
    labels, english = _labels_in(store, lang), _labels_in(store, "en")
    assert {q: labels[q] for q in expected} == expected
    countries = [_qid(s) for (s,) in _select(store, f"SELECT ?s WHERE {{ ?s <{WDT}P31> <{WD}Q3624078> }}")]
    copied = [q for q in countries if labels[q] == english[q]]
    assert len(copied) < len(countries) / 2, f"{lang} country names equal to the English ones: {copied}"
