"""Fixtures of the templates room: builds of the embedded sample that the filler ledger reads.

``shipped_builds``: the three shipped pairs in full (every shipped language, every predicate; about 40 s of CPU with
the ledger: the full check of the slow tier uses it). ``place_build`` and ``genre_build``: fixed subsets built
in-process once per session (a few seconds each) for the fast checks of the suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.langs import SHIPPED_LANGS  # every templates/lang/*.yaml
from tests.worker_cache import shared_build

SHIPPED_PAIRS = ("arab-west", "asia-west", "south-america-west")  # curate/pairs.yaml


def _cli_in_process(*args: str) -> None:
    from typer.testing import CliRunner

    from factatlas.app.cli import app

    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, f"factatlas {' '.join(args)} failed:\n{done.output[-3000:]}"


def _build_shipped(pair: str, root: Path) -> Path:
    langs = ",".join(SHIPPED_LANGS)
    _cli_in_process("curate", str(root / pair), "--pair", pair, "--langs", langs)
    _cli_in_process("build", str(root / pair), "--langs", langs)
    return root / pair


@pytest.fixture(scope="session")
def shipped_builds(tmp_path_factory) -> dict[str, Path]:
    """pair -> run directory with curate/ and build/ of the embedded sample in every shipped language, built
    once per test session for every worker (tests only read it: each language's checks, the ledger and the
    population counters share it; built per worker it cost three builds of 25 languages a session). Each pair
    is its own shared build and each worker starts at another pair, so workers that ask at once build the
    three side by side instead of two waiting on one."""
    import os

    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    order = SHIPPED_PAIRS[worker % 3:] + SHIPPED_PAIRS[:worker % 3]
    built = {pair: shared_build(tmp_path_factory, f"shipped-{pair}", lambda root, pair=pair: _build_shipped(pair, root))
             for pair in order}
    return {pair: built[pair] for pair in SHIPPED_PAIRS}


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

    def __init__(self, shipped: dict[str, Path]) -> None:
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

            run = self.shipped[pair]
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
