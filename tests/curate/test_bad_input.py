"""Bad input (issue 11): ids with a trailing newline, non-UTF-8 files, YAML alias bombs, unknown label
languages, a culture paired with itself. Each is refused before any query, with the file and the fix."""

from __future__ import annotations

import string
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factatlas.curate import sparql
from factatlas.curate.config import load_culture_config, load_pair, parse_langs, validate_file
from factatlas.curate.engine import curate
from factatlas.curate.localserver import SparqlApp, serve
from factatlas.errors import ConfigError
from factatlas.yamlfile import check_expansion, compose
from tests.clirun import factatlas

REPO = Path(__file__).resolve().parents[2]
ALGERIA = "{qid: Q262, label: Algeria, wikipedia_sites: [ar, en]}"

# ---- full-match validation of everything that reaches SPARQL or a URL (hypothesis) ---------------

# Independent oracles: plain string tests, not the regexes under test.


def is_qid(text: str) -> bool:
    return len(text) > 1 and text[0] == "Q" and text[1] != "0" and text[1:].isascii() and text[1:].isdigit()


def is_code(text: str, first: tuple[int, int], rest: tuple[int, int]) -> bool:
    parts = text.split("-")
    lower = set(string.ascii_lowercase)
    if not (first[0] <= len(parts[0]) <= first[1]) or not set(parts[0]) <= lower:
        return False
    return all(rest[0] <= len(p) <= rest[1] and set(p) <= lower | set(string.digits) for p in parts[1:])


ids = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"Q[0-9]{1,6}", fullmatch=True).flatmap(
        lambda q: st.sampled_from([q, q + "\n", q + " ", "\n" + q, q + "\r\n", q + "\x00", q + "}"])),
)
codes = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits + "-\n _.}", max_size=14),
    st.sampled_from(["en", "en\n", "zh-hans", "zh-hans\n", "zh-min-nan", "be-x-old", "en ", "EN", "e", "simple"]),
)


@given(ids)
def test_qids_are_full_matches(text):
    ok = is_qid(text)
    if ok:
        assert sparql.qid(text) == f"wd:{text}"
        assert sparql.pid("P" + text[1:]) == f"wdt:P{text[1:]}"
    else:
        with pytest.raises(sparql.UnsafeValue):
            sparql.qid(text)
        if text.startswith("Q"):  # the same digits (or junk) after P are no property id either
            with pytest.raises(sparql.UnsafeValue):
                sparql.pid("P" + text[1:])


@given(codes)
def test_language_and_site_codes_are_full_matches(text):
    if is_code(text, (2, 3), (2, 8)):
        assert sparql.lang_literal(text) == f'"{text}"'
        assert parse_langs(text) == (text,)
    else:
        with pytest.raises(sparql.UnsafeValue):
            sparql.lang_literal(text)
        if text.strip() and "," not in text and text.strip() == text:
            with pytest.raises(ConfigError):
                parse_langs([text])
    if is_code(text, (2, 3), (1, 8)):
        assert sparql.site_iri(text) == f"<https://{text}.wikipedia.org/>"
    else:
        with pytest.raises(sparql.UnsafeValue):
            sparql.site_iri(text)


def test_a_qid_with_a_trailing_newline_in_a_culture_file_is_refused_at_its_place(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text('label: C\ncountries:\n  - {qid: "Q262\\n", label: Algeria, wikipedia_sites: [ar]}\n', "utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml:3:\d+: countries\.0\.qid: 'Q262\\n' is not a Wikidata item id"):
        load_culture_config(str(path))
    path.write_text('label: C\ncountries:\n  - {qid: Q262, label: Algeria, wikipedia_sites: ["en\\n"]}\n', "utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml:3:\d+: .*'en\\n' is not a Wikipedia edition code"):
        load_culture_config(str(path))


# ---- files --------------------------------------------------------------------------------------


def test_a_non_utf8_config_file_is_a_clean_error_naming_the_file_and_the_fix(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("label: Côte\ncountries:\n  - {qid: Q1008, label: Côte d'Ivoire, wikipedia_sites: [fr]}\n"
                     .encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin\.yaml:1:9: not UTF-8 \(byte 0xf4 .*save the file as UTF-8"):
        validate_file(path)
    proc = factatlas("validate", path, cwd=tmp_path)
    assert proc.returncode == 2
    assert "latin.yaml:1:9: not UTF-8" in " ".join(proc.stderr.split()) and "Traceback" not in proc.stderr


BOMB = """label: Bomb
a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
countries: [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_a_yaml_alias_bomb_is_refused_before_anything_walks_it(tmp_path):
    assert len(BOMB.encode()) < 450  # 9**9 (387 million) scalars once expanded
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB, "utf-8")
    with pytest.raises(ConfigError, match=r"bomb\.yaml:\d+:\d+: YAML aliases expand this document to more than "
                                          r"100,000 nodes"):
        validate_file(path)


def test_alias_expansion_is_counted_exactly_and_modest_aliases_pass():
    root = compose("a: &a [1, 2]\nb: [*a, *a, *a]\n", "t.yaml")
    # root 1 + keys a, b (2) + a's list (3) + b's list 1 + 3 * 3
    assert check_expansion(root, "t.yaml") == 1 + 2 + 3 + 1 + 9
    with pytest.raises(ConfigError, match="more than 15 nodes"):
        check_expansion(root, "t.yaml", limit=15)
    with pytest.raises(ConfigError, match="recursive alias"):
        compose("a: &a [1, *a]\n", "r.yaml")


# ---- checks before any query ------------------------------------------------------------------


def test_an_unknown_label_language_stops_before_curation_queries(fixture_store, config, tmp_path):
    app = SparqlApp(fixture_store)
    with serve(app) as url, pytest.raises(ConfigError, match=r"--langs: no label in 'xx' for any of the pair's "
                                                             r"\d+ countries .*labels found in: en"):
        curate(replace(config, langs=("en", "xx"), endpoint=url + "/sparql"), tmp_path / "x")
    assert len(app.requests) == 1 and "FILTER(LANG(?label) IN" in app.requests[0]  # only the check itself
    assert not (tmp_path / "x" / "curate" / "facts.parquet").exists()


def test_langs_xx_exits_non_zero_on_the_cli(fixture_files, tmp_path):
    graph, table = fixture_files
    proc = factatlas("curate", "--pair", "arab-west", "--langs", "xx", "--sample", graph, "--page-lengths", table,
                     "--run", tmp_path / "r", cwd=REPO)
    assert proc.returncode == 2
    assert "--langs: no label in 'xx'" in " ".join(proc.stderr.split()) and "Traceback" not in proc.stderr


@pytest.mark.parametrize("same", ["arab", "SELF_FILE"])
def test_a_culture_paired_with_itself_is_refused_before_any_query(same, fixture_store, config, tmp_path):
    culture = tmp_path / "solo.yaml"
    culture.write_text(f"label: Solo\nmembership: {{predicate: P463, target: Q7172}}\ncountries: [{ALGERIA}]\n",
                       "utf-8")
    name = str(culture) if same == "SELF_FILE" else same
    pair = tmp_path / "pair.yaml"
    pair.write_text(f"name: self\ncultures: [{name}, {name}]\n", "utf-8")
    app = SparqlApp(fixture_store)
    with serve(app) as url, pytest.raises(ConfigError, match="both sides are the culture"):
        curate(replace(config, pair=str(pair), endpoint=url + "/sparql"), tmp_path / "s")
    assert app.requests == []
    with pytest.raises(ConfigError, match="both sides are the culture"):
        load_pair(str(pair))


def test_a_culture_file_given_as_a_pair_is_named_as_such_on_the_cli(tmp_path):
    from factatlas.curate.config import DATA_DIR

    culture = tmp_path / "mine.yaml"
    culture.write_text((DATA_DIR / "cultures" / "arab.yaml").read_text("utf-8"), "utf-8")
    proc = factatlas("curate", "--pair", culture, "--run", tmp_path / "run")
    assert proc.returncode == 2, proc.stderr
    assert f"{culture}:" in proc.stderr
    assert "this is a culture file (it lists countries), but a pair was expected" in proc.stderr
    assert "unknown key" not in proc.stderr
    assert not (tmp_path / "run").exists()


def test_an_unknown_culture_in_a_pair_file_points_at_its_line(tmp_path):
    pair = tmp_path / "pair.yaml"
    pair.write_text("name: mine\ncultures:\n  - arab\n  - westt\n", "utf-8")
    with pytest.raises(ConfigError) as info:
        load_pair(pair)
    assert str(info.value).startswith(f"{pair}:4:5: cultures[1]: unknown culture 'westt'. Did you mean 'west'?")


@pytest.mark.slow
def test_a_city_or_an_unknown_item_listed_as_a_country_is_warned_about_at_the_start(tmp_path):
    (tmp_path / "mixed.yaml").write_text(
        "label: Mixed\ncountries:\n  - {qid: Q970, label: Comoros, wikipedia_sites: [en]}\n"
        "  - {qid: Q90, label: Paris, wikipedia_sites: [en]}\n"
        "  - {qid: Q99999999, label: Typo, wikipedia_sites: [en]}\n", "utf-8")
    (tmp_path / "pair.yaml").write_text("cultures: [mixed.yaml, west]\n", "utf-8")
    proc = factatlas("curate", tmp_path / "run", "--pair", tmp_path / "pair.yaml", "--langs", "en")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    warnings = [line for line in lines if line.startswith("warning: culture")]
    assert warnings == [
        "warning: culture mixed: Q90 (Paris) is not a country here (P31 Q5119, Q1549591, not under Q6256); "
        "subjects are matched through it all the same",
        "warning: culture mixed: Q99999999 (Typo) is unknown at this endpoint (no label, no P31); check the QID",
    ]
    assert lines.index(warnings[-1]) < lines.index("step 1/5: candidates")  # before any curation query


def test_validate_rejects_a_city_and_warns_about_an_item_the_sample_lacks(tmp_path):
    """`factatlas validate` applies curate's country check and names each line: an item that is not a country
    (Paris) is refused; an item the embedded sample does not hold is a warning that says so, since the sample
    cannot tell a real country it lacks (issue 42: Tanzania was refused with "list a country (an item under
    Q6256)", which it is) from a wrong QID."""
    culture = tmp_path / "mixed.yaml"
    culture.write_text(
        "label: Mixed\ncountries:\n  - {qid: Q970, label: Comoros, wikipedia_sites: [en]}\n"
        "  - {qid: Q90, label: Paris, wikipedia_sites: [en]}\n"
        "  - {qid: Q924, label: Tanzania, wikipedia_sites: [sw, en]}\n", "utf-8")
    res = factatlas("validate", culture)
    assert res.returncode == 2
    warning, paris = res.stderr.splitlines()
    assert paris.startswith(f"error: {culture}:4:11: countries[1].qid: Q90 (Paris) is not a country here (P31 "
                            "Q5119, Q1549591, not under Q6256) at embedded:wikidata-sample.nt.gz")
    assert paris.endswith("; list a country (an item under Q6256) or remove it")
    assert warning.startswith(f"warning: {culture}:5:11: countries[2].qid: Q924 (Tanzania) is not in the embedded "
                              "Wikidata sample (embedded:wikidata-sample.nt.gz:")
    assert "`factatlas cultures countries` lists the sample's countries" in warning
    assert warning.endswith(f"`factatlas validate {culture} --endpoint URL`")
    culture.write_text("\n".join(culture.read_text("utf-8").splitlines()[:3] + [
        "  - {qid: Q924, label: Tanzania, wikipedia_sites: [sw, en]}"]) + "\n", "utf-8")
    res = factatlas("validate", culture)
    assert res.returncode == 0 and res.stdout == f"{culture}: ok — culture mixed: 2 countries\n", res.stderr
    assert res.stderr.startswith(f"warning: {culture}:4:11: countries[1].qid: Q924 (Tanzania) is not in")
    (tmp_path / "pair.yaml").write_text("cultures: [mixed.yaml, west]\n", "utf-8")
    assert "Q924 (Tanzania) is not in the embedded" in factatlas("validate", tmp_path / "pair.yaml").stderr
    from factatlas.curate.config import DATA_DIR

    res = factatlas("validate", DATA_DIR / "cultures" / "arab.yaml")
    assert res.returncode == 0 and "ok — culture arab" in res.stdout and res.stderr == "", res.stderr


def test_cultures_countries_lists_what_the_sample_holds_and_who_lists_it():
    res = factatlas("cultures", "countries")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[-1].startswith("92 countries at embedded:wikidata-sample.nt.gz:")
    rows = {line.split()[0]: line for line in lines[:-1]}
    assert len(rows) == 92 and "Q924" not in rows  # Tanzania: a real country the sample lacks
    assert rows["Q262"].split() == ["Q262", "Algeria", "arab"]
    assert rows["Q29999"].split()[-1] == "-"  # a country no bundled culture lists
    assert list(rows) == sorted(rows, key=lambda q: int(q[1:]))


def test_a_top_level_key_typo_in_a_culture_file_gets_a_did_you_mean(tmp_path):
    culture = tmp_path / "mine.yaml"
    culture.write_text("label: Mine\ncountrys:\n  - {qid: Q970, label: Comoros, wikipedia_sites: [en]}\n", "utf-8")
    with pytest.raises(ConfigError) as info:
        validate_file(culture)
    assert str(info.value).startswith(f"{culture}:2:1: top level: unknown key 'countrys'. Did you mean 'countries'?")


# ---- the pair's name names the release configs (issue 42) -----------------------------------------

@pytest.mark.parametrize("text, where, message", [
    ("name: my pair\ncultures: [arab, west]\n", "1:7", "name: 'my pair' is not a pair name"),
    ("name: a/b\ncultures: [arab, west]\n", "1:7", "name: 'a/b' is not a pair name"),
    ("name: .hidden\ncultures: [arab, west]\n", "1:7", "name: '.hidden' is not a pair name"),
])
def test_a_pair_name_that_cannot_name_a_release_config_is_refused_at_its_place(tmp_path, text, where, message):
    pair = tmp_path / "pair.yaml"
    pair.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as info:
        load_pair(pair)
    assert str(info.value).startswith(f"{pair}:{where}: {message}: a release config is named '<pair>.<lang>'")


def test_a_pair_file_without_a_name_is_named_after_the_file_and_a_bad_file_name_says_add_name(tmp_path):
    good = tmp_path / "iberia-rhine.yaml"
    good.write_text("cultures: [arab, west]\n", "utf-8")
    assert load_pair(good).name == "iberia-rhine"
    bad = tmp_path / "my pair.yaml"
    bad.write_text("cultures: [arab, west]\n", "utf-8")
    with pytest.raises(ConfigError, match=r"'my pair' is not a pair name.* add a line `name: <pair>`"):
        load_pair(bad)


def test_curate_records_the_pair_name_and_the_file_it_came_from(fixture_store, config, tmp_path):
    import json

    from factatlas.builder.run import curated_pair_name

    pair = tmp_path / "my" / "pair.yaml"
    pair.parent.mkdir()
    pair.write_text("name: iberia-rhine\ncultures: [arab, west]\n", "utf-8")
    app = SparqlApp(fixture_store)
    with serve(app) as url:
        curate(replace(config, pair=str(pair), endpoint=url + "/sparql"), tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))
    recorded = manifest["stages"]["curate"]["config"]
    assert (recorded["pair"], recorded["pair_file"]) == ("iberia-rhine", str(pair))
    assert curated_pair_name(manifest, ("arab", "west")) == ("iberia-rhine", None)
    # a run curated before: the file's path was recorded; the build names the pair after its cultures
    recorded["pair"] = "my/pair.yaml"
    assert curated_pair_name(manifest, ("arab", "west")) == ("arab-west", "my/pair.yaml")


# ---- option values: refused before any work, leaving nothing behind (issue 42) ---------------------

@pytest.mark.parametrize("field, value, message", [
    ("max_retry_after_s", float("nan"), "--max-retry-after nan: not a finite number; give one at least 0"),
    ("max_retry_after_s", float("inf"), "--max-retry-after inf: not a finite number"),
    ("timeout_s", float("nan"), "--timeout nan: not a finite number; give one above 0"),
    ("timeout_s", -1.0, "--timeout -1.0: must be above 0"),
])
def test_a_curation_config_refuses_non_finite_seconds(field, value, message):
    """The library path too (the quickstart and benchmarks build CurationConfig themselves): NaN passed
    `value < 0` and switched the Retry-After cap off."""
    from factatlas.curate.engine import CurationConfig

    with pytest.raises(ConfigError) as info:
        CurationConfig(pair="arab-west", **{field: value}).validated()
    assert str(info.value).startswith(message)


def test_a_refused_curate_on_an_existing_run_leaves_it_as_it_was_and_no_lock(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine\n")
    for words in (("--max-retry-after", "nan"), ("--pair", "arab-wset"), ("--popularity", "nope"), ("--predicates", "P99999"),
                  ("--sample", str(tmp_path / "nope.nt.gz"))):
        args = {"--pair": "arab-west", "--langs": "ar,en", **dict([words])}
        res = factatlas("curate", run, *[x for kv in args.items() for x in kv])
        assert res.returncode == 2 and res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        assert sorted(p.name for p in run.iterdir()) == ["notes.txt"], words  # no .factatlas.lock, no curate/
