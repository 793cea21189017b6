"""Figures of the analysis pages (matplotlib, Agg; no dates or versions in the PNGs)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from factatlas.probe.plots import PALETTE, _pyplot, _save


def intervals(labels: Sequence[str], values: Sequence[float], lows: Sequence[float], highs: Sequence[float],
              title: str, path: Path, *, xlabel: str = "") -> Path:
    """One point with its interval per row (e.g. a model's Western - non-Western gap), zero marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 1.2 + 0.45 * max(len(labels), 1)))
    ys = list(range(len(labels)))[::-1]
    err = [[v - lo for v, lo in zip(values, lows, strict=True)], [hi - v for v, hi in zip(values, highs, strict=True)]]
    ax.errorbar(values, ys, xerr=err, fmt="o", color=PALETTE[0], ecolor=PALETTE[0], capsize=4)
    for y, v in zip(ys, values, strict=True):
        ax.annotate(f"{v:+.3f}", (v, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    ax.axvline(0.0, color="#555555", lw=0.8, ls="--")
    ax.set_yticks(ys, labels=list(labels))
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    ax.set_title(title, loc="left")
    return _save(fig, path)


def scatter(xs: Sequence[float], ys: Sequence[float], labels: Sequence[str], title: str, path: Path, *,
            xlabel: str, ylabel: str) -> Path:
    """Labelled points (e.g. one per language pair)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.8, 3.6))
    ax.scatter(xs, ys, color=PALETTE[0], s=22)
    if len(labels) <= 60:
        for x, y, t in zip(xs, ys, labels, strict=True):
            ax.annotate(t, (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7, color="#333333")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(color="#eeeeee", lw=0.6)
    ax.set_title(title, loc="left")
    return _save(fig, path)
