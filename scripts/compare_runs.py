"""Two run folders of the same inputs compared: parquet files byte for byte, metrics.json and verdict.json
value for value, apart from what records when and with which code they were made.

    python3 scripts/compare_runs.py OLD_RUN NEW_RUN      # e.g. two quickstarts: runs/quickstart

Every difference goes to stdout (``path: key: old -> new``); the exit status is 1 when there is one.
Ignored: ``inputs.code`` of metrics.json (the hash of the metrics code, which a refactoring changes by
design), and the model folder ``probe/_models`` (the tiny model's files record versions). Parquet
files are compared whole: the writer keeps them free of times and versions.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

JSON_FILES = ("metrics.json", "verdict.json")
IGNORED_KEYS = {"metrics.json": {("inputs", "code")}}
SKIPPED_FOLDERS = ("hub.git", "_models", "cache")


def compared_files(run: Path) -> set[str]:
    """Paths, relative to ``run``, of the parquet files and the per-model metrics and verdict."""
    out = set()
    for path in run.rglob("*"):
        rel = path.relative_to(run)
        if not path.is_file() or any(part in SKIPPED_FOLDERS for part in rel.parts):
            continue
        if path.suffix == ".parquet" or path.name in JSON_FILES:
            out.add(rel.as_posix())
    return out


def leaves(value: Any, key: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(key path, value) of every leaf; a list's items keyed by position."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, (*key, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, (*key, i))
    else:
        yield key, value


def json_differences(old: Any, new: Any, ignored: set[tuple]) -> list[str]:
    a, b = dict(leaves(old)), dict(leaves(new))
    out = []
    for key in sorted(set(a) | set(b), key=lambda k: [str(p) for p in k]):
        if key in ignored:
            continue
        if key not in a or key not in b or type(a[key]) is not type(b[key]) or a[key] != b[key]:
            shown = ".".join(map(str, key))
            out.append(f"{shown}: {a.get(key, '<absent>')!r} -> {b.get(key, '<absent>')!r}")
    return out


def differences(old: Path, new: Path) -> list[str]:
    old_files, new_files = compared_files(old), compared_files(new)
    out = [f"{f}: only in {old}" for f in sorted(old_files - new_files)]
    out += [f"{f}: only in {new}" for f in sorted(new_files - old_files)]
    for f in sorted(old_files & new_files):
        if f.endswith(".parquet"):
            if (old / f).read_bytes() != (new / f).read_bytes():
                out.append(f"{f}: bytes differ")
            continue
        a, b = (json.loads((root / f).read_text("utf-8")) for root in (old, new))
        out += [f"{f}: {d}" for d in json_differences(a, b, IGNORED_KEYS.get(Path(f).name, set()))]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args(argv)
    for run in (args.old, args.new):
        if not run.is_dir():
            print(f"error: {run}: no such run folder; pass two run folders (e.g. runs/quickstart)", file=sys.stderr)
            return 2
    found = differences(args.old, args.new)
    for line in found:
        print(line)
    n = len(compared_files(args.old) | compared_files(args.new))
    print(f"{len(found)} difference(s) over {n} file(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
