"""The tiny model's training loss projects only the masked positions onto the vocabulary (issue 14): the
same loss and the same gradients as the model's own ``labels=`` path, which projects every position."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from factatlas.probe.tiny import build_model, masked_lm_loss, train_tokenizer  # noqa: E402


def test_masked_positions_only_give_the_models_own_loss_and_gradients():
    texts = ["Paris is the capital of France.", "Cairo is the capital of Egypt.", "Rome is in Italy."] * 10
    tokenizer = train_tokenizer(texts, "bert", 200)
    model = build_model("bert", tokenizer)
    batch = tokenizer(["Paris is the capital of France.", "Rome is in Italy."], padding=True, return_tensors="pt")
    ids, mask = batch["input_ids"], batch["attention_mask"]
    labels = torch.full_like(ids, -100)
    labels[0, 5], labels[1, 3] = ids[0, 5], ids[1, 3]  # two masked positions, different rows
    ids = ids.clone()
    ids[0, 5] = ids[1, 3] = tokenizer.mask_token_id

    def loss_and_grads(full: bool):
        model.zero_grad()
        loss = masked_lm_loss(model, ids, mask, labels, full=full)
        loss.backward()
        return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    own, own_grads = loss_and_grads(True)
    ours, our_grads = loss_and_grads(False)
    assert ours == pytest.approx(own, rel=1e-6)
    assert own > 1.0  # an untrained model: the comparison is not between two zeros
    assert own_grads.keys() == our_grads.keys()
    for name, grad in own_grads.items():
        torch.testing.assert_close(our_grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)


def test_length_grouped_batches_draw_every_row_alike_and_pad_less():
    import random
    from collections import Counter

    from factatlas.probe.tiny import length_grouped_batches

    rows = [([0] * (3 + i % 17), i) for i in range(85)]  # lengths 3..19, five rows of each
    batches = length_grouped_batches(rows, steps=2000, batch_size=16, rng=random.Random(7))
    assert len(batches) == 2000 and {len(b) for b in batches} == {16}
    drawn = Counter(r[1] for b in batches for r in b)
    assert set(drawn) == set(range(85))
    expected = 2000 * 16 / 85
    assert all(abs(n - expected) < 0.25 * expected for n in drawn.values())  # uniform, as random draws are

    def padding(bs):
        return 1 - sum(len(r[0]) for b in bs for r in b) / sum(16 * max(len(r[0]) for r in b) for b in bs)

    rng = random.Random(7)
    plain = [[rows[rng.randrange(85)] for _ in range(16)] for _ in range(2000)]
    assert padding(batches) < 0.5 * padding(plain)
    # grouped batches come in shuffled order, not shortest first
    assert [max(len(r[0]) for r in b) for b in batches[:8]] != sorted(max(len(r[0]) for r in b) for b in batches[:8])
