"""`--device-map auto`: a model loaded through accelerate scores exactly as the plain load."""

from __future__ import annotations

import sys

import pytest

from factatlas.errors import ConfigError
from factatlas.probe.models import load_model
from factatlas.probe.runner import rank_prompts
from tests.probe.probe_capitals import prompts_of


def _rankings(lm, rows):
    from factatlas.probe.mlm import MaskedLMScorer

    prompts = prompts_of([r for r in rows if r["kind"] == "cloze"])[:40]
    return [(r.ranked_qids, r.scores) for r in rank_prompts(MaskedLMScorer(lm), prompts,
                                                           [p.text for p in prompts], "m")]


def test_device_map_auto_scores_equal_the_plain_load(tiny_bert_dir, capitals_rows, monkeypatch):
    pytest.importorskip("accelerate", reason="accelerate (extra 'gpu') is not installed")
    from factatlas.probe import models

    plain = load_model(str(tiny_bert_dir), device="cpu")
    seen = []
    real_auto_class = models._auto_class

    def recording_auto_class(family):  # the real class; only the keyword arguments are noted
        cls = real_auto_class(family)

        class Recorded:
            @staticmethod
            def from_pretrained(name, **kw):
                seen.append(kw.get("device_map"))
                return cls.from_pretrained(name, **kw)
        return Recorded

    monkeypatch.setattr(models, "_auto_class", recording_auto_class)
    spread = load_model(str(tiny_bert_dir), device="cpu", device_map="auto")
    assert seen == ["auto"]  # accelerate placed the model; it was not moved with .to()
    assert spread.device == "cpu"  # no GPU here: every module lands on the CPU
    assert _rankings(spread, capitals_rows) == _rankings(plain, capitals_rows)


def test_device_map_without_accelerate_names_the_extra(tiny_bert_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "accelerate", None)  # import accelerate -> ModuleNotFoundError
    with pytest.raises(ConfigError, match=r"--device-map auto: needs the accelerate package; install it "
                                          r"with pip install 'factatlas\[gpu\]'"):
        load_model(str(tiny_bert_dir), device="cpu", device_map="auto")
