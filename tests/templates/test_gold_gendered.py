"""Gendered object labels (Wikidata P2521 female / P3321 male form of label), over real renders.

A P106 gold filler and every candidate filler of the prompt are formed from the label that agrees with
the subject's P21 («A atividade profissional de Fairuz é cantora», «Профессия Элиссы — певица»); objects without a
gendered form keep their label, counted with a reason.
"""

from __future__ import annotations

import pytest

from factatlas.builder.build import BuildSpec, build_benchmark
from factatlas.builder.sources import LibrarySource, answer_variant
from factatlas.records import Entity, Gender, frozen_mapping
from factatlas.tables import prompt_to_row, read_entities, write_entities
from factatlas.templates.library import load_library
from factatlas.templates.render import gendered_label
from tests.langs import SHIPPED_LANGS

LANGS = SHIPPED_LANGS


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from factatlas.curate.engine import CurationConfig, curate

    run = tmp_path_factory.mktemp("gold") / "arab-west"
    result = curate(CurationConfig(pair="arab-west", langs=LANGS, predicates=("P106",)), run)
    source = LibrarySource(load_library(LANGS), result.entities)
    spec = BuildSpec(name="t", pair="arab-west", cultures=("arab", "west"), languages=LANGS)
    content = build_benchmark(result.facts, result.entities, source, spec).content
    return result.entities, {r.prompt_id: prompt_to_row(r) for r in content.prompts}, content.stats


def _sentence(rows, prompt_id: str) -> str:
    r = rows[prompt_id]
    return r["text"].replace("[Y]", r["gold_forms"][0][0])


# One woman's occupation per affected language, as a speaker writes it.
WOMEN = {
    "arab:P106:Q3247658|ar|P106/3": "فيروز معروفة كمغنية.",
    "arab:P106:Q3247658|hi|P106/1": "फ़ैरूज़ का पेशा गायिका है।",
    "arab:P106:Q3247658|pt|P106/3": "A atividade profissional de Fairuz é cantora.",
    "arab:P106:Q1118831|de|P106/2": "Elissa ist von Beruf Sängerin.",
    "arab:P106:Q1118831|ru|P106/3": "Элисса по профессии является певицей.",
    "arab:P106:Q2424957|ru|P106/3": "Фатен Хамама по профессии была актрисой.",  # d. 2015
    "arab:P106:Q1110560|fr|P106/3": "L'occupation d'Oum Kalthoum était actrice.",  # d. 1975
    "arab:P106:Q47780|es|P106/3": "La actividad profesional de Zaha Hadid era arquitecta.",  # d. 2016
    "arab:P106:Q2424957|it|P106/3": "L'attività professionale di Faten Hamama era attrice.",
    "arab:P106:Q1110560|en|P106/2": "Umm Kulthum's profession was actress.",
    "arab:P106:Q1110560|ja|P106/3": "ウンム・クルスームは女優として知られている。",
}


@pytest.mark.slow
def test_curated_occupations_carry_wikidata_gendered_forms(built):
    entities, _, _ = built
    actor = entities["Q33999"]
    assert actor.female_labels["es"] == "actriz" and actor.female_labels["ru"] == "актриса"
    assert actor.female_labels["ar"] == "ممثلة" and actor.labels["es"] == "actor"
    assert entities["Q82955"].male_labels["fr"] == "homme politique"  # P3321
    assert "zh" not in actor.female_labels  # zh nouns do not mark gender


def test_women_get_the_feminine_occupation_in_every_language(built):
    _, rows, _ = built
    assert {p: _sentence(rows, p) for p in WOMEN} == WOMEN


def test_every_candidate_filler_agrees_with_the_subject(built):
    entities, rows, _ = built
    # Fairuz (fem) and Tamer Hosny (masc) share the predicate-wide candidate list
    fem, masc = rows["arab:P106:Q3247658|de|P106/1"], rows["arab:P106:Q1391164|de|P106/1"]
    assert fem["candidate_qids"] == masc["candidate_qids"]
    for q, f, m in zip(fem["candidate_qids"], fem["candidate_forms"], masc["candidate_forms"], strict=True):
        e = entities[q]
        assert f == e.female_labels.get("de", e.labels["de"]), q
        assert m == e.male_labels.get("de", e.labels["de"]), q
    assert "Schauspielerin" in fem["candidate_forms"] and "Schauspieler" in masc["candidate_forms"]
    ru = rows["arab:P106:Q1118831|ru|P106/2"]["candidate_forms"]
    assert "актриса" in ru and "актёр" not in ru


def test_gold_keeps_the_plain_label_for_lenient_matching(built):
    _, rows, _ = built
    r = rows["arab:P106:Q1118831|ru|P106/2"]
    assert r["gold_forms"][r["gold_qids"].index("Q177220")][:2] == ("певица", "певец")  # the woman's form, then the plain label


def test_fallbacks_to_the_plain_label_are_counted_per_language(built):
    _, _, stats = built
    counts = stats["answer_gendered_labels"]
    assert counts["de"]["P2521"] > 0 and counts["fr"]["P3321"] > 0
    # es «cantante» has no female form: a woman's singer keeps the label, counted with its reason
    assert counts["es"]["label:no-female-form"] > 0
    assert "P2521" not in counts["zh"] and counts["zh"]["label:no-female-form"] > 0


def _occupation() -> Entity:
    return Entity("Q33999", frozen_mapping({"es": "actor", "fr": "acteur", "zh": "演员"}),
                  female_labels=frozen_mapping({"es": "actriz", "fr": "actrice"}),
                  male_labels=frozen_mapping({"fr": "acteur"}))


@pytest.mark.parametrize(("gender", "lang", "expected"), [
    (Gender.FEMININE, "es", ("actriz", "P2521")),
    (Gender.MASCULINE, "fr", ("acteur", "P3321")),
    (Gender.MASCULINE, "es", ("actor", "label")),
    (Gender.FEMININE, "zh", ("演员", "label:no-female-form")),
    (Gender.NON_BINARY, "es", ("actor", "label:subject-nonbinary")),
    (Gender.UNKNOWN, "es", ("actor", "label:subject-gender-unknown")),
])
def test_gendered_label_decisions(gender, lang, expected):
    subject = Entity("Q1", frozen_mapping({"es": "X"}), gender=gender, gender_source="P21")
    assert gendered_label(_occupation(), lang, subject) == expected


def test_objects_without_gendered_forms_have_one_variant():
    city = Entity("Q85", frozen_mapping({"es": "El Cairo"}))
    woman = Entity("Q1", frozen_mapping({"es": "X"}), gender=Gender.FEMININE, gender_source="P21")
    man = Entity("Q2", frozen_mapping({"es": "Y"}), gender=Gender.MASCULINE, gender_source="P21")
    entities = {"Q85": city, "Q33999": _occupation(), "Q1": woman, "Q2": man}
    assert answer_variant(entities, "Q85", "Q1") == answer_variant(entities, "Q85", "Q2") == ""
    assert answer_variant(entities, "Q33999", "Q1") == "fem" != answer_variant(entities, "Q33999", "Q2")


def test_gendered_forms_round_trip_through_the_label_table(tmp_path):
    write_entities(tmp_path, [_occupation()])
    back = read_entities(tmp_path)["Q33999"]
    assert back.female_labels == {"es": "actriz", "fr": "actrice"} and back.male_labels == {"fr": "acteur"}
    assert back.labels["zh"] == "演员"
