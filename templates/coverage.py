"""The coverage matrix: languages x predicates, cloze paraphrase counts, question form, draft status."""

from __future__ import annotations

from factatlas.templates.library import Library
from factatlas.templates.predicates import PREDICATES


def coverage_cells(lib: Library) -> dict[tuple[str, str], dict]:
    """(lang, predicate) -> {"cloze": n, "question": bool, "draft": n, "canonical": bool}."""
    cells = {}
    for lang in lib.languages:
        for pid in PREDICATES:
            ts = lib.templates(lang, pid)
            cells[(lang, pid)] = {
                "cloze": sum(t.kind == "cloze" for t in ts),
                "question": any(t.kind == "question" for t in ts),
                "draft": sum(t.status == "draft" for t in ts),
                "canonical": any(t.id == f"{pid}/1" for t in ts),
            }
    return cells


def coverage_table(lib: Library, minimum: int = 2) -> str:
    """Cell: '<cloze count>' + 'q' if a question exists + '*' if any template is a draft; '-' when empty.
    A row ends with its status: ok (every predicate has P/1, a question and >= minimum paraphrases)."""
    cells = coverage_cells(lib)
    pids = list(PREDICATES)
    lines = ["lang  " + " ".join(f"{p:>6}" for p in pids) + "  status"]
    for lang in lib.languages:
        row, gaps = [], []
        for pid in pids:
            c = cells[(lang, pid)]
            text = "-" if not c["cloze"] and not c["question"] else f"{c['cloze']}{'q' if c['question'] else ''}"
            text += "*" if c["draft"] else ""
            row.append(f"{text:>6}")
            if not c["canonical"] or not c["question"] or c["cloze"] < minimum:
                gaps.append(pid)
        status = "ok" if not gaps else f"gaps: {','.join(gaps)}"
        lines.append(f"{lang:<5} " + " ".join(row) + f"  {status}")
    lines.append(f"cell = cloze paraphrases, q = question form, * = has drafts; ok = {pids[0]}/1-style canonical "
                 f"template, a question and >= {minimum} paraphrases for every predicate")
    lines.append(summary_line(cells, lib.languages, pids))
    return "\n".join(lines)


def summary_line(cells: dict, langs, pids) -> str:
    """The issue's minima at a glance: fewest paraphrases per language, languages complete."""
    fewest = {lang: min(cells[(lang, p)]["cloze"] for p in pids) for lang in langs}
    complete = [lang for lang in langs if all(cells[(lang, p)]["canonical"] and cells[(lang, p)]["question"]
                                              for p in pids)]
    parts = ", ".join(f"{lang} {n}" for lang, n in fewest.items())
    return (f"{len(complete)}/{len(langs)} languages have P/1 and a question for all {len(pids)} predicates; "
            f"fewest cloze paraphrases per predicate: {parts}")
