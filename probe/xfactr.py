"""X-FACTR multi-token decoding for masked LMs, without candidates.

For every mask count m = 1..M the slot becomes m masks and is filled:
- initial prediction: ``independent`` (all masks at once, one pass), ``order`` (left to right, one mask per
  pass) or ``confidence`` (each pass fills the still-masked position whose best token is most probable);
- optional beam search over the initial prediction (``beam`` > 1, order or confidence init, §4.1): each
  step extends every kept partial fill with its ``beam`` best tokens at the position it fills next and
  keeps the ``beam`` fills with the highest sum of log-probs; the best one is refined;
- optional refinement: positions are re-masked and re-predicted left to right (``refine_order="order"``)
  until a sweep changes nothing, or lowest confidence first (``"confidence"``, §4.2): at every step the
  confidence of each position is re-computed as the log-prob of its current token with that position
  masked and everything else filled (one pass over m copies of the prompt), the least confident position
  takes its best token, and the loop stops when that changes nothing; either way at most T = 2m
  re-predictions;
- the answer length m is chosen by the mean (length-normalised) or the sum of the filled tokens'
  log-probs (each token's log-prob from the pass that last predicted it; after confidence refinement the
  re-computed confidences), among the mask counts allowed for the prompt: 1..M (M per language with
  ``max_masks_by_lang``), or only the gold answer's own token count (``masks="oracle"``, Fig. 4).
Prompts of a batch advance step by step together; every step is one forward pass over the batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from factatlas.errors import ConfigError
from factatlas.probe.batching import pad_right, token_budget_batches
from factatlas.probe.models import LoadedModel
from factatlas.probe.options import ANSWER_LANGS, Option, Options, parse_lang_ints
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import special_wrap, tokenize_slots
from factatlas.records import Prompt

INITS = ("independent", "order", "confidence")
LENGTHS = ("mean", "sum")
MASK_CHOICES = ("search", "oracle")
REFINE_ORDERS = ("order", "confidence")


@dataclass(frozen=True)
class XFactrOptions(Options):
    """The options of the ``xfactr`` rule, each validated by its declaration (field names as probe.json
    has always recorded them)."""

    xfactr_init: str = Option("--xfactr-init", "confidence", "independent | order | confidence.",
                              choices=INITS).field()
    xfactr_refine: bool = Option("--xfactr-refine/--no-xfactr-refine", True, "X-FACTR refinement.",
                                 cli_type=bool).field()
    xfactr_length: str = Option("--xfactr-length", "mean", "Choose the answer length by mean | sum.",
                                choices=LENGTHS).field()
    xfactr_max_masks: int = Option("--xfactr-max-masks", 5, "Largest mask count tried.", cli_type=int,
                                   minimum=1).field()
    xfactr_refine_order: str = Option("--xfactr-refine-order", "order", "order (left to right sweeps) | confidence "
                                      "(lowest re-computed confidence first).", choices=REFINE_ORDERS).field()
    xfactr_beam: int = Option("--xfactr-beam", 1, "Beam size of the initial prediction (1: greedy; order or "
                              "confidence init).", cli_type=int, minimum=1).field()
    xfactr_masks: str = Option("--xfactr-masks", "search", "search (try 1..M, keep the best score) | oracle (the "
                               "gold answer's token count).", choices=MASK_CHOICES).field()
    xfactr_max_masks_by_lang: tuple[tuple[str, int], ...] = Option(
        "--xfactr-max-masks-lang", (), "Largest mask count for one language (repeatable), e.g. ja=8.",
        cli_type=list[str], parse=parse_lang_ints, metavar="LANG=M").field()
    answer_langs: str = ANSWER_LANGS.field()

    def check(self) -> None:
        if self.xfactr_beam > 1 and self.xfactr_init == "independent":
            raise ConfigError(f"--xfactr-beam {self.xfactr_beam}: beam search needs an order or confidence "
                              "initial prediction (--xfactr-init), not independent")


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
                 length: str = "mean", refine_order: str = "order", batch_tokens: int = 8192, beam: int = 1,
                 masks: str = "search", max_masks_by_lang: Mapping[str, int] | None = None):
        if lm.family != "mlm":
            raise ValueError(f"X-FACTR decoding needs a masked LM, got a {lm.family} model")
        XFactrOptions(xfactr_init=init, xfactr_refine=refine, xfactr_length=length, xfactr_max_masks=max_masks,
                      xfactr_refine_order=refine_order, xfactr_beam=beam, xfactr_masks=masks,
                      xfactr_max_masks_by_lang=tuple(sorted((max_masks_by_lang or {}).items())))  # validates
        self.lm, self.max_masks, self.init, self.refine = lm, max_masks, init, refine
        self.length, self.refine_order, self.batch_tokens = length, refine_order, batch_tokens
        self.beam, self.masks = beam, masks
        self.max_masks_by_lang = dict(max_masks_by_lang or {})
        self.counts: Counter = Counter()  # fallbacks, merged into probe.json's counts by the runner

    @classmethod
    def from_options(cls, lm: LoadedModel, options: XFactrOptions, batch_tokens: int = 8192) -> XFactrDecoder:
        return cls(lm, max_masks=options.xfactr_max_masks, init=options.xfactr_init, refine=options.xfactr_refine,
                   length=options.xfactr_length, refine_order=options.xfactr_refine_order, batch_tokens=batch_tokens,
                   beam=options.xfactr_beam, masks=options.xfactr_masks,
                   max_masks_by_lang=dict(options.xfactr_max_masks_by_lang))

    def largest_mask_count(self) -> int:
        """The most masks any language may get (the context check holds for every language)."""
        return max([self.max_masks, *self.max_masks_by_lang.values()])

    def context_needs(self, prompts: Sequence[str], slots=None):
        """Per prompt, its tokens around the slot, special tokens and up to ``max_masks`` masks."""
        from factatlas.probe.context import Need, short

        if slots is None:
            slots = tokenize_slots(self.lm.tokenizer, [ClozeQuery(p, ("x",)) for p in prompts])
        wrap = special_wrap(self.lm.tokenizer)
        bare = [len(wrap.head) + len(s.prefix) + len(s.suffix) + len(wrap.tail) for s in slots]
        return [Need(n + self.largest_mask_count(), f"prompt {short(p)} ({n} prompt tokens + up to {self.largest_mask_count()} masks, "
                                         "--xfactr-max-masks)") for p, n in zip(prompts, bare, strict=True)]

    def check_texts(self, prompts: Sequence[str]) -> None:
        """Every prompt of the run checked against the model's context before the first forward pass."""
        from factatlas.probe.context import CANDIDATE_FIX, check_before_scoring, text_bound

        check_before_scoring(prompts, lambda p: text_bound(p) + self.largest_mask_count(), self.context_needs, self.lm,
                             CANDIDATE_FIX)

    def generate(self, prompts: Sequence[str], mask_counts: Sequence[Sequence[int]] | None = None) -> list[str]:
        best = self.decode(prompts, mask_counts)
        tok = self.lm.tokenizer
        return [tok.decode(list(d.tokens), skip_special_tokens=True).strip() for d in best]

    def max_masks_for(self, lang: str) -> int:
        return self.max_masks_by_lang.get(lang, self.max_masks)

    def mask_counts_for(self, prompts: Sequence[Prompt]) -> list[tuple[int, ...]]:
        """The mask counts tried per prompt: 1..M of its language, or (oracle) the token count of its
        first gold's slot form in context; a prompt without a gold form falls back to 1..M (counted)."""
        if self.masks == "search":
            return [tuple(range(1, self.max_masks_for(p.lang) + 1)) for p in prompts]
        forms = [p.gold_forms[0][0] if p.gold_forms and p.gold_forms[0] and p.gold_forms[0][0] else ""
                 for p in prompts]
        known = [i for i, f in enumerate(forms) if f]
        slots = tokenize_slots(self.lm.tokenizer, [ClozeQuery(prompts[i].text, (forms[i],)) for i in known])
        oracle = {i: len(s.candidates[0]) for i, s in zip(known, slots, strict=True)}
        out = []
        for i, p in enumerate(prompts):
            if oracle.get(i):
                out.append((oracle[i],))
                self.counts[f"xfactr/oracle-masks:{oracle[i]}"] += 1
            else:
                out.append(tuple(range(1, self.max_masks_for(p.lang) + 1)))
                self.counts["xfactr/oracle-fallback:no-gold-form"] += 1
        return out

    def decode(self, prompts: Sequence[str], mask_counts: Sequence[Sequence[int]] | None = None) -> list[Decoded]:
        """The chosen fill per prompt, over its allowed mask counts (default 1..max_masks for all)."""
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        slots = tokenize_slots(self.lm.tokenizer, [ClozeQuery(p, ("x",)) for p in prompts])
        refuse_overlong(self.context_needs(prompts, slots), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        allowed = ([tuple(range(1, self.max_masks + 1))] * len(prompts) if mask_counts is None
                   else [tuple(c) for c in mask_counts])
        best: list[Decoded | None] = [None] * len(prompts)
        for m in sorted({m for counts in allowed for m in counts}):
            idx = [i for i, counts in enumerate(allowed) if m in counts]
            for i, d in zip(idx, self.decode_length([slots[i] for i in idx], m), strict=True):
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
        # beam search and confidence refinement run several copies of each prompt per pass
        copies = max(self.beam, m if self.refine and self.refine_order == "confidence" else 1)
        with torch.inference_mode():
            for batch in token_budget_batches([len(r) * copies for r in rows], self.batch_tokens):
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

                if self.beam > 1:
                    best_ids, logps = self._beam_init(ids, attn, pos, m, banned.to(device))
                    ids.copy_(best_ids)  # in place: predict() reads this tensor
                elif self.init == "independent":
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
                if self.refine and self.refine_order == "confidence":
                    self._refine_confidence(ids, attn, pos, logps, mask_id, banned.to(device), m)
                elif self.refine:
                    self._refine(ids, pos, logps, b, mask_id, predict, m)
                tokens = ids[b[:, None], pos].tolist()
                for r, i in enumerate(batch):
                    out[i] = Decoded(tuple(tokens[r]), tuple(logps[r].tolist()))
        return out

    def _refine(self, ids, pos, logps, b, mask_id, predict, m: int) -> None:
        """Left-to-right sweeps: re-mask each position and re-predict it, until a sweep changes nothing."""
        import torch

        budget = 2 * m
        while budget > 0:
            changed = torch.zeros(len(b), dtype=torch.bool, device=ids.device)
            for j in range(m):
                if budget == 0:
                    break
                budget -= 1
                col = torch.full((len(b),), j, device=ids.device)
                old = ids[b, pos[b, col]].clone()
                ids[b, pos[b, col]] = mask_id
                values, tokens = predict()
                ids[b, pos[b, col]] = tokens[b, col]
                logps[b, col] = values[b, col].double()
                changed |= tokens[b, col] != old
            if not bool(changed.any()):
                break

    def _masked_logprobs(self, ids, attn, rows, positions, banned):
        """log p over the vocabulary at ``positions[r]`` of row ``rows[r]`` of ``ids`` ([R, V]); special tokens
        banned."""
        import torch

        logits = self.lm.model(input_ids=ids, attention_mask=attn).logits
        lp = torch.log_softmax(logits[rows, positions].float(), dim=-1)
        lp[..., banned] = float("-inf")
        return lp

    def _refine_confidence(self, ids, attn, pos, logps, mask_id, banned, m: int) -> None:
        """Lowest re-computed confidence first (in place): see the module docstring."""
        import torch

        n, device = ids.shape[0], ids.device
        rows = torch.arange(n * m, device=device)
        col_of_row = rows % m
        rep_pos = pos.repeat_interleave(m, dim=0)[rows, col_of_row]  # copy r masks column r % m
        rep_attn = attn.repeat_interleave(m, dim=0)
        b = torch.arange(n, device=device)
        active = torch.ones(n, dtype=torch.bool, device=device)
        for _ in range(2 * m):
            rep = ids.repeat_interleave(m, dim=0)
            rep[rows, rep_pos] = mask_id
            lp = self._masked_logprobs(rep, rep_attn, rows, rep_pos, banned)  # [n*m, V]
            current = ids[b[:, None], pos].reshape(-1)  # [n*m]: each copy's own token
            confidence = lp.gather(1, current[:, None]).view(n, m).double()
            best_values, best_tokens = (x.view(n, m) for x in lp.max(dim=-1))
            col = confidence.argmin(dim=1)
            new = best_tokens[b, col]
            changed = active & (new != ids[b, pos[b, col]])
            logps[active] = confidence[active]
            logps[b[active], col[active]] = best_values[b, col][active].double()
            ids[b[changed], pos[b, col][changed]] = new[changed]
            active = changed
            if not bool(active.any()):
                break

    def _beam_init(self, ids, attn, pos, m: int, banned):
        """Beam search over the order- or confidence-based initial fill; returns (ids, logps) of the best
        fill per prompt (highest sum of log-probs; ties keep the earlier beam)."""
        import torch

        n, k, device = ids.shape[0], self.beam, ids.device
        ids, attn, pos = (x.repeat_interleave(k, dim=0) for x in (ids, attn, pos))
        rows = torch.arange(n * k, device=device)
        score = torch.full((n, k), float("-inf"), dtype=torch.float64, device=device)
        score[:, 0] = 0.0  # one live beam at the start; the dead copies never win a slot
        logps = torch.zeros((n * k, m), dtype=torch.float64, device=device)
        filled = torch.zeros((n * k, m), dtype=torch.bool, device=device)
        for step in range(m):
            logits = self.lm.model(input_ids=ids, attention_mask=attn).logits
            lp = torch.log_softmax(logits[rows[:, None], pos].float(), dim=-1)  # [n*k, m, V]
            lp[..., banned] = float("-inf")
            if self.init == "order":
                col = torch.full((n * k,), step, device=device)
            else:
                col = lp.max(dim=-1).values.masked_fill(filled, float("-inf")).argmax(dim=1)
            top_values, top_tokens = lp[rows, col].topk(k, dim=-1)  # [n*k, k]
            extended = (score.view(n * k, 1) + top_values.double()).view(n, k * k)
            score, flat = extended.topk(k, dim=1)  # sorted: beam 0 is the best
            parent = (torch.arange(n, device=device)[:, None] * k + flat // k).view(-1)
            choice = (flat % k).view(-1)
            token, value, column = top_tokens[parent, choice], top_values[parent, choice], col[parent]
            ids, logps, filled = ids[parent].clone(), logps[parent].clone(), filled[parent].clone()
            ids[rows, pos[rows, column]] = token
            logps[rows, column] = value.double()
            filled[rows, column] = True
        best = torch.arange(n, device=device) * k
        return ids[best].clone(), logps[best].clone()
