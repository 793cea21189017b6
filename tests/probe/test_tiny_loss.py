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
