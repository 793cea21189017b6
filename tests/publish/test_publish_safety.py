"""Publishing survives kills and concurrent publishers, and never moves the default branch backwards
(issue 11): `factatlas publish` against local bare git repositories. Killed, lock-holding and concurrent
publishers are real processes; the other publishes run in this process (tests/clirun.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from factatlas.atomic import TMP_PREFIX
from factatlas.errors import ConfigError
from factatlas.publish.publishers import GitPublisher
from factatlas.publish.versions import Version, moves_default_branch
from tests.children import ForkServer
from tests.clirun import factatlas
from tests.publish.publish_fixtures import make_benchmark

REPO = "org/atlas"


def git(*args, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def children() -> Iterator[ForkServer]:
    """The killed publishes fork from one zygote that imported the CLI and the publisher once."""
    with ForkServer(("factatlas.app.cli", "factatlas.publish.publishers")) as server:
        yield server


def publish_cli(run: Path, target: Path, version: str, crash_at: str | None = None,
                children: ForkServer | None = None) -> subprocess.CompletedProcess:
    """In this process; with crash_at in a child process forked from ``children``, which FACTATLAS_CRASH_AT
    kills at that point."""
    args = ("publish", run, "--repo", REPO, "--version", version, "--target", f"git:{target}")
    if not crash_at:
        return factatlas(*args)
    assert children is not None, "a killed publish is a child process of the module's fork server"
    return children.factatlas(*args, env={"FACTATLAS_CRASH_AT": crash_at})


def commit_of(target: Path, ref: str) -> str:
    return git("rev-parse", f"{ref}^{{commit}}", cwd=target)


@pytest.mark.slow
def test_a_publish_killed_while_creating_the_target_leaves_nothing_a_later_publish_rejects(tmp_path, children):
    run = make_benchmark(tmp_path / "run")
    target = tmp_path / "releases" / "atlas.git"
    killed = publish_cli(run, target, "1.0.0", crash_at="publish:target-initialised", children=children)
    assert killed.returncode == -signal.SIGKILL
    assert not target.exists()  # the half-made repository lives only under a name no publish reads
    assert [p.name for p in target.parent.glob(f"{TMP_PREFIX}atlas.git-*")]
    res = publish_cli(run, target, "1.0.0")
    assert res.returncode == 0, res.stderr
    assert git("tag", cwd=target) == "v1.0.0"
    assert not list(target.parent.glob(f"{TMP_PREFIX}*"))


def test_a_half_made_target_from_an_interrupted_git_init_is_repaired(tmp_path):
    run = make_benchmark(tmp_path / "run")
    target = tmp_path / "atlas.git"
    git("init", "-q", "--bare", str(target))
    (target / "HEAD").unlink()  # git init was killed before it wrote HEAD: not a repository for git
    res = publish_cli(run, target, "1.0.0")
    assert res.returncode == 0, res.stderr
    assert git("tag", cwd=target) == "v1.0.0"


def test_a_foreign_folder_as_target_is_refused_with_what_to_do(tmp_path):
    run = make_benchmark(tmp_path / "run")
    target = tmp_path / "atlas.git"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    res = publish_cli(run, target, "1.0.0")
    assert res.returncode == 2
    assert f"error: git:{target}: exists but is not a git repository; publish to a new path" in res.stderr
    assert (target / "notes.txt").read_text() == "mine"


@pytest.mark.slow
@pytest.mark.parametrize("version, note", [
    ("1.1.0", "note: v1.1.0 is lower than v2.0.0: tagged only; branch 'main' still points at v2.0.0"),
    ("2.0.0-rc.1", "note: v2.0.0-rc.1 is a pre-release below v2.0.0: tagged only; branch 'main' still points at v2.0.0"),
])
def test_a_lower_or_pre_release_version_is_tagged_without_moving_the_default_branch(tmp_path, version, note):
    target = tmp_path / "atlas.git"
    v1 = make_benchmark(tmp_path / "v1")
    v2 = make_benchmark(tmp_path / "v2", langs=("ar", "en", "fr"))
    for run, v in ((v1, "1.0.0"), (v2, "2.0.0")):
        assert publish_cli(run, target, v).returncode == 0
    main_before = commit_of(target, "main")
    res = publish_cli(v1, target, version)
    assert res.returncode == 0, res.stderr
    assert note in res.stdout
    assert commit_of(target, "main") == main_before == commit_of(target, "v2.0.0")
    tagged = commit_of(target, f"v{version}")
    # the backport continues the release below it, not the branch head
    below = "v1.0.0" if version == "1.1.0" else "v1.0.0"
    assert git("rev-parse", f"{tagged}^", cwd=target) == commit_of(target, below)
    assert GitPublisher(target).read_tag(f"v{version}")["README.md"]
    res = publish_cli(v2, target, "2.1.0")  # the next highest release moves main again, from v2.0.0
    assert res.returncode == 0 and "note:" not in res.stdout
    assert git("rev-parse", "main^", cwd=target) == main_before


def test_which_versions_move_the_default_branch():
    existing = [Version.parse(v) for v in ("1.0.0", "2.0.0", "3.0.0-rc.1")]
    assert [v for v in ("0.9.0", "1.1.0", "2.0.1", "3.0.0-rc.2", "3.0.0", "2.1.0-beta")
            if moves_default_branch(Version.parse(v), existing)] == ["2.0.1", "3.0.0"]
    assert moves_default_branch(Version.parse("1.0.0"), [])
    # previews may lead the branch only while no final release exists
    assert moves_default_branch(Version.parse("1.0.0-rc.1"), [])
    assert moves_default_branch(Version.parse("1.0.0-rc.2"), [Version.parse("1.0.0-rc.1")])
    assert not moves_default_branch(Version.parse("1.0.0-rc.1"), [Version.parse("1.0.0-rc.2")])


def test_the_hub_refuses_a_version_that_would_move_its_branch_backwards(monkeypatch):
    pytest.importorskip("huggingface_hub")
    from huggingface_hub import constants

    from factatlas.publish.publishers import HubPublisher
    from tests.publish.hub_stub import HubStub

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the stand-in listens on 127.0.0.1 only
    with HubStub() as hub:
        pub = HubPublisher("org/atlas", token="hf_" + "x" * 20, endpoint=hub.url)
        pub.publish({"README.md": b"two"}, Version.parse("2.0.0"), "v2")
        with pytest.raises(ConfigError, match=r"v1\.1\.0 is lower than v2\.0\.0; on the Hub .* git target"):
            pub.publish({"README.md": b"one"}, Version.parse("1.1.0"), "v1.1")
        assert pub.existing_tags() == ["v2.0.0"]


HOLDER = textwrap.dedent("""
    import sys, time
    from factatlas.publish.publishers import GitPublisher
    with GitPublisher(sys.argv[1]).lock():
        print("locked", flush=True)
        time.sleep(120)
""")


@pytest.mark.slow
def test_a_second_publisher_to_the_same_target_is_refused_naming_the_holder(tmp_path):
    target = tmp_path / "atlas.git"
    run = make_benchmark(tmp_path / "run")
    assert publish_cli(run, target, "1.0.0").returncode == 0
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = publish_cli(make_benchmark(tmp_path / "other"), target, "1.0.1")
        assert res.returncode == 2
        assert f"another factatlas process (pid {holder.pid}) holds publish target {target}" in res.stderr
        assert git("tag", cwd=target) == "v1.0.0"
    finally:
        holder.kill()
        holder.wait()
    assert publish_cli(make_benchmark(tmp_path / "other2"), target, "1.0.1").returncode == 0


@pytest.mark.slow
def test_two_concurrent_publishes_of_one_version_give_one_release_and_a_named_loser(tmp_path):
    target = tmp_path / "atlas.git"
    runs = [make_benchmark(tmp_path / f"r{i}") for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-m", "factatlas", "publish", str(r), "--repo", REPO, "--version",
                               "1.0.0", "--target", f"git:{target}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in runs]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert sorted(rc for rc, _ in results) == [0, 2]
    loser = next(err for rc, err in results if rc)
    assert ("another factatlas process (pid" in loser and f"holds publish target {target}" in loser) or \
        "version v1.0.0 already exists" in loser
    assert "fatal:" not in loser
    assert git("tag", cwd=target) == "v1.0.0"


@pytest.mark.slow
@pytest.mark.parametrize("point, survivor", [("stage:complete", "old"), ("swap:exchanged", "new"),
                                             ("manifest:written", "new")])
def test_a_killed_publish_leaves_release_and_its_manifest_entry_agreeing(tmp_path, point, survivor, children):
    """Issue 42: the run's release/ and the manifest's publish entry move together (staged, swapped in with
    the entry once the target holds the release): after a kill both describe the old release or both the
    new one."""
    import hashlib
    import json

    from factatlas.rundir import PENDING_ENTRY, RunDir

    def release_state(raw: bool) -> tuple[str, str]:
        manifest = json.loads((run / "manifest.json").read_text()) if raw else RunDir(run).read_manifest()
        entry = manifest["stages"]["publish"]
        recorded = entry["outputs"]["release/manifest.json"]
        assert recorded == hashlib.sha256((run / "release" / "manifest.json").read_bytes()).hexdigest()
        assert not (run / "release" / PENDING_ENTRY).exists() or not raw
        return entry["config"]["target"], entry["tag"]

    def files(folder: Path) -> dict[str, bytes]:
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
                if p.is_file() and p.name != PENDING_ENTRY}

    run = make_benchmark(tmp_path / "run")
    first, second = tmp_path / "a.git", tmp_path / "b.git"
    assert publish_cli(run, first, "1.0.0").returncode == 0
    old = release_state(raw=True)
    assert old[0] == f"git:{first}"
    old_files = files(run / "release")
    killed = publish_cli(run, second, "2.0.0", crash_at=point, children=children)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert git("tag", cwd=second) == "v2.0.0"  # the target got the release before the folder moved
    now = release_state(raw=False)
    assert now == (old if survivor == "old" else (f"git:{second}", "v2.0.0"))
    assert (files(run / "release") == old_files) == (survivor == "old")
    with RunDir(run).lock():  # the next writer settles what the kill left
        pass
    assert release_state(raw=True) == now
    assert not list(run.rglob(f"{TMP_PREFIX}*"))


def test_a_release_folder_outside_the_run_is_recorded_by_its_absolute_path(tmp_path):
    """`publish RUN --out ELSEWHERE` published, then died on the manifest entry (a traceback after the tag)."""
    import json

    run = make_benchmark(tmp_path / "run")
    res = factatlas("publish", run, "--repo", REPO, "--version", "1.0.0", "--target", f"git:{tmp_path / 't.git'}",
                    "--out", tmp_path / "elsewhere")
    assert res.returncode == 0, res.stderr
    outputs = json.loads((run / "manifest.json").read_text())["stages"]["publish"]["outputs"]
    assert list(outputs) == [str((tmp_path / "elsewhere" / "manifest.json").resolve())]
    assert not list(tmp_path.glob(f"{TMP_PREFIX}*"))
