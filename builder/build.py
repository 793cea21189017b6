"""The multi-parallel builder: facts + entities + a prompt source -> benchmark content.

Every language ends with exactly the same facts and, per fact, the same candidate and gold QIDs. Each
language carries the paraphrases (template ids) it has: a template a language lacks or cannot render is
skipped for that language only, and recorded as a Drop (step "build") naming the language. What fails
for the facts themselves is removed from all languages:

1. template ids whose kind differs between languages (removed everywhere); template ids some language
   lacks (skipped for that language);
2. facts whose subject or a direct object has no label in some language, or whose predicate has no
   template in some language;
3. a (fact, template) prompt that does not render in a language: skipped for that language; a fact left
   without a template in some language is dropped;
4. answer forms: an object that renders in no template of some language leaves the candidate pool (a fact
   loses such an augmented object from its golds, and is dropped when it concerns a direct object); a
   template that fails for an object the language's other templates render is skipped for that language
   in the whole predicate (the candidates stay the same in every language).
Candidate pools are then the valid objects of the surviving facts, per predicate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from factatlas.builder.benchmark import (
    SCHEMA_VERSION,
    BenchmarkContent,
    answer_start,
    prompt_id,
    referenced_qids,
)
from factatlas.builder.candidates import (
    CANDIDATE_MODES,
    SUBJECT_CANDIDATE,
    CandidateForms,
    SubjectExclusion,
    collision_report,
    pool_collisions,
    qid_sort_key,
    sampled_candidates,
    surface_collisions,
)
from factatlas.builder.hygiene import Hygiene, final_text, screen_facts, too_few_rendered
from factatlas.builder.losses import LanguageLoss
from factatlas.builder.sources import PromptSource, TemplateInfo, answer_variant, subject_key
from factatlas.builder.splits import (
    DEFAULT_FRACTIONS,
    DEFAULT_SALT,
    METHOD,
    assign_splits,
    realised_fractions,
    split_counts,
    validate_fractions,
    validate_salt,
)
from factatlas.builder.stats import WESTERN_CULTURE, compute_stats
from factatlas.errors import ConfigError, unknown
from factatlas.forms import normalise_form
from factatlas.popbuckets import popularity_buckets
from factatlas.records import (
    Drop,
    Entity,
    Fact,
    Prompt,
    Provenance,
    RenderFailure,
    frozen_mapping,
    pair_name_problem,
)

STEP = "build"


@dataclass(frozen=True)
class BuildSpec:
    name: str
    pair: str
    cultures: tuple[str, ...]
    languages: tuple[str, ...]
    template_ids: tuple[str, ...] | None = None  # None: every id all languages share
    candidate_mode: str = "predicate"
    k: int | None = None  # sampled mode only
    seed: int = 0
    fractions: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_FRACTIONS))
    split_salt: str = DEFAULT_SALT  # recorded in benchmark.json; a fact's split depends on it and its id only
    source: Mapping[str, Any] = field(default_factory=lambda: {"kind": "curated"})
    western: str = WESTERN_CULTURE
    hygiene: Hygiene = field(default_factory=Hygiene)  # mParaRel's data hygiene (builder/hygiene.py)
    # the fact's subject among its own candidates: "excluded" (ours) or "kept" (importers: as published)
    subject_candidate: str = "excluded"

    def validated(self) -> BuildSpec:
        if not self.languages:
            raise ConfigError("build: give at least one language, e.g. --langs ar,en")
        if len(set(self.languages)) != len(self.languages):
            raise ConfigError(f"build: a language is listed twice in {list(self.languages)}")
        if self.candidate_mode not in CANDIDATE_MODES:
            raise ConfigError(unknown("candidate mode", self.candidate_mode, CANDIDATE_MODES))
        if self.subject_candidate not in SUBJECT_CANDIDATE:
            raise ConfigError(unknown("subject candidate mode", self.subject_candidate, SUBJECT_CANDIDATE))
        if self.candidate_mode == "sampled" and (self.k is None or self.k < 2):
            raise ConfigError(f"build: sampled candidates need --k >= 2 (gold + K-1 negatives), got {self.k}")
        problem = pair_name_problem(self.pair)
        if problem:
            raise ConfigError(f"build: the benchmark's pair {problem}")
        validate_fractions(self.fractions)
        self.hygiene.validated()
        validate_salt(self.split_salt)
        return self


@dataclass(frozen=True)
class BuildResult:
    content: BenchmarkContent
    counts: dict[str, int]
    # what the multi-parallel rule removed from every language, per causing language (builder.losses)
    losses: tuple[LanguageLoss, ...] = ()


def _drop(item: str, reason: str, detail: str = "", fact: Fact | None = None, predicate: str = "") -> Drop:
    return Drop(item, STEP, reason, detail, fact.culture if fact else "", fact.predicate if fact else predicate, "")


Offered = dict[tuple[str, str], frozenset[str]]  # (predicate, template id) -> languages that have it


def select_templates(source: PromptSource, predicates: Sequence[str], spec: BuildSpec
                     ) -> tuple[dict[str, tuple[TemplateInfo, ...]], dict[tuple[str, str], str], Offered, list[Drop]]:
    """predicate -> templates of any language (in id order), status per (lang, id), the languages that
    have each template, drops. A template some language lacks is skipped for that language only."""
    langs = spec.languages
    wanted = set(spec.template_ids) if spec.template_ids is not None else None
    chosen: dict[str, tuple[TemplateInfo, ...]] = {}
    status: dict[tuple[str, str], str] = {}
    offered: Offered = {}
    drops: list[Drop] = []
    every_id: set[str] = set()
    for pred in predicates:
        per_lang = {lang: {t.id: t for t in source.templates(lang, pred)} for lang in langs}
        all_ids = set().union(*(set(d) for d in per_lang.values()))
        every_id |= all_ids
        if wanted is not None:
            all_ids &= wanted
        keep = []
        for tid in sorted(all_ids, key=_template_sort_key):
            having = [lang for lang in langs if tid in per_lang[lang]]
            kinds = {per_lang[lang][tid].kind for lang in having}
            if len(kinds) > 1:
                drops.append(_drop(tid, "template-kind-differs", f"kinds {sorted(kinds)}", predicate=pred))
                continue
            drops += [_drop(tid, f"template-missing:{lang}", f"template {tid} exists in {', '.join(having)} but "
                            f"not in {lang}; skipped for {lang}", predicate=pred)
                      for lang in langs if lang not in having]
            keep.append(per_lang[having[0]][tid])
            offered[(pred, tid)] = frozenset(having)
            for lang in having:
                status[(lang, tid)] = per_lang[lang][tid].status
        chosen[pred] = tuple(keep)
    if wanted is not None:
        absent = sorted(wanted - every_id)
        if absent:
            raise ConfigError(unknown("template id", absent[0], sorted(every_id)) if every_id else
                              f"unknown template id '{absent[0]}': no templates for these predicates")
    return chosen, status, offered, drops


def _template_sort_key(tid: str) -> tuple:
    pred, _, rest = tid.partition("/")
    return (qid_sort_key(pred.replace("P", "Q", 1)), rest.startswith("q"), len(rest), rest)


def missing_labels(fact: Fact, entities: Mapping[str, Entity], langs: Sequence[str]) -> list[str]:
    """'qid@lang' for the subject and direct objects lacking a label."""
    out = []
    for q in (fact.subject, *fact.direct_objects):
        e = entities.get(q)
        for lang in langs:
            if e is None or not e.labels.get(lang):
                out.append(f"{q}@{lang}")
    return out


def build_benchmark(facts: Sequence[Fact], entities: Mapping[str, Entity], source: PromptSource, spec: BuildSpec,
                    *, upstream_drops: Sequence[Drop] = (), toolkit_version: str = "") -> BuildResult:
    spec = spec.validated()
    langs = spec.languages
    drops: list[Drop] = []
    facts = sorted(facts, key=lambda f: f.id)
    if len({f.id for f in facts}) != len(facts):
        raise ConfigError("build: the input holds a fact id twice; re-run curate")
    predicates = sorted({f.predicate for f in facts}, key=lambda p: qid_sort_key(p.replace("P", "Q", 1)))
    templates, status, offered, template_drops = select_templates(source, predicates, spec)
    drops += template_drops
    fewest_cloze = {p: min(sum(t.kind == "cloze" and lang in offered[(p, t.id)] for t in ts) for lang in langs)
                    for p, ts in templates.items()}
    screened, hygiene_drops = screen_facts(facts, fewest_cloze, spec.hygiene)
    drops += hygiene_drops

    alive, step_drops = _facts_with_templates_and_labels(screened, templates, offered, entities, spec)
    drops += step_drops
    texts, fact_templates, step_drops = _render_prompts(alive, templates, offered, source, spec)
    drops += step_drops
    forms, unrenderable, skipped, step_drops = _render_answers(alive, fact_templates, entities, source, langs)
    drops += step_drops
    survivors, fact_templates, step_drops = _settle(alive, fact_templates, skipped, spec)
    drops += step_drops
    kept, golds, step_drops = _gold_objects(survivors, unrenderable)
    drops += step_drops

    pools = _pools(kept, golds)
    assignment = assign_splits((f.id for f in kept), spec.fractions, spec.split_salt)
    per_cell = split_counts(assignment, {f.id: (f.culture, f.predicate) for f in kept}, list(spec.fractions))

    prompts, removed = _make_prompts(kept, pools, golds, assignment, fact_templates, texts, forms, status, entities,
                                     spec)

    bench_entities = restrict_entities(entities, referenced_qids(prompts, kept), langs)
    labels = {e.qid: dict(e.labels) for e in bench_entities}
    candidates = [{"predicate": pred, "lang": lang, "qid": q, "label": labels[q][lang]}
                  for pred, pool in pools.items() for lang in langs for q in pool]
    collisions = pool_collisions(pools, labels, langs)
    inflections = getattr(source, "inflections", None)
    answer_inflection = ({lang: {kind: n for (lg, kind), n in sorted(inflections.items()) if lg == lang}
                          for lang in langs} if inflections is not None else None)
    stats = compute_stats(kept, prompts, entities, langs, western=spec.western, input_facts=facts,
                          extra={"duplicate_surface_forms": collision_report(collisions),
                                 "prompts_with_ambiguous_candidates": ambiguous_prompts(prompts, langs),
                                 "splits": per_cell,
                                 "split_fractions": realised_fractions(per_cell, spec.fractions),
                                 "answer_inflection": answer_inflection,
                                 "answer_gendered_labels": _per_lang(getattr(source, "gendered", None), langs),
                                 "candidates_removed": removed,
                                 "dropped": drop_counts(drops)})
    meta = _meta(spec, kept, prompts, drops, assignment, fact_templates, entities, toolkit_version)
    content = BenchmarkContent(meta, prompts, kept, bench_entities, candidates, [*upstream_drops, *drops], stats)
    counts = {"input_facts": len(facts), "facts": len(kept), "prompts": len(prompts), "dropped": len(drops)}
    return BuildResult(content, counts)


FactTemplates = dict[str, dict[str, list[TemplateInfo]]]  # fact id -> language -> its templates there
# records.Prompt's fields in order: _make_prompts passes them by position
PROMPT_FIELDS = ("prompt_id", "fact_id", "lang", "template_id", "kind", "text", "answer_start", "pair", "culture",
                 "predicate", "split", "subject_qid", "subject_label", "gold_qids", "gold_forms", "candidate_qids",
                 "candidate_forms", "template_status", "article_langs", "home_langs", "popularity",
                 "popularity_quantile", "popularity_log10")
if tuple(f.name for f in fields(Prompt)) != PROMPT_FIELDS:
    raise ImportError("records.Prompt's fields changed: update PROMPT_FIELDS and _make_prompts' call in build.py")


def _make_prompts(kept: Sequence[Fact], pools: Mapping[str, tuple[str, ...]], golds: Mapping[str, Sequence[str]],
                  assignment: Mapping[str, str], fact_templates: FactTemplates, texts: Mapping[tuple[str, str, str], str],
                  forms: Mapping[tuple[str, str, str, str], tuple[str, ...]], status: Mapping[tuple[str, str], str],
                  entities: Mapping[str, Entity], spec: BuildSpec) -> tuple[list[Prompt], dict[str, Any]]:
    """The prompts: every surviving fact in every language, with every template it kept there; and the
    candidates removed because they were the fact's subject, counted per predicate (stats.json)."""
    langs = spec.languages
    buckets = popularity_buckets(kept)
    prompts: list[Prompt] = []
    fillers = CandidateForms(forms, entities)  # predicate mode: one tuple per (lang, template, subject key)
    exclusion = SubjectExclusion(spec.subject_candidate)
    predicate_wide = spec.candidate_mode == "predicate"
    for f in kept:
        pool = pools[f.predicate]
        exclude = (f.subject,) if spec.subject_candidate == "excluded" and f.subject not in golds[f.id] else ()
        if predicate_wide:
            cands = exclusion.apply(f, pool, golds[f.id])
        else:
            cands = sampled_candidates(f.id, golds[f.id], pool, spec.k or 10, spec.seed, exclude=exclude)
            exclusion.note(f, pool, golds[f.id])
        gold = tuple(golds[f.id])
        skey = subject_key(entities, f.subject)
        # what every prompt of the fact repeats, made once (equal values: the rows are the same)
        split, bucket, article_langs, home_langs = assignment[f.id], buckets[f.id], tuple(f.article_langs), \
            tuple(f.home_langs)
        for lang in langs:
            subject_label = entities[f.subject].labels[lang]
            for t in fact_templates[f.id][lang]:
                text = final_text(texts[(f.id, lang, t.id)], t.kind, spec.hygiene)
                prompts.append(Prompt(  # by position, in PROMPT_FIELDS' order (a keyword call costs a fifth more)
                    prompt_id(f.id, lang, t.id), f.id, lang, t.id, t.kind, text, answer_start(text, t.kind),
                    spec.pair, f.culture, f.predicate, split, f.subject, subject_label, gold,
                    fillers.golds(lang, t.id, gold, skey), cands,
                    fillers.predicate_wide(lang, t.id, f.predicate, pool, cands, f.subject, skey)
                    if predicate_wide else fillers.sampled(lang, t.id, cands, skey),
                    status[(lang, t.id)], article_langs, home_langs, f.popularity, bucket.quantile, bucket.log10))
    return prompts, exclusion.report()


def _meta(spec: BuildSpec, kept: Sequence[Fact], prompts: Sequence[Prompt], drops: Sequence[Drop],
          assignment: Mapping[str, str], fact_templates: FactTemplates, entities: Mapping[str, Entity],
          toolkit_version: str) -> dict[str, Any]:
    """benchmark.json: what was built, from what, and how."""
    langs = spec.languages
    used_templates = {lang: sorted({t.id for f in kept for t in fact_templates[f.id][lang]}, key=_template_sort_key)
                      for lang in langs}
    return {
        "schema_version": SCHEMA_VERSION, "name": spec.name, "pair": spec.pair, "cultures": list(spec.cultures),
        "languages": list(langs), "templates": used_templates,
        "candidate_mode": spec.candidate_mode, "k": spec.k if spec.candidate_mode == "sampled" else None,
        "seed": spec.seed, "subject_candidate": spec.subject_candidate,
        "splits": {"method": METHOD, "salt": spec.split_salt, "fractions": dict(spec.fractions),
                   "counts": {name: sum(1 for s in assignment.values() if s == name) for name in spec.fractions}},
        "source": dict(spec.source), "toolkit_version": toolkit_version,
        "counts": {"facts": len(kept), "prompts": len(prompts), "dropped": len(drops)},
        **display_labels(kept, entities),
        **({"hygiene": spec.hygiene.to_json()} if spec.hygiene != Hygiene() else {}),
    }


def _facts_with_templates_and_labels(facts: Sequence[Fact], templates: Mapping[str, Sequence[TemplateInfo]],
                                     offered: Offered, entities: Mapping[str, Entity], spec: BuildSpec
                                     ) -> tuple[list[Fact], list[Drop]]:
    """Step 1: a fact needs a template of its predicate in every language, and labels in every language."""
    langs = spec.languages
    drops: list[Drop] = []
    alive: list[Fact] = []
    for f in facts:
        if not templates.get(f.predicate):
            if spec.template_ids is not None:
                drops.append(_drop(f.id, "template-not-selected", f"--templates selects no {f.predicate} template", f))
            else:
                drops.append(_drop(f.id, "no-template", f"no template of {f.predicate} exists", f))
            continue
        bare = [lang for lang in langs if not any(lang in offered[(f.predicate, t.id)] for t in templates[f.predicate])]
        if bare:
            drops.append(_drop(f.id, f"no-template:{bare[0]}", f"no {f.predicate} template in {', '.join(bare)}", f))
            continue
        lacking = missing_labels(f, entities, langs)
        if lacking:
            first_lang = lacking[0].split("@", 1)[1]
            drops.append(_drop(f.id, f"no-label:{first_lang}", "missing: " + ", ".join(lacking), f))
            continue
        alive.append(f)

    return alive, drops


def _render_prompts(alive: Sequence[Fact], templates: Mapping[str, Sequence[TemplateInfo]], offered: Offered,
                    source: PromptSource, spec: BuildSpec
                    ) -> tuple[dict[tuple[str, str, str], str], FactTemplates, list[Drop]]:
    """Step 2: each (fact, template) prompt in each language that has the template; one that does not
    render is skipped for that language only."""
    drops: list[Drop] = []
    texts: dict[tuple[str, str, str], str] = {}
    fact_templates: FactTemplates = {}
    for f in alive:
        per_lang: dict[str, list[TemplateInfo]] = {lang: [] for lang in spec.languages}
        for t in templates[f.predicate]:
            having = offered[(f.predicate, t.id)]
            for lang in spec.languages:
                if lang not in having:
                    continue
                r = source.render_prompt(lang, t.id, f.subject)
                if isinstance(r, RenderFailure):
                    drops.append(_drop(f"{f.id}|{t.id}", f"{r.reason}:{lang}", f"{r.detail}; skipped for {lang}", f))
                    continue
                texts[(f.id, lang, t.id)] = r
                per_lang[lang].append(t)
        fact_templates[f.id] = per_lang
    return texts, fact_templates, drops


def _render_answers(facts: Sequence[Fact], fact_templates: FactTemplates, entities: Mapping[str, Entity],
                    source: PromptSource, langs: Sequence[str]
                    ) -> tuple[dict[tuple[str, str, str, str], tuple[str, ...]], dict[tuple[str, str], Drop],
                               dict[tuple[str, str, str], Drop], list[Drop]]:
    """Step 3: answer forms per (lang, template, object, variant).

    An object without a label, or that renders in no template of some language, leaves the candidate pool
    (``unrenderable``, per (predicate, object)). A template that fails in a language for an object the
    language's other templates render is skipped for that language in the whole predicate (``skipped``,
    per (predicate, language, template)): candidates stay the same in every language, and the language
    keeps the paraphrases that can show them all.

    The variant is what of the subject the form depends on (sources.answer_variant: the subject's gender
    for occupations), so each prompt's gold and candidate fillers agree with its own subject."""
    forms: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
    unrenderable: dict[tuple[str, str], Drop] = {}  # (predicate, object): failures are per predicate
    # every template used in (predicate, language) x every object of the predicate: a prompt's candidates
    # come from the whole pool, including objects of facts whose own prompt for that template failed
    used: dict[tuple[str, str], set[str]] = defaultdict(set)
    objects_of: dict[str, set[str]] = defaultdict(set)
    # predicate -> subject key (gender) -> its first subject: variants depend on nothing else
    subjects_of: dict[str, dict[str, str]] = defaultdict(dict)
    for f in facts:
        for lang in langs:
            used[(f.predicate, lang)].update(t.id for t in fact_templates[f.id][lang])
        objects_of[f.predicate].update(f.object_qids)
        subjects_of[f.predicate].setdefault(subject_key(entities, f.subject), f.subject)
    failed: dict[tuple[str, str, str], dict[str, RenderFailure]] = defaultdict(dict)  # (pred, lang, tid) -> q -> why
    in_order = {key: sorted(tids, key=_template_sort_key) for key, tids in used.items()}  # once, not per object
    for pred in sorted(objects_of):
        for q in sorted(objects_of[pred], key=qid_sort_key):
            lacking = [lang for lang in langs if not (entities.get(q) and entities[q].labels.get(lang))]
            if lacking:
                unrenderable[(pred, q)] = _drop(q, f"no-label:{lacking[0]}", f"object label missing in "
                                                                             f"{', '.join(lacking)}", predicate=pred)
                continue
            variants = {answer_variant(entities, q, subject): subject for subject in subjects_of[pred].values()}
            for lang in langs:
                tids = in_order.get((pred, lang), [])
                for tid in tids:
                    for variant, subject in sorted(variants.items()):
                        r = source.render_answer(lang, tid, q, subject)
                        if isinstance(r, RenderFailure):
                            failed[(pred, lang, tid)].setdefault(q, r)
                        else:
                            forms[(lang, tid, q, variant)] = r
                if tids and all(q in failed[(pred, lang, tid)] for tid in tids):
                    r = failed[(pred, lang, tids[0])][q]
                    unrenderable.setdefault((pred, q), _drop(q, f"{r.reason}:{lang}", f"no {lang} template of {pred} "
                                                             f"renders it ({tids[0]}: {r.detail})", predicate=pred))
    skipped: dict[tuple[str, str, str], Drop] = {}
    for (pred, lang, tid), why in sorted(failed.items()):
        blocking = [q for q in sorted(why, key=qid_sort_key) if (pred, q) not in unrenderable]
        if blocking:
            r = why[blocking[0]]
            skipped[(pred, lang, tid)] = _drop(tid, f"{r.reason}:{lang}", f"no answer form for {len(blocking)} "
                                               f"objects (e.g. {blocking[0]}: {r.detail}); template {tid} skipped "
                                               f"for {lang}", predicate=pred)
    ordered = sorted(unrenderable, key=lambda k: (k[0], qid_sort_key(k[1])))
    return forms, unrenderable, skipped, [unrenderable[k] for k in ordered] + list(skipped.values())


def _settle(facts: Sequence[Fact], fact_templates: FactTemplates, skipped: Mapping[tuple[str, str, str], Drop],
            spec: BuildSpec) -> tuple[list[Fact], FactTemplates, list[Drop]]:
    """Step 4: each fact's templates per language without those skipped for answer forms; a fact left
    without a template (or with fewer than --min-templates) in some language is dropped."""
    drops: list[Drop] = []
    kept: list[Fact] = []
    out: FactTemplates = {}
    for f in facts:
        per_lang = {lang: [t for t in ts if (f.predicate, lang, t.id) not in skipped]
                    for lang, ts in fact_templates[f.id].items()}
        bare = [lang for lang in spec.languages if not per_lang[lang]]
        if bare:
            drops.append(_drop(f.id, f"no-renderable-template:{bare[0]}",
                               f"no template renders in {', '.join(bare)}", f))
            continue
        fewest = min(spec.languages, key=lambda lang: sum(t.kind == "cloze" for t in per_lang[lang]))
        if (short := too_few_rendered(f, [t.kind for t in per_lang[fewest]], spec.hygiene)) is not None:
            drops.append(short)
            continue
        out[f.id] = per_lang
        kept.append(f)
    return kept, out, drops


def _gold_objects(survivors: Sequence[Fact], unrenderable: Mapping[tuple[str, str], Drop]
                  ) -> tuple[list[Fact], dict[str, tuple[str, ...]], list[Drop]]:
    """Step 4: a fact keeps the valid objects that have answer forms; one whose direct object lost its
    forms is dropped, a lost augmented object is recorded."""
    drops: list[Drop] = []
    kept: list[Fact] = []
    golds: dict[str, tuple[str, ...]] = {}
    for f in survivors:
        bad_direct = [q for q in f.direct_objects if (f.predicate, q) in unrenderable]
        if bad_direct:
            drops.append(_drop(f.id, "gold-unrenderable", f"direct objects {', '.join(bad_direct)} have no "
                                                           "answer form in some language", f))
            continue
        g = tuple(o.qid for o in f.objects if (f.predicate, o.qid) not in unrenderable)
        lost = [o.qid for o in f.objects
                if (f.predicate, o.qid) in unrenderable and o.provenance is not Provenance.DIRECT]
        if lost:
            drops.append(_drop(f.id, "augmented-object-removed", ", ".join(lost), f))
        golds[f.id] = g
        kept.append(f)
    return kept, golds, drops


def _per_lang(counter: Mapping[tuple[str, str], int] | None, langs: Sequence[str]) -> dict | None:
    """(lang, kind) counts -> {lang: {kind: n}}; None when the source keeps no such counts."""
    if counter is None:
        return None
    return {lang: {kind: n for (lg, kind), n in sorted(counter.items()) if lg == lang} for lang in langs}


def _pools(facts: Sequence[Fact], golds: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    pools: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        pools[f.predicate].update(golds[f.id])
    return {p: tuple(sorted(qs, key=qid_sort_key)) for p, qs in sorted(pools.items())}


def restrict_entities(entities: Mapping[str, Entity], qids: set[str], langs: Sequence[str]) -> list[Entity]:
    """The referenced entities, with labels and aliases limited to the benchmark's languages."""
    out = []
    for q in sorted(qids, key=qid_sort_key):
        e = entities.get(q)
        if e is None:
            continue
        out.append(Entity(e.qid, frozen_mapping({lang: e.labels[lang] for lang in langs if lang in e.labels}),
                          frozen_mapping({lang: tuple(e.aliases[lang]) for lang in langs if e.aliases.get(lang)}),
                          e.gender, e.gender_source, tuple(e.classes), e.sitelinks,
                          frozen_mapping({lang: e.female_labels[lang] for lang in langs if lang in e.female_labels}),
                          frozen_mapping({lang: e.male_labels[lang] for lang in langs if lang in e.male_labels}),
                          e.life, e.life_source))
    return out


def ambiguous_prompts(prompts: Sequence[Prompt], langs: Sequence[str]) -> dict[str, int]:
    """Per language: prompts whose candidate forms give one surface to two distinct QIDs."""
    out = {lang: 0 for lang in langs}
    cache: dict[tuple[int, int], bool] = {}  # prompts share their candidate tuples: check each pair once
    for p in prompts:
        key = (id(p.candidate_qids), id(p.candidate_forms))
        if key not in cache:
            cache[key] = _shares_a_surface(p)
        out[p.lang] += cache[key]
    return out


def _shares_a_surface(p: Prompt) -> bool:
    """Whether two distinct candidates of ``p`` have one surface form (``surface_collisions``); most lists have
    as many distinct forms as candidates, which settles it without grouping them."""
    n = len(p.candidate_forms)
    if n == len(p.candidate_qids) and len(set(map(normalise_form, p.candidate_forms))) == n:
        return False
    return bool(surface_collisions(p.lang, p.prompt_id, zip(p.candidate_qids, p.candidate_forms, strict=True)))


def drop_counts(drops: Sequence[Drop]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for d in drops:
        counts[f"{d.step}/{d.reason}"] += 1
    return dict(sorted(counts.items()))


# ---- what the build records ----------------------------------------------------------------------

def toolkit_version() -> str:
    from factatlas import __version__

    return __version__


def display_labels(facts: Sequence[Fact], entities: Mapping[str, Entity]) -> dict[str, dict[str, str]]:
    """What the report and the dataset card name things by, recorded in benchmark.json so that they read
    the benchmark and never a stage's config: predicate labels from the registry (predicates it does not
    know stay bare PIDs) and the English (else first) label of every country the facts matched through."""
    from factatlas.predicates import load_predicates

    registry = load_predicates()
    countries: dict[str, str] = {}
    for q in sorted({c for f in facts for c in f.countries}):
        e = entities.get(q)
        if e is not None and e.labels:
            countries[q] = e.labels.get("en") or e.labels[sorted(e.labels)[0]]
    return {"predicate_labels": {p: registry[p].label for p in sorted({f.predicate for f in facts}) if p in registry},
            "country_labels": countries}


def order_cultures(cultures: set[str] | Sequence[str], western: str = WESTERN_CULTURE) -> tuple[str, ...]:
    """The non-Western culture first, as pair names read ("arab-west")."""
    return tuple(sorted(set(cultures), key=lambda c: (c == western, c)))
