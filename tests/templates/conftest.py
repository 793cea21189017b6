"""Fixtures of the templates room: builds of the embedded sample that the filler ledger reads.

``shipped_builds``: the three shipped pairs in full (every shipped language, every predicate), each built when a
test first asks for it. The README's test command checks the first pair in every language (the ledger, the
population counters, each language's build); the other two pairs are the extended tier's (``PAIRS``: README.md
"Run the tests"). ``place_build`` and ``genre_build``: fixed subsets built in-process once per session (a few
seconds each) for the fast checks of the suite."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.langs import SHIPPED_LANGS  # every templates/lang/*.yaml
from tests.worker_cache import shared_build

SHIPPED_PAIRS = ("arab-west", "asia-west", "south-america-west")  # curate/pairs.yaml
# A test over the shipped pairs is parametrized with PAIRS: the first pair runs in the README's command, the others
# in the extended tier (each pair's 25-language curation and build is about 10 CPU-s, its ledger about as much).
PAIRS = tuple(pytest.param(pair, id=pair, marks=() if pair == SHIPPED_PAIRS[0] else pytest.mark.extended)
              for pair in SHIPPED_PAIRS)


def _cli_in_process(*args: str) -> None:
    from typer.testing import CliRunner

    from factatlas.app.cli import app

    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, f"factatlas {' '.join(args)} failed:\n{done.output[-3000:]}"


def _curate_shipped(pair: str, root: Path) -> Path:
    _cli_in_process("curate", str(root / pair), "--pair", pair, "--langs", ",".join(SHIPPED_LANGS))
    return root / pair


def _build_shipped(curated: Path, root: Path) -> Path:
    import shutil

    shutil.copytree(curated, root / curated.name)  # the curation and the run's manifest entry of it
    _cli_in_process("build", str(root / curated.name), "--langs", ",".join(SHIPPED_LANGS))
    return root / curated.name


class ShippedBuilds(Mapping[str, Path]):
    """pair -> run directory with curate/ and build/ of the embedded sample in every shipped language. Each
    pair is curated, then built, when a test first asks for it, once per test session for every worker
    (``shared_build``; tests only read it). ``curated(pair)`` is the curation alone, for the checks that render
    the facts themselves."""

    def __init__(self, tmp_path_factory) -> None:
        self._factory = tmp_path_factory

    def curated(self, pair: str) -> Path:
        return shared_build(self._factory, f"shipped-curate-{pair}", lambda root: _curate_shipped(pair, root))

    def __getitem__(self, pair: str) -> Path:
        if pair not in SHIPPED_PAIRS:
            raise KeyError(pair)
        curated = self.curated(pair)
        return shared_build(self._factory, f"shipped-{pair}", lambda root: _build_shipped(curated, root))

    def __iter__(self) -> Iterator[str]:
        return iter(SHIPPED_PAIRS)

    def __len__(self) -> int:
        return len(SHIPPED_PAIRS)


@pytest.fixture(scope="session")
def shipped_builds(tmp_path_factory) -> ShippedBuilds:
    return ShippedBuilds(tmp_path_factory)


def assert_built_whole(run: Path, lang: str) -> None:
    """Every fact of the build rendered in ``lang`` with every template (as many prompts as in English), and no
    prompt dropped or template skipped for it (item «fact|lang|template», reason «…:lang»)."""
    import json

    import pyarrow.parquet as pq

    stats = json.loads((run / "build" / "stats.json").read_text("utf-8"))
    assert stats["prompts_per_language"][lang] == stats["prompts_per_language"]["en"] > 0, run.name
    dropped = pq.read_table(run / "build" / "dropped.parquet").to_pylist()
    mine = [d for d in dropped if f"|{lang}|" in d["item"] or d["reason"].endswith(f":{lang}")]
    assert mine == [], (run.name, mine[:5])


# The fast subset: the place contexts, where the Romance, German and Russian prepositions and articles are
# decided (augmented admin-unit golds of P19/P20, capitals, twin cities), in every shipped language.
PLACE_PREDICATES = ("P19", "P20", "P36", "P190")


def _subset_build(root: Path, pair: str, predicates: tuple[str, ...], langs: tuple[str, ...]) -> Path:
    run = root / pair
    _cli_in_process("curate", str(run), "--pair", pair, "--langs", ",".join(langs),
                    "--predicates", ",".join(predicates))
    _cli_in_process("build", str(run), "--langs", ",".join(langs))
    return run


@pytest.fixture(scope="session")
def place_build(tmp_path_factory) -> Path:
    """arab-west, the place predicates only, curated and built in every shipped language (once a session)."""
    return shared_build(tmp_path_factory, "place-build",
                        lambda root: _subset_build(root, "arab-west", PLACE_PREDICATES, SHIPPED_LANGS))


@pytest.fixture(scope="session")
def genre_build(tmp_path_factory) -> Path:
    """arab-west, genres (P136) in ru and de: where the ru accusative of feminine genres is decided."""
    return shared_build(tmp_path_factory, "genre-build",
                        lambda root: _subset_build(root, "arab-west", ("P136",), ("ru", "de")))


class SampleRenders:
    """The embedded sample of each pair as ``shipped_builds`` curated it (every shipped language), each language
    rendered once, when a check first asks for it: the gold-surface and answer-word checks read the same renders
    (a language's renders read only its own labels and templates; the facts do not depend on the languages).
    The facts and entities are read back from the shared build's curate/ folder rather than curated again in
    every worker."""

    def __init__(self, shipped: ShippedBuilds) -> None:
        from factatlas.templates.library import load_library

        self.shipped = shipped
        self.library = load_library(SHIPPED_LANGS)
        self._curated: dict[str, tuple] = {}
        self._rows: dict[tuple[str, str], list[dict]] = {}

    def curated(self, pair: str):
        """(run directory, its curated facts and entities, a fresh renderer of them: its decisions are the
        audit)."""
        if pair not in self._curated:
            from types import SimpleNamespace

            from factatlas.tables import read_entities, read_facts
            from factatlas.templates.render import Renderer

            run = self.shipped.curated(pair)
            entities = read_entities(run / "curate")
            result = SimpleNamespace(facts=read_facts(run / "curate" / "facts.parquet"), entities=entities)
            self._curated[pair] = (run, result, Renderer(entities))
        return self._curated[pair]

    def rows(self, pair: str, langs: tuple[str, ...]) -> list[dict]:
        """The rendered prompt rows (cloze and question) of the pair in these languages."""
        from factatlas.templates.batch import render_facts

        _run, result, renderer = self.curated(pair)
        for lang in langs:
            if (pair, lang) not in self._rows:
                report = render_facts(result.facts, result.entities, self.library, (lang,), renderer=renderer)
                self._rows[pair, lang] = report.rows
        return [r for lang in langs for r in self._rows[pair, lang]]


@pytest.fixture(scope="session")
def sample_renders(shipped_builds) -> SampleRenders:
    return SampleRenders(shipped_builds)
