"""Mutation sweep over the checkers and aggregates: every one must have a test that goes red without it.

For each mutant (an invariant rule switched off, an aggregation formula swapped, a verdict rule's failing
branch made to pass, a metric replaced by a constant) the script copies the checkout to a temporary
folder once, applies the one mutation there, runs only the test files that cover it, and restores the
file. A mutant whose tests stay green *survived*: the guarantee it stands for is not tested.

    python3 scripts/mutation_sweep.py                 # every mutant; exit 1 when any survives
    python3 scripts/mutation_sweep.py --list          # the mutants and their tests, nothing run
    python3 scripts/mutation_sweep.py --only invariant:answer-start --only aggregate:

Progress goes to stderr; the table of results to stdout. The checkout itself is never modified.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

INVARIANT_TESTS = ("tests/builder/test_invariants.py", "tests/builder/test_build.py",
                   "tests/builder/test_probe_report_gate.py", "tests/builder/test_validation_record.py")
AGGREGATE_TESTS = ("tests/probe/test_aggregate.py", "tests/probe/test_metrics.py",
                   "tests/probe/test_metrics_evaluate.py", "tests/probe/test_analysis_compare.py",
                   "tests/probe/test_analysis_dlama.py", "tests/probe/test_edges_and_filters.py")
VERDICT_TESTS = ("tests/probe/test_report.py", "tests/probe/test_validation.py",
                 "tests/probe/test_metrics_evaluate.py")
VERDICT_RULE_TESTS = ("tests/probe/test_verdict_coverage.py", "tests/probe/test_report.py::test_verdict_rules_on_metrics",
                      "tests/probe/test_report.py::test_verdict_thresholds_at_their_edges")


@dataclass(frozen=True)
class Mutant:
    name: str  # "<family>:<what>"
    path: str  # the file mutated, relative to the checkout
    mutate: Callable[[str], str]  # source -> mutated source; raises MutationError when its anchor is gone
    tests: tuple[str, ...]  # the test files (or node ids) that cover it
    first: tuple[str, ...] = ()  # the tests written to kill it, run alone first: most mutants die there in seconds


class MutationError(Exception):
    """A mutant's anchor is not in the source any more (the code moved): update the mutant."""


# ---- mutation primitives ------------------------------------------------------------------------

def replace_text(old: str, new: str) -> Callable[[str], str]:
    """Replace exactly one occurrence of ``old``."""
    def mutate(source: str) -> str:
        if source.count(old) != 1:
            raise MutationError(f"expected one occurrence of {old!r}, found {source.count(old)}")
        return source.replace(old, new)
    return mutate


def replace_statements(lines: Sequence[tuple[int, int, str]]) -> Callable[[str], str]:
    """Replace whole statements (1-based first and last line) by a one-line statement at their indent."""
    def mutate(source: str) -> str:
        text = source.splitlines(keepends=True)
        for first, last, stmt in sorted(lines, reverse=True):
            indent = text[first - 1][: len(text[first - 1]) - len(text[first - 1].lstrip())]
            text[first - 1:last] = [f"{indent}{stmt}\n"]
        return "".join(text)
    return mutate


def function_returns(name: str, expression: str) -> Callable[[str], str]:
    """The body of top-level function ``name`` becomes ``return <expression>`` (its docstring kept)."""
    def mutate(source: str) -> str:
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
                return replace_statements([(body[0].lineno, body[-1].end_lineno, f"return {expression}")])(source)
        raise MutationError(f"no top-level function {name}")
    return mutate


# ---- the mutants --------------------------------------------------------------------------------

def _rule_code(call: ast.Call) -> str | None:
    if not (isinstance(call.func, ast.Name) and call.func.id == "Violation" and call.args):
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    if isinstance(first, ast.JoinedStr):  # f"differs:{col}"
        return "".join(v.value if isinstance(v, ast.Constant) else "*" for v in first.values)
    return None


def invariant_mutants(path: str = "factatlas/invariants.py", tag: str = "") -> list[Mutant]:
    """One mutant per rule code: every statement that reports it is removed (``return [...]`` -> ``return []``).
    ``tag`` tells apart the codes of a second file (the checks of files on disk, ``factatlas/validation.py``)."""
    tree = ast.parse((REPO / path).read_text("utf-8"))
    sites: dict[str, list[tuple[int, int, str]]] = {}

    def visit(node: ast.AST, stmt: ast.stmt | None) -> None:
        for child in ast.iter_child_nodes(node):
            here = child if isinstance(child, ast.stmt) else stmt
            if isinstance(child, ast.Call) and (code := _rule_code(child)) is not None and stmt is not None:
                replacement = "return []" if isinstance(stmt, ast.Return) else "pass"
                entry = (stmt.lineno, stmt.end_lineno, replacement)
                if entry not in sites.setdefault(code, []):
                    sites[code].append(entry)
            visit(child, here)

    visit(tree, None)
    return [Mutant(f"invariant:{code}{tag}", path, replace_statements(lines), INVARIANT_TESTS)
            for code, lines in sorted(sites.items())]


def record_mutants(path: str = "factatlas/validation.py") -> list[Mutant]:
    """The gate's trust in the validation record: any record is believed, or a good one is ignored."""
    tests = ("tests/builder/test_validation_record.py", "tests/builder/test_probe_report_gate.py")
    return [Mutant("gate:any validation record holds", path, function_returns("record_holds", "True"), tests),
            Mutant("gate:the record is never trusted", path,
                   replace_text("    if record_holds(folder):\n", "    if False:\n"), tests)]


def aggregate_mutants() -> list[Mutant]:
    agg, met, cmp = "probe/aggregate.py", "probe/metrics.py", "probe/analysis/compare.py"
    swaps = [
        ("macro is the fact mean", met, "return float(pred_means.mean()), float(fact_values.mean())",
         "return float(fact_values.mean()), float(fact_values.mean())"),
        ("micro is the predicate mean", met, "return float(pred_means.mean()), float(fact_values.mean())",
         "return float(pred_means.mean()), float(pred_means.mean())"),
        ("micro is the prompt mean", agg, 'out[name], out[f"{name}_micro"] = M.macro_micro(fact_values, pinv)',
         'out[name], out[f"{name}_micro"] = M.macro_micro(fact_values, pinv)[0], float(self.values[idx, m].mean())'),
        ("a fact's value is the sum over its prompts", agg,
         "return np.bincount(fact_of_prompt, weights=values) / prompts_per_fact",
         "return np.bincount(fact_of_prompt, weights=values)"),
        ("a predicate's value is the sum over its facts", met,
         "pred_means = np.bincount(predicate_of_fact, weights=fact_values)[present] / counts[present]",
         "pred_means = np.bincount(predicate_of_fact, weights=fact_values)[present]"),
        ("P@k counts ranks below k", agg, "cols = [(ranked & (ranks <= k)).astype(np.float64) for k in ks]",
         "cols = [(ranked & (ranks < k)).astype(np.float64) for k in ks]"),
        ("MRR is hit rate", agg, "cols.append(np.where(ranked, 1.0 / np.maximum(ranks, 1), 0.0))",
         "cols.append(np.where(ranked, 1.0, 0.0))"),
        ("accuracy swaps micro and macro", agg, 's["p@1_micro"], s["p@1"])', 's["p@1"], s["p@1_micro"])'),
        ("p_at_1_with_ci swaps micro and macro", agg, '"macro": s["p@1"], "micro": s["p@1_micro"],',
         '"macro": s["p@1_micro"], "micro": s["p@1"],'),
        ("the held-out P@1 takes facts in the rankings' order", agg,
         "ordered = ScoredColumns.of(scored).sorted_by(\"fact_id\")", "ordered = ScoredColumns.of(scored)"),
        ("the held-out intervals are macro only", agg, 'averages=("macro", "micro"))', 'averages=("macro",))'),
        ("chance counts one gold", agg, "n_gold / len(candidates) if candidates else 0.0",
         "1 / len(candidates) if candidates else 0.0"),
        ("join keeps foreign rankings", agg,
         "if len(ranked) != len(candidates) or len(set(order)) != len(order) or -1 in order:", "if False:"),
        ("join keeps duplicate prompts", agg, "        if seen.repeated(pid):\n", "        if False:\n"),
        ("join ranks open answers", agg, "rank = 1 if row.correct_at_1 else None", "rank = M.gold_rank(ranked, golds)"),
        ("bootstrap swaps micro and macro", met, 'macro_statistic if average == "macro" else micro_statistic',
         'macro_statistic if average != "macro" else micro_statistic'),
        ("bootstrap resamples the whole set", met,
         "draws = rng.integers(0, len(values), size=(min(step, n_boot - start), len(values)), dtype=kind)",
         "draws = np.tile(np.arange(len(values)), (min(step, n_boot - start), 1))"),
        ("the interval is one-sided", met, "lo, hi = np.percentile(stats, [tail, 100 - tail])",
         "lo, hi = np.percentile(stats, [2 * tail, 100])"),
        ("the culture gap pools the sides' facts (micro)", cmp, "w, n = accuracy(sides[True]).macro, "
         "accuracy(sides[False]).macro", "w, n = accuracy(sides[True]).micro, accuracy(sides[False]).micro"),
        ("the culture gap's interval is macro over every stratum", cmp,
         "return (M.macro_statistic(sums[west_rows], sizes[west_rows])",
         "return (M.macro_statistic(sums, sizes)"),
        ("P@k: a rank counts at k - 1", met, "return 1.0 if rank is not None and rank <= k else 0.0",
         "return 1.0 if rank is not None and rank < k else 0.0"),
        ("ranks start at 0", met, "return None if best is None else best + 1", "return None if best is None else best"),
        ("the P@1 table's predicate row is the overall", "probe/evaluate.py",
         '            "all": _summarize(cols, idx, plain),', '            "all": _summarize(cols, np.arange(len(outcomes)), plain),'),
    ]
    held, cross, cmp = "probe/heldout.py", "probe/cross_lingual.py", "probe/analysis/compare.py"
    swaps += [
        ("the verdict's P@1 uses every split", held, "held = cols.where(np.isin(", "held = cols.where(np.ones(len(cols), dtype=bool) | np.isin("),
        ("the majority baseline is always right", held,
         "hit[rows] = any(g.qid == majority[pred] for g in golds)", "hit[rows] = True"),
        ("mParaRel macro is the best predicate", cross, "macro = {k: sum(v[k] for v in per_pred.values()) / len(per_pred)",
         "macro = {k: max(v[k] for v in per_pred.values())"),
        ("X-FaKT error rates swapped", cross, "mu_a, mu_n = sum(a_err) / len(a_err), sum(n_err) / len(n_err)",
         "mu_n, mu_a = sum(a_err) / len(a_err), sum(n_err) / len(n_err)"),
        ("cross-lingual means include the diagonal", cross,
         "values = [matrix[a][b] for i, a in enumerate(langs) for b in langs[i + 1:] if matrix[a][b] is not None]",
         "values = [matrix[a][b] for i, a in enumerate(langs) for b in langs[i:] if matrix[a][b] is not None]"),
        ("the culture gap's sign", cmp, "return Gap(model, w, n, w - n,", "return Gap(model, w, n, n - w,"),
    ]
    swaps += [
        ("mParaRel compares languages on every template", cross,
         "keep[rows] = template in shared.get(pred, ())", "keep[rows] = True"),
        ("the verdict's open answers keep P@k>1 and MRR", "probe/evaluate.py",
         'result["ranking"] = coverage["generative"] < coverage["used"]', 'result["ranking"] = True'),
    ]
    # the test written for a mutant, run alone first (the verdict family's files start with the slow report
    # tests: this mutant ran past 600 s there on a loaded box, while this test kills it in 4 s)
    first = {"the verdict's P@1 uses every split":
             ("tests/probe/test_validation.py::test_only_the_split_the_model_was_not_trained_on_validates",)}
    out = [Mutant(f"aggregate:{what}", path, replace_text(old, new),
                  VERDICT_TESTS if "verdict" in what or "majority" in what else AGGREGATE_TESTS,
                  first=first.get(what, ()))
           for what, path, old, new in swaps]
    # compare's default split: the report's held-out rule, applied to every model (issue 29)
    splits = "probe/analysis/splits.py"
    out += [Mutant(f"aggregate:{what}", splits, replace_text(old, new), ("tests/probe/test_analysis_cli.py",))
            for what, old, new in [
                ("compare reads every split", "        if split in keep:\n", "        if True:\n"),
                ("compare's held-out split is any model's", "held = set(mine) if held is None else held & set(mine)",
                 "held = set(mine) if held is None else held | set(mine)")]]
    constants = [("precision_at_k", "1.0"), ("reciprocal_rank", "1.0"), ("macro_mean", "0.0"), ("micro_mean", "0.0"),
                 ("gold_rank", "1"), ("coverlap", "1.0"), ("rankc", "1.0"), ("pararel_scores", "{}"),
                 ("xfakt_scores", "{}"), ("majority_baseline", "('', 0.0)")]
    out += [Mutant(f"aggregate:{fn} is constant", met, function_returns(fn, value), AGGREGATE_TESTS)
            for fn, value in constants]
    return out


ERRORS_TESTS = ("tests/probe/test_analysis_errors.py", "tests/probe/test_analysis_dlama.py")


def analysis_mutants() -> list[Mutant]:
    """The analyses' rules (issue 43): whose answer it is, micro vs macro in the context tasks, transfer and
    scale, and the typology lookup through the command."""
    err, dl, cli, ctx = ("probe/analysis/errors.py", "probe/analysis/dlama.py", "probe/analysis/cli.py",
                         "probe/xfakt_context.py")
    analysed = "[bench.facts_by_id[f] for f in sorted({r.fact_id for rs in by_model.values() for r in rs})]"
    swaps = [
        ("other culture needs both rules", err, "    if as_country and r.culture not in as_country:\n",
         "    if as_country and r.culture not in as_country and as_object and r.culture not in as_object:\n",
         ERRORS_TESTS),
        ("other culture by the object rule only", err, "    if as_country and r.culture not in as_country:\n",
         "    if False:\n", ERRORS_TESTS),
        ("other culture by the country rule only", err, "    if as_object and r.culture not in as_object:\n",
         "    if False:\n", ERRORS_TESTS),
        ("an answer shared with the own culture is the other's", err,
         "    if as_object and r.culture not in as_object:\n", "    if as_object:\n", ERRORS_TESTS),
        ("the fact's countries are not related", err, "    if top in r.countries:\n", "    if False:\n", ERRORS_TESTS),
        ("wrong entity and wrong type swapped", err, "    if shared:\n        return Verdict(WRONG_ENTITY",
         "    if not shared:\n        return Verdict(WRONG_ENTITY", ERRORS_TESTS),
        ("compare owns answers by the analysed prompts' facts", cli,
         "*error_sections(by_model, benchmark_context(bench), prompts=",
         "*error_sections(by_model, __import__('factatlas.probe.analysis.errors', fromlist=['E'])"
         f".context_from_facts({analysed}, {{}}), prompts=", ("tests/probe/test_analysis_errors.py",)),
        ("compare's DLAMA table owns answers by the analysed prompts' facts", cli,
         "owners = object_cultures(benchmark_facts(bench).values())", f"owners = object_cultures({analysed})",
         ("tests/probe/test_analysis_errors.py",)),
        ("DLAMA's owners skip augmented objects", dl, "        for q in f.object_qids:\n",
         "        for q in f.direct_objects:\n", ("tests/probe/test_analysis_dlama.py",)),
        ("X-FaKT context error rate is macro", ctx, "errors = {c.lang: 1.0 - c.correct_micro for c in cells",
         "errors = {c.lang: 1.0 - c.correct_macro for c in cells", ("tests/probe/test_xfakt_context.py",)),
        ("X-FaKT context groups count the all row", ctx,
         'if c.mode == mode and c.context_lang == "all" and c.lang != "all"}',
         'if c.mode == mode and c.context_lang == "all"}', ("tests/probe/test_xfakt_context.py",)),
        ("X-FaKT context groups mix the modes", ctx,
         'if c.mode == mode and c.context_lang == "all" and c.lang != "all"}',
         'if c.context_lang == "all" and c.lang != "all"}', ("tests/probe/test_xfakt_context.py",)),
        ("X-FaKT context cells swap micro and macro", ctx,
         "right.n_prompts, right.n_facts, right.micro, right.macro,",
         "right.n_prompts, right.n_facts, right.macro, right.micro,", ("tests/probe/test_xfakt_context.py",)),
        ("X-FaKT context: followed swaps micro and macro", ctx,
         "followed.micro if followed else None, followed.macro if followed else None",
         "followed.macro if followed else None, followed.micro if followed else None",
         ("tests/probe/test_xfakt_context.py",)),
        ("transfer is macro", "probe/analysis/locality.py",
         'out.append(Transfer(model, source, target, len(eligible), len(known), summary["p@1_micro"], lo, hi))',
         'out.append(Transfer(model, source, target, len(eligible), len(known), summary["p@1"], lo, hi))',
         ("tests/probe/test_analysis_locality.py",)),
        ("scale swaps micro and macro", "probe/analysis/scale.py", "acc.micro if acc else None,\n",
         "acc.macro if acc else None,\n", ("tests/probe/test_typology_scale.py",)),
        ("typology through the import system", "probe/analysis/typology.py",
         '        files = importlib.metadata.distribution("lang2vec").files or []',
         "        files = []", ("tests/probe/test_typology_scale.py",)),
    ]
    return [Mutant(f"analysis:{what}", path, replace_text(old, new), tests) for what, path, old, new, tests in swaps]


def threshold_mutants(path: str = "probe/verdict.py") -> list[Mutant]:
    """The verdict's thresholds at their edges (docs/metrics.md: "more than 5 %", "exceeds 3", "fewer than 2",
    "below 5 points") and the template-only gap rule."""
    swaps = [
        ("leakage fails at exactly the maximum", 'if v["share"] > MAX_LEAKAGE_SHARE}', 'if v["share"] >= MAX_LEAKAGE_SHARE}'),
        ("imbalance warns at exactly the maximum", 'e["imbalance"] > MAX_CULTURE_IMBALANCE]',
         'e["imbalance"] >= MAX_CULTURE_IMBALANCE]'),
        ("RankC needs one more language", "if len(langs) < MIN_LANGUAGES_FOR_RANKC:",
         "if len(langs) <= MIN_LANGUAGES_FOR_RANKC:"),
        ("the template-only gap fails at exactly the minimum", "    short = gap < MIN_TEMPLATE_ONLY_GAP - 1e-9",
         "    short = gap < MIN_TEMPLATE_ONLY_GAP + 1e-9"),
        ("no template-only gap rule", "    if short or not all(won.values()):", "    if not all(won.values()):"),
        ("the template-only gap is micro", 'gap = model["macro"] - base["macro"]', 'gap = model["micro"] - base["micro"]'),
    ]
    return [Mutant(f"verdict:threshold: {what}", path, replace_text(old, new), VERDICT_TESTS, first=VERDICT_RULE_TESTS)
            for what, old, new in swaps]


def gate_mutants(path: str = "templates/ledger.py") -> list[Mutant]:
    """The filler ledger's --check gate, seen by the tests through the product's function."""
    tests = ("tests/templates/test_filler_ledger.py",)
    first = ("tests/templates/test_filler_ledger.py::test_the_check_gate_by_hand",)
    return [Mutant(f"gate:{what}", path, replace_text(old, new), tests, first) for what, old, new in [
        ("a filler reviewed wrong passes", '            if s["wrong"] or s[UNREVIEWED]}', "            if s[UNREVIEWED]}"),
        ("an unreviewed filler passes", '            if s["wrong"] or s[UNREVIEWED]}', '            if s["wrong"]}'),
    ]]


def verdict_mutants(path: str = "probe/verdict.py") -> list[Mutant]:
    """Each failing or warning branch of a verdict rule (``return Check(name, FAIL|WARN, ...)``) passes."""
    source = (REPO / path).read_text("utf-8")
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("check_")):
            continue
        for ret in ast.walk(node):
            call = ret.value if isinstance(ret, ast.Return) else None
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Check"
                    and len(call.args) > 1 and isinstance(call.args[1], ast.Name) and call.args[1].id in ("FAIL", "WARN")):
                status = call.args[1]
                good = "PASS" if status.id == "FAIL" else "INFO"
                out.append(Mutant(f"verdict:{node.name} line {ret.lineno} {status.id} -> {good}", path,
                                  _rename_at(status.lineno, status.col_offset, status.id, good), VERDICT_TESTS,
                                  first=VERDICT_RULE_TESTS))
    return out


def _rename_at(line: int, col: int, old: str, new: str) -> Callable[[str], str]:
    def mutate(source: str) -> str:
        text = source.splitlines(keepends=True)
        row = text[line - 1]
        if row[col:col + len(old)] != old:
            raise MutationError(f"line {line}: expected {old!r} at column {col}")
        text[line - 1] = row[:col] + new + row[col + len(old):]
        return "".join(text)
    return mutate


CHOICES_TESTS = ("tests/probe/test_averages_in_every_table.py",)
EDGES_TESTS = ("tests/probe/test_edges_and_filters.py",)


def choice_mutants() -> list[Mutant]:
    """Every micro/macro choice in probe/ that a swap can change (issue 43: "more than listed here"). Left out
    as equivalent: a per-predicate row's micro vs macro (one predicate: the two are one number), and the
    plots' y values (no test reads PNG pixels; the tables beside them carry the same numbers)."""
    agg, dl, sec, rep, ver = ("probe/aggregate.py", "probe/analysis/dlama.py", "probe/analysis/sections.py",
                              "probe/report.py", "probe/verdict.py")
    swaps = [
        ("p_at_1_with_ci swaps the intervals", agg,
         '"ci": {"macro": s.get("ci", {}).get("p@1"), "micro": s.get("ci", {}).get("p@1_micro")}}',
         '"ci": {"macro": s.get("ci", {}).get("p@1_micro"), "micro": s.get("ci", {}).get("p@1")}}',
         ("tests/probe/test_aggregate.py", "tests/probe/test_validation.py")),
        ("a summary's interval keys name the other average", agg,
         'key = name if avg == "macro" else f"{name}_{avg}"', 'key = name if avg == "micro" else f"{name}_{avg}"',
         AGGREGATE_TESTS),
        ("DLAMA augmentation's all row is micro", dl,
         "sum(e.n_augmented_facts for e in out), before.macro,\n                                      after.macro))",
         "sum(e.n_augmented_facts for e in out), before.micro,\n                                      after.micro))",
         ("tests/probe/test_analysis_dlama.py",)),
        ("DLAMA equivalences' all row is micro", dl, "strict.n_facts, strict.macro, eq.macro,",
         "strict.n_facts, strict.micro, eq.micro,", ("tests/probe/test_analysis_dlama.py",)),
        ("compare's P@1 table swaps micro and macro", sec,
         "c.acc.n_facts, c.acc.n_prompts, c.acc.micro, c.acc.macro)\n                 for c in cells)",
         "c.acc.n_facts, c.acc.n_prompts, c.acc.macro, c.acc.micro)\n                 for c in cells)",
         ("tests/probe/test_analysis_compare.py", "tests/probe/test_analysis_cli.py")),
        ("the per-country table swaps micro and macro", sec, "c.lang, c.acc.n_facts, c.acc.micro,\n"
         "                         c.acc.macro))", "c.lang, c.acc.n_facts, c.acc.macro,\n                         c.acc.micro))",
         ("tests/probe/test_analysis_dlama.py", "tests/probe/test_analysis_cli.py")),
        ("the gold-length table swaps micro and macro", sec, "s.acc.n_prompts, s.acc.n_facts, s.acc.micro, s.acc.macro)",
         "s.acc.n_prompts, s.acc.n_facts, s.acc.macro, s.acc.micro)", ("tests/probe/test_analysis_cli.py",)),
        ("the scale table swaps micro and macro", sec, "p.parameters, p.p_at_1_micro, p.p_at_1_macro,",
         "p.parameters, p.p_at_1_macro, p.p_at_1_micro,", ("tests/probe/test_typology_scale.py",)),
        ("the local view swaps micro and macro", sec, "(acc.n_prompts, acc.n_facts, acc.micro, acc.macro)",
         "(acc.n_prompts, acc.n_facts, acc.macro, acc.micro)", ("tests/probe/test_analysis_locality.py",)),
        ("the popularity table swaps micro and macro", sec,
         "c.acc.n_facts, c.acc.n_prompts, c.acc.micro, c.acc.macro) for c in cells)",
         "c.acc.n_facts, c.acc.n_prompts, c.acc.macro, c.acc.micro) for c in cells)",
         ("tests/probe/test_analysis_popularity.py",)),
        ("the report's held-out table swaps micro and macro", rep,
         'rows.append((name, _num(x["macro"]), _ci_pair(x["ci"]["macro"]), _num(x["micro"]),\n'
         '                         _ci_pair(x["ci"]["micro"]),',
         'rows.append((name, _num(x["micro"]), _ci_pair(x["ci"]["micro"]), _num(x["macro"]),\n'
         '                         _ci_pair(x["ci"]["macro"]),', VERDICT_TESTS),
        ("the report's language table shows macro as micro", rep, '_ci(s, "p@1"), _num(s["p@1_micro"]),',
         '_ci(s, "p@1"), _num(s["p@1"]),', VERDICT_TESTS),
        ("the verdict's baselines are beaten on macro alone", ver,
         'model["ci"][avg][0] > baseline["ci"][avg][1])\n            for avg in ("macro", "micro")}',
         'model["ci"][avg][0] > baseline["ci"][avg][1])\n            for avg in ("macro", "macro")}', VERDICT_TESTS),
        ("X-FaKT context's table swaps micro and macro", "probe/xfakt_cli.py",
         "c.prompts, c.facts, c.correct_micro, c.correct_macro,", "c.prompts, c.facts, c.correct_macro, c.correct_micro,",
         ("tests/probe/test_xfakt_context.py",)),
        ("macro_mean is the micro mean", "probe/metrics.py", 'macro_micro(*_grouped(values_by_group, "macro_mean"))[0]',
         'macro_micro(*_grouped(values_by_group, "macro_mean"))[1]', AGGREGATE_TESTS),
        ("micro_mean is the macro mean", "probe/metrics.py", 'macro_micro(*_grouped(values_by_group, "micro_mean"))[1]',
         'macro_micro(*_grouped(values_by_group, "micro_mean"))[0]', AGGREGATE_TESTS),
    ]
    return [Mutant(f"choice:{what}", path, replace_text(old, new), tests, first=CHOICES_TESTS)
            for what, path, old, new, tests in swaps]


def edge_mutants() -> list[Mutant]:
    """``<``/``<=`` at rank ties and minimum counts, ``k``/``k + 1``, the split, language and culture filters."""
    met, agg, cross, held = "probe/metrics.py", "probe/aggregate.py", "probe/cross_lingual.py", "probe/heldout.py"
    swaps = [
        ("pessimistic ties: an equal score does not beat the gold", met,
         "if q not in gold and s >= best_score)", "if q not in gold and s > best_score)", AGGREGATE_TESTS),
        ("top ties counted on every ranking", agg, "row.scores[0] == row.scores[1]:", "row.scores[0] >= row.scores[1]:",
         AGGREGATE_TESTS),
        ("P@k counts rank k + 1", agg, "(ranked & (ranks <= k))", "(ranked & (ranks <= k + 1))", AGGREGATE_TESTS),
        ("precision_at_k counts rank k + 1", met, "rank is not None and rank <= k else 0.0",
         "rank is not None and rank <= k + 1 else 0.0", AGGREGATE_TESTS),
        ("mParaRel skips predicates with two templates", cross, "if len(t) < 2)", "if len(t) <= 2)", AGGREGATE_TESTS),
        ("mParaRel skips facts with two templates", cross, "if end - start < 2:", "if end - start <= 2:",
         AGGREGATE_TESTS),
        ("X-FaKT's Welch test needs three errors a side", met, "if len(errors_assoc) < 2 or len(errors_non) < 2:",
         "if len(errors_assoc) <= 2 or len(errors_non) <= 2:", AGGREGATE_TESTS),
        ("the held-out splits include the trained-on ones", held,
         "held = tuple(s for s in present if s not in set(trained_on))", "held = tuple(present)", VERDICT_TESTS),
        ("without a training split every split is held out", held, '    if "test" in present:\n', "    if False:\n",
         VERDICT_TESTS),
        ("chat shots come from every split but the shot split", "probe/chat.py",
         "p.split == config.shot_split and", "p.split != config.shot_split and", ("tests/probe/test_chat.py",)),
        ("the tiny model trains on the test split", "probe/backends.py", 'for s in ("train", "dev") if s in',
         'for s in ("test", "train", "dev") if s in', ("tests/probe/test_tiny_determinism.py",)),
        ("--langs keeps every language", "probe/selection.py", "return (not wanted or lang in wanted) and",
         "return True and", ("tests/probe/test_select_while_reading.py",)),
        ("X-FaKT context asks every language", "probe/xfakt_context.py",
         "if question_langs is not None and p.lang not in question_langs:", "if False:",
         ("tests/probe/test_xfakt_context.py",)),
        ("the culture gap's non-Western side includes the Western culture", "probe/analysis/compare.py",
         "False: results.where(~west)}", "False: results.where(west | ~west)}",
         ("tests/probe/test_analysis_compare.py",)),
        ("the P@1 table's culture rows hold every culture", "probe/analysis/compare.py",
         "_is(results, \"culture\", culture) & _is(results, \"lang\", lang))", "_is(results, \"lang\", lang))",
         ("tests/probe/test_analysis_compare.py",)),
        ("the P@1 table's language rows hold every language", "probe/analysis/compare.py",
         "_is(results, \"culture\", culture) & _is(results, \"lang\", lang))", "_is(results, \"culture\", culture))",
         ("tests/probe/test_analysis_compare.py",)),
    ]
    return [Mutant(f"edge:{what}", path, replace_text(old, new), tests, first=EDGES_TESTS)
            for what, path, old, new, tests in swaps]


def emptied_mutants() -> list[Mutant]:
    """Whole checkers emptied: each check of factatlas/invariants.py returns no violation, the filler ledger's
    gate fails nothing, the answer store keeps credentials."""
    inv = "factatlas/invariants.py"
    checks = [node.name for node in ast.parse((REPO / inv).read_text("utf-8")).body
              if isinstance(node, ast.FunctionDef) and "check" in node.name]
    out = [Mutant(f"emptied:invariants.{name} returns []", inv, function_returns(name, "[]"), INVARIANT_TESTS)
           for name in checks]
    out.append(Mutant("emptied:ledger.check_failures returns {}", "templates/ledger.py",
                      function_returns("check_failures", "{}"), ("tests/templates/test_filler_ledger.py",),
                      first=("tests/templates/test_filler_ledger.py::test_the_check_gate_by_hand",)))
    store, store_tests = "probe/answer_store.py", ("tests/probe/test_answer_store.py",)
    out += [Mutant("emptied:answer_store.scrub keeps every secret", store, function_returns("scrub", "value"),
                   store_tests),
            Mutant("emptied:answer_store.request_secrets finds none", store, function_returns("request_secrets", "()"),
                   store_tests)]
    return out


def rule_mutants() -> list[Mutant]:
    """The rules outside probe's tables that decide what a benchmark holds and how an answer is read (issue 43,
    "more than listed here"): the subject removed from its own candidates, life status, the answer matcher, the
    error taxonomy's subject rule and ownership over every fact, the gate's whole check."""
    cand, life, gen, err = ("builder/candidates.py", "curate/life.py", "probe/generative.py",
                            "probe/analysis/errors.py")
    subject_tests = ("tests/builder/test_subject_candidates.py",)
    life_tests = ("tests/curate/test_life.py",)
    matcher_tests = ("tests/probe/test_generative_xfactr.py", "tests/probe/test_judge.py",
                     "tests/probe/test_generative_metrics.py")
    first = {"matcher": ("tests/probe/test_generative_xfactr.py::test_normalise",
                         "tests/probe/test_generative_xfactr.py::test_judge_strict_and_lenient")}
    errors_tests = ("tests/probe/test_analysis_errors.py",)
    swaps = [
        ("subject:the subject stays among its own candidates", cand,
         'return tuple(q for q in candidates if q != subject), "subject"', 'return candidates, "subject"',
         subject_tests),
        ("subject:a subject that is a gold of its fact is removed too", cand, "    if subject in golds:\n",
         "    if False:\n", subject_tests),
        ("life:a place of death does not make a person dead", life, "    if any(True for _ in death_places):\n",
         "    if False:\n", life_tests),
        ("life:a birth exactly at the window's edge is not alive", life, "        if born >= limit:\n",
         "        if born > limit:\n", life_tests),
        ("life:the latest of several birth dates decides", life, "        born = min(dates)\n",
         "        born = max(dates)\n", life_tests),
        ("matcher:strict matching accepts an answer holding the alias", gen, "        return answer_norm == alias_norm\n",
         '        return f" {alias_norm} " in f" {answer_norm} "\n', matcher_tests),
        ("matcher:lenient matching accepts the alias inside a word", gen,
         '    return f" {alias_norm} " in f" {answer_norm} "\n', "    return alias_norm in answer_norm\n",
         matcher_tests),
        ("matcher:articles are kept by the normaliser", gen, "if w not in ARTICLES]", "if w]", matcher_tests),
        ("taxonomy:the subject as the top answer is not a subject error", err,
         "    if top is not None and top == r.subject:\n", "    if False:\n", errors_tests),
        ("taxonomy:an open answer naming the subject is not a subject error", err,
         'if open_answer and label and f" {label} " in f" {normalise(r.prediction)} ":',
         'if False and f" {label} " in f" {normalise(r.prediction)} ":', errors_tests),
        ("taxonomy:only a fact's first object has owners", err, "for q in dict.fromkeys(f.object_qids):",
         "for q in f.object_qids[:1]:", errors_tests),
        ("gate:require_valid finds no violation in the rows", "factatlas/validation.py",
         "    violations = check_directory(folder)\n", "    violations = []\n",
         ("tests/builder/test_probe_report_gate.py", "tests/builder/test_validation_record.py")),
    ]
    return [Mutant(what, path, replace_text(old, new), tests, first=first.get(what.split(":")[0], ()))
            for what, path, old, new, tests in swaps]


def all_mutants() -> list[Mutant]:
    return [*invariant_mutants(), *invariant_mutants("factatlas/validation.py", "@disk"), *record_mutants(),
            *aggregate_mutants(), *verdict_mutants(), *threshold_mutants(), *analysis_mutants(), *gate_mutants(),
            *choice_mutants(), *edge_mutants(), *emptied_mutants(), *rule_mutants()]


# ---- running ------------------------------------------------------------------------------------

IGNORED = shutil.ignore_patterns(".git", "runs", "__pycache__", ".pytest_cache", "*.egg-info", ".venv")


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str  # killed | survived | timeout | error
    seconds: float
    detail: str


def _existing(copy: Path, tests: Sequence[str]) -> list[str]:
    """The tests whose file is there (a mutant's killing test may not be written yet)."""
    return [t for t in tests if (copy / t.split("::")[0]).is_file()]


RUNNING: set[subprocess.Popen] = set()  # the pytest processes of the sweep's threads, ended when it is stopped


def _pytest(copy: Path, tests: Sequence[str], timeout: float) -> tuple[str, str]:
    """(killed | survived | timeout | error, detail) of one pytest process over ``tests`` in ``copy``. A run past
    ``timeout`` is no kill: nothing failed, the mutant is untested (a loaded box, or slow tests named first)."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    # one process: -x stops at the first failure, where starting xdist's workers would cost more than most
    # killed mutants take (about 5x on the 2-core box)
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", *tests]
    child = subprocess.Popen(cmd, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    RUNNING.add(child)
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return "timeout", f"tests ran past {timeout:.0f} s: untested, rerun it with a larger --timeout"
    finally:
        RUNNING.discard(child)
    done = subprocess.CompletedProcess(cmd, child.returncode, stdout, stderr)
    failed = [ln for ln in done.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    if done.returncode == 0:
        return "survived", "every test passed"
    if done.returncode in (1, 2) and failed:
        return "killed", failed[0]
    tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
    return "error", f"pytest exit {done.returncode}: {tail[0]}"


def run_mutant(copy: Path, mutant: Mutant, timeout: float) -> Outcome:
    """The mutant applied in ``copy``: its own killing tests first, then (when they pass) every covering file."""
    target = copy / mutant.path
    original = target.read_text("utf-8")
    start = time.monotonic()
    try:
        try:
            mutated = mutant.mutate(original)
            compile(mutated, str(target), "exec")
        except (MutationError, SyntaxError) as e:
            return Outcome(mutant, "error", 0.0, f"cannot apply: {e}")
        if mutated == original:
            return Outcome(mutant, "error", 0.0, "the mutation changes nothing")
        target.write_text(mutated, "utf-8")
        status, detail = "survived", "no test file is there"
        for tests in (_existing(copy, mutant.first), _existing(copy, mutant.tests)):
            if tests:
                status, detail = _pytest(copy, tests, timeout)
                if status != "survived":
                    break
        return Outcome(mutant, status, time.monotonic() - start, detail)
    finally:
        target.write_text(original, "utf-8")


def sweep(mutants: Sequence[Mutant], timeout: float, jobs: int = 1) -> Iterator[Outcome]:
    """Outcomes in the mutants' order; ``jobs`` copies of the checkout run one mutant each at a time."""
    from concurrent.futures import ThreadPoolExecutor
    from queue import Queue

    with tempfile.TemporaryDirectory(prefix="factatlas-mutants-") as tmp:
        copies: Queue[Path] = Queue()
        for j in range(max(1, jobs)):
            copy = Path(tmp) / str(j) / REPO.name
            shutil.copytree(REPO, copy, ignore=IGNORED)
            copies.put(copy)
        done = 0

        def one(mutant: Mutant) -> Outcome:
            nonlocal done
            copy = copies.get()
            try:
                outcome = run_mutant(copy, mutant, timeout)
            finally:
                copies.put(copy)
            done += 1
            print(f"[{done}/{len(mutants)}] {outcome.status:8} {mutant.name} ({outcome.seconds:.0f} s): {outcome.detail}",
                  file=sys.stderr, flush=True)  # the detail too, so a sweep stopped half way still says what killed
            return outcome

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            try:
                yield from pool.map(one, mutants)
            except BaseException:  # Ctrl-C or SIGTERM: no new mutant, the running tests ended, then the copies go
                pool.shutdown(wait=False, cancel_futures=True)
                for child in list(RUNNING):
                    child.kill()
                raise


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[], help="run the mutants whose name starts with this "
                                                                 "(repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and their tests; run nothing")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for one mutant's tests")
    ap.add_argument("--jobs", type=int, default=2, help="mutants tested at once, each in its own copy of the "
                                                          "checkout (2 on the 2-core box)")
    args = ap.parse_args(argv)
    # a SIGTERM unwinds like Ctrl-C, so the temporary copy is removed and the checkout stays untouched
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    mutants = [m for m in all_mutants() if not args.only or any(m.name.startswith(p) for p in args.only)]
    if not mutants:
        print(f"error: no mutant matches {args.only}", file=sys.stderr)
        return 2
    if args.list:
        broken = 0
        for m in mutants:
            try:
                m.mutate((REPO / m.path).read_text("utf-8"))
                note = ""
            except MutationError as e:
                note, broken = f"\tcannot apply: {e}", broken + 1
            print(f"{m.name}\t{m.path}\t{' '.join((*m.first, *m.tests))}{note}")
        return 1 if broken else 0
    outcomes = list(sweep(mutants, args.timeout, args.jobs))
    for o in outcomes:
        print(f"{o.status}\t{o.mutant.name}\t{o.detail}")
    counts = {s: sum(o.status == s for o in outcomes) for s in ("killed", "survived", "timeout", "error")}
    print(f"{len(outcomes)} mutants: {counts['killed']} killed, {counts['survived']} survived, "
          f"{counts['timeout']} ran past --timeout (untested), {counts['error']} could not be applied or run")
    return 0 if counts["survived"] == counts["timeout"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
