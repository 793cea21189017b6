"""The tiny models are reproducible to the byte: the same text and seed give the same tokenizer and weights
in every process (tokenizers' WordPieceTrainer did not: huggingface/tokenizers#1794)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest


def build_digests(out: Path) -> str:
    """Build the tiny BERT into out; the sha256 of its tokenizer and weights, one line per file."""
    import torch

    from factatlas.probe.tiny import make_tiny_model, tokenizer_texts, true_fact_examples
    from tests.probe.probe_capitals import capital_prompt_rows, prompts_of

    torch.set_num_threads(1)
    rows = prompts_of(capital_prompt_rows())
    made = make_tiny_model(out, "bert", tokenizer_texts(rows) * 3,
                           examples=true_fact_examples(rows, splits=("train",)), steps=5, vocab_size=120)
    return "".join(f"{name} {hashlib.sha256((made / name).read_bytes()).hexdigest()}\n"
                   for name in ("tokenizer.json", "model.safetensors"))


BUILD = "import sys; from pathlib import Path; from tests.probe.test_tiny_determinism import build_digests; " \
        "print(build_digests(Path(sys.argv[1])), end='')"


@pytest.mark.extended
def test_tiny_bert_is_byte_identical_across_processes(tmp_path):
    # hash-map order differs per process; three draws make a lucky pass unlikely: this process and two
    # children, which run side by side (the imports of torch dominate their time)
    children = [subprocess.Popen([sys.executable, "-c", BUILD, str(tmp_path / f"m{i}")], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for i in (1, 2)]
    digests = [build_digests(tmp_path / "m0")]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        digests.append(out)
    assert "tokenizer.json" in digests[0] and "model.safetensors" in digests[0]
    assert digests[1] == digests[0] and digests[2] == digests[0]


def test_wordpiece_vocabulary_is_the_one_trained_on_every_text_separately():
    """Repeated texts go to the BPE trainer once, joined by spaces; the word counts, and so every merge and
    every id, must be those of feeding each copy separately."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    from factatlas.probe.tiny import tokenizer_texts, wordpiece_vocab
    from tests.probe.probe_capitals import capital_prompt_rows, prompts_of

    texts = tokenizer_texts(prompts_of(capital_prompt_rows())) + ["ولد في القاهرة", "Cairo", "Cairo", "Kuwait City"] * 7
    assert len(set(texts)) < len(texts) / 3
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    separate = Tokenizer(models.BPE(unk_token="[UNK]"))
    separate.normalizer = normalizers.NFC()
    separate.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    separate.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=150, special_tokens=specials,
                                                            show_progress=False))
    pieces = [t for t, _ in sorted(separate.get_vocab().items(), key=lambda kv: kv[1]) if t not in specials]
    vocab = wordpiece_vocab(texts, 150, specials)
    assert [t for t in vocab if not t.startswith("##") and t not in specials] == pieces
    assert len(vocab) > 150
