"""Generative QA: greedy answers to question prompts, matched against every alias of the valid objects.

Matching (PROBING.md): both sides are normalised — Unicode NFKC, case-folded, punctuation to spaces,
articles dropped, whitespace collapsed — and an answer is correct if it *equals* a normalised alias of a
valid object in any language (``generative``), or, in the named lenient mode, if such an alias occurs in
it as a whole-word substring (``generative-lenient``). Answers are cut at the first line break.

Which languages' forms count is a named choice (``ANSWER_LANGS``, X-FACTR §3.4 Table 5): ``any`` (every
language's labels, aliases and forms: the default), ``single`` (only the prompt's language) or ``double``
(the prompt's language and English).

Rankings rows of these rules: ``ranked_qids`` = the candidates whose aliases the answer matches, the most
specific (longest matching alias) first; ``scores`` = that alias length in characters; ``prediction`` = the
answer; ``correct_at_1`` = the answer matches a valid object.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence

from factatlas.benchmark import Benchmark
from factatlas.probe.batching import token_budget_batches
from factatlas.probe.models import LoadedModel
from factatlas.probe.options import ANSWER_LANGS as ANSWER_LANGS_OPTION
from factatlas.records import ANSWER_MARKER, ProbeResult, Prompt

# Articles (and elided forms, which punctuation stripping leaves as single letters) of the languages
# benchmarks use most; dropped as whole words on both sides of a comparison.
ARTICLES = frozenset({
    "a", "an", "the",  # en
    "le", "la", "les", "l", "un", "une", "des",  # fr
    "der", "die", "das", "den", "dem", "ein", "eine",  # de
    "el", "los", "las", "una", "unos", "unas",  # es
    "il", "lo", "gli", "i", "uno",  # it
    "o", "os", "as", "um", "uma",  # pt
    "de", "het", "een",  # nl ("de" is also a preposition elsewhere; dropped on both sides alike)
})


def normalise(text: str) -> str:
    """NFKC, case-fold, punctuation -> space, articles dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    chars = [" " if unicodedata.category(c).startswith(("P", "S")) else c for c in text]
    words = [w for w in "".join(chars).split() if w not in ARTICLES]
    return " ".join(words)


def first_line(answer: str) -> str:
    return answer.strip().split("\n", 1)[0].strip()


def matches(answer_norm: str, alias_norm: str, lenient: bool) -> bool:
    if not alias_norm:
        return False
    if not lenient:
        return answer_norm == alias_norm
    return f" {alias_norm} " in f" {answer_norm} "


def alias_index(prompts: Iterable[Prompt], bench: Benchmark | None = None) -> dict[str, set[str]]:
    """qid -> normalised surface forms in every language: candidate fillers, gold forms, and the labels
    and aliases of the benchmark's ``labels.parquet`` when it has one."""
    return aliases_in(alias_index_by_lang(prompts, bench), None)


def alias_index_by_lang(prompts: Iterable[Prompt], bench: Benchmark | None = None) -> dict[str, dict[str, set[str]]]:
    """qid -> language -> normalised surface forms (``alias_index`` before the languages are pooled)."""
    out: dict[str, dict[str, set[str]]] = {}
    for p in prompts:
        lang = p.lang
        for q, form in zip(p.candidate_qids, p.candidate_forms, strict=True):
            out.setdefault(q, {}).setdefault(lang, set()).add(normalise(form))
        for q, forms in zip(p.gold_qids, p.gold_forms, strict=True):
            out.setdefault(q, {}).setdefault(lang, set()).update(normalise(f) for f in forms)
    if bench is not None and (bench.path / "labels.parquet").is_file():
        for qid, entity in bench.entities.items():
            if qid in out:
                for lang in sorted(set(entity.labels) | set(entity.aliases)):
                    forms = (entity.labels.get(lang, ""), *entity.aliases.get(lang, ()))
                    out[qid].setdefault(lang, set()).update(normalise(x) for x in forms if x)
    for by_lang in out.values():
        for forms in by_lang.values():
            forms.discard("")
    return out


def aliases_in(by_lang: Mapping[str, Mapping[str, set[str]]], langs: frozenset[str] | None) -> dict[str, set[str]]:
    """qid -> the forms of the languages ``langs`` (None: every language) pooled."""
    return {q: set().union(*(f for lang, f in forms.items() if langs is None or lang in langs))
            for q, forms in by_lang.items()}


ANSWER_LANGS = ANSWER_LANGS_OPTION.choices  # the one declaration of --answer-langs


def accepted_languages(mode: str, prompt_lang: str) -> frozenset[str] | None:
    """The languages whose forms count for a prompt in ``prompt_lang`` (None: every language)."""
    if mode == "any":
        return None
    if mode == "single":
        return frozenset({prompt_lang})
    if mode == "double":
        return frozenset({prompt_lang, "en"})
    raise ValueError(f"unknown answer languages '{mode}'; expected one of {ANSWER_LANGS}")


class LanguageAliases:
    """The alias index seen from each prompt language under an ``ANSWER_LANGS`` mode (views cached)."""

    def __init__(self, by_lang: Mapping[str, Mapping[str, set[str]]], mode: str):
        accepted_languages(mode, "en")  # reject an unknown mode here, not on the first prompt
        self.by_lang, self.mode = by_lang, mode
        self._views: dict[str, dict[str, set[str]]] = {}
        self._pooled: dict[str, set[str]] | None = None

    @classmethod
    def pooled(cls, index: Mapping[str, set[str]]) -> LanguageAliases:
        """One index (qid -> forms) for every prompt language."""
        view = cls({}, "any")
        view._pooled = dict(index)
        return view

    @classmethod
    def of(cls, aliases: Mapping[str, set[str]] | LanguageAliases) -> LanguageAliases:
        """The one place a plain index becomes a ``LanguageAliases`` (callers may pass either)."""
        return aliases if isinstance(aliases, LanguageAliases) else cls.pooled(aliases)

    def for_lang(self, lang: str) -> dict[str, set[str]]:
        if self.mode == "any":  # every language's forms, the same for every prompt: pooled once
            if self._pooled is None:
                self._pooled = aliases_in(self.by_lang, None)
            return self._pooled
        if lang not in self._views:
            self._views[lang] = aliases_in(self.by_lang, accepted_languages(self.mode, lang))
        return self._views[lang]


def judge(answer: str, candidate_qids: Sequence[str], gold_qids: Sequence[str],
          aliases: Mapping[str, set[str]], lenient: bool) -> tuple[list[str], list[float], bool]:
    """(matched candidates, most specific first; their match lengths; correct)."""
    norm = normalise(first_line(answer))
    found: list[tuple[int, int, str]] = []
    for pos, q in enumerate(candidate_qids):
        best = max((len(a) for a in aliases.get(q, ()) if matches(norm, a, lenient)), default=0)
        if best:
            found.append((-best, pos, q))
    found.sort()
    gold = set(gold_qids)
    correct = any(q in gold for _, _, q in found)
    if not correct:  # a valid object outside the candidate set still counts
        correct = any(matches(norm, a, lenient) for q in gold for a in aliases.get(q, ()))
    return [q for _, _, q in found], [float(-n) for n, _, _ in found], correct


def prompt_text_for_generation(prompt: Prompt) -> str:
    """Question prompts as they are; a cloze prompt becomes its text before the slot."""
    text = prompt.text
    if ANSWER_MARKER in text:
        return text[: text.index(ANSWER_MARKER)].rstrip()
    return text


def answer_prompts(generator, prompts: Sequence[Prompt], aliases: Mapping[str, set[str]] | LanguageAliases,
                   model: str, scoring: str, chunk: int = 256, progress: Callable[[int], None] | None = None
                   ) -> list[ProbeResult]:
    """Answer and judge every prompt with the registered open-answer rule ``scoring``: its matcher (exact or
    lenient) and its prompts (questions, or the cloze text itself for a rule that reads cloze prompts).
    ``aliases``: one index for every prompt, or a ``LanguageAliases`` that restricts the accepted forms by
    the prompt's language. An X-FACTR decoder gets each prompt's allowed mask counts (per-language maxima,
    oracle)."""
    from factatlas.probe.ranking import ranking_row
    from factatlas.probe.rule import rule_named

    rule = rule_named(scoring)
    view = LanguageAliases.of(aliases)
    rows = []
    texts = [r.text if rule.prompts == "cloze" else prompt_text_for_generation(r) for r in prompts]
    check = getattr(generator, "check_texts", None)
    if check is not None:  # every prompt, before the first is answered
        check(texts)
    for start in range(0, len(prompts), chunk):
        part = prompts[start: start + chunk]
        part_texts = texts[start: start + chunk]
        if hasattr(generator, "mask_counts_for"):
            answers = generator.generate(part_texts, generator.mask_counts_for(part))
        else:
            answers = generator.generate(part_texts)
        for r, answer in zip(part, answers, strict=True):
            ranked, scores, correct = judge(answer, r.candidate_qids, r.gold_qids, view.for_lang(r.lang),
                                            rule.lenient)
            rows.append(ranking_row(r, model, scoring, ranked, scores, correct, first_line(answer)))
        if progress:
            progress(len(part))
    return rows


LINE_BREAK = ("\n",)


def stop_index(text: str, stops: Sequence[str]) -> int | None:
    """Where the first of ``stops`` begins in ``text`` with its leading whitespace removed (an answer
    that opens with a line break has not ended), or None."""
    found = [i for i in (text.lstrip().find(s) for s in stops if s) if i >= 0]
    return min(found) if found else None


def cut_at_stop(answer: str, stops: Sequence[str]) -> str:
    """The answer before its first stop string (leading whitespace ignored), stripped."""
    text = answer.lstrip()
    cut = stop_index(text, stops)
    return (text if cut is None else text[:cut]).strip()


def completing_tokens(tokenizer, stops: Sequence[str]):
    """Per token id, whether it can complete one of ``stops``: its text alone holds a stop string's last
    character, or U+FFFD (a byte token inside a character, which may be one). None when no such test is
    sound: a stop string that ends in whitespace other than a line break, which a decoder can make
    between tokens (WordPiece, SentencePiece) rather than from one token's text."""
    import torch

    lasts = {s[-1] for s in stops if s}
    if any(c.isspace() and c != "\n" for c in lasts):
        return None
    texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))], skip_special_tokens=True)
    return torch.tensor([("\ufffd" in t) or any(c in t for c in lasts) for t in texts], dtype=torch.bool)


def stop_strings_done(tokenizer, start: int, stops: Sequence[str] = LINE_BREAK, may_complete=None):
    """A stopping criterion: a row is done once its new text (from column ``start``, special tokens
    skipped, leading whitespace ignored) holds any of ``stops``. The text is decoded, not matched token
    by token, so a stop string split across tokens, or ending inside a longer token, is found at the
    token that completes it; the prompt's columns are never read, so a prompt ending in part of a stop
    string stops nothing. Rows found done are not decoded again within the same ``generate`` call, nor
    rows whose newest token cannot complete a stop string (``may_complete``, from ``completing_tokens``:
    a stop string ends at the token that brings its last character)."""
    import torch
    from transformers import StoppingCriteria

    stops = tuple(s for s in stops if s)

    class StopStringsDone(StoppingCriteria):
        def __init__(self):
            self.done: torch.Tensor | None = None

        def __call__(self, input_ids, scores=None, **kwargs):
            if self.done is None or self.done.shape[0] != input_ids.shape[0]:
                self.done = torch.zeros(input_ids.shape[0], dtype=torch.bool)
            open_rows = ~self.done
            if may_complete is not None and input_ids.shape[1] > start:
                last = input_ids[:, -1].cpu()
                known = last < len(may_complete)  # ids past the tokenizer's: decoded, as before
                open_rows &= ~known | may_complete[last.clamp(max=len(may_complete) - 1)]
            rows = open_rows.nonzero().flatten().tolist()
            texts = tokenizer.batch_decode(input_ids[rows, start:], skip_special_tokens=True) if rows else []
            for r, text in zip(rows, texts, strict=True):
                self.done[r] = stop_index(text, stops) is not None
            return self.done.to(input_ids.device).clone()

    return StopStringsDone()


def first_line_done(tokenizer, start: int):
    """``stop_strings_done`` at the line break: every consumer keeps only ``first_line`` of an answer, so
    the tokens after it change nothing; a batch ends when all its rows are done rather than after
    ``max_new_tokens``."""
    return stop_strings_done(tokenizer, start, LINE_BREAK)


def stopped_rows(tokenizer, stops: Sequence[str], may_complete=None):
    """``stop_strings_done`` for our decoding loop: given rows' new tokens, whether each holds one of
    ``stops`` in its text (special tokens skipped, leading whitespace ignored); a row whose newest token
    cannot complete a stop string (``may_complete``) is not decoded."""
    stops = tuple(s for s in stops if s)

    def stopped(rows: Sequence[Sequence[int]]) -> list[bool]:
        done = [False] * len(rows)
        check = [j for j, r in enumerate(rows) if r and (may_complete is None or r[-1] >= len(may_complete)
                                                          or bool(may_complete[r[-1]]))]
        texts = tokenizer.batch_decode([list(rows[j]) for j in check], skip_special_tokens=True) if check else []
        for j, text in zip(check, texts, strict=True):
            done[j] = stop_index(text, stops) is not None
        return done

    return stopped


DECODERS = ("ours", "transformers")


class GreedyGenerator:
    """Greedy (temperature 0) decoding for causal and seq2seq models, batched, left-padded, with the
    model's KV cache. A row stops at the first of ``stop_strings`` in its new text and its answer is the
    text before it (``cut_at_stop``); it also ends at its end-of-sequence token or after
    ``max_new_tokens``. ``decoder``: ``ours`` (``decoding.greedy_decode``: rows that have ended leave the
    batch) or ``transformers`` (its ``generate`` with ``stop_strings_done``; finished rows stay in the
    batch until the last ends). Ours falls back to ``generate``, said once on stderr and counted in
    ``fallbacks``, when the model's generation settings change greedy choices (``greedy_changes``)."""

    def __init__(self, lm: LoadedModel, max_new_tokens: int = 16, batch_tokens: int = 8192,
                 stop_strings: Sequence[str] = LINE_BREAK, decoder: str = "ours"):
        if decoder not in DECODERS:
            raise ValueError(f"unknown decoder '{decoder}'; expected one of {DECODERS}")
        if lm.family == "mlm":
            raise ValueError("generative rules need a causal or seq2seq model; for masked LMs use xfactr")
        if not any(stop_strings):
            raise ValueError("stop_strings: give at least one non-empty stop string (the default is the line break)")
        self.lm, self.max_new_tokens, self.batch_tokens = lm, max_new_tokens, batch_tokens
        self.stop_strings = tuple(s for s in stop_strings if s)
        # False: every row decodes max_new_tokens and its whole text is the answer (the previous way)
        self.stop_at_first_line = True
        self.scoring = "generative"
        self.decoder = decoder
        self.fallbacks = 0  # batches ours handed to transformers' generate (greedy_changes)
        self.last_rows_per_step: tuple[int, ...] = ()  # our loop, last batch: rows each forward computed
        self._sentinels = None
        self._may_complete = None  # per token id: can it complete a stop string (False: no sound test)
        if lm.family == "seq2seq":
            ids = lm.tokenizer.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>"])
            if None not in ids and lm.tokenizer.unk_token_id not in ids:
                self._sentinels = tuple(ids)

    @property
    def counts(self) -> dict[str, int]:
        """For probe.json's counts: batches decoded by transformers' ``generate`` instead of our loop."""
        return {"generation/batches-by-transformers-generate": self.fallbacks} if self.fallbacks else {}

    def token_filter(self):
        """``completing_tokens`` for this generator's stop strings, computed once (one decode of every
        token); None when no filter is sound."""
        if self._may_complete is None:
            self._may_complete = completing_tokens(self.lm.tokenizer, self.stop_strings)
            self._may_complete = False if self._may_complete is None else self._may_complete
        return self._may_complete if self._may_complete is not False else None

    def stopping_criterion(self, start: int):
        """``stop_strings_done`` for new text from column ``start``, with this generator's token filter."""
        return stop_strings_done(self.lm.tokenizer, start, self.stop_strings, self.token_filter())

    def uses_our_loop(self) -> bool:
        """Our loop unless ``decoder="transformers"`` or the model's generation settings change greedy
        choices (then ``generate``, which applies them: said once, counted per batch)."""
        from factatlas.probe.decoding import greedy_changes

        if self.decoder != "ours":
            return False
        changes = greedy_changes(self.lm.model.generation_config)
        if changes and not self.fallbacks:
            print(f"note: {self.lm.name}: greedy decoding by transformers' generate, not our loop: its generation "
                  f"config sets {', '.join(changes)}, which our loop does not apply", file=sys.stderr)
        self.fallbacks += bool(changes)
        return not changes

    def _answer_ids(self, ids: list[int]) -> list[int]:
        """A T5-style span answer ``<extra_id_0> x <extra_id_1> ...`` is cut to ``x``."""
        start = self.lm.model.config.decoder_start_token_id if self.lm.family == "seq2seq" else None
        while ids and ids[0] == start:
            ids = ids[1:]
        if self._sentinels and ids and ids[0] == self._sentinels[0]:
            ids = ids[1:]
            if self._sentinels[1] in ids:
                ids = ids[: ids.index(self._sentinels[1])]
        return ids

    def check_texts(self, prompts: Sequence[str]) -> None:
        """Every prompt of the run checked against the model's context before the first forward pass."""
        from factatlas.probe.context import GENERATION_FIX, check_before_scoring, short, text_bound

        def needs(texts: Sequence[str]):
            return self.needs(self.encode(texts), lambda i: f"prompt {short(texts[i])}")

        check_before_scoring(prompts, lambda p: text_bound(p) + self.max_new_tokens, needs, self.lm, GENERATION_FIX)

    def encode(self, prompts: Sequence[str]) -> list[list[int]]:
        """The token ids ``generate`` feeds: causal models get their BOS first, as the causal scorers do."""
        tok = self.lm.tokenizer
        if self.lm.family == "causal":
            from factatlas.probe.causal import context_start

            bare = tok(list(prompts), add_special_tokens=False)["input_ids"] if prompts else []
            return [context_start(tok, ids) for ids in bare]
        return tok(list(prompts), add_special_tokens=True)["input_ids"] if prompts else []

    def generate(self, prompts: Sequence[str]) -> list[str]:
        return self.generate_encoded(self.encode(prompts))

    def needs(self, encoded: Sequence[Sequence[int]], describe=None):
        """What each input takes of the context (``context.Need``): a causal model reads the prompt and
        then its own new tokens but the last (only predicted); a seq2seq encoder reads the prompt, its
        decoder the start token and the new tokens but the last."""
        from factatlas.probe.context import Need, generation_needs, short

        def name(i: int) -> str:
            return describe(i) if describe else \
                f"prompt {short(self.lm.tokenizer.decode(encoded[i], skip_special_tokens=True))}"

        if self.lm.family == "causal":
            return generation_needs(encoded, self.max_new_tokens, name)
        return [Need(max(len(e), self.max_new_tokens), lambda i=i, e=e: f"{name(i)} ({len(e)} encoder tokens, "
                                                       f"{self.max_new_tokens} decoder positions)")
                for i, e in enumerate(encoded)]

    def check_context(self, encoded: Sequence[Sequence[int]], describe=None, fix: str | None = None) -> None:
        """Refuse, before any forward, inputs whose answer could run past the model's positions."""
        from factatlas.probe.context import GENERATION_FIX, model_limit, refuse_overlong

        refuse_overlong(self.needs(encoded, describe), model_limit(self.lm), self.lm.name, fix or GENERATION_FIX)

    def generate_encoded(self, encoded: Sequence[Sequence[int]]) -> list[str]:
        """Greedy answers to already tokenized inputs (chat templates render and tokenize their own)."""
        import torch

        tok, device = self.lm.tokenizer, self.lm.device
        self.check_context(encoded)
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        out = [""] * len(encoded)
        lengths = [len(e) + self.max_new_tokens for e in encoded]
        with torch.inference_mode():
            for batch in token_budget_batches(lengths, self.batch_tokens):
                width = max(len(encoded[i]) for i in batch)
                ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for r, i in enumerate(batch):  # left padding: generation continues right after the prompt
                    e = encoded[i]
                    ids[r, width - len(e):] = torch.tensor(e)
                    mask[r, width - len(e):] = 1
                new = (self._our_tokens if self.uses_our_loop() else self._generate_tokens)(ids.to(device),
                                                                                            mask.to(device), pad_id)
                for r, i in enumerate(batch):
                    text = tok.decode(self._answer_ids(new[r]), skip_special_tokens=True).strip()
                    out[i] = cut_at_stop(text, self.stop_strings) if self.stop_at_first_line else text
        return out

    def _our_tokens(self, ids, mask, pad_id: int) -> list[list[int]]:
        """Each row's tokens by ``decoding.greedy_decode`` (a seq2seq row with its decoder start token first,
        as ``generate`` returns it)."""
        from factatlas.probe.decoding import eos_ids_of, greedy_decode

        model, seq2seq = self.lm.model, self.lm.family == "seq2seq"
        start = model.generation_config.decoder_start_token_id if seq2seq else None
        if seq2seq and start is None:
            start = model.config.decoder_start_token_id
        stopped = stopped_rows(self.lm.tokenizer, self.stop_strings, self.token_filter()) \
            if self.stop_at_first_line else None
        decoded = greedy_decode(model, ids, mask, self.max_new_tokens, eos_ids_of(model.generation_config),
                                stopped, seq2seq=seq2seq, decoder_start=start)
        self.last_rows_per_step = decoded.rows_per_step
        return [([start] if seq2seq else []) + list(t) for t in decoded.tokens]

    def _generate_tokens(self, ids, mask, pad_id: int) -> list[list[int]]:
        """Each row's tokens by transformers' ``generate`` (finished rows padded until the batch ends)."""
        start = ids.shape[1] if self.lm.family == "causal" else 0
        stopping = [self.stopping_criterion(start)] if self.stop_at_first_line else None
        gen = self.lm.model.generate(input_ids=ids, attention_mask=mask, do_sample=False, num_beams=1,
                                     max_new_tokens=self.max_new_tokens, pad_token_id=pad_id,
                                     stopping_criteria=stopping)
        return [row[start:] for row in gen.tolist()]
