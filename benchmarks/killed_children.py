"""What a killed `factatlas probe` child costs: a fresh `python3 -m factatlas` vs a child forked from the
tests' fork server (tests/children.py), which imported the CLI, pyarrow, torch and transformers once.

Both kinds of child run the same command on the same small run (the sample curated for P36 in ar,en, probed
once by a tiny BERT so the model is on disk) and are SIGKILLed at the same crash point; CPU is user + system
of the reaped processes (a forked child's is counted when the fork server that reaped it is reaped). The fork
server's own start is measured alone, so its cost per child is reported both with and without it.

    python3 benchmarks/killed_children.py [--children 3] [--point probe:rankings-written]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factatlas.rundir import CRASH_ENV  # noqa: E402
from tests.children import ForkServer  # noqa: E402
from tests.core.test_stage_safety import PRELOAD, PROBE_NEW, PROBE_OLD  # noqa: E402


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def fresh(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "factatlas", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=3)
    parser.add_argument("--point", default="probe:rankings-written")
    opts = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
    with tempfile.TemporaryDirectory(prefix="killed-children-") as tmp:
        run = Path(tmp) / "arab-west"
        for args in (["curate", str(run), "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P36"],
                     ["build", str(run), "--langs", "ar,en"], ["probe", str(run), *PROBE_OLD]):
            done = fresh(args, env)
            if done.returncode != 0:
                sys.exit(f"error: {' '.join(args)} failed: {done.stderr[-2000:]}")
        command = ["probe", str(run), *PROBE_NEW]
        killed = {**env, CRASH_ENV: opts.point}

        before = children_cpu()
        for _ in range(opts.children):
            assert fresh(command, killed).returncode == -9
        cold = children_cpu() - before

        before = children_cpu()
        with ForkServer(PRELOAD):
            pass
        start = children_cpu() - before

        before = children_cpu()
        with ForkServer(PRELOAD) as server:
            for _ in range(opts.children):
                assert server.factatlas(*command, env={CRASH_ENV: opts.point}).returncode == -9
        forked = children_cpu() - before

    n = opts.children
    per_fork = (forked - start) / n
    print(f"{n} probe children killed at {opts.point}, CPU-s (user + system):")
    print(f"  fresh python3 -m factatlas : {cold:6.2f} total, {cold / n:5.2f} per child")
    print(f"  fork server start alone    : {start:6.2f}")
    print(f"  fork server + {n} children   : {forked:6.2f} total, {per_fork:5.2f} per child after the start")
    print(f"ratio per child (fresh / forked): {cold / n / per_fork:.1f}x; "
          f"for these {n} children, start included: {cold / forked:.1f}x")


if __name__ == "__main__":
    main()
