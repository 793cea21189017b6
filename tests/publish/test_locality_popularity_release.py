"""Knowledge locality and popularity reach the release: parquet columns and card sections."""

from __future__ import annotations

import io

import pyarrow.parquet as pq

from factatlas.publish.render import ReleaseOptions, render_release
from factatlas.publish.source import load_source
from factatlas.publish.versions import Version
from factatlas.tables import PROMPTS_SCHEMA, write_table

# fact -> (article_langs, home_langs, popularity, quantile, log10)
EXTRA = {
    "arab:P36:Q79": (("ar", "en", "fr"), ("ar", "en", "fr"), 5000.0, 2, 3),
    "arab:P36:Q810": (("ar",), ("ar",), 40.0, 1, 1),  # no English article: local knowledge in en
    "west:P36:Q142": (("en", "fr"), ("en", "fr"), 9000.0, 4, 3),
    "west:P36:Q183": (("de", "en"), ("de", "en"), 7000.0, 3, 3),  # no Arabic article: local in ar
    "arab:P19:Q1": (("ar", "en"), ("ar",), 300.0, 1, 2),
    "west:P19:Q2": (("en",), ("en",), 800.0, 4, 2),  # no Arabic article
}


def test_release_carries_locality_and_popularity(bench_factory):
    run = bench_factory()
    path = run / "build" / "prompts.parquet"
    rows = pq.read_table(path).to_pylist()
    for r in rows:
        arts, home, pop, q, lb = EXTRA[r["fact_id"]]
        r.update(article_langs=list(arts), home_langs=list(home), popularity=pop, popularity_quantile=q,
                 popularity_log10=lb)
    write_table(path, rows, PROMPTS_SCHEMA, sort_by=("prompt_id",))
    rel = render_release(load_source(run), ReleaseOptions("org/atlas", Version.parse("1.0.0")))
    table = pq.read_table(io.BytesIO(rel.files["data/arab-west.en/test-00000-of-00001.parquet"])).to_pylist()
    got = {r["fact_id"]: (tuple(r["article_langs"]), tuple(r["home_langs"]), r["popularity"],
                          r["popularity_quantile"], r["popularity_log10"]) for r in table}
    assert got == EXTRA
    card = rel.files["README.md"].decode("utf-8")
    # per language: facts, with an article there, local (culture article, none there), not recorded
    assert "| ar | 6 | 3 | 3 | 0 |" in card
    assert "| en | 6 | 5 | 1 | 0 |" in card
    # per quantile: facts, popularity range
    assert "| 1 | 2 | 40 | 300 |" in card and "| 4 | 2 | 800 | 9000 |" in card


def test_card_says_when_locality_is_not_recorded(bench_factory):
    rel = render_release(load_source(bench_factory()), ReleaseOptions("org/atlas", Version.parse("1.0.0")))
    card = rel.files["README.md"].decode("utf-8")
    assert "## Knowledge locality" in card and "Not recorded for this benchmark (imported" in card


def test_the_card_names_the_popularity_signal():
    from factatlas.release_input import provenance_from

    manifest = {"stages": {"curate": {"popularity_source": "pageviews:sample-synthetic"}}}
    assert provenance_from({"source": {"kind": "curated"}}, manifest, ()).popularity_source == \
        "pageviews:sample-synthetic"
    assert provenance_from({"source": {"kind": "dlama-v1"}}, {}, ()).popularity_source.startswith("length:dlama-v1")
    assert provenance_from({}, {}, ()).popularity_source == "not recorded"
