"""The prompt files as Arrow tables, for a consumer that copies or counts columns and needs no record
(publish: the release's data shards and its digest). ``iter_prompt_tables`` walks them in prompt_id order a
row group at a time, as ``factatlas.benchmark.iter_prompt_batches`` walks records; ``as_written`` gives each
table the values its records would write back, so a shard written from the tables has the bytes of one
written from the records. ``Benchmark.prompt_tables`` is the door (its errors name the file); the answers' display
labels (``read_answer_labels``, ``Benchmark.answer_labels``) are counted from them too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

# Predicate-wide candidate lists repeat the same thousands of QIDs on every row: read them
# dictionary-encoded and share one tuple per distinct list.
SHARED_LIST_COLUMNS = ("candidate_qids", "candidate_forms")
# list<string> columns read as tuples, identical lists of a group sharing one tuple (golds repeat per fact)
TUPLE_COLUMNS = ("gold_qids", "article_langs", "home_langs")
DEFAULTS = {"popularity": 0.0, "popularity_quantile": 0, "popularity_log10": -1}


def iter_prompt_tables(paths: Sequence[str | os.PathLike], lang: str | None = None,
                       columns: Sequence[str] | None = None) -> Iterator[Any]:
    """Prompt files as Arrow tables in prompt_id order, a row group at a time, with the values the records
    would write back (``as_written``): one file's row groups as they are; several files (a release's shards,
    each sorted) merged by prompt_id, the rows of all files up to the smallest last id of their current
    groups at a time. ``lang``: only that language's rows (a group without any is not decoded). ``columns``:
    only these (and prompt_id, which orders the merge), in the schema's order; every column when None."""
    from factatlas.tables import PROMPTS_SCHEMA

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

    from factatlas.tables import PROMPTS_SCHEMA, require_schema, unreadable

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


FILTER_COLUMNS = ("lang", "pair", "split")  # what ``iter_prompt_rows`` selects by: a few short strings a row


class RowsOf:
    """Some rows of one row group of one prompts file, in file order, whose values are read a column at a time
    when asked (``column``): what waits for a data shard's row group costs a few bytes a row (its row numbers),
    not the rows' values (up to 4 KB a row with a predicate's whole candidate lists). ``num_rows``, ``slice`` and
    ``column`` as an Arrow table's, so a writer can hold either."""

    def __init__(self, file: Any, path: str | os.PathLike, group: int, rows: Any) -> None:
        self.file, self.path, self.group, self.rows = file, path, group, rows  # rows: an Arrow int array

    @property
    def num_rows(self) -> int:
        return len(self.rows)

    def slice(self, offset: int, length: int | None = None) -> RowsOf:
        return RowsOf(self.file, self.path, self.group, self.rows.slice(offset, length))

    def column(self, name: str) -> Any:
        """This column's values of these rows (``as_written``), read from the file now; a failure names it."""
        import pyarrow as pa

        from factatlas.tables import unreadable

        try:
            read = self.file.read_row_group(self.group, columns=[name], use_threads=False)
        except pa.ArrowException as e:
            raise unreadable(self.path, e) from None
        return as_written(read).column(0).take(self.rows)


def iter_prompt_rows(paths: Sequence[str | os.PathLike], keep: Any) -> Iterator[Any]:
    """The rows ``keep`` selects, in prompt_id order: ``keep(table)`` gets a table holding ``FILTER_COLUMNS``
    and returns a boolean mask. One file: a ``RowsOf`` per row group with such rows (only
    ``FILTER_COLUMNS`` read here); several files, merged by prompt_id: the selected rows as tables."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from factatlas.tables import PROMPTS_SCHEMA, require_schema

    if len(paths) != 1:
        for table in iter_prompt_tables(paths):
            mask = keep(table)
            if pc.any(mask).as_py():
                yield table.filter(mask)
        return
    path = paths[0]
    require_schema(path, PROMPTS_SCHEMA)
    pf = pq.ParquetFile(path)
    for g in range(pf.num_row_groups):
        rows = pc.indices_nonzero(keep(pf.read_row_group(g, columns=list(FILTER_COLUMNS), use_threads=False)))
        if len(rows):
            yield RowsOf(pf, path, g, rows)


def as_written(table: Any) -> Any:
    """A PROMPTS_SCHEMA table (or some of its columns, in its order) with the values its records
    (``decode_prompts``) hold, so that writing it gives the bytes of writing those records
    (``tables.prompt_to_row``): ``DEFAULTS`` for null numbers, an empty list for a null list; a null candidate
    list is refused, as the records refuse it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from factatlas.tables import PROMPTS_SCHEMA

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


ANSWER_LABEL_COLUMNS = ("lang", "subject_qid", "subject_label", "candidate_qids", "candidate_forms", "gold_qids")
LIST_SEP = "\x1f"  # joins a list's QIDs (or a QID and a language) into one comparable string; no QID holds it


def column_codes(column: Any) -> tuple[Any, Any]:
    """A column's rows as int64 codes (numpy; equal values, equal codes, numbered in order of first appearance,
    a null after every value) and the distinct values as an Arrow array (a null last where the column has one)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    indices, values = encoded.indices, encoded.dictionary
    if indices.null_count:
        indices = pc.fill_null(indices, len(values))
        values = pa.concat_arrays([values, pa.nulls(1, values.type)])
    return indices.to_numpy(zero_copy_only=False).astype(np.int64), values


def distinct_rows(*codes: Any) -> tuple[Any, Any]:
    """Rows' combinations of several int code arrays (numpy): per row the combination's number and, per number,
    its first row (combinations numbered in order of first row, so the first rows ascend)."""
    import numpy as np

    combo = np.zeros(len(codes[0]), np.int64)
    for c in codes:
        combo = combo * (int(c.max()) + 1) + c
    _, first, inverse = np.unique(combo, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


def _stacked(*parts: Any) -> Any:
    """Arrow arrays and chunked arrays of one type, one after the other, as one array."""
    import pyarrow as pa

    return pa.concat_arrays([p.combine_chunks() if isinstance(p, pa.ChunkedArray) else p for p in parts])


def read_answer_labels(tables: Iterable[Any], stored: Any | None) -> dict[tuple[str, str], str]:
    """``Benchmark.answer_labels`` from the prompt tables (``ANSWER_LABEL_COLUMNS``, prompt_id order) and the
    non-empty rows of labels.parquet (``stored``; None without one). The labels are those of filling a dict from
    labels.parquet (the last row of a key) and then, for the keys it lacks, from each prompt in turn: its subject
    label, then each candidate's form; only the candidates' and golds' QIDs are kept. Per row group, a row is
    visited only when it carries a key labels.parquet lacks, and a candidate list once per distinct (language,
    list, forms)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    stored_keys = (pc.binary_join_element_wise(stored.column("qid"), stored.column("lang"), LIST_SEP)
                   if stored is not None else pa.array([], pa.string()))
    answers: set[str] = set()
    found: dict[tuple[str, str], str] = {}  # keys labels.parquet lacks, the first prompt's label
    for table in tables:
        table = table.combine_chunks()
        if not table.num_rows:
            continue
        lang = table.column("lang")
        # the first row of each distinct (language, candidates, forms) in the group: the others add nothing
        codes = [column_codes(c)[0] for c in (lang, pc.binary_join(table.column("candidate_qids"), LIST_SEP),
                                              pc.binary_join(table.column("candidate_forms"), LIST_SEP))]
        firsts = distinct_rows(*codes)[1]
        lists = table.select(["lang", "candidate_qids", "candidate_forms"]).take(pa.array(firsts))
        flat = pc.list_flatten(lists.column("candidate_qids"))
        answers.update(pc.unique(flat).to_pylist())
        answers.update(pc.unique(pc.list_flatten(table.column("gold_qids"))).to_pylist())
        parents = pc.list_parent_indices(lists.column("candidate_qids")).to_numpy(zero_copy_only=False)
        starts = lists.column("candidate_qids").combine_chunks().offsets.to_numpy()[:-1]
        position = np.arange(len(parents)) - starts[parents]
        forms = lists.column("candidate_forms").combine_chunks()
        n_forms = pc.list_value_length(forms).to_numpy(zero_copy_only=False)
        paired = position < n_forms[parents]  # zip(candidates, forms) stops at the shorter
        flat_lang = lists.column("lang").take(pa.array(parents))
        # the subjects' and the candidates' keys against labels.parquet's in one lookup (each builds its hash set)
        keys = pa.chunked_array([*pc.binary_join_element_wise(table.column("subject_qid"), lang, LIST_SEP).chunks,
                                 *pc.binary_join_element_wise(flat, flat_lang, LIST_SEP).chunks], pa.string())
        stored_too = pc.is_in(keys, stored_keys).to_numpy(zero_copy_only=False)
        subjects_lacking = np.flatnonzero(~stored_too[:table.num_rows])
        candidates_lacking = np.flatnonzero(paired & ~stored_too[table.num_rows:])
        # Entries (a qid, a language, a label) ordered by (row, position: -1 the subject); the first of each
        # (qid, language) found as codes, so that only those become Python objects. A scalar at a time was most
        # of the CPU (BMLAMA-17 without labels.parquet: 1.2 million entries)
        order = np.lexsort((np.concatenate([np.full(len(subjects_lacking), -1), position[candidates_lacking]]),
                            np.concatenate([subjects_lacking, firsts[parents[candidates_lacking]]])))
        if not len(order):
            continue
        subject_rows, candidates = pa.array(subjects_lacking), pa.array(candidates_lacking)
        form_at = pa.array(forms.offsets.to_numpy()[:-1][parents[candidates_lacking]]
                           + position[candidates_lacking])
        entry = [_stacked(table.column("subject_qid").take(subject_rows), flat.take(candidates)),
                 _stacked(lang.take(subject_rows), flat_lang.take(candidates)),
                 _stacked(table.column("subject_label").take(subject_rows), forms.values.take(form_at))]
        entry = [column.take(pa.array(order)) for column in entry]
        pick = pa.array(distinct_rows(*(column_codes(c)[0] for c in entry[:2]))[1])
        for qid, entry_lang, label in zip(*(c.take(pick).to_pylist() for c in entry), strict=True):
            found.setdefault((qid, entry_lang), label)
    labels: dict[tuple[str, str], str] = {}
    if stored is not None:
        kept = stored.filter(pc.is_in(stored.column("qid"), pa.array(sorted(answers), pa.string())))
        for qid, row_lang, label in zip(*(kept.column(c).to_pylist() for c in ("qid", "lang", "label")), strict=True):
            labels[(qid, row_lang)] = label
    for key, label in found.items():
        if key[0] in answers:
            labels.setdefault(key, label)
    return labels
