"""mParaRel's language inclusion rule (>= 60 % of the reference's relations, >= 20 % of its paraphrases)."""

from __future__ import annotations

import pytest
import yaml

from factatlas.builder.cli import _languages_by_coverage
from factatlas.builder.pararel import language_coverage
from factatlas.errors import ConfigError
from factatlas.templates.library import templates_dir


def test_thresholds_by_hand():
    # reference: 5 relations, 10 cloze templates
    counts = {"en": {"P1": 2, "P2": 2, "P3": 2, "P4": 2, "P5": 2},
              "fr": {"P1": 1, "P2": 1, "P3": 0, "P9": 7},    # 2/5 relations (P9 is not the reference's): 40 %
              "de": {"P1": 1, "P2": 1, "P3": 1},              # 3/5 = 60 % relations, 3/10 = 30 % templates: kept
              "ja": {"P1": 1, "P2": 1, "P3": 1, "P4": 1, "P5": 1, "P6": 9},  # 5/5, 5/10: kept
              "sw": {"P1": 1}}
    rows = {r.lang: r for r in language_coverage(counts, ["en", "fr", "de", "ja", "sw", "ko"], "en")}
    assert (rows["fr"].relations, rows["fr"].relation_share, rows["fr"].paraphrases) == (2, 0.4, 2)
    assert rows["fr"].reason == "relations 40% < 60%"  # 2/10 = 20 % of the templates is enough
    assert rows["de"].kept and rows["ja"].kept and rows["en"].kept
    assert rows["sw"].reason == "relations 20% < 60%; paraphrases 10% < 20%"
    assert not rows["ko"].kept and rows["ko"].relation_share == 0.0
    looser = {r.lang: r.kept for r in language_coverage(counts, ["fr", "sw"], "en", 0.4, 0.1)}
    assert looser == {"fr": True, "sw": False}  # sw: 1/5 = 20 % of the relations < 40 %
    with pytest.raises(ConfigError, match="reference language 'xx'"):
        language_coverage(counts, ["en"], "xx")


def _trimmed(tmp_path, keep: int) -> None:
    """A French file with the first ``keep`` predicates of the packaged one, one cloze template each."""
    data = yaml.safe_load((templates_dir() / "fr.yaml").read_text("utf-8"))
    preds = list(data["templates"])[:keep]
    data["templates"] = {p: [next(t for t in data["templates"][p] if t.get("kind", "cloze") == "cloze")]
                         for p in preds}
    (tmp_path / "fr.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")


def test_build_option_on_the_library(tmp_path):
    en = yaml.safe_load((templates_dir() / "en.yaml").read_text("utf-8"))["templates"]
    n_rel = len(en)
    n_cloze = sum(1 for ts in en.values() for t in ts if t.get("kind", "cloze") == "cloze")
    keep = -(-6 * n_rel // 10)  # ceil(60 % of the relations)
    assert keep >= 2 * n_cloze // 10  # one template each still reaches 20 % of the paraphrases
    _trimmed(tmp_path, keep)
    assert _languages_by_coverage(["en", "fr"], None, tmp_path, "en", 0.6, 0.2) == ["en", "fr"]
    _trimmed(tmp_path, keep - 1)
    assert _languages_by_coverage(["en", "fr"], None, tmp_path, "en", 0.6, 0.2) == ["en"]
