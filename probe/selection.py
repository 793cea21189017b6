"""Which prompts a probe scores: the benchmark opened once, ``--langs`` and ``--shard i/n`` (a stable hash of
the prompt id, the same on every machine), filtered while reading."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factatlas.benchmark import Benchmark
from factatlas.errors import ConfigError
from factatlas.records import Prompt


def parse_shard(text: Any) -> tuple[int, int] | None:
    """``"1/4"`` -> (1, 4): shard index 1 of 4, counted from 0 (a pair passes through, checked)."""
    if not text:
        return None
    if isinstance(text, list | tuple) and len(text) == 2:
        text = f"{text[0]}/{text[1]}"
    i, sep, n = str(text).partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index, count = -1, 0
    if not sep or count < 1 or not 0 <= index < count:
        raise ConfigError(f"--shard {text!r}: expected i/n with 0 <= i < n, e.g. 0/4 ... 3/4")
    return index, count


def parse_out_name(value: Any) -> str | None:
    """A model folder's name under probe/: one plain name. A path would write outside probe/ (``../x``), and
    names starting with '_' or '.' are probe/'s own folders (``_models``, ``_answers``) or hidden ones."""
    if value is None:
        return None
    name = str(value)
    if not name or "/" in name or "\\" in name or name in (".", "..") or name[0] in "_.":
        raise ValueError("expected one folder name under probe/ (no '/', not starting with '_' or '.', which "
                         "name probe/'s own folders such as _models), e.g. --out-name bert-mlm-pll")
    return name


def parse_langs(value: Any) -> tuple[str, ...] | None:
    """``"fr, en"`` -> ("fr", "en"); a sequence of codes passes through; nothing given -> None (all)."""
    items = value.split(",") if isinstance(value, str) else list(value or ())
    langs = tuple(x.strip() for x in items if x and x.strip())
    return langs or None


def shard_of(prompt_id: str, count: int) -> int:
    """Stable shard of a prompt: the same on every machine and Python version."""
    return int.from_bytes(hashlib.sha256(prompt_id.encode("utf-8")).digest()[:8], "big") % count


def open_benchmark(path: str | Path, bench: Benchmark | None = None) -> tuple[Benchmark, Path]:
    """The benchmark and the run directory that receives ``probe/``: the run around the benchmark, else
    the folder holding it (``<x>/build`` files under ``<x>``). ``bench``: ``path``'s benchmark, already open."""
    bench = Benchmark.open(path) if bench is None else bench
    if bench.run is not None:
        return bench, bench.run
    return bench, bench.path.parent if bench.path.name == "build" else bench.path


def select_rows(prompts: Sequence[Prompt], langs: Sequence[str] | None,
                shard: tuple[int, int] | None) -> list[Prompt]:
    """The benchmark's prompts this process scores (``--langs``, ``--shard``), in their order."""
    if langs:
        check_langs(langs, sorted({p.lang for p in prompts}))
    keep = row_filter(langs, shard)
    return [p for p in prompts if keep is None or keep(p.prompt_id, p.lang)]


def select_prompts(benchmark: Benchmark, langs: Sequence[str] | None,
                   shard: tuple[int, int] | None) -> list[Prompt]:
    """``select_rows`` on the benchmark's files, filtering while reading: a shard or a ``--langs`` run
    decodes only its own rows (``Benchmark.prompts_where``). Same rows, same order."""
    if langs:
        check_langs(langs, benchmark.languages or sorted({p.lang for p in benchmark.prompts}))
    keep = row_filter(langs, shard)
    return list(benchmark.prompts) if keep is None else benchmark.prompts_where(keep)


def check_langs(langs: Sequence[str], present: Sequence[str]) -> None:
    missing = [lang for lang in langs if lang not in present]
    if missing:
        raise ConfigError(f"--langs: {', '.join(missing)} not in the benchmark; it has {', '.join(sorted(present))}")


def row_filter(langs: Sequence[str] | None, shard: tuple[int, int] | None):
    """(prompt_id, lang) -> keep, or None when every row is kept."""
    if not langs and not shard:
        return None
    wanted = frozenset(langs or ())

    def keep(prompt_id: str, lang: str) -> bool:
        return (not wanted or lang in wanted) and (not shard or shard_of(prompt_id, shard[1]) == shard[0])
    return keep
