"""The validator: one test per defect class, each asserting the exact file:line:col and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from factatlas.errors import ConfigError
from factatlas.templates.library import load_library, read_language_file
from factatlas.templates.validate import script_issues, validate_file

HEADER = {
    "ru": "lang: ru\nname: Russian\nscripts: [Cyrillic]\ngenders: [masc, fem, neut]\ntemplates:\n",
    "en": "lang: en\nname: English\nscripts: [Latin]\ngenders: []\ntemplates:\n",
    "fr": "lang: fr\nname: French\nscripts: [Latin]\ngenders: [masc, fem]\ntemplates:\n",
    "ko": "lang: ko\nname: Korean\nscripts: [Hangul]\ngenders: []\ntemplates:\n",
}


def write(tmp_path: Path, lang: str, body: str, header: str | None = None) -> Path:
    path = tmp_path / f"{lang}.yaml"
    path.write_text((HEADER[lang] if header is None else header) + body, "utf-8")
    return path


def col(path: Path, line: int, needle: str, occurrence: int = 1) -> int:
    """1-based column of ``needle`` on ``line`` of the file: computed from the file, independently of the
    validator's offset arithmetic."""
    text = path.read_text("utf-8").splitlines()[line - 1]
    i = -1
    for _ in range(occurrence):
        i = text.index(needle, i + 1)
    return i + 1


def issues_of(path: Path, life: bool = False) -> list[str]:
    """The file's issues; the life-status rule (a person template agrees or is timeless) only with ``life``:
    its own tests below check it, the others write short person templates without the key."""
    return [str(i) for i in validate_file(read_language_file(path, display_path=path.name))
            if life or i.code != "life-status"]


def entry(tid: str, text: str, kind: str = "cloze", timeless: str = "") -> str:
    k = f"\n      kind: {kind}" if kind != "cloze" else ""
    t = f"      timeless: {timeless}\n" if timeless else ""
    return f"    - id: {tid}{k}\n      text: \"{text}\"\n      status: reviewed\n      source: human\n{t}"


BIRTH = "a birth is a completed event"
VALID_RU = "  P19:\n" + entry("P19/1", "[X] {X: masc=родился | fem=родилась | other=родился(-ась)} в [Y.loc].",
                             timeless=BIRTH) + entry(
    "P19/q1", "Где {X: masc=родился | fem=родилась | other=родился(-ась)} [X]?", "question", timeless=BIRTH)


def test_a_valid_file_has_no_issues_and_loads(tmp_path):
    path = write(tmp_path, "ru", VALID_RU)
    assert issues_of(path) == []
    lib = load_library(["ru"], root=tmp_path)
    assert lib.languages == ("ru",)
    assert [t.id for t in lib.templates("ru", "P19")] == ["P19/1", "P19/q1"]
    assert [t.id for t in lib.templates("ru", "P19", kind="question")] == ["P19/q1"]
    t = lib.get("ru", "P19/1")
    assert (t.lang, t.predicate, t.kind, t.status, t.source, t.line) == ("ru", "P19", "cloze", "reviewed", "human", 7)
    assert lib.get("ru", "P19/9") is None


def test_unknown_keys_top_level_and_in_templates(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X] родился в [Y.loc].").replace("status:", "stauts:")
    path = write(tmp_path, "ru", body, HEADER["ru"].replace("name:", "nmae:"))
    assert issues_of(path) == [
        "ru.yaml:2:1: unknown key 'nmae'. Did you mean 'name'?; fix: keys: lang, name, scripts, genders, templates, notes",
        "ru.yaml:9:7: unknown key 'stauts'. Did you mean 'status'?; fix: template keys: id, kind, text, status, "
        "source, notes, timeless",
    ]


def test_a_bad_status_or_kind_is_reported_where_it_is_written(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X] родился в [Y.loc].").replace("status: reviewed", "status: reveiwed") + \
        entry("P19/q1", "Где родился [X]?", "question").replace("kind: question", "kind: questoin")
    path = write(tmp_path, "ru", body)
    assert issues_of(path) == [
        "ru.yaml:9:15: unknown status 'reveiwed'. Did you mean 'reviewed'?; fix: status: reviewed | draft",
        "ru.yaml:12:13: unknown kind 'questoin'. Did you mean 'question'?; fix: kind: cloze | question",
        "ru.yaml:11: P19/q1: id 'P19/q1' and kind 'questoin' disagree; fix: question ids carry 'q' (P19/q1) and "
        "'kind: question'; cloze ids do not",
    ]


def test_unknown_language_and_file_name_mismatch(tmp_path):
    path = write(tmp_path, "en", entry("P19/1", "[X] was born in [Y]."),
                 "lang: eng\nscripts: [Latin]\ntemplates:\n  P19:\n")
    assert issues_of(path) == [
        "en.yaml:1:1: lang 'eng' differs from the file name 'en.yaml'; fix: rename the file to eng.yaml or set lang: en",
        "en.yaml:1:1: unknown language 'eng'. Did you mean 'en'?; fix: add it to templates/data/languages.yaml first "
        "(docs/templates.md, 'Add a language')",
    ]


def test_unknown_feature_and_feature_the_language_lacks(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X] родился в [Y.lok].") + entry("P19/2", "[X] родился в [Y.def].")
    path = write(tmp_path, "ru", body)
    issues = issues_of(path)
    assert issues[0] == (f"ru.yaml:8:{col(path, 8, 'lok')}: P19/1: unknown feature 'lok'. Did you mean 'loc'?; fix: features: case nom "
                         "gen dat acc ins loc, number sg pl, article def indef, prepositions de a en em di in da su "
                         "von zu an se в с з ב כ ל מ")
    assert issues[1] == (f"ru.yaml:12:{col(path, 12, '[Y.def]')}: P19/2: feature 'def' in [Y.def] is not available in ru; fix: ru slots may "
                         "use: acc dat gen ins loc nom pl sg в с")


def test_agreement_options_must_cover_the_languages_genders(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X] {X: masc=родился | fem=родилась} в [Y.loc].") + entry(
        "P19/2", "[X] {X: sg=жил | other=жили} в [Y.loc].") + entry("P19/3", "[X] {X: sg=жил} в [Y.loc].")
    path = write(tmp_path, "ru", body)
    assert issues_of(path) == [
        f"ru.yaml:8:{col(path, 8, '{')}: P19/1: agreement group misses neut and has no 'other' form; fix: add neut=... or 'other=...' "
        "(used for non-binary and unknown gender)",
        f"ru.yaml:16:{col(path, 16, '{')}: P19/3: agreement group misses pl and has no 'other' form; fix: add pl=... or other=...",
    ]


def test_agreement_with_the_answer_slot_is_rejected(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X] est né à [Y], {Y: masc=un beau pays | fem=une belle ville}.")
    path = write(tmp_path, "fr", body)
    assert issues_of(path) == [
        f"fr.yaml:8:{col(path, 8, '{Y')}: P19/1: agreement with the answer slot Y away from [Y] leaks the answer's "
        "gender or number into the prompt; fix: put the group right next to [Y] (it is then rendered per "
        "candidate, inside the answer: {Y: sg=ist | pl=sind} [Y]), agree with [X], or rephrase",
    ]


def test_agreement_with_the_answer_next_to_it_is_part_of_the_answer(tmp_path):
    body = "  P17:\n" + entry("P17/1", "Le pays de [X] {Y: pl=sont | other=est} [Y.def].")
    path = write(tmp_path, "fr", body)
    assert issues_of(path) == []


def test_mixed_script_words_cyrillic_in_latin_and_latin_in_cyrillic(tmp_path):
    # 'а' below is CYRILLIC SMALL LETTER A inside the English word 'was'; 'o' is Latin inside 'родился'
    en = write(tmp_path, "en", "  P19:\n" + entry("P19/1", "[X] wаs born in [Y]."))
    assert issues_of(en) == [
        f"en.yaml:8:{col(en, 8, 'а')}: P19/1: mixed-script word 'wаs': 'а' (U+0430 CYRILLIC SMALL LETTER A) is Cyrillic inside a "
        "Latin word; fix: type the Latin letter 'a' instead",
    ]
    ru = write(tmp_path, "ru", "  P19:\n" + entry("P19/1", "[X] рoдился в [Y.loc]."))
    assert issues_of(ru) == [
        f"ru.yaml:8:{col(ru, 8, 'o')}: P19/1: mixed-script word 'рoдился': 'o' (U+006F LATIN SMALL LETTER O) is Latin inside a "
        "Cyrillic word; fix: type the Cyrillic letter 'о' instead",
    ]


def test_letters_of_undeclared_scripts_and_option_forms_are_checked(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X] {X: masc=родился | fem=рoдилась | other=родился(-ась)} в [Y.loc].")
    path = write(tmp_path, "ru", body)
    assert issues_of(path)[0].startswith(f"ru.yaml:8:{col(path, 8, 'o')}: P19/1: mixed-script word 'рoдилась'")
    ko = write(tmp_path, "ko", "  P19:\n" + entry("P19/1", "[X+은] [Y]에서 born."))
    assert issues_of(ko) == [
        f"ko.yaml:8:{col(ko, 8, 'b')}: P19/1: letter 'b' (U+0062 LATIN SMALL LETTER B) in 'born' is Latin, but the file declares "
        "scripts ['Hangul']; fix: retype the word in Hangul or add Latin to 'scripts'",
    ]
    # Japanese mixes Han, Hiragana and Katakana inside words: allowed when declared
    assert script_issues("東京で生まれたアーティスト", 0, frozenset({"Han", "Hiragana", "Katakana"})) == []


def test_placeholders_that_would_survive_rendering(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X] was born in ［Y］ [Y].") + entry("P19/2", "(X) [X] was born in [Y].")
    path = write(tmp_path, "en", body)
    assert issues_of(path) == [
        f"en.yaml:8:{col(path, 8, '［')}: P19/1: '［Y］' looks like a slot but is not one and would survive rendering; fix: write the "
        "slot as [X] or [Y] with ASCII brackets and Latin capitals",
        f"en.yaml:12:{col(path, 12, '(X)')}: P19/2: '(X)' looks like a slot but is not one and would survive rendering; fix: write the "
        "slot as [X] or [Y] with ASCII brackets and Latin capitals",
    ]


def test_slots_must_fit_the_predicate_and_kind(tmp_path):
    body = ("  P19:\n" + entry("P19/1", "[X] was born somewhere.") + entry("P19/2", "[X] was born in [Y] or [Y].")
            + entry("P19/q1", "Where was [X] born, in [Y]?", "question") + entry("P19/3", "Someone was born in [Y].")
            + "  P999:\n" + entry("P999/1", "[X] is [Y]."))
    path = write(tmp_path, "en", body)
    assert issues_of(path) == [
        f"en.yaml:8:{col(path, 8, 'somewhere.') + 10}: P19/1: cloze template without the answer slot [Y]; fix: add [Y] where the answer goes",
        f"en.yaml:12:{col(path, 12, '[Y]', 2)}: P19/2: cloze template with 2 answer slots [Y]; fix: keep exactly one [Y]",
        f"en.yaml:17:{col(path, 17, '[Y]')}: P19/q1: question with an answer slot [Y]; fix: a question asks for the answer: remove [Y]",
        f"en.yaml:21:{col(path, 21, 'Someone')}: P19/3: template without the subject slot [X]; fix: mention the subject with [X]",
        "en.yaml:25: P999/1: unknown predicate 'P999'; fix: templates exist for the curated "
        "predicates: P17, P19, P20, P27, P30, P36, P37, P47, P103, P106, P136, P190, P264, P364, P449, P495, P530, "
        "P1303, P1376, P1412",
    ]


def test_ids_sources_and_duplicates(tmp_path):
    body = ("  P19:\n" + entry("P19/1", "[X] was born in [Y].") + entry("P19/1", "[X] was born in [Y].")
            + entry("P20/2", "[X] died in [Y].") + entry("P19/q1", "Where was [X] born?")
            + entry("P19/2", "[X] was born in [Y].").replace("source: human", "source: google"))
    path = write(tmp_path, "en", body)
    assert issues_of(path) == [
        "en.yaml:11: duplicate template id 'P19/1' (first at line 7); fix: give each paraphrase its own number",
        "en.yaml:15: P20/2: id 'P20/2' does not match its predicate P19; fix: cloze ids are P19/1, P19/2 ...; "
        "questions P19/q1",
        "en.yaml:19: P19/q1: id 'P19/q1' and kind 'cloze' disagree; fix: question ids carry 'q' (P19/q1) and "
        "'kind: question'; cloze ids do not",
        f"en.yaml:20:{col(path, 20, '?') + 1}: P19/q1: cloze template without the answer slot [Y]; fix: add [Y] where the answer goes",
        "en.yaml:23: P19/2: source 'google' is neither 'human' nor 'mt:<system>+<system>'; fix: e.g. source: human, "
        "or source: mt:googletrans+deepl",
    ]


def test_korean_particles_are_checked(tmp_path):
    body = "  P19:\n" + entry("P19/1", "[X+은] [Y+에셔] 태어났다.")
    path = write(tmp_path, "ko", body)
    assert issues_of(path) == [
        f"ko.yaml:8:{col(path, 8, '[Y+')}: P19/1: unknown Korean particle '에셔'. Did you mean '에'?; fix: particles: " + " ".join(
            sorted(__import__("factatlas.templates.backend_ko", fromlist=["PARTICLES"]).PARTICLES)),
    ]
    fr = write(tmp_path, "fr", "  P19:\n" + entry("P19/1", "[X+은] est né à [Y]."))
    assert issues_of(fr)[0] == (f"fr.yaml:8:{col(fr, 8, '[X+')}: P19/1: particle '+은' in [X+은]: particles exist for Korean, Turkish and Hungarian only; fix: "
                                "write the affix as literal text glued to the slot, e.g. [Y]에서")


def test_turkish_and_hungarian_suffixes_are_checked_like_korean_particles(tmp_path):
    tr = write(tmp_path, "tr", "  P19:\n" + entry("P19/1", "[X], [Y+de] doğdu."),
               "lang: tr\nname: Turkish\nscripts: [Latin]\ngenders: []\ntemplates:\n")
    assert issues_of(tr) == [
        f"tr.yaml:8:{col(tr, 8, '[Y+')}: P19/1: unknown Turkish particle 'de'; fix: particles: "
        + " ".join(sorted(__import__("factatlas.templates.backend_tr", fromlist=["PARTICLES"]).PARTICLES))]
    hu = write(tmp_path, "hu", "  P19:\n" + entry("P19/1", "[X] [Y+ben] született."),
               "lang: hu\nname: Hungarian\nscripts: [Latin]\ngenders: []\ntemplates:\n")
    assert issues_of(hu)[0].startswith(f"hu.yaml:8:{col(hu, 8, '[Y+')}: P19/1: unknown Hungarian particle 'ben'")
    ok = write(tmp_path, "hu", "  P19:\n" + entry("P19/1", "[X] [Y.def+ban] született.") + entry(
        "P19/q1", "Hol született [X]?", "question"), "lang: hu\nname: Hungarian\nscripts: [Latin]\ngenders: []\ntemplates:\n")
    assert issues_of(ok) == []


@pytest.mark.parametrize("scalar", [
    '"[X] was born in [Y.lok]."',  # double-quoted
    "'[X] was born in [Y.lok].'",  # single-quoted
    '"\\u00e9 [X] was born in [Y.lok]."',  # an escape is 6 characters in the file, 1 in the text
    "'it''s [X] born in [Y.lok].'",  # '' is 2 characters in the file, 1 in the text
    '"[X] \\"was\\" born in [Y.lok]."',  # escaped quotes
    "Where [X] was born - [Y.lok].",  # plain scalar (may hold brackets after its first character)
])
def test_columns_account_for_yaml_quoting(tmp_path, scalar):
    path = tmp_path / "en.yaml"
    path.write_text(HEADER["en"] + "  P19:\n    - id: P19/1\n      text: " + scalar + "\n", "utf-8")
    issues = [i for i in validate_file(read_language_file(path)) if "lok" in i.message]
    assert (issues[0].line, issues[0].col) == (8, col(path, 8, "lok"))


def test_block_scalar_columns(tmp_path):
    path = tmp_path / "en.yaml"
    path.write_text(HEADER["en"] + "  P19:\n    - id: P19/1\n      text: >-\n        [X] was born in [Y.lok].\n",
                    "utf-8")
    issues = [i for i in validate_file(read_language_file(path)) if "lok" in i.message]
    assert (issues[0].line, issues[0].col) == (9, col(path, 9, "lok"))


def test_load_library_raises_one_error_listing_every_problem(tmp_path):
    write(tmp_path, "en", "  P19:\n" + entry("P19/1", "[X] was born.", timeless=BIRTH)
          + entry("P19/2", "[X] born [Y.lok].", timeless=BIRTH))
    with pytest.raises(ConfigError) as info:
        load_library(["en"], root=tmp_path)
    text = str(info.value)
    assert text.startswith("2 problem(s) in template files:\n")
    assert "en.yaml:8:27: P19/1: cloze template without the answer slot [Y]" in text
    assert "unknown feature 'lok'" in text


def test_load_library_unknown_language_file(tmp_path):
    write(tmp_path, "en", VALID_RU.replace("ru", "en"), HEADER["en"])
    with pytest.raises(ConfigError, match=r"unknown template language 'xx'\. Available: .*\ben\b") as info:
        load_library(["xx"], root=tmp_path)
    assert f"no {tmp_path / 'xx.yaml'} nor " in str(info.value)


def test_user_folder_overlays_the_packaged_templates(tmp_path):
    write(tmp_path, "ru", VALID_RU)
    library = load_library(["ru", "fr"], root=tmp_path)
    packaged = load_library(["ru", "fr"])
    assert library.template_ids("ru") == ("P19/1", "P19/q1") != packaged.template_ids("ru")
    assert library.template_ids("fr") == packaged.template_ids("fr")


def test_invalid_yaml_names_the_place(tmp_path):
    path = tmp_path / "en.yaml"
    path.write_text("lang: en\ntemplates: [\n  - broken: {\n", "utf-8")
    with pytest.raises(ConfigError, match=r"en\.yaml:\d+:\d+: not valid YAML"):
        load_library(["en"], root=tmp_path)


def test_forms_by_life_status_must_leave_a_form_for_the_unknown(tmp_path):
    """A person whose death Wikidata does not record and whose life is not otherwise known takes the options
    without alive/dead: those alone must cover the genders, as in a group without life forms."""
    body = "  P27:\n" + entry("P27/1", "[X] {X: alive=является | dead=был} гражданином [Y.gen].") + entry(
        "P27/2", "[X] {X: masc+dead=был | fem+dead=была | masc=является | fem=является} гражданином [Y.gen].") + entry(
        "P27/3", "[X] {X: masc+dead=был | fem+dead=была | other=является} гражданином [Y.gen].")
    path = write(tmp_path, "ru", body)
    assert issues_of(path) == [
        f"ru.yaml:8:{col(path, 8, '{')}: P27/1: agreement group has forms for the living and the dead only; fix: "
        "add other=... (a form true of both, used when the life status is unknown)",
        f"ru.yaml:12:{col(path, 12, '{')}: P27/2: agreement group misses neut and has no 'other' form; fix: add "
        "neut=... or 'other=...' (used for non-binary and unknown gender)",
    ]


def test_a_person_template_agrees_with_life_status_or_says_why_it_is_timeless(tmp_path):
    """Life status is grammar (issue 40): a template whose subject is a person either agrees with the
    subject's life status or is declared ``timeless`` with a reason; for every language file alike."""
    body = ("  P27:\n"
            + entry("P27/1", "[X] is a citizen of [Y].")  # line 7: the present, said of the dead too
            + entry("P27/2", "[X] {X: alive=is | other=was} a national of [Y].")  # agrees: fine
            + entry("P27/3", "[X] held the citizenship of [Y].", timeless="a completed state")  # fine
            + entry("P27/4", "[X] {X: alive=is | other=was} a citizen of [Y].", timeless="both")  # line 20
            + "  P17:\n"
            + entry("P17/1", "[X] is in [Y].", timeless="places do not die"))  # line 26
    path = write(tmp_path, "en", body)
    found = issues_of(path, life=True)
    assert found == [
        "en.yaml:7: P27/1: a template about a person neither agrees with life status nor is declared timeless; "
        "fix: agree with the subject's life status ({X: alive=… | dead=… | other=<true of both>}) where the tense "
        "shows, or add 'timeless: <why it holds of the dead as of the living>'",
        "en.yaml:20: P27/4: declared timeless but agrees with life status; fix: keep one: the agreement group or "
        "'timeless'",
        "en.yaml:26: P17/1: 'timeless' on a template whose subject is a place, not a person; fix: remove the key: "
        "life status is said of people",
    ]
    assert read_language_file(path).templates[2].timeless == "a completed state"


def test_every_shipped_template_about_a_person_is_held_to_life_status():
    """The shipped files pass the rule, and each of their person templates either agrees or gives a reason."""
    from factatlas.templates.predicates import PREDICATES
    from factatlas.templates.syntax import LIFE_VALUES, Group, parse

    library = load_library()
    person = [t for lang in library.languages for t in library.templates(lang)
              if PREDICATES[t.predicate].subject_type == "person"]
    assert len(person) >= 13 * 9 * 4
    for t in person:
        agrees = any(isinstance(n, Group) and n.atoms & set(LIFE_VALUES) for n in parse(t.text).nodes)
        assert agrees != bool(t.timeless), (t.lang, t.id)
