"""Typological similarity of two languages from URIEL (Littell et al. 2017) through the data files of the
``lang2vec`` package, beside family, script and subword overlap in BMLAMA's RankC analysis (Qi, Fernández &
Bisazza 2023, §6.1-6.2, Table 2).

Similarity = cosine of the two languages' URIEL ``syntax_knn`` vectors (103 syntactic features, missing
values predicted by URIEL's k-nearest-neighbour imputation, so every language has a complete vector).
The arrays are read from the installed package's ``data/`` folder with NumPy; ``lang2vec.lang2vec`` itself
is not imported (version 1.1.2 imports ``pkg_resources``, which recent setuptools no longer ship). Two-letter
codes map to URIEL's ISO 639-3 codes by the package's own ``letter_codes.json``. Without the package the
similarity is not measured and the reason is reported (optional dependency: ``pip install lang2vec``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from itertools import combinations
from pathlib import Path

FEATURE_SETS = {"syntax_knn": ("feature_predictions.npz", "S_"), "phonology_knn": ("feature_predictions.npz", "P_"),
                "inventory_knn": ("feature_predictions.npz", "INV_")}


def lang2vec_data() -> Path | None:
    """The installed lang2vec package's data folder, or None.

    Found through the installed distribution's file list, not the import system: lang2vec 1.1.2 also installs
    a script ``bin/lang2vec.py``, and a program started from ``bin/`` (the ``factatlas`` command) has that
    folder first on ``sys.path``, so ``import lang2vec`` (or ``find_spec``) finds the script, not the package.
    A source checkout on the path without an installed distribution is found by ``find_spec`` as before."""
    import importlib.metadata
    import importlib.util

    try:
        files = importlib.metadata.distribution("lang2vec").files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for f in files:
        if f.parts[:2] == ("lang2vec", "__init__.py"):
            folder = Path(f.locate()).parent / "data"
            if folder.is_dir():
                return folder
    spec = importlib.util.find_spec("lang2vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    return folder if folder.is_dir() else None


@lru_cache(maxsize=4)
def _table(folder: str, feature_set: str):
    import numpy as np

    name, prefix = FEATURE_SETS[feature_set]
    data = np.load(Path(folder) / name, allow_pickle=True)
    columns = [i for i, f in enumerate(data["feats"]) if str(f).startswith(prefix)]
    rows = {str(code): i for i, code in enumerate(data["langs"])}
    return data["data"][:, columns, 0].astype("float64"), rows


def cosine(a, b) -> float:
    import numpy as np

    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b) / (na * nb)) if na and nb else 0.0


def uriel_similarity(langs: Iterable[str], feature_set: str = "syntax_knn",
                     folder: Path | None = None) -> tuple[dict[tuple[str, str], float] | None, str]:
    """(pair a < b -> cosine similarity, note). None and the reason when lang2vec is absent; languages
    URIEL does not know are named in the note and their pairs left out."""
    folder = folder or lang2vec_data()
    if folder is None:
        return None, "lang2vec is not installed (pip install lang2vec): typological similarity not measured"
    if feature_set not in FEATURE_SETS:
        raise ValueError(f"unknown URIEL feature set '{feature_set}'; expected one of {sorted(FEATURE_SETS)}")
    codes = json.loads((folder / "letter_codes.json").read_text("utf-8"))
    values, rows = _table(str(folder), feature_set)
    known, unknown = {}, []
    for lang in sorted(set(langs)):
        iso3 = codes.get(lang, lang)
        if iso3 in rows:
            known[lang] = values[rows[iso3]]
        else:
            unknown.append(lang)
    out = {(a, b): cosine(known[a], known[b]) for a, b in combinations(sorted(known), 2)}
    note = f"URIEL has no {feature_set} vector for {', '.join(unknown)}" if unknown else ""
    return out, note
