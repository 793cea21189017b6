"""scripts/mutation_sweep.py stays in step with the code: every mutant still finds its anchor and every test it
names is there, so a refactoring that moves a guarded line shows here, not as a silent "error" row of the next
sweep."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _sweep():
    spec = importlib.util.spec_from_file_location("mutation_sweep", REPO / "scripts" / "mutation_sweep.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_compiles_and_names_tests_that_exist():
    sweep = _sweep()
    mutants = sweep.all_mutants()
    problems = []
    for m in mutants:
        source = (REPO / m.path).read_text("utf-8")
        try:
            mutated = m.mutate(source)
            compile(mutated, m.path, "exec")
        except (sweep.MutationError, SyntaxError) as e:
            problems.append(f"{m.name}: {e}")
            continue
        if mutated == source:
            problems.append(f"{m.name}: changes nothing")
        problems += [f"{m.name}: no test file {t}" for t in (*m.first, *m.tests)
                     if not (REPO / t.split("::")[0]).is_file()]
    assert not problems, "\n".join(problems)
    assert len({m.name for m in mutants}) == len(mutants), "two mutants share a name"
    families = {m.name.split(":")[0] for m in mutants}
    assert families >= {"invariant", "aggregate", "verdict", "analysis", "gate", "choice", "edge", "emptied", "subject",
                        "life", "matcher", "taxonomy"}


def test_tests_that_run_past_the_timeout_leave_the_mutant_untested_not_killed(tmp_path):
    """A run cut by --timeout failed nothing: counted as a kill it hid mutants that a loaded box never tested."""
    (tmp_path / "test_slow.py").write_text("import time\n\ndef test_waits():\n    time.sleep(60)\n", "utf-8")
    status, detail = _sweep()._pytest(tmp_path, ["test_slow.py"], timeout=2)
    assert status == "timeout" and "untested" in detail
