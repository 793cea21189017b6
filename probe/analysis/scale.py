"""P@1, RankC and X-FaKT against model size within a model family (BMLAMA §5.2 Fig. 4; X-FaKT Fig. 4), from
each model's own parameter count: the tensor shapes in its ``*.safetensors`` headers (no weights loaded).
The family is the checkpoint's ``config.json`` ``model_type`` (bert, xlm-roberta, bloom, ...). A model
whose folder is not on this machine, or holds no safetensors file, has no size and is named in a note.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factatlas.atomic import read_json
from factatlas.probe import aggregate
from factatlas.probe.analysis import crosslingual as X
from factatlas.probe.analysis.records import ModelResults
from factatlas.probe.cross_lingual import xfakt_section
from factatlas.probe.evaluate import DEFAULT_LANGUAGE_CULTURES


def model_folder(model_dir: Path) -> Path | None:
    """The checkpoint folder a probe used (probe.json: the tiny model's path or the model), if local."""
    from factatlas.probe.model_folder import read_probe_info

    info = read_probe_info(model_dir)
    if info is None:
        return None
    source = (info.get("tiny_model") or {}).get("path") or info.get("model") or ""
    return Path(source) if source and Path(source).is_dir() else None


def parameter_count(folder: Path) -> int | None:
    """Sum of the element counts of every tensor in the folder's safetensors files; None without one."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for path in files:
        with path.open("rb") as f:
            (size,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(size))
        total += sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")
    return total


def model_family(folder: Path) -> str:
    try:
        return str(read_json(folder / "config.json", "restore the checkpoint's config.json").get("model_type") or "unknown")
    except (OSError, ValueError):
        return "unknown"


@dataclass(frozen=True, slots=True)
class ScalePoint:
    family: str
    model: str
    parameters: int
    p_at_1_micro: float | None
    p_at_1_macro: float | None
    mean_rankc: float | None  # mean over language pairs
    xfakt: float | None = None  # X-FaKT score (default language-culture association); None: not defined


def scale_points(models: Sequence[ModelResults], model_dirs: Sequence[Path],
                 weighting: str = "softmax") -> tuple[list[ScalePoint], list[str]]:
    """One point per model with a known size, sorted by family then size; notes for the others."""
    points, notes = [], []
    for m, d in zip(models, model_dirs, strict=True):
        folder = model_folder(d)
        params = parameter_count(folder) if folder is not None else None
        if params is None:
            notes.append(f"{m.model}: no parameter count (checkpoint folder with safetensors not on this machine)")
            continue
        acc = aggregate.accuracy(m.results)
        rankcs = [p.rankc for p in X.pair_consistency(m.results, weighting) if p.rankc is not None]
        xfakt = xfakt_section(m.results, sorted({r.culture for r in m.results}), DEFAULT_LANGUAGE_CULTURES)
        points.append(ScalePoint(model_family(folder), m.model, params, acc.micro if acc else None,
                                 acc.macro if acc else None, sum(rankcs) / len(rankcs) if rankcs else None,
                                 xfakt["overall"]["xfakt"] if xfakt["available"] else None))
    points.sort(key=lambda p: (p.family, p.parameters, p.model))
    return points, notes
