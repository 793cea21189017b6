"""LLM-as-judge: the fixed protocol, the yes/no parse, kappa, exact agreement on a known case, the CLI."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from typer.testing import CliRunner

from factatlas.probe.chat import Reply
from factatlas.probe.generative import alias_index
from factatlas.probe.judge import (
    JUDGE_PROTOCOL,
    JudgeError,
    check_current,
    cohen_kappa,
    judge_answers,
    judge_conversation,
    judge_summary,
    parse_verdict,
    read_judgements,
    write_judgements,
)
from factatlas.probe.runner import ranking_row
from factatlas.tables import JUDGEMENTS_SCHEMA, read_parquet
from tests.probe.probe_capitals import prompts_of, write_benchmark


class SubstringJudge:
    """A deterministic judge (a real ChatBackend): 'yes' iff a gold form occurs in the graded answer,
    'perhaps' (unparsable) for answers containing '??'. It reads only what the protocol sends."""

    def __init__(self):
        self.seen: list[list[dict]] = []

    def chat(self, conversations):
        replies = []
        for messages in conversations:
            self.seen.append(list(messages))
            user = messages[-1]["content"]
            gold = re.search(r"^Correct answer: (.*)$", user, re.M).group(1).split(" / ")
            answer = re.search(r"^Answer to grade: (.*)$", user, re.M).group(1)
            if "??" in answer:
                text = "perhaps"
            else:
                text = "Yes." if any(g.casefold() in answer.casefold() for g in gold) else "No"
            replies.append(Reply(text, tuple(messages), None))
        return replies


def _questions(rows, lang="en"):
    return [r for r in rows if r["kind"] == "question" and r["lang"] == lang]


@pytest.mark.parametrize(("reply", "verdict"), [
    ("Yes.", True), ("yes", True), ("  **YES**, it does", True), ("No", False), ("no, it is another city", False),
    ("Yesterday", None), ("I think yes", None), ("", None), ("42", None), ("Oui", None),
])
def test_parse_verdict_reads_the_first_word_only(reply, verdict):
    assert parse_verdict(reply) is verdict


def test_cohen_kappa_known_values():
    # 50 items: both yes 20, a yes b no 5, a no b yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = [True] * 25 + [False] * 25
    b = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)
    assert cohen_kappa([True, True, True], [True, True, True]) is None  # p_e = 1: undefined, not 1
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="paired"):
        cohen_kappa([True], [True, False])


def test_judge_conversation_is_the_fixed_protocol(capitals_rows):
    p = prompts_of(_questions(capitals_rows))[0]
    messages = judge_conversation(p, "Cairo, I believe")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == "You grade answers to factual questions. Reply with exactly one word: yes or no."
    assert messages[1]["content"] == (
        f"Question: {p.text}\nCorrect answer: {p.gold_forms[0][0]}\nAnswer to grade: Cairo, I believe\n\n"
        "Does the answer to grade name the correct answer (the same entity, in any language, spelling or "
        "wording)? Reply yes or no.")


def _answered(capitals_rows):
    """Six English questions with answers of every kind: exact, wordy, wrong, empty, unparsable, other case."""
    prompts = prompts_of(_questions(capitals_rows))[:6]
    wrong = {p.prompt_id: next(f for q, f in zip(p.candidate_qids, p.candidate_forms, strict=True)
                               if q not in p.gold_qids) for p in prompts}
    g = [p.gold_forms[0][0] for p in prompts]
    answers = [g[0], f"I think it is {g[1]} city", wrong[prompts[2].prompt_id], "", f"?? {g[4]} maybe",
               g[5].upper()]
    rows = [ranking_row(p, "m", "chat", [], [], False, a) for p, a in zip(prompts, answers, strict=True)]
    return prompts, rows


def test_exact_agreement_with_a_deterministic_judge(capitals_rows):
    prompts, rows = _answered(capitals_rows)
    backend = SubstringJudge()
    counts = Counter()
    judged = judge_answers(backend, rows, {p.prompt_id: p for p in prompts}, alias_index(prompts_of(capitals_rows)), "substr",
                           counts)
    assert len(backend.seen) == 5  # the empty answer is not sent
    assert [(j.verdict, j.reason, j.strict, j.lenient) for j in judged] == [
        (True, "", True, True),  # exact gold
        (True, "", False, True),  # wordy: only lenient and the judge accept it
        (False, "", False, False),  # another candidate
        (False, "empty-answer", False, False),  # judged no without asking
        (None, "unparsable", False, True),  # 'perhaps': kept, never correct
        (True, "", True, True),  # case differs: normalised
    ]
    assert [j.reply for j in judged] == ["Yes.", "Yes.", "No", "", "perhaps", "Yes."]
    assert counts == Counter({"judge/yes": 3, "judge/no": 1, "judge/empty-answer": 1, "judge/unparsable": 1})
    s = judge_summary(judged)
    assert (s["rows"], s["asked"], s["unparsable"], s["empty_answers"]) == (6, 5, 1, 1)
    assert s["accuracy"]["judge"] == pytest.approx(3 / 6)
    assert s["accuracy"]["strict"] == pytest.approx(2 / 6)
    assert s["accuracy"]["lenient"] == pytest.approx(4 / 6)
    # over the 5 parsed verdicts: judge (T,T,F,F,T); strict (T,F,F,F,T); lenient (T,T,F,F,T)
    strict, lenient = s["agreement"]["strict"], s["agreement"]["lenient"]
    assert (strict["n"], strict["raw"], strict["judge_only"], strict["matcher_only"]) == (5, 0.8, 1, 0)
    # p_o 0.8; P(judge yes) 0.6, P(strict yes) 0.4 -> p_e 0.24 + 0.24 = 0.48; kappa 0.32 / 0.52
    assert strict["kappa"] == pytest.approx(0.32 / 0.52)
    assert (lenient["raw"], lenient["kappa"]) == (1.0, 1.0)
    assert s["protocol"] == JUDGE_PROTOCOL and s["judge_model"] == "substr"


def test_judgements_table_round_trip_and_staleness(tmp_path, capitals_rows):
    prompts, rows = _answered(capitals_rows)
    judged = judge_answers(SubstringJudge(), rows, {p.prompt_id: p for p in prompts}, alias_index(prompts_of(capitals_rows)), "j")
    path = write_judgements(tmp_path / "judgements.parquet", judged)
    assert read_parquet(path).schema.equals(JUDGEMENTS_SCHEMA, check_metadata=False)
    assert read_judgements(path) == sorted(judged, key=lambda j: j.prompt_id)
    answers = {r.prompt_id: r.prediction for r in rows}
    check_current(judged, answers, "x")
    with pytest.raises(JudgeError, match="not of the current rankings .*run `factatlas judge` again"):
        check_current(judged, {**answers, rows[0].prompt_id: "Paris"}, "x")


def test_a_ranking_rule_has_nothing_to_judge(capitals_rows):
    prompts, rows = _answered(capitals_rows)
    ranked = [ranking_row(prompts[0], "m", "mlm-pll", ["Q1"], [0.0], False)]
    with pytest.raises(JudgeError, match="rule 'mlm-pll' hold no free answer to judge"):
        judge_answers(SubstringJudge(), ranked, {p.prompt_id: p for p in prompts}, {}, "j")


def test_cli_judge_with_a_tiny_chat_model_end_to_end(tmp_path, capitals_rows, tiny_chat_dir):
    """Probe with chat, judge with the (untrained-for-judging) tiny chat model, report: every answer judged,
    every unparsable reply counted and kept, the section on the report page."""
    from factatlas.app.cli import app

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    cli = CliRunner()
    probed = cli.invoke(app, ["probe", str(run), "--model", str(tiny_chat_dir), "--device", "cpu", "--scoring",
                              "chat", "--out-name", "c"])
    assert probed.exit_code == 0, probed.output
    judged = cli.invoke(app, ["judge", str(run), "--model", "c", "--judge", str(tiny_chat_dir), "--device", "cpu"])
    assert judged.exit_code == 0, judged.output
    folder = run / "probe" / "c"
    table = read_parquet(folder / "judgements.parquet")
    assert table.schema.equals(JUDGEMENTS_SCHEMA, check_metadata=False)
    rankings = read_parquet(folder / "rankings.parquet").to_pylist()
    rows = table.to_pylist()
    assert [r["prompt_id"] for r in rows] == [r["prompt_id"] for r in rankings]
    for r in rows:
        assert r["verdict"] is parse_verdict(r["reply"]) or r["reason"] == "empty-answer"
        assert (r["verdict"] is None) == (r["reason"] == "unparsable")
    summary = json.loads((folder / "metrics.json").read_text())["judge"]
    assert summary["rows"] == len(rankings)
    assert summary["unparsable"] == sum(r["reason"] == "unparsable" for r in rows)
    assert summary["accuracy"]["judge"] == pytest.approx(sum(r["verdict"] is True for r in rows) / len(rows))
    assert summary["accuracy"]["strict"] == pytest.approx(sum(r["correct_at_1"] for r in rankings) / len(rankings))
    assert f"accuracy  judge {summary['accuracy']['judge']:.3f}" in judged.output
    meta_path = run / "build" / "benchmark.json"  # the report names predicates by their display labels
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "predicate_labels": {"P36": "capital"}}))
    report = cli.invoke(app, ["report", str(run), "--model", "c", "--bootstrap", "0", "--no-plots"])
    assert report.exit_code == 0, report.output
    page = (folder / "report.html").read_text()
    assert "LLM-as-judge" in page and f"{summary['unparsable']} replies did not parse" in page
    # the verdict reads what an open-answer run can have: the question-only baseline, and the judge beside it
    checks = {c["name"]: c for c in json.loads((folder / "verdict.json").read_text())["checks"]}
    assert "question-only baseline" in checks and "template-only baseline" not in checks
    held = [r for r in rows if r["split"] == "test"]  # the tiny chat model was not trained on test
    share = sum(r["verdict"] is True for r in held) / len(held)
    assert checks["LLM-as-judge"]["status"] == "info"
    assert checks["LLM-as-judge"]["summary"].startswith(
        f"on the held-out split ({len(held)} answers), judge {tiny_chat_dir} counts {100 * share:.1f}% right")


def test_cli_judge_refuses_a_ranking_probe(tmp_path, capitals_rows, tiny_bert_dir):
    from factatlas.app.cli import app

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    cli = CliRunner()
    assert cli.invoke(app, ["probe", str(run), "--model", str(tiny_bert_dir), "--device", "cpu", "--out-name", "b",
                            "--no-template-only"]).exit_code == 0
    result = cli.invoke(app, ["judge", str(run), "--model", "b", "--judge", str(tiny_bert_dir)])
    assert result.exit_code != 0
    assert "rule 'mlm-independent' holds no free answer to judge" in str(result.exception)


@pytest.mark.parametrize("layout", ["spec", "flat"])
@pytest.mark.parametrize(("mode", "strict_right"), [("any", 24), ("single", 12), ("double", 24), (None, 24)])
def test_matcher_uses_the_probes_answer_languages(tmp_path, capitals_rows, mode, strict_right, layout):
    """French questions answered with the English name: the matcher beside the judge accepts them as the
    probe did (X-FACTR §3.4): only the 12 capitals spelt alike under single, all 24 under double or any;
    a folder without probe.json (None) matches in every language. ``spec``: probe.json records the rule
    with its options; ``flat``: as probe.json files before, every option in one flat ``config``."""
    import json

    from factatlas.probe.generative import alias_index_by_lang
    from factatlas.probe.judge import answer_aliases
    from tests.probe.probe_capitals import CAPITALS

    prompts = prompts_of(_questions(capitals_rows, "fr"))
    english = {c[4]: c[5] for c in CAPITALS}
    rows = [ranking_row(p, "m", "chat", [], [], False, english[p.gold_qids[0]]) for p in prompts]
    if mode is not None:
        info = ({"rule": {"name": "chat", "options": {"answer_langs": mode}}} if layout == "spec" else
                {"rule": {"name": "chat", "family": "any", "kind": "generate"}, "scoring": "chat",
                 "config": {"model": "m", "scoring": "chat", "answer_langs": mode, "xfactr_beam": 1}})
        (tmp_path / "probe.json").write_text(json.dumps(info), "utf-8")
    aliases = answer_aliases(alias_index_by_lang(prompts_of(capitals_rows)), tmp_path)
    judged = judge_answers(SubstringJudge(), rows, {p.prompt_id: p for p in prompts}, aliases, "substr")
    assert (len(judged), sum(j.strict for j in judged), sum(j.lenient for j in judged)) == (24, strict_right,
                                                                                           strict_right)


LOCK_HOLDER = ("import sys, time\nfrom pathlib import Path\nfrom factatlas.rundir import RunDir\n"
               "with RunDir(Path(sys.argv[1])).lock():\n    print('locked', flush=True)\n    time.sleep(60)\n")


def test_judge_and_report_wait_for_no_one_while_another_process_writes_the_run(tmp_path, capitals_rows):
    """judge and report write into a model folder that probe swaps in whole: all three take the run lock.
    With another process holding it, neither writes a byte; once it is gone, judge writes."""
    import subprocess
    import sys

    from factatlas.probe.judge import JudgeConfig, judge_run
    from factatlas.probe.report import write_report
    from factatlas.rundir import LockHeld
    from factatlas.tables import write_probe_results

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    meta_path = run / "build" / "benchmark.json"  # the report names predicates by their display labels
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "predicate_labels": {"P36": "capital"}}))
    folder = run / "probe" / "m"
    folder.mkdir(parents=True)
    write_probe_results(folder / "rankings.parquet", _answered(capitals_rows)[1])
    before = sorted(p.name for p in folder.iterdir())
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockHeld, match=rf"another factatlas process \(pid {holder.pid}\) holds run directory"):
            judge_run(run, "m", JudgeConfig("substr"), backend=SubstringJudge())
        with pytest.raises(LockHeld, match=rf"another factatlas process \(pid {holder.pid}\) holds run directory"):
            write_report(run, "m")
        assert sorted(p.name for p in folder.iterdir()) == before
    finally:
        holder.kill()
        holder.wait()
    (outcome,) = judge_run(run, "m", JudgeConfig("substr"), backend=SubstringJudge())
    assert outcome.judgements_path.is_file() and outcome.summary["rows"] == 6


def test_a_damaged_probe_json_is_refused_before_the_judge_model_loads(tmp_path, capitals_rows, monkeypatch):
    """Each folder's probe.json (its answer languages) is read before the judge model is made: a damaged one
    was refused only after the load (36 s for a small model on CPU)."""
    import factatlas.probe.judge as judge
    from factatlas.errors import FactatlasError
    from factatlas.tables import write_probe_results

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    folder = run / "probe" / "m"
    folder.mkdir(parents=True)
    write_probe_results(folder / "rankings.parquet", _answered(capitals_rows)[1])
    (folder / "probe.json").write_text("[1]", "utf-8")

    def loads_a_model(*_args, **_kwargs):
        raise AssertionError("the judge model was made before probe.json was read")

    monkeypatch.setattr(judge, "make_judge_backend", loads_a_model)
    with pytest.raises(FactatlasError, match=r"probe\.json: expected a JSON object, found list"):
        judge.judge_run(run, "m", judge.JudgeConfig("substr"))


def test_judge_backend_options_are_checked_against_the_backend_named():
    from factatlas.errors import ConfigError
    from factatlas.probe.judge import JudgeConfig

    with pytest.raises(ConfigError, match=r"^--api-base: not an option of --backend local \(its options: "
                                          r"--batch-tokens, --device, "):
        JudgeConfig.from_flags("j", backend="local", api_base="http://127.0.0.1:1/v1", device=None)
    remote = JudgeConfig.from_flags("j", backend="openai", api_base="http://127.0.0.1:1/v1", concurrency=2)
    assert (remote.backend.name, remote.backend.options.api_base, remote.backend.options.concurrency) == (
        "openai", "http://127.0.0.1:1/v1", 2)
    assert JudgeConfig("j").backend.name == "local"  # no backend named: the local one with its defaults
