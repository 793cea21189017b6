"""X-FACTR multi-token decoding for masked LMs, without candidates.

For every mask count m = 1..M the slot becomes m masks and is filled:
- initial prediction: ``independent`` (all masks at once, one pass), ``order`` (left to right, one mask per
  pass) or ``confidence`` (each pass fills the still-masked position whose best token is most probable);
- optional refinement: positions are re-masked and re-predicted left to right (``refine_order="order"``)
  or lowest-confidence first (``"confidence"``) until a sweep changes nothing or T = 2m re-predictions;
- the answer length m is chosen by the mean (length-normalised) or the sum of the filled tokens'
  log-probs (each token's log-prob from the pass that last predicted it).
Prompts of a batch advance step by step together; every step is one forward pass over the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factatlas.probe.batching import pad_right, token_budget_batches
from factatlas.probe.models import LoadedModel
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import special_wrap, tokenize_slots

INITS = ("independent", "order", "confidence")
LENGTHS = ("mean", "sum")


@dataclass(frozen=True, slots=True)
class Decoded:
    tokens: tuple[int, ...]
    logps: tuple[float, ...]

    def score(self, length: str) -> float:
        total = sum(self.logps)
        return total / len(self.logps) if length == "mean" else total


class XFactrDecoder:
    scoring = "xfactr"

    def __init__(self, lm: LoadedModel, max_masks: int = 5, init: str = "confidence", refine: bool = True,
                 length: str = "mean", refine_order: str = "order", batch_tokens: int = 8192):
        if lm.family != "mlm":
            raise ValueError(f"X-FACTR decoding needs a masked LM, got a {lm.family} model")
        if init not in INITS:
            raise ValueError(f"unknown X-FACTR initial prediction '{init}'; expected one of {INITS}")
        if length not in LENGTHS:
            raise ValueError(f"unknown X-FACTR length choice '{length}'; expected one of {LENGTHS}")
        if refine_order not in ("order", "confidence"):
            raise ValueError(f"unknown refinement order '{refine_order}'; expected order or confidence")
        self.lm, self.max_masks, self.init, self.refine = lm, max_masks, init, refine
        self.length, self.refine_order, self.batch_tokens = length, refine_order, batch_tokens

    def context_needs(self, prompts: Sequence[str], slots=None):
        """Per prompt, its tokens around the slot, special tokens and up to ``max_masks`` masks."""
        from factatlas.probe.context import Need, short

        if slots is None:
            slots = tokenize_slots(self.lm.tokenizer, [ClozeQuery(p, ("x",)) for p in prompts])
        wrap = special_wrap(self.lm.tokenizer)
        bare = [len(wrap.head) + len(s.prefix) + len(s.suffix) + len(wrap.tail) for s in slots]
        return [Need(n + self.max_masks, f"prompt {short(p)} ({n} prompt tokens + up to {self.max_masks} masks, "
                                         "--xfactr-max-masks)") for p, n in zip(prompts, bare, strict=True)]

    def check_texts(self, prompts: Sequence[str]) -> None:
        """Every prompt of the run checked against the model's context before the first forward pass."""
        from factatlas.probe.context import CANDIDATE_FIX, check_before_scoring, text_bound

        check_before_scoring(prompts, lambda p: text_bound(p) + self.max_masks, self.context_needs, self.lm,
                             CANDIDATE_FIX)

    def generate(self, prompts: Sequence[str]) -> list[str]:
        best = self.decode(prompts)
        tok = self.lm.tokenizer
        return [tok.decode(list(d.tokens), skip_special_tokens=True).strip() for d in best]

    def decode(self, prompts: Sequence[str]) -> list[Decoded]:
        """The chosen fill per prompt (over m = 1..max_masks)."""
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        slots = tokenize_slots(self.lm.tokenizer, [ClozeQuery(p, ("x",)) for p in prompts])
        refuse_overlong(self.context_needs(prompts, slots), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        best: list[Decoded | None] = [None] * len(prompts)
        for m in range(1, self.max_masks + 1):
            for i, d in enumerate(self.decode_length(slots, m)):
                if best[i] is None or d.score(self.length) > best[i].score(self.length):
                    best[i] = d
        return best  # type: ignore[return-value]

    def decode_length(self, slots, m: int) -> list[Decoded]:
        import torch

        tok, model, device = self.lm.tokenizer, self.lm.model, self.lm.device
        wrap = special_wrap(tok)
        mask_id = tok.mask_token_id
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        rows = [wrap.wrap([*s.prefix, *([mask_id] * m), *s.suffix]) for s in slots]
        starts = [len(wrap.head) + len(s.prefix) for s in slots]
        out: list[Decoded] = [Decoded((), ())] * len(slots)
        banned = torch.tensor(sorted(set(tok.all_special_ids)), dtype=torch.long)
        with torch.inference_mode():
            for batch in token_budget_batches([len(r) for r in rows], self.batch_tokens):
                ids, attn = pad_right([rows[i] for i in batch], pad_id)
                ids, attn = ids.to(device), attn.to(device)
                b = torch.arange(len(batch), device=device)
                pos = torch.tensor([starts[i] for i in batch], device=device)[:, None] + torch.arange(m, device=device)
                logps = torch.zeros((len(batch), m), dtype=torch.float64, device=device)
                filled = torch.zeros((len(batch), m), dtype=torch.bool, device=device)

                def predict(ids=ids, attn=attn, b=b, pos=pos):
                    logits = model(input_ids=ids, attention_mask=attn).logits
                    lp = torch.log_softmax(logits[b[:, None], pos].float(), dim=-1)  # [B, m, V]
                    lp[..., banned.to(device)] = float("-inf")
                    return lp.max(dim=-1)  # values, tokens: [B, m]

                if self.init == "independent":
                    values, tokens = predict()
                    ids[b[:, None], pos] = tokens
                    logps, filled[:] = values.double(), True
                else:
                    for j in range(m):
                        values, tokens = predict()
                        if self.init == "order":
                            col = torch.full((len(batch),), j, device=device)
                        else:
                            col = values.masked_fill(filled, float("-inf")).argmax(dim=1)
                        ids[b, pos[b, col]] = tokens[b, col]
                        logps[b, col] = values[b, col].double()
                        filled[b, col] = True
                if self.refine:
                    self._refine(ids, pos, logps, b, mask_id, predict, m)
                tokens = ids[b[:, None], pos].tolist()
                for r, i in enumerate(batch):
                    out[i] = Decoded(tuple(tokens[r]), tuple(logps[r].tolist()))
        return out

    def _refine(self, ids, pos, logps, b, mask_id, predict, m: int) -> None:
        import torch

        budget = 2 * m
        while budget > 0:
            changed = torch.zeros(len(b), dtype=torch.bool, device=ids.device)
            if self.refine_order == "order":
                columns = [torch.full((len(b),), j, device=ids.device) for j in range(m)]
            else:
                order = logps.argsort(dim=1)  # lowest confidence first, per row
                columns = [order[:, j] for j in range(m)]
            for col in columns:
                if budget == 0:
                    break
                budget -= 1
                old = ids[b, pos[b, col]].clone()
                ids[b, pos[b, col]] = mask_id
                values, tokens = predict()
                ids[b, pos[b, col]] = tokens[b, col]
                logps[b, col] = values[b, col].double()
                changed |= tokens[b, col] != old
            if not bool(changed.any()):
                break
