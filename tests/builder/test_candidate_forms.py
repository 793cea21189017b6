"""The fillers of each prompt's golds and candidates (builder/candidates.py ``CandidateForms``): what a
predicate-wide list shares is kept per language, template, subject key and removed subject, and equals the
filler of each candidate looked up on its own."""

from __future__ import annotations

from factatlas.records import Entity, Gender, frozen_mapping

ACTOR, SINGER, PARIS, ROME = "Q33999", "Q177220", "Q90", "Q220"
POOL = (PARIS, ROME, ACTOR, SINGER)  # in QID order, as the build orders pools: Q90 < Q220 < Q33999 < Q177220


def _entities() -> dict[str, Entity]:
    def e(qid: str, label: str, female: str = "") -> Entity:
        return Entity(qid, frozen_mapping({"es": label}), frozen_mapping({}), Gender.UNKNOWN, "", (),
                      female_labels=frozen_mapping({"es": female} if female else {}))

    return {q: e(q, *rest) for q, *rest in ((ACTOR, "actor", "actriz"), (SINGER, "cantante", "cantante"),
                                           (PARIS, "París"), (ROME, "Roma"))}


# forms[(lang, template, qid, variant)]: the filler first; gendered objects by the subject's key
FORMS = {
    ("es", "P106/1", ACTOR, "female"): ("actriz", "actor"), ("es", "P106/1", ACTOR, "male"): ("actor",),
    ("es", "P106/1", SINGER, "female"): ("cantante",), ("es", "P106/1", SINGER, "male"): ("cantante",),
    ("es", "P106/1", PARIS, ""): ("París",), ("es", "P106/1", ROME, ""): ("Roma",),
    ("es", "P106/2", ACTOR, "female"): ("una actriz",), ("es", "P106/2", ACTOR, "male"): ("un actor",),
    ("es", "P106/2", SINGER, "female"): ("una cantante",), ("es", "P106/2", SINGER, "male"): ("un cantante",),
    ("es", "P106/2", PARIS, ""): ("en París",), ("es", "P106/2", ROME, ""): ("en Roma",),
}


def _one_by_one(tid: str, cands: tuple[str, ...], key: str) -> tuple[str, ...]:
    gendered = {ACTOR, SINGER}
    return tuple(FORMS[("es", tid, q, key if q in gendered else "")][0] for q in cands)


def test_predicate_wide_fillers_are_kept_per_template_subject_key_and_removed_subject():
    from factatlas.builder.candidates import CandidateForms

    fillers = CandidateForms(FORMS, _entities())
    whole = fillers.predicate_wide("es", "P106/1", "P106", POOL, POOL, "Q1", "female")
    assert whole == ("París", "Roma", "actriz", "cantante")
    # another subject key: the masculine forms, not the feminine ones kept for the pool
    assert fillers.predicate_wide("es", "P106/1", "P106", POOL, POOL, "Q2", "male") == \
        ("París", "Roma", "actor", "cantante")
    # another template: its own fillers
    assert fillers.predicate_wide("es", "P106/2", "P106", POOL, POOL, "Q1", "female") == \
        ("en París", "en Roma", "una actriz", "una cantante")
    # the pool less its subject (Rome, then Paris): the pool's fillers less that one, each list its own
    less_rome = tuple(q for q in POOL if q != ROME)
    less_paris = tuple(q for q in POOL if q != PARIS)
    assert fillers.predicate_wide("es", "P106/1", "P106", POOL, less_rome, ROME, "female") == \
        ("París", "actriz", "cantante")
    assert fillers.predicate_wide("es", "P106/1", "P106", POOL, less_paris, PARIS, "female") == \
        ("Roma", "actriz", "cantante")
    for tid in ("P106/1", "P106/2"):
        for key in ("female", "male"):
            for subject, cands in ((ROME, less_rome), (PARIS, less_paris), ("Q1", POOL)):
                assert fillers.predicate_wide("es", tid, "P106", POOL, cands, subject, key) == \
                    _one_by_one(tid, cands, key)
                assert fillers.sampled("es", tid, cands, key) == _one_by_one(tid, cands, key)
    # a list of one predicate's subject-kept tuples is shared: the same object for every prompt that asks
    assert fillers.predicate_wide("es", "P106/1", "P106", POOL, less_rome, ROME, "female") is \
        fillers.predicate_wide("es", "P106/1", "P106", POOL, less_rome, ROME, "female")


def test_gold_fillers_take_the_subjects_variant_for_gendered_objects_only():
    from factatlas.builder.candidates import CandidateForms

    fillers = CandidateForms(FORMS, _entities())
    assert fillers.golds("es", "P106/1", (ACTOR,), "female") == (("actriz", "actor"),)
    assert fillers.golds("es", "P106/1", (ACTOR,), "male") == (("actor",),)
    assert fillers.golds("es", "P106/2", (PARIS, ACTOR), "male") == (("en París",), ("un actor",))
