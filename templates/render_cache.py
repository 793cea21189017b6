"""What the renderer works out once instead of on every call (``templates/render.py``).

- ``TemplatePlan``: what rendering reads of a template and never of an entity (its parse, the answer span,
  which nodes open a sentence, the slot types, the text around the answer), made once per template text
  and predicate by ``plan_template``: a pure function of them, so every renderer may keep its plans.
- ``SlotForms``: the forms one build's renderer made, per (entity, language, features, slot type,
  sentence start, label, answer, sound before the slot): everything ``Renderer.fill`` reads. A subject is
  filled in every template of its predicate and an object in every template and for every alias, mostly
  with the same features; the build hands its renderer one ``SlotForms`` and drops it with the build.
  A renderer given one counts each decision (``Renderer.decisions``) once per distinct slot form, not once
  per call, so the audit and the filler ledger, which read those counts, render without one.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from factatlas.records import Life
from factatlas.templates.morphology import Agreement
from factatlas.templates.predicates import PREDICATES
from factatlas.templates.slot_context import choose_option, opens_sentence, text_before
from factatlas.templates.syntax import ParsedTemplate, Slot, Text


@dataclass(frozen=True, slots=True)
class TemplatePlan:
    parsed: ParsedTemplate
    span: tuple[int, int] | None  # ParsedTemplate.answer_span()
    opens: tuple[bool, ...]  # per node: it opens the text or follows a sentence end (opens_sentence)
    subject_type: str  # the predicate's slot types ("" when the registry does not know it)
    object_type: str
    answer_nodes: tuple  # the span's nodes: [Y] and the {Y: ...} groups joined to it
    answer_slot: Slot | None  # the [Y] slot among them
    lead: tuple  # the nodes before the span
    after: tuple  # the nodes after it
    before: str | None  # text_before(lead): what a preposition's form may depend on
    # (index, node, Text | Slot | Group) of each node a prompt writes; the answer's nodes are one
    # (span start, None, None): the answer marker
    prompt_nodes: tuple[tuple[int, Any, Any], ...] = ()
    # everything an answer's form reads of the template, without offsets: its nodes, the node before and
    # the nodes after them, the text before, whether it opens a sentence, the object's type; templates with
    # one context give an object one answer (a string: its hash is computed once)
    answer_context: str = ""
    # (node index, agreement, life) -> choose_option of the group there: a few per template and subject kind
    choices: dict[tuple[int, Agreement, Life], str | None] = field(default_factory=dict, compare=False)

    def choose(self, index: int, agreement: Agreement, life: Life) -> str | None:
        """``choose_option`` of the group at node ``index`` (a pure function of the three), made once."""
        key = (index, agreement, life)
        if key in self.choices:
            return self.choices[key]
        form = self.choices[key] = choose_option(self.parsed.nodes[index], agreement, life)
        return form


def plan_template(parsed: ParsedTemplate, predicate: str) -> TemplatePlan:
    nodes = parsed.nodes
    span = parsed.answer_span()
    slots = PREDICATES.get(predicate)
    answer = nodes[span[0]:span[1] + 1] if span is not None else ()
    lead = nodes[:span[0]] if span is not None else ()
    return TemplatePlan(
        parsed, span, tuple(opens_sentence(nodes, i) for i in range(len(nodes))),
        slots.subject_type if slots else "", slots.object_type if slots else "",
        answer, next((n for n in answer if isinstance(n, Slot)), None), lead,
        nodes[span[1] + 1:] if span is not None else (), text_before(lead) if span is not None else "",
        _prompt_nodes(nodes, span), _answer_context(nodes, span, slots.object_type if slots else ""))


def _written(node: Any) -> tuple:
    """A node as rendering reads it: what it says, not where."""
    if isinstance(node, Text):
        return ("text", node.value)
    if isinstance(node, Slot):
        return ("slot", node.name, node.features)
    return ("group", node.slot, tuple((o.value, o.form) for o in node.options))


def _answer_context(nodes: tuple, span: tuple[int, int] | None, object_type: str) -> str:
    if span is None:
        return repr((None, object_type))
    return repr((tuple(_written(n) for n in nodes[span[0]:span[1] + 1]), tuple(_written(n) for n in nodes[:span[0]][-1:]),
                 tuple(_written(n) for n in nodes[span[1] + 1:]), text_before(nodes[:span[0]]),
                 opens_sentence(nodes, span[0]), object_type))


def _prompt_nodes(nodes: tuple, span: tuple[int, int] | None) -> tuple[tuple[int, Any, Any], ...]:
    out = []
    for i, node in enumerate(nodes):
        if span is not None and span[0] <= i <= span[1]:
            if i == span[0]:
                out.append((i, None, None))
            continue
        out.append((i, node, type(node)))
    return tuple(out)


class SlotForms:
    """A bounded memo of ``Renderer.fill`` for one build: at ``limit`` entries it starts again empty (a form
    is then made again, never a different one). ``hits`` and ``misses`` say what it saved."""

    def __init__(self, limit: int = 200_000) -> None:
        if limit < 1:
            raise ValueError(f"SlotForms limit must be >= 1, got {limit}")
        self.limit = limit
        self._forms: dict[Hashable, Any] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._forms)

    def get(self, key: Hashable) -> Any | None:
        found = self._forms.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: Hashable, value: Any) -> None:
        if len(self._forms) >= self.limit:
            self._forms.clear()
        self._forms[key] = value
