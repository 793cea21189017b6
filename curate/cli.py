"""Commands of this stage (registered on the root `factatlas` app):
`curate`, `cultures list|show`, `predicates list`, `validate CONFIG`."""

from __future__ import annotations

from pathlib import Path

import typer

from factatlas.balance import DEFAULT_MAX_SHARE
from factatlas.http import DEFAULT_MAX_RETRY_AFTER_S, DEFAULT_TIMEOUT_S
from factatlas.options import existing, number, share

cultures_app = typer.Typer(help="Cultures (curate/cultures/*.yaml).\n\nExample: factatlas cultures show arab",
                           no_args_is_help=True)
predicates_app = typer.Typer(help="Predicates (the registry, factatlas/predicates.yaml).\n\nExample: factatlas predicates list",
                             no_args_is_help=True)


def curate_command(
    run: Path | None = typer.Argument(None, metavar="RUN", help="Run directory (default: runs/<pair>)."),
    pair: str = typer.Option(..., "--pair", help="A pair from curate/pairs.yaml (arab-west, ...) or a pair YAML file."),
    langs: str = typer.Option("en", "--langs", help="Comma-separated label languages, e.g. ar,en."),
    old_run: Path | None = typer.Option(None, "--run", hidden=True, help="Deprecated: give RUN instead."),
    endpoint: str | None = typer.Option(None, "--endpoint",
                                        help="wdqs | qlever-wikidata (a public endpoint with its known limits) | "
                                             "a SPARQL endpoint URL (default: the embedded Wikidata sample)."),
    user_agent: str | None = typer.Option(None, "--user-agent", envvar="FACTATLAS_USER_AGENT",
                                          help="Descriptive agent with contact info (required for the public WDQS)."),
    max_subjects: int = typer.Option(1000, "--max-subjects", callback=number(at_least=1), help="At most N subjects per predicate per culture."),
    country_quota: int | None = typer.Option(None, "--country-quota", callback=number(at_least=1),
                                             help="At most N subjects per country per predicate."),
    popularity: str = typer.Option("length", "--popularity", "--rank-by",
                                   help="length | edits | sitelinks | pageviews."),
    predicates: str | None = typer.Option(None, "--predicates", help="Subset, e.g. P17,P19 (default: all)."),
    sample: Path | None = typer.Option(None, "--sample", callback=existing("file", "an N-Triples file (.nt or .nt.gz)"), help="Another N-Triples file for the embedded endpoint."),
    page_lengths: Path | None = typer.Option(None, "--page-lengths", callback=existing("file", "a TSV table site, title, length"), help="TSV site/title/length table."),
    page_views: Path | None = typer.Option(None, "--page-views", callback=existing("file", "a TSV table site, title, monthly_views"),
                                           help="TSV site/title/monthly_views table (--popularity pageviews)."),
    pageviews_months: str = typer.Option("2024-01:2024-12", "--pageviews-months",
                                         help="Whole months FIRST:LAST whose mean monthly views rank subjects."),
    pageviews_url: str | None = typer.Option(None, "--pageviews-url", hidden=True,
                                             help="The per-article REST URL template (tests, mirrors)."),
    timeout: float | None = typer.Option(None, "--timeout", callback=number(above=0, unit="seconds"),
                                         help="Total deadline per HTTP request in seconds, body included "
                                              f"(default: a preset's server deadline + 5 s, else {DEFAULT_TIMEOUT_S:g})."),
    max_retry_after: float = typer.Option(DEFAULT_MAX_RETRY_AFTER_S, "--max-retry-after", callback=number(at_least=0, unit="seconds"),
                                          help="Wait at most this many seconds for a server's Retry-After; "
                                               "a longer one stops the run with the time to retry."),
    max_culture_share: float = typer.Option(DEFAULT_MAX_SHARE, "--max-culture-share", callback=share(),
                                            help="Warn when one culture holds more than this share of the facts."),
    reference_date: str = typer.Option("", "--reference-date",
                                       help="YYYY-MM-DD: the date life status is decided at (a person born within "
                                            "--alive-within-years of it, with no death recorded, is alive; "
                                            "default: today, recorded in the manifest)."),
    alive_within_years: int = typer.Option(100, "--alive-within-years",
                                           help="Years before --reference-date a birth makes a person alive "
                                                "when Wikidata records no death."),
    dry_run: bool = typer.Option(False, "--dry-run",
                                 help="Print the queries the configuration fixes, their count and what the later "
                                      "steps send; send nothing, write nothing."),
) -> None:
    """Curate culture-filtered facts from Wikidata into RUN/curate/.

    Example: factatlas curate runs/arab-west --pair arab-west --langs ar,en
    """
    from factatlas.curate.engine import CurationConfig, curate
    from factatlas.curate.presets import resolve

    url, preset = resolve(endpoint)
    if timeout is None:
        timeout = preset.client_timeout_s if preset else DEFAULT_TIMEOUT_S
    config = CurationConfig(
        pair=pair, langs=tuple(x.strip() for x in langs.split(",")), endpoint=endpoint, user_agent=user_agent,
        sample=str(sample) if sample else None, max_subjects=max_subjects, country_quota=country_quota,
        popularity=popularity,
        predicates=tuple(p.strip() for p in predicates.split(",") if p.strip()) if predicates else (),
        page_lengths=str(page_lengths) if page_lengths else None, timeout_s=timeout,
        max_retry_after_s=max_retry_after,
        page_views=str(page_views) if page_views else None, pageviews_months=pageviews_months,
        reference_date=reference_date, alive_within_years=alive_within_years,
        **({"pageviews_url": pageviews_url} if pageviews_url else {}),
    )
    run_dir = _run_directory(run, old_run, pair)
    if dry_run:
        from factatlas.curate.engine import preflight

        preflight(config, load_sample=False)  # what a run refuses before its first query, the dry run refuses
        _print_plan(config, url, preset)
        return
    result = curate(config, run_dir, progress=_print_progress)
    typer.echo(result.table())
    _print_balance(result, max_culture_share)
    typer.echo(f"\nwrote {run_dir / 'curate'}: {len(result.facts)} facts, {len(result.entities)} entities, "
              f"{len(result.drops)} drops; queries sent {result.queries['sent']}, cached {result.queries['cached']}")


def _run_directory(run: Path | None, old_run: Path | None, pair: str) -> Path:
    """RUN, or the deprecated --run, or runs/<pair>; two different ones are an error."""
    if run is not None and old_run is not None and run != old_run:
        from factatlas.errors import ConfigError

        raise ConfigError(f"two run directories given: RUN {run} and --run {old_run}; give RUN only")
    return run or old_run or Path("runs") / Path(pair).stem


def _print_progress(message: str) -> None:
    from rich.markup import escape

    from factatlas.console import err

    if message.startswith("warning: "):
        err.print(f"[bold yellow]warning:[/] {escape(message[9:])}", highlight=False)
    else:
        err.print(f"[dim]{escape(message)}[/dim]", highlight=False)


def _print_plan(config, url: str | None, preset) -> None:
    from collections import Counter

    from factatlas.curate.plan import plan_queries
    from factatlas.http import redact

    plan = plan_queries(config)
    total = len(plan.queries)
    for i, (kind, text) in enumerate(plan.queries, start=1):
        typer.echo(f"# [{i}/{total}] {kind}\n{text}")
    kinds = Counter(kind.split(":")[0] for kind, _ in plan.queries)
    where = redact(url) if url else "the embedded Wikidata sample"
    if preset:
        where += (f" (preset {preset.name}: server deadline {preset.server_timeout_s:g} s, client "
                  f"{config.timeout_s:g} s, at least {preset.min_interval_s:g} s between requests, row cap "
                  f"{preset.result_cap or 'none documented'}, User-Agent "
                  f"{'required' if preset.user_agent_required else 'sent'})")
    typer.echo(f"dry run: {total} queries fixed by the configuration, none sent, to {where}: "
               + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    typer.echo("the later steps depend on the answers:")
    for line in plan.later:
        typer.echo(f"  {line}")


def _print_balance(result, max_share: float) -> None:
    from factatlas.balance import balance_report
    from factatlas.console import err

    lines, warning = balance_report(result.facts, result.cultures, result.entities, max_share)
    typer.echo("\n" + "\n".join(lines))
    if warning:
        err.print(f"[bold yellow]warning:[/] {warning}", highlight=False)


@cultures_app.command("list")
def cultures_list() -> None:
    """List the bundled cultures and pairs.

    Example: factatlas cultures list
    """
    from factatlas.curate.config import list_cultures, list_pairs, load_culture_config

    for name in list_cultures():
        cc = load_culture_config(name)
        rule = cc.culture.membership_rule
        how = f"rule ?c wdt:{rule.predicate} wd:{rule.target} ({cc.membership_use})" if rule else "list"
        typer.echo(f"{name:<16} {len(cc.culture.countries):>3} countries  {how:<34} {cc.culture.label}")
    typer.echo("pairs: " + ", ".join(list_pairs()))


@cultures_app.command("show")
def cultures_show(name: str = typer.Argument(..., help="Culture name or path to a culture YAML.")) -> None:
    """Show a culture's countries and Wikipedia editions.

    Example: factatlas cultures show arab
    """
    from factatlas.curate.config import load_culture_config

    cc = load_culture_config(name)
    c = cc.culture
    typer.echo(f"{c.name}: {c.label} — {c.description}".rstrip(" —"))
    if c.membership_rule:
        r = c.membership_rule
        typer.echo(f"membership rule: ?country wdt:{r.predicate} wd:{r.target} (use: {cc.membership_use}; "
                   f"editions for added countries: {', '.join(r.wikipedia_sites)})")
    for country in c.countries:
        typer.echo(f"  {country.qid:<9} {country.label:<28} {', '.join(country.wikipedia_sites)}")


@predicates_app.command("list")
def predicates_list() -> None:
    """List the predicates with their types, culture filter and augmentation.

    Example: factatlas predicates list
    """
    from factatlas.curate.config import load_predicates

    for pid, s in load_predicates().items():
        typer.echo(f"{pid:<6} {s.label:<36} {s.subject_type.name:>16} -> {s.object_type.name:<14} "
                  f"culture: {s.describe_filter():<32} augment: {s.augment}")


def validate_command(
    config: Path = typer.Argument(..., help="A culture, pair, pairs or predicates YAML file."),
    endpoint: str = typer.Option("embedded", "--endpoint", help="Where the countries of a culture are looked up: "
                                 "'embedded' (the Wikidata sample) or a SPARQL endpoint URL."),
) -> None:
    """Validate a curate config file (unknown keys, malformed QIDs/PIDs/language codes), and that every
    country a culture (or a pair's cultures) lists is a country at the endpoint.

    Example: factatlas validate curate/cultures/arab.yaml
    """
    from factatlas.curate.config import validate_file

    summary = validate_file(config)
    check_listed_countries(config, endpoint)
    typer.echo(summary)


def check_listed_countries(path: Path, endpoint_url: str) -> None:
    """A ConfigError naming each listed country the endpoint does not know as a country (curate's own rule,
    which only warns), at the line of its qid. An item the embedded sample does not hold is a warning: the
    sample is a small part of Wikidata (`factatlas cultures countries` lists its countries), so it cannot
    tell a real country it lacks (Tanzania) from a wrong QID; validate against a real endpoint for that."""
    import tempfile

    from factatlas.console import err
    from factatlas.curate.config import load_culture_config, load_located, load_pair
    from factatlas.curate.endpoints import EmbeddedEndpoint, make_endpoint
    from factatlas.curate.engine import country_problems
    from factatlas.errors import ConfigError

    data = load_located(path).data
    if not isinstance(data, dict) or "pairs" in data or "predicates" in data or "types" in data:
        return
    sources = [str(path)] if "countries" in data or "membership" in data else list(load_pair(path).cultures)
    endpoint = make_endpoint(endpoint_url)
    sample = isinstance(endpoint, EmbeddedEndpoint)
    problems = []
    with tempfile.TemporaryDirectory(prefix="factatlas-validate-") as work:
        for source in sources:
            cc = load_culture_config(source)
            doc = load_located(cc.path)
            for i, why, unknown in country_problems(cc.culture, endpoint, work):
                line, col = doc.where("countries", i, "qid")
                if unknown and sample:
                    err.print(f"warning: {doc.path}:{line}:{col}: countries[{i}].qid: {why.split(' is unknown')[0]} is "
                              f"not in the embedded Wikidata sample ({endpoint.id}), so curating from the sample "
                              "gives it no facts; `factatlas cultures countries` lists the sample's countries. "
                              f"Check the QID where you curate from: `factatlas validate {path} --endpoint URL`",
                              highlight=False, markup=False, soft_wrap=True)
                    continue
                fix = "check the QID" if unknown else "list a country (an item under Q6256) or remove it"
                problems.append(ConfigError(f"countries[{i}].qid: {why} at {endpoint.id}; {fix}", doc.path, line, col))
    if problems:
        first = problems[0]
        rest = "".join(f"\n{p}" for p in problems[1:])
        raise ConfigError(first.message + rest, first.path, first.line, first.col)


@cultures_app.command("countries")
def cultures_countries(
    endpoint: str = typer.Option("embedded", "--endpoint", help="'embedded' (the Wikidata sample) or a SPARQL "
                                 "endpoint URL."),
    sample: Path | None = typer.Option(None, "--sample", callback=existing("file", "an N-Triples file"),
                                       help="Another N-Triples file for the embedded endpoint."),
) -> None:
    """List the countries (items under Q6256) the endpoint holds, and the bundled cultures that list each:
    what a culture file can name and get facts for when curating from there.

    Example: factatlas cultures countries
    """
    from factatlas.curate.config import list_cultures, load_culture_config
    from factatlas.curate.endpoints import make_endpoint
    from factatlas.curate.engine import endpoint_countries

    where = make_endpoint(endpoint, sample=sample)
    listed: dict[str, list[str]] = {}
    for name in list_cultures():
        for country in load_culture_config(name).culture.countries:
            listed.setdefault(country.qid, []).append(name)
    countries = endpoint_countries(where)
    for qid, label in countries:
        typer.echo(f"{qid:<10} {label or '(no English label)':<36} {', '.join(listed.get(qid, [])) or '-'}")
    typer.echo(f"{len(countries)} countries at {where.id}")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
    app.command("curate")(curate_command)
    app.command("validate")(validate_command)
    app.add_typer(cultures_app, name="cultures")
    app.add_typer(predicates_app, name="predicates")
