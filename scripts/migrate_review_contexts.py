#!/usr/bin/env python3
"""Re-key the filler reviews when ledger contexts become what was rendered (issue 40, item 5).

    python3 scripts/migrate_review_contexts.py --old-ref 73c6a4a runs/arab-west runs/asia-west \\
        runs/south-america-west --langs ar,de --out /tmp/reread [--write]

A review line is keyed by (context, filler). Contexts used to be the template's words around the slot with
every agreement group written by its ``other`` form («يقع [X]» for every subject); now they are rendered
for the line's subject («تقع [X]» for a feminine city, «war [Y]» for the dead). For every filler a build
holds (each gold and candidate of its cloze prompts, and each subject: ``--subjects``, on by default),
this script renders the old key (the templates at ``--old-ref`` or in ``--old-templates DIR``, contexts
as they were written) and the new key (the current templates, rendered contexts), and

- keeps a review line whose key did not change;
- carries the verdict of an old key to its new key(s) when only the context changed (the filler is the
  same), with a note naming the old context; 'wrong' wins where two old keys meet in one new key;
- leaves a new key with no old verdict unreviewed (its filler changed, or the line is new).

Every carried or unreviewed line is written to ``OUT/<lang>.tsv`` for re-reading (old context, new context,
filler, carried verdict, an example prompt), and the counts per language are printed. ``--write`` rewrites
``templates/review/<lang>.tsv`` (old lines are kept: other runs may still produce them). Rerun it on the
review files of a language whose templates change the same way.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REREAD_FIELDS = ("old_context", "context", "filler", "carried", "role", "example")


def old_templates(ref: str, langs: list[str], folder: Path) -> Path:
    """The template files of ``langs`` as they were at git ``ref``, written into ``folder``."""
    for lang in langs:
        done = subprocess.run(["git", "show", f"{ref}:templates/lang/{lang}.yaml"], capture_output=True,
                              text=True, cwd=Path(__file__).resolve().parents[1])
        if done.returncode != 0:
            raise SystemExit(f"error: templates/lang/{lang}.yaml is not at {ref}: {done.stderr.strip()}")
        (folder / f"{lang}.yaml").write_text(done.stdout, "utf-8")
    return folder


def keys_of_run(run: Path, langs: list[str], old_library, new_library, subjects: bool):
    """Per language: a list of (old key, new key, role, example) for every filler of the run's build."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from factatlas.tables import read_entities
    from factatlas.templates.ledger import Contexts, answer_context, answer_rows, make_ledger, subject_lines
    from factatlas.templates.render import Renderer

    table = pq.read_table(run / "build" / "prompts.parquet",
                          columns=["lang", "template_id", "kind", "subject_qid", "gold_qids", "gold_forms",
                                   "candidate_qids", "candidate_forms"])
    table = table.filter(pc.is_in(table["lang"], pa.array(langs, pa.string())))
    entities = read_entities(run / "curate")
    renderer = Renderer(entities)
    new_contexts = Contexts(renderer, new_library, entities)
    rows = answer_rows(table, entities, new_contexts)

    def legacy(lang: str, tid: str, _subject: str) -> str:
        t = old_library.get(lang, tid)
        return answer_context(t.text) if t is not None else ""

    old = make_ledger(rows, entities, old_library, {}, Renderer(entities), legacy)
    new = make_ledger(rows, entities, new_library, {}, renderer, new_contexts)
    old_by = {(x.lang, x.template, x.qid, x.variant): x for x in old.lines}
    out: dict[str, list] = defaultdict(list)
    for x in new.lines:
        o = old_by.get((x.lang, x.template, x.qid, x.variant))
        old_key = (o.context, o.filler) if o is not None else None
        out[x.lang].append((old_key, (x.context, x.filler), x.role, f"{x.template} {x.qid}"))
    if subjects:
        cloze = table.filter(pc.equal(table["kind"], "cloze")).select(["lang", "template_id", "kind", "subject_qid"])
        srows = cloze.to_pylist()
        olds = subject_lines(srows, entities, old_library, {}, Renderer(entities), rendered=False)
        news = subject_lines(srows, entities, new_library, {}, renderer)
        seen: Counter = Counter()
        old_at = {}
        for x in olds:
            k = (x.lang, x.template, x.qid)
            old_at[(*k, seen[k])] = x
            seen[k] += 1
        seen.clear()
        for x in news:
            k = (x.lang, x.template, x.qid)
            o = old_at.get((*k, seen[k]))
            seen[k] += 1
            out[x.lang].append(((o.context, o.filler) if o else None, (x.context, x.filler), "subject",
                                f"{x.template} {x.qid}"))
    return out


def migrate(review: dict, pairs: list) -> tuple[dict, list, Counter]:
    """The new review (old lines kept, verdicts carried) and the lines to re-read, with counts."""
    new_review = dict(review)
    reread: dict[tuple[str, str], dict] = {}
    counts: Counter = Counter()
    kept = set()
    for old_key, new_key, role, example in pairs:
        if new_key in review:
            kept.add(new_key)
            continue
        entry = reread.setdefault(new_key, {"old": set(), "carried": "", "role": role, "example": example})
        if old_key is not None and old_key in review and old_key[1] == new_key[1]:
            verdict, note = review[old_key]
            entry["old"].add(old_key[0])
            if entry["carried"] != "wrong":
                entry["carried"] = verdict
                entry["note"] = note
        elif old_key is not None:
            entry["old"].add(old_key[0])
    for key, entry in reread.items():
        if entry["carried"]:
            counts["carried"] += 1
            note = "; ".join(n for n in (entry.get("note", ""), "context was: " + " / ".join(sorted(entry["old"])))
                             if n)
            new_review[key] = (entry["carried"], note)
        else:
            counts["unreviewed"] += 1
    counts["kept"] = len(kept)
    lines = [(" / ".join(sorted(e["old"])), k[0], k[1], e["carried"] or "unreviewed", e["role"], e["example"])
             for k, e in sorted(reread.items())]
    return new_review, lines, counts


def write_added(path: Path, review: dict, new_review: dict) -> None:
    """The review file as it was, line for line, with the new keys appended (sorted), so its diff shows
    only what the migration added."""
    from factatlas.atomic import write_text
    from factatlas.templates.ledger import REVIEW_FIELDS

    text = path.read_text("utf-8") if path.exists() else "\t".join(REVIEW_FIELDS) + "\n"
    if not text.endswith("\n"):
        text += "\n"
    added = sorted(k for k in new_review if k not in review)
    for ctx, filler in added:
        verdict, note = new_review[(ctx, filler)]
        if any("\t" in v or "\n" in v for v in (ctx, filler, note)):
            raise SystemExit(f"error: {path}: a review field holds a tab or newline: {(ctx, filler, note)!r}")
        text += "\t".join((ctx, filler, verdict, note)) + "\n"
    write_text(path, text)


def main(argv: list[str] | None = None) -> int:
    from factatlas.templates.ledger import load_review, read_review, review_dir
    from factatlas.templates.library import load_library

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories with curate/ and build/")
    parser.add_argument("--langs", required=True)
    parser.add_argument("--old-ref", help="git ref whose templates/lang/<lang>.yaml keyed the reviews")
    parser.add_argument("--old-templates", type=Path, help="or a folder of those <lang>.yaml files")
    parser.add_argument("--review-dir", type=Path, default=None, help="default: templates/review")
    parser.add_argument("--out", type=Path, required=True, help="folder for <lang>.tsv lists of lines to re-read")
    parser.add_argument("--no-subjects", action="store_true")
    parser.add_argument("--write", action="store_true", help="rewrite the review files")
    args = parser.parse_args(argv)
    langs = [x for x in args.langs.split(",") if x]
    folder = args.review_dir or review_dir()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.old_templates or old_templates(args.old_ref, langs, Path(tmp))
        old_library = load_library(langs=tuple(langs), root=str(root), validate=False)
        new_library = load_library(langs=tuple(langs))
        pairs: dict[str, list] = defaultdict(list)
        for run in args.runs:
            for lang, found in keys_of_run(run, langs, old_library, new_library, not args.no_subjects).items():
                pairs[lang].extend(found)
    args.out.mkdir(parents=True, exist_ok=True)
    print("lang  kept  carried  unreviewed  (lines to re-read: carried + unreviewed)")
    for lang in langs:
        path = folder / f"{lang}.tsv"
        review = read_review(path) if path.exists() else {}
        new_review, lines, counts = migrate(review, pairs[lang])
        (args.out / f"{lang}.tsv").write_text(
            "\t".join(REREAD_FIELDS) + "\n" + "".join("\t".join(x) + "\n" for x in lines), "utf-8")
        print(f"{lang:4} {counts['kept']:6} {counts['carried']:8} {counts['unreviewed']:11}")
        if args.write:
            write_added(path, review, new_review)
    load_review.cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
