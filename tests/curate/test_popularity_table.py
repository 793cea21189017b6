"""The page-length (and page-view) table is indexed on disk and read per batch of titles: a lookup reads
back the asked titles only, and the open table holds none of its rows in Python (issue 41 item 2)."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from factatlas.curate.popularity import PageLengthTable
from factatlas.errors import ConfigError

ROWS = 10_000  # about 2.5 MB as the dict the table used to be; a few KB indexed


@pytest.fixture(scope="module")
def big_table(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lengths")
    lines = ["site\ttitle\tlength"] + [f"{site}\tArticle {n}\t{n}" for n in range(ROWS // 2) for site in ("en", "fr")]
    (folder / "page_lengths.tsv").write_text("\n".join(lines) + "\n", "utf-8")
    (folder / "redirects.tsv").write_text("site\tfrom\tto\nen\tOld name\tArticle 7\n", "utf-8")
    return folder / "page_lengths.tsv"


def test_an_open_table_holds_none_of_its_rows(big_table):
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        table = PageLengthTable(big_table)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # the 10,000 rows as a dict of (site, title) -> float: ~2.5 MB; indexed: the reader's buffers only
    assert held < 300_000, f"the open table holds {held:,} bytes of Python objects for {ROWS:,} rows"
    assert sum(1 for _ in table.rows()) == ROWS  # ... and still has every row


def test_a_lookup_reads_only_the_asked_titles(big_table):
    table = PageLengthTable(big_table)
    asked = {"en": ["Article 3", "Old name", "No such page"], "fr": ["Article 4999"]}
    assert table.scores(asked) == {("en", "Article 3"): 3.0, ("en", "Old name"): 7.0,
                                   ("fr", "Article 4999"): 4999.0}
    assert table.rows_read == 3  # the three found, not the table's 10,000
    many = [f"Article {n}" for n in range(0, ROWS // 2, 7)]  # more titles than one lookup query takes
    assert table.scores({"fr": many}) == {("fr", t): float(t.split()[1]) for t in many}
    assert table.rows_read == 3 + len(many)


def test_a_bad_row_is_refused_when_the_table_opens_with_its_line(tmp_path):
    bad = tmp_path / "lengths.tsv"
    bad.write_text("site\ttitle\tlength\nen\tCairo\t12\nen\tGiza\tlong\n", "utf-8")
    with pytest.raises(ConfigError, match=r"lengths.tsv:3: length 'long' is not a number"):
        PageLengthTable(bad)
    bad.write_text("site\ttitle\tbytes\nen\tCairo\t12\n", "utf-8")
    with pytest.raises(ConfigError, match=r"lengths.tsv:1: expected the header 'site<TAB>title<TAB>length'"):
        PageLengthTable(bad)
    with pytest.raises(ConfigError, match="page-length table not found at"):
        PageLengthTable(tmp_path / "missing.tsv")


def test_a_redirects_file_without_its_header_is_refused_by_the_table_and_the_reader(tmp_path):
    from factatlas.curate.popularity import read_redirects

    table = tmp_path / "lengths.tsv"
    table.write_text("site\ttitle\tlength\nen\tCairo\t12\n", "utf-8")
    redirects = tmp_path / "redirects.tsv"
    redirects.write_text("site\tsource\ttarget\nen\tCairo City\tCairo\n", "utf-8")
    for read in (lambda: PageLengthTable(table), lambda: read_redirects(redirects)):
        with pytest.raises(ConfigError, match=r"redirects.tsv:1: expected the header 'site<TAB>from<TAB>to'"):
            read()
    redirects.write_text("site\tfrom\tto\nen\tCairo City\tCairo\n", "utf-8")
    assert read_redirects(redirects) == {("en", "Cairo City"): "Cairo"}
    assert PageLengthTable(table).scores({"en": ["Cairo City"]}) == {("en", "Cairo City"): 12.0}
    assert read_redirects(tmp_path / "none.tsv") == {}
