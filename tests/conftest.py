"""Suite-wide guards: no traffic to anything but loopback, no Hub downloads, no telemetry, no test writing
into the checkout."""

from __future__ import annotations

import gc
import importlib
import ipaddress
import os
import socket
import sys
from pathlib import Path

import pytest

from tests.checkout_watch import CheckoutWatch

REPO = Path(__file__).resolve().parent.parent


def _modules_outside_checkout() -> list[str]:
    """Every package a test imports must be this checkout's: an editable install of another clone
    must never supply `factatlas.curate` while `factatlas` comes from here (or the reverse)."""
    import factatlas

    wrong = []
    for name in ("factatlas", *(f"factatlas.{stage}" for stage in factatlas.STAGES)):
        module = importlib.import_module(name)
        if not Path(module.__file__).resolve().is_relative_to(REPO):
            wrong.append(f"{name} from {module.__file__}")
    return wrong


# Where the environment sets PYTHONDONTWRITEBYTECODE (this machine's does), every xdist worker would rewrite
# and compile every test module again (about 4 s of CPU each: 8.4 s -> 4.3 s to collect the suite here),
# and every child process would compile the modules it imports again: the suite keeps its bytecode
# (__pycache__ is ignored by git).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# child processes (CLI runs, servers, kill tests) import the same checkout as this process
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))

_wrong = _modules_outside_checkout()
if _wrong:
    pytest.exit(f"tests of {REPO} would import code from elsewhere: {'; '.join(_wrong)}. "
                f"Run pytest from the checkout's root (python3 -m pytest).", returncode=4)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_real_connect = socket.socket.connect


def _is_loopback(address) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # AF_UNIX paths


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise OSError(f"tests may only reach loopback addresses; blocked connect to {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _block_non_loopback_sockets():
    socket.socket.connect = _guarded_connect
    yield
    socket.socket.connect = _real_connect


# ---- no test writes into the checkout ----------------------------------------------------------------
# A test writes into its own tmp_path, never into the clone: a file left in the checkout is a side effect
# the next run (or another worker's test that lists the checkout) trips over. Tools that keep a cache in
# the current folder keep it elsewhere here; every test then checks that the checkout's files are as they
# were (new, removed or rewritten files; bytecode, git's and pytest's own folders aside). The checkout is
# listed again only after inotify saw a change (tests/checkout_watch.py).
_EXEMPT_NAMES = frozenset({".git", "__pycache__", ".pytest_cache"})
_CACHES = Path(os.environ.get("TMPDIR", "/tmp"))
os.environ.setdefault("RUFF_CACHE_DIR", str(_CACHES / "factatlas-tests-ruff-cache"))


def _hypothesis_examples_outside_the_checkout() -> None:
    """Hypothesis keeps failing examples and its Unicode tables in ./.hypothesis by default; here in the
    temp folder instead. The suite draws the same examples on every run (``derandomize``: a red run is red
    again on the next, on any machine); ``FACTATLAS_HYPOTHESIS=explore`` draws new ones each run and keeps
    the failing ones for the next (how a property test looks for what no fixed example shows)."""
    try:
        from hypothesis import configuration, settings
        from hypothesis.database import DirectoryBasedExampleDatabase
    except ImportError:  # the quick checks of a core install run without it
        return
    home = _CACHES / "factatlas-tests-hypothesis"
    configuration.set_hypothesis_home_dir(str(home))
    settings.register_profile("factatlas", derandomize=True, database=None)
    settings.register_profile("explore", database=DirectoryBasedExampleDatabase(str(home / "examples")))
    profile = os.environ.get("FACTATLAS_HYPOTHESIS", "factatlas")
    if profile not in ("factatlas", "explore"):
        raise pytest.UsageError(f"FACTATLAS_HYPOTHESIS={profile!r}: unknown; expected 'explore' (new examples "
                                "each run) or unset (the same examples every run)")
    settings.load_profile(profile)


_hypothesis_examples_outside_the_checkout()


_CHECKOUT: list[CheckoutWatch] = []  # this process's watch of the checkout, made at its first test


@pytest.fixture(autouse=True)
def _no_writes_into_the_checkout():
    if not _CHECKOUT:
        _CHECKOUT.append(CheckoutWatch(REPO, _EXEMPT_NAMES))
    watch = _CHECKOUT[0]
    watch.check()  # a change made between two tests (a module fixture's teardown) is not this test's
    yield
    changes = watch.check()
    if changes:
        pytest.fail("the checkout changed while this test ran (a test writes only under its tmp_path; under "
                    "xdist another worker's test may be the writer, the paths say which): "
                    + "; ".join(changes[:20]), pytrace=False)


# The test session's own cyclic garbage collector, set as the command line sets its own
# (factatlas.collector): with Python's gen-0 threshold of 700 its full passes rescan every table, model
# and fixture the session holds, over and over (7.8 of 30 CPU-s in the BMLAMA importer module alone).
# The session raises the threshold and freezes what collection loaded (libraries, test modules), so later
# passes skip them; cycles are still collected.
TEST_GEN0_THRESHOLD = 100_000
gc.set_threshold(max(TEST_GEN0_THRESHOLD, gc.get_threshold()[0]), *gc.get_threshold()[1:])


def pytest_collection_finish(session) -> None:
    gc.freeze()


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto` (pyproject addopts): one worker per core this process may use, and one more for the extended
    tier, whose tests wait on servers and engines starting (a third worker filled those waits on a 2-core
    machine: the whole suite 296 s with 2 workers, 263 s with 3, 26 Nov 2026). Without them the waits are
    few and a third worker only competes for the cores and builds its own session fixtures: the README's
    command took 161.9 s with 2 workers and 176.2 s with 3 on the idle 2-core box, and 306 s against 339 s on
    one core (30 Nov 2026); `--maxprocesses` caps it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    markexpr = config.getoption("markexpr") or ""
    return cores + 1 if "extended" in markexpr or "servers" in markexpr else cores


def file_order(path: Path = REPO / "tests" / "file_order.txt") -> dict[str, int]:
    """Test file (relative to the checkout) -> its place in tests/file_order.txt, longest first."""
    lines = path.read_text("utf-8").splitlines() if path.is_file() else []
    names = [line.split("\t")[0] for line in lines if line and not line.startswith("#")]
    return {name: rank for rank, name in enumerate(names)}


def left_out_by_default(config) -> bool:
    """The README's test command (`python3 -m pytest`: no -m, no paths) leaves the extended tier out; naming a
    marker expression (`-m extended`, `-m servers`, `-m "not slow"`) or a test file or folder selects as asked."""
    return not config.getoption("markexpr") and config.args_source == pytest.Config.ArgsSource.TESTPATHS


def pytest_collection_modifyitems(config, items):
    """A test that starts real servers or engines is slow too (the quick tier is -m "not slow") and in the
    extended tier, with the docs run as written: the README's test command leaves those out, counted in
    pytest's "deselected", and CI runs them next (`python3 -m pytest -m extended`, .ci/run).
    The longest files go first (tests/file_order.txt; pyproject's --no-loadscope-reorder keeps xdist from
    putting files of one or two tests, the docs runs and the Ray test among them, last)."""
    for item in items:
        if item.get_closest_marker("servers") is not None:
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.extended)
        if item.get_closest_marker("extended") is not None:
            item.add_marker(pytest.mark.slow)
    if left_out_by_default(config):
        extended = [item for item in items if item.get_closest_marker("extended") is not None]
        if extended:
            config.hook.pytest_deselected(items=extended)
            items[:] = [item for item in items if item.get_closest_marker("extended") is None]
    rank = file_order()
    place = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(item.nodeid.split("::")[0], len(rank)), place[id(item)]))


def pytest_terminal_summary(terminalreporter, config) -> None:
    if left_out_by_default(config) and not hasattr(config, "workerinput"):
        terminalreporter.write_line("the extended tier (real servers and engines, the docs and the quickstart run "
                                    "as written, cross-process determinism, the second and third shipped pairs, "
                                    "the published datasets written whole) is left out; CI runs it next: "
                                    "python3 -m pytest -m extended")


# Where the suite's CPU goes: with FACTATLAS_TEST_CPU_LOG=PREFIX each worker appends, per test phase, the
# CPU seconds of its own process and of its children (servers, commands, fine-tunes), and the wall seconds,
# to PREFIX.<worker>; `python3 benchmarks/suite_cpu.py PREFIX` sums them by test and file. A child counts
# in the phase that spent its CPU: the reaped ones (getrusage) plus those still running (their CPU and that
# of the children they reaped, from psutil). Counting reaped children alone put the whole life of a
# module's zygote or server into the teardown that ended it (test_stage_safety's fork server: 28.7 CPU-s
# in a 0.1 s teardown). Wall time under xdist mixes in the other workers' load; CPU seconds do not.
_CPU_LOG = os.environ.get("FACTATLAS_TEST_CPU_LOG")


if _CPU_LOG:
    import resource
    import time

    import psutil  # installed with the test extra (accelerate and peft require it)

    def _running_children_cpu() -> float:
        total = 0.0
        for child in psutil.Process().children(recursive=True):
            try:
                t = child.cpu_times()
            except (psutil.NoSuchProcess, psutil.AccessDenied):  # ended meanwhile: counted once reaped
                continue
            total += t.user + t.system + t.children_user + t.children_system
        return total

    def _cpu_now() -> tuple[float, float, float]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime + _running_children_cpu(), time.perf_counter()

    def _logged_phase(item, phase: str):
        before = _cpu_now()
        outcome = yield
        after = _cpu_now()
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f"{_CPU_LOG}.{worker}", "a", encoding="utf-8") as log:
            log.write("\t".join((item.nodeid, phase, *(f"{b - a:.3f}" for a, b in zip(before, after, strict=True)))) + "\n")
        return outcome

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(item):
        yield from _logged_phase(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item):
        yield from _logged_phase(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(item):
        yield from _logged_phase(item, "teardown")
