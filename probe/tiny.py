"""Tiny models for offline tests and the quickstart: BERT, GPT-2 and T5 built from configs.

A tokenizer is trained on the benchmark's own text with the ``tokenizers`` library (well under a second),
a small model is built from a config, optionally fine-tuned for a few hundred CPU steps on true facts
(so that it really "knows" them), and everything is saved with ``save_pretrained``: tiny models load
through exactly the same path as real ones (``load_model(folder)``).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.probe.models import LoadedModel, wrap_model
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import special_wrap, tokenize_slots
from factatlas.probe.threads import torch_threads
from factatlas.records import ANSWER_MARKER, Prompt
from factatlas.stopwatch import section

TINY_FAMILIES = {"bert": "mlm", "gpt2": "causal", "t5": "seq2seq"}
N_SENTINELS = 8
# A chat template in the style of instruction-tuned models (role tags, the assistant turn opened by the
# generation prompt); plain text tags, so the byte-level BPE learns them from the conversations it sees.
# Like Llama's templates it opens with the BOS token, so the rendered text is the whole model input.
TINY_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@dataclass(frozen=True, slots=True)
class TinySize:
    hidden: int = 64
    layers: int = 2
    heads: int = 2
    intermediate: int = 128
    max_positions: int = 128
    # No dropout: a tiny model is trained for a few hundred steps to memorise its facts, and dropout both
    # slows that (dev P@1 0.42 vs 0.46 after 300 steps of batch 32) and costs an eighth of a CPU step.
    dropout: float = 0.0


@dataclass(frozen=True, slots=True)
class ClozeExample:
    """A true fact as a cloze: the filler ``form`` goes where the prompt's answer marker was."""

    text: str  # with ANSWER_MARKER
    form: str


def wordpiece_vocab(texts: Sequence[str], vocab_size: int, specials: Sequence[str]) -> dict[str, int]:
    """A WordPiece vocabulary that is the same on every run: BPE pieces, each also as a ``##`` continuation.

    tokenizers' WordPieceTrainer creates its ``##`` pieces in hash-map order, so on count ties two runs on
    the same text pick different merges (huggingface/tokenizers#1794): the quickstart's tiny model then
    differed from run to run. A plain BPE trainer numbers its alphabet in sorted order and is repeatable;
    its pieces, each usable word-initially and (``##``) inside a word, make a vocabulary WordPiece's greedy
    longest-match tokenizes any word of the alphabet with: up to twice ``vocab_size`` entries."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token="[UNK]"))
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    # The pre-tokenizer splits on whitespace, so n copies of a text joined by spaces give the trainer the same
    # word counts as n separate texts, in one string: identical vocabulary, a third of the training time
    # (the quickstart's 434,230 texts are 11,360 distinct ones; every prompt lists its candidates' forms).
    counted = Counter(texts)
    bpe.train_from_iterator([" ".join([text] * n) for text, n in counted.items()],
                            trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(specials),
                                                show_progress=False))
    pieces = [t for t, _ in sorted(bpe.get_vocab().items(), key=lambda kv: kv[1]) if t not in specials]
    vocab = {t: i for i, t in enumerate(specials)}
    for piece in pieces:
        for form in (piece, f"##{piece}"):
            vocab.setdefault(form, len(vocab))
    return vocab


def train_tokenizer(texts: Iterable[str], arch: str, vocab_size: int = 1000):
    """A fast tokenizer for ``arch`` ("bert" WordPiece, "gpt2" byte-level BPE, "t5" Unigram with sentinels)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    texts = list(texts)
    if arch == "bert":
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(wordpiece_vocab(texts, vocab_size, specials), unk_token="[UNK]"))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
        return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]",
                                       cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    if arch == "gpt2":
        tok = Tokenizer(models.BPE())
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(texts, trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                       eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                       unk_token="<|endoftext|>")
    if arch == "t5":
        sentinels = [f"<extra_id_{i}>" for i in range(N_SENTINELS)]
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        tok.train_from_iterator(texts, trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=["<pad>", "</s>", "<unk>", *sentinels], unk_token="<unk>"))
        eos_id = tok.token_to_id("</s>")
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos_id)])
        return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>",
                                       unk_token="<unk>", additional_special_tokens=sentinels)
    raise ValueError(f"unknown tiny architecture '{arch}'; expected one of {sorted(TINY_FAMILIES)}")


def build_model(arch: str, tokenizer, size: TinySize = TinySize(), seed: int = 0):
    """A randomly initialised model of ``arch`` sized ``size``, vocabulary matching ``tokenizer``."""
    import torch
    import transformers

    torch.manual_seed(seed)
    vocab = len(tokenizer)
    if arch == "bert":
        config = transformers.BertConfig(
            vocab_size=vocab, hidden_size=size.hidden, num_hidden_layers=size.layers,
            num_attention_heads=size.heads, intermediate_size=size.intermediate,
            max_position_embeddings=size.max_positions, pad_token_id=tokenizer.pad_token_id,
            hidden_dropout_prob=size.dropout, attention_probs_dropout_prob=size.dropout)
        model = transformers.BertForMaskedLM(config)
    elif arch == "gpt2":
        config = transformers.GPT2Config(
            vocab_size=vocab, n_embd=size.hidden, n_layer=size.layers, n_head=size.heads,
            n_inner=size.intermediate, n_positions=size.max_positions,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id, resid_pdrop=size.dropout, embd_pdrop=size.dropout,
            attn_pdrop=size.dropout)
        model = transformers.GPT2LMHeadModel(config)
    elif arch == "t5":
        config = transformers.T5Config(
            vocab_size=vocab, d_model=size.hidden, d_kv=size.hidden // size.heads, d_ff=size.intermediate,
            num_layers=size.layers, num_heads=size.heads, pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id,
            feed_forward_proj="relu", tie_word_embeddings=False, dropout_rate=size.dropout)
        model = transformers.T5ForConditionalGeneration(config)
    else:
        raise ValueError(f"unknown tiny architecture '{arch}'; expected one of {sorted(TINY_FAMILIES)}")
    model.eval()
    return model


def _training_rows(lm: LoadedModel, examples: Sequence[ClozeExample]) -> list[tuple[list[int], list[int]]]:
    """(input ids, labels) for one example each; labels use -100 where nothing is predicted.

    MLM: the slot's last ``k - j`` tokens are masked for a random ``j`` (j = 0 is the fully masked slot the
    independent rule reads, j > 0 the partially filled inputs of the left-to-right rule). Causal: the
    whole sentence. Seq2seq: the slot as ``<extra_id_0>``, target ``<extra_id_0> form <extra_id_1>``; a
    slot that ends the text (question + answer) is plain QA: target ``form </s>``.
    Masked inputs are drawn afresh at every step, so this returns the unmasked pieces for MLM.
    """
    tok = lm.tokenizer
    slots = tokenize_slots(tok, [ClozeQuery(e.text, (e.form,)) for e in examples])
    wrap = special_wrap(tok)
    rows = []
    for s in slots:
        cand = list(s.candidates[0])
        if lm.family == "seq2seq" and not s.suffix:
            # The slot ends the text (a question and its answer): plain QA, the way instruction-tuned
            # seq2seq models answer, so greedy generation stops at </s>.
            rows.append((wrap.wrap(list(s.prefix)), [*cand, tok.eos_token_id]))
        elif lm.family == "seq2seq":
            s0, s1 = tok.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>"])
            rows.append((wrap.wrap([*s.prefix, s0, *s.suffix]), [s0, *cand, s1]))
        elif lm.family == "causal":
            from factatlas.probe.causal import context_start

            ids = [*context_start(tok, s.prefix), *cand, *s.suffix, tok.eos_token_id]
            rows.append((ids, list(ids)))
        else:
            start = len(wrap.head) + len(s.prefix)
            rows.append((wrap.wrap([*s.prefix, *cand, *s.suffix]), [start, len(cand)]))
    return rows


def finetune(lm: LoadedModel, examples: Sequence[ClozeExample], steps: int = 300, batch_size: int = 16,
             lr: float = 3e-3, seed: int = 0, full_logits: bool = False, fused: bool = True) -> list[float]:
    """A few hundred AdamW steps on true facts; returns the loss per step. Leaves the model in eval mode.
    ``full_logits``: the masked-LM loss through the model's own ``labels=`` path (see ``masked_lm_loss``);
    ``fused=False``: torch's per-tensor AdamW. Both are the baselines of ``benchmarks/tiny_finetune.py``."""
    import torch

    from factatlas.probe.batching import pad_right

    if not examples or steps <= 0:
        return []
    rng = random.Random(seed)
    torch.manual_seed(seed)
    rows = _training_rows(lm, examples)
    tok, model = lm.tokenizer, lm.model
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    opt = adamw(model.parameters(), lr, fused)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    model.train()
    losses = []
    report = StepReport(f"fine-tuning {lm.name}", steps)
    with torch.enable_grad(), report:
        for batch in length_grouped_batches(rows, steps, min(batch_size, len(rows)), rng):
            if lm.family == "mlm":
                inputs, labels = [], []
                for ids, (start, k) in batch:
                    j = rng.randrange(k) if k else 0
                    masked, lab = list(ids), [-100] * len(ids)
                    for p in range(start + j, start + k):
                        lab[p], masked[p] = ids[p], tok.mask_token_id
                    inputs.append(masked)
                    labels.append(lab)
                x, mask = pad_right(inputs, pad_id)
                y, _ = pad_right(labels, -100)
                loss = masked_lm_loss(model, x, mask, y, full=full_logits)
            elif lm.family == "causal":
                x, mask = pad_right([b[0] for b in batch], pad_id)
                y = x.masked_fill(mask == 0, -100)
                loss = model(input_ids=x, attention_mask=mask, labels=y).loss
            else:
                x, mask = pad_right([b[0] for b in batch], pad_id)
                y, _ = pad_right([b[1] for b in batch], -100)
                loss = model(input_ids=x, attention_mask=mask, labels=y).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(loss.item())
            report.step(losses[-1])
    model.eval()
    return losses


def length_grouped_batches(rows: Sequence[tuple[list[int], Any]], steps: int, batch_size: int,
                           rng: random.Random, group: int = 8) -> list[list[tuple[list[int], Any]]]:
    """``steps`` batches of rows drawn uniformly with replacement, ``group`` batches at a time sorted by
    length before they are cut and shuffled: every row is as likely as before, and a batch pads to a
    length its rows nearly share (random batches of the quickstart's facts were 38 % padding)."""
    batches: list[list[tuple[list[int], Any]]] = []
    while len(batches) < steps:
        drawn = sorted((rows[rng.randrange(len(rows))] for _ in range(batch_size * group)), key=lambda r: len(r[0]))
        cut = [drawn[i: i + batch_size] for i in range(0, len(drawn), batch_size)]
        rng.shuffle(cut)
        batches.extend(cut)
    return batches[:steps]


def adamw(parameters, lr: float, fused: bool = True):
    """AdamW without weight decay, fused into one kernel where torch has one for the parameters' device:
    a tiny model has few, small tensors, and the per-tensor loop was about a fifth of a CPU training step
    (5.4 of 28 ms; ``benchmarks/tiny_finetune.py``)."""
    import torch

    parameters = list(parameters)
    if fused:
        try:
            return torch.optim.AdamW(parameters, lr=lr, weight_decay=0.0, fused=True)
        except (RuntimeError, ValueError):  # no fused kernel for this device or dtype
            pass
    return torch.optim.AdamW(parameters, lr=lr, weight_decay=0.0)


def masked_lm_loss(model, input_ids, attention_mask, labels, full: bool = False):
    """The masked-LM loss with the vocabulary projection computed at the masked positions only.

    The model's own ``labels=`` path projects every position onto the vocabulary and then ignores all but
    the few masked ones; on a tiny BERT that projection is most of a training step. Same loss (the mean
    cross-entropy over the positions whose label is not -100); ``full=True`` is the model's own path, the
    baseline of ``benchmarks/tiny_finetune.py``; models without a BERT-style head (``cls``) always take it.
    """
    import torch

    head = getattr(model, "cls", None)
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    if full or head is None or base is None:
        return model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
    hidden = base(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    chosen = labels != -100
    logits = head(hidden[chosen])
    return torch.nn.functional.cross_entropy(logits, labels[chosen])


class StepReport:
    """Progress of a training loop on stderr: a rich bar on a terminal, and a plain line at every quarter
    when stderr is a file or a pipe (a bar is invisible there), so a redirected log shows where time goes."""

    def __init__(self, description: str, total: int):
        from factatlas.console import err, progress

        self.description, self.total, self.done, self.err = description, total, 0, err
        self.bar = progress() if err.is_terminal else None
        self.marks = {max(1, round(total * q / 4)) for q in (1, 2, 3, 4)}
        self.started = 0.0

    def __enter__(self) -> StepReport:
        import time

        self.started = time.perf_counter()
        if self.bar is not None:
            self.bar.__enter__()
            self.task = self.bar.add_task(self.description, total=self.total)
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def step(self, loss: float) -> None:
        import time

        self.done += 1
        if self.bar is not None:
            self.bar.advance(self.task)
        elif self.done in self.marks:
            self.err.print(f"{self.description}: step {self.done}/{self.total}, loss {loss:.3f}, "
                           f"{time.perf_counter() - self.started:.1f} s", highlight=False)


def tokenizer_texts(prompts: Iterable[Prompt]) -> list[str]:
    """Everything a tokenizer should have seen: prompts (marker removed), fillers, gold forms."""
    texts: list[str] = []
    for p in prompts:
        texts.append(p.text.replace(ANSWER_MARKER, " "))
        texts.extend(p.candidate_forms)
        for forms in p.gold_forms:
            texts.extend(forms)
    return texts


def true_fact_examples(prompts: Iterable[Prompt], splits: Sequence[str] | None = None) -> list[ClozeExample]:
    """Cloze prompts filled with their gold candidate's form (the first gold among the candidates)."""
    out = []
    for p in prompts:
        if p.kind != "cloze" or (splits is not None and p.split not in splits):
            continue
        forms = dict(zip(p.candidate_qids, p.candidate_forms, strict=True))
        gold = next((q for q in p.gold_qids if q in forms), None)
        if gold is not None:
            out.append(ClozeExample(p.text, forms[gold]))
    return out


def render_tiny_chat(messages: Sequence[Mapping[str, str]], add_generation_prompt: bool = True) -> str:
    """TINY_CHAT_TEMPLATE rendered with jinja2 (training text before a tokenizer exists), without the BOS
    token: fine-tuning puts the tokenizer's BOS id first itself (``causal.context_start``)."""
    import jinja2

    return jinja2.Template(TINY_CHAT_TEMPLATE).render(messages=list(messages), bos_token="",
                                                     add_generation_prompt=add_generation_prompt)


def chat_examples(prompts: Iterable[Prompt], splits: Sequence[str], system: str | None = None) -> list[ClozeExample]:
    """Question prompts of ``splits`` as one-turn conversations answered by their gold form."""
    out = []
    for p in prompts:
        if p.kind != "question" or p.split not in splits or not (p.gold_forms and p.gold_forms[0]):
            continue
        messages = [{"role": "system", "content": system}] if system else []
        rendered = render_tiny_chat([*messages, {"role": "user", "content": p.text}])
        out.append(ClozeExample(rendered + ANSWER_MARKER + "\n", p.gold_forms[0][0]))
    return out


def make_tiny_model(out_dir: str | Path, arch: str, texts: Sequence[str], *,
                    examples: Sequence[ClozeExample] = (), steps: int = 0, size: TinySize = TinySize(),
                    vocab_size: int = 1000, seed: int = 0, lr: float = 3e-3, batch_size: int = 16,
                    chat_template: str | None = None) -> Path:
    """Train a tokenizer on ``texts``, build a tiny ``arch`` model, fine-tune it, save it to ``out_dir``.
    ``chat_template`` (e.g. TINY_CHAT_TEMPLATE) is set on the tokenizer: a tiny instruction-tuned model."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    if arch not in TINY_FAMILIES:
        raise ValueError(f"unknown tiny architecture '{arch}'; expected one of {sorted(TINY_FAMILIES)}")
    with section("probe/tiny model: tokenizer"):
        tokenizer = train_tokenizer(texts, arch, vocab_size)
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    model = build_model(arch, tokenizer, size, seed)
    lm = wrap_model(model, tokenizer, name=f"tiny-{arch}", family=TINY_FAMILIES[arch])
    # tiny matrices: one thread (factatlas.probe.threads)
    with torch_threads(model, "cpu"), section("probe/tiny model: fine-tune"):
        finetune(lm, examples, steps=steps, lr=lr, seed=seed, batch_size=batch_size)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
