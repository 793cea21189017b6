"""Where a model runs, registered like the scoring rules: ``local`` (transformers in this process) and
``openai`` (an OpenAI-compatible server). A backend owns its typed options, tells the model's family before
the model loads (so the rule and every check that needs only the benchmark come first), opens the model
and makes the rule's scorer with it, and gives the judge its chat backend.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from factatlas.errors import ConfigError
from factatlas.probe.openai_backend import OpenAIOptions
from factatlas.probe.options import BATCH_TOKENS, DEVICE, DEVICE_MAP, DTYPE, FAMILY, PREFETCH, Options
from factatlas.probe.rule import RULES, RuleSpec
from factatlas.records import Prompt
from factatlas.registry import Registry, Spec


@dataclass(frozen=True)
class LocalOptions(Options):
    """The options of ``--backend local``: where and how transformers runs the model."""

    batch_tokens: int = BATCH_TOKENS.field()
    device: str = DEVICE.field()
    dtype: str = DTYPE.field()
    device_map: str | None = DEVICE_MAP.field()
    family: str | None = FAMILY.field()
    prefetch: bool | None = PREFETCH.field()  # None: on for an accelerator (ranking.prefetching)


@dataclass(frozen=True)
class Opened:
    """A model ready to score: the model (or its server's stand-in), the rule's scorer, the model name the
    rows record, and the tiny model's recipe when one was built here."""

    lm: Any
    scorer: Any
    model_name: str
    slug: str  # the model's own folder name (before the rule is appended)
    tiny_model: dict[str, Any] | None = None


@dataclass(frozen=True)
class OpenRequest:
    """What a backend needs to open a model for a probe."""

    model: str
    options: Any  # the backend's options
    spec: RuleSpec
    run_dir: Path
    prompts: Callable[[], Sequence[Prompt]]  # the benchmark's prompts (a tiny model is built from them)
    tiny_steps: int
    counts: Counter
    lm: Any = None  # a model already loaded (tests, Ray actors)


@dataclass(frozen=True)
class Backend:
    name: str
    summary: str
    options: type[Options]
    family: Callable[[str, Any], str]  # (model, options) -> its family, without loading it
    open: Callable[[OpenRequest], Opened]
    judge_chat: Callable[[str, Any, Counter, Path | None, int, str], tuple[Any, Any]]
    default_rule: str | None = None  # the rule when none is named (else the family's default)


BACKENDS: Registry[Backend] = Registry("backend")


def register_backend(backend: Backend) -> Backend:
    return BACKENDS.register(backend.name, backend)


def make_scorer(lm, spec: RuleSpec, options: LocalOptions):
    """The rule's scorer for a model loaded in this process (CandidateScorer or TextGenerator protocol)."""
    from factatlas.probe.rule import rule_for_family

    rule = rule_for_family(spec.name, lm.family)
    if rule.local is None:
        raise ConfigError(f"--scoring {spec.name}: the rule runs only behind a server (--backend openai)")
    try:
        return rule.local(lm, spec.options, options)
    except ValueError as e:  # a tokenizer the rule cannot use, a model without what the rule needs
        raise ConfigError(f"--scoring {spec.name} with model {lm.name}: {e}") from e


# ---- local -------------------------------------------------------------------------------------

TINY_ALIASES = {"tiny": "bert", "tiny-bert": "bert", "tiny-gpt2": "gpt2", "tiny-t5": "t5", "tiny-chat": "gpt2"}
TINY_FAMILIES = {"bert": "mlm", "gpt2": "causal", "t5": "seq2seq"}


def is_tiny(model: str) -> bool:
    """``tiny`` / ``tiny-*``: a model built on the spot from the benchmark (unless a folder has that name)."""
    return model.startswith("tiny") and not Path(model).exists()


def _local_family(model: str, options: LocalOptions) -> str:
    if options.family:
        return options.family
    if is_tiny(model):
        if model not in TINY_ALIASES:
            raise ConfigError(f"unknown tiny model '{model}'. Available: {', '.join(sorted(TINY_ALIASES))}")
        return TINY_FAMILIES[TINY_ALIASES[model]]
    from factatlas.probe.models import model_family

    return model_family(model)


def _open_local(req: OpenRequest) -> Opened:
    from factatlas.probe.models import load_model

    options: LocalOptions = req.options
    tiny_info: dict[str, Any] = {}
    lm = req.lm
    if lm is None:
        name = req.model
        if is_tiny(name):
            system = getattr(req.spec.options, "system_prompt", None)  # tiny-chat learns the chat form asked
            name, tiny_info = build_tiny(req.run_dir, req.prompts(), req.model, req.tiny_steps, system)
        lm = load_model(name, family=options.family, device=options.device, dtype=options.dtype,
                        device_map=options.device_map)
    model_name = req.model if tiny_info else lm.name
    slug = tiny_info["slug"] if tiny_info else lm.slug
    return Opened(lm, make_scorer(lm, req.spec, options), model_name, slug, tiny_info or None)


def _local_judge(judge: str, options: LocalOptions, counts: Counter, run_dir: Path | None, max_new_tokens: int,
                 context_fix: str):
    from factatlas.probe.chat import LocalChat
    from factatlas.probe.models import load_model

    lm = load_model(judge, device=options.device, dtype=options.dtype, device_map=options.device_map)
    if lm.family != "causal":
        raise ConfigError(f"--judge {judge}: a {lm.family} model; the judge must be an instruction-tuned "
                          "causal model with a chat template")
    return LocalChat(lm, max_new_tokens=max_new_tokens, batch_tokens=options.batch_tokens,
                     context_fix=context_fix), lm


def tiny_training_splits(present: Collection[str]) -> list[str]:
    """The split the tiny model learns its facts from: train, else dev; never test (the verdict's held-out
    split), and none when the benchmark has neither."""
    return [s for s in ("train", "dev") if s in present][:1]


def build_tiny(run_dir: Path, prompts: Sequence[Prompt], model: str, steps: int,
               system_prompt: str | None = None) -> tuple[str, dict[str, Any]]:
    """Build (or reuse) a tiny model trained on the benchmark's train split (else its dev split)."""
    from factatlas.atomic import write_json
    from factatlas.console import err
    from factatlas.probe.tiny import (
        TINY_CHAT_TEMPLATE,
        chat_examples,
        make_tiny_model,
        tokenizer_texts,
        true_fact_examples,
    )

    if model not in TINY_ALIASES:
        raise ConfigError(f"unknown tiny model '{model}'. Available: {', '.join(sorted(TINY_ALIASES))}")
    arch = TINY_ALIASES[model]
    train_splits = tiny_training_splits({p.split for p in prompts})
    examples = true_fact_examples(prompts, splits=train_splits) if train_splits else []
    chat = model == "tiny-chat"  # a GPT-2 with a chat template, also trained on chat-format questions
    name = "tiny-chat" if chat else f"tiny-{arch}"
    folder = run_dir / "probe" / "_models" / name
    texts = tokenizer_texts(prompts)
    if chat:
        asked = chat_examples(prompts, train_splits, system_prompt)
        examples += asked
        texts += [e.text for e in asked]
    recipe = {"arch": arch, "steps": steps, "train_splits": train_splits,
              "text_sha256": hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()}
    stamp = folder / "factatlas-tiny.json"
    if not stamp.exists() or json.loads(stamp.read_text("utf-8")) != recipe:  # reuse only an identical build
        err.print(f"building {name}: tokenizer on the benchmark text, {steps} fine-tuning "
                  f"steps on {len(examples)} true facts of split {train_splits or 'none'}")
        from factatlas.rundir import replace_folder

        with replace_folder(folder) as staging:  # whole or not at all: a full disk leaves no half model
            make_tiny_model(staging, arch, texts, examples=examples, steps=steps,
                            vocab_size=2000 if arch != "t5" else 1000,
                            chat_template=TINY_CHAT_TEMPLATE if chat else None)
            write_json(staging / stamp.name, recipe)
    info = {"arch": arch, "path": str(folder), "trained_on_splits": train_splits,
            "train_examples": len(examples), "steps": steps, "slug": name}
    return str(folder), info


register_backend(Backend("local", "transformers in this process", LocalOptions, _local_family, _open_local,
                         _local_judge))


# ---- openai ------------------------------------------------------------------------------------

def _open_openai(req: OpenRequest) -> Opened:
    """A server's model and the rule's remote scorer; HTTP retries land in the counts, answers are kept under
    ``<run>/probe/_answers/`` as they arrive (a rerun sends only what was never answered)."""
    from factatlas.probe.answer_store import AnswerStore, store_path
    from factatlas.probe.openai_backend import OpenAIClient, remote_model

    rule = req.spec.rule
    if rule.remote is None:
        served = sorted(name for name, r in RULES.items() if r.remote is not None)
        raise ConfigError(f"--backend openai: scoring rule '{rule.name}' is not served over HTTP; use one of "
                          f"{', '.join(served)}")
    options: OpenAIOptions = req.options
    endpoint = options.endpoint(req.model)
    lm = remote_model(req.model, endpoint, options.tokenizer, needs_tokenizer="tokenizer" in rule.needs)
    store = AnswerStore(store_path(req.run_dir, endpoint.model), stats=req.counts, stats_prefix="http/")
    client = OpenAIClient(endpoint, stats=req.counts, stats_prefix="http/", store=store)
    return Opened(lm, rule.remote(lm, req.spec.options, client), lm.name, lm.slug)


def _openai_judge(judge: str, options: OpenAIOptions, counts: Counter, run_dir: Path | None, max_new_tokens: int,
                  context_fix: str):
    from factatlas.probe.openai_backend import OpenAIChat, OpenAIClient

    endpoint = options.endpoint(judge)
    store = None
    if run_dir is not None:
        from factatlas.probe.answer_store import AnswerStore, store_path

        store = AnswerStore(store_path(run_dir, endpoint.model), stats=counts, stats_prefix="http/")
    client = OpenAIClient(endpoint, stats=counts, stats_prefix="http/", store=store)
    return OpenAIChat(client, max_new_tokens=max_new_tokens), None


register_backend(Backend("openai", "an OpenAI-compatible server: vLLM, llama.cpp, TGI, transformers serve, ...",
                         OpenAIOptions, lambda model, options: "causal", _open_openai, _openai_judge,
                         default_rule="chat"))


@dataclass(frozen=True)
class BackendSpec(Spec):
    """A backend by name and its options (probe.json records both)."""

    registry: ClassVar[Registry[Backend]] = BACKENDS
    default: ClassVar[str | None] = "local"

    name: str = "local"
    options: Options = LocalOptions()

    @property
    def backend(self) -> Backend:
        return self.entry
