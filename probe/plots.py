"""PNG plots for the validation report (matplotlib, Agg backend: no display needed).

Each function draws one figure from plain data and writes it to ``path``; PNG metadata carries no
software version or date, so identical data gives identical files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

PALETTE = ("#2f6db5", "#e08a2c", "#4a9d5b", "#b5473f", "#7a5aa6", "#8c6d3f", "#3fa3b5", "#999999")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 11, "axes.titleweight": "bold",
                         "axes.spines.top": False, "axes.spines.right": False,
                         "svg.hashsalt": "factatlas", "font.family": "DejaVu Sans"})
    return plt


def _save(fig, path: Path) -> Path:
    import io

    import matplotlib.pyplot as plt

    from factatlas.atomic import write_bytes

    # The tight box from the layout alone: bbox_inches="tight" rasterises the figure once more to find it,
    # a sixth of the report's plotting time. 0.1 in is matplotlib's savefig.pad_inches.
    tight = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.1)
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110, bbox_inches=tight, metadata={"Software": None})
    plt.close(fig)
    write_bytes(path, png.getvalue())  # atomic: a full or read-only disk leaves no half-written PNG
    return path


def heatmap(values: Sequence[Sequence[float | None]], rows: Sequence[str], cols: Sequence[str], title: str,
            path: Path, *, vmin: float = 0.0, vmax: float = 1.0, cmap: str = "viridis",
            colorbar_label: str = "", fmt: str = "{:.2f}") -> Path:
    """A matrix with its values written in the cells (missing values blank, hatched)."""
    import numpy as np

    plt = _pyplot()
    data = np.array([[math.nan if v is None else v for v in row] for row in values], dtype=float)
    width = min(2.0 + 0.62 * max(len(cols), 1), 16)
    height = min(1.4 + 0.42 * max(len(rows), 1), 20)
    fig, ax = plt.subplots(figsize=(max(width, 4.0), max(height, 2.6)))
    masked = np.ma.masked_invalid(data)
    im = ax.imshow(masked, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_facecolor("#eeeeee")
    ax.set_xticks(range(len(cols)), labels=list(cols), rotation=45 if len(cols) > 6 else 0,
                  ha="right" if len(cols) > 6 else "center")
    ax.set_yticks(range(len(rows)), labels=list(rows))
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    if len(rows) * len(cols) <= 400:
        cm = plt.get_cmap(cmap)
        for i in range(len(rows)):
            for j in range(len(cols)):
                v = data[i, j]
                if math.isnan(v):
                    continue
                r, g, b, _ = cm((v - vmin) / (vmax - vmin) if vmax > vmin else 0.5)
                light = 0.299 * r + 0.587 * g + 0.114 * b > 0.55
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
    cbar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
    cbar.outline.set_visible(False)
    if colorbar_label:
        cbar.set_label(colorbar_label)
    ax.set_title(title, loc="left")
    return _save(fig, path)


def grouped_bars(groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str, path: Path,
                 *, ylabel: str = "", ylim: tuple[float, float] | None = (0.0, 1.0),
                 horizontal_line: float | None = None, value_fmt: str = "{:.2f}") -> Path:
    """One cluster of bars per group (e.g. predicate), one bar per series (e.g. model / baseline)."""
    plt = _pyplot()
    n_series = max(len(series), 1)
    width = 0.8 / n_series
    fig_width = min(max(4.5, 1.0 + 0.9 * len(groups) * max(1, n_series / 2.5)), 16)
    fig, ax = plt.subplots(figsize=(fig_width, 3.4))
    per_group = (fig_width - 1.0) / max(len(groups), 1)  # inches of x axis per cluster
    # a value over each bar only while it fits the bar (about 0.33 in for "0.00" at 7 pt) and stays legible
    labelled = len(groups) * n_series <= 40 and per_group * width >= 0.33
    for s, (name, values) in enumerate(series.items()):
        xs = [g + (s - (n_series - 1) / 2) * width for g in range(len(groups))]
        ys = [math.nan if v is None else v for v in values]
        bars = ax.bar(xs, ys, width=width * 0.92, label=name, color=PALETTE[s % len(PALETTE)])
        if labelled:
            ax.bar_label(bars, labels=["" if math.isnan(y) else value_fmt.format(y) for y in ys], fontsize=7,
                         padding=1.5, color="#333333")
    # slanted group labels when they would not fit side by side (about 0.07 in per character at 10 pt)
    slanted = len(groups) > 8 or max((len(g) for g in groups), default=0) * 0.07 > per_group
    ax.set_xticks(range(len(groups)), labels=list(groups), rotation=30 if slanted else 0,
                  ha="right" if slanted else "center", rotation_mode="anchor" if slanted else "default")
    if ylim:
        ax.set_ylim(ylim[0], ylim[1] * 1.06)  # room for the value labels
    else:
        ax.margins(y=0.12)
    if horizontal_line is not None:
        ax.axhline(horizontal_line, color="#555555", lw=0.8, ls="--")
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    # beside the plot, never over the group labels below it (however long or slanted they are)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.set_title(title, loc="left")
    return _save(fig, path)
