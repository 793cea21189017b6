"""Translation bootstrap (mParaRel's method): several MT systems, keep what at least two agree on.

`factatlas templates translate --from en --to sw --backend googletrans --backend mypkg.mt:Other`
1. each source template becomes plain text with sentinels ``[X]``/``[Y]`` (features and agreement
   groups cannot be translated: the English form is used);
2. every backend translates every text (answers cached on disk per backend and language pair);
3. placeholders are repaired (``[x]``, ``[ X ]``, ``［Ｘ］``, ``(X)``, ``[Х]`` in Cyrillic, transliterations
   such as ``[엑스]``) and checked: ``[X]`` at least once, ``[Y]`` exactly once in a cloze, never in a question;
4. a translation is kept when at least ``min_votes`` systems agree after normalisation (Unicode NFKC,
   case, spacing, final punctuation); it is written as ``status: draft``, ``source: mt:<a>+<b>``.
A translation identical to the source text (a service that echoes what it cannot translate) does not
vote. Every template that is not kept is reported with its reason (``placeholder-lost``,
``no-agreement``, ``untranslated``, ``backend-error``; any exception a service raises, such as
``httpx.ConnectError`` without a network, is a backend error of that service, not a crash).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from factatlas.atomic import write_json
from factatlas.errors import ConfigError, FactatlasError, unknown
from factatlas.templates.library import Template
from factatlas.templates.syntax import Group, Slot, Text, parse


@runtime_checkable
class TranslationBackend(Protocol):
    name: str

    def translate(self, texts: Sequence[str], src: str, dst: str) -> list[str]: ...


class GoogletransBackend:
    """googletrans 4 (async client; needs the internet)."""

    name = "googletrans"

    def __init__(self, timeout: float = 30.0):
        self.timeout = timeout
        if importlib.util.find_spec("googletrans") is None:
            raise ConfigError("backend googletrans needs the optional package googletrans; install it with "
                              "pip install 'factatlas[translate]'")

    def translate(self, texts: Sequence[str], src: str, dst: str) -> list[str]:
        from googletrans import Translator

        async def run() -> list[str]:
            async with Translator() as translator:
                results = await translator.translate(list(texts), src=src, dest=dst)
                return [r.text for r in (results if isinstance(results, list) else [results])]

        return asyncio.run(run())


class DeepTranslatorBackend:
    """deep-translator's web translators (optional dependency `deep-translator`): google, mymemory, ..."""

    def __init__(self, service: str = "mymemory"):
        self.service = service
        self.name = f"deep-{service}"

    def translate(self, texts: Sequence[str], src: str, dst: str) -> list[str]:
        try:
            module = importlib.import_module("deep_translator")
        except ImportError as e:
            raise ConfigError("backend deep-* needs the optional package deep-translator; install it with "
                              "pip install deep-translator") from e
        cls = {"google": "GoogleTranslator", "mymemory": "MyMemoryTranslator",
               "linguee": "LingueeTranslator"}.get(self.service)
        if cls is None:
            raise ConfigError(unknown("deep-translator service", self.service, ("google", "mymemory", "linguee")))
        translator = getattr(module, cls)(source=src, target=dst)
        return [translator.translate(t) for t in texts]


BACKENDS = {"googletrans": GoogletransBackend, "deep-google": lambda: DeepTranslatorBackend("google"),
            "deep-mymemory": lambda: DeepTranslatorBackend("mymemory")}


def make_translator(spec: str) -> TranslationBackend:
    """A backend by name (googletrans, deep-google, deep-mymemory) or import path 'package.module:Class'."""
    if spec in BACKENDS:
        return BACKENDS[spec]()
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as e:
            raise ConfigError(f"cannot import translation backend '{spec}': {e}") from e
        backend = obj() if isinstance(obj, type) or callable(obj) else obj
        if not isinstance(backend, TranslationBackend):
            raise ConfigError(f"'{spec}' does not implement translate(texts, src, dst) and a name")
        return backend
    raise ConfigError(unknown("translation backend", spec, BACKENDS) + " (or give 'package.module:Class')")


class CachedTranslator:
    """Wraps a backend with an on-disk cache: ``<dir>/<backend>/<src>-<dst>.json`` (text -> translation)."""

    def __init__(self, backend: TranslationBackend, cache_dir: str | os.PathLike):
        self.backend, self.name = backend, backend.name
        self.cache_dir = Path(cache_dir)
        self.calls = 0  # texts sent to the backend (not answered from the cache)

    def _path(self, src: str, dst: str) -> Path:
        return self.cache_dir / re.sub(r"[^A-Za-z0-9_.-]", "_", self.name) / f"{src}-{dst}.json"

    def translate(self, texts: Sequence[str], src: str, dst: str) -> list[str]:
        path = self._path(src, dst)
        cache: dict[str, str] = json.loads(path.read_text("utf-8")) if path.is_file() else {}
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            self.calls += len(missing)
            answers = self.backend.translate(missing, src, dst)
            if len(answers) != len(missing):
                raise FactatlasError(f"{self.name} returned {len(answers)} translations for {len(missing)} texts")
            cache.update(zip(missing, answers, strict=True))
            write_json(path, cache)
        return [cache[t] for t in texts]


# ---- placeholders ------------------------------------------------------------------------------

_OPEN, _CLOSE = r"[\[［【〔（(<«「]", r"[\]］】〕）)>»」]"
_X_VARIANTS = ["X", "x", "Х", "х", "Χ", "χ", "Ｘ", "ｘ", "엑스", "エックス", "إكس", "اكس", "एक्स", "ИКС", "икс"]
_Y_VARIANTS = ["Y", "y", "У", "у", "Υ", "υ", "Ｙ", "ｙ", "와이", "ワイ", "واي", "वाई", "ИГРЕК", "игрек"]


def _variant_re(variants: Sequence[str]) -> re.Pattern:
    alternatives = "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))
    return re.compile(rf"{_OPEN}\s*(?:{alternatives})\s*{_CLOSE}")


_X_RE, _Y_RE = _variant_re(_X_VARIANTS), _variant_re(_Y_VARIANTS)


def to_source_text(template: Template) -> str:
    """The template as translatable text: slots become bare [X]/[Y], agreement groups their neutral form."""
    out = []
    for node in parse(template.text).nodes:
        if isinstance(node, Text):
            out.append(node.value)
        elif isinstance(node, Slot):
            out.append(f"[{node.name}]")
        elif isinstance(node, Group):
            form = node.form("other")
            out.append(form if form is not None else node.options[0].form)
    return re.sub(r"\s{2,}", " ", "".join(out)).strip()


def repair_placeholders(text: str) -> str:
    """Map the ways MT systems mangle [X]/[Y] back to the sentinels."""
    text = unicodedata.normalize("NFC", text)
    text = _X_RE.sub("[X]", text)
    return _Y_RE.sub("[Y]", text)


def placeholder_problem(text: str, kind: str) -> str | None:
    xs, ys = text.count("[X]"), text.count("[Y]")
    if xs < 1:
        return "[X] lost"
    if kind == "cloze" and ys != 1:
        return f"[Y] occurs {ys} times"
    if kind == "question" and ys:
        return "[Y] appeared in a question"
    rest = text.replace("[X]", "").replace("[Y]", "")
    if re.search(r"[\[\]{}]", rest):
        return "stray bracket"
    return None


def normalise(text: str) -> str:
    """Comparison key for voting: NFKC, casefold, single spaces, no final punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"\s+", " ", text).strip()
    return text.rstrip(" .。!?！？؟।")


@dataclass(frozen=True, slots=True)
class Vote:
    text: str | None
    voters: tuple[str, ...]
    reason: str = ""  # why nothing was kept
    candidates: Mapping[str, str] = field(default_factory=dict)


def vote(candidates: Mapping[str, str], kind: str, min_votes: int = 2, source: str | None = None) -> Vote:
    """Keep the translation most systems agree on (at least ``min_votes``); candidates in backend order.
    A candidate equal to ``source`` (after normalisation) was not translated and does not vote."""
    groups: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    problems = []
    untranslated = []
    for system, raw in candidates.items():
        fixed = repair_placeholders(raw)
        if source is not None and normalise(fixed) == normalise(source):
            untranslated.append(system)
            continue
        problem = placeholder_problem(fixed, kind)
        if problem:
            problems.append(f"{system}: {problem}")
            continue
        key = normalise(fixed)
        groups.setdefault(key, []).append(system)
        texts.setdefault(key, fixed)
    if not groups and untranslated and not problems:
        return Vote(None, (), f"untranslated: {', '.join(untranslated)} returned the source text unchanged",
                    dict(candidates))
    if not groups:
        return Vote(None, (), "placeholder-lost: " + "; ".join(problems), dict(candidates))
    best = max(groups, key=lambda k: len(groups[k]))  # max keeps the first among equals: backend order
    if len(groups[best]) < min_votes:
        return Vote(None, (), f"no-agreement: {len(groups)} different translations, need {min_votes} equal",
                    dict(candidates))
    return Vote(texts[best], tuple(groups[best]), "", dict(candidates))


@dataclass
class TranslationResult:
    src: str
    dst: str
    kept: list[tuple[str, dict]] = field(default_factory=list)  # (predicate, entry for the draft file)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (template id, reason)

    @property
    def counts(self) -> dict[str, int]:
        out = {"kept": len(self.kept)}
        for _, reason in self.dropped:
            key = "dropped/" + reason.split(":", 1)[0]
            out[key] = out.get(key, 0) + 1
        return out


def translate_templates(templates: Sequence[Template], dst: str, backends: Sequence[TranslationBackend],
                        min_votes: int = 2) -> TranslationResult:
    """Translate ``templates`` (one source language) with every backend and vote per template."""
    if not templates:
        return TranslationResult("", dst)
    src = templates[0].lang
    sources = [to_source_text(t) for t in templates]
    outputs: dict[str, list[str] | None] = {}
    errors: dict[str, str] = {}
    for b in backends:
        try:
            outputs[b.name] = b.translate(sources, src, dst)
        except ConfigError:  # our own set-up errors (a missing package) stop the run with their fix
            raise
        except Exception as e:  # noqa: BLE001 - any failure of a third-party service (httpx.ConnectError,
            # HTTP errors, bad JSON) loses that backend's answers only; it is reported per template
            outputs[b.name] = None
            errors[b.name] = f"{type(e).__name__}: {e}"
    result = TranslationResult(src, dst)
    for i, t in enumerate(templates):
        candidates = {name: out[i] for name, out in outputs.items() if out is not None}
        if not candidates:
            result.dropped.append((t.id, "backend-error: " + "; ".join(f"{k}: {v}" for k, v in errors.items())))
            continue
        v = vote(candidates, t.kind, min_votes, source=sources[i])
        if v.text is None:
            result.dropped.append((t.id, v.reason))
            continue
        entry = {"id": t.id}
        if t.kind != "cloze":
            entry["kind"] = t.kind
        entry.update({"text": v.text, "status": "draft", "source": "mt:" + "+".join(v.voters)})
        result.kept.append((t.predicate, entry))
    return result


def draft_document(result: TranslationResult, name: str = "", scripts: Sequence[str] = (),
                   genders: Sequence[str] = ()) -> dict:
    """The YAML document of a draft template file for ``result.dst``."""
    templates: dict[str, list[dict]] = {}
    for predicate, entry in result.kept:
        templates.setdefault(predicate, []).append(entry)
    if not scripts:
        from factatlas.templates.validate import script_of

        found = {script_of(ch) for _, e in result.kept for ch in e["text"]}
        scripts = sorted(s for s in found if s)
    return {"lang": result.dst, "name": name, "scripts": list(scripts), "genders": list(genders),
            "templates": templates}


def dump_yaml(doc: dict) -> str:
    import yaml

    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=1000)
