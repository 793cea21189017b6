"""A tiny Wikidata-shaped graph (Wikidata's RDF model, SAMPLE_CLASSES.md classes) for curate tests.

Two Arab League members (Egypt, Lebanon) and two Western countries (France, the Netherlands), a few
people, places, works, and deliberate pollution: an event, a list article and the country itself as P17
subjects, an ethnic group as a "work", "voice" as an instrument, a person without an Arabic label.
"""

from __future__ import annotations

from pathlib import Path

WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"

# qid: (en, ar)
LABELS = {
    "Q79": ("Egypt", "مصر"), "Q822": ("Lebanon", "لبنان"), "Q142": ("France", "فرنسا"),
    "Q55": ("Netherlands", "هولندا"), "Q1016": ("Libya", "ليبيا"), "Q31": ("Belgium", "بلجيكا"),
    "Q858": ("Syria", "سوريا"), "Q7172": ("Arab League", "جامعة الدول العربية"),
    "Q15": ("Africa", "أفريقيا"), "Q48": ("Asia", "آسيا"), "Q46": ("Europe", "أوروبا"),
    "Q85": ("Cairo", "القاهرة"), "Q3820": ("Beirut", "بيروت"), "Q90": ("Paris", "باريس"),
    "Q727": ("Amsterdam", "أمستردام"), "Q30513": ("Cairo Governorate", "محافظة القاهرة"),
    "Q13917": ("Île-de-France", "إيل دو فرانس"), "Q13955": ("Arabic", "العربية"),
    "Q29919": ("Egyptian Arabic", "اللهجة المصرية"), "Q150": ("French", "الفرنسية"),
    "Q7411": ("Dutch", "الهولندية"), "Q177220": ("singer", "مغني"), "Q639669": ("musician", "موسيقي"),
    "Q483501": ("artist", "فنان"), "Q215627": ("person", "شخص"), "Q937857": ("footballer", "لاعب كرة قدم"),
    "Q2066131": ("athlete", "رياضي"), "Q211784": ("oud", "عود"), "Q6607": ("guitar", "قيثارة"),
    "Q78987": ("electric guitar", "قيثارة كهربائية"), "Q17172850": ("voice", "صوت"),
    "Q37073": ("pop music", "موسيقى البوب"), "Q100040": ("Arabic pop music", "بوب عربي"),
    "Q100041": ("chanson", "شانسون"), "Q100050": ("Relax-In", "ريلاكس إن"), "Q100051": ("Polydor", "بوليدور"),
    "Q100020": ("TF1", "تي إف 1"),
    "Q100001": ("Umm Kulthum", "أم كلثوم"), "Q100002": ("Fairuz", "فيروز"), "Q100003": ("Édith Piaf", "إديث بياف"),
    "Q100004": ("Sam Dekker", "سام ديكر"), "Q100005": ("Unlabelled Singer", None),
    "Q100010": ("The Night of Counting the Years", "المومياء"), "Q100011": ("Engrenages", "إنغرناج"),
    "Q100012": ("Kurds", "الأكراد"), "Q100030": ("Mount Sinai", "جبل موسى"),
    "Q100031": ("Cairo Festival", "مهرجان القاهرة"), "Q100032": ("List of castles in France", "قائمة قلاع فرنسا"),
    "Q100033": ("Al-Azhar Mosque", "الجامع الأزهر"), "Q100034": ("Eiffel Tower", "برج إيفل"),
}
ALIASES = {"Q85": [("en", "Al-Qahira")], "Q100001": [("en", "Kawkab al-Sharq"), ("ar", "كوكب الشرق")]}

# subject: [(pid, object)]
STATEMENTS = {
    # class hierarchy (SAMPLE_CLASSES.md)
    "Q3624078": [("P279", "Q6256")], "Q15304003": [("P279", "Q6256")], "Q1549591": [("P279", "Q515")],
    "Q5119": [("P279", "Q515")], "Q515": [("P279", "Q486972")], "Q486972": [("P279", "Q2221906")],
    "Q10864048": [("P279", "Q56061")], "Q56061": [("P279", "Q2221906")], "Q8502": [("P279", "Q2221906")],
    "Q811979": [("P279", "Q2221906")], "Q32815": [("P279", "Q811979")], "Q11424": [("P279", "Q2431196")],
    "Q5398426": [("P279", "Q2431196")], "Q1288568": [("P279", "Q34770")], "Q28640": [("P279", "Q12737077")],
    "Q1616075": [("P279", "Q15265344")], "Q204910": [("P279", "Q10864048")], "Q36784": [("P279", "Q10864048")],
    # countries
    "Q79": [("P31", "Q3624078"), ("P463", "Q7172"), ("P30", "Q15"), ("P36", "Q85"), ("P37", "Q13955"),
            ("P47", "Q1016"), ("P530", "Q142"), ("P17", "Q79")],
    "Q822": [("P31", "Q3624078"), ("P463", "Q7172"), ("P30", "Q48"), ("P36", "Q3820"), ("P37", "Q13955"),
             ("P47", "Q858"), ("P530", "Q142"), ("P17", "Q822")],
    "Q142": [("P31", "Q3624078"), ("P30", "Q46"), ("P36", "Q90"), ("P37", "Q150"), ("P47", "Q31"),
             ("P530", "Q79"), ("P530", "Q822"), ("P17", "Q142")],
    "Q55": [("P31", "Q15304003"), ("P31", "Q6256"), ("P30", "Q46"), ("P36", "Q727"), ("P37", "Q7411"),
            ("P47", "Q31"), ("P17", "Q55")],
    "Q1016": [("P31", "Q3624078")], "Q858": [("P31", "Q3624078")], "Q31": [("P31", "Q3624078")],
    "Q15": [("P31", "Q5107")], "Q48": [("P31", "Q5107")], "Q46": [("P31", "Q5107")],
    # cities and admin areas
    "Q85": [("P31", "Q1549591"), ("P31", "Q5119"), ("P17", "Q79"), ("P131", "Q30513"), ("P1376", "Q79"),
            ("P190", "Q90")],
    "Q30513": [("P31", "Q204910"), ("P17", "Q79"), ("P131", "Q79")],
    "Q3820": [("P31", "Q5119"), ("P17", "Q822"), ("P1376", "Q822")],
    "Q90": [("P31", "Q5119"), ("P31", "Q1549591"), ("P17", "Q142"), ("P131", "Q13917"), ("P1376", "Q142"),
            ("P190", "Q85")],
    "Q13917": [("P31", "Q36784"), ("P17", "Q142"), ("P131", "Q142")],
    "Q727": [("P31", "Q5119"), ("P17", "Q55"), ("P1376", "Q55")],
    # languages, occupations, genres, instruments, labels, networks
    "Q13955": [("P31", "Q34770")], "Q29919": [("P31", "Q34770"), ("P279", "Q13955")],
    "Q150": [("P31", "Q1288568")], "Q7411": [("P31", "Q1288568")],
    "Q177220": [("P31", "Q28640"), ("P279", "Q639669")], "Q639669": [("P31", "Q28640"), ("P279", "Q483501")],
    "Q483501": [("P31", "Q28640"), ("P279", "Q215627")], "Q937857": [("P31", "Q28640"), ("P279", "Q2066131")],
    "Q2066131": [("P31", "Q28640")],
    "Q37073": [("P31", "Q188451")], "Q100040": [("P31", "Q188451"), ("P279", "Q37073")],
    "Q100041": [("P31", "Q188451")],
    "Q211784": [("P31", "Q34379")], "Q6607": [("P31", "Q34379")], "Q78987": [("P31", "Q34379"), ("P279", "Q6607")],
    "Q17172850": [("P31", "Q34379")],  # voice: DLAMA's pollution, excluded by name
    "Q100050": [("P31", "Q18127")], "Q100051": [("P31", "Q18127")], "Q100020": [("P31", "Q1616075")],
    # people
    "Q100001": [("P31", "Q5"), ("P21", "Q6581072"), ("P27", "Q79"), ("P19", "Q85"), ("P20", "Q85"),
                ("P106", "Q177220"), ("P1303", "Q211784"), ("P1303", "Q17172850"), ("P136", "Q100040"),
                ("P264", "Q100050"), ("P1412", "Q13955"), ("P103", "Q29919")],
    "Q100002": [("P31", "Q5"), ("P21", "Q6581072"), ("P27", "Q822"), ("P19", "Q3820"), ("P106", "Q177220"),
                ("P1303", "Q17172850"), ("P1412", "Q13955"), ("P103", "Q13955")],
    "Q100003": [("P31", "Q5"), ("P21", "Q6581072"), ("P27", "Q142"), ("P19", "Q90"), ("P20", "Q90"),
                ("P106", "Q177220"), ("P136", "Q100041"), ("P264", "Q100051"), ("P1303", "Q78987"),
                ("P1412", "Q150"), ("P103", "Q150")],
    "Q100004": [("P31", "Q5"), ("P21", "Q48270"), ("P27", "Q55"), ("P19", "Q727"), ("P106", "Q937857"),
                ("P1412", "Q7411")],
    "Q100005": [("P31", "Q5"), ("P21", "Q6581097"), ("P27", "Q79"), ("P106", "Q177220")],
    # works
    "Q100010": [("P31", "Q11424"), ("P495", "Q79"), ("P364", "Q29919")],
    "Q100011": [("P31", "Q5398426"), ("P495", "Q142"), ("P364", "Q150"), ("P449", "Q100020")],
    "Q100012": [("P31", "Q41710"), ("P495", "Q79")],
    # places and pollution for P17
    "Q100030": [("P31", "Q8502"), ("P17", "Q79")], "Q100031": [("P31", "Q1656682"), ("P17", "Q79")],
    "Q100032": [("P31", "Q13406463"), ("P17", "Q142")], "Q100033": [("P31", "Q32815"), ("P17", "Q79")],
    "Q100034": [("P31", "Q811979"), ("P17", "Q142")],
}

# articles: qid -> {site: title}; lengths per (site, title)
ARTICLES = {
    "Q79": {"ar": "مصر", "en": "Egypt", "fr": "Égypte"}, "Q822": {"ar": "لبنان", "en": "Lebanon"},
    "Q142": {"fr": "France", "en": "France"}, "Q55": {"nl": "Nederland", "en": "Netherlands"},
    "Q85": {"ar": "القاهرة", "en": "Cairo"}, "Q3820": {"ar": "بيروت", "en": "Beirut"},
    "Q90": {"fr": "Paris", "en": "Paris"}, "Q727": {"nl": "Amsterdam", "en": "Amsterdam"},
    "Q100001": {"ar": "أم كلثوم", "en": "Umm Kulthum"}, "Q100002": {"ar": "فيروز", "en": "Fairuz"},
    "Q100003": {"fr": "Édith Piaf", "en": "Édith Piaf"}, "Q100004": {"nl": "Sam Dekker", "en": "Sam Dekker"},
    "Q100005": {"en": "Unlabelled Singer"},
    "Q100010": {"ar": "المومياء (فيلم)", "en": "The Night of Counting the Years"},
    "Q100011": {"fr": "Engrenages", "en": "Spiral (TV series)"}, "Q100012": {"ar": "أكراد", "en": "Kurds"},
    "Q100030": {"ar": "جبل موسى", "en": "Mount Sinai"}, "Q100031": {"en": "Cairo Festival"},
    "Q100032": {"en": "List of castles in France"}, "Q100033": {"ar": "الجامع الأزهر", "en": "Al-Azhar Mosque"},
    "Q100034": {"fr": "Tour Eiffel", "en": "Eiffel Tower"},
}


def length_of(qid: str, site: str) -> int:
    """Deterministic article lengths: a fixed per-entity base, larger in 'en'."""
    base = int(qid[1:]) % 997 * 37 + 1000
    return base + (500 if site == "en" else 0)


def ntriples() -> str:
    lines = []

    def lit(text: str, lang: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + f'"@{lang}'

    for q, (en, ar) in LABELS.items():
        lines.append(f"<{WD}{q}> <{RDFS_LABEL}> {lit(en, 'en')} .")
        if ar:
            lines.append(f"<{WD}{q}> <{RDFS_LABEL}> {lit(ar, 'ar')} .")
    for q, aliases in ALIASES.items():
        for lang, text in aliases:
            lines.append(f"<{WD}{q}> <{ALT}> {lit(text, lang)} .")
    for s, statements in STATEMENTS.items():
        for p, o in statements:
            lines.append(f"<{WD}{s}> <{WDT}{p}> <{WD}{o}> .")
    for q, arts in ARTICLES.items():
        for site, title in arts.items():
            url = f"https://{site}.wikipedia.org/wiki/{title.replace(' ', '_')}"
            lines.append(f"<{url}> <http://schema.org/about> <{WD}{q}> .")
            lines.append(f"<{url}> <http://schema.org/isPartOf> <https://{site}.wikipedia.org/> .")
            lines.append(f"<{url}> <http://schema.org/inLanguage> \"{site}\" .")
            lines.append(f"<{url}> <http://schema.org/name> {lit(title, site)} .")
        lines.append(f"<{WD}{q}> <http://wikiba.se/ontology#sitelinks> "
                     f"\"{len(arts) * 10 + int(q[1:]) % 7}\"^^<http://www.w3.org/2001/XMLSchema#integer> .")
    return "\n".join(sorted(lines)) + "\n"


def page_lengths_tsv() -> str:
    rows = ["site\ttitle\tlength"]
    for q, arts in sorted(ARTICLES.items()):
        for site, title in sorted(arts.items()):
            rows.append(f"{site}\t{title}\t{length_of(q, site)}")
    return "\n".join(rows) + "\n"


def write_fixture(folder: Path) -> tuple[Path, Path]:
    """Writes graph.nt and page_lengths.tsv into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    graph, table = folder / "graph.nt", folder / "page_lengths.tsv"
    graph.write_text(ntriples(), "utf-8")
    table.write_text(page_lengths_tsv(), "utf-8")
    return graph, table
