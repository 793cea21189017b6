"""Log-probabilities of target tokens from vocabulary logits, without a vocabulary-sized output on CPU.

On accelerators one fused ``log_softmax`` is fastest. On CPU the targets' logits are read first and the
normaliser (logsumexp) then runs in the logits' own memory: ``log_softmax`` writes a second
vocabulary-sized tensor, and torch's ``logsumexp`` allocates ``logits - max`` anew, which at tens of
megabytes is a fresh mapping whose every page faults in. Measured on one CPU thread, 1,100 rows x 30,000
columns (the matrix product alone 221 ms): log_softmax 301 ms, torch.logsumexp 330 ms, in place 270 ms,
with the smallest error against float64 of the three (1.5e-6 nats; log_softmax 1.7e-6).

Before the exponential, differences from the row maximum are raised to the log of the dtype's smallest
normal number plus one (float32: -86.3) where a whole row of such terms stays below half a unit in the last place
of the sum (which is at least 1): ``exp`` of a value below it is a subnormal number, which x86 CPUs compute
several times slower (with a T5-style head, logits spread over more than 87 nats: 2.7x on one thread),
and every such term vanishes in the sum anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


# Rows per step of the in-place normaliser: its four passes (max, subtract, exp, sum) run on blocks of
# about this many bytes, which stay in a core's L2 cache between passes instead of streaming the whole
# logits from memory four times. Measured on one thread, 256 rows x 30,000 columns (the product 34 ms):
# whole 9.4 ms, blocks of 8 or 16 rows (1-2 MB) 4.1-4.4 ms, of 32 rows 8.1 ms.
BLOCK_BYTES = 1 << 20


def logsumexp_rows_in_place(logits: torch.Tensor) -> torch.Tensor:
    """``torch.logsumexp(logits, dim=-1)``, bit for bit, computed in ``logits``' own memory, which it
    overwrites. Same steps in the same order as ATen's: the row maximum (0 where infinite), subtract,
    exponentiate, sum, log, add the maximum back; between subtracting and exponentiating, the terms that
    would underflow to subnormals are raised to ``underflow_floor`` (they add nothing to the sum); rows of a
    matrix in blocks of about ``BLOCK_BYTES``."""
    import torch

    rows = max(1, BLOCK_BYTES // max(1, logits.shape[-1] * logits.element_size()))
    if logits.dim() == 2 and logits.shape[0] > rows:
        return torch.cat([logsumexp_rows_in_place(logits[i:i + rows]) for i in range(0, logits.shape[0], rows)])
    maxes = logits.amax(dim=-1, keepdim=True)
    no_mass = maxes == float("-inf")
    maxes.masked_fill_(maxes.abs() == float("inf"), 0)
    logits.sub_(maxes)
    floor = underflow_floor(logits.dtype, logits.shape[-1])
    # whether to raise at all, from the first sixteenth of the columns: raising costs a pass over the logits
    # (3 % of the independent rule on a BERT-style head whose logits never come near the floor), and the
    # sum is the same either way
    sample = logits[..., : max(1, logits.shape[-1] // 16)]
    if floor is not None and sample.numel() and bool((sample.amin(dim=-1) < floor).any()):
        logits.clamp_(min=floor)
    out = torch.sum(logits.exp_(), dim=-1).log_().add_(maxes.squeeze(-1))
    if floor is not None:  # a row of -inf: no mass, as before the floor
        out.masked_fill_(no_mass.squeeze(-1), float("-inf"))  # harmless when nothing was raised
    return out


def underflow_floor(dtype, columns: int) -> float | None:
    """One above the log of ``dtype``'s smallest normal number (so that ``exp`` of it is normal) when
    ``columns`` terms of that size add less than half an ulp to a sum of at least 1 (float32, bfloat16,
    float64 at any vocabulary; float16 never from three columns on)."""
    import math

    import torch

    info = torch.finfo(dtype)
    if columns * math.e * info.tiny >= info.eps / 2:
        return None
    return math.log(info.tiny) + 1


def target_log_probs(logits: torch.Tensor, reads: Sequence[tuple[torch.Tensor, torch.Tensor]],
                     fused: bool) -> list[torch.Tensor]:
    """Per (rows, tokens) pair of index tensors, float32 log p(token) at those rows of ``logits``.
    ``fused``: one float32 log-softmax (accelerators); else the CPU path, which consumes ``logits`` (the
    caller must own them: a fresh head output, an indexed copy)."""
    import torch

    if fused:
        logp = torch.log_softmax(logits, dim=-1, dtype=torch.float32)
        return [logp[rows, tokens] for rows, tokens in reads]
    logits = logits.float()
    picked = [logits[rows, tokens] for rows, tokens in reads]  # before the normaliser overwrites them
    norm = logsumexp_rows_in_place(logits)
    return [p - norm[rows] for p, (rows, _) in zip(picked, reads, strict=True)]


def fused_normaliser(device) -> bool:
    """Whether ``target_log_probs`` should take the fused path on ``device``: everywhere but the CPU."""
    return not str(device).startswith("cpu")
