"""Publish v1.0.0, then v1.1.0 (French added) to a local git repository and read both back: from the
rendered folders with datasets.load_dataset, and by revision through olah, a local Hub-compatible server
that serves the published git repository (see docs/HUB.md)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.errors import ConfigError, FactatlasError
from factatlas.publish.publishers import GitPublisher
from factatlas.publish.workflow import publish
from factatlas.tables import PROMPTS_SCHEMA
from tests.publish.publish_fixtures import BASE_FACTS, make_benchmark

REPO = "org/atlas"


def git(*args, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def tree_state(root: Path) -> dict[str, str]:
    """Every file under root with its content hash (what 'nothing changed' means)."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    root = tmp_path_factory.mktemp("publish")
    run1 = make_benchmark(root / "runs" / "v1")
    run2 = make_benchmark(root / "runs" / "v11", langs=("ar", "en", "fr"))
    # published straight into olah's mirror folder: the Hub stand-in serves this very repository
    target = root / "olah" / "mirrors" / "datasets" / "org" / "atlas"
    plan1, res1 = publish(run1, repo=REPO, version="1.0.0", target=f"git:{target}")
    plan2, res2 = publish(run2, repo=REPO, version="1.1.0", target=f"git:{target}")
    return SimpleNamespace(root=root, run1=run1, run2=run2, target=target, plan1=plan1, plan2=plan2, res1=res1,
                           res2=res2)


def test_each_release_is_one_commit_with_an_annotated_tag_on_it(published):
    p = published
    assert git("cat-file", "-t", "refs/tags/v1.0.0", cwd=p.target) == "tag"
    assert git("rev-parse", "v1.0.0^{commit}", cwd=p.target) == p.res1.commit
    assert git("rev-parse", "v1.1.0^{commit}", cwd=p.target) == p.res2.commit
    assert git("rev-parse", "refs/heads/main", cwd=p.target) == p.res2.commit
    assert git("rev-parse", f"{p.res2.commit}^", cwd=p.target) == p.res1.commit
    publisher = GitPublisher(p.target)
    assert publisher.existing_tags() == ["v1.0.0", "v1.1.0"]
    # the tagged trees are exactly the rendered releases (no stale files, byte for byte)
    assert publisher.read_tag("v1.0.0") == dict(p.plan1.release.files)
    assert publisher.read_tag("v1.1.0") == dict(p.plan2.release.files)
    assert "data/arab-west.fr/test-00000-of-00001.parquet" not in p.plan1.release.files
    assert p.res1.removed == () and p.res2.removed == ()  # v1.1.0 only adds files
    # the run manifests record the release
    manifest = json.loads((p.run2 / "manifest.json").read_text())
    assert manifest["stages"]["publish"]["commit"] == p.res2.commit
    assert manifest["stages"]["publish"]["tag"] == "v1.1.0"
    assert (p.run2 / "release" / "README.md").read_bytes() == p.plan2.release.files["README.md"]


def test_republishing_a_version_fails_and_changes_nothing(published):
    p = published
    refs_before = git("for-each-ref", cwd=p.target)
    state_before = tree_state(p.root)
    with pytest.raises(ConfigError, match=r"version v1.0.0 already exists and releases are never overwritten"):
        publish(p.run2, repo=REPO, version="1.0.0", target=f"git:{p.target}")
    result = CliRunner().invoke(app, ["publish", str(p.run1), "--repo", REPO, "--version", "v1.1.0",
                                      "--target", f"git:{p.target}"])
    assert isinstance(result.exception, ConfigError) and "v1.1.0 already exists" in str(result.exception)
    assert git("for-each-ref", cwd=p.target) == refs_before
    assert tree_state(p.root) == state_before


def test_dry_run_prints_files_sizes_and_card_diff_and_writes_nothing(published):
    p = published
    state_before = tree_state(p.root)
    result = CliRunner().invoke(app, ["publish", str(p.run2), "--repo", REPO, "--version", "1.2.0",
                                      "--target", f"git:{p.target}", "--dry-run"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "nothing written" in out
    size = len(p.plan2.release.files["data/arab-west.fr/test-00000-of-00001.parquet"])
    assert f"{size:>12,d}  data/arab-west.fr/test-00000-of-00001.parquet" in out
    assert "--- git:" in out and "+Version **1.2.0**" in out and "-Version **1.1.0**" in out
    assert tree_state(p.root) == state_before


def test_a_version_step_smaller_than_the_changes_is_refused(published):
    p = published
    run3 = make_benchmark(p.root / "runs" / "v12", facts=BASE_FACTS[:-1], langs=("ar", "en", "fr"))
    refs_before = git("for-each-ref", cwd=p.target)
    with pytest.raises(ConfigError, match=r"v1.1.0 -> v1.2.0 is a minor step but the changes need a major bump: "
                                          r"publish v2.0.0 \(major: 1 facts removed"):
        publish(run3, repo=REPO, version="1.2.0", target=f"git:{p.target}")
    assert git("for-each-ref", cwd=p.target) == refs_before
    assert not (run3 / "release").exists()


def test_diff_command_between_git_tags(published):
    p = published
    result = CliRunner().invoke(app, ["diff", f"git:{p.target}@v1.0.0", f"git:{p.target}@v1.1.0"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("1.0.0 -> 1.1.0\nSuggested bump: **minor**")
    assert "| fr | 6 | 0 | 0 | 6 | 0 | 0 |" in result.output


@pytest.mark.parametrize("damaged, damage, what", [
    ("data/all/test-00000-of-00001.parquet", "cut", "ArrowInvalid"),
    ("benchmark/facts.parquet", "cut", "ArrowInvalid"),
    ("benchmark/labels.parquet", "not parquet", "ArrowInvalid"),
    ("benchmark/benchmark.json", "cut", "JSONDecodeError"),
    ("manifest.json", "a list", "ValueError: expected a JSON object, found list"),
])
def test_a_damaged_release_file_is_one_error_line_naming_the_release_and_the_file(published, tmp_path, damaged,
                                                                                   damage, what):
    """diff of a release with a damaged file was a traceback from Arrow or json."""
    from tests.clirun import factatlas

    good = published.plan1.release_dir
    bad = tmp_path / "damaged"
    shutil.copytree(good, bad)
    data = (bad / damaged).read_bytes()
    (bad / damaged).write_bytes({"cut": data[:len(data) // 2], "not parquet": b"PAR1 but not parquet",
                                 "a list": b"[1]"}[damage])
    for args in ((good, bad), (bad, good)):
        res = factatlas("diff", *args)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        (line,) = [x for x in res.stderr.splitlines() if x.startswith("error: ")]
        assert line.startswith(f"error: {bad}: {damaged} is damaged ({what}") and line.endswith(
            "; fetch or publish that release again"), line


def test_load_dataset_reads_both_rendered_folders(published, tmp_path):
    datasets = pytest.importorskip("datasets")
    p = published
    for plan, configs in ((p.plan1, ["arab-west.ar", "arab-west.en", "all"]),
                          (p.plan2, ["arab-west.ar", "arab-west.en", "arab-west.fr", "all"])):
        folder = str(plan.release_dir)
        assert datasets.get_dataset_config_names(folder) == configs
        for c in plan.release.configs:
            ds = datasets.load_dataset(folder, c.name, cache_dir=str(tmp_path / "cache"))
            assert {s: ds[s].num_rows for s in ds} == {s: n for s, _, n in c.splits}


# ---- reading by revision through olah ----------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def olah(published):
    if shutil.which("olah-cli") is None:
        pytest.skip("olah is not installed (pip install olah)")
    base = published.root / "olah"
    port = _free_port()
    (base / "repos").mkdir(parents=True, exist_ok=True)
    cfg = base / "olah.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [basic]
        host = "127.0.0.1"
        port = {port}
        repos-path = "{base / 'repos'}"
        mirror-netloc = "127.0.0.1:{port}"
        mirror-lfs-netloc = "127.0.0.1:{port}"
        mirrors-path = ["{base / 'mirrors'}"]
        [accessibility]
        offline = true
        """))
    with open(base / "olah.log", "wb") as log:
        proc = subprocess.Popen(["olah-cli", "-c", str(cfg)], cwd=base, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_for_port(port, proc, base / "olah.log")
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_for_port(port: int, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"olah did not start on port {port}: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)


READER = """
import json, sys, hashlib
import datasets
from factatlas.publish.publishers import read_ref
out = {}
for rev in ("v1.0.0", "v1.1.0"):
    names = datasets.get_dataset_config_names("org/atlas", revision=rev)
    configs = {}
    for name in names:
        ds = datasets.load_dataset("org/atlas", name, revision=rev)
        configs[name] = {"rows": {s: ds[s].num_rows for s in ds},
                         "features": {s: ds[s].features.to_dict() for s in ds}}
    files = read_ref("hub:org/atlas@" + rev)
    out[rev] = {"configs": configs, "files": {p: hashlib.sha256(d).hexdigest() for p, d in files.items()}}
try:
    datasets.load_dataset("org/atlas", "arab-west.fr", revision="v1.0.0")
    out["fr_at_v1.0.0"] = "loaded"
except ValueError as e:
    out["fr_at_v1.0.0"] = str(e)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_olah_serves_each_version_exactly_as_published(published, olah, tmp_path):
    datasets = pytest.importorskip("datasets")
    # HF_ENDPOINT is read when huggingface_hub is imported: the reader runs in a fresh interpreter
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=olah, HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="0", HF_DATASETS_OFFLINE="0",
               HF_HUB_DISABLE_TELEMETRY="1", NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    proc = subprocess.run([sys.executable, "-c", READER], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    features = datasets.Features.from_arrow_schema(PROMPTS_SCHEMA).to_dict()
    for rev, plan in (("v1.0.0", published.plan1), ("v1.1.0", published.plan2)):
        expected = {c.name: {"rows": {s: n for s, _, n in c.splits},
                             "features": {s: features for s, _, _ in c.splits}} for c in plan.release.configs}
        assert got[rev]["configs"] == expected
        assert got[rev]["files"] == {p: hashlib.sha256(d).hexdigest() for p, d in plan.release.files.items()}
    assert "arab-west.fr" in got["v1.1.0"]["configs"] and "arab-west.fr" not in got["v1.0.0"]["configs"]
    assert "BuilderConfig 'arab-west.fr' not found" in got["fr_at_v1.0.0"]


def test_a_checked_out_target_branch_is_refused_with_a_fix(tmp_path):
    run = make_benchmark(tmp_path / "run")
    work = tmp_path / "work"
    git("init", "-q", "--initial-branch=main", str(work))
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init", cwd=work)
    with pytest.raises(FactatlasError, match=r"(?s)git push failed, nothing was published: .*checked out.*bare repository"):
        publish(run, repo=REPO, version="1.0.0", target=f"git:{work}")
    assert git("tag", cwd=work) == ""


def test_files_dropped_from_a_release_are_deleted_in_its_commit(tmp_path):
    target = tmp_path / "repo.git"
    publisher = GitPublisher(target)
    from factatlas.publish.versions import Version

    publisher.publish({"README.md": b"one", "old.txt": b"x"}, Version.parse("1.0.0"), "v1")
    result = publisher.publish({"README.md": b"two"}, Version.parse("1.0.1"), "v2")
    assert result.removed == ("old.txt",)
    assert publisher.read_tag("v1.0.1") == {"README.md": b"two"}
    assert publisher.read_tag("v1.0.0") == {"README.md": b"one", "old.txt": b"x"}


def test_an_unrelated_out_folder_is_never_replaced(tmp_path):
    run = make_benchmark(tmp_path / "run")
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="exists and is not a release folder"):
        publish(run, repo=REPO, version="1.0.0", target=f"git:{tmp_path / 'r.git'}", release_dir=keep)
    assert (keep / "notes.txt").read_text() == "mine" and not (tmp_path / "r.git").exists()


def test_a_git_release_cites_no_hub_url(published, tmp_path):
    p = published
    card = p.plan1.release.files["README.md"].decode("utf-8")
    bib = p.plan1.release.files["CITATION.bib"].decode("utf-8")
    assert "huggingface.co/datasets" not in card and "huggingface.co/datasets" not in bib
    assert str(p.target) not in card  # a local path of the publishing machine means nothing to a reader
    assert f"howpublished = {{git repository {REPO}, tag v1.0.0}}" in bib
    assert "git -C atlas checkout v1.0.0" in card and 'load_dataset("atlas"' in card
    from factatlas.publish.card import load_example, published_at

    url = "https://git.example.org/org/atlas.git"
    assert published_at(REPO, f"git:{url}") == url
    assert load_example(REPO, "1.0.0", "arab-west.en", f"git:{url}").startswith(f"# git clone {url} atlas")
    assert published_at(REPO, "hub") == f"https://huggingface.co/datasets/{REPO}"


def test_a_publish_target_registered_elsewhere_publishes_and_reads_back(tmp_path):
    """Targets are registry entries like the prober's rules: one registered here (a local-only git target,
    refusing URLs) is taken by `publish --target NAME:WHERE` and by `NAME:WHERE@tag` references, with no
    edit of the publishers or the workflow."""
    from factatlas.publish.publishers import TARGETS, PublishTarget, open_target, read_ref, register_target

    def local_only(where: str, **_):
        if "://" in where or "@" in where:
            raise ConfigError(f"local:{where}: a local path only; use git:{where} for a remote")
        return GitPublisher(where)

    register_target(PublishTarget("local", "a git repository on this machine", local_only))
    try:
        run = make_benchmark(tmp_path / "run")
        target = tmp_path / "releases" / "atlas.git"
        publish(run, repo=REPO, version="1.0.0", target=f"local:{target}")
        assert read_ref(f"local:{target}@v1.0.0") == read_ref(f"git:{target}@v1.0.0")
        assert read_ref(f"local:{target}")["README.md"].startswith(b"---")
        with pytest.raises(ConfigError, match="a local path only"):
            open_target("local:https://example.org/atlas.git", REPO)
        with pytest.raises(ConfigError, match=r"unknown target 'nowhere:x': expected 'git:PATH' or 'hub' or "
                                              r"'local:PATH'"):
            open_target("nowhere:x", REPO)
    finally:
        TARGETS.unregister("local")
    with pytest.raises(ConfigError, match="unknown target 'local:"):
        open_target(f"local:{target}", REPO)
