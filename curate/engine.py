"""Curation: its configuration, ``curate()`` and its result. The five steps themselves (DLAMA's method)
are ``factatlas.curate.steps``; ``curate()`` checks everything it can without a query, resolves the
cultures, runs the steps in order and writes ``<run>/curate/``.
"""
from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from factatlas.curate.cache import QueryRunner
from factatlas.curate.candidates import (
    SPILL_NAME,
    default_popularity_source,
    find_candidates,
    rank_by_popularity,
)
from factatlas.curate.config import (
    CultureConfig,
    PredicateSpec,
    load_culture_config,
    load_pair,
    load_predicates,
    select_predicates,
)
from factatlas.curate.endpoints import (
    SAMPLE_PATH,
    EmbeddedEndpoint,
    SparqlEndpoint,
    make_endpoint,
)
from factatlas.curate.locality import article_sites, locality_sites
from factatlas.curate.popularity import (
    PopularitySource,
)
from factatlas.curate.presets import resolve as resolve_preset
from factatlas.curate.report import CountryCount, CurationResult  # noqa: F401 (importable here)
from factatlas.curate.runtypes import CurationConfig
from factatlas.curate.steps import (
    COUNTRY_CLASS,
    Knowledge,
    assemble_facts,
    augment_objects,
    check_countries,
    check_label_languages,
    collect_objects,
    country_issue,
    label_and_type_check,
    resolve_cultures,
)
from factatlas.errors import ConfigError
from factatlas.http import HttpPolicy, redact
from factatlas.records import (
    Culture,
    CulturePair,
    Drop,
    Fact,
    id_order,
)
from factatlas.rundir import RunDir
from factatlas.tables import write_drops, write_entities, write_facts

# ---- the run ----------------------------------------------------------------------------------



def curate(config: CurationConfig, run_dir: str | Path, *, endpoint: SparqlEndpoint | None = None,
           popularity_source: PopularitySource | None = None, sleeper: Callable[[float], None] = time.sleep,
           progress: Callable[[str], None] | None = None, policy: HttpPolicy | None = None,
           rng: random.Random | None = None) -> CurationResult:
    """Curate a culture pair into ``<run_dir>/curate/`` and record the stage in the manifest.

    One writer per run directory (a second process is refused); the outputs replace the old ones together
    (the query cache and log carry over), so a failed or killed run leaves the previous outputs intact."""
    # everything checkable without a query is checked before the run is locked: a refusal touches nothing
    # (issue 42), and a dry run refuses exactly what a run refuses (``preflight``)
    checked = preflight(config, endpoint=endpoint, popularity_source=popularity_source, policy=policy,
                        sleeper=sleeper)
    with RunDir(Path(run_dir)).lock():
        return _curate(checked, run_dir, sleeper=sleeper, progress=progress, rng=rng)


@dataclass(frozen=True)
class Preflight:
    """What a curation checks before it sends anything, once: the validated configuration, the pair, the
    predicates, the culture files, the endpoint (User-Agent, deadlines against the preset) and the
    popularity source. ``curate`` and ``curate --dry-run`` both start here, so a dry run refuses exactly
    what a run refuses."""

    config: CurationConfig
    pair: CulturePair
    specs: Mapping[str, PredicateSpec]
    culture_configs: tuple[CultureConfig, ...]
    policy: HttpPolicy
    endpoint: SparqlEndpoint | None  # None: the embedded sample, checked to exist but not loaded
    popularity_source: PopularitySource | None


def preflight(config: CurationConfig, *, endpoint: SparqlEndpoint | None = None,
              popularity_source: PopularitySource | None = None, policy: HttpPolicy | None = None,
              sleeper: Callable[[float], None] = time.sleep, load_sample: bool = True) -> Preflight:
    """Every check that needs no query, in the order a run makes them; opens no socket. With
    ``load_sample=False`` the embedded sample is only checked to exist (the dry run loads no store)."""
    config = config.validated()
    pair = load_pair(config.pair)  # refuses a culture paired with itself
    specs = select_predicates(load_predicates(config.predicates_file), config.predicates)
    culture_configs = tuple(load_culture_config(c) for c in pair.cultures)
    policy = policy or config.http_policy()
    if endpoint is None:
        url, _preset = resolve_preset(config.endpoint)
        if url is not None or load_sample:
            endpoint = make_endpoint(config.endpoint, config.user_agent or os.environ.get("FACTATLAS_USER_AGENT"),
                                     config.sample, policy, sleeper)
        elif not Path(config.sample or SAMPLE_PATH).exists():
            raise ConfigError(f"embedded Wikidata sample not found at {config.sample or SAMPLE_PATH}; regenerate "
                              "it with `python3 scripts/build_wikidata_sample.py` or pass --endpoint URL")
    if config.popularity != "sitelinks" and popularity_source is None:
        popularity_source = default_popularity_source(config, policy, sleeper)  # fail on a bad choice first
    return Preflight(config, pair, specs, culture_configs, policy, endpoint, popularity_source)


def _curate(checked: Preflight, run_dir: str | Path, *, sleeper: Callable[[float], None] = time.sleep,
            progress: Callable[[str], None] | None = None, rng: random.Random | None = None) -> CurationResult:
    """The checks are done (``preflight``, before the lock); the cultures are resolved and the five steps
    of the module docstring (and docs/curate.md) run in order."""
    started = datetime.now(UTC)
    config, pair, specs, policy = checked.config, checked.pair, checked.specs, checked.policy
    culture_configs, endpoint, popularity_source = list(checked.culture_configs), checked.endpoint, \
        checked.popularity_source
    say = progress or (lambda _msg: None)
    run = RunDir.open(run_dir)
    run.check_replaceable("curate")  # a read-only curate/ is refused before the queries, not after them
    out_dir = run.stage("curate")
    runner = QueryRunner(endpoint, out_dir / "cache", out_dir / "queries.jsonl", sleeper=sleeper, policy=policy,
                         rng=rng)
    roots = {COUNTRY_CLASS} | {r for s in specs.values() for t in (s.subject_type, s.object_type) for r in t.roots}
    know = Knowledge(runner, config.langs, roots, config.batch_size)
    drops: list[Drop] = []

    check_label_languages(config.langs, culture_configs, runner, endpoint.id)
    cultures, membership = resolve_cultures(pair.name, culture_configs, runner, know)
    warnings = check_countries(cultures, know)
    for warning in warnings:
        say(f"warning: {warning}")
    say("step 1/5: candidates")
    candidates = find_candidates(cultures, specs, runner, know, config.batch_size, drops, out_dir / SPILL_NAME)
    say("step 2/5: popularity")
    kept, source_name = rank_by_popularity(config, cultures, candidates, runner, popularity_source, drops)
    say("step 3/5: objects")
    direct = collect_objects(specs, kept, runner, config.batch_size, drops)
    say("step 4/5: labels")
    valid = label_and_type_check(config.langs, specs, kept, direct, know, drops)
    say("step 5/5: augmentation")
    augmented = augment_objects(specs, valid, cultures, runner, know, config, drops)

    subjects = {s for per_subject in valid.values() for s in per_subject}
    articles = article_sites(runner, subjects, locality_sites(config.langs, cultures), config.batch_size)
    facts = assemble_facts(kept, valid, augmented, articles)
    referenced = {f.subject for f in facts} | {o.qid for f in facts for o in f.objects}
    reference = date.fromisoformat(config.reference_date or datetime.now(UTC).date().isoformat())
    entities = {q: know.info[q].to_entity(q, config.langs, reference, config.alive_within_years)
                for q in sorted(referenced, key=id_order)}
    counts, country_counts = _count(facts, cultures, specs)
    result = CurationResult(facts, entities, drops, counts, country_counts, cultures, tuple(specs), membership,
                            {"sent": runner.stats.sent, "cached": runner.stats.cached,
                             "timeouts": runner.stats.failed, "splits": runner.stats.split,
                             "by_kind": dict(sorted(runner.stats.by_kind.items()))}, warnings)
    # the outputs and their manifest entry move in together: a kill never leaves one without the other
    with run.replace_stage("curate", keep=("cache", "queries.jsonl")) as staging:
        write_facts(staging / "facts.parquet", facts)
        write_entities(staging, entities.values())
        write_drops(staging / "dropped.parquet", drops)
        _record(run, config, pair, endpoint, result, runner, source_name, staging, started)
    return result


def country_problems(culture: Culture, endpoint: SparqlEndpoint, work_dir: str | Path) -> list[tuple[int, str, bool]]:
    """(index in ``culture.countries``, why, unknown) for each listed country the endpoint does not hold
    (``unknown``) or does not know as a country: curate's warning rule, for `factatlas validate` (queries
    cached in ``work_dir``)."""
    runner = QueryRunner(endpoint, Path(work_dir) / "cache", Path(work_dir) / "queries.jsonl")
    know = Knowledge(runner, ("en",), {COUNTRY_CLASS}, 50)
    know.describe(c.qid for c in culture.countries)
    out = []
    for i, country in enumerate(culture.countries):
        issue = country_issue(country.qid, know)
        if issue:
            info = know.info[country.qid]
            out.append((i, f"{country.qid} ({country.label}) {issue}", not info.classes and not any(info.labels.values())))
    return out


def endpoint_countries(endpoint: SparqlEndpoint) -> list[tuple[str, str]]:
    """(QID, English label or "") of every country (an item under Q6256) the endpoint holds, in QID order."""
    from factatlas.curate.sparql import WD, countries_query

    found: dict[str, str] = {}
    for row in endpoint.select(countries_query()):
        qid = row["country"]["value"].removeprefix(WD)
        found[qid] = found.get(qid) or (row.get("label") or {}).get("value", "")
    return sorted(found.items(), key=lambda kv: id_order(kv[0]))


def _count(facts: Sequence[Fact], cultures: Mapping[str, Culture], specs: Mapping[str, PredicateSpec]
           ) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict[str, int]]]]:
    counts = {c: {p: 0 for p in specs} for c in cultures}
    country_counts = {c: {q.qid: {p: 0 for p in specs} for q in cul.countries} for c, cul in cultures.items()}
    for f in facts:
        counts[f.culture][f.predicate] += 1
        for q in f.countries:
            if q in country_counts[f.culture]:
                country_counts[f.culture][q][f.predicate] += 1
    return counts, country_counts


def _record(run: RunDir, config: CurationConfig, pair: CulturePair, endpoint: SparqlEndpoint,
            result: CurationResult, runner: QueryRunner, source_name: str, staging: Path, started: datetime) -> None:
    drop_counts = Counter(f"{d.step}/{d.reason}" for d in result.drops)
    counts = {
        "facts": len(result.facts),
        "entities": len(result.entities),
        "drops": len(result.drops),
        "facts_by_culture_predicate": result.counts,
        "drops_by_reason": dict(sorted(drop_counts.items())),
        "empty_countries": result.empty_countries(),
    }
    resolved = asdict(config)
    resolved["langs"] = list(config.langs)
    # the pair's name (the build names the benchmark's pair, and so its release configs, after it), and the
    # file it came from when it was given as one
    resolved["pair"] = pair.name
    if pair.name != config.pair:
        resolved["pair_file"] = config.pair
    resolved["predicates"] = list(result.predicates)
    resolved.pop("user_agent", None)  # may contain an e-mail address; not needed to reproduce data
    for key in ("endpoint", "mediawiki_api", "mediawiki_rest"):
        if resolved.get(key):
            resolved[key] = redact(resolved[key])  # credentials never reach the manifest
    extra = {
        "endpoint": endpoint.id,
        "endpoint_kind": "embedded" if isinstance(endpoint, EmbeddedEndpoint) else "http",
        "popularity_source": source_name,
        **({"endpoint_preset": preset.name} if (preset := getattr(endpoint, "preset", None)) else {}),
        "membership": result.membership,
        "cultures": {c: [q.qid for q in cul.countries] for c, cul in result.cultures.items()},
        "queries": {**result.queries, "hashes": sorted(set(runner.stats.hashes))},
    }
    window = runner.stats.retrieval_window()
    if window:
        # what the data reflects: when the endpoint answered (cached answers keep their original time)
        extra["retrieved_first"], extra["retrieved"] = (
            datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds") for t in window)
    run.stage_entry(staging, "curate", config=resolved, counts=counts, extra=extra, started=started,
                    outputs=[staging / n for n in ("facts.parquet", "entities.parquet", "labels.parquet",
                                                   "dropped.parquet")])
