"""A scoring rule is one unit: a rule registered from this test module (one file, one registration, no edit of
the runner, the command line, the settings or the judge) runs end to end through `factatlas probe` (its own
option generated on the command line), probe.json (its spec written and read back) and `factatlas report`.

The rule is small but real: it ranks the candidates by their length in characters (the longest or the
shortest first), a prior that knows no fact; its rankings are checked against the same order computed here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from factatlas.errors import ConfigError
from factatlas.probe.batching import token_budget_batches
from factatlas.probe.options import Option, Options
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.rule import RULES, Rule, RuleSpec, recorded_rule, register_rule
from factatlas.tables import RANKINGS_SCHEMA, read_rows
from tests.clirun import factatlas

PREFER = Option("--length-prefer", "shortest", "length: rank the shortest (or the longest) candidate first.",
                choices=("shortest", "longest"))


@dataclass(frozen=True)
class LengthOptions(Options):
    prefer: str = PREFER.field()


class LengthScorer:
    """Score = the candidate's length in characters (negated when the shortest should win)."""

    scoring = "length"

    def __init__(self, prefer: str):
        self.sign = 1 if prefer == "longest" else -1

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        return [tuple(float(self.sign * len(form)) for form in q.forms) for q in queries]


@pytest.fixture
def length_rule():
    rule = register_rule(Rule("length", "any", "rank", "the candidate's length in characters (a prior)",
                              options=LengthOptions, local=lambda lm, options, backend: LengthScorer(options.prefer)))
    yield rule
    RULES.unregister("length")


def _labelled(run_dir):
    """The capitals benchmark with the display label the report shows for its one predicate."""
    meta_path = run_dir / "build" / "benchmark.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "predicate_labels": {"P36": "capital"}}))
    return run_dir


def _expected_order(qids: Sequence[str], forms: Sequence[str], prefer: str) -> list[str]:
    sign = 1 if prefer == "longest" else -1
    return [q for _, _, q in sorted((-sign * len(f), i, q) for i, (q, f) in enumerate(zip(qids, forms, strict=True)))]


def test_a_rule_registered_here_runs_through_probe_probe_json_and_report(length_rule, run_dir, tiny_bert_dir,
                                                                         capitals_rows):
    assert "--length-prefer" in factatlas("probe", "--help").stdout
    _labelled(run_dir)
    done = factatlas("probe", run_dir, "--model", tiny_bert_dir, "--scoring", "length", "--length-prefer", "longest",
                     "--out-name", "toy")
    assert done.returncode == 0, done.stderr
    folder = run_dir / "probe" / "toy"
    info = json.loads((folder / "probe.json").read_text("utf-8"))
    assert info["rule"] == {"name": "length", "options": {"prefer": "longest"}, "family": "any", "kind": "rank",
                            "summary": "the candidate's length in characters (a prior)"}
    assert recorded_rule(info) == RuleSpec("length", LengthOptions("longest"))
    rows = read_rows(folder / "rankings.parquet", RANKINGS_SCHEMA)
    prompts = {r["prompt_id"]: r for r in capitals_rows}
    assert len(rows) == sum(1 for r in capitals_rows if r["kind"] == "cloze")
    for row in rows:
        p = prompts[row["prompt_id"]]
        assert list(row["ranked_qids"]) == _expected_order(p["candidate_qids"], p["candidate_forms"], "longest")
        assert row["scoring"] == "length" and row["correct_at_1"] == (row["ranked_qids"][0] in p["gold_qids"])
    reported = factatlas("report", run_dir, "--model", "toy", "--bootstrap", "50", "--no-plots")
    assert reported.returncode == 0, reported.stderr
    assert (folder / "report.html").is_file()
    metrics = json.loads((folder / "metrics.json").read_text("utf-8"))
    assert metrics["ranking"] is True
    # micro P@1 over every ranked prompt: the share whose longest candidate is a valid object
    right = sum(r["correct_at_1"] for r in rows) / len(rows)
    assert metrics["summary"]["overall"]["p@1_micro"] == pytest.approx(right)


def test_a_rule_option_is_refused_for_another_rule_and_gone_with_its_rule(length_rule, run_dir, tiny_bert_dir):
    wrong = factatlas("probe", run_dir, "--model", tiny_bert_dir, "--length-prefer", "longest")
    assert wrong.returncode == 2
    assert "--length-prefer: not an option of scoring rule 'mlm-independent' (its options: none)" in wrong.stderr
    bad = factatlas("probe", run_dir, "--model", tiny_bert_dir, "--scoring", "length", "--length-prefer", "middle")
    assert bad.returncode == 2 and "--length-prefer 'middle': expected one of shortest, longest" in bad.stderr
    RULES.unregister("length")
    assert "--length-prefer" not in factatlas("probe", "--help").stdout


# ---- probe.json written before the rule spec (main at 1b122dc): read by today's code ---------------------

MAIN = __import__("pathlib").Path(__file__).parent / "main_probe"


def test_probe_json_files_of_main_are_read_back_as_rule_specs():
    from factatlas.probe.model_folder import recorded_training_splits
    from factatlas.probe.options import NoOptions
    from factatlas.probe.xfactr import XFactrOptions

    xfactr = json.loads((MAIN / "xfactr" / "probe.json").read_text("utf-8"))
    assert "options" not in xfactr["rule"]  # the old layout: every option of every rule in one flat config
    assert recorded_rule(xfactr) == RuleSpec("xfactr", XFactrOptions(
        xfactr_beam=2, xfactr_max_masks=2, xfactr_max_masks_by_lang=(("fr", 1),), answer_langs="single"))
    assert recorded_rule(xfactr).answer_langs == "single"
    quickstart = json.loads((MAIN / "quickstart-tiny-bert.json").read_text("utf-8"))
    assert recorded_rule(quickstart) == RuleSpec("mlm-independent", NoOptions())
    assert recorded_training_splits(quickstart) == ["dev"]


def test_a_model_folder_written_by_main_is_judged_and_reported(run_dir):
    """The judge reads the answer languages of the old probe.json (single: French questions match only French
    forms), and the report reads its folder: both exit 0 on a folder main wrote."""
    import shutil

    from factatlas.probe.judge import JudgeConfig, judge_run
    from tests.probe.test_judge import SubstringJudge

    folder = _labelled(run_dir) / "probe" / "old-xfactr"
    shutil.copytree(MAIN / "xfactr", folder)
    rows = read_rows(folder / "rankings.parquet", RANKINGS_SCHEMA)
    (outcome,) = judge_run(run_dir, "old-xfactr", JudgeConfig("substr"), backend=SubstringJudge())
    judged = {j.prompt_id: j for j in __import__("factatlas.probe.judge", fromlist=["x"]).read_judgements(
        outcome.judgements_path)}
    assert len(judged) == len(rows) == 96
    assert all(judged[r["prompt_id"]].strict == r["correct_at_1"] for r in rows)  # the probe's own matcher
    reported = factatlas("report", run_dir, "--model", "old-xfactr", "--bootstrap", "20", "--no-plots")
    assert reported.returncode == 0, reported.stderr
    assert (folder / "report.html").is_file()


def test_a_rule_needs_a_scorer_factory_and_an_oldest_probe_json_names_its_rule_in_scoring():
    from factatlas.probe.options import NoOptions

    with pytest.raises(ValueError, match="rule 'nothing': no scorer factory"):
        Rule("nothing", "any", "rank", "scores nothing", options=NoOptions)
    # the oldest layout: no rule, no config; "scoring" is the rule, "+..." what ran beside it
    assert recorded_rule({"scoring": "mlm-independent"}) == RuleSpec("mlm-independent", NoOptions())
    assert recorded_rule({"scoring": "mlm-independent+template-only"}) == RuleSpec("mlm-independent", NoOptions())


def test_an_option_names_a_one_value_list_by_its_value_and_refuses_zero_where_it_must_be_positive():
    def no_french(value):
        raise ValueError("not a language this model reads")

    with pytest.raises(ConfigError, match=r"^--langs-read 'fr': not a language this model reads$"):
        Option("--langs-read", (), "languages", parse=no_french).validate(["fr"])
    timeout = Option("--request-timeout", 60.0, "seconds", cli_type=float, positive=True)
    assert timeout.validate(0.5) == 0.5
    with pytest.raises(ConfigError, match=r"^--request-timeout 0: must be more than 0$"):
        timeout.validate(0)


def test_any_positive_token_budget_is_taken_a_longer_prompt_gets_a_batch_of_its_own():
    from factatlas.probe.options import BATCH_TOKENS

    assert BATCH_TOKENS.validate(1) == 1 and token_budget_batches([3, 2], budget=1) == [[0], [1]]
    with pytest.raises(ConfigError, match=r"^--batch-tokens 0: must be at least 1$"):
        BATCH_TOKENS.validate(0)
