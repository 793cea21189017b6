"""The prompt files as Arrow tables, for a consumer that copies or counts columns and needs no record
(publish: the release's data shards and its digest). ``iter_prompt_tables`` walks them in prompt_id order a
row group at a time, as ``factatlas.benchmark.iter_prompt_batches`` walks records; ``as_written`` gives each
table the values its records would write back, so a shard written from the tables has the bytes of one
written from the records. ``release_input.PromptStream.tables`` is the door (its errors name the file).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from factatlas.benchmark import DEFAULTS, SHARED_LIST_COLUMNS, TUPLE_COLUMNS
from factatlas.tables import PROMPTS_SCHEMA


def iter_prompt_tables(paths: Sequence[str | os.PathLike], lang: str | None = None,
                       columns: Sequence[str] | None = None) -> Iterator[Any]:
    """Prompt files as Arrow tables in prompt_id order, a row group at a time, with the values the records
    would write back (``as_written``): one file's row groups as they are; several files (a release's shards,
    each sorted) merged by prompt_id, the rows of all files up to the smallest last id of their current
    groups at a time. ``lang``: only that language's rows (a group without any is not decoded). ``columns``:
    only these (and prompt_id, which orders the merge), in the schema's order; every column when None."""
    if columns is not None:
        columns = [name for name in PROMPTS_SCHEMA.names if name in columns or name == "prompt_id"]
    streams = [_file_tables(path, lang, columns) for path in paths]
    if len(streams) == 1:
        yield from streams[0]
        return
    import pyarrow as pa
    import pyarrow.compute as pc

    heads = [next(stream, None) for stream in streams]
    while any(h is not None for h in heads):
        bound = min(h.column("prompt_id")[-1].as_py() for h in heads if h is not None)
        parts = []
        for i, head in enumerate(heads):
            if head is None:
                continue
            upto = pc.less_equal(head.column("prompt_id"), bound)
            parts.append(head.filter(upto))
            rest = head.filter(pc.invert(upto))
            heads[i] = rest if rest.num_rows else next(streams[i], None)
        merged = pa.concat_tables(parts)
        # a stable sort: equal ids keep the files' order, as heapq.merge in iter_prompt_batches
        yield merged.take(pc.sort_indices(merged, sort_keys=[("prompt_id", "ascending")]))


def _file_tables(path: str | os.PathLike, lang: str | None, columns: Sequence[str] | None) -> Iterator[Any]:
    """One prompts.parquet's row groups (non-empty ones, ``lang``'s rows when given; ``columns`` of them, or
    every column) as ``as_written`` tables."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from factatlas.tables import require_schema, unreadable

    require_schema(path, PROMPTS_SCHEMA)
    try:
        pf = pq.ParquetFile(path)
        for g in range(pf.num_row_groups):
            if lang is None:
                table = pf.read_row_group(g, columns=columns, use_threads=False)
            else:
                mask = pc.equal(pf.read_row_group(g, columns=["lang"], use_threads=False).column("lang"), lang)
                if not pc.any(mask).as_py():
                    continue
                table = pf.read_row_group(g, columns=columns, use_threads=False).filter(mask)
            if table.num_rows:
                yield as_written(table)
    except pa.ArrowException as e:
        raise unreadable(path, e) from None


def as_written(table: Any) -> Any:
    """A PROMPTS_SCHEMA table (or some of its columns, in its order) with the values its records
    (``decode_prompts``) hold, so that writing it gives the bytes of writing those records
    (``tables.prompt_to_row``): ``DEFAULTS`` for null numbers, an empty list for a null list; a null candidate
    list is refused, as the records refuse it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = PROMPTS_SCHEMA if table.num_columns == len(PROMPTS_SCHEMA) else pa.schema(
        [PROMPTS_SCHEMA.field(name) for name in table.column_names])
    columns = []
    for name, kind in zip(schema.names, schema.types, strict=True):
        column = table.column(name)
        if column.null_count:
            if name in SHARED_LIST_COLUMNS:
                raise ValueError("a candidate list column holds nulls")
            if name in DEFAULTS:
                column = pc.fill_null(column, pa.scalar(DEFAULTS[name], kind))
            elif name in (*TUPLE_COLUMNS, "gold_forms"):
                column = pc.fill_null(column, pa.scalar([], kind))
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)
