"""The answers' display labels (``Benchmark.answer_labels``) as columns vs the rule applied to every prompt record.

For each benchmark folder given (default: BMLAMA-17 imported from ../shared/reference/bmlama into a temporary
folder, and a copy whose labels.parquet has no rows, so that every label comes from the prompts), two sides on the same
folder, alternated and repeated in one process (process CPU time, min):
- **records**: the rule the property documents, applied to every prompt as a ``Prompt`` record
  (``reference_labels``, the test's oracle in tests/probe/test_profile_columns.py);
- **columns**: ``Benchmark.answer_labels`` as shipped (``factatlas/prompt_tables.py`` ``read_answer_labels``).
Both must give the same dict before any time is printed. The matmul rate of this machine is printed beside.

    python benchmarks/answer_labels_speed.py [FOLDER ...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(ROOT))
from quickstart_time import MATMUL_CODE  # noqa: E402

from tests.probe.test_profile_columns import reference_labels  # noqa: E402

BMLAMA17 = ROOT.parent / "shared" / "reference" / "bmlama" / "BMLAMA17"


def columns(folder: Path) -> dict:
    from factatlas.benchmark import Benchmark

    return Benchmark.open(folder).answer_labels


def records(folder: Path) -> dict:
    from factatlas.benchmark import Benchmark

    return reference_labels(Benchmark.open(folder))


def cpu_of(fn, folder: Path) -> tuple[float, dict]:
    start = time.process_time()
    out = fn(folder)
    return time.process_time() - start, out


def default_folders(tmp: Path) -> list[Path]:
    if not BMLAMA17.is_dir():
        raise SystemExit(f"error: {BMLAMA17} is missing; name benchmark folders (a run's build/) instead")
    run = tmp / "bmlama17"
    done = subprocess.run([sys.executable, "-m", "factatlas", "import", "bmlama", str(BMLAMA17), str(run)],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"error: importing BMLAMA-17 failed:\n{done.stderr}")
    import pyarrow.parquet as pq

    bare = tmp / "bmlama17-no-labels"
    shutil.copytree(run / "build", bare)
    labels = pq.read_table(bare / "labels.parquet")
    pq.write_table(labels.slice(0, 0), bare / "labels.parquet")  # no rows: every label from the prompts
    return [run / "build", bare]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help="benchmark folders (a run's build/)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    matmul = subprocess.run([sys.executable, "-c", MATMUL_CODE], capture_output=True, text=True).stdout.strip()
    print(f"matmul: {matmul}")
    with tempfile.TemporaryDirectory() as tmp:
        for folder in args.folders or default_folders(Path(tmp)):
            times: dict[str, list[float]] = {"records": [], "columns": []}
            outs = {}
            for _ in range(args.repeats):
                for name, fn in (("records", records), ("columns", columns)):
                    spent, outs[name] = cpu_of(fn, folder)
                    times[name].append(spent)
            if outs["records"] != outs["columns"]:
                raise SystemExit(f"error: {folder}: the two sides give different labels")
            best = {k: min(v) for k, v in times.items()}
            name = folder.parent.name if folder.name == "build" else folder.name
            print(f"{name}: {len(outs['columns'])} labels, equal; records "
                  f"{best['records']:.3f} s, columns {best['columns']:.3f} s CPU (min of {args.repeats}): "
                  f"{best['records'] / best['columns']:.1f}x")


if __name__ == "__main__":
    main()
