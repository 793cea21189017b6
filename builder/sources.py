"""Where prompt texts and answer forms come from, behind one narrow protocol.

- ``LibrarySource``: the factatlas template library (templates/lang/*.yaml) and its Renderer
  (inflection, articles, particles) — what `factatlas build` uses.
- ``SubstitutionSource``: plain ``[X]``/``[Y]`` substitution of one text per (language, predicate), as
  mLAMA and DLAMA did — what the importers use when given the published mLAMA templates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from factatlas.records import ANSWER_MARKER, Entity, RenderFailure
from factatlas.templates.variants import answer_variant, subject_key

__all__ = ["LibrarySource", "PromptSource", "SubstitutionSource", "TemplateInfo", "answer_variant", "dedupe",
           "subject_key"]


@dataclass(frozen=True, slots=True)
class TemplateInfo:
    id: str  # language-neutral id: "P19/1"
    kind: str  # cloze | question
    status: str  # reviewed | draft


class PromptSource(Protocol):
    def templates(self, lang: str, predicate: str) -> tuple[TemplateInfo, ...]: ...

    def render_prompt(self, lang: str, template_id: str, subject_qid: str) -> str | RenderFailure: ...

    def render_answer(self, lang: str, template_id: str, object_qid: str,
                      subject_qid: str) -> tuple[str, ...] | RenderFailure: ...

    def describe(self) -> dict[str, Any]: ...


def dedupe(forms: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for f in forms if f))


class LibrarySource:
    """The template library + Renderer of factatlas.templates (contract in CONTRACTS.md)."""

    def __init__(self, library: Any, entities: Mapping[str, Entity]):
        from factatlas.templates import Renderer, RenderFailure
        from factatlas.templates.render_cache import SlotForms

        self._failure_type = RenderFailure
        self.library = library
        # one source per build: its renderer keeps the build's slot forms (a subject is filled alike in
        # every template of its predicate, an object in every template), dropped with the source
        self.renderer = Renderer(entities, slot_forms=SlotForms())
        self.inflections: Counter[tuple[str, str]] = Counter()  # (lang, exact|guessed|none) per answer form
        # (lang, label source) per answer form of a gendered object: P2521, P3321, label, label:<fallback>
        self.gendered: Counter[tuple[str, str]] = Counter()

    def templates(self, lang: str, predicate: str) -> tuple[TemplateInfo, ...]:
        return tuple(TemplateInfo(t.id, t.kind, t.status) for t in self.library.templates(lang, predicate))

    def _template(self, lang: str, template_id: str):
        t = self.library.get(lang, template_id)  # indexed by the library (``Library.get``)
        if t is None:
            raise KeyError(f"template {template_id} not in the {lang} library")
        return t

    def render_prompt(self, lang: str, template_id: str, subject_qid: str) -> str | RenderFailure:
        r = self.renderer.render_prompt(self._template(lang, template_id), subject_qid)
        if isinstance(r, self._failure_type):
            return RenderFailure(r.reason, r.detail)
        return r.text

    def render_answer(self, lang: str, template_id: str, object_qid: str,
                      subject_qid: str) -> tuple[str, ...] | RenderFailure:
        r = self.renderer.render_answer(self._template(lang, template_id), object_qid, subject_qid)
        if isinstance(r, self._failure_type):
            return RenderFailure(r.reason, r.detail)
        self.inflections[(lang, r.inflection)] += 1
        if r.label_source != "label" or self.renderer.entities[object_qid].female_labels \
                or self.renderer.entities[object_qid].male_labels:
            self.gendered[(lang, r.label_source)] += 1
        forms = dedupe(r.forms)
        return forms if forms else RenderFailure("empty-form", f"{object_qid} rendered no form")

    def describe(self) -> dict[str, Any]:
        return {"templates": "factatlas template library", "languages": list(self.library.languages)}


class SubstitutionSource:
    """One plain template text per (lang, predicate); ``[X]`` -> subject label, ``[Y]`` -> the marker.

    Answer forms are the entity's label then its aliases (no inflection), as in mLAMA/DLAMA.
    """

    def __init__(self, texts: Mapping[str, Mapping[str, str]], entities: Mapping[str, Entity],
                 template_suffix: str = "mlama", origin: str = ""):
        self.texts = texts  # lang -> predicate -> text with [X] and [Y]
        self.entities = entities
        self.suffix = template_suffix
        self.origin = origin

    def template_id(self, predicate: str) -> str:
        return f"{predicate}/{self.suffix}"

    def templates(self, lang: str, predicate: str) -> tuple[TemplateInfo, ...]:
        text = self.texts.get(lang, {}).get(predicate)
        if text is None or "[X]" not in text or text.count("[Y]") != 1:
            return ()
        return (TemplateInfo(self.template_id(predicate), "cloze", "reviewed"),)

    def _label(self, lang: str, qid: str) -> str | None:
        e = self.entities.get(qid)
        return e.labels.get(lang) if e is not None else None

    def render_prompt(self, lang: str, template_id: str, subject_qid: str) -> str | RenderFailure:
        predicate = template_id.split("/", 1)[0]
        label = self._label(lang, subject_qid)
        if not label:
            return RenderFailure("no-label", f"{subject_qid} has no {lang} label")
        return self.texts[lang][predicate].replace("[X]", label).replace("[Y]", ANSWER_MARKER)

    def render_answer(self, lang: str, template_id: str, object_qid: str,
                      subject_qid: str) -> tuple[str, ...] | RenderFailure:
        label = self._label(lang, object_qid)
        if not label:
            return RenderFailure("no-label", f"{object_qid} has no {lang} label")
        return dedupe((label, *self.entities[object_qid].aliases.get(lang, ())))

    def describe(self) -> dict[str, Any]:
        return {"templates": "plain substitution", "origin": self.origin, "template_suffix": self.suffix}
