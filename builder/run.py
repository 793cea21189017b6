"""The run-directory edge of the build: `factatlas build RUN` reads ``<run>/curate/``, renders with the
template library (``builder.build.build_benchmark``) and replaces ``<run>/build/`` whole, beside the exact
template files it was rendered from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from factatlas.builder.build import BuildResult, BuildSpec, build_benchmark, order_cultures, toolkit_version
from factatlas.builder.hygiene import Hygiene
from factatlas.builder.losses import losses_lines, parallel_losses, previous_languages, shrinking_losses
from factatlas.builder.splits import DEFAULT_FRACTIONS, DEFAULT_SALT
from factatlas.errors import ConfigError
from factatlas.records import Drop, Entity, Fact, pair_name_problem

CURATED_FILES = ("facts.parquet", "entities.parquet", "labels.parquet")


class BuildFailed(ConfigError):
    """No benchmark came out of the inputs; nothing was written."""


class BuildRefused(ConfigError):
    """A language added to the run's languages would remove templates or facts from the others."""


def curated_pair_name(manifest: Mapping[str, Any], cultures: Sequence[str]) -> tuple[str, str | None]:
    """(the benchmark's pair name, the recorded value it replaces or None). The curate stage records the
    pair's name; a run curated before that recorded the pair file's path ("my/pair.yaml"), which cannot name
    a release config: then the pair is named after its cultures ("iberia-rhine"), and the caller says so."""
    config = manifest.get("stages", {}).get("curate", {}).get("config", {})
    pair = config.get("pair") if isinstance(config, Mapping) else None
    if pair and pair_name_problem(str(pair)) is None:
        return str(pair), None
    return "-".join(cultures), (str(pair) if pair else None)


def copy_template_files(library: Any, langs: Sequence[str], folder: Any) -> list[Any]:
    """Keep the exact template files a benchmark was rendered from beside it (releases ship them)."""
    from factatlas.atomic import write_bytes

    written = []
    for lang in langs:
        target = Path(folder) / f"{lang}.yaml"
        write_bytes(target, Path(library.file(lang).path).read_bytes())
        written.append(target)
    return written


def write_added_templates(library: Any, path: Any) -> Any:
    """The templates added to the library files (``--mlama-paraphrases``), one JSON line each, beside the
    copied files: a release then holds every template its prompts were rendered from."""
    import json

    from factatlas.atomic import write_bytes

    lines = [json.dumps({"id": t.id, "lang": t.lang, "predicate": t.predicate, "kind": t.kind, "text": t.text,
                         "source": t.source, "from": t.path}, ensure_ascii=False)
             for lang in library.languages for t in library.templates(lang) if t.source == "mlama"]
    write_bytes(path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))
    return path


@dataclass(frozen=True)
class Curated:
    """What ``<run>/curate/`` holds for the build."""

    facts: list[Fact]
    entities: dict[str, Entity]
    drops: list[Drop]


def require_curated(root: Path, langs: Sequence[str]) -> None:
    curate = root / "curate"
    absent = [str(curate / n) for n in CURATED_FILES if not (curate / n).exists()]
    if absent:
        raise ConfigError(f"{root}: no curated facts ({', '.join(absent)} missing); run "
                          f"`factatlas curate {root} --pair PAIR --langs {','.join(langs)}` first")


def read_curated(root: Path) -> Curated:
    from factatlas.tables import read_drops, read_entities, read_facts

    curate = root / "curate"
    upstream = read_drops(curate / "dropped.parquet") if (curate / "dropped.parquet").exists() else []
    return Curated(read_facts(curate / "facts.parquet"), read_entities(curate), upstream)


def load_run_library(langs: Sequence[str], templates_root: str | None, mlama_paraphrases: str | Any | None
                     ) -> tuple[Any, dict[str, Any]]:
    """The template library of ``langs`` (with mLAMA's paraphrases added when asked) and what the
    benchmark's source records about the additions."""
    from factatlas.templates import load_library

    library = load_library(langs=tuple(langs), root=templates_root)
    if mlama_paraphrases is None:
        return library, {}
    from factatlas.builder.pararel import read_mlama_paraphrases, with_mlama_paraphrases

    added = with_mlama_paraphrases(library, read_mlama_paraphrases(mlama_paraphrases, langs), str(mlama_paraphrases))
    return added.library, {"mlama_paraphrases": {
        "path": str(mlama_paraphrases), "added": {lang: list(ps) for lang, ps in sorted(added.added.items())},
        "skipped": dict(added.skipped)}}


def check_outcome(root: Path, result: BuildResult, langs: Sequence[str], allow_shrink: bool) -> BuildResult:
    """The result with its parallel losses, or BuildFailed (no fact survived) or BuildRefused (a new language
    would remove facts or candidates from every language, and ``allow_shrink`` was not given)."""
    if not result.counts["facts"]:
        top = ", ".join(f"{reason} x{n}" for reason, n in sorted(result.content.stats["dropped"].items(),
                                                                 key=lambda kv: (-kv[1], kv[0]))[:5])
        kept = f"{root / 'build'} is unchanged" if (root / "build").exists() else "nothing was written"
        raise BuildFailed(f"{root}: no fact survived the build for languages {','.join(langs)} "
                          f"(top reasons: {top or 'no curated facts'}); {kept}")
    losses = parallel_losses(result.content.drops, langs)
    previous = previous_languages(root)
    shrinking = shrinking_losses(losses, previous, langs)
    if shrinking and not allow_shrink:
        added = sorted({x.lang for x in shrinking})
        raise BuildRefused(
            f"{root}: adding {', '.join(added)} to the run's languages ({', '.join(previous)}) would remove "
            "from every language:\n  " + "\n  ".join(losses_lines(shrinking)) +
            f"\nNothing was written ({root / 'build'} is unchanged). Add the missing labels or answer forms for "
            f"{', '.join(added)}, or pass --allow-shrink to build the smaller benchmark anyway.")
    return BuildResult(result.content, result.counts, tuple(losses))


def build_run(run: str | Any, langs: Sequence[str], *, template_ids: Sequence[str] | None = None,
              candidate_mode: str = "predicate", k: int | None = None, seed: int = 0,
              fractions: Mapping[str, float] | None = None, templates_root: str | None = None,
              name: str | None = None, hygiene: Hygiene | None = None,
              split_salt: str = DEFAULT_SALT, allow_shrink: bool = False,
              mlama_paraphrases: str | Any | None = None) -> BuildResult:
    """Read ``<run>/curate/``, render with the template library, and replace ``<run>/build/`` whole.
    ``mlama_paraphrases``: an mLAMA folder whose templates join the library as ``<P>/mlama`` cloze templates
    (mParaRel's extra paraphrases, ``builder.pararel.with_mlama_paraphrases``).

    When the run already has a build and this one adds languages, a new language that would remove
    facts or candidates from every language is refused (nothing is written) unless
    ``allow_shrink``: the multi-parallel rule may remove things, but not silently.

    The new benchmark is written beside the old one and swapped in only once complete and valid: a build
    that fails (no fact survives, an invariant breaks, the process is killed) leaves the previous
    ``build/`` as it was. Nothing is created when the run directory has no curated facts."""
    from factatlas.builder.benchmark import write_benchmark
    from factatlas.builder.sources import LibrarySource
    from factatlas.rundir import RunDir

    started = datetime.now(UTC)
    root = Path(run)
    require_curated(root, langs)  # before the lock: nothing is created in a run without curated facts
    run_dir = RunDir(root)
    with run_dir.lock():
        run_dir.check_replaceable("build")  # a read-only build/ is refused before the work, not after it
        curated = read_curated(root)
        library, extra = load_run_library(langs, templates_root, mlama_paraphrases)
        source = LibrarySource(library, curated.entities)
        cultures = order_cultures({f.culture for f in curated.facts})
        pair, recorded_pair = curated_pair_name(run_dir.read_manifest(), cultures)
        if recorded_pair is not None:
            extra["pair_renamed_from"] = recorded_pair
        spec = BuildSpec(name=name or root.name, pair=pair, cultures=cultures, languages=tuple(langs),
                         template_ids=tuple(template_ids) if template_ids else None, candidate_mode=candidate_mode,
                         k=k, seed=seed, fractions=dict(fractions or DEFAULT_FRACTIONS), split_salt=split_salt,
                         source={"kind": "curated", "run": root.name, **source.describe(), **extra},
                         hygiene=hygiene or Hygiene())
        result = check_outcome(root, build_benchmark(curated.facts, curated.entities, source, spec,
                                                     upstream_drops=curated.drops, toolkit_version=toolkit_version()),
                               langs, allow_shrink)
        with run_dir.replace_stage("build") as staging:
            written = write_benchmark(staging, result.content)
            written += copy_template_files(library, langs, staging / "templates")
            if mlama_paraphrases is not None:
                written.append(write_added_templates(library, staging / "templates" / "mlama_paraphrases.jsonl"))
            # moves into manifest.json with the swap: the entry always describes the build/ in place
            run_dir.stage_entry(staging, "build", config={
                "langs": list(langs), "templates": list(template_ids or []) or "all", "candidate_mode": candidate_mode,
                "k": k, "seed": seed, "fractions": dict(spec.fractions), "hygiene": spec.hygiene.to_json(),
                "split_salt": split_salt,
                **({"mlama_paraphrases": str(mlama_paraphrases)} if mlama_paraphrases is not None else {})},
                counts=result.counts, outputs=written, started=started)
    return result
