"""The report's files are one output (issue 42, B3.1): report.html, verdict.json, the plots and analyses/ are
replaced together or not at all. A disk that fills after the first plot and a kill between two files both
leave the old report whole (every file byte-identical, no new plot beside the old page), no staging folder
and no lock; the rerun writes what a clean run writes. Real file systems (tests/filesystems.py) and real
kills (FACTATLAS_CRASH_AT in a child process), never mocks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from factatlas.atomic import TMP_PREFIX
from factatlas.rundir import CRASH_ENV, LOCK_NAME
from tests.children import ForkServer
from tests.clirun import factatlas
from tests.filesystems import grow, leftovers, small_filesystem, tree
from tests.probe.test_report_fixtures import write_run

MODEL = "synth-model"
REPORT = ("report", "RUN", "--model", MODEL, "--bootstrap", "0", "--associate", "en=arab")


def comparable(files: dict[str, str]) -> dict[str, str]:
    """Without the times of manifest.json and the analyses page, which names the run's absolute path."""
    return {k: v for k, v in files.items() if k != "manifest.json" and not k.endswith(("analyses.md", "analyses.html"))}


def args(run: Path) -> list[str]:
    return [a.replace("RUN", str(run)) for a in REPORT]


@pytest.fixture(scope="module")
def children():
    """The module's killed and signalled reports fork from one zygote that imported the report once (four
    zygotes before: 3-4 CPU-s each)."""
    with ForkServer(("factatlas.app.cli", "factatlas.probe.report", "matplotlib.pyplot")) as server:
        yield server


@pytest.fixture(scope="module")
def reported(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A run reported once without --associate (the 'old report': no xfakt.png), and what a clean report
    with --associate writes (the reference for the rerun)."""
    base = write_run(tmp_path_factory.mktemp("old") / "arab-west")
    res = factatlas("report", base, "--model", MODEL, "--bootstrap", "0")
    assert res.returncode == 0, res.stderr
    folder = base / "probe" / MODEL
    # an older report than this code would write: other bytes in every file the report makes
    for path in [folder / "report.html", *folder.glob("*.png"), *(folder / "analyses").glob("*.html")]:
        path.write_bytes(path.read_bytes() + b"<!-- the old report -->")
    clean = tmp_path_factory.mktemp("clean") / "arab-west"
    shutil.copytree(base, clean)
    res = factatlas(*args(clean))
    assert res.returncode == 0, res.stderr
    return base, tree(clean)


@pytest.mark.slow  # three reports (module fixture included, ~5 s)
def test_the_report_replaces_its_folder_of_analyses_whole_and_keeps_the_probes_files(reported, tmp_path):
    base, _ = reported
    run = tmp_path / "arab-west"
    shutil.copytree(base, run)
    folder = run / "probe" / MODEL
    (folder / "analyses" / "a-table-of-an-older-version.csv").write_text("stale\n")
    probes = {k: v for k, v in tree(folder).items() if k in ("rankings.parquet", "rankings_template_only.parquet")}
    res = factatlas("report", run, "--model", MODEL, "--bootstrap", "0")
    assert res.returncode == 0, res.stderr
    assert not (folder / "analyses" / "a-table-of-an-older-version.csv").exists()  # went with its old page
    assert {k: v for k, v in tree(folder).items() if k in probes} == probes and len(probes) == 2
    assert (folder / "rankings.parquet").stat().st_nlink == 1  # the old folder (its other link) is gone
    assert leftovers(run) == []


@pytest.mark.slow  # a tmpfs and three reports (~3 s)
def test_a_disk_full_after_the_first_plot_leaves_the_old_report_whole(reported, tmp_path):
    base, clean = reported
    first_plot = (base / "probe" / MODEL / "p_at_1.png").stat().st_size // 1024
    with small_filesystem(tmp_path / "fs", base, free_kb=first_plot + 12) as run:
        before = tree(run)
        res = factatlas(*args(run))
        assert res.returncode == 2, res.stderr
        assert tree(run) == before  # every file of the old report as it was, nothing added
        lines = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
        assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
        assert "No space left on device" in lines[0] and f"{run}/probe/{MODEL} is unchanged" in lines[0], lines[0]
        assert leftovers(run) == []
        grow(run.parent, 16 * 1024)  # the user frees space
        res = factatlas(*args(run))
        assert res.returncode == 0, res.stderr
        assert comparable(tree(run)) == comparable(clean)
        assert leftovers(run) == []


@pytest.mark.slow  # a child process per kill point (~2 s each)
@pytest.mark.parametrize("point", ["report:plots-written", "report:page-written"])
def test_a_kill_between_two_files_of_the_report_leaves_the_old_report_whole(reported, tmp_path, point, children):
    base, clean = reported
    run = tmp_path / "arab-west"
    shutil.copytree(base, run)
    before = tree(run)
    res = children.factatlas(*args(run), env={CRASH_ENV: point})
    assert res.returncode == -9, res.stderr
    after = tree(run)
    staged = [k for k in after if f"/{TMP_PREFIX}" in f"/{k}"]
    # a kill leaves a stale lock file (no lock) and what it staged: nothing else differs
    assert {k: v for k, v in after.items() if k not in staged and k != LOCK_NAME} == before
    assert staged, "the killed report staged nothing: the kill point was not reached inside the staging"
    res = factatlas(*args(run))  # the next writer clears what the killed one staged and writes the report
    assert res.returncode == 0, res.stderr
    assert comparable(tree(run)) == comparable(clean)
    assert leftovers(run) == []


@pytest.mark.slow  # a child process per signal (~2 s each)
@pytest.mark.parametrize(("signal_name", "code"), [("TERM", 143), ("INT", 130)])
def test_sigterm_or_ctrl_c_mid_report_is_one_line_and_leaves_the_old_report_and_no_lock(reported, tmp_path,
                                                                                        signal_name, code, children):
    base, _ = reported
    run = tmp_path / "arab-west"
    shutil.copytree(base, run)
    before = tree(run)
    res = children.factatlas(*args(run), env={CRASH_ENV: "report:plots-written", "FACTATLAS_CRASH_SIGNAL": signal_name})
    assert res.returncode == code, res.stderr
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: stopped by SIG{signal_name}"), res.stderr
    assert [line for line in res.stderr.splitlines() if line.startswith("error: ")] == [res.stderr.strip().splitlines()[-1]]
    assert tree(run) == before and leftovers(run) == []  # staging discarded, the lock let go, on the way out
