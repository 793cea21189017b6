"""LLM-as-judge for open answers (X-FaKT's protocol): a judge model says whether a free answer names the gold.

String matching undercounts free answers («the capital is Cairo, Egypt», a transliteration, a
paraphrase) and lenient substring matching overcounts them; X-FaKT therefore let a judge model decide.
Here the judge is reported **beside** strict and lenient matching, never instead of them, with its
agreement with each (raw agreement and Cohen's kappa), so a reader sees how far the judge departs.

The protocol, fixed and versioned (``JUDGE_PROTOCOL``): one conversation per answered prompt, sent
through the judge model's own chat template (or an OpenAI-compatible server), greedy decoding, at most
a few new tokens. The user message gives the question as the probed model saw it, every gold form the
benchmark holds for that prompt (all valid objects, each language form), and the model's answer (first
line, as the matchers cut it); it asks for a one-word English reply. The reply is *parsed*, never
matched loosely: its first word, case-folded, must be ``yes`` or ``no``; anything else is counted as
``unparsable`` with the reply kept, and an unparsable judgement is never counted correct. An empty
answer names nothing: it is judged ``no`` without asking (counted as ``empty-answer``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.errors import FactatlasError
from factatlas.probe.chat import ChatBackend, Message
from factatlas.probe.generative import LanguageAliases, first_line, judge, prompt_text_for_generation
from factatlas.probe.rule import RULES
from factatlas.records import ProbeResult, Prompt

JUDGE_PROTOCOL = "factatlas-judge-v1"
JUDGE_SYSTEM = "You grade answers to factual questions. Reply with exactly one word: yes or no."
JUDGE_USER = (
    "Question: {question}\n"
    "Correct answer: {gold}\n"
    "Answer to grade: {answer}\n\n"
    "Does the answer to grade name the correct answer (the same entity, in any language, spelling or "
    "wording)? Reply yes or no."
)
JUDGE_MAX_NEW_TOKENS = 4
JUDGE_CONTEXT_FIX = "Use a judge (--judge) with a longer context."  # the protocol itself is fixed
MAX_GOLD_FORMS = 12  # keeps the judge prompt short for objects with many aliases

EMPTY_ANSWER = "empty-answer"
UNPARSABLE = "unparsable"
_FIRST_WORD = re.compile(r"[^\W\d_]+")


class JudgeError(FactatlasError):
    """The judge cannot run on these rankings (wrong rule, stale judgements)."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """One answered prompt, judged: one row of judgements.parquet (``tables.JUDGEMENTS_SCHEMA``)."""

    prompt_id: str
    lang: str
    split: str
    culture: str
    predicate: str
    answer: str  # the probed model's answer, first line (what strict and lenient matching saw)
    judge_model: str
    protocol: str
    verdict: bool | None  # None: the judge's reply could not be parsed
    reason: str  # "" | "unparsable" | "empty-answer"
    reply: str  # the judge's raw reply ("" when it was not asked)
    strict: bool  # exact match of a normalised alias of a valid object
    lenient: bool  # whole-word substring match of one

    @property
    def judged_correct(self) -> bool:
        return self.verdict is True


def open_answer_rule(scoring: str) -> bool:
    """Rules whose rows hold a free answer (generative, chat, X-FACTR), the only ones a judge can read."""
    rule = RULES.get(scoring)
    return rule is not None and rule.open_answer


def gold_text(prompt: Prompt) -> str:
    """Every gold form of the prompt, deduplicated in order, joined by ' / ' (at most MAX_GOLD_FORMS)."""
    forms: list[str] = []
    for per_gold in prompt.gold_forms:
        for form in per_gold:
            form = form.strip()
            if form and form not in forms:
                forms.append(form)
    return " / ".join(forms[:MAX_GOLD_FORMS])


def judge_conversation(prompt: Prompt, answer: str) -> list[Message]:
    """The fixed judge conversation for one answer (JUDGE_PROTOCOL)."""
    user = JUDGE_USER.format(question=prompt_text_for_generation(prompt), gold=gold_text(prompt), answer=answer)
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def parse_verdict(reply: str) -> bool | None:
    """True for a reply whose first word is 'yes', False for 'no', None for anything else."""
    match = _FIRST_WORD.search(reply.casefold())
    if match is None:
        return None
    return {"yes": True, "no": False}.get(match.group())


def judge_answers(backend: ChatBackend, rows: Sequence[ProbeResult], prompts: Mapping[str, Prompt],
                  aliases: Mapping[str, set[str]] | LanguageAliases, judge_model: str, counts: Counter | None = None,
                  chunk: int = 64, progress: Callable[[int], None] | None = None) -> list[Judgement]:
    """Judge every answer of ``rows`` (one open-answer rule's rankings) with ``backend``. ``aliases``: one
    index, or a ``LanguageAliases`` (the probe's ``--answer-langs``) seen from each prompt's language."""
    counts = counts if counts is not None else Counter()
    aliases = LanguageAliases.of(aliases)
    for r in rows:
        if not open_answer_rule(r.scoring):
            raise JudgeError(f"rankings of rule '{r.scoring}' hold no free answer to judge; judge the rankings "
                             "of a generative, chat or xfactr probe")
        if r.prompt_id not in prompts:
            raise JudgeError(f"rankings row {r.prompt_id}: not in the benchmark; were these rankings made on "
                             "another build? Probe again.")
    answers = [first_line(r.prediction) for r in rows]
    asked = [i for i, a in enumerate(answers) if a]
    replies: dict[int, str] = {}
    conversations = {i: judge_conversation(prompts[rows[i].prompt_id], answers[i]) for i in asked}
    check = getattr(backend, "check_context", None)
    if check is not None:  # every conversation, before the first is judged
        check([conversations[i] for i in asked])
    for start in range(0, len(asked), chunk):
        part = asked[start: start + chunk]
        for i, reply in zip(part, backend.chat([conversations[i] for i in part]), strict=True):
            replies[i] = reply.answer
        if progress:
            progress(len(part))
    out = []
    for i, (r, answer) in enumerate(zip(rows, answers, strict=True)):
        p = prompts[r.prompt_id]
        view = aliases.for_lang(p.lang)
        _, _, strict = judge(answer, p.candidate_qids, p.gold_qids, view, lenient=False)
        _, _, lenient = judge(answer, p.candidate_qids, p.gold_qids, view, lenient=True)
        if i in replies:
            verdict = parse_verdict(replies[i])
            reason = "" if verdict is not None else UNPARSABLE
        else:
            verdict, reason = False, EMPTY_ANSWER
        counts[f"judge/{reason or ('yes' if verdict else 'no')}"] += 1
        out.append(Judgement(r.prompt_id, p.lang, p.split, p.culture, p.predicate, answer, judge_model,
                             JUDGE_PROTOCOL, verdict, reason, replies.get(i, ""), strict, lenient))
    return out


# ---- agreement -------------------------------------------------------------------------------------

def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary raters: (p_o - p_e) / (1 - p_e).

    ``p_e = P(a)P(b) + (1-P(a))(1-P(b))``. When ``p_e == 1`` both raters gave one and the same label to
    every item: kappa is undefined (0/0) and None is returned, reported as such, not as 1 or 0.
    """
    if len(a) != len(b):
        raise ValueError(f"kappa needs paired ratings; got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e == 1:
        return None
    return (p_o - p_e) / (1 - p_e)


def _share(values: Iterable[bool]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def agreement(judged: Sequence[Judgement], matcher: str) -> dict[str, Any]:
    """Raw agreement and kappa of the judge with ``matcher`` ("strict" | "lenient") over parsed verdicts."""
    parsed = [j for j in judged if j.verdict is not None]
    judge_labels = [bool(j.verdict) for j in parsed]
    match_labels = [getattr(j, matcher) for j in parsed]
    raw = _share(x == y for x, y in zip(judge_labels, match_labels, strict=True))
    return {"n": len(parsed), "raw": raw, "kappa": cohen_kappa(judge_labels, match_labels),
            "judge_only": sum(x and not y for x, y in zip(judge_labels, match_labels, strict=True)),
            "matcher_only": sum(y and not x for x, y in zip(judge_labels, match_labels, strict=True))}


def _accuracies(judged: Sequence[Judgement]) -> dict[str, Any]:
    return {"n": len(judged), "judge": _share(j.judged_correct for j in judged),
            "strict": _share(j.strict for j in judged), "lenient": _share(j.lenient for j in judged)}


def judge_summary(judged: Sequence[Judgement]) -> dict[str, Any]:
    """metrics.json's ``judge`` section: accuracies beside strict and lenient, agreement, counts, per
    language and split. Accuracy divides by every row (unparsable counts as not correct); agreement is
    over the rows whose verdict parsed, and says how many."""
    reasons = Counter(j.reason for j in judged if j.reason)
    models = sorted({j.judge_model for j in judged})
    protocols = sorted({j.protocol for j in judged})
    return {
        "judge_model": models[0] if len(models) == 1 else models,
        "protocol": protocols[0] if len(protocols) == 1 else protocols,
        "rows": len(judged),
        "asked": sum(1 for j in judged if j.reason != EMPTY_ANSWER),
        "unparsable": reasons.get(UNPARSABLE, 0),
        "empty_answers": reasons.get(EMPTY_ANSWER, 0),
        "accuracy": _accuracies(judged),
        "agreement": {"strict": agreement(judged, "strict"), "lenient": agreement(judged, "lenient")},
        "by_lang": {lang: _accuracies([j for j in judged if j.lang == lang])
                    for lang in sorted({j.lang for j in judged})},
        "by_split": {split: _accuracies([j for j in judged if j.split == split])
                     for split in sorted({j.split for j in judged})},
    }


def check_current(judged: Sequence[Judgement], answers: Mapping[str, str], where: str) -> None:
    """Judgements must be of exactly these rankings' answers (prompt id -> prediction); else they are stale."""
    answers = {pid: first_line(a or "") for pid, a in answers.items()}
    stale = [j.prompt_id for j in judged if answers.get(j.prompt_id) != j.answer]
    if stale or len(judged) != len(answers):
        raise JudgeError(f"{where}: the judgements are not of the current rankings ({len(stale)} answers differ, "
                         f"{len(judged)} judgements for {len(answers)} rows); run `factatlas judge` again")


# ---- files -----------------------------------------------------------------------------------------

def write_judgements(path, judged: Sequence[Judgement]):
    from dataclasses import asdict

    from factatlas.tables import JUDGEMENTS_SCHEMA, write_table

    return write_table(path, [asdict(j) for j in judged], JUDGEMENTS_SCHEMA, sort_by=("prompt_id",))


def read_judgements(path) -> list[Judgement]:
    from factatlas.tables import JUDGEMENTS_SCHEMA, read_rows

    return [Judgement(**row) for row in read_rows(path, JUDGEMENTS_SCHEMA)]


# ---- the run ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class JudgeConfig:
    """The judge model (a local folder / Hub id of an instruction-tuned model, or the served model's name)
    and where it runs: a backend by name with its options (``factatlas.probe.backends``), the same options
    and declarations as the probe's."""

    judge: str
    backend: Any = None  # BackendSpec; None: local with its defaults

    def __post_init__(self) -> None:
        if self.backend is None:
            from factatlas.probe.backends import BackendSpec

            object.__setattr__(self, "backend", BackendSpec())

    @classmethod
    def from_flags(cls, judge: str, backend: str = "local", **flags: Any) -> JudgeConfig:
        """From command-line values by flag name (None: not given); an option of another backend is an error."""
        from factatlas.errors import ConfigError
        from factatlas.probe.backends import BACKENDS, BackendSpec
        from factatlas.probe.options import options_from_flags

        entry = BACKENDS.get_entry(backend)
        own = {o.name for o in entry.options.declared().values()}
        foreign = sorted(k for k, v in flags.items() if v is not None and k not in own)
        if foreign:
            raise ConfigError(f"{', '.join('--' + k.replace('_', '-') for k in foreign)}: not an option of --backend "
                              f"{backend} (its options: {', '.join(o.shown for o in entry.options.declared().values())})")
        return cls(judge, BackendSpec(entry.name, options_from_flags(entry.options, flags, f"--backend {backend}")))


@dataclass(frozen=True)
class JudgeOutcome:
    folder: Any  # Path of probe/<model>/
    judgements_path: Any
    summary: dict[str, Any]
    counts: dict[str, int]


def make_judge_backend(config: JudgeConfig, counts: Counter, run_dir=None) -> tuple[ChatBackend, Any]:
    """(backend, loaded model or None): the judge through its backend (in this process, or behind an
    OpenAI-compatible server whose answers are kept under ``<run_dir>/probe/_answers/`` as they arrive, when
    ``run_dir`` is given)."""
    spec = config.backend
    return spec.backend.judge_chat(config.judge, spec.options, counts, run_dir, JUDGE_MAX_NEW_TOKENS,
                                   JUDGE_CONTEXT_FIX)


def answer_aliases(by_lang: Mapping[str, Mapping[str, set[str]]], folder) -> LanguageAliases:
    """The matcher's aliases for a model folder: the languages its probe accepted (the rule spec probe.json
    records, ``answer_langs``, X-FACTR §3.4), so strict and lenient matching here agree with its
    ``correct_at_1``. A folder without probe.json matches in every language."""
    from pathlib import Path

    from factatlas.probe.model_folder import read_probe_info
    from factatlas.probe.rule import recorded_rule

    info = read_probe_info(Path(folder))
    mode = recorded_rule(info, str(Path(folder) / "probe.json")).answer_langs if info is not None else "any"
    return LanguageAliases(by_lang, mode)


def judge_run(run, model: str | None, config: JudgeConfig, backend: ChatBackend | None = None) -> list[JudgeOutcome]:
    """Judge the answers of every open-answer probe under ``<run>/probe/`` (or of ``model``): write
    judgements.parquet beside rankings.parquet and the ``judge`` section of metrics.json. Under the run
    lock, as probe and report: a probe swapping a model folder in meanwhile would leave judgements of
    rankings that are gone, and two writers of one metrics.json would lose a section."""
    from factatlas.probe.selection import open_benchmark
    from factatlas.rundir import RunDir

    bench, run_dir = open_benchmark(run)
    with RunDir(run_dir).lock():
        return _judge_locked(bench, Path(run_dir), model, config, backend)


def _judge_locked(bench, run_dir: Path, model: str | None, config: JudgeConfig,
                  backend: ChatBackend | None) -> list[JudgeOutcome]:
    import contextlib
    import json

    from factatlas.atomic import write_json
    from factatlas.console import progress
    from factatlas.probe.generative import alias_index_by_lang
    from factatlas.probe.model_folder import model_dirs
    from factatlas.probe.threads import torch_threads
    from factatlas.tables import read_probe_results

    todo, closed = [], []
    for folder in model_dirs(Path(run_dir), model):  # --model: a folder, or every folder of a probed model
        rows = read_probe_results(folder / "rankings.parquet")
        if rows and open_answer_rule(rows[0].scoring):
            todo.append((folder, rows))
        else:
            closed.append((folder, rows[0].scoring if rows else "none"))
    if not todo and model is not None:
        folder, rule = closed[0]
        raise JudgeError(f"{folder}/rankings.parquet: rule '{rule}' holds no free answer to judge; probe "
                         "with --scoring generative, chat or xfactr first")
    if not todo:
        raise JudgeError(f"{run_dir}/probe: no rankings of an open-answer rule (generative, chat, xfactr) to judge")
    prompts = bench.prompts_by_id
    for folder, rows in todo:  # before any model loads: rankings of another build are an input error
        foreign = [r.prompt_id for r in rows if r.prompt_id not in prompts]
        if foreign:
            raise JudgeError(f"{folder}/rankings.parquet: {len(foreign)} of {len(rows)} rows name prompts that "
                             f"{bench.path}/prompts.parquet lacks (first: {foreign[0]}); the rankings were made "
                             f"on another build: probe again (`factatlas probe {run_dir} --model ...`)")
    by_lang = alias_index_by_lang(bench.prompts, bench)
    # each folder's probe.json (its answer languages) read before the judge model loads: a damaged one is
    # refused at once, not after the load (36 s for a small model on CPU)
    aliases_of = {folder: answer_aliases(by_lang, folder) for folder, _rows in todo}
    counts: Counter = Counter()
    lm = None
    if backend is None:
        backend, lm = make_judge_backend(config, counts, run_dir)
    threads = torch_threads(lm.model, lm.device) if lm is not None else contextlib.nullcontext()
    outcomes = []
    with threads:
        for folder, rows in todo:
            folder_counts: Counter = Counter()
            with progress() as bar:
                task = bar.add_task(f"judge {folder.name}", total=sum(1 for r in rows if first_line(r.prediction)))
                judged = judge_answers(backend, rows, prompts, aliases_of[folder], config.judge, folder_counts,
                                       progress=lambda n, task=task: bar.advance(task, n))
            path = write_judgements(folder / "judgements.parquet", judged)
            summary = judge_summary(judged)
            metrics_path = folder / "metrics.json"
            if metrics_path.exists():
                metrics = json.loads(metrics_path.read_text("utf-8"))
                metrics["judge"] = summary
                write_json(metrics_path, metrics)
            counts.update(folder_counts)
            outcomes.append(JudgeOutcome(folder, path, summary, dict(folder_counts)))
    return outcomes
