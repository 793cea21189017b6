"""Fixtures of the templates room: builds of the embedded sample that the filler ledger reads.

``shipped_builds``: the three shipped pairs in full (every shipped language, every predicate; about 40 s of CPU with
the ledger: the full check of the slow tier uses it). ``place_build`` and ``genre_build``: fixed subsets built
in-process once per session (a few seconds each) for the fast checks of the suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.langs import SHIPPED_LANGS  # every templates/lang/*.yaml

SHIPPED_PAIRS = ("arab-west", "asia-west", "south-america-west")  # curate/pairs.yaml


def _cli_in_process(*args: str) -> None:
    from typer.testing import CliRunner

    from factatlas.app.cli import app

    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, f"factatlas {' '.join(args)} failed:\n{done.output[-3000:]}"


@pytest.fixture(scope="session")
def shipped_builds(tmp_path_factory) -> dict[str, Path]:
    """pair -> run directory with curate/ and build/ of the embedded sample in every shipped language."""
    root = tmp_path_factory.mktemp("shipped")
    langs = ",".join(SHIPPED_LANGS)
    runs = {}
    for pair in SHIPPED_PAIRS:
        run = root / pair
        _cli_in_process("curate", str(run), "--pair", pair, "--langs", langs)
        _cli_in_process("build", str(run), "--langs", langs)
        runs[pair] = run
    return runs


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
    """arab-west, the place predicates only, curated and built in every shipped language."""
    return _subset_build(tmp_path_factory.mktemp("places"), "arab-west", PLACE_PREDICATES, SHIPPED_LANGS)


@pytest.fixture(scope="session")
def genre_build(tmp_path_factory) -> Path:
    """arab-west, genres (P136) in ru and de: where the ru accusative of feminine genres is decided."""
    return _subset_build(tmp_path_factory.mktemp("genres"), "arab-west", ("P136",), ("ru", "de"))


class SampleRenders:
    """The embedded sample of a pair curated once in every shipped language, and each language rendered
    once, when a check first asks for it: the gold-surface and answer-word checks read the same renders
    (a language's renders read only its own labels and templates; the facts do not depend on the languages)."""

    def __init__(self, root: Path) -> None:
        from factatlas.templates.library import load_library

        self.root = root
        self.library = load_library(SHIPPED_LANGS)
        self._curated: dict[str, tuple] = {}
        self._rows: dict[tuple[str, str], list[dict]] = {}

    def curated(self, pair: str):
        """(run directory, curation result, the renderer that rendered its rows: its decisions are the audit)."""
        if pair not in self._curated:
            from factatlas.curate.engine import CurationConfig, curate
            from factatlas.templates.render import Renderer

            run = self.root / pair
            result = curate(CurationConfig(pair=pair, langs=SHIPPED_LANGS), run)
            self._curated[pair] = (run, result, Renderer(result.entities))
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
def sample_renders(tmp_path_factory) -> SampleRenders:
    return SampleRenders(tmp_path_factory.mktemp("sample-renders"))
