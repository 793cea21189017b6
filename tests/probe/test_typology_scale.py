"""BMLAMA's RankC analysis extras: URIEL typological similarity (lang2vec's data) and model size."""

from __future__ import annotations

import csv
import json
import math
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from factatlas.probe.analysis.crosslingual import PairConsistency, rankc_correlations
from factatlas.probe.analysis.records import ModelResults
from factatlas.probe.analysis.scale import parameter_count, scale_points
from factatlas.probe.analysis.typology import lang2vec_data, uriel_similarity
from tests.probe.analysis_fixture import MODEL_A, model_results
from tests.probe.test_analysis_cli import scripted_run  # noqa: F401  (the fixture)


def _fake_lang2vec(folder):
    """Data files in lang2vec's layout: three languages, two syntactic features and one phonological."""
    folder.mkdir()
    data = np.array([[[1.0], [0.0], [9.0]], [[1.0], [1.0], [9.0]], [[0.0], [1.0], [0.0]]])
    np.savez(folder / "feature_predictions.npz", data=data, langs=np.array(["eng", "fra", "ara"]),
             feats=np.array(["S_SVO", "S_SOV", "P_X"]), sources=np.array(["predicted"]))
    (folder / "letter_codes.json").write_text(json.dumps({"en": "eng", "fr": "fra", "ar": "ara"}), "utf-8")
    return folder


def test_uriel_cosine_by_hand(tmp_path):
    sims, note = uriel_similarity(["en", "fr", "ar", "xx"], folder=_fake_lang2vec(tmp_path / "data"))
    # syntax only (P_X left out): en (1,0), fr (1,1), ar (0,1)
    assert sims == pytest.approx({("ar", "en"): 0.0, ("ar", "fr"): 1 / math.sqrt(2), ("en", "fr"): 1 / math.sqrt(2)})
    assert note == "URIEL has no syntax_knn vector for xx"


@pytest.mark.skipif(lang2vec_data() is None, reason="lang2vec not installed")
def test_uriel_real_data_orders_languages():
    sims, _ = uriel_similarity(["en", "de", "ja"])
    assert sims[("de", "en")] > sims[("en", "ja")]  # German is closer to English than Japanese in syntax


@pytest.mark.slow
def test_typology_through_the_installed_factatlas_command(scripted_run, tmp_path):  # noqa: F811
    """`factatlas compare` run as the installed console script, a child process: Python puts the script's
    folder (bin/) first on sys.path, where lang2vec 1.1.2 installs a ``lang2vec.py`` that shadows the package;
    the typology column must still be filled (it was empty there and filled under `python -m factatlas`)."""
    if lang2vec_data() is None:
        pytest.skip("lang2vec not installed")
    command = Path(sys.executable).parent / "factatlas"
    if not command.exists():
        pytest.skip("the factatlas command is not installed (pip install -e .)")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(repo), os.environ.get("PYTHONPATH"))))}
    out = tmp_path / "compare"
    proc = subprocess.run([str(command), "compare", str(scripted_run), "--models", "arab-expert,west-expert",
                           "--split", "all", "--out", str(out), "--bootstrap", "20", "--no-plots"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    with (out / "rankc_pairs.csv").open(encoding="utf-8") as f:
        pairs = {(r["model"], r["language A"], r["language B"]): r for r in csv.DictReader(f)}
    expected = uriel_similarity(["en", "fr"])[0][("en", "fr")]
    assert float(pairs[("arab-expert", "en", "fr")]["typological similarity"]) == pytest.approx(expected)
    assert "lang2vec is not installed" not in (out / "compare.md").read_text("utf-8")


def test_rankc_against_typology_by_hand():
    pairs = [PairConsistency("a", "b", 10, 0.2, None, 0), PairConsistency("a", "c", 10, 0.4, None, 0),
             PairConsistency("b", "c", 10, 0.9, None, 0)]
    typology = {("a", "b"): 0.0, ("a", "c"): 0.5, ("b", "c"): 1.0}
    (corr,) = [c for c in rankc_correlations(pairs, {}, None, typology) if c.feature.startswith("typological")]
    xs, ys = [0.0, 0.5, 1.0], [0.2, 0.4, 0.9]
    mx, my = sum(xs) / 3, sum(ys) / 3
    r = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / math.sqrt(
        sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))
    assert (corr.n_pairs, corr.r) == (3, pytest.approx(r))


def _safetensors(path, shapes):
    header = {f"t{i}": {"dtype": "F32", "shape": list(s), "data_offsets": [0, 0]} for i, s in enumerate(shapes)}
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def test_parameter_counts_and_scale_points(tmp_path):
    small, large = tmp_path / "small", tmp_path / "large"
    for folder, shapes in ((small, [(3, 4), (5,)]), (large, [(10, 10)])):
        folder.mkdir()
        _safetensors(folder / "model.safetensors", shapes)
        (folder / "config.json").write_text(json.dumps({"model_type": "bert"}), "utf-8")
    _safetensors(large / "model-2.safetensors", [(2, 3, 4)])
    assert (parameter_count(small), parameter_count(large)) == (17, 124)
    dirs = []
    for name, folder in (("big", large), ("tiny", small), ("remote", None)):
        d = tmp_path / "probe" / name
        d.mkdir(parents=True)
        (d / "probe.json").write_text(json.dumps({"model": str(folder) if folder else "org/remote"}), "utf-8")
        dirs.append(d)
    models = [ModelResults(n, tuple(model_results(n, MODEL_A))) for n in ("big", "tiny", "remote")]
    points, notes = scale_points(models, dirs)
    assert [(p.model, p.parameters, p.family) for p in points] == [("tiny", 17, "bert"), ("big", 124, "bert")]
    # MODEL_A by hand: facts f1..f7, fact value = mean of (en, ar): 1, .5, 0, .5, 0, 1, 1 -> micro 4/7;
    # P1 facts f1 f2 f4 f7 -> 3/4, P2 facts f3 f5 f6 -> 1/3: macro (3/4 + 1/3) / 2
    assert points[0].p_at_1_micro == pytest.approx(4 / 7)
    assert points[0].p_at_1_macro == pytest.approx((3 / 4 + 1 / 3) / 2)
    assert notes == ["remote: no parameter count (checkpoint folder with safetensors not on this machine)"]


def test_scale_point_xfakt_by_hand(tmp_path):
    from factatlas.probe.metrics import xfakt_scores

    folder = tmp_path / "m"
    folder.mkdir()
    _safetensors(folder / "model.safetensors", [(2,)])
    d = tmp_path / "probe" / "m"
    d.mkdir(parents=True)
    (d / "probe.json").write_text(json.dumps({"model": str(folder)}), "utf-8")
    # en is associated with west, ar with arab (the defaults). MODEL_A's (fact, lang) errors:
    # associative (west facts in en, arab facts in ar): f1 0, f2 0, f3 1, f7 0, f4 0, f5 1, f6 0 -> 2/7
    # non-associative (west in ar, arab in en): f1 0, f2 1, f3 1, f7 0, f4 1, f5 1, f6 0 -> 4/7
    (point,), _ = scale_points([ModelResults("m", tuple(model_results("m", MODEL_A)))], [d])
    assert point.xfakt == pytest.approx(xfakt_scores(2 / 7, 4 / 7)["xfakt"])
