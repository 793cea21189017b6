from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from factatlas.errors import ConfigError
from factatlas.publish.card import majority_share, render_card, size_category, split_card
from factatlas.publish.render import (
    ReleaseOptions,
    read_release_dir,
    render_release,
    sha256,
    verify_release,
    write_release,
)
from factatlas.publish.source import load_source
from factatlas.publish.versions import Version
from factatlas.tables import PROMPTS_SCHEMA
from tests.publish.publish_fixtures import BASE_FACTS

V1 = Version.parse("1.0.0")


def render(run, version=V1, **kw):
    return render_release(load_source(run), ReleaseOptions("org/atlas", version, **kw))


def test_same_benchmark_gives_the_same_bytes(bench_factory, tmp_path):
    a, b = bench_factory(), bench_factory()  # built twice, in different folders
    ra, rb = render(a), render(b)
    assert ra.files == rb.files
    write_release(ra, tmp_path / "out")
    assert read_release_dir(tmp_path / "out") == ra.files


def test_layout_and_manifest_hashes(bench_factory):
    rel = render(bench_factory())
    assert sorted(rel.files) == [
        "CHANGELOG.md", "CITATION.bib", "README.md",
        "benchmark/benchmark.json", "benchmark/dropped.parquet", "benchmark/entities.parquet",
        "benchmark/facts.parquet", "benchmark/labels.parquet",
        "data/all/test-00000-of-00001.parquet",
        "data/arab-west.ar/test-00000-of-00001.parquet", "data/arab-west.en/test-00000-of-00001.parquet",
        "manifest.json", "templates/ar.yaml", "templates/en.yaml",
    ]
    manifest = json.loads(rel.files["manifest.json"])
    assert manifest["version"] == "1.0.0" and manifest["tag"] == "v1.0.0"
    assert manifest["files"]["README.md"] == {"sha256": sha256(rel.files["README.md"]),
                                              "bytes": len(rel.files["README.md"])}
    assert set(manifest["files"]) == set(rel.files) - {"manifest.json"}
    assert manifest["configs"]["arab-west.en"]["splits"]["test"]["rows"] == 6
    assert manifest["configs"]["all"]["splits"]["test"]["rows"] == 12
    assert manifest["provenance"]["query_hashes"] == ["aaa", "bbb"]
    assert manifest["provenance"]["endpoint"] == "http://127.0.0.1:9999/sparql"
    assert manifest["counts"] == {"facts": 6, "prompts": 12, "entities": 10}  # 6 subjects + 4 objects (countries are subjects)
    assert verify_release(rel.files) == []
    tampered = dict(rel.files, **{"README.md": b"changed"})
    assert verify_release(tampered) == ["README.md: sha256 differs from manifest.json"]


def test_data_files_have_the_explicit_schema_and_the_right_rows(bench_factory):
    rel = render(bench_factory())
    import io

    for path in (p for p in rel.files if p.startswith("data/")):
        table = pq.read_table(io.BytesIO(rel.files[path]))
        assert table.schema.equals(PROMPTS_SCHEMA, check_metadata=False), path
        ids = table.column("prompt_id").to_pylist()
        assert ids == sorted(ids)
        if ".en/" in path:
            assert set(table.column("lang").to_pylist()) == {"en"} and len(ids) == 6


def test_card_yaml_is_generated_from_the_data(bench_factory):
    rel = render(bench_factory(langs=("ar", "en", "fr")))
    meta, body = split_card(rel.card)
    assert meta["language"] == ["ar", "en", "fr"]
    assert meta["license"] == "cc0-1.0"
    assert meta["multilinguality"] == "multilingual"
    assert meta["size_categories"] == ["n<1K"]
    assert meta["task_categories"] == ["fill-mask"]
    assert meta["pretty_name"] == "factatlas facts: arab vs west (ar, en, fr)"  # not the run folder's name
    assert "arab-west-test" not in rel.card.split("## ")[0]
    assert [c["config_name"] for c in meta["configs"]] == ["arab-west.ar", "arab-west.en", "arab-west.fr", "all"]
    default = [c["config_name"] for c in meta["configs"] if c.get("default")]
    assert default == ["arab-west.en"]
    assert meta["configs"][2]["data_files"] == [{"split": "test", "path": "data/arab-west.fr/test-*.parquet"}]
    assert "wikidata" in meta["tags"]
    # body: countries with labels, predicate statistics, template status, provenance, citation
    assert "| arab | 3 | Egypt (Q79): 2, Jordan (Q810): 1 |" in body
    assert "| arab | 2 | 2 | 1.000 | 0.500 |" in body  # P36 for arab: 2 facts, 2 answers, 1 bit
    assert "| fr | 6 | 6 | 2 | draft: 2 |" in body
    assert "| endpoint | http://127.0.0.1:9999/sparql |" in body
    assert "| SPARQL queries | 2 (sha256 listed in manifest.json) |" in body
    assert "| Wikidata retrieval time | 2026-01-02T03:04:05+00:00 (end of the curate stage;" in body
    assert "2 template(s) are not reviewed by a native speaker (languages: fr)" in body
    # the card names exactly which templates are drafts (issue 26)
    assert "Draft templates: fr: all 2 templates." in body
    assert "@misc{org_atlas_v1_0_0," in body and "version = {1.0.0}" in body
    assert 'load_dataset("org/atlas", "arab-west.en", revision="v1.0.0")' in body


def test_the_cards_citation_drop_reasons_and_front_matter_are_exact(bench_factory):
    """The citation block (with the year of the retrieval), the limitation that names the build's drop reasons,
    and the card read back into its YAML and its body unchanged."""
    rel = render(bench_factory(langs=("ar", "en")))
    meta, body = split_card(rel.card)
    assert body.startswith("\n# factatlas facts: arab vs west (ar, en)\n") and rel.card.endswith(body)
    assert "@misc{org_atlas_v1_0_0,\n  title = {{factatlas facts: arab vs west (ar, en)}},\n  version = {1.0.0},\n" \
           "  howpublished = {\\url{https://huggingface.co/datasets/org/atlas}},\n  year = {2026},\n" \
           "  note = {Built with factatlas 0.1.0 from Wikidata}\n}" in body
    assert ("- 1 items were dropped while building (benchmark/dropped.parquet); most frequent reasons: "
            "no-label:ar: 1. Dropping facts") in body
    # a culture the benchmark names but holds no fact of is a row of 0 facts, not left out
    only_arab = render(bench_factory(facts=tuple(f for f in BASE_FACTS if f[0] == "arab")))
    assert "| west | 0 | — |" in split_card(only_arab.card)[1]
    text = render_card("a: 1\nb: [x]\n", "# Title\n\n---\nnot front matter\n")
    assert text == "---\na: 1\nb: [x]\n---\n\n# Title\n\n---\nnot front matter\n"
    assert split_card(text) == ({"a": 1, "b": ["x"]}, "\n# Title\n\n---\nnot front matter\n")
    assert split_card("# no front matter\n") == ({}, "# no front matter\n")


def test_overrides_and_imported_sources(bench_factory):
    rel = render(bench_factory(), license="cc-by-4.0", pretty_name="My Atlas")
    meta, _ = split_card(rel.card)
    assert (meta["license"], meta["pretty_name"]) == ("cc-by-4.0", "My Atlas")


def test_sharding_splits_and_the_glob_covers_every_shard(bench_factory):
    splits = {"arab:P36:Q79": "dev", "west:P36:Q142": "dev"}
    rel = render_release(load_source(bench_factory(splits=splits)),
                         ReleaseOptions("org/atlas", V1, max_shard_rows=3))
    en = sorted(p for p in rel.files if p.startswith("data/arab-west.en/"))
    assert en == ["data/arab-west.en/dev-00000-of-00001.parquet", "data/arab-west.en/test-00000-of-00002.parquet",
                  "data/arab-west.en/test-00001-of-00002.parquet"]
    meta, _ = split_card(rel.card)
    en_cfg = next(c for c in meta["configs"] if c["config_name"] == "arab-west.en")
    assert en_cfg["data_files"] == [{"split": "dev", "path": "data/arab-west.en/dev-*.parquet"},
                                    {"split": "test", "path": "data/arab-west.en/test-*.parquet"}]


def test_load_dataset_reads_the_rendered_folder(bench_factory, tmp_path):
    datasets = pytest.importorskip("datasets")
    rel = render(bench_factory())
    folder = write_release(rel, tmp_path / "rel")
    assert datasets.get_dataset_config_names(str(folder)) == ["arab-west.ar", "arab-west.en", "all"]
    expected = datasets.Features.from_arrow_schema(PROMPTS_SCHEMA)
    for config, rows in (("arab-west.ar", 6), ("arab-west.en", 6), ("all", 12)):
        ds = datasets.load_dataset(str(folder), config, cache_dir=str(tmp_path / "cache"))
        assert list(ds) == ["test"]
        assert ds["test"].num_rows == rows
        assert ds["test"].features == expected
    assert datasets.load_dataset(str(folder), "arab-west.en", cache_dir=str(tmp_path / "cache"))["test"][0][
        "text"] == "Naguib Mahfouz was born in [Y]."


def test_entropy_and_majority_baseline():
    assert majority_share([["a"], ["a"], ["b"], ["c"]]) == 0.5
    assert majority_share([["a", "b"]]) == 1.0  # one fact, two equally valid answers
    assert majority_share([["a"], ["a"], ["a", "c"]]) == 1.0
    assert majority_share([]) == 0.0


def test_size_categories():
    assert [size_category(n) for n in (0, 999, 1000, 12_000, 2_000_000)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "1M<n<10M"]


def test_bad_inputs_name_the_problem(bench_factory, tmp_path):
    run = bench_factory()
    with pytest.raises(ConfigError, match="invalid repository id 'no-slash'"):
        render_release(load_source(run), ReleaseOptions("no-slash", V1))
    with pytest.raises(ConfigError, match="split 'held out' is not a valid split name"):
        render(bench_factory(splits={"arab:P36:Q79": "held out"}))
    with pytest.raises(ConfigError, match="not a run directory"):
        load_source(tmp_path / "nowhere")
    (run / "build" / "facts.parquet").unlink()
    with pytest.raises(ConfigError, match="lacks facts.parquet"):
        load_source(run)


def test_benchmark_dir_without_run_and_without_template_copies(bench_factory, tmp_path):
    from tests.publish.publish_fixtures import make_benchmark

    bench = make_benchmark(tmp_path / "bare", with_run=False, facts=BASE_FACTS[:2])
    src = load_source(bench)
    assert src.provenance.endpoint == "not recorded" and src.provenance.query_hashes == ()
    rel = render_release(src, ReleaseOptions("org/atlas", V1))
    assert "| endpoint | not recorded |" in rel.card


def test_imported_benchmark_gets_other_licence_and_no_library_templates(bench_factory):
    import shutil

    run = bench_factory()
    meta_path = run / "build" / "benchmark.json"
    meta = json.loads(meta_path.read_text())
    meta["source"] = {"kind": "dlama-v1", "path": "/data/dlama"}
    meta_path.write_text(json.dumps(meta))
    shutil.rmtree(run / "build" / "templates")
    src = load_source(run)
    assert src.templates_origin == "none" and src.templates == {}
    rel = render_release(src, ReleaseOptions("org/atlas", V1))
    meta_yaml, body = split_card(rel.card)
    assert meta_yaml["license"] == "other" and meta_yaml["source_datasets"] == ["extended"]
    assert "imported from `dlama-v1`" in body and "| templates in this repo | not available |" in body
    assert not any(p.startswith("templates/") for p in rel.files)


def test_the_card_names_each_draft_template_by_predicate():
    from factatlas.publish.card import draft_list

    assert draft_list(["P106/2", "P17/1", "P17/q1", "P19/3"], 10) == "P17 (1, q1), P19 (3), P106 (2)"
    assert draft_list(["P17/1", "P17/2"], 2) == "all 2 templates"


# ---- release config names (issue 42): every config a release names loads with datasets ---------------

def test_a_pair_that_cannot_name_a_config_is_refused_before_anything_is_written(bench_factory, tmp_path):
    from tests.clirun import factatlas

    run = bench_factory(pair="my/pair.yaml")  # what a run curated from a pair file recorded before issue 42
    with pytest.raises(ConfigError, match=r"the release config 'my/pair.yaml.ar' cannot be loaded with "
                                          r"`datasets.load_dataset` .*the benchmark's pair is 'my/pair.yaml'. "
                                          r"Rebuild it"):
        render(run)
    target = tmp_path / "rel.git"
    res = factatlas("publish", run, "--repo", "org/atlas", "--version", "1.0.0", "--target", f"git:{target}")
    assert res.returncode == 2 and res.stderr.startswith("error: the release config 'my/pair.yaml.ar'")
    assert not target.exists() and not (run / "release").exists()


def test_every_name_the_config_rule_accepts_datasets_accepts_too():
    datasets = pytest.importorskip("datasets")
    from datasets.builder import BuilderConfig, InvalidConfigName
    from datasets.naming import INVALID_WINDOWS_CHARACTERS_IN_PATH
    from hypothesis import given
    from hypothesis import strategies as st

    from factatlas.publish.render import config_name_problem

    for char in INVALID_WINDOWS_CHARACTERS_IN_PATH:  # datasets' own blacklist: each refused by ours
        assert config_name_problem(f"arab{char}west.en") is not None
        with pytest.raises(InvalidConfigName):
            BuilderConfig(name=f"arab{char}west.en")
    for hidden in (".arab-west.en", "arab-west.", "arab..west.en", "arab west.en", "a" * 65):
        assert config_name_problem(hidden) is not None

    @given(st.text(alphabet="abcXYZ019-_./:\\* ", min_size=1, max_size=12))
    def accepted_by_both(name):
        if config_name_problem(name) is None:
            BuilderConfig(name=name)  # raises InvalidConfigName if datasets disagrees

    accepted_by_both()
    assert datasets.__version__
