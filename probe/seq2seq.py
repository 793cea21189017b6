"""Seq2seq (mT5) sentinel scoring: the encoder runs once per prompt, candidates share its output.

Input: the prompt with ``<extra_id_0>`` in the slot. Target for candidate c: ``<extra_id_0> c <extra_id_1>``,
scored by teacher forcing; score(c) = mean log p over the target tokens. A batch of prompts is encoded
once; the encoder states are selected once per candidate row and every candidate of the batch is
decoded in one pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from factatlas.probe.batching import greedy_batches, pad_right
from factatlas.probe.causal import LOGIT_BUDGET
from factatlas.probe.models import LoadedModel
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots

SENTINELS = ("<extra_id_0>", "<extra_id_1>")


def sentinel_ids(tokenizer) -> tuple[int, int]:
    ids = tokenizer.convert_tokens_to_ids(list(SENTINELS))
    if any(i is None or i == tokenizer.unk_token_id for i in ids):
        raise ValueError(f"tokenizer has no {SENTINELS[0]}/{SENTINELS[1]} sentinels: not a T5-style model")
    return ids[0], ids[1]


class Seq2SeqScorer:
    scoring = "seq2seq"

    def __init__(self, lm: LoadedModel, batch_tokens: int = 8192):
        if lm.family != "seq2seq":
            raise ValueError(f"Seq2SeqScorer needs an encoder-decoder model, got a {lm.family} model")
        self.lm, self.batch_tokens = lm, batch_tokens
        self.s0, self.s1 = sentinel_ids(lm.tokenizer)

    def context_needs(self, queries: Sequence[ClozeQuery], slots: Sequence[SlotTokens] | None = None):
        """Per query: the encoder reads the prompt with one sentinel; the decoder reads the start token,
        sentinel and candidate (the closing sentinel is only predicted); the larger of the two."""
        from factatlas.probe.context import Need, short

        slots = tokenize_slots(self.lm.tokenizer, queries) if slots is None else slots
        needs = []
        for q, s in zip(queries, slots, strict=True):
            enc, dec = len(self.encoder_input(s)), max((len(self.target(c)) for c in s.candidates), default=0)
            needs.append(Need(max(enc, dec), f"prompt {short(q.text)} ({enc} encoder tokens, {dec} decoder tokens "
                                             "for its longest candidate)"))
        return needs

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        slots = tokenize_slots(self.lm.tokenizer, queries)
        refuse_overlong(self.context_needs(queries, slots), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        return self.score_slots(slots)

    def encoder_input(self, slot: SlotTokens) -> list[int]:
        return special_wrap(self.lm.tokenizer).wrap([*slot.prefix, self.s0, *slot.suffix])

    def target(self, cand: Sequence[int]) -> list[int]:
        return [self.s0, *cand, self.s1]

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        import torch

        tok, model, device = self.lm.tokenizer, self.lm.model, self.lm.device
        start_id = model.config.decoder_start_token_id
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        vocab = model.get_output_embeddings().weight.shape[0]
        enc = [self.encoder_input(s) for s in slots]
        targets = [[self.target(c) for c in s.candidates] for s in slots]
        costs = [(len(e) + sum(len(t) for t in ts), sum(len(t) for t in ts) * vocab) for e, ts in zip(enc, targets, strict=True)]
        order = sorted(range(len(slots)), key=lambda i: -len(enc[i]))
        scores: list[list[float]] = [[0.0] * len(ts) for ts in targets]
        encoder = model.get_encoder()
        with torch.inference_mode():
            for batch in greedy_batches(order, costs, (self.batch_tokens, LOGIT_BUDGET)):
                ids, mask = pad_right([enc[i] for i in batch], pad_id)
                ids, mask = ids.to(device), mask.to(device)
                states = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
                row_prompt, rows, owners = [], [], []
                for b, i in enumerate(batch):
                    for ci, t in enumerate(targets[i]):
                        row_prompt.append(b)
                        rows.append(t)
                        owners.append((i, ci))
                index = torch.tensor(row_prompt, device=device)
                labels, label_mask = pad_right(rows, pad_id)
                decoder_in = torch.cat([torch.full((len(rows), 1), start_id, dtype=torch.long), labels[:, :-1]], dim=1)
                from transformers.modeling_outputs import BaseModelOutput

                out = model(encoder_outputs=BaseModelOutput(last_hidden_state=states[index]),
                            attention_mask=mask[index], decoder_input_ids=decoder_in.to(device),
                            decoder_attention_mask=label_mask.to(device), use_cache=False)
                logp = torch.log_softmax(out.logits.float(), dim=-1)
                picked = logp.gather(-1, labels.to(device)[..., None])[..., 0].double()
                picked = picked * label_mask.to(device)
                sums = picked.sum(dim=1).cpu().tolist()
                for (i, ci), total, t in zip(owners, sums, rows, strict=True):
                    scores[i][ci] = total / len(t)
        return [tuple(s) for s in scores]
