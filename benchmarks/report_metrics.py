"""The report's metrics step: reusing the probe's metrics.json vs computing the metrics again.

On a probed run (default: the quickstart's, ``factatlas quickstart`` writes runs/quickstart), for every
model folder whose metrics.json the report may reuse, two sides, interleaved and repeated in one process
(process CPU time, min and median):
- **computed**: what the report did before it could reuse: read rankings.parquet (and the template-only
  rankings) and run ``compute_metrics`` with the report's configuration and the recorded training splits;
- **reused**: what it does now: hash the inputs (``metrics_inputs``) and read metrics.json when they and
  the configuration match (``probe_metrics``).
Both must give the same dict (the computed one with the same ``inputs`` added) before any time is printed.

    python benchmarks/report_metrics.py [--run runs/quickstart] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def computed(folder: Path, run: Path, config, splits, bench) -> dict:
    from factatlas.probe.evaluate import compute_metrics, metrics_inputs
    from factatlas.tables import read_probe_results

    t_path = folder / "rankings_template_only.parquet"
    t_path = t_path if t_path.exists() else None
    metrics = compute_metrics(read_probe_results(folder / "rankings.parquet"), bench, config,
                              template_only_rows=read_probe_results(t_path) if t_path else None,
                              trained_on=splits)
    metrics["inputs"] = metrics_inputs(folder / "rankings.parquet", t_path, run / "build", splits)
    return json.loads(json.dumps(metrics))


def reused(folder: Path, run: Path, config, splits) -> dict | None:
    from factatlas.probe.evaluate import metrics_inputs
    from factatlas.probe.report import probe_metrics

    t_path = folder / "rankings_template_only.parquet"
    inputs = metrics_inputs(folder / "rankings.parquet", t_path if t_path.exists() else None, run / "build", splits)
    return probe_metrics(folder, config, inputs)[0]


def cpu(fn, *args) -> float:
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, default=Path("runs/quickstart"))
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    from factatlas.probe.evaluate import VALIDATION_BOOTSTRAP, MetricsConfig, load_benchmark
    from factatlas.probe.model_folder import trained_splits
    from factatlas.probe.report import model_dirs

    if not (args.run / "build" / "benchmark.json").is_file():
        print(f"{args.run}: no probed run here; run `factatlas quickstart` (it writes runs/quickstart) or pass "
              "--run", file=sys.stderr)
        return 2
    config = MetricsConfig(bootstrap=VALIDATION_BOOTSTRAP)  # the report's default
    bench = load_benchmark(args.run / "build")
    measured = 0
    for folder in model_dirs(args.run):
        splits = trained_splits(folder)
        kept = reused(folder, args.run, config, splits)
        if kept is None:
            print(f"{folder.name}: the report cannot reuse its metrics.json (probed before metrics.json recorded "
                  "its inputs, or changed since); skipped")
            continue
        if kept != computed(folder, args.run, config, splits, bench):
            print(f"{folder.name}: the reused metrics.json differs from a fresh computation; no time printed")
            return 1
        print(f"check {folder.name}: same")
        times: dict[str, list[float]] = {"computed": [], "reused": []}
        for _ in range(args.repeats):
            times["computed"].append(cpu(computed, folder, args.run, config, splits, bench))
            times["reused"].append(cpu(reused, folder, args.run, config, splits))
        for side, values in times.items():
            print(f"{folder.name} {side:>8}: CPU min {min(values):.3f} s, median {statistics.median(values):.3f} s")
        print(f"RATIO {folder.name}: reused is {min(times['computed']) / min(times['reused']):.1f}x faster than "
              f"computed (min of {args.repeats})")
        measured += 1
    return 0 if measured else 2


if __name__ == "__main__":
    sys.exit(main())
