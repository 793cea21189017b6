"""What changed between two releases: facts added, removed and changed, per predicate, culture and language.

A ``Snapshot`` is what a release says about its facts (read from the release files); ``diff_snapshots``
compares two of them purely. The diff drives the CHANGELOG and the suggested semantic-version bump:
anything removed (facts, gold objects, languages, configs, prompts), a fact moved between splits, a new
split salt or a schema change -> major, anything added -> minor, label or wording changes only -> patch.
Splits hash each fact's id with the recorded salt, so a re-curation that only adds facts is minor: no
surviving fact can move unless the salt changed, and a move is still reported when it happens.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from factatlas.errors import ConfigError, FactatlasError

from .card import split_card
from .source import facts_from_bytes, labels_from_bytes, table_from_bytes
from .versions import Bump

ALL_CONFIG = "all"
PROMPT_COLUMNS = ("prompt_id", "fact_id", "lang", "template_id", "text", "split", "gold_qids", "gold_forms",
                  "candidate_qids")


@dataclass(frozen=True)
class FactInfo:
    predicate: str
    culture: str
    subject: str
    objects: frozenset[str]


@dataclass(frozen=True)
class PromptInfo:
    fact_id: str
    lang: str
    template_id: str
    text: str
    split: str
    # list columns are compared, not inspected: each is kept as one joined string (see _column_values)
    gold: str
    gold_forms: str
    candidates: str


T = TypeVar("T")
_SEP, _SEP2 = "\x1f", "\x1e"  # ASCII unit / record separators never occur in labels


def _column_values(table: pa.Table, name: str) -> list:
    """Python values of a column; list columns joined into one string per row inside Arrow (C++),
    because converting candidate lists (hundreds of QIDs per prompt) to Python dominates otherwise."""
    if name not in table.schema.names:
        return [None] * table.num_rows
    column = table.column(name)
    if pa.types.is_list(column.type) and pa.types.is_list(column.type.value_type):
        # offsets rebased to 0: flatten() drops the values before a sliced chunk's first offset
        chunks = [pa.ListArray.from_arrays(pc.subtract(c.offsets, c.offsets[0]), pc.binary_join(c.flatten(), _SEP))
                  for c in column.chunks]
        return [v for c in chunks for v in pc.binary_join(c, _SEP2).to_pylist()]
    if pa.types.is_list(column.type):
        return pc.binary_join(column, _SEP).to_pylist()
    return column.to_pylist()


@dataclass(frozen=True)
class Snapshot:
    """The diffable content of one release."""

    facts: Mapping[str, FactInfo]
    labels: Mapping[tuple[str, str], str]  # (qid, lang) -> label
    prompts: Mapping[str, PromptInfo]  # prompt_id -> prompt
    languages: tuple[str, ...]
    configs: frozenset[str]
    data_schema: str  # the data files' Arrow schema, printed
    schema_version: int | None
    version: str | None = None
    split_salt: str | None = None  # benchmark.json splits.salt (None: built before salted splits)


def _decoded(where: str, path: str, decode: Callable[[bytes], T], data: bytes) -> T:
    """``decode(data)``, or one error naming the release and its file when the file is damaged (cut, not
    parquet, not JSON or YAML, not UTF-8): a diff of a damaged release was a traceback from Arrow or json."""
    import yaml

    try:
        return decode(data)
    except FactatlasError:
        raise
    except (pa.ArrowException, OSError, ValueError, yaml.YAMLError) as e:  # JSON and UTF-8 errors are ValueErrors
        first = (str(e).strip().splitlines() or [""])[0][:200]
        raise ConfigError(f"{where}: {path} is damaged ({type(e).__name__}: {first}); fetch or publish that "
                          "release again") from None


def _json_object(data: bytes) -> dict:
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, found {type(value).__name__}")
    return value


def snapshot_from_files(files: Mapping[str, bytes], where: str = "release") -> Snapshot:
    """Read a rendered release (path in repo -> bytes); ``where`` names it in errors (its reference)."""
    def need(path: str) -> bytes:
        if path not in files:
            raise ConfigError(f"{where} lacks {path}: not a factatlas release (or one rendered by an older "
                              "version); diff needs releases rendered by `factatlas publish`")
        return files[path]

    def read(path: str, decode: Callable[[bytes], T]) -> T:
        return _decoded(where, path, decode, need(path))

    facts = {f.id: FactInfo(f.predicate, f.culture, f.subject, frozenset(f.object_qids))
             for f in read("benchmark/facts.parquet", facts_from_bytes)}
    labels = read("benchmark/labels.parquet", labels_from_bytes)
    meta = read("benchmark/benchmark.json", _json_object)
    data_paths = sorted(p for p in files if p.startswith(f"data/{ALL_CONFIG}/") and p.endswith(".parquet"))
    if not data_paths:
        raise ConfigError(f"{where} lacks data/{ALL_CONFIG}/*.parquet; was it rendered by `factatlas publish`?")
    tables = [read(p, table_from_bytes) for p in data_paths]
    schema = tables[0].schema.remove_metadata()
    prompts = {}
    for t in tables:
        cols = {c: _column_values(t, c) for c in PROMPT_COLUMNS}
        for pid, fid, lang, tid, text, split, gold, forms, cands in zip(*(cols[c] for c in PROMPT_COLUMNS),
                                                                        strict=True):
            prompts[pid] = PromptInfo(fid, lang, tid, text or "", split or "", gold or "", forms or "", cands or "")
    card_meta, _ = _decoded(where, "README.md", lambda b: split_card(b.decode("utf-8")), files.get("README.md", b""))
    configs = frozenset(c["config_name"] for c in card_meta.get("configs") or ())
    manifest = read("manifest.json", _json_object) if "manifest.json" in files else {}
    languages = tuple(meta.get("languages") or sorted({p.lang for p in prompts.values()}))
    return Snapshot(facts, labels, prompts, languages, configs, schema.to_string(show_schema_metadata=False),
                    meta.get("schema_version"), manifest.get("version"), (meta.get("splits") or {}).get("salt"))


@dataclass(frozen=True)
class LabelChange:
    qid: str
    lang: str
    old: str
    new: str


@dataclass(frozen=True)
class FactChange:
    fact_id: str
    predicate: str
    culture: str
    gained: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()
    labels: tuple[LabelChange, ...] = ()


@dataclass(frozen=True)
class GroupCounts:
    added: int = 0
    removed: int = 0
    gained: int = 0  # facts that gained objects
    lost: int = 0  # facts that lost objects
    relabeled: int = 0  # facts with a changed subject/object label


@dataclass(frozen=True)
class LanguageCounts:
    facts_added: int = 0  # facts that gained prompts in this language
    facts_removed: int = 0
    relabeled: int = 0
    prompts_added: int = 0
    prompts_removed: int = 0
    prompts_reworded: int = 0  # same prompt id, different text or answer forms


@dataclass(frozen=True)
class ReleaseDiff:
    old_version: str | None
    new_version: str | None
    added: tuple[str, ...]  # fact ids
    removed: tuple[str, ...]
    changed: tuple[FactChange, ...]
    by_group: Mapping[tuple[str, str], GroupCounts]  # (predicate, culture) -> counts
    by_language: Mapping[str, LanguageCounts]
    languages_added: tuple[str, ...]
    languages_removed: tuple[str, ...]
    configs_added: tuple[str, ...]
    configs_removed: tuple[str, ...]
    templates_added: Mapping[str, tuple[str, ...]]  # lang -> template ids
    templates_removed: Mapping[str, tuple[str, ...]]
    split_moves: int  # prompts whose split changed
    candidates_changed: int  # prompts whose candidate set changed
    gold_changed: int  # prompts whose gold QIDs changed
    schema_changes: tuple[str, ...] = field(default=())
    facts_moved: tuple[str, ...] = ()  # facts whose split changed (in any of their prompts)
    split_salt_change: str = ""  # "'old' -> 'new'" when benchmark.json's split salt differs

    @property
    def objects_gained(self) -> int:
        return sum(len(c.gained) for c in self.changed)

    @property
    def objects_lost(self) -> int:
        return sum(len(c.lost) for c in self.changed)

    @property
    def labels_changed(self) -> int:
        return sum(len(c.labels) for c in self.changed)

    def reasons(self) -> dict[Bump, list[str]]:
        """Why each bump level is needed, in words."""
        out: dict[Bump, list[str]] = {Bump.MAJOR: [], Bump.MINOR: [], Bump.PATCH: []}
        langs = self.by_language.values()
        major = out[Bump.MAJOR]
        if self.removed:
            major.append(f"{len(self.removed)} facts removed")
        if self.objects_lost:
            major.append(f"{self.objects_lost} gold objects lost")
        if self.languages_removed:
            major.append(f"languages removed: {', '.join(self.languages_removed)}")
        if self.configs_removed:
            major.append(f"configs removed: {', '.join(self.configs_removed)}")
        if any(self.templates_removed.values()):
            major.append(f"{sum(map(len, self.templates_removed.values()))} templates removed")
        removed_prompts = sum(c.prompts_removed for c in langs)
        if removed_prompts:
            major.append(f"{removed_prompts} prompts removed")
        if self.split_moves:
            major.append(f"{self.split_moves} prompts ({len(self.facts_moved)} facts) moved between splits")
        if self.split_salt_change:
            major.append(f"split salt changed {self.split_salt_change}")
        major.extend(self.schema_changes)
        minor = out[Bump.MINOR]
        if self.added:
            minor.append(f"{len(self.added)} facts added")
        if self.objects_gained:
            minor.append(f"{self.objects_gained} gold objects gained")
        if self.languages_added:
            minor.append(f"languages added: {', '.join(self.languages_added)}")
        if self.configs_added:
            minor.append(f"configs added: {', '.join(self.configs_added)}")
        added_prompts = sum(c.prompts_added for c in langs)
        if added_prompts:
            minor.append(f"{added_prompts} prompts added")
        patch = out[Bump.PATCH]
        if self.labels_changed:
            patch.append(f"{self.labels_changed} labels changed")
        reworded = sum(c.prompts_reworded for c in langs)
        if reworded:
            patch.append(f"{reworded} prompts reworded")
        if self.candidates_changed:
            patch.append(f"{self.candidates_changed} prompts with a changed candidate set")
        return out

    @property
    def suggested_bump(self) -> Bump:
        reasons = self.reasons()
        for level in (Bump.MAJOR, Bump.MINOR, Bump.PATCH):
            if reasons[level]:
                return level
        return Bump.NONE


def _referenced(f: FactInfo) -> set[str]:
    return {f.subject, *f.objects}


def _fact_changes(old: Snapshot, new: Snapshot) -> list[FactChange]:
    """The facts in both releases whose objects or labels (in the languages both have) changed."""
    common_langs = sorted(set(old.languages) & set(new.languages))
    changed: list[FactChange] = []
    for fid in sorted(set(old.facts) & set(new.facts)):
        o, n = old.facts[fid], new.facts[fid]
        labels = []
        for qid in sorted(_referenced(o) & _referenced(n)):
            for lang in common_langs:
                a, b = old.labels.get((qid, lang), ""), new.labels.get((qid, lang), "")
                if a != b:
                    labels.append(LabelChange(qid, lang, a, b))
        gained, lost = tuple(sorted(n.objects - o.objects)), tuple(sorted(o.objects - n.objects))
        if gained or lost or labels:
            changed.append(FactChange(fid, n.predicate, n.culture, gained, lost, tuple(labels)))
    return changed


def diff_snapshots(old: Snapshot, new: Snapshot) -> ReleaseDiff:
    added = sorted(set(new.facts) - set(old.facts))
    removed = sorted(set(old.facts) - set(new.facts))
    changed = _fact_changes(old, new)

    group: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for fid in added:
        group[(new.facts[fid].predicate, new.facts[fid].culture)]["added"] += 1
    for fid in removed:
        group[(old.facts[fid].predicate, old.facts[fid].culture)]["removed"] += 1
    for c in changed:
        g = group[(c.predicate, c.culture)]
        g["gained"] += bool(c.gained)
        g["lost"] += bool(c.lost)
        g["relabeled"] += bool(c.labels)

    lang: dict[str, Counter[str]] = defaultdict(Counter)
    cover_old, cover_new = _coverage(old.prompts.values()), _coverage(new.prompts.values())
    for lg in sorted(set(cover_old) | set(cover_new)):
        a, b = cover_old.get(lg, set()), cover_new.get(lg, set())
        lang[lg]["facts_added"] += len(b - a)
        lang[lg]["facts_removed"] += len(a - b)
    for c in changed:
        for lg in sorted({lc.lang for lc in c.labels}):
            lang[lg]["relabeled"] += 1
    split_moves = candidates_changed = gold_changed = 0
    moved: set[str] = set()
    for pid in set(old.prompts) | set(new.prompts):
        a, b = old.prompts.get(pid), new.prompts.get(pid)
        if a is None:
            lang[b.lang]["prompts_added"] += 1
        elif b is None:
            lang[a.lang]["prompts_removed"] += 1
        else:
            if a.text != b.text or a.gold_forms != b.gold_forms:
                lang[b.lang]["prompts_reworded"] += 1
            if a.split != b.split:
                split_moves += 1
                moved.add(b.fact_id)
            candidates_changed += a.candidates != b.candidates
            gold_changed += a.gold != b.gold

    templates_old, templates_new = _templates(old.prompts.values()), _templates(new.prompts.values())
    t_added = {lg: tuple(sorted(templates_new[lg] - templates_old.get(lg, set())))
               for lg in sorted(templates_new) if lg in templates_old}
    t_removed = {lg: tuple(sorted(templates_old[lg] - templates_new.get(lg, set())))
                 for lg in sorted(templates_old) if lg in templates_new}

    schema_changes = []
    if old.data_schema != new.data_schema:
        schema_changes.append("data schema changed")
    if old.schema_version != new.schema_version:
        schema_changes.append(f"benchmark schema_version {old.schema_version} -> {new.schema_version}")

    return ReleaseDiff(
        old_version=old.version, new_version=new.version, added=tuple(added), removed=tuple(removed),
        changed=tuple(changed),
        by_group={k: GroupCounts(**v) for k, v in sorted(group.items())},
        by_language={k: LanguageCounts(**v) for k, v in sorted(lang.items())},
        languages_added=tuple(sorted(set(new.languages) - set(old.languages))),
        languages_removed=tuple(sorted(set(old.languages) - set(new.languages))),
        configs_added=tuple(sorted(new.configs - old.configs)),
        configs_removed=tuple(sorted(old.configs - new.configs)),
        templates_added={k: v for k, v in t_added.items() if v},
        templates_removed={k: v for k, v in t_removed.items() if v},
        split_moves=split_moves, candidates_changed=candidates_changed, gold_changed=gold_changed,
        schema_changes=tuple(schema_changes), facts_moved=tuple(sorted(moved)),
        split_salt_change=(f"{_salt(old.split_salt)} -> {_salt(new.split_salt)}"
                           if old.split_salt != new.split_salt else ""),
    )


def _salt(salt: str | None) -> str:
    return repr(salt) if salt is not None else "(no salt recorded)"


def _coverage(prompts: Iterable[PromptInfo]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for p in prompts:
        out[p.lang].add(p.fact_id)
    return out


def _templates(prompts: Iterable[PromptInfo]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for p in prompts:
        out[p.lang].add(p.template_id)
    return out


# ---- text --------------------------------------------------------------------------------------

def _md_table(header: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def format_diff(d: ReleaseDiff, details: int = 0) -> str:
    """Markdown: the summary, reasons per bump level, tables per predicate x culture and per language."""
    summary = [f"Suggested bump: **{d.suggested_bump.value}**", ""]
    summary += [f"- {level.value}: " + "; ".join(reasons) for level, reasons in d.reasons().items() if reasons]
    if d.suggested_bump is Bump.NONE:
        summary.append("- no changes in facts, labels, prompts, configs or schema")
    parts = ["\n".join(summary)]
    if d.by_group:
        rows = [(p, c, g.added, g.removed, g.gained, g.lost, g.relabeled) for (p, c), g in d.by_group.items()]
        parts.append("Facts per predicate and culture (gained/lost/relabeled count facts):\n\n" + _md_table(
            ("predicate", "culture", "added", "removed", "gained objects", "lost objects", "labels changed"), rows))
    if d.by_language:
        rows = [(lg, c.facts_added, c.facts_removed, c.relabeled, c.prompts_added, c.prompts_removed,
                 c.prompts_reworded) for lg, c in d.by_language.items()]
        parts.append("Per language:\n\n" + _md_table(
            ("language", "facts added", "facts removed", "facts relabeled", "prompts added", "prompts removed",
             "prompts reworded"), rows))
    for title, mapping in (("Templates added", d.templates_added), ("Templates removed", d.templates_removed)):
        if mapping:
            parts.append(f"{title}: " + "; ".join(f"{lg}: {', '.join(ids)}" for lg, ids in mapping.items()))
    if details:
        lines = [f"- added {f}" for f in d.added[:details]] + [f"- removed {f}" for f in d.removed[:details]]
        lines += [f"- moved split {f}" for f in d.facts_moved[:details]]
        for c in d.changed[:details]:
            bits = ([f"+{', '.join(c.gained)}"] if c.gained else []) + ([f"-{', '.join(c.lost)}"] if c.lost else [])
            bits += [f"{lc.qid}@{lc.lang}: {lc.old!r} -> {lc.new!r}" for lc in c.labels]
            lines.append(f"- changed {c.fact_id}: " + "; ".join(bits))
        if lines:
            parts.append(f"Details (first {details} of each kind):\n\n" + "\n".join(lines))
    return "\n\n".join(parts) + "\n"


def changelog_section(version: str, d: ReleaseDiff | None, first_release_summary: str) -> str:
    if d is None:
        return f"## v{version}\n\nFirst release. {first_release_summary}\n"
    head = f"## v{version}\n\nChanges since v{d.old_version}" if d.old_version else f"## v{version}\n\nChanges"
    return f"{head} (a {d.suggested_bump.value}-level change).\n\n" + format_diff(d)


CHANGELOG_HEADER = "# Changelog\n\nEvery version is a git tag `vX.Y.Z` of this repository. Newest first.\n\n"


def changelog(section: str, previous: str | None) -> str:
    """The new section on top of the previous CHANGELOG's sections."""
    older = ""
    if previous:
        older = previous[len(CHANGELOG_HEADER):] if previous.startswith(CHANGELOG_HEADER) else previous
    return CHANGELOG_HEADER + section.rstrip("\n") + "\n" + ("\n" + older.lstrip("\n") if older else "")

