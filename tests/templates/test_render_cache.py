"""What the renderer keeps instead of working out again (templates/render_cache.py, Library.get's index): a kept
value is the one a fresh computation gives, for every key it depends on (language, the sound before a
preposition, the library's file as it is now)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from factatlas.records import Gender, Life, RenderFailure
from factatlas.templates.library import LanguageFile, Library, Template, load_library
from factatlas.templates.morphology import Features
from factatlas.templates.render import RenderedAnswer, RenderedPrompt, Renderer
from factatlas.templates.render_cache import SlotForms
from tests.templates.templates_fixtures import CITY, ENTITIES, HUMAN, OCCUPATION, entity

CAIRO = entity("Q85", {"uk": "Каїр", "ru": "Каир", "en": "Cairo"}, (CITY,))
LOC_V = Features(case="loc", preposition="в")
LIVING = entity("Q900001", {"ru": "Иван Петров", "uk": "Іван Петров", "de": "Iwan Petrow", "ko": "이반 페트로프"},
                (HUMAN,), Gender.MASCULINE, life=Life.ALIVE)


def test_slot_forms_keep_each_language_and_the_sound_before_a_preposition_apart():
    memo = SlotForms()
    renderer = Renderer({"Q85": CAIRO}, slot_forms=memo)
    assert renderer.fill(CAIRO, "uk", Features(), "place").form == "Каїр"
    assert renderer.fill(CAIRO, "ru", Features(), "place").form == "Каир"  # not the Ukrainian form kept
    assert renderer.fill(CAIRO, "uk", LOC_V, "place", before="народився").form == "в Каїрі"  # after a vowel
    assert renderer.fill(CAIRO, "uk", LOC_V, "place", before="помер").form == "у Каїрі"  # between consonants
    assert (memo.hits, memo.misses, len(memo)) == (0, 4, 4)
    # the same slot again: the kept form, whatever the text before ends the same way
    assert renderer.fill(CAIRO, "uk", LOC_V, "place", before="він помер").form == "у Каїрі"
    assert memo.hits == 1
    # an entity that is not the renderer's own, under the same QID: made, never read from the memo
    other = entity("Q85", {"uk": "Ель-Кагіра"}, (CITY,))
    assert renderer.fill(other, "uk", Features(), "place").form == "Ель-Кагіра"
    assert (memo.hits, len(memo)) == (1, 4)


def test_slot_forms_start_again_at_their_limit_and_still_give_the_right_form():
    memo = SlotForms(limit=2)
    renderer = Renderer({"Q85": CAIRO}, slot_forms=memo)
    forms = [renderer.fill(CAIRO, lang, Features(), "place").form for lang in ("uk", "ru", "en", "uk")]
    assert forms == ["Каїр", "Каир", "Cairo", "Каїр"]
    assert len(memo) <= 2
    with pytest.raises(ValueError, match="limit"):
        SlotForms(limit=0)


def _renders(renderer: Callable[[], Renderer], library: Library, langs: tuple[str, ...],
             pairs: list[tuple[str, str]]) -> list:
    out = []
    for lang in langs:
        for template in library.file(lang).templates:
            for subject, obj in pairs:
                prompt = renderer().render_prompt(template, subject)
                answer = renderer().render_answer(template, obj, subject)
                out.append((template.id, lang, subject, obj,
                            prompt.text if isinstance(prompt, RenderedPrompt) else (prompt.reason, prompt.detail),
                            (answer.forms, answer.inflection, answer.label_source, answer.backend, answer.slot_form)
                            if isinstance(answer, RenderedAnswer) else (answer.reason, answer.detail)))
    return out


def test_a_renderer_keeps_nothing_that_changes_a_render():
    """Every template of four languages, for people of both genders and places,
    rendered by a fresh renderer per call (nothing kept from another call), then by one renderer that keeps
    its plans, choices and agreements, then by one with slot forms too, twice (the second time from what it
    kept): the same texts, forms and failures."""
    langs = ("ru", "uk", "de", "ko")
    library = load_library(langs)
    pairs = [("Q7200", "Q649"), ("Q80440", "Q172"), ("Q254", "Q60"), (LIVING.qid, "Q649")]
    entities = {**ENTITIES, LIVING.qid: LIVING}
    warm = Renderer(entities)
    for lang in langs:
        warm.backend(lang)
    fresh = _renders(lambda: Renderer(entities, backends=warm._backends), library, langs, pairs)
    one = Renderer(entities, backends=warm._backends)
    assert _renders(lambda: one, library, langs, pairs) == fresh
    memo = SlotForms()
    kept = Renderer(entities, backends=warm._backends, slot_forms=memo)
    assert _renders(lambda: kept, library, langs, pairs) == fresh
    assert _renders(lambda: kept, library, langs, pairs) == fresh
    assert memo.hits > memo.misses > 0
    assert any(not isinstance(r[4], tuple) for r in fresh) and any(isinstance(r[5][0], tuple) for r in fresh)
    # the templates agree with both genders («родился» / «родилась») and with life status («является»)
    texts = {r[4] for r in fresh}
    assert {"Александр Пушкин родился [Y].", "Анна Ахматова родилась [Y]."} <= texts
    assert {"Александр Пушкин был гражданином [Y].", "Иван Петров является гражданином [Y]."} <= texts


def test_a_plan_is_kept_per_text_and_predicate():
    renderer = Renderer(ENTITIES)
    born, capital = _template("P19/1", "[X]: [Y]."), _template("P36/1", "[X]: [Y].")  # one text, two predicates
    assert (renderer._plan(born).subject_type, renderer._plan(capital).subject_type) == ("person", "country")


def test_the_agreement_of_a_written_label_is_kept_per_slot_type():
    nile = entity("Q3392", {"ru": "Нил"}, ())
    renderer = Renderer({nile.qid: nile})
    assert renderer.agreement(nile, "ru", "place").gender is Gender.MASCULINE
    assert renderer.agreement(nile, "ru", "person").gender is Gender.UNKNOWN  # a name of unknown gender


def test_an_answer_is_kept_per_language_subject_gender_sentence_start_and_the_words_after_it():
    """Answers are kept across templates whose answer reads alike; one that reads otherwise gets its own."""
    actor = entity("Q33999", {"en": "actor", "es": "actor"}, (OCCUPATION,), female={"en": "actress", "es": "actriz"})
    woman = entity("Q80440", {"en": "Anna Akhmatova", "es": "Anna Ajmátova"}, (HUMAN,), Gender.FEMININE)
    man = entity("Q7200", {"en": "Alexander Pushkin", "es": "Aleksandr Pushkin"}, (HUMAN,), Gender.MASCULINE)
    lisbon = entity("Q274118", {"hi": "लिस्बन ज़िला"}, (CITY,))
    renderer = Renderer({e.qid: e for e in (actor, woman, man, lisbon)}, slot_forms=SlotForms())

    def filler(lang: str, tid: str, text: str, obj: str, subject: str) -> str:
        template = replace(_template(tid, text), lang=lang)
        answer = renderer.render_answer(template, obj, subject)
        assert isinstance(answer, RenderedAnswer), answer
        return answer.forms[0]

    assert filler("en", "P106/1", "[X] works as [Y].", actor.qid, woman.qid) == "actress"
    assert filler("en", "P106/2", "[X] is an [Y].", actor.qid, woman.qid) == "actress"  # the kept answer
    assert filler("en", "P106/1", "[X] works as [Y].", actor.qid, man.qid) == "actor"  # the subject's gender
    assert filler("es", "P106/1", "[X] works as [Y].", actor.qid, woman.qid) == "actriz"  # the language
    assert filler("en", "P106/3", "[Y]: that is what [X] does.", actor.qid, man.qid) == "Actor"  # a sentence start
    # one text before the answer, a postposition after it or not: «लिस्बन ज़िले में», «लिस्बन ज़िला है»
    assert filler("hi", "P19/1", "[X] का जन्मस्थान [Y] में है।", lisbon.qid, man.qid) == "लिस्बन ज़िले"
    assert filler("hi", "P19/2", "[X] का जन्मस्थान [Y] है।", lisbon.qid, man.qid) == "लिस्बन ज़िला"


def _file(lang: str, *templates: Template) -> LanguageFile:
    return LanguageFile(lang, lang, ("Latn",), (), templates, f"{lang}.yaml", lang)


def _template(tid: str, text: str) -> Template:
    return Template(tid, "en", tid.split("/")[0], "cloze", text, "reviewed", "human")


def test_library_get_finds_the_first_template_of_an_id_in_the_file_as_it_is_now():
    first, second = _template("P19/1", "[X] was born in [Y]."), _template("P19/1", "[X] is from [Y].")
    library = Library({"en": _file("en", first, second, _template("P36/1", "The capital of [X] is [Y]."))})
    assert library.get("en", "P19/1") is first
    assert library.get("en", "P19/9") is None
    # a language's file replaced (an overlay, added paraphrases): the new file's template, not the indexed one
    library.files["en"] = _file("en", second)
    assert library.get("en", "P19/1") is second
    assert library.get("en", "P36/1") is None
    other = replace(library, files={"en": _file("en", first)})
    assert other.get("en", "P19/1") is first and library.get("en", "P19/1") is second


def test_a_template_that_does_not_parse_fails_with_its_place_each_time():
    broken = replace(_template("P19/1", "[X] was born in [Y"), path="en.yaml", line=3)
    renderer = Renderer(ENTITIES, slot_forms=SlotForms())
    for _ in range(2):
        failure = renderer.render_prompt(broken, "Q7200")
        assert isinstance(failure, RenderFailure) and failure.reason == "template-error"
        assert failure.detail.startswith("en.yaml:3")
