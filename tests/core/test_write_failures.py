"""Every write can fail (issue 42): a full file system, a read-only one, a folder the user may not write.
Each ends in one `error:` line naming the path and the fix, exit 2, with the earlier outputs byte-identical,
no temporary file or folder and no lock file left; after the space is freed (or the mode given back) the
same command writes what it would have written in the first place.

Real file systems and real modes, never mocks (tests/filesystems.py): a tmpfs of the run's size plus a few
KiB, a read-only bind mount, and `chmod 555` with root's overrides switched off for this thread. Each skips,
with the reason, where the machine does not allow it (mounting needs root or CAP_SYS_ADMIN). The commands
run in this process (tests/clirun.py).
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from pathlib import Path

import pytest

from factatlas.atomic import append_line, write_bytes
from factatlas.errors import WriteFailed
from factatlas.rundir import LOCK_NAME, RunDir
from tests.clirun import factatlas
from tests.filesystems import grow, leftovers, modes_enforced, over_quota, read_only, small_filesystem, tree

SAMPLE_RUN = "arab-west"


# the commands of the family, on the run below; RUN and TARGET are filled in per case
COMMANDS = {
    "curate": ("curate", "RUN", "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P36,P19"),
    "build": ("build", "RUN", "--langs", "ar,en", "--candidates", "sampled", "--k", "3"),
    "render": ("render", "RUN", "--langs", "ar"),
    "publish": ("publish", "RUN", "--repo", "org/atlas", "--version", "1.0.0", "--target", "git:TARGET"),
    "audit": ("templates", "audit", "RUN", "--fillers", "--out", "RUN/ledger.tsv"),
    "export": ("export", "lm-eval", "RUN", "RUN/lm-eval"),
    "audit-culture": ("audit-culture", "RUN"),
}
# what a command may add to the run although it failed: the query cache and its log (answers already
# received are kept, so the rerun does not ask again)
MAY_GROW = ("curate/cache/", "curate/queries.jsonl")


def args_of(name: str, run: Path, target: Path) -> list[str]:
    return [a.replace("RUN", str(run)).replace("TARGET", str(target)) for a in COMMANDS[name]]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    """The sample curated for P36 in ar,en, built and rendered: the 'earlier outputs'."""
    run = tmp_path_factory.mktemp("base") / SAMPLE_RUN
    for args in (("curate", run, "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P36"),
                 ("build", run, "--langs", "ar,en"), ("render", run, "--langs", "ar,en")):
        res = factatlas(*args)
        assert res.returncode == 0, res.stderr
    return run


@pytest.fixture(scope="module")
def clean_outputs(tmp_path_factory, base_run) -> dict[str, dict[str, str]]:
    """What each command writes when nothing fails: the reference the rerun after the failure must match."""
    out = {}
    for name in COMMANDS:
        work = tmp_path_factory.mktemp(f"clean-{name}")
        run = work / SAMPLE_RUN
        shutil.copytree(base_run, run)
        res = factatlas(*args_of(name, run, work / "t.git"))
        assert res.returncode == 0, (name, res.stderr)
        out[name] = outputs(run)
    return out


def outputs(run: Path) -> dict[str, str]:
    """The run's files, without what differs between two clean runs (times in manifest.json, the query
    log's order of cached rows) and without the lm-eval YAMLs (they name their absolute data paths)."""
    return {k: v for k, v in tree(run).items() if k != "manifest.json" and not k.startswith(MAY_GROW)
            and not (k.startswith("lm-eval/") and k.endswith(".yaml"))}


def assert_one_error_line(stderr: str, *parts: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


# ---- disk full: a tmpfs with 0, 8 or 64 KiB free ------------------------------------------------------

@pytest.mark.slow  # one command per case on a copy of the run (0.5-3 s each)
@pytest.mark.parametrize("free_kb", [0, 8, 64])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_disk_is_one_error_line_and_changes_nothing(tmp_path, base_run, clean_outputs, name, free_kb):
    with small_filesystem(tmp_path / "fs", base_run, free_kb) as run:
        before = tree(run)
        res = factatlas(*args_of(name, run, run.parent / "t.git"))
        assert res.returncode == 2 or free_kb, res.stdout  # with no room at all, every command fails
        if res.returncode == 0:  # it fitted in the room given: then it wrote what a clean run writes
            assert outputs(run) == clean_outputs[name]
            assert leftovers(run) == []
            return
        assert res.returncode == 2, res.stderr
        line = assert_one_error_line(res.stderr, "(No space left on device)", "is full: free space there (`df -h ",
                                     "then run the command again")
        assert str(run.parent) in line  # names a path on that file system
        after = tree(run)
        assert {k: v for k, v in after.items() if k in before and not k.startswith(MAY_GROW)} == {
            k: v for k, v in before.items() if not k.startswith(MAY_GROW)}, "an earlier output changed"
        assert all(k.startswith(MAY_GROW) for k in set(after) - set(before)), sorted(set(after) - set(before))
        assert leftovers(run) == []
        grow(run.parent, 16 * 1024)  # the user frees space
        res = factatlas(*args_of(name, run, run.parent / "t.git"))
        assert res.returncode == 0, res.stderr
        assert outputs(run) == clean_outputs[name]
        assert leftovers(run) == []


def test_the_lock_file_on_a_full_disk_is_a_write_failure_and_leaves_nothing(tmp_path):
    """0 bytes free: the lock file can be made (an inode) but not written (its holder line)."""
    with small_filesystem(tmp_path / "fs", free_kb=64) as fs:
        (fs / "run").mkdir()
        (fs / "filler").write_bytes(b"x" * 8192)
        grow(fs, 0)
        with pytest.raises(WriteFailed) as info, RunDir(fs / "run").lock():
            pass
        assert str(info.value).startswith(f"{fs / 'run'}: cannot write the lock file {LOCK_NAME} into it (No space "
                                          "left on device); the file system of")
        assert list((fs / "run").iterdir()) == []


def test_an_atomic_write_and_a_log_line_on_a_full_disk_leave_the_old_bytes(tmp_path):
    with small_filesystem(tmp_path / "fs", free_kb=64) as fs:
        write_bytes(fs / "a.bin", b"old\n")
        append_line(fs / "log.jsonl", '{"n": 1}\n')
        grow(fs, 0)
        with pytest.raises(WriteFailed) as info:
            write_bytes(fs / "a.bin", os.urandom(64 * 1024))
        assert info.value.errno == errno.ENOSPC and info.value.path == fs / "a.bin"
        with pytest.raises(WriteFailed, match=r"log.jsonl: cannot append to it \(No space left on device\)"):
            append_line(fs / "log.jsonl", '{"n": 2, "pad": "' + "x" * 9000 + '"}\n')
        assert (fs / "a.bin").read_bytes() == b"old\n"
        assert (fs / "log.jsonl").read_text() == '{"n": 1}\n'  # never half a line
        assert sorted(p.name for p in fs.iterdir()) == ["a.bin", "log.jsonl"]


# ---- over quota: a btrfs quota group (EDQUOT) -----------------------------------------------------------

@pytest.mark.slow  # a btrfs file system per case, and one command
@pytest.mark.parametrize("name", ["curate", "build", "publish"])
def test_a_disk_quota_used_up_is_one_error_line_and_changes_nothing(tmp_path, base_run, name):
    with over_quota(tmp_path / "fs", base_run, free_kb=0) as run:
        before = tree(run)
        res = factatlas(*args_of(name, run, run.parent / "t.git"))
        assert res.returncode == 2, res.stderr
        assert_one_error_line(res.stderr, "(Disk quota exceeded)", "your disk quota on the file system of",
                              str(run.parent))
        after = tree(run)
        assert {k: v for k, v in after.items() if not k.startswith(MAY_GROW)} == {
            k: v for k, v in before.items() if not k.startswith(MAY_GROW)}
        assert leftovers(run) == []


# ---- read-only: a bind mount (EROFS), and chmod 555 with root's overrides off (EACCES) -------------------

# (command, folder made read-only); "" is the run folder itself
READ_ONLY_CASES = [
    ("curate", ""), ("curate", "curate"), ("curate", "curate/cache"), ("build", ""), ("build", "build"),
    ("build", "build/templates"), ("render", ""), ("render", "render"), ("publish", ""), ("audit", ""),
    ("export", ""), ("audit-culture", ""),
]


@pytest.mark.slow  # one command per case on a copy of the run
@pytest.mark.parametrize("how", ["mode", "mount"])
@pytest.mark.parametrize("name, folder", READ_ONLY_CASES)
def test_a_read_only_folder_is_one_error_line_and_changes_nothing(tmp_path, base_run, clean_outputs, name, folder, how):
    run = tmp_path / SAMPLE_RUN
    shutil.copytree(base_run, run)
    target = run / folder
    before = tree(run)
    if how == "mode":
        os.chmod(target, 0o555)
        try:
            with modes_enforced():
                res = factatlas(*args_of(name, run, tmp_path / "t.git"))
        finally:
            os.chmod(target, 0o755)
        expected = ("(Permission denied)", "you may not write in ", "`chmod -R u+w ")
    else:
        with read_only(target):
            res = factatlas(*args_of(name, run, tmp_path / "t.git"))
        expected = ("(Read-only file system)", "is on a read-only file system: write to a folder on a writable one")
    assert res.returncode == 2, res.stderr
    assert_one_error_line(res.stderr, *expected, str(run))
    after = tree(run)
    assert {k: v for k, v in after.items() if not k.startswith(MAY_GROW)} == {
        k: v for k, v in before.items() if not k.startswith(MAY_GROW)}
    assert leftovers(run) == []
    res = factatlas(*args_of(name, run, tmp_path / "t.git"))  # writable again
    assert res.returncode == 0, res.stderr
    assert outputs(run) == clean_outputs[name]


@pytest.mark.slow  # two quickstart starts (~1 s)
def test_quickstart_into_a_folder_it_may_not_write_is_one_error_line_and_leaves_the_previous_run(tmp_path):
    """quickstart made its run folder and deleted its previous run outside the write layer: a read-only parent
    gave "cannot open it", and a delete in place could empty a previous run's writable subfolders before it
    failed. Every folder of the previous run is now tried before any is deleted."""
    parent = tmp_path / "shared"
    parent.mkdir()
    os.chmod(parent, 0o555)
    try:
        with modes_enforced():
            res = factatlas("quickstart", parent / "q", "--skip-probe")
    finally:
        os.chmod(parent, 0o755)
    assert res.returncode == 2
    assert_one_error_line(res.stderr, f"{parent / 'q'}: cannot create the run folder (Permission denied)",
                          f"you may not write in {parent}")
    assert list(parent.iterdir()) == []

    previous = tmp_path / "runs" / "quickstart"
    (previous / "curate").mkdir(parents=True)
    (previous / ".factatlas-quickstart").write_text("made by factatlas quickstart; safe to delete\n")
    (previous / "curate" / "facts.parquet").write_bytes(b"the previous run's facts")
    before = tree(previous)
    os.chmod(previous, 0o555)
    try:
        with modes_enforced():
            res = factatlas("quickstart", previous, "--skip-probe")
    finally:
        os.chmod(previous, 0o755)
    assert res.returncode == 2
    assert_one_error_line(res.stderr, f"{previous}: cannot replace quickstart/, which needs to delete what "
                                      f"{previous} holds (Permission denied)")
    assert tree(previous) == before and leftovers(previous.parent) == []


def test_a_read_only_stage_folder_is_refused_before_the_work(tmp_path):
    """build over a read-only build/ wrote a whole new build into .factatlas-tmp-build-N/, then a traceback,
    and left the staging folder: the folder is now tried first, and the refusal names it."""
    run = RunDir.open(tmp_path / "run")
    (run.stage("build") / "a.txt").write_text("old\n")
    os.chmod(run.root / "build", 0o555)
    try:
        with modes_enforced(), pytest.raises(WriteFailed) as info, run.replace_stage("build") as staging:
            (staging / "a.txt").write_text("new\n")
    finally:
        os.chmod(run.root / "build", 0o755)
    assert str(info.value).startswith(f"{run.root / 'build'}: cannot replace build/, which needs to delete what "
                                      f"{run.root / 'build'} holds (Permission denied)")
    assert (run.root / "build" / "a.txt").read_text() == "old\n"
    assert sorted(p.name for p in run.root.iterdir()) == ["build"]


@pytest.mark.parametrize("code, reason, fix", [
    (errno.ENOSPC, "No space left on device", "is full: free space there (`df -h "),
    (errno.EDQUOT, "Disk quota exceeded", "your disk quota on the file system of"),
    (errno.EROFS, "Read-only file system", "is on a read-only file system"),
    (errno.EACCES, "Permission denied", "you may not write in"),
    (errno.EPERM, "Operation not permitted", "you may not write in"),
])
def test_each_errno_of_the_family_reads_as_what_failed_and_the_fix(tmp_path, code, reason, fix):
    """The wording per errno, and pyarrow's errno, which it writes into its message only (the real file
    systems of each errno are the tests above)."""
    from factatlas.errors import os_errno, write_failure

    failure = write_failure(tmp_path / "x.parquet", "write it", OSError(code, os.strerror(code)))
    assert isinstance(failure, WriteFailed)
    assert str(failure).startswith(f"{tmp_path / 'x.parquet'}: cannot write it ({reason}); ") and fix in str(failure)
    arrow = OSError(f"Error writing bytes to file. Detail: [errno {code}] {os.strerror(code)}")
    assert os_errno(arrow) == code
    other = FileNotFoundError(errno.ENOENT, "No such file or directory")
    assert write_failure(tmp_path / "x", "write it", other) is other  # not a write failure: a bug stays one


def test_files_written_together_are_all_replaced_or_none(tmp_path):
    """An export (lm-eval task YAMLs and data) is one output: on a full disk its earlier files stay whole and
    unmixed with new ones."""
    from factatlas.atomic import write_together

    with small_filesystem(tmp_path / "fs", free_kb=64) as fs:
        write_together({fs / "out" / "a.yaml": b"old a\n", fs / "out" / "data" / "b.jsonl": b"old b\n"})
        grow(fs, 8)
        with pytest.raises(WriteFailed, match=r"b.jsonl: cannot write it \(No space left on device\)"):
            write_together({fs / "out" / "a.yaml": b"new a\n", fs / "out" / "data" / "b.jsonl": os.urandom(1 << 16)})
        assert tree(fs / "out") == tree_of({"a.yaml": b"old a\n", "data/b.jsonl": b"old b\n"})
        assert leftovers(fs) == []


def tree_of(files: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}


def test_a_librarys_own_error_naming_the_errno_is_a_write_failure_too(tmp_path):
    """safetensors raises SafetensorError("... No space left on device (os error 28)") and the tokenizers a
    plain Exception: inside the write layer they read as the OSError they stand for."""
    from factatlas.errors import writing

    class SafetensorError(Exception):
        pass

    with pytest.raises(WriteFailed) as info, writing(tmp_path / "model", "save the model"):
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")
    assert str(info.value).startswith(f"{tmp_path / 'model'}: cannot save the model (No space left on device); ")
    with pytest.raises(SafetensorError), writing(tmp_path / "model", "save the model"):
        raise SafetensorError("header too large")  # not a refused write: unchanged


@pytest.mark.slow  # builds a tiny model (torch) until the disk is full
def test_a_full_disk_while_saving_the_tiny_model_is_one_error_line(tmp_path, base_run):
    """safetensors' own error was a traceback, and the half-saved model folder stayed."""
    with small_filesystem(tmp_path / "fs", base_run, free_kb=64) as run:
        before = tree(run)
        res = factatlas("probe", run, "--model", "tiny", "--tiny-steps", "2", "--device", "cpu", "--out-name", "m")
        assert res.returncode == 2
        assert_one_error_line(res.stderr, f"{run / 'probe' / '_models' / 'tiny-bert'}: cannot write the new "
                              "tiny-bert/ (No space left on device)")
        assert tree(run) == before and leftovers(run) == []


@pytest.mark.slow  # a build on a copy of the run
def test_an_input_the_user_may_not_read_is_one_line_that_says_so(tmp_path, base_run):
    run = tmp_path / SAMPLE_RUN
    shutil.copytree(base_run, run)
    facts = run / "curate" / "facts.parquet"
    os.chmod(facts, 0)
    try:
        with modes_enforced():
            res = factatlas("build", run, "--langs", "ar,en")
    finally:
        os.chmod(facts, 0o644)
    assert res.returncode == 2
    assert_one_error_line(res.stderr, f"error: {facts}: cannot open it (Permission denied); make it readable and "
                          f"writable for you (`ls -l {facts}`")
    assert leftovers(run) == []


SHORT_HOLDER = """
import sys, time
from pathlib import Path
from factatlas.rundir import RunDir
with RunDir(Path(sys.argv[1])).lock():
    print("locked", flush=True)
    time.sleep(1.0)
"""


@pytest.mark.slow  # a second process
def test_a_waiter_takes_the_lock_in_the_file_that_outlives_the_holders_delete(tmp_path):
    """The holder deletes the lock file as it lets go; a waiter that opened the old file must not hold a
    lock in a deleted file (a third writer would then lock a new file beside it): it opens the path again."""
    import subprocess
    import sys

    from factatlas.rundir import exclusive_lock

    run = tmp_path / "run"
    run.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", SHORT_HOLDER, str(run)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert holder.stdout.readline().strip() == "locked"
    lock = run / LOCK_NAME
    with exclusive_lock(lock, "run directory", wait_s=30):
        assert holder.wait(timeout=30) == 0
        assert lock.read_text().split("\n")[0] == str(os.getpid())  # our file, at the path others open
    assert not lock.exists()
