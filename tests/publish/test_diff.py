"""Hand-built old/new benchmarks with known changes give exactly those changes."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

from factatlas.publish.diff import (
    FactChange,
    GroupCounts,
    LabelChange,
    LanguageCounts,
    diff_snapshots,
    format_diff,
    snapshot_from_files,
)
from factatlas.publish.render import ReleaseOptions, render_release
from factatlas.publish.source import load_source
from factatlas.publish.versions import Bump, Version
from tests.publish.publish_fixtures import BASE_FACTS, LABELS


def release_files(run, version="1.0.0", previous=None):
    return dict(render_release(load_source(run), ReleaseOptions("org/atlas", Version.parse(version)),
                               previous).files)


def diff_runs(old_run, new_run):
    return diff_snapshots(snapshot_from_files(release_files(old_run)), snapshot_from_files(release_files(new_run)))


def test_known_added_removed_and_changed_facts(bench_factory):
    new_facts = [f for f in BASE_FACTS if f[2] != "Q2"]  # west:P19:Q2 removed
    new_facts.append(("arab", "P19", "Q3", ("Q85",), ("Q79",)))  # added
    new_facts = [("west", "P36", "Q183", ("Q1726",), ("Q183",)) if f[2] == "Q183" else f for f in new_facts]
    labels = {q: dict(v) for q, v in LABELS.items()}
    labels["Q85"]["ar"] = "القاهره"  # Cairo relabelled in Arabic
    d = diff_runs(bench_factory(), bench_factory(facts=tuple(new_facts), labels=labels))

    assert d.added == ("arab:P19:Q3",)
    assert d.removed == ("west:P19:Q2",)
    cairo = LabelChange("Q85", "ar", "القاهرة", "القاهره")
    assert d.changed == (
        FactChange("arab:P19:Q1", "P19", "arab", labels=(cairo,)),
        FactChange("arab:P36:Q79", "P36", "arab", labels=(cairo,)),
        FactChange("west:P36:Q183", "P36", "west", gained=("Q1726",), lost=("Q64",)),
    )
    assert d.by_group == {
        ("P19", "arab"): GroupCounts(added=1, relabeled=1),
        ("P19", "west"): GroupCounts(removed=1),
        ("P36", "arab"): GroupCounts(relabeled=1),
        ("P36", "west"): GroupCounts(gained=1, lost=1),
    }
    # per language: both languages gain arab:P19:Q3 and lose west:P19:Q2; only ar has relabelled facts.
    # Answer forms changed in ar for Q1 and Q79 (Cairo's label) and in both languages for Q183 (new object).
    assert d.by_language == {
        "ar": LanguageCounts(facts_added=1, facts_removed=1, relabeled=2, prompts_added=1, prompts_removed=1,
                             prompts_reworded=3),
        "en": LanguageCounts(facts_added=1, facts_removed=1, prompts_added=1, prompts_removed=1,
                             prompts_reworded=1),
    }
    assert d.gold_changed == 2  # west:P36:Q183 in ar and en
    assert (d.objects_gained, d.objects_lost, d.labels_changed) == (1, 1, 2)
    assert d.suggested_bump is Bump.MAJOR
    reasons = d.reasons()
    assert reasons[Bump.MAJOR][:2] == ["1 facts removed", "1 gold objects lost"]
    assert reasons[Bump.MINOR][:2] == ["1 facts added", "1 gold objects gained"]
    text = format_diff(d, details=5)
    assert "| P36 | west | 0 | 0 | 1 | 1 | 0 |" in text
    assert "- changed west:P36:Q183: +Q1726; -Q64" in text
    assert "- removed west:P19:Q2" in text


def test_label_only_change_is_a_patch(bench_factory):
    labels = {q: dict(v) for q, v in LABELS.items()}
    labels["Q90"]["en"] = "Paris, France"
    d = diff_runs(bench_factory(), bench_factory(labels=labels))
    assert (d.added, d.removed) == ((), ())
    assert [c.fact_id for c in d.changed] == ["west:P19:Q2", "west:P36:Q142"]
    assert all(c.labels == (LabelChange("Q90", "en", "Paris", "Paris, France"),) for c in d.changed)
    assert d.suggested_bump is Bump.PATCH


def test_additions_only_are_minor_and_identical_is_none(bench_factory):
    more = (*BASE_FACTS, ("arab", "P19", "Q3", ("Q85",), ("Q79",)))
    d = diff_runs(bench_factory(), bench_factory(facts=more))
    assert d.added == ("arab:P19:Q3",) and d.removed == () and d.changed == ()
    assert d.suggested_bump is Bump.MINOR
    same = diff_runs(bench_factory(), bench_factory())
    assert same.suggested_bump is Bump.NONE and "no changes" in format_diff(same)


def test_language_added_and_removed(bench_factory):
    d = diff_runs(bench_factory(), bench_factory(langs=("ar", "en", "fr")))
    assert d.languages_added == ("fr",) and d.configs_added == ("arab-west.fr",)
    assert d.by_language["fr"] == LanguageCounts(facts_added=6, prompts_added=6)
    assert d.changed == ()  # new-language labels are additions, not label changes
    assert d.suggested_bump is Bump.MINOR
    back = diff_runs(bench_factory(langs=("ar", "en", "fr")), bench_factory())
    assert back.languages_removed == ("fr",) and back.configs_removed == ("arab-west.fr",)
    assert back.suggested_bump is Bump.MAJOR


def test_split_move_and_schema_change_are_major(bench_factory):
    d = diff_runs(bench_factory(), bench_factory(splits={"arab:P36:Q79": "dev"}))
    assert d.split_moves == 2 and d.suggested_bump is Bump.MAJOR
    old = release_files(bench_factory())
    new = dict(old)
    table = pq.read_table(io.BytesIO(old["data/all/test-00000-of-00001.parquet"]))
    table = table.append_column("extra", pa.array(["x"] * table.num_rows))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    new["data/all/test-00000-of-00001.parquet"] = sink.getvalue()
    d = diff_snapshots(snapshot_from_files(old), snapshot_from_files(new))
    assert d.schema_changes == ("data schema changed",) and d.suggested_bump is Bump.MAJOR
    meta = json.loads(old["benchmark/benchmark.json"])
    meta["schema_version"] = 2
    new = dict(old, **{"benchmark/benchmark.json": json.dumps(meta).encode()})
    d = diff_snapshots(snapshot_from_files(old), snapshot_from_files(new))
    assert d.schema_changes == ("benchmark schema_version 1 -> 2",)


def test_changelog_accumulates_newest_first(bench_factory):
    v1 = release_files(bench_factory())
    v11 = release_files(bench_factory(langs=("ar", "en", "fr")), "1.1.0", previous=v1)
    log = v11["CHANGELOG.md"].decode()
    assert log.index("## v1.1.0") < log.index("## v1.0.0")
    assert "Changes since v1.0.0 (a minor-level change)." in log
    assert "- minor: languages added: fr; configs added: arab-west.fr; 6 prompts added" in log
    assert "First release. 6 facts, 12 prompts in 2 language(s) (ar, en)" in log
    assert log.count("# Changelog") == 1
    manifest = json.loads(v11["manifest.json"])
    assert (manifest["previous_version"], manifest["suggested_bump"]) == ("1.0.0", "minor")


def test_list_columns_are_compared_as_joined_strings_even_in_sliced_chunks():
    from factatlas.publish.diff import _column_values

    nested = pa.array([[["a", "b"], ["c"]], [["d"]], [], [["e", "f"], []]], pa.list_(pa.list_(pa.string())))
    flat = pa.array([["x", "y"], [], ["z"], None], pa.list_(pa.string()))
    table = pa.table({"n": pa.chunked_array([nested.slice(1), nested.slice(0, 1)]),
                      "f": pa.chunked_array([flat.slice(1), flat.slice(0, 1)])})
    assert _column_values(table, "n") == ["d", "", "e\x1ff\x1e", "a\x1fb\x1ec"]
    assert _column_values(table, "f") == ["", "z", None, "x\x1fy"]
    assert _column_values(table, "missing") == [None] * 4


def _built_release(rows, folder, version, **kw):
    from tests.builder.builder_fixtures import build, write

    bench = write(build(rows, fractions={"dev": 0.3, "test": 0.7}, **kw), folder)
    return release_files(bench, version)


def test_a_recuration_that_only_adds_facts_is_minor(tmp_path):
    """v1: 40 facts built with dev:0.3; v2: the same curation plus 6 facts. Under the old per-cell quota
    cut, adding facts moved boundary facts between dev and test and forced a major bump."""
    from tests.builder.builder_fixtures import BASE_FACTS, synthetic_rows

    v1_rows = [*BASE_FACTS, *synthetic_rows(17)]
    v1 = _built_release(v1_rows, tmp_path / "v1", "1.0.0")
    v2 = _built_release([*v1_rows, *synthetic_rows(3, start=17)], tmp_path / "v2", "1.1.0")
    d = diff_snapshots(snapshot_from_files(v1), snapshot_from_files(v2))
    assert len(d.added) == 6 and d.removed == () and d.changed == ()
    assert (d.split_moves, d.facts_moved, d.split_salt_change) == (0, (), "")
    assert d.suggested_bump is Bump.MINOR
    assert d.reasons()[Bump.MINOR] == ["6 facts added", "12 prompts added"]


def test_a_new_split_salt_moves_facts_and_is_reported_as_major(tmp_path):
    from tests.builder.builder_fixtures import BASE_FACTS

    v1 = _built_release(BASE_FACTS, tmp_path / "v1", "1.0.0")
    v2 = _built_release(BASE_FACTS, tmp_path / "v2", "2.0.0", split_salt="other")
    d = diff_snapshots(snapshot_from_files(v1), snapshot_from_files(v2))
    # dev:0.3. u under the default salt: all six >= .387 (test); under "other": Q79 .029 and Q810 .091 fall
    # in dev -> two P36 facts move, 2 templates x 2 languages each = 8 prompts
    assert d.facts_moved == ("arab:P36:Q79", "arab:P36:Q810")
    assert d.split_moves == 8 and d.split_salt_change == "'factatlas-splits-v1' -> 'other'"
    assert d.suggested_bump is Bump.MAJOR
    assert d.reasons()[Bump.MAJOR] == ["8 prompts (2 facts) moved between splits",
                                       "split salt changed 'factatlas-splits-v1' -> 'other'"]
    assert "- moved split arab:P36:Q79" in format_diff(d, details=5)


def test_a_template_replaced_in_one_language_is_reported_and_major(bench_factory):
    """The en P19 template renamed (as a rewrite under a new id would be): P19/2 added and P19/1 removed
    in en only, and removing a template's prompts is a breaking change."""
    old = release_files(bench_factory())
    path = "data/all/test-00000-of-00001.parquet"
    rows = pq.read_table(io.BytesIO(old[path])).to_pylist()
    for r in rows:
        if r["lang"] == "en" and r["template_id"] == "P19/1":
            r["template_id"] = "P19/2"
            r["prompt_id"] = r["prompt_id"].replace("|P19/1", "|P19/2")
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(io.BytesIO(old[path]))), sink)
    d = diff_snapshots(snapshot_from_files(old), snapshot_from_files(dict(old, **{path: sink.getvalue()})))
    assert d.templates_added == {"en": ("P19/2",)} and d.templates_removed == {"en": ("P19/1",)}
    assert d.suggested_bump is Bump.MAJOR
    assert "1 templates removed" in d.reasons()[Bump.MAJOR]
    text = format_diff(d)
    assert "Templates added" in text and "P19/2" in text and "Templates removed" in text
