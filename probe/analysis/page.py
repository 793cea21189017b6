"""Sections of analysis output -> markdown, CSV files and one HTML page (PNG figures beside it).

Pure rendering plus one writer at the edge; numbers are kept raw in the sections, printed with three
decimals in markdown/HTML and at full precision in CSV, so the files are byte-identical for the same input.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from itertools import islice
from pathlib import Path

from factatlas.probe.figures import Figure, draw

Cell = str | int | float | None


@dataclass(frozen=True)
class Table:
    name: str  # CSV file stem, unique on a page
    head: tuple[str, ...]
    rows: Sequence[tuple[Cell, ...]]  # a tuple, or ``LazyRows`` (made each time they are read)
    caption: str = ""
    page_rows: int | None = None  # rows shown on the page (md, html); None: all. The CSV always has all

    @property
    def on_page(self) -> tuple[tuple[Cell, ...], ...]:
        return self.rows if self.page_rows is None else self.rows[:self.page_rows]

    @property
    def left_off(self) -> int:
        """Rows only in the CSV."""
        return len(self.rows) - len(self.on_page)


@dataclass(frozen=True)
class Section:
    title: str
    follows: str  # the paper (and table/figure) the analysis reproduces
    note: str = ""
    tables: tuple[Table, ...] = ()
    plots: tuple[Figure, ...] = ()  # drawn as PNG files beside the page
    unavailable: tuple[str, ...] = field(default_factory=tuple)  # why a part could not be computed


def show(v: Cell, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}" if abs(v) >= 10 ** -digits or v == 0 else f"{v:.2e}"
    return str(v)


class LazyRows(Sequence[tuple[Cell, ...]]):
    """A table's rows made each time they are read (``rows()``), ``count`` of them: a table of a row per
    prompt (every wrong answer) is written to its CSV as it is made, never held."""

    def __init__(self, rows: Callable[[], Iterable[tuple[Cell, ...]]], count: int) -> None:
        self._rows, self._count = rows, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[Cell, ...]]:
        return iter(self._rows())

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(islice(self, *i.indices(self._count)))
        if not -self._count <= i < self._count:
            raise IndexError(i)
        return next(islice(self, i % self._count, None))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return id(self)


def _csv_cells(row: tuple[Cell, ...]) -> list:
    return ["" if v is None or (isinstance(v, float) and math.isnan(v)) else repr(v) if isinstance(v, float)
            else v for v in row]


def csv_text(table: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(table.head)
    for row in table.rows:
        w.writerow(_csv_cells(row))
    return buf.getvalue()


def write_csv(path: Path, table: Table) -> None:
    """``csv_text(table)`` written atomically a row at a time (the rows are never held as one text)."""
    from factatlas.atomic import atomic_path

    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(table.head)
        for row in table.rows:
            w.writerow(_csv_cells(row))


def _md_cell(v: Cell) -> str:
    return show(v).replace("|", "\\|")


def markdown(title: str, subtitle: str, sections: Sequence[Section]) -> str:
    out = [f"# {title}", "", subtitle, ""]
    for s in sections:
        out += [f"## {s.title}", "", f"*Follows:* {s.follows}", ""]
        if s.note:
            out += [s.note, ""]
        for reason in s.unavailable:
            out += [f"> not computed: {reason}", ""]
        for t in s.tables:
            if t.caption:
                out += [f"**{t.caption}** (`{t.name}.csv`)", ""]
            out.append("| " + " | ".join(t.head) + " |")
            out.append("|" + "---|" * len(t.head))
            out += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in t.on_page]
            if t.left_off:
                out.append(f"\n{t.left_off} rows not shown here: `{t.name}.csv` has them all")
            out.append("")
        out += [f"![{p.name}]({p.name})" for p in s.plots]
        if s.plots:
            out.append("")
    return "\n".join(out)


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def html_page(title: str, subtitle: str, sections: Sequence[Section]) -> str:
    """The page: probe/analysis_page.html (jinja2, like the report's page) filled with the sections."""
    import jinja2

    files = resources.files("factatlas.probe")
    env = jinja2.Environment(autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["x"], env.filters["show"] = _e, show  # html.escape on every text (quotes too), numbers shown
    template = env.from_string(files.joinpath("analysis_page.html").read_text("utf-8"))
    css = files.joinpath("report.css").read_text("utf-8")
    return template.render(title=title, subtitle=subtitle, sections=sections, css=css)


NO_PLOTS = "figures not drawn (--no-plots)"


def write_page(out_dir: Path, stem: str, title: str, subtitle: str, sections: Sequence[Section], *,
               plots: bool = True) -> list[Path]:
    """``<stem>.md``, ``<stem>.html``, one CSV per table and each section's figures as PNG files into
    ``out_dir`` (atomic writes). ``plots=False``: no figure is drawn and the pages show none (the subtitle
    says so)."""
    from factatlas.atomic import write_text

    names = [t.name for s in sections for t in s.tables]
    if len(set(names)) != len(names):
        raise ValueError(f"two tables share a CSV name on one page: {sorted(names)}")
    figures = [f.name for s in sections for f in s.plots]
    if len(set(figures)) != len(figures):
        raise ValueError(f"two figures share a file name on one page: {sorted(figures)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    if plots:
        for s in sections:
            draw(s.plots, out_dir)
    else:
        sections = [replace(s, plots=()) for s in sections]
        subtitle = f"{subtitle} · {NO_PLOTS}"
    written = []
    for s in sections:
        for t in s.tables:
            path = out_dir / f"{t.name}.csv"
            write_csv(path, t)
            written.append(path)
    write_text(out_dir / f"{stem}.md", markdown(title, subtitle, sections))
    write_text(out_dir / f"{stem}.html", html_page(title, subtitle, sections))
    return [out_dir / f"{stem}.md", out_dir / f"{stem}.html", *written]
