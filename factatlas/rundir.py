"""The run directory: one folder per run, a manifest, stage sub-folders, atomic writes.

```
runs/<name>/
  manifest.json        resolved config, versions, endpoint, times, counts, hashes (per stage)
  curate/  build/  probe/<model>/  release/
```
Data files never hold timestamps; times live in the manifest only.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from factatlas.atomic import write_json

TRACKED_DEPENDENCIES = (
    "pyoxigraph", "urllib3", "networkx", "pyarrow", "pymorphy3", "torch", "transformers",
    "tokenizers", "datasets", "huggingface-hub",
)


def dependency_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("factatlas", *TRACKED_DEPENDENCIES):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class RunDir:
    root: Path

    @classmethod
    def open(cls, root: str | Path) -> RunDir:
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        return cls(root)

    def stage(self, name: str) -> Path:
        p = self.root / name
        p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def read_manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {}
        return json.loads(self.manifest_path.read_text("utf-8"))

    def record_stage(self, stage: str, *, config: dict[str, Any], counts: dict[str, Any] | None = None,
                     outputs: list[str | Path] | None = None, extra: dict[str, Any] | None = None,
                     started: datetime | None = None) -> dict[str, Any]:
        """Merge one stage's entry into manifest.json (resolved config, versions, times, output hashes)."""
        from factatlas.http import redact  # a command line may carry --endpoint http://user:password@...

        manifest = self.read_manifest()
        entry: dict[str, Any] = {
            "config": config,
            "versions": dependency_versions(),
            "command": redact(" ".join(sys.argv)),
            "started": (started or datetime.now(UTC)).isoformat(timespec="seconds"),
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "counts": counts or {},
            "outputs": {
                str(Path(p).relative_to(self.root)): sha256_file(p)
                for p in sorted(Path(p) for p in (outputs or []))
                if Path(p).is_file()
            },
        }
        if extra:
            entry.update(extra)
        manifest.setdefault("stages", {})[stage] = entry
        manifest["run"] = self.root.name
        write_json(self.manifest_path, manifest)
        return entry
