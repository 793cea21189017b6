"""A failed or killed stage never destroys good output; two writers never interleave (issue 11).

Every case runs the real CLI on a run curated from the packaged sample; kills are real SIGKILLs of a child
process, placed at the moments that matter by ``FACTATLAS_CRASH_AT`` (factatlas.rundir.crash_point), and
a second writer is a real second process. The killed children are forked from one process that imported
the CLI, pyarrow, torch and transformers once (tests/children.py; a probe child 0.5 CPU-s instead of 4.1,
benchmarks/killed_children.py);
the killed curate is a fresh `python3 -m factatlas`, so the crash point is also reached from a cold start.
What is not about the process (failures, reruns, the curated run itself) runs in this process
(tests/clirun.py), which keeps the interpreter start and imports off it; the fixtures' probes run in forked
children too, so this process never imports torch.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from factatlas.atomic import TMP_PREFIX
from factatlas.rundir import CRASH_ENV, RunDir
from tests.children import ForkServer
from tests.clirun import factatlas
from tests.filesystems import tree

SAMPLE_RUN = "arab-west"  # the folder name: benchmark.json records it, so copies keep it
# what the killed build, render and probe children import at start-up (tests/children.py)
PRELOAD = ("factatlas.app.cli", "factatlas.console", "factatlas.builder.run", "factatlas.templates.batch",
           "factatlas.probe.runner", "factatlas.probe.models", "pyarrow.dataset", "pyarrow.compute", "pyarrow.parquet",
           "pandas", "typer._adapters", "torch", "transformers", "transformers.models.bert.modeling_bert")


def cli(*args: str, crash_at: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """In this process; with crash_at in a fresh `python3 -m factatlas`, which FACTATLAS_CRASH_AT kills at that
    point."""
    if not crash_at:
        return factatlas(*args, cwd=cwd)
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    env[CRASH_ENV] = crash_at
    return subprocess.run([sys.executable, "-m", "factatlas", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def children() -> Iterator[ForkServer]:
    with ForkServer(PRELOAD) as server:
        yield server


def killed_at(children: ForkServer, point: str, *args: object) -> subprocess.CompletedProcess:
    """`factatlas ARGS` in a real child process, which FACTATLAS_CRASH_AT kills (SIGKILL) at ``point``."""
    return children.factatlas(*args, env={CRASH_ENV: point})


def ours(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(f"{TMP_PREFIX}*"))


@pytest.fixture(scope="module")
def curated(tmp_path_factory) -> Path:
    """runs/arab-west curated from the sample in ar,en for P36 and P19 (824 prompts; each build a quarter of
    the whole sample's 1.2 CPU-s) and built once (the 'previous good build'). The killed curate curates P19
    alone: other outputs, the same queries (cached)."""
    run = tmp_path_factory.mktemp("curated") / SAMPLE_RUN
    res = cli("curate", run, "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P36,P19")
    assert res.returncode == 0, res.stderr
    res = cli("build", run, "--langs", "ar,en")
    assert res.returncode == 0, res.stderr
    return run


@pytest.fixture(scope="module")
def sampled_build(tmp_path_factory, curated) -> dict[str, str]:
    """What a clean `build --candidates sampled --k 3` writes (the 'new' build of the kill tests), checked
    against its manifest entry."""
    run = tmp_path_factory.mktemp("reference") / SAMPLE_RUN
    shutil.copytree(curated, run)
    res = cli("build", run, "--langs", "ar,en", "--candidates", "sampled", "--k", "3")
    assert res.returncode == 0, res.stderr
    return agreeing(run, "build", raw=True)


@pytest.fixture
def run(tmp_path, curated) -> Path:
    copy = tmp_path / SAMPLE_RUN
    shutil.copytree(curated, copy)
    return copy


@pytest.mark.slow
def test_a_failed_build_leaves_the_previous_build_untouched_and_exits_non_zero(run):
    before = tree(run / "build")
    manifest = (run / "manifest.json").read_bytes()
    res = cli("build", run, "--langs", "ar,en,fr")  # curated in ar,en only: no fact has a French label
    assert res.returncode != 0
    assert f"{run}: no fact survived the build for languages ar,en,fr (top reasons: build/no-label:fr x" in res.stderr
    assert f"{run / 'build'} is unchanged" in res.stderr
    assert tree(run / "build") == before
    assert (run / "manifest.json").read_bytes() == manifest
    assert ours(run) == []
    assert cli("validate-benchmark", run).returncode == 0


@pytest.mark.slow
def test_an_empty_benchmark_is_never_valid(run):
    from factatlas.builder.benchmark import CANDIDATES_SCHEMA
    from factatlas.tables import FACTS_SCHEMA, PROMPTS_SCHEMA, write_table

    for name, schema in (("prompts.parquet", PROMPTS_SCHEMA), ("facts.parquet", FACTS_SCHEMA),
                         ("candidates.parquet", CANDIDATES_SCHEMA)):
        write_table(run / "build" / name, [], schema)
    res = cli("validate-benchmark", run)
    assert res.returncode == 1
    assert "[empty] prompts.parquet: the benchmark holds 0 facts and 0 prompts; an empty benchmark is never " \
           "valid" in res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("point, survivor", [
    ("atomic:before-replace", "old"),  # inside the first file write of the new build
    ("benchmark:prompts-written", "old"),  # the old failure: prompts replaced, benchmark.json not yet
    ("stage:complete", "old"),  # every file written, not yet swapped in
    ("swap:exchanged", "new"),  # swapped in, the old folder not yet deleted, its manifest entry pending
    ("manifest:written", "new"),  # manifest.json written, the pending entry not yet deleted
])
def test_a_killed_rebuild_leaves_the_old_or_the_new_build_never_a_mix(run, sampled_build, children, point,
                                                                       survivor):
    """...and the manifest's build entry always describes the build/ in place (issue 42: the entry was
    written after the swap, so a kill between them left the old build's entry beside the new build)."""
    old = agreeing(run, "build", raw=True)
    assert old != sampled_build
    killed = killed_at(children, point, "build", run, "--langs", "ar,en", "--candidates", "sampled", "--k", "3")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert agreeing(run, "build") == (old if survivor == "old" else sampled_build)
    assert ours(run) or list(run.rglob(".factatlas-manifest-entry.json")), "the kill left nothing to finish"
    settled(run)
    assert agreeing(run, "build", raw=True) == (old if survivor == "old" else sampled_build)
    rerun = cli("build", run, "--langs", "ar,en", "--candidates", "sampled", "--k", "3")
    assert rerun.returncode == 0, rerun.stderr
    assert agreeing(run, "build", raw=True) == sampled_build
    assert ours(run) == []  # what the killed run left is gone


@pytest.mark.slow
def test_cleanup_removes_only_what_is_ours(run):
    (run / "notes.tmp").write_text("mine\n")
    (run / "build" / ".facts.parquet.123.tmp").write_text("another tool's\n")
    (run / "curate" / f"{TMP_PREFIX}facts.parquet.abc.tmp").write_text("half-written\n")
    assert cli("build", run, "--langs", "ar,en").returncode == 0
    assert (run / "notes.tmp").exists()
    assert not (run / "curate" / f"{TMP_PREFIX}facts.parquet.abc.tmp").exists()
    # build/ was replaced whole: a stranger's file inside it went with the old folder
    assert not (run / "build" / ".facts.parquet.123.tmp").exists()


@pytest.mark.slow
@pytest.mark.parametrize("point, survivor", [("stage:complete", "old"), ("swap:exchanged", "new"),
                                             ("manifest:written", "new")])
def test_a_killed_curate_leaves_a_manifest_entry_that_describes_the_curate_folder(run, children, point, survivor):
    def outputs(files: dict[str, str]) -> dict[str, str]:  # the query cache and log grow in any case
        return {k: v for k, v in files.items() if not k.startswith("cache/") and k != "queries.jsonl"}

    old = outputs(agreeing(run, "curate", raw=True))
    args = ("curate", run, "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P19")
    killed = killed_at(children, point, *args)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    now = outputs(agreeing(run, "curate"))
    assert (now == old) == (survivor == "old")
    settled(run)
    assert outputs(agreeing(run, "curate", raw=True)) == now
    assert RunDir(run).read_manifest()["stages"]["curate"]["config"]["predicates"] == (
        ["P36", "P19"] if survivor == "old" else ["P19"])


@pytest.mark.slow
def test_a_killed_curate_keeps_the_previous_outputs_and_the_query_cache(run):
    outputs = ("facts.parquet", "entities.parquet", "labels.parquet", "dropped.parquet")
    before = {name: digest for name, digest in tree(run / "curate").items() if name in outputs}
    killed = cli("curate", run, "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P19",
                 crash_at="stage:complete")
    assert killed.returncode == -signal.SIGKILL
    assert {name: digest for name, digest in tree(run / "curate").items() if name in outputs} == before
    res = cli("curate", run, "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P19")
    assert res.returncode == 0, res.stderr
    assert "queries sent 0" in res.stdout  # answered from the previous folder's cache
    again = cli("curate", run, "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P19")
    assert "queries sent 0" in again.stdout  # the cache carried over into the folder that replaced it
    assert ours(run) == []


def test_the_builder_creates_no_run_folder_and_names_the_real_curate_command(tmp_path):
    missing = tmp_path / "runs" / "nothing-here"
    res = cli("build", missing, "--langs", "ar,en")
    assert res.returncode != 0
    assert f"run `factatlas curate {missing} --pair PAIR --langs ar,en` first" in res.stderr
    assert "--out" not in res.stderr
    assert not missing.exists() and not missing.parent.exists()


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from factatlas.rundir import RunDir
    with RunDir(Path(sys.argv[1])).lock():
        print("locked", flush=True)
        time.sleep(120)
""")


@pytest.mark.slow
def test_a_second_writer_of_a_run_is_refused_naming_the_holder(run):
    before = tree(run / "build")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = cli("build", run, "--langs", "ar,en", "--candidates", "sampled", "--k", "3")
        assert res.returncode != 0
        assert (f"another factatlas process (pid {holder.pid}) holds run directory {run} "
                f"(lock {run / '.factatlas.lock'}, started by `-c {run}`)") in " ".join(res.stderr.split())
        assert tree(run / "build") == before
        res = cli("curate", run, "--pair", "arab-west", "--langs", "ar,en")
        assert f"another factatlas process (pid {holder.pid}) holds run directory {run}" in res.stderr
    finally:
        holder.kill()  # SIGKILL: the lock dies with its holder, no stale lock file blocks the next run
        holder.wait()
    assert cli("build", run, "--langs", "ar,en").returncode == 0


@pytest.mark.slow
def test_bad_values_are_refused_before_the_run_is_locked(run):
    """Issue 42: a refusal happens before the lock is taken (so also while another process holds it), and
    leaves no lock file behind."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        for words, message in [
            (("curate", run, "--pair", "arab-wset", "--langs", "ar,en"), "error: unknown pair 'arab-wset'"),
            (("curate", run, "--pair", "arab-west", "--popularity", "nope"), "error: --popularity: unknown"),
            (("curate", run, "--pair", "arab-west", "--max-retry-after", "nan"), "error: --max-retry-after nan"),
            (("build", run, "--langs", "ar,en", "--min-relation-share", "2"), "error: --min-relation-share 2.0"),
            (("build", run, "--langs", "ar,en", "--templates-dir", run / "nope"), "error: --templates-dir"),
        ]:
            res = cli(*words)
            assert res.returncode == 2 and res.stderr.startswith(message), (words, res.stderr)
    finally:
        holder.kill()
        holder.wait()
    assert (run / ".factatlas.lock").exists()  # what the SIGKILLed holder left: a file, no lock
    assert cli("build", run, "--langs", "ar,en").returncode == 0  # the next writer takes it and removes it
    assert not (run / ".factatlas.lock").exists()
    res = cli("curate", run, "--pair", "arab-wset", "--langs", "ar,en")
    assert res.returncode == 2 and not (run / ".factatlas.lock").exists()


@pytest.mark.slow
def test_validate_benchmark_on_a_truncated_parquet_names_the_file_and_the_fix(run):
    prompts = run / "build" / "prompts.parquet"
    data = prompts.read_bytes()
    prompts.write_bytes(data[: len(data) // 2])
    res = cli("validate-benchmark", run)
    assert res.returncode == 1
    assert f"[unreadable] {prompts}: not a readable parquet file (" in res.stderr
    assert "Write it again with the command that made it" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ("publish", "{run}", "--repo", "org/x", "--version", "1.0.0", "--target", "git:{tmp}/t.git", "--dry-run"),
    ("build", "{run}", "--langs", "ar,en"),
])
def test_every_reader_of_a_truncated_parquet_fails_cleanly(run, tmp_path, command):
    damaged = run / ("curate" if command[0] == "build" else "build") / "facts.parquet"
    damaged.write_bytes(damaged.read_bytes()[:100])
    res = cli(*(a.format(run=run, tmp=tmp_path) for a in command))
    assert res.returncode == 2, res.stderr
    assert f"error: {damaged}: not a readable parquet file (" in res.stderr
    assert "Traceback" not in res.stderr and "ArrowInvalid" not in res.stderr


def test_a_swap_by_two_renames_killed_between_them_is_undone_by_the_next_writer(tmp_path, monkeypatch):
    from factatlas import rundir

    run = rundir.RunDir.open(tmp_path / "r")
    (run.stage("build") / "a.txt").write_text("old\n")
    monkeypatch.setattr(rundir, "_exchange", lambda a, b: False)  # a system without renameat2
    with run.replace_stage("build") as staging:
        (staging / "a.txt").write_text("new\n")
    assert (run.root / "build" / "a.txt").read_text() == "new\n" and ours(run.root) == []
    # what a kill between the two renames leaves: no build/, the old one under its temporary name
    os.rename(run.root / "build", run.root / f"{TMP_PREFIX}old-build-4242")
    (run.root / f"{TMP_PREFIX}build-4242").mkdir()
    with run.lock():
        assert (run.root / "build" / "a.txt").read_text() == "new\n"
    assert ours(run.root) == []


# ---- probe/<model>/ and render/: staged and swapped whole, under the run lock (issue 28) ----------

PROBE_OLD = ("--model", "tiny", "--tiny-steps", "20", "--device", "cpu", "--out-name", "m", "--no-template-only")
PROBE_NEW = ("--model", "tiny", "--tiny-steps", "20", "--device", "cpu", "--out-name", "m", "--scoring", "mlm-pll")


def settled(root: Path) -> None:
    """What the next writer of the run does first (restore, apply pending manifest entries, clean up)."""
    from factatlas.rundir import RunDir

    with RunDir(root).lock():
        pass


def agreeing(run: Path, stage: str, *, raw: bool = False) -> dict[str, str]:
    """The folder's files, after checking that its manifest entry (and, for a model folder, metrics.json)
    describe exactly these files. ``raw``: read manifest.json itself, not ``RunDir.read_manifest``."""
    import json

    from factatlas.rundir import PENDING_ENTRY, RunDir, sha256_file

    folder = run / stage
    manifest = json.loads((run / "manifest.json").read_text()) if raw else RunDir(run).read_manifest()
    outputs = manifest["stages"][stage]["outputs"]
    assert outputs and outputs == {name: sha256_file(run / name) for name in outputs}
    if stage.startswith("probe/"):
        metrics = json.loads((folder / "metrics.json").read_text())
        assert metrics["inputs"]["rankings"] == sha256_file(folder / "rankings.parquet")
        template = folder / "rankings_template_only.parquet"
        assert metrics["inputs"]["template_only"] == (sha256_file(template) if template.exists() else None)
        info = json.loads((folder / "probe.json").read_text())
        assert info["config"]["template_only"] == template.exists()
    files = {k: v for k, v in tree(folder).items() if k != PENDING_ENTRY}
    if "probe.json" in files:  # it names the benchmark and the tiny model by path: the copies differ there
        text = (folder / "probe.json").read_text().replace(str(run), "RUN")
        files["probe.json"] = hashlib.sha256(text.encode()).hexdigest()
    return files


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, children) -> Path:
    """The sample curated for P36 in ar,en (336 prompts), built, probed by a tiny BERT without the
    template-only baseline (the 'old' model folder) and rendered in ar,en (the 'old' render/). The probes
    run in forked children, which have torch and transformers imported already: this process never needs
    them (4 CPU-s)."""
    run = tmp_path_factory.mktemp("small") / SAMPLE_RUN
    for args in (("curate", run, "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P36"),
                 ("build", run, "--langs", "ar,en"), ("probe", run, *PROBE_OLD), ("render", run, "--langs", "ar,en")):
        res = children.factatlas(*args) if args[0] == "probe" else cli(*args)
        assert res.returncode == 0, res.stderr
    return run


@pytest.fixture(scope="module")
def new_folders(tmp_path_factory, small_run, children) -> dict[str, dict[str, str]]:
    """What a clean probe by another rule with the baseline, and a clean `render --langs ar`, write (the 'new'
    folders: other rankings, metrics, files)."""
    run = tmp_path_factory.mktemp("new") / SAMPLE_RUN
    shutil.copytree(small_run, run)
    res = children.factatlas("probe", run, *PROBE_NEW)
    assert res.returncode == 0, res.stderr
    assert cli("render", run, "--langs", "ar").returncode == 0
    assert ours(run) == []
    return {"probe/m": agreeing(run, "probe/m", raw=True), "render": agreeing(run, "render", raw=True)}


@pytest.fixture
def small(tmp_path, small_run) -> Path:
    copy = tmp_path / SAMPLE_RUN
    shutil.copytree(small_run, copy)
    return copy


KILL_POINTS = [
    ("atomic:before-replace", "old"),  # inside the first file write of the staged folder
    ("stage:complete", "old"),  # every file written, not yet swapped in
    ("swap:exchanged", "new"),  # swapped in; its manifest entry still pending inside it
    ("manifest:written", "new"),  # manifest.json written, the pending entry not yet deleted
]


@pytest.mark.slow  # a child probe per kill point
@pytest.mark.parametrize("point, survivor", [*KILL_POINTS, ("probe:rankings-written", "old"),
                                             ("probe:metrics-written", "old")])
def test_a_killed_probe_leaves_the_old_or_the_new_model_folder_never_a_mix(small, new_folders, children, point,
                                                                           survivor):
    old = agreeing(small, "probe/m", raw=True)
    assert all(old[name] != new_folders["probe/m"][name] for name in ("rankings.parquet", "metrics.json"))
    killed = killed_at(children, point, "probe", small, *PROBE_NEW)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert agreeing(small, "probe/m") == (old if survivor == "old" else new_folders["probe/m"])
    assert ours(small) or list(small.rglob(".factatlas-manifest-entry.json")), "the kill left nothing to finish"
    settled(small)  # the next writer: the pending entry reaches manifest.json, the leftovers go
    assert agreeing(small, "probe/m", raw=True) == (old if survivor == "old" else new_folders["probe/m"])
    assert ours(small) == [] and not list(small.rglob(".factatlas-manifest-entry.json"))


@pytest.mark.parametrize("point, survivor", [*KILL_POINTS, ("render:prompts-written", "old")])
def test_a_killed_render_leaves_the_old_or_the_new_render_folder_never_a_mix(small, new_folders, children, point,
                                                                             survivor):
    old = agreeing(small, "render", raw=True)
    assert old != new_folders["render"]
    killed = killed_at(children, point, "render", small, "--langs", "ar")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert agreeing(small, "render") == (old if survivor == "old" else new_folders["render"])
    settled(small)
    assert agreeing(small, "render", raw=True) == (old if survivor == "old" else new_folders["render"])
    assert ours(small) == []


def test_a_zero_byte_temp_file_is_cleaned_by_the_next_render(small):
    (small / "render" / f"{TMP_PREFIX}prompts.parquet.x1.tmp").write_bytes(b"")
    (small / "probe" / "m" / f"{TMP_PREFIX}metrics.json.x2.tmp").write_bytes(b"")
    assert cli("render", small, "--langs", "ar").returncode == 0
    assert ours(small) == []


def test_a_second_probe_into_the_run_is_refused_naming_the_holder(small):
    before = tree(small / "probe" / "m")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(small)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = cli("probe", small, *PROBE_NEW)
        assert res.returncode == 2, res.stderr
        flat = " ".join(res.stderr.split())
        assert (f"error: another factatlas process (pid {holder.pid}) holds run directory {small} (lock "
                f"{small / '.factatlas.lock'}, started by `-c {small}`)") in flat
        assert "Traceback" not in res.stderr
        res = cli("render", small, "--langs", "ar")
        assert res.returncode == 2 and f"(pid {holder.pid}) holds run directory {small}" in res.stderr
    finally:
        holder.kill()
        holder.wait()
    assert tree(small / "probe" / "m") == before


@pytest.mark.slow  # the small run's probe
def test_report_refuses_rankings_that_are_not_the_ones_the_manifest_records(small):
    """Issue 42: rankings replaced behind the manifest's back (by hand, or by a writer that did not stage)
    were reported with the manifest's configuration and the old metrics' numbers."""
    import pyarrow.parquet as pq

    from factatlas.tables import RANKINGS_SCHEMA, write_table

    folder = small / "probe" / "m"
    rows = pq.read_table(folder / "rankings.parquet").to_pylist()
    write_table(folder / "rankings.parquet", rows[1:], RANKINGS_SCHEMA)
    before = tree(folder)
    res = cli("report", small)
    assert res.returncode == 2, res.stderr
    flat = " ".join(res.stderr.split())
    assert flat.startswith(f"error: {folder / 'rankings.parquet'}: changed since it was recorded (another sha256): "
                           "the folder is not what manifest.json records for probe/m")
    assert f"factatlas probe {small} --model ... --out-name m" in flat
    assert tree(folder) == before  # refused before any report file was written
    write_table(folder / "rankings.parquet", rows, RANKINGS_SCHEMA)  # the recorded bytes again
    write_table(folder / "rankings_template_only.parquet", rows, RANKINGS_SCHEMA)
    res = cli("report", small)
    assert res.returncode == 2 and f"{folder / 'rankings_template_only.parquet'}: there, but not recorded" in " ".join(
        res.stderr.split())
    (folder / "rankings_template_only.parquet").unlink()
    res = cli("report", small, "--no-plots")
    assert res.returncode == 0, res.stderr
