"""publish's door to its input: ``load_source(path)`` is the core's one release reader
(``factatlas.release_input.read_release_input``, on ``Benchmark.open``) with the installed template
library as the fallback for a curated benchmark that holds no copy of its templates (logged).

``factatlas publish RUN`` accepts a run directory (``runs/<name>`` holding ``build/``) or a benchmark
directory itself (``<run>/build`` or what ``factatlas import`` wrote); rendering is a pure function of
the ``ReleaseInput`` read here.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from factatlas.benchmark import locate as core_locate
from factatlas.errors import ConfigError
from factatlas.records import Fact
from factatlas.release_input import ReleaseInput, read_release_input
from factatlas.tables import (
    FACTS_SCHEMA,
    LABELS_SCHEMA,
    fact_from_row,
)

log = logging.getLogger(__name__)


def locate(path: str | Path) -> tuple[Path, Path | None]:
    """(benchmark dir, run dir or None) for a run directory or a benchmark directory."""
    where = core_locate(path)
    return where.benchmark, where.run


def load_source(path: str | Path) -> ReleaseInput:
    """The release input of a run or benchmark directory (templates: its own copy, else the library's)."""
    return read_release_input(path, library_templates)


def library_templates(langs: Sequence[str]) -> dict[str, bytes]:
    """templates/lang/<lang>.yaml of the installed library for ``langs`` (those it has), logged when used."""
    files = {}
    lang_dir = resources.files("factatlas.templates") / "lang"
    for lang in langs:
        f = lang_dir / f"{lang}.yaml"
        if f.is_file():
            files[f"{lang}.yaml"] = f.read_bytes()
    if files:
        log.warning("templates: the benchmark holds no copy of its templates; releasing the library's "
                    "templates/lang/*.yaml as installed now")
    return files


# ---- reading tables back from bytes (releases hold them as files in a repo) ----------------------

def table_from_bytes(data: bytes) -> pa.Table:
    return pq.read_table(io.BytesIO(data))


def facts_from_bytes(data: bytes) -> list[Fact]:
    t = table_from_bytes(data)
    if not t.schema.equals(FACTS_SCHEMA, check_metadata=False):
        raise ConfigError("facts.parquet: schema differs from factatlas.tables.FACTS_SCHEMA")
    return [fact_from_row(r) for r in t.to_pylist()]


def labels_from_bytes(data: bytes) -> dict[tuple[str, str], str]:
    t = table_from_bytes(data)
    if not t.schema.equals(LABELS_SCHEMA, check_metadata=False):
        raise ConfigError("labels.parquet: schema differs from factatlas.tables.LABELS_SCHEMA")
    qids, langs, labels = (t.column(c).to_pylist() for c in ("qid", "lang", "label"))
    return {(q, lg): lb for q, lg, lb in zip(qids, langs, labels, strict=True) if lb}


