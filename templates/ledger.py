"""The filler ledger: every distinct answer filler a build renders, with how it was made and its review.

`factatlas templates audit --fillers RUN` renders, with the current code, lexicon and templates, every
filler the build in ``RUN/build`` put into a cloze prompt — each accepted gold of each prompt and each
candidate — and lists it once per (language, template, object, subject variant), with

- its **context**: the template's words just before the answer, the answer span as written and the words
  glued after it (``в [Y.loc.в]``, ``قارة [Y]``), **as rendered**: a ``{X: …}`` group among them shows
  the form agreement chose for the subject (``war [Y]`` for the dead, ``ist [Y]`` for the living,
  ``تقع [X]`` for a feminine city), so a reader sees the filler where it stands; a line is kept per
  (language, template, object, variant, context);
- its **status**: ``exact`` only when the whole filler is a lexicon form or a one-word dictionary form,
  ``none`` when nothing was formed (the label as written), ``guessed`` for anything composed (a
  multiword phrase inflected head-first, an article or preposition added by a rule);
- its **sources**: the lexicon entry, the inflection backend and its detail, the agreement the answer
  words and articles were chosen by, ru в/на, a removed disambiguator, a gendered label;
- its **verdict** from the committed review (``templates/review/<lang>.tsv``: context, filler, verdict
  ``ok``/``wrong``, note): ``ok``, ``wrong`` or ``unreviewed``.

A ledger written to a file (``--out``) is the "before" of a later change: ``--against OLD`` lists every
filler the change turned into another (before -> after), so a regression cannot pass unseen.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from factatlas.errors import ConfigError
from factatlas.records import Entity, RenderFailure
from factatlas.templates.labels import clean_label
from factatlas.templates.morphology import EXACT, GUESSED, NONE
from factatlas.templates.render import RenderedAnswer, Renderer
from factatlas.templates.slot_context import choose_option
from factatlas.templates.syntax import Group, Slot, TemplateSyntaxError, Text, parse
from factatlas.templates.variants import answer_variant, subject_key

VERDICTS = ("ok", "wrong")
UNREVIEWED = "unreviewed"
LEDGER_FIELDS = ("lang", "template", "qid", "variant", "role", "context", "filler", "status", "sources", "verdict")
REVIEW_FIELDS = ("context", "filler", "verdict", "note")
_WORD = re.compile(r"\S+\s*$")


@dataclass(frozen=True, slots=True)
class LedgerLine:
    lang: str
    template: str
    qid: str
    variant: str  # what of the subject the filler depends on ("" for most objects; the subject's gender)
    role: str  # gold | candidate | gold+candidate
    context: str
    filler: str
    status: str  # exact | guessed | none | failed
    sources: tuple[str, ...]
    verdict: str = UNREVIEWED

    @property
    def instance(self) -> tuple[str, str, str, str, str]:
        return (self.lang, self.template, self.qid, self.variant, self.context)

    @property
    def review_key(self) -> tuple[str, str]:
        return (self.context, self.filler)


@dataclass(frozen=True, slots=True)
class Ledger:
    lines: tuple[LedgerLine, ...]
    stale: int = 0  # fillers that differ from what the build stored (the build is older than the code)
    skipped: Mapping[str, int] | None = None  # reason -> times a build filler could not be re-rendered

    def by_lang(self) -> dict[str, list[LedgerLine]]:
        out: dict[str, list[LedgerLine]] = defaultdict(list)
        for line in self.lines:
            out[line.lang].append(line)
        return dict(sorted(out.items()))


# ---- context -------------------------------------------------------------------------------------

Choose = Callable[[Group], str]  # the form of a {X: …} group for one subject (render.choose_option)


def answer_context(text: str, choose: Choose | None = None) -> str:
    """The answer's place in a cloze template: the word just before the answer span (or the last three
    characters in scripts without spaces), the span itself as written (``в [Y.loc.в]``, ``قارة [Y]``,
    ``{Y: pl=sind | other=ist} [Y.def]``, ``[Y]에서``) and the words glued after it, with each ``{X: …}``
    group among them as ``choose`` renders it for a subject (``war [Y]``); without ``choose``, a group
    by its ``other`` form (how contexts were written before they were rendered: the migration of
    review keys, ``scripts/migrate_review_contexts.py``, reads them so)."""
    try:
        parsed = parse(text)
    except TemplateSyntaxError:
        return text
    span = parsed.answer_span()
    if span is None:
        return ""
    return _context(text, parsed.nodes, span[0], span[1], choose)


def subject_contexts(text: str, choose: Choose | None = None) -> list[tuple[int, str]]:
    """(node index, context) of every subject slot ``[X...]`` of a template, written as the answer's
    context is (``capitale [X.def.de]``, ``[X+은]``, ``تقع [X]`` with ``choose`` for a feminine city)."""
    try:
        parsed = parse(text)
    except TemplateSyntaxError:
        return []
    return [(i, _context(text, parsed.nodes, i, i, choose)) for i, node in enumerate(parsed.nodes)
            if isinstance(node, Slot) and node.name == "X"]


def _context(text: str, nodes: tuple, first_i: int, last_i: int, choose: Choose | None = None) -> str:
    first, last = nodes[first_i], nodes[last_i]
    before = "".join(_raw(text, n, choose) for n in nodes[:first_i])
    after = "".join(_raw(text, n, choose) for n in nodes[last_i + 1:])
    space = before[len(before.rstrip()):]
    words = before.rstrip().split()
    if not words:
        lead = ""
    elif space or len(words[-1]) <= 3:
        lead = words[-1].lstrip("«„\"(") + space
    else:
        lead = words[-1][-3:]
    glued = re.match(r"[^\s.,;:!?。、，！？]*", after).group()  # 에서, は, ya: affixes written onto the answer
    return f"{lead}{text[first.start:last.end]}{glued}"


def _raw(text: str, node, choose: Choose | None = None) -> str:
    """A node before or after the answer as a reader sees it: a subject's group as ``choose`` renders it
    (else by its ``other``, or first, form)."""
    if isinstance(node, Text):
        return node.value
    if isinstance(node, Group):
        if choose is not None and node.slot == "X":
            return choose(node)
        return node.form("other") or node.options[0].form
    return text[node.start:node.end] if isinstance(node, Slot) else ""


def context_chooser(renderer: Renderer, template, subject: Entity) -> Choose:
    """``choose`` for ``answer_context``: the form the renderer gives a ``{X: …}`` group for this subject
    (its gender and number as the renderer resolves them, its life status)."""
    from factatlas.templates.predicates import PREDICATES

    slots = PREDICATES.get(template.predicate)
    agreement = renderer.agreement(subject, template.lang, slots.subject_type if slots else "")

    def choose(group: Group) -> str:
        form = choose_option(group, agreement, subject.life)
        return form if form is not None else (group.form("other") or group.options[0].form)
    return choose


class Contexts:
    """The rendered answer context of each (language, template, subject), cached by what it depends on:
    the template and the subject's agreement and life status."""

    def __init__(self, renderer: Renderer, library, entities: Mapping[str, Entity]):
        from factatlas.templates.predicates import PREDICATES

        self.renderer, self.library, self.entities, self._predicates = renderer, library, entities, PREDICATES
        self._cache: dict[tuple, str] = {}

    def signature(self, template, subject: Entity) -> tuple:
        slots = self._predicates.get(template.predicate)
        ag = self.renderer.agreement(subject, template.lang, slots.subject_type if slots else "")
        return (ag.gender, ag.number, subject.life)

    def __call__(self, lang: str, tid: str, subject_qid: str) -> str:
        template, subject = self.library.get(lang, tid), self.entities.get(subject_qid)
        if template is None:
            return ""
        if subject is None:
            return answer_context(template.text)
        key = (lang, tid, self.signature(template, subject))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = answer_context(template.text,
                                                      context_chooser(self.renderer, template, subject))
        return found


# ---- building the ledger -------------------------------------------------------------------------

class _Tap(Counter):
    """The renderer's decision counter, logging each decision made while a filler is rendered."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.log: list[tuple] = []

    def __setitem__(self, key, value):
        self.log.append(key)
        super().__setitem__(key, value)


def answer_rows(prompts, entities: Mapping[str, Entity],
                context_of: Callable[[str, str, str], str] | None = None) -> list[dict]:
    """What ``build_instances`` needs of a build's prompts table (pyarrow): its cloze rows in table order,
    each with the gold list (``gold_qids``, ``gold_forms``) only where it holds an object not yet seen as gold
    in the same (lang, template, variant, context), and likewise the candidate list; rows left with neither are
    left out. The result of ``build_instances`` is the same as over every row.

    A list left out holds, for its role, only objects of earlier rows of the same language, template, subject
    gender (all that a variant depends on: ``subject_key``) and rendered context (``context_of(lang, template,
    subject)``: what agreement chose around the answer), so it adds nothing. Predicate-wide candidate lists make
    most of them (a shipped pair: about 1,400 distinct candidate lists in 52,000 cloze rows; each subject's list
    lacks only that subject, so two rows of a pool hold all of it). The lists are read as codes, one per
    distinct list, so those left out are never made Python objects."""
    import pyarrow.compute as pc

    cloze = prompts.filter(pc.equal(prompts["kind"], "cloze"))
    gold_codes, gold_lists = _list_codes(cloze["gold_qids"])
    candidate_codes, candidate_lists = _list_codes(cloze["candidate_qids"])
    seen: dict[tuple, set[str]] = {}  # (role, lang, template, subject gender, context) -> objects read
    rows: list[tuple[int, bool, bool]] = []
    for i, (lang, tid, subject, golds, candidates) in enumerate(zip(
            cloze["lang"].to_pylist(), cloze["template_id"].to_pylist(), cloze["subject_qid"].to_pylist(),
            gold_codes, candidate_codes, strict=True)):
        where = (lang, tid, subject_key(entities, subject), context_of(lang, tid, subject) if context_of else "")
        gold_seen = seen.setdefault(("gold", *where), set())
        candidate_seen = seen.setdefault(("candidate", *where), set())
        new_gold = not gold_seen.issuperset(gold_lists[golds])
        new_candidate = not candidate_seen.issuperset(candidate_lists[candidates])
        if new_gold:
            gold_seen.update(gold_lists[golds])
        if new_candidate:
            candidate_seen.update(candidate_lists[candidates])
        if new_gold or new_candidate:
            rows.append((i, new_gold, new_candidate))
    base = cloze.select(["lang", "template_id", "kind", "subject_qid"]).take([i for i, _, _ in rows]).to_pylist()
    golds = iter(cloze.select(["gold_qids", "gold_forms"]).take([i for i, g, _ in rows if g]).to_pylist())
    candidates = iter(cloze.select(["candidate_qids", "candidate_forms"]).take(
        [i for i, _, c in rows if c]).to_pylist())
    no_gold, no_candidate = {"gold_qids": [], "gold_forms": []}, {"candidate_qids": [], "candidate_forms": []}
    return [{**row, **(next(golds) if g else no_gold), **(next(candidates) if c else no_candidate)}
            for row, (_, g, c) in zip(base, rows, strict=True)]


def _list_codes(column) -> tuple[list[int], list[tuple[str, ...]]]:
    """A list column (pyarrow) as a code per row and, per code, the list: equal lists get equal codes."""
    import pyarrow.compute as pc

    from factatlas.prompt_tables import LIST_SEP, column_codes

    codes, joined = column_codes(pc.binary_join(column, LIST_SEP))
    return codes.tolist(), [tuple(x.split(LIST_SEP)) if x else () for x in joined.to_pylist()]


def build_instances(rows: Iterable[Mapping], variant_of, context_of: Callable[[str, str, str], str] | None = None
                    ) -> dict[tuple[str, str, str, str, str], tuple[str, str, str]]:
    """(lang, template, object, variant, context) -> (role, a subject of that variant, the build's filler) over
    the cloze rows of a build's prompts table; ``variant_of(object, subject)`` as the build computes it,
    ``context_of(lang, template, subject)`` the answer's context as rendered for the subject ("" without)."""
    out: dict[tuple[str, str, str, str, str], list] = {}
    for r in rows:
        if r["kind"] != "cloze":
            continue
        lang, tid, subject = r["lang"], r["template_id"], r["subject_qid"]
        ctx = context_of(lang, tid, subject) if context_of else ""
        for role, qids, fillers in (("gold", r["gold_qids"], [f[0] for f in r["gold_forms"]]),
                                    ("candidate", r["candidate_qids"], r["candidate_forms"])):
            for q, filler in zip(qids, fillers, strict=True):
                key = (lang, tid, q, variant_of(q, subject), ctx)
                seen = out.get(key)
                if seen is None:
                    out[key] = [{role}, subject, filler]
                else:
                    seen[0].add(role)
    return {k: ("+".join(sorted(v[0])), v[1], v[2]) for k, v in out.items()}


def make_ledger(rows: Iterable[Mapping], entities: Mapping[str, Entity], library,
                review: Mapping[str, Mapping[tuple[str, str], str]] | None = None,
                renderer: Renderer | None = None, contexts: Callable[[str, str, str], str] | None = None
                ) -> Ledger:
    """Render every filler of a build again and explain it (see the module docstring). ``contexts``: the
    rendered answer context per (lang, template, subject) (default: ``Contexts`` of this renderer)."""
    renderer = renderer or Renderer(entities)
    tap = _Tap(renderer.decisions)
    renderer.decisions = tap
    contexts = contexts or Contexts(renderer, library, entities)
    instances = build_instances(rows, lambda q, s: answer_variant(entities, q, s), contexts)
    review = review if review is not None else {}
    lines: list[LedgerLine] = []
    stale = 0
    skipped: Counter[str] = Counter()
    for (lang, tid, q, variant, ctx), (role, subject, stored) in sorted(instances.items()):
        template = library.get(lang, tid)
        if template is None:
            skipped["template-gone"] += 1
            continue
        tap.log.clear()
        res = renderer.render_answer(template, q, subject)
        if not isinstance(res, RenderedAnswer):
            filler, status, sources = stored, "failed", (f"render failure {res.reason}: {res.detail}",)
        else:
            filler = res.forms[0]
            status = filler_status(res, renderer, entities[q], lang)
            sources = _sources(res, tap.log, lang)
        if filler != stored:
            stale += 1
        verdict = review.get(lang, {}).get((ctx, filler), UNREVIEWED)
        lines.append(LedgerLine(lang, tid, q, variant, role, ctx, filler, status, sources, verdict))
    return Ledger(tuple(lines), stale, dict(skipped))


def subject_lines(rows: Iterable[Mapping], entities: Mapping[str, Entity], library,
                  review: Mapping[str, Mapping[tuple[str, str], str]] | None = None,
                  renderer: Renderer | None = None, rendered: bool = True) -> list[LedgerLine]:
    """Every subject filler of a build's cloze prompts — the form of ``[X...]`` each subject takes in each
    template (role ``subject``) — explained as the answers are: status, sources, review verdict; its context
    as rendered for that subject (``rendered=False``: groups by their ``other`` form, as before)."""
    from factatlas.templates.predicates import PREDICATES
    from factatlas.templates.slot_context import opens_sentence

    renderer = renderer or Renderer(entities)
    tap = renderer.decisions if isinstance(renderer.decisions, _Tap) else _Tap(renderer.decisions)
    renderer.decisions = tap
    review = review if review is not None else {}
    instances = sorted({(r["lang"], r["template_id"], r["subject_qid"]) for r in rows if r["kind"] == "cloze"})
    lines: list[LedgerLine] = []
    # a subject takes the same form wherever the slot asks the same of it: rendered once per form asked;
    # its contexts are rendered once per (template, agreement, life status)
    forms: dict[tuple, tuple[str, str, tuple[str, ...]]] = {}
    slots_of: dict[tuple, list[tuple[str, tuple, str, bool]]] = {}
    contexts = Contexts(renderer, library, entities)
    for lang, tid, subject_qid in instances:
        template, subject = library.get(lang, tid), entities.get(subject_qid)
        if template is None or subject is None:
            continue
        key = (lang, tid, contexts.signature(template, subject))
        slots = slots_of.get(key)
        if slots is None:
            predicate = PREDICATES.get(template.predicate)
            xtype = predicate.subject_type if predicate else ""
            nodes = parse(template.text).nodes
            choose = context_chooser(renderer, template, subject) if rendered else None
            slots = slots_of[key] = [(ctx, nodes[i].features, xtype, opens_sentence(nodes, i))
                                     for i, ctx in subject_contexts(template.text, choose)]
        for ctx, features, xtype, initial in slots:
            key = (lang, subject_qid, features, xtype, initial)
            if key not in forms:
                forms[key] = _subject_form(renderer, tap, subject, lang, features, xtype, initial)
            filler, status, sources = forms[key]
            verdict = review.get(lang, {}).get((ctx, filler), UNREVIEWED)
            lines.append(LedgerLine(lang, tid, subject_qid, "", "subject", ctx, filler, status, sources, verdict))
    return lines


def _subject_form(renderer: Renderer, tap: _Tap, subject: Entity, lang: str, features, xtype: str,
                  initial: bool) -> tuple[str, str, tuple[str, ...]]:
    """(filler, status, sources) of a subject in a slot with these features."""
    tap.log.clear()
    res = renderer.fill(subject, lang, features, xtype, initial)
    if isinstance(res, RenderFailure):
        return subject.labels.get(lang, ""), "failed", (f"render failure {res.reason}: {res.detail}",)
    return res.form, res.status, (
        f"form {res.backend or 'none'}:{res.status}" + (f" ({res.detail})" if res.detail else ""),
        *(f"{what} {how}: {detail}" for key in dict.fromkeys(tap.log)
          if len(key) == 4 and key[0] == lang and key[1] != "alias"
          for _, what, how, detail in (key,)))


def filler_status(res: RenderedAnswer, renderer: Renderer, obj: Entity, lang: str) -> str:
    """The backend's own status — ``exact`` only for a lexicon form, a one-word dictionary form or a phrase
    whose every choice the lexicon entry made; anything composed is ``guessed`` (backend_ru, backend_rules)
    — with ``none`` for the label as written; words of a template choice around the slot's form (an
    agreeing verb) keep ``exact`` only where the lexicon entry decided them."""
    if res.backend == "lexicon" and res.forms[0] == res.slot_form:
        return EXACT
    bare = res.forms[0] == res.slot_form
    if res.inflection == NONE:
        return NONE if bare else GUESSED
    if res.inflection != EXACT:
        return res.inflection
    if res.backend == "korean":
        return EXACT  # a particle chosen by the final syllable's arithmetic: nothing is guessed
    if not bare:  # words of a template choice join the filler: chosen by the lexicon entry, or guessed
        entry = renderer.entry(obj, lang)
        return EXACT if entry is not None and (entry.article or entry.prep or entry.gender) else GUESSED
    if res.backend == "unimorph" and re.search(r"[\s-]", clean_label(obj.labels.get(lang, ""))):
        return GUESSED  # UniMorph forms words; a phrase of several is composed
    return EXACT


def _sources(res: RenderedAnswer, log: Sequence[tuple], lang: str) -> tuple[str, ...]:
    out = [f"form {res.backend or 'none'}:{res.inflection}" + (f" ({res.detail})" if res.detail else "")]
    if res.label_source != "label":
        out.append(f"label {res.label_source}")
    for key in dict.fromkeys(log):
        if len(key) == 4 and key[0] == lang and key[1] != "alias":
            _, what, how, detail = key
            out.append(f"{what} {how}: {detail}")
    return tuple(out)


# ---- the review ----------------------------------------------------------------------------------

def review_dir() -> Path:
    return Path(str(resources.files("factatlas.templates").joinpath("review")))


@cache
def load_review(lang: str, folder: str | None = None) -> Mapping[tuple[str, str], str]:
    """(context, filler) -> verdict from ``templates/review/<lang>.tsv`` (empty when absent)."""
    path = Path(folder) / f"{lang}.tsv" if folder else review_dir() / f"{lang}.tsv"
    return {k: v[0] for k, v in read_review(path).items()} if path.exists() else {}


def read_review(path: str | Path) -> dict[tuple[str, str], tuple[str, str]]:
    """A review file: a header line ``context filler verdict note`` and one line per reviewed filler."""
    text = Path(path).read_text("utf-8")
    out: dict[tuple[str, str], tuple[str, str]] = {}
    reader = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    for n, row in enumerate(reader, 1):
        if n == 1:
            if tuple(row) != REVIEW_FIELDS:
                raise ConfigError(f"the header must be {' / '.join(REVIEW_FIELDS)} separated by tabs", str(path), 1)
            continue
        if not row:
            continue
        if len(row) != 4 or row[2] not in VERDICTS:
            raise ConfigError(f"expected 4 tab-separated fields (context, filler, ok|wrong, note), got {row!r}",
                              str(path), n)
        out[(row[0], row[1])] = (row[2], row[3])
    return out


def write_review(path: str | Path, verdicts: Mapping[tuple[str, str], tuple[str, str]]) -> None:
    from factatlas.atomic import write_text

    lines = ["\t".join(REVIEW_FIELDS)]
    for (ctx, filler), (verdict, note) in sorted(verdicts.items()):
        for value in (ctx, filler, note):
            if "\t" in value or "\n" in value:
                raise ValueError(f"review fields hold no tabs or newlines: {value!r}")
        lines.append("\t".join((ctx, filler, verdict, note)))
    write_text(path, "\n".join(lines) + "\n")


# ---- files and diffs -----------------------------------------------------------------------------

def ledger_tsv(ledger: Ledger) -> str:
    buf = io.StringIO()
    buf.write("\t".join(LEDGER_FIELDS) + "\n")
    for x in ledger.lines:
        fields = (x.lang, x.template, x.qid, x.variant, x.role, x.context, x.filler, x.status,
                  " | ".join(x.sources), x.verdict)
        buf.write("\t".join(f.replace("\t", " ").replace("\n", " ") for f in fields) + "\n")
    return buf.getvalue()


def read_ledger(path: str | Path) -> dict[tuple[str, str, str, str, str], tuple[str, str]]:
    """(lang, template, object, variant, context) -> (context, filler) of a ledger written with ``--out``."""
    lines = Path(path).read_text("utf-8").splitlines()
    if not lines or tuple(lines[0].split("\t")) != LEDGER_FIELDS:
        raise ConfigError(f"not a filler ledger (the first line must be the header {' '.join(LEDGER_FIELDS)}); "
                          "write one with `factatlas templates audit --fillers RUN --out FILE`", str(path), 1)
    out = {}
    for n, line in enumerate(lines[1:], 2):
        f = line.split("\t")
        if len(f) != len(LEDGER_FIELDS):
            raise ConfigError(f"expected {len(LEDGER_FIELDS)} tab-separated fields", str(path), n)
        out[(f[0], f[1], f[2], f[3], f[5])] = (f[5], f[6])
    return out


@dataclass(frozen=True, slots=True)
class FillerChange:
    lang: str
    context: str
    before: str  # "" when the filler is new
    after: str  # "" when the filler is gone
    instances: tuple[tuple[str, str], ...]  # (template, object) it changed for


def filler_diff(before: Mapping[tuple[str, ...], tuple[str, str]],
                after: Mapping[tuple[str, ...], tuple[str, str]]) -> list[FillerChange]:
    """Every filler that differs between two ledgers, grouped by (language, context, before, after)."""
    groups: dict[tuple[str, str, str, str], list[tuple[str, str]]] = defaultdict(list)
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is not None and new is not None and old[1] == new[1]:
            continue
        ctx = (new or old)[0]
        groups[(key[0], ctx, old[1] if old else "", new[1] if new else "")].append((key[1], key[2]))
    return [FillerChange(lang, ctx, b, a, tuple(inst)) for (lang, ctx, b, a), inst in sorted(groups.items())]


def format_diff(changes: Sequence[FillerChange]) -> str:
    if not changes:
        return "no filler changed"
    out = [f"{len(changes)} filler change(s) (before -> after):"]
    for c in changes:
        where = ", ".join(f"{t} {q}" for t, q in c.instances[:3]) + (
            f", ... {len(c.instances) - 3} more" if len(c.instances) > 3 else "")
        out.append(f"  {c.lang}  {c.context}:  {c.before or '(new)'}  ->  {c.after or '(gone)'}   [{where}]")
    return "\n".join(out)


def as_mapping(ledger: Ledger) -> dict[tuple[str, str, str, str, str], tuple[str, str]]:
    return {x.instance: (x.context, x.filler) for x in ledger.lines}


# ---- the report ----------------------------------------------------------------------------------

def summary(ledger: Ledger) -> dict[str, dict[str, int]]:
    """Per language: distinct fillers (by review key) and how many are ok / wrong / unreviewed / guessed."""
    out: dict[str, dict[str, int]] = {}
    for lang, lines in ledger.by_lang().items():
        keys: dict[tuple[str, str], LedgerLine] = {}
        for x in lines:
            keys.setdefault(x.review_key, x)
        counts = Counter(x.verdict for x in keys.values())
        out[lang] = {"lines": len(lines), "distinct": len(keys), "ok": counts["ok"], "wrong": counts["wrong"],
                     UNREVIEWED: counts[UNREVIEWED],
                     "guessed": sum(1 for x in keys.values() if x.status == GUESSED)}
    return out


def check_failures(ledger: Ledger) -> dict[str, dict[str, int]]:
    """The gate of ``factatlas templates audit --fillers --check``: per language with a filler reviewed wrong
    or not reviewed, how many distinct fillers are ``wrong`` and ``unreviewed``; empty when the ledger passes."""
    return {lang: {"wrong": s["wrong"], UNREVIEWED: s[UNREVIEWED]} for lang, s in summary(ledger).items()
            if s["wrong"] or s[UNREVIEWED]}


def format_ledger(ledger: Ledger, limit: int = 20, show_all: bool = False) -> str:
    """Per language: the counts, then the wrong and unreviewed fillers (every filler with ``show_all``)."""
    out = []
    if ledger.stale:
        out.append(f"note: {ledger.stale} filler(s) differ from the ones the build stored (the code, lexicon or "
                   "templates changed since): rebuild the run to ship them")
    for reason, n in sorted((ledger.skipped or {}).items()):
        out.append(f"note: {n} build filler(s) not re-rendered: {reason}")
    stats = summary(ledger)
    for lang, lines in ledger.by_lang().items():
        s = stats[lang]
        out.append(f"== {lang}: {s['distinct']} distinct fillers ({s['lines']} template x object lines): "
                   f"{s['ok']} ok, {s['wrong']} wrong, {s[UNREVIEWED]} unreviewed; {s['guessed']} guessed")
        keys: dict[tuple[str, str], list[LedgerLine]] = defaultdict(list)
        for x in lines:
            keys[x.review_key].append(x)
        shown = 0
        for (ctx, filler), xs in sorted(keys.items()):
            x = xs[0]
            if not show_all and x.verdict == "ok":
                continue
            if shown >= limit:
                out.append("  ... more (--limit 0 for all)")
                break
            shown += 1
            tids = sorted({y.template for y in xs})
            out.append(f"  [{x.verdict}] {ctx}  =>  {filler}   ({x.status}; {x.role}; {x.qid}; "
                       f"{','.join(tids[:4])}{'...' if len(tids) > 4 else ''}; {' | '.join(x.sources)})")
    return "\n".join(out)


def ledger_for_run(run: str | Path, library, review_folder: str | None = None,
                   langs: Sequence[str] | None = None, subjects: bool = False) -> Ledger:
    """The ledger of ``RUN/build`` (its prompts) rendered with ``library`` and the entities of
    ``RUN/curate``; ``subjects``: the subject fillers too (role ``subject``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from factatlas.tables import read_entities

    run = Path(run)
    prompts = run / "build" / "prompts.parquet"
    if not prompts.exists():
        raise ConfigError(f"{prompts} is missing; the filler ledger reads a build: run `factatlas build {run} "
                          "--langs ...` first")
    columns = ["lang", "template_id", "kind", "subject_qid", "gold_qids", "gold_forms", "candidate_qids",
               "candidate_forms"]
    table = pq.read_table(prompts, columns=columns)
    if langs:
        table = table.filter(pc.is_in(table["lang"], pa.array(list(langs), pa.string())))
    langs = sorted(set(table["lang"].to_pylist()))
    review = {lang: load_review(lang, review_folder) for lang in langs}
    entities = read_entities(run / "curate")
    renderer = Renderer(entities)
    contexts = Contexts(renderer, library, entities)
    ledger = make_ledger(answer_rows(table, entities, contexts), entities, library, review, renderer, contexts)
    if not subjects:
        return ledger
    cloze = table.filter(pc.equal(table["kind"], "cloze")).select(["lang", "template_id", "kind", "subject_qid"])
    more = subject_lines(cloze.to_pylist(), entities, library, review, renderer)
    return Ledger(ledger.lines + tuple(more), ledger.stale, ledger.skipped)
