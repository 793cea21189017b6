"""Figures as records: the report and the analyses say which figures they show, and one place draws them.

A ``Figure`` names a plot function of probe/plots.py or probe/analysis/plots.py, the data and options it is
drawn from, and the PNG file it becomes beside its page. Computing a section stays pure (no matplotlib, no
files); ``draw`` writes the PNGs into a folder, or nothing when the user asked for no plots (`--no-plots`:
a figure costs 0.2-0.4 CPU-s to draw, about half of a small report's time, and a sweep or a CI job reads
verdict.json and the tables)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLOTS = ("heatmap", "grouped_bars", "scatter", "intervals")


@dataclass(frozen=True)
class Figure:
    plot: str  # a key of plotters(): heatmap, grouped_bars, scatter, intervals
    name: str  # the PNG file name beside the page
    args: tuple = ()  # the plot function's positional arguments before the file's path
    options: tuple[tuple[str, Any], ...] = ()  # its keyword arguments


def figure(plot: str, name: str, *args: Any, **options: Any) -> Figure:
    """``figure("heatmap", "rankc.png", values, rows, cols, title, cmap="magma")``: the call
    ``heatmap(values, rows, cols, title, <folder>/rankc.png, cmap="magma")`` that ``draw`` makes."""
    if plot not in PLOTS:
        raise ValueError(f"figure {name}: unknown plot {plot!r}; expected one of {', '.join(PLOTS)}")
    return Figure(plot, name, args, tuple(options.items()))



def plotters() -> dict[str, Callable[..., Path]]:
    """The plot functions (imported only when a figure is drawn: matplotlib is not needed to compute)."""
    from factatlas.probe import plots as P
    from factatlas.probe.analysis import plots as AP

    return {"heatmap": P.heatmap, "grouped_bars": P.grouped_bars, "scatter": AP.scatter, "intervals": AP.intervals}


def draw(figures: Iterable[Figure], out_dir: Path) -> tuple[str, ...]:
    """Each figure as ``out_dir/<name>`` (atomic PNG writes); returns the names in order."""
    by_plot = plotters()
    names = []
    for f in figures:
        by_plot[f.plot](*f.args, out_dir / f.name, **dict(f.options))
        names.append(f.name)
    return tuple(names)
