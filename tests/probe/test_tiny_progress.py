"""Fine-tuning a tiny model shows where the time goes, also when stderr is redirected (issue 13)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


@pytest.mark.slow
def test_fine_tuning_prints_a_line_per_quarter_when_redirected(capsys, tmp_path):
    # under capsys stderr is a pipe-like stream, not a terminal: the case of `2> log`, in this process
    from factatlas.probe.tiny import ClozeExample, make_tiny_model

    texts = ["Paris is the capital of France.", "Cairo is the capital of Egypt."] * 20
    examples = [ClozeExample("Paris is the capital of [Y].", "France"),
                ClozeExample("Cairo is the capital of [Y].", "Egypt")]
    make_tiny_model(tmp_path / "m", "bert", texts, examples=examples, steps=20, vocab_size=200)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("fine-tuning tiny-bert:")]
    assert [line.split(",")[0] for line in lines] == [f"fine-tuning tiny-bert: step {n}/20" for n in (5, 10, 15, 20)]
    assert out == ""  # progress is not a result
