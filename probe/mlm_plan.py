"""The masked scorers' host step: the passes a rule needs, planned and batched as host arrays (no model call).

Both rules reduce to *passes*: an input with the slot replaced by ``k`` positions, some filled with a
candidate's first tokens, the rest masked, and a list of targets ``(position, token, candidate)`` read
from that pass. Passes are deduplicated (independent: one per prompt and mask count some candidate
needs; left-to-right: one per node of the trie of candidate prefixes, grouped by length; identical inputs
of different prompts once), sorted by length and batched under a token budget. ``MaskedLMScorer.prepare``
makes a chunk's ``PreparedPasses`` here; ``ranking.ranked_rows`` can run it on a second thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from factatlas.probe.batching import token_budget_batches
from factatlas.probe.slots import SlotTokens

if TYPE_CHECKING:
    import numpy as np

MODES = ("independent", "pll")


@dataclass(frozen=True)
class PlannedBatch:
    """One forward batch of equally long passes and what to read from it, as host arrays.

    ``rows``/``within``/``cols``: per read, its row, its index among the reads of that row and its column;
    ``most``: the largest number of reads in one row. ``at``/``tokens``/``cands``: per target, the read
    it takes its log-probability from, the token and the global candidate index it adds to."""

    ids: np.ndarray  # int64 [rows, length]
    rows: np.ndarray
    within: np.ndarray
    cols: np.ndarray
    most: int
    at: np.ndarray
    tokens: np.ndarray
    cands: np.ndarray

    def distinct_positions(self) -> tuple[np.ndarray, np.ndarray]:
        return distinct_positions(self.ids)


def distinct_positions(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For equally long rows of token ids: the flat index of the first occurrence of each distinct (token,
    column) pair, and per flat position the number of its pair. What the first layer's projections need,
    since a position's embedding depends on its token and column alone."""
    import numpy as np

    width = ids.shape[1]
    key = (ids * width + np.arange(width)).ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


@dataclass(frozen=True)
class PassPlan:
    """The passes a rule needs and, as flat arrays, the reads and targets they serve.

    Reads are numbered in order of first use; ``read_pass``/``read_col`` give each read's pass and
    column. Targets (one per candidate token scored) give their read, token and global
    candidate index. ``token_counts``: per global candidate index, its number of tokens."""

    ids: list[tuple[int, ...]]
    read_pass: np.ndarray
    read_col: np.ndarray
    target_read: np.ndarray
    target_token: np.ndarray
    target_cand: np.ndarray
    token_counts: list[int]

    def positions(self, p: int) -> list[int]:
        """Columns read from pass ``p``, in order of first use."""
        return self.read_col[self.read_pass == p].tolist()

    def targets(self, p: int) -> list[tuple[int, int, int]]:
        """(column, token, candidate) of every target read from pass ``p``."""
        mine = self.read_pass[self.target_read] == p
        return list(zip(self.read_col[self.target_read[mine]].tolist(), self.target_token[mine].tolist(),
                        self.target_cand[mine].tolist(), strict=True))

    def batches(self, budget: int) -> list[PlannedBatch]:
        """The passes in batches of one length under ``budget`` tokens (``token_budget_batches``), each
        with its reads and targets. The passes are renumbered in batch order once, so that every batch's
        reads and targets are slices of sorted arrays: no per-pass or per-target work on the host here."""
        import numpy as np

        groups = token_budget_batches([len(i) for i in self.ids], budget, same_length=True)
        order = np.fromiter((i for g in groups for i in g), dtype=np.int64, count=len(self.ids))
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        # reads sorted by their pass's rank (stable: a pass keeps its reads' order), targets by their read
        by_rank = np.argsort(rank[self.read_pass], kind="stable")
        read_rank = rank[self.read_pass][by_rank]
        cols = self.read_col[by_rank]
        new_read = np.empty_like(by_rank)
        new_read[by_rank] = np.arange(len(by_rank))
        target_read = new_read[self.target_read]
        t_order = np.argsort(target_read, kind="stable")
        target_read, tokens, cands = target_read[t_order], self.target_token[t_order], self.target_cand[t_order]
        within = np.arange(len(read_rank)) - np.searchsorted(read_rank, read_rank, side="left")
        first_pass = np.cumsum([0] + [len(g) for g in groups])
        read_edges = np.searchsorted(read_rank, first_pass, side="left")
        target_edges = np.searchsorted(target_read, read_edges, side="left")
        out = []
        for b, group in enumerate(groups):
            r0, r1 = read_edges[b], read_edges[b + 1]
            t0, t1 = target_edges[b], target_edges[b + 1]
            out.append(PlannedBatch(
                np.array([self.ids[i] for i in group], dtype=np.int64), read_rank[r0:r1] - first_pass[b],
                within[r0:r1], cols[r0:r1], int(within[r0:r1].max(initial=-1)) + 1,
                target_read[t0:t1] - r0, tokens[t0:t1], cands[t0:t1]))
        return out


def plan_passes(slots: Sequence[SlotTokens], mode: str, mask_id: int, head: Sequence[int],
                tail: Sequence[int]) -> PassPlan:
    """The passes a rule needs for these prompts, with their reads and targets.

    Candidates are numbered globally in query order. Independent: one pass per (prompt, mask count
    present among its candidates). Left-to-right: one pass per distinct (mask count, filled prefix),
    i.e. per trie node, so candidates sharing first tokens share passes.
    """
    import numpy as np

    if mode not in MODES:
        raise ValueError(f"unknown masked-LM mode '{mode}'; expected one of {MODES}")
    token_counts: list[int] = []
    ids_list: list[tuple[int, ...]] = []
    # Keyed by the input ids over all prompts: prompts with the same text (BMLAMA-17 has 4,620 distinct
    # texts in 6,792 prompts) share their passes too, not only candidates of one prompt.
    by_ids: dict[tuple[int, ...], int] = {}
    read_of: dict[tuple[int, int], int] = {}  # (pass, column) -> read
    read_pass: list[int] = []
    read_col: list[int] = []
    t_read: list[int] = []
    t_token: list[int] = []
    t_cand: list[int] = []

    def pass_reads(ids: tuple[int, ...], cols: range) -> list[int]:
        p = by_ids.get(ids)
        if p is None:
            p = by_ids[ids] = len(ids_list)
            ids_list.append(ids)
        reads = []
        for c in cols:
            r = read_of.get((p, c))
            if r is None:
                r = read_of[(p, c)] = len(read_pass)
                read_pass.append(p)
                read_col.append(c)
            reads.append(r)
        return reads

    offset = 0
    for slot in slots:
        start = len(head) + len(slot.prefix)
        before, after = (*head, *slot.prefix), (*slot.suffix, *tail)
        # per candidate: the reads its tokens are scored at, found once per mask count / trie node
        known: dict[tuple[int, tuple[int, ...]], list[int]] = {}
        for ci, cand in enumerate(slot.candidates):
            k = len(cand)
            token_counts.append(k)
            if mode == "independent":
                reads = known.get((k, ()))
                if reads is None:
                    reads = known[(k, ())] = pass_reads((*before, *([mask_id] * k), *after), range(start, start + k))
            else:
                reads = []
                for j in range(k):
                    key = (k, cand[:j])
                    r = known.get(key)
                    if r is None:
                        r = known[key] = pass_reads((*before, *cand[:j], *([mask_id] * (k - j)), *after),
                                                    range(start + j, start + j + 1))
                    reads.extend(r)
            t_read.extend(reads)
            t_token.extend(cand)
            t_cand.extend([offset + ci] * k)
        offset += len(slot.candidates)

    def array(values: list[int]):
        return np.array(values, dtype=np.int64)

    return PassPlan(ids_list, array(read_pass), array(read_col), array(t_read), array(t_token), array(t_cand),
                    token_counts)


@dataclass(frozen=True)
class PreparedPasses:
    """One chunk's host work for ``MaskedLMScorer.run``: its planned batches, per batch the (distinct,
    inverse) index arrays of its (token, position) pairs or None, per candidate its token count (global
    candidate order) and per query its number of candidates."""

    batches: tuple[PlannedBatch, ...]
    shared: tuple[tuple[np.ndarray, np.ndarray] | None, ...]
    token_counts: tuple[int, ...]
    candidates: tuple[int, ...]
