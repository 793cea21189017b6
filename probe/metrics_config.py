"""What the metrics are computed with (``MetricsConfig``: ks, RankC weighting, bootstrap, the X-FaKT language
association) and their error type; a leaf module, so the sections computed with it need not import
``evaluate``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from factatlas.errors import FactatlasError
from factatlas.probe import metrics as M

# Which culture a language is associated with, for X-FaKT's associative / non-associative split.
# Override per run (`factatlas report --associate ar=arab`) or with MetricsConfig.association.
DEFAULT_LANGUAGE_CULTURES: Mapping[str, tuple[str, ...]] = {
    "ar": ("arab",),
    "en": ("west",), "de": ("west",), "fr": ("west",), "it": ("west",), "nl": ("west",),
    "es": ("south-america",), "pt": ("south-america",),
    "zh": ("asia",), "ja": ("asia",), "ko": ("asia",),
}


class MetricsError(FactatlasError):
    """Rankings or a benchmark cannot be evaluated (unreadable, or they do not belong together)."""


@dataclass(frozen=True)
class MetricsConfig:
    ks: tuple[int, ...] = (1, 5, 10)
    rankc_weighting: str = "softmax"
    bootstrap: int = 0  # resamples for confidence intervals; 0 = none
    confidence: float = 0.95
    seed: int = 0
    association: Mapping[str, tuple[str, ...]] | None = None  # lang -> cultures; merged over the default
    top_predictions: int = 5

    def __post_init__(self) -> None:
        if 1 not in self.ks or any(k < 1 for k in self.ks):
            raise MetricsError(f"ks must hold 1 and only positive values, got {self.ks}")
        if self.bootstrap < 0:
            raise MetricsError(f"--bootstrap {self.bootstrap}: the number of resamples must be 0 (no intervals) "
                               "or more, e.g. 1000")
        if self.rankc_weighting not in M.RANKC_WEIGHTINGS:
            from factatlas.errors import unknown

            raise MetricsError(unknown("RankC weighting", self.rankc_weighting, M.RANKC_WEIGHTINGS))

    def language_cultures(self) -> dict[str, tuple[str, ...]]:
        merged = dict(DEFAULT_LANGUAGE_CULTURES)
        merged.update({k: tuple(v) for k, v in (self.association or {}).items()})
        return merged

    def to_json(self) -> dict[str, Any]:
        return {"ks": list(self.ks), "rankc_weighting": self.rankc_weighting, "bootstrap": self.bootstrap,
                "confidence": self.confidence, "seed": self.seed, "top_predictions": self.top_predictions,
                "association": {k: list(v) for k, v in sorted(self.language_cultures().items())}}
