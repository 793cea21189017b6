"""Rendering: a template + entities -> prompt text with the answer marker, and answer filler forms.

```python
r = Renderer(entities)
r.render_prompt(template, "Q7186")            # RenderedPrompt(text="Marie Curie was born in [Y].") | RenderFailure
r.render_answer(template, "Q270", "Q7186")     # RenderedAnswer(forms=("Warschau", "Warschau", ...))
```
Everything that depends on the answer (its case, article, fused preposition, Korean particle) is part of
the answer's filler form, rendered per object; the prompt holds ``ANSWER_MARKER`` exactly once.
A slot that cannot be filled is a ``RenderFailure`` with a stable reason — never the base label.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace

from factatlas.records import ANSWER_MARKER, Entity, Gender, RenderFailure
from factatlas.templates.backend_registry import make_backend
from factatlas.templates.gender import entity_type, resolve_agreement
from factatlas.templates.labels import (  # noqa: F401 (gendered_label, GENDER_FALLBACKS: importable here)
    GENDER_FALLBACKS,
    clean_label,
    disambiguator_as_head,
    gendered_label,
    title_noun,
    title_noun_always,
    title_quotes,
    title_quotes_before_particle,
)
from factatlas.templates.lexicon import LexiconEntry, entry_for
from factatlas.templates.library import Template
from factatlas.templates.morphology import (
    EXACT,
    FAILED,
    GUESSED,
    NONE,
    Agreement,
    Features,
    InflectionBackend,
    InflectionRequest,
    InflectionResult,
    language_registry,
)
from factatlas.templates.render_cache import SlotForms, TemplatePlan, plan_template
from factatlas.templates.slot_context import before_punctuation, choose_option, last_sound
from factatlas.templates.syntax import Group, ParsedTemplate, Slot, TemplateSyntaxError, Text, parse

# Stable failure reasons (counted in render reports and build drops).
FAILURE_REASONS = ("unknown-entity", "no-label", "unknown-language", "template-error", "inflection-unsupported",
                   "inflection-failed", "inflection-guessed", "no-agreement-form", "placeholder-survived",
                   "answer-marker")

_SURVIVORS = re.compile(r"[\[\]{}]")


_SPACES = re.compile(r"[ \t]{2,}")


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    template_id: str
    lang: str
    kind: str
    text: str  # cloze: holds ANSWER_MARKER exactly once
    subject_inflection: str = NONE  # exact | guessed | none: how the subject's slot(s) were formed


@dataclass(frozen=True, slots=True)
class RenderedAnswer:
    qid: str
    forms: tuple[str, ...]  # filler first (replaces the marker), then the base label, then aliases
    inflection: str  # exact | guessed | none
    # Which label the filler was formed from: "label", "P2521"/"P3321" (the gendered form that agrees
    # with the subject), or "label:<reason>" when the object has gendered forms but none could be used.
    label_source: str = "label"
    # How the filler's own form was made (for the filler ledger): the backend ("lexicon" for an entry's
    # form) and its detail
    backend: str = ""
    detail: str = ""
    slot_form: str = ""  # the form of the slot alone (the filler without the answer words around it)


class Renderer:
    """Renders templates for entities; caches parses, gender decisions and inflections. ``slot_forms``: the
    forms of one build, kept across templates (``render_cache.SlotForms``; decisions are then counted once
    per distinct form)."""

    PLANS, LABELS = 8192, 262_144  # templates planned, labels cleaned (then they start again: bounded memory)

    def __init__(self, entities: Mapping[str, Entity], backends: Mapping[str, InflectionBackend] | None = None,
                 allow_guessed: bool = True, unimorph_cache: str | None = None, slot_forms: SlotForms | None = None):
        self.entities = entities
        self.slot_forms = slot_forms
        self._plans: dict[tuple[str, str], TemplatePlan] = {}
        self._cleaned: dict[str, str] = {}  # label -> clean_label(label)
        self.allow_guessed = allow_guessed
        self._backends: dict[str, InflectionBackend] = dict(backends or {})
        self._unimorph_cache = unimorph_cache
        self._agreements: dict[tuple[str, str, str], Agreement] = {}
        # (qid, lang, slot type) -> the agreement of the entity's written label (no decision is counted there)
        self._written_agreements: dict[tuple[str, str, str], Agreement] = {}
        self._inflections: dict[tuple, InflectionResult | None] = {}
        self._types: dict[tuple[str, str], str] = {}
        # (lang, what, how, detail) -> times: every surface decision that is not a plain lookup, for the
        # audit (a removed disambiguator, a counted guess, a fallback)
        self.decisions: Counter[tuple[str, str, str, str]] = Counter()
        self._owners: dict[str, dict[str, set[str]]] = {}  # lang -> clean label -> entities with it

    # ---- pieces ----

    def backend(self, lang: str) -> InflectionBackend | None:
        if lang in self._backends:
            return self._backends[lang]
        spec = language_registry().get(lang)
        if spec is None:
            return None
        options = {"cache_dir": self._unimorph_cache} if spec.backend == "unimorph" else {}
        backend = make_backend(spec.backend, **options)
        self._backends[lang] = backend
        return backend

    def agreement(self, entity: Entity, lang: str, slot_type: str, label: str | None = None) -> Agreement:
        """Gender/number of ``label`` (default: the entity's label), cached per entity and label; the
        entity's lexicon entry decides first (people keep their P21)."""
        if label is None:  # the label as it is written in a sentence: no disambiguator, the lexicon's short name
            own = self.entities.get(entity.qid) is entity  # an entity of this renderer: its written label is known
            written = self._written_agreements.get((entity.qid, lang, slot_type)) if own else None
            if written is not None:
                return written
            entry = self.entry(entity, lang)
            label = entry.short if entry is not None and entry.short else self._clean(entity.labels.get(lang, ""))
            found = self.agreement(entity, lang, slot_type, label)
            if own:
                self._written_agreements[(entity.qid, lang, slot_type)] = found
            return found
        key = (entity.qid, lang, slot_type, label)
        found = self._agreements.get(key)
        if found is None:
            found = resolve_agreement(entity, lang, label, entity_type(entity, slot_type))
            entry = self.entry(entity, lang, label)
            if entry is not None and (entry.gender or entry.number) and not found.source.startswith("P21"):
                found = Agreement(entry.gender or Gender.UNKNOWN, entry.number or "sg", entry.how)
            self._agreements[key] = found
        return found

    def entry(self, entity: Entity, lang: str, label: str | None = None) -> LexiconEntry | None:
        """The lexicon entry of ``entity`` in ``lang`` when ``label`` is the one it describes (its own label
        or the entry's short name); an entry written for another label is recorded and not used."""
        entry = entry_for(entity.qid, lang)
        if entry is None:
            return None
        own = entity.labels.get(lang)
        if label is not None and label != entry.short and not entry.about(label):
            if own is not None and not entry.about(own):
                self.decisions[(lang, "lexicon", "label-mismatch", f"{entity.qid}: entry for {entry.label!r} "
                                f"({entry.where}), label {own!r}")] += 1
            return None
        return entry

    def fill(self, entity: Entity, lang: str, features: Features, slot_type: str,
             sentence_initial: bool = False, label: str | None = None, answer: bool = False,
             before: str | None = ""
             ) -> InflectionResult | RenderFailure:
        """The surface form of ``entity`` (or of ``label``, one of its gendered forms) for a slot with
        ``features``; ``answer``: the form competes with other candidates, so it must stay distinct;
        ``before``: the text written before the slot (None: it changes with the subject), which a
        preposition's form may depend on (uk «у»/«в»)."""
        memo = self.slot_forms
        if memo is None or self.entities.get(entity.qid) is not entity:  # kept for this renderer's entities
            return self._fill(entity, lang, features, slot_type, sentence_initial, label, answer, before)
        # everything _fill reads: of ``before`` only its last sound, and that only for a preposition
        key = (entity.qid, lang, features, slot_type, sentence_initial, label, answer,
               last_sound(before) if features.preposition else "")
        found = memo.get(key)
        if found is None:
            found = self._fill(entity, lang, features, slot_type, sentence_initial, label, answer, before)
            memo.put(key, found)
        return found

    def _fill(self, entity: Entity, lang: str, features: Features, slot_type: str, sentence_initial: bool,
              label: str | None, answer: bool, before: str | None) -> InflectionResult | RenderFailure:
        label = label or entity.labels.get(lang)
        if not label:
            return RenderFailure("no-label", f"{entity.qid} has no {lang} label")
        label, entry = self._written_label(entity, lang, label, answer)
        agreement = self.agreement(entity, lang, slot_type, label)
        etype = self._types.get((entity.qid, slot_type))
        if etype is None:
            etype = self._types[(entity.qid, slot_type)] = entity_type(entity, slot_type)
        quotes = title_quotes(lang) if etype == "work" else None
        if quotes and title_quotes_before_particle(lang):
            # ko: the particle follows the closing mark and agrees with the title's last sound: «〈기생충〉은»,
            # «〈원피스〉는», never «〈기생충은〉»; so the title is quoted before the backend attaches it
            label, quotes = f"{quotes[0]}{label}{quotes[1]}", None
        if quotes and (features.case or title_noun_always(lang)):
            # ru: a title is named by its kind, the title itself stays in the nominative: «Язык оригинала
            # фильма «Крёстный отец»», never an inflected title; in the nominative too, so that the verb
            # agrees with the kind noun: «Сериал «Остаться в живых» снят» (gender: `title_noun_gender`)
            noun = title_noun(lang, entity.classes, features.case or "nom")
            if noun:
                if sentence_initial:
                    noun = noun[:1].upper() + noun[1:]
                return InflectionResult(f"{noun} {quotes[0]}{label}{quotes[1]}", EXACT, "title")
        # ru в/на depends on the place's class (an island takes на), uk a genitive's ending on whether the
        # place is a settlement («Квебека», the city, «Квебеку», the province), hu gives a landmark the article
        # (az Eiffel-torony), and tr/hu name a work by its kind (film, series: «Baba filminin»), so those forms
        # are keyed by the classes too
        classes = entity.classes if features.preposition or features.article or features.case or etype == "work" \
            else ()
        before = last_sound(before) if features.preposition else ""
        key = (lang, label, features, agreement, etype, sentence_initial, classes, entry.qid if entry else None,
               before)
        if key in self._inflections:
            result = self._inflections[key]
        else:
            result = self._inflect(entity, lang, label, features, InflectionRequest(agreement, etype, sentence_initial,
                                                                                     classes, entry, before))
            if isinstance(result, RenderFailure):
                return result
            self._inflections[key] = result
        if result is None:
            return RenderFailure("inflection-unsupported",
                                 f"{lang} backend cannot form '{label}' ({entity.qid}) as {features.describe()}")
        if result.status == FAILED:
            return RenderFailure("inflection-failed", result.detail or f"'{label}' as {features.describe()}")
        if result.status == GUESSED and not self.allow_guessed:
            return RenderFailure("inflection-guessed", f"'{label}' -> '{result.form}': {result.detail}")
        if result.choice is not None:
            how, what = result.choice
            what_kind = f"preposition {features.preposition}" if features.preposition else f"form {features.describe()}"
            self.decisions[(lang, what_kind, how, f"{entity.qid} {what}")] += 1
        if quotes:  # work titles in quotation marks (de „Der Pate“, ru «Мумия»), inflected inside if at all
            result = replace(result, form=f"{quotes[0]}{result.form}{quotes[1]}")
        return result

    def _written_label(self, entity: Entity, lang: str, label: str, answer: bool) -> tuple[str, LexiconEntry | None]:
        """``label`` as a sentence writes it (the lexicon's short name, without a disambiguator unless another
        answer has that name) and the entity's lexicon entry for it; every change is a counted decision."""
        entry = self.entry(entity, lang, label)
        if entry is not None and entry.short and label == entity.labels.get(lang):
            # «Каир (мухафаза)» -> «Каир», «Bara la Australia» -> «Australia»: the lexicon's short name
            self.decisions[(lang, "label", entry.how + ":short", f"{entity.qid} {label} -> {entry.short}")] += 1
            label = entry.short
        cleaned = self._clean(label)
        if cleaned != label:
            other = self._label_owner(lang, cleaned, entity.qid) if answer else None
            if other is None:
                self.decisions[(lang, "label", "disambiguator-removed", f"{entity.qid} {label} -> {cleaned}")] += 1
                label = cleaned
            elif disambiguator_as_head(lang) and _kind(entity) == "place":
                # «Каир (мухафаза)» -> «мухафаза Каир»: the disambiguator names the kind of place, and the
                # kind noun heads the name (it takes the case and the article; the name stays as it is)
                noun = label[len(cleaned):].strip()[1:-1].strip()
                self.decisions[(lang, "label", "rule:disambiguator-as-head", f"{entity.qid} {label}: '{cleaned}' "
                                f"is also {other}'s label -> {noun} {cleaned}")] += 1
                label = f"{noun} {cleaned}"
            else:
                # «Dubai (Emirat)» would read «Dubai», the city's name: two answers with one surface form.
                # Keep the disambiguator there, counted, rather than make the gold ambiguous.
                self.decisions[(lang, "label", "disambiguator-kept", f"{entity.qid} {label}: '{cleaned}' is "
                                f"also {other}'s label")] += 1
        return label, entry

    def _inflect(self, entity: Entity, lang: str, label: str, features: Features, request: InflectionRequest
                 ) -> InflectionResult | RenderFailure | None:
        """The form of ``label`` for ``features``: the lexicon's form of the whole slot, the label itself for a
        plain slot, else the language's backend; capitalised at a sentence start. None: the backend cannot."""
        backend = self.backend(lang)
        if backend is None:
            return RenderFailure("unknown-language", f"no inflection backend for '{lang}'")
        entry, sentence_initial = request.entry, request.sentence_initial
        written = entry.forms.get(features.describe()) if entry is not None and not features.is_plain else None
        if written is not None:  # the lexicon's form for the whole slot: no rule involved
            result = InflectionResult(written, EXACT, "lexicon", f"{entry.how} {entity.qid} {features.describe()}")
        elif features.is_plain and not sentence_initial:
            result = InflectionResult(label, NONE, "identity")
        else:
            result = backend.inflect(label, lang, features, request)
        if result is not None and sentence_initial and result.form[:1].islower():
            result = replace(result, form=result.form[0].upper() + result.form[1:])
        return result

    # ---- the contract ----

    def render_prompt(self, template: Template, subject_qid: str) -> RenderedPrompt | RenderFailure:
        plan = self._plan(template)
        if isinstance(plan, RenderFailure):
            return plan
        parsed = plan.parsed
        subject = self.entities.get(subject_qid)
        if subject is None:
            return RenderFailure("unknown-entity", f"subject {subject_qid} is not among the entities")
        if not subject.labels.get(template.lang):
            return RenderFailure("no-label", f"{subject_qid} has no {template.lang} label")
        xtype = plan.subject_type
        out: list[str] = []
        statuses: list[str] = []
        for i, node, what in plan.prompt_nodes:  # the answer's nodes are one marker there
            if what is Text:
                out.append(node.value)
            elif what is None:  # the answer with the words that agree with it: one filler per candidate
                out.append(ANSWER_MARKER)
            elif what is Slot:
                res = self.fill(subject, template.lang, node.features, xtype, plan.opens[i],
                                before="".join(out) if node.features.preposition else "")
                if isinstance(res, RenderFailure):
                    return res
                out.append(res.form)
                statuses.append(res.status)
            else:
                if node.slot != "X":
                    return RenderFailure("template-error", f"{template.where(node.start)}: agreement with the "
                                                          "answer slot Y away from [Y] leaks the answer; put "
                                                          "it next to [Y] or agree with X")
                form = plan.choose(i, self.agreement(subject, template.lang, xtype), subject.life)
                if form is None:
                    ag = self.agreement(subject, template.lang, xtype)
                    return RenderFailure("no-agreement-form",
                                         f"{template.lang} {template.id}: no form for {subject_qid} "
                                         f"(gender {ag.gender}, number {ag.number}, source "
                                         f"{ag.source or 'none'}) among {'/'.join(node.values)}; add 'other='")
                if not form and before_punctuation(parsed.nodes, i) and out:
                    # an empty option leaves no space before the punctuation: hu «… az arab nyelv.», not «… nyelv .»
                    out[-1] = out[-1].rstrip(" ")
                out.append(form)
        text = "".join(out)
        if "  " in text or "\t" in text:  # what _SPACES can match: two spaces or tabs in a row
            text = _SPACES.sub(" ", text)
        text = text.strip()
        check = _check_text(text, template.kind)
        if check is not None:
            return check
        status = GUESSED if GUESSED in statuses else ("exact" if "exact" in statuses else NONE)
        return RenderedPrompt(template.id, template.lang, template.kind, text, status)

    def render_answer(self, template: Template, object_qid: str, subject_qid: str | None = None
                      ) -> RenderedAnswer | RenderFailure:
        plan = self._plan(template)
        if isinstance(plan, RenderFailure):
            return plan
        obj = self.entities.get(object_qid)
        if obj is None:
            return RenderFailure("unknown-entity", f"object {object_qid} is not among the entities")
        label = obj.labels.get(template.lang)
        if not label:
            return RenderFailure("no-label", f"{object_qid} has no {template.lang} label")
        subject = self.entities.get(subject_qid) if subject_qid else None
        memo = self.slot_forms
        if memo is None:
            return self._render_answer(template, plan, obj, label, subject)
        # all an answer reads: the object, the subject's gender where the object's label has gendered forms
        # (gendered_label), and the template's answer as the plan writes it (answer_context); a failure names
        # its template, so only answers are kept
        key = ("answer", template.lang, plan.answer_context, object_qid,
               (subject.gender if subject is not None else None) if obj.female_labels or obj.male_labels else "")
        found = memo.get(key)
        if found is None:
            found = self._render_answer(template, plan, obj, label, subject)
            if isinstance(found, RenderFailure):
                return found
            memo.put(key, found)
        return found

    def _render_answer(self, template: Template, plan: TemplatePlan, obj: Entity, label: str,
                       subject: Entity | None) -> RenderedAnswer | RenderFailure:
        object_qid = obj.qid
        filler_label, label_source = gendered_label(obj, template.lang, subject)
        entry = self.entry(obj, template.lang)
        if entry is not None and entry.short and filler_label != label and entry.about(label):
            # the lexicon's short name is the one name the entity takes, for either gender (ru «деятель
            # искусств» for «artist», whose P2521 «художница» reads «painter»)
            filler_label = label
        if obj.female_labels or obj.male_labels:
            self.decisions[(template.lang, "gendered-label", label_source, object_qid)] += 1
        ytype = plan.object_type
        features, initial = Features(), False
        span, nodes, slot = plan.span, plan.answer_nodes, plan.answer_slot
        span_initial = span is not None and plan.opens[span[0]]
        if slot is not None:
            features, initial = slot.features, span_initial and nodes[0] is slot
        if span is not None:
            filler_label = self._without_repeated_head(template.lang, plan.lead, obj, filler_label or label,
                                                       plan.after)
        before = plan.before
        res = self.fill(obj, template.lang, features, ytype, initial, filler_label, answer=True, before=before)
        if isinstance(res, RenderFailure):
            return res
        filler = res.form
        if len(nodes) > 1:
            filler = self._answer_words(template, nodes, res.form, obj, filler_label or label, ytype)
            if isinstance(filler, RenderFailure):
                return filler
            if span_initial:
                filler = filler[:1].upper() + filler[1:]
        status = res.status
        if span is not None and len(nodes) == 1:
            oblique = self._oblique(template.lang, plan.after, obj, filler)
            if oblique is not None:
                filler, how = oblique
                if how.startswith("rule:"):
                    if not self.allow_guessed:
                        return RenderFailure("inflection-guessed", f"'{res.form}' -> '{filler}': {how}")
                    status = GUESSED
        if _SURVIVORS.search(filler):
            return RenderFailure("placeholder-survived", f"answer form {filler!r} holds a bracket")
        aliases = obj.aliases.get(template.lang, ())
        forms = tuple(dict.fromkeys(f for f in (filler, res.form, self._clean(filler_label or label), self._clean(label),
                                                *self._inflected_aliases(obj, template.lang, features, ytype,
                                                                         initial, aliases),
                                                *aliases) if f))
        return RenderedAnswer(object_qid, forms, status, label_source, res.backend, res.detail, res.form)

    def _oblique(self, lang: str, after: tuple, obj: Entity, filler: str) -> tuple[str, str] | None:
        """The oblique form of a name whose head noun declines, when a postposition follows the answer
        (language option `oblique`): hi «लिस्बन ज़िला» + «[Y] में» -> «लिस्बन ज़िले में», never «लिस्बन ज़िला
        में». The lexicon's `obl` form comes first; else the head table's rule. Returns (form, source)."""
        spec = language_registry().get(lang)
        rule = spec.options.get("oblique") if spec else None
        after = tuple(n for n in after if not (isinstance(n, Text) and not n.value.strip()))
        if not rule or not after:
            return None
        # what follows the answer: text, or a group agreeing with the subject whose every form starts the
        # same way («[Y] {X: masc=के हैं | fem=की हैं}»)
        starts = ([after[0].value] if isinstance(after[0], Text)
                  else [o.form for o in after[0].options] if isinstance(after[0], Group) else [])
        firsts = {(w.split() or [""])[0].rstrip("।,?") for w in starts}
        if not firsts or not firsts <= set(rule.get("postpositions", ())):
            return None
        entry = self.entry(obj, lang)
        if entry is not None and entry.forms.get("obl"):
            form, how = entry.forms["obl"], entry.how
        else:
            words = filler.split()
            head = rule.get("heads", {}).get(words[-1]) if len(words) > 1 else None
            if head is None:
                return None
            form, how = " ".join([*words[:-1], head]), "rule:oblique-head"
        self.decisions[(lang, "form obl", how, f"{obj.qid} {filler} -> {form}")] += 1
        return form, how

    def _answer_words(self, template: Template, nodes: tuple, form: str, obj: Entity, label: str, ytype: str
                      ) -> str | RenderFailure:
        """The answer's filler with the words that agree with it («sind die Vereinigten Staaten»)."""
        agreement = self.agreement(obj, template.lang, ytype, label)
        out = []
        for node in nodes:
            if isinstance(node, Text):
                out.append(node.value)
            elif isinstance(node, Slot):
                out.append(form)
            else:
                word = choose_option(node, agreement, obj.life)
                if word is None:
                    return RenderFailure("no-agreement-form",
                                         f"{template.lang} {template.id}: no form for the answer {obj.qid} (gender "
                                         f"{agreement.gender}, number {agreement.number}, source "
                                         f"{agreement.source or 'none'}) among {'/'.join(node.values)}; add 'other='")
                self.decisions[(template.lang, "answer agreement", source_kind(agreement.source),
                                f"{obj.qid} {label}: {agreement.gender}/{agreement.number} -> {word}")] += 1
                out.append(word)
        return _SPACES.sub(" ", "".join(out)).strip()

    def _without_repeated_head(self, lang: str, before: tuple, obj: Entity, label: str, after: tuple = ()) -> str:
        """``label`` without the head noun the template already writes next to the answer (language option
        `template_heads`): hi «आधिकारिक भाषा [Y]» + «अंग्रेज़ी भाषा» -> «अंग्रेज़ी»; ar «لمدينة [Y]» + «مدينة
        الكويت» -> «الكويت»; a head-final language also right after it: hi «[Y] महाद्वीप में» + «ऑस्ट्रेलिया
        महाद्वीप» -> «ऑस्ट्रेलिया» (not «ऑस्ट्रेलिया महाद्वीप महाद्वीप में»)."""
        spec = language_registry().get(lang)
        heads = spec.options.get("template_heads") if spec else None
        if not heads:
            return label
        entry = self.entry(obj, lang, label)
        # the lexicon's short name is what would be written: hi «बर्बर भाषाएँ» -> «अमाज़ीग़ भाषा» -> «अमाज़ीग़»
        written = entry.short if entry is not None and entry.short and label == obj.labels.get(lang) else label
        if heads and heads.get("glued"):
            return self._without_glued_head(lang, heads, before, obj, written, label)
        words = self._clean(written).split()
        if not heads or len(words) < 2:
            return label
        at = 0 if heads.get("at") == "first" else -1
        head = words[at].lower()  # id «Kota Kuwait» after «kota»: a proper name's head is capitalised
        if head not in {n.lower() for n in heads.get("nouns", ())}:
            return label
        lead = before[-1].value.split() if before and isinstance(before[-1], Text) else []
        trail = after[0].value.split() if at == -1 and after and isinstance(after[0], Text) else []
        if not (lead and lead[-1].lower().endswith(head)) and not (trail and trail[0].lower() == head):
            return label
        rest = " ".join(words[1:] if at == 0 else words[:-1])
        self.decisions[(lang, "label", "rule:repeated-head", f"{obj.qid} {written} -> {rest}")] += 1
        return rest

    def _without_glued_head(self, lang: str, heads: Mapping, before: tuple, obj: Entity, written: str,
                            label: str) -> str:
        """A script without spaces glues the head noun to the name (th «ภาษาอาหรับ», «ประเทศอียิปต์»): a template
        that writes the head glued before the answer («เจ้าของภาษา[Y]») takes the label without it
        («เจ้าของภาษาอาหรับ», never «เจ้าของภาษาภาษาอาหรับ»); an answer after a space keeps its head."""
        lead = before[-1].value if before and isinstance(before[-1], Text) else ""
        name = self._clean(written)
        head = next((h for h in heads.get("nouns", ()) if lead.endswith(h) and name.startswith(h)
                     and len(name) > len(h) and not name[len(h)].isspace()), None)
        if head is None:
            return label
        rest = name[len(head):]
        self.decisions[(lang, "label", "rule:repeated-head", f"{obj.qid} {written} -> {rest}")] += 1
        return rest

    def _label_owner(self, lang: str, label: str, qid: str) -> str | None:
        """Another entity of the same kind whose (clean) label in ``lang`` is ``label``, if any: a city and
        its governorate compete in one candidate pool («Dubai», «Dubai (Emirat)»); a city and the country
        of the same name do not («La capitale de Saint-Marin est Saint-Marin»)."""
        owners = self._owners.get(lang)
        if owners is None:
            owners = {}
            for e in sorted(self.entities.values(), key=lambda e: e.qid):
                raw = e.labels.get(lang)
                if raw:
                    owners.setdefault(clean_label(raw), set()).add(e.qid)
            self._owners[lang] = owners
        kind = _kind(self.entities[qid]) if qid in self.entities else ""
        others = sorted(q for q in owners.get(label, set()) - {qid} if _kind(self.entities[q]) == kind)
        return others[0] if others else None

    def agreement_decisions(self) -> Mapping[tuple[str, str, str, str], Agreement]:
        """(qid, lang, slot type, label) -> the agreement decided (for the audit)."""
        return dict(self._agreements)

    def inflection_decisions(self) -> Mapping[tuple, InflectionResult | None]:
        """(lang, label, features, agreement, type, initial, classes, qid) -> the inflection made (for the audit);
        classes are the P31 classes when a preposition depends on them (ru в/на), else ()."""
        return dict(self._inflections)

    def _inflected_aliases(self, obj: Entity, lang: str, features: Features, slot_type: str, initial: bool,
                           aliases: tuple[str, ...]) -> list[str]:
        """Each alias formed like the label, so that a generated «в Китае» matches the gold of «Китайской
        Народной Республике»; an alias the backend cannot form is left out of the inflected forms (kept
        as written after them) and recorded."""
        if features.is_plain or not aliases:
            return []
        out = []
        for alias in aliases:
            res = self.fill(obj, lang, features, slot_type, initial, alias, answer=True)
            if isinstance(res, RenderFailure) or _SURVIVORS.search(res.form):
                self.decisions[(lang, "alias", "not-inflected", f"{obj.qid} {alias}: "
                                f"{res.detail if isinstance(res, RenderFailure) else res.form}")] += 1
                continue
            out.append(res.form)
        return out

    def _clean(self, label: str) -> str:
        """``clean_label(label)``, kept per label (an object's label is cleaned for every template it fills)."""
        cleaned = self._cleaned.get(label)
        if cleaned is None:
            if len(self._cleaned) >= self.LABELS:
                self._cleaned.clear()
            cleaned = self._cleaned[label] = clean_label(label)
        return cleaned

    def _plan(self, template: Template) -> TemplatePlan | RenderFailure:
        """The template's plan (of its text and predicate), made once; a parse failure names its place each time."""
        key = (template.text, template.predicate)
        plan = self._plans.get(key)
        if plan is None:
            parsed = self._parse(template)
            if isinstance(parsed, RenderFailure):
                return parsed
            if len(self._plans) >= self.PLANS:
                self._plans.clear()
            plan = self._plans[key] = plan_template(parsed, template.predicate)
        return plan

    def _parse(self, template: Template) -> ParsedTemplate | RenderFailure:
        try:
            return parse(template.text)
        except TemplateSyntaxError as e:
            return RenderFailure("template-error", f"{template.where(e.offset)}: {e.message}")


def source_kind(source: str) -> str:
    """'lexicon:table' -> 'lexicon:table'; 'class-default:country' -> 'class-default'; '' -> 'unknown'."""
    head = source.split(":", 1)[0] if source else "unknown"
    return source if head == "lexicon" else head


def _kind(entity: Entity) -> str:
    """Coarse kind for label collisions: cities, regions and unknown places are one kind."""
    t = entity_type(entity, "")
    return "place" if t in ("settlement", "place", "") else t


def _check_text(text: str, kind: str) -> RenderFailure | None:
    rest = text.replace(ANSWER_MARKER, "", 1) if kind == "cloze" else text
    if kind == "cloze" and text.count(ANSWER_MARKER) != 1:
        return RenderFailure("answer-marker", f"the answer marker occurs {text.count(ANSWER_MARKER)} times: {text!r}")
    m = _SURVIVORS.search(rest)
    if m:
        return RenderFailure("placeholder-survived", f"'{m.group()}' survived rendering at {m.start()}: {text!r}")
    return None
