"""The three tiers of the suite: the quick tier (-m "not slow"), the README's test command (everything but the
extended tier) and the extended tier that CI runs next. What the README says CI runs is what .ci/run runs, and
the default run leaves out exactly the tests marked extended (or servers), counted as deselected."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import left_out_by_default, pytest_collection_modifyitems, pytest_xdist_auto_num_workers

REPO = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readmes_test_command_then_the_extended_tier():
    readme = (REPO / "README.md").read_text("utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    command = next(b.strip() for b in blocks if "pytest" in b)
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text("utf-8").splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert command in ci, f".ci/run must call the README's test command exactly: {command!r}"
    assert "python3 -m pytest -m extended" in ci[ci.index(command) + 1:]
    assert "python3 -m pytest -m extended" in readme


class _Item:
    def __init__(self, name: str, *marks: str) -> None:
        self.nodeid = f"tests/x.py::{name}"
        self.marks = list(marks)

    def get_closest_marker(self, name: str):
        return SimpleNamespace(name=name) if name in self.marks else None

    def add_marker(self, mark) -> None:
        self.marks.append(mark.name)


def _config(markexpr: str, source):
    deselected: list = []
    hook = SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items))
    return SimpleNamespace(getoption=lambda name: markexpr if name == "markexpr" else None, args_source=source,
                           hook=hook), deselected


@pytest.mark.parametrize(("markexpr", "source", "kept"), [
    ("", pytest.Config.ArgsSource.TESTPATHS, ["unit", "slow"]),
    ("extended", pytest.Config.ArgsSource.TESTPATHS, ["unit", "slow", "server", "docs"]),
    ("", pytest.Config.ArgsSource.ARGS, ["unit", "slow", "server", "docs"]),  # a file named: run what it holds
])
def test_the_default_run_deselects_the_extended_tier_and_nothing_else(markexpr, source, kept):
    items = [_Item("unit"), _Item("slow", "slow"), _Item("server", "servers"), _Item("docs", "extended")]
    config, deselected = _config(markexpr, source)
    assert left_out_by_default(config) == (kept == ["unit", "slow"])
    pytest_collection_modifyitems(config, items)
    assert [i.nodeid.split("::")[1] for i in items] == kept
    assert sorted(i.nodeid.split("::")[1] for i in deselected) == sorted({"unit", "slow", "server", "docs"} - set(kept))
    for item in items:
        if item.nodeid.endswith(("server", "docs")):
            assert {"slow", "extended"} <= set(item.marks)  # never in the quick tier either


@pytest.mark.parametrize(("markexpr", "extra"), [("", 0), ("not slow", 0), ("extended", 1), ("servers", 1)])
def test_a_worker_per_core_and_one_more_where_servers_are_waited_on(markexpr, extra):
    import os

    cores = len(os.sched_getaffinity(0))
    config, _ = _config(markexpr, pytest.Config.ArgsSource.TESTPATHS)
    assert pytest_xdist_auto_num_workers(config) == cores + extra


def test_the_extended_tier_repeats_checks_whose_first_instance_stays_in_the_readme_command():
    """The shipped pairs and the BMLAMA variants: the first runs in the README's command, only the others are
    extended (CONTRIBUTING "Three tiers")."""
    from tests.builder.importers.test_import_bmlama import VARIANTS
    from tests.templates.conftest import PAIRS

    for params in (PAIRS, VARIANTS):
        extended = [any(m.name == "extended" for m in getattr(p, "marks", ())) for p in params]
        assert extended == [False] + [True] * (len(params) - 1), params
