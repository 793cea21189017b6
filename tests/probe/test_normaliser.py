"""Target log-probabilities: the CPU path (in-place normaliser) against torch's own functions."""

from __future__ import annotations

import torch

from factatlas.probe.normaliser import logsumexp_rows_in_place, target_log_probs


def test_in_place_logsumexp_is_torchs_bit_for_bit():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(37, 3001, generator=gen) * 30
    logits[3, :] = float("-inf")  # a row with no mass
    logits[4, 17] = float("inf")
    logits[5, ::2] = float("-inf")  # the padded decoder's extra columns
    expected = torch.logsumexp(logits, dim=-1)
    work = logits.clone()
    got = logsumexp_rows_in_place(work)
    assert torch.equal(got, expected)
    assert not torch.equal(work, logits)  # it did reuse the logits' memory
    import factatlas.probe.normaliser as normaliser

    blocks = normaliser.BLOCK_BYTES
    try:
        normaliser.BLOCK_BYTES = 5 * 3001 * 4  # blocks of 5 rows, the last one shorter
        assert torch.equal(logsumexp_rows_in_place(logits.clone()), expected)
    finally:
        normaliser.BLOCK_BYTES = blocks
    half = logits[:, :64].to(torch.bfloat16)
    assert torch.equal(logsumexp_rows_in_place(half.clone()), torch.logsumexp(half, dim=-1))


def test_cpu_and_fused_paths_give_the_log_softmax_at_every_read_set():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(9, 500, generator=gen) * 8
    reads = [(torch.tensor([0, 0, 4, 8]), torch.tensor([3, 499, 7, 0])), (torch.tensor([2, 4]), torch.tensor([5, 6])),
             (torch.tensor([], dtype=torch.long), torch.tensor([], dtype=torch.long))]
    expected = [torch.log_softmax(logits, dim=-1)[rows, tokens] for rows, tokens in reads]
    fused = target_log_probs(logits, reads, fused=True)
    cpu = target_log_probs(logits.clone(), reads, fused=False)
    for e, f, c in zip(expected, fused, cpu, strict=True):
        assert torch.equal(f, e)
        assert torch.allclose(c, e, atol=1e-5, rtol=0) and c.shape == e.shape


def test_terms_that_would_be_subnormal_change_nothing_and_half_precision_keeps_them():
    """Logits spread over hundreds of nats (a T5-style head): most terms would underflow; the floor that
    keeps ``exp`` off subnormals leaves every row's value as torch computes it, -inf rows included. In
    float16 the smallest normal is exp(-9.7): there no floor applies."""
    from factatlas.probe.normaliser import underflow_floor

    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(64, 30000, generator=gen) * 60
    logits[0, :] = float("-inf")
    logits[1, 5:] = logits[1, :5].max() - 95  # one side of the floor: every term but five below it
    assert float((logits - logits.amax(-1, keepdim=True) < underflow_floor(torch.float32, 30000)).float().mean()) > 0.5
    assert torch.equal(logsumexp_rows_in_place(logits.clone()), torch.logsumexp(logits, dim=-1))
    assert underflow_floor(torch.float16, 30000) is None
    half = (torch.randn(8, 4000, generator=gen) * 6).half()
    assert torch.equal(logsumexp_rows_in_place(half.clone()), torch.logsumexp(half, dim=-1))


def test_the_floor_is_one_above_the_log_of_the_smallest_normal_and_never_for_half_precision():
    import math

    from factatlas.probe.normaliser import underflow_floor

    tiny = torch.finfo(torch.float32).tiny
    floor = underflow_floor(torch.float32, 30522)
    assert floor == math.log(tiny) + 1 and torch.exp(torch.tensor(floor)).item() >= tiny  # exp of it is normal
    assert underflow_floor(torch.bfloat16, 250_000) == math.log(torch.finfo(torch.bfloat16).tiny) + 1
    assert underflow_floor(torch.float16, 8) is None and underflow_floor(torch.float16, 50_000) is None
