"""What the suite's per-test guard that no test writes into the checkout costs (tests/conftest.py): listing the
checkout before and after each test (the guard up to stop 49) vs `tests/checkout_watch.py`'s `CheckoutWatch`,
which lists it again only after inotify queued a change.

Both run on this checkout, on the same pass: a number of quiet tests (nothing written), then one test that
writes a file into a scratch folder made inside the checkout for the run (removed at the end); the changes both
report must be equal, or no time is printed. CPU is this process's user + system time.

    python3 benchmarks/checkout_guard.py [--tests 2650]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.checkout_watch import CheckoutWatch, changes, listing  # noqa: E402

EXEMPT = frozenset({".git", "__pycache__", ".pytest_cache"})


def listed_each_test(tests: int, scratch: Path) -> tuple[float, list[str]]:
    start = time.process_time()
    for _ in range(tests):
        before = listing(REPO, EXEMPT)
        assert changes(before, listing(REPO, EXEMPT)) == []
    before = listing(REPO, EXEMPT)
    (scratch / "listed.txt").write_text("x")
    found = changes(before, listing(REPO, EXEMPT))
    return time.process_time() - start, [f.replace("listed", "FILE") for f in found]


def watched(tests: int, scratch: Path) -> tuple[float, list[str], bool]:
    start = time.process_time()
    watch = CheckoutWatch(REPO, EXEMPT)
    for _ in range(tests):
        watch.check()
        assert watch.check() == []
    watch.check()
    (scratch / "watched.txt").write_text("x")
    found = watch.check()
    return time.process_time() - start, [f.replace("watched", "FILE") for f in found], watch.uses_inotify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=2650, help="quiet tests to guard (the suite has about 2,650)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="checkout-guard-bench-", dir=REPO))
    try:
        listed_cpu, listed_found = listed_each_test(args.tests, scratch)
        watched_cpu, watched_found, inotify = watched(args.tests, scratch)
    finally:
        shutil.rmtree(scratch)
    print(f"{len(listing(REPO, EXEMPT))} paths in the checkout; inotify: {'yes' if inotify else 'no (lists every time)'}")
    print(f"changes after the writing test: listed {listed_found}, watched {watched_found}")
    if listed_found != watched_found or not listed_found:
        print("the two guards report different changes: no time is printed")
        sys.exit(1)
    print(f"listed before and after each test: {listed_cpu:.2f} CPU-s ({1000 * listed_cpu / args.tests:.2f} ms a test)")
    print(f"CheckoutWatch: {watched_cpu:.2f} CPU-s ({1000 * watched_cpu / args.tests:.3f} ms a test)")
    print(f"ratio {listed_cpu / max(watched_cpu, 1e-9):.0f}x")


if __name__ == "__main__":
    main()
