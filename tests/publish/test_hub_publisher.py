"""HubPublisher drives the real huggingface_hub.HfApi against a local recording stand-in of the Hub API."""

from __future__ import annotations

import logging

import pytest

from factatlas.errors import ConfigError, FactatlasError
from factatlas.publish.publishers import HubPublisher, open_target, redact
from factatlas.publish.render import ReleaseOptions, render_release
from factatlas.publish.source import load_source
from factatlas.publish.versions import Version
from tests.publish.hub_stub import HubStub

TOKEN = "hf_TestTokenDoNotLeak0123456789"

pytest.importorskip("huggingface_hub")


@pytest.fixture(autouse=True)
def _online_to_loopback(monkeypatch):
    """The suite runs with HF_HUB_OFFLINE=1; these tests talk to a 127.0.0.1 stand-in only."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_TOKEN", raising=False)


def release(bench_factory, version="1.0.0", **kw):
    return dict(render_release(load_source(bench_factory(**kw)), ReleaseOptions("org/atlas",
                                                                               Version.parse(version))).files)


def test_create_repo_then_commit_then_tag_on_the_commit_sha(bench_factory, caplog, capsys):
    files_v1 = release(bench_factory)
    files_v11 = release(bench_factory, "1.1.0", langs=("ar", "en", "fr"))
    caplog.set_level(logging.DEBUG)
    with HubStub() as hub:
        pub = HubPublisher("org/atlas", token=TOKEN, endpoint=hub.url, private=True)
        r1 = pub.publish(files_v1, Version.parse("1.0.0"), "Release v1.0.0")
        assert hub.calls() == ["refs", "create_repo", "refs", "validate_yaml", "preupload", "commit", "tag"]
        repo = hub.repos["org/atlas"]
        assert repo.private
        assert repo.tags == {"v1.0.0": r1.commit} and repo.branches == {"main": r1.commit}
        assert repo.commits[r1.commit] == files_v1  # the commit holds exactly the release
        # the tag request names the commit sha, not the moving branch
        tag_request = next(r for r in hub.requests if r.path.startswith("/api/datasets/org/atlas/tag/"))
        assert tag_request.path == f"/api/datasets/org/atlas/tag/{r1.commit}"

        hub.requests.clear()
        stale_free = {p: d for p, d in files_v11.items() if p != "templates/ar.yaml"}
        r2 = pub.publish(stale_free, Version.parse("1.1.0"), "Release v1.1.0")
        assert hub.calls() == ["refs", "create_repo", "refs", "tree", "validate_yaml", "preupload", "commit", "tag"]
        assert repo.commits[r2.commit] == stale_free  # templates/ar.yaml from v1.0.0 deleted in the commit
        assert r2.removed == ("templates/ar.yaml",)
        assert repo.tags == {"v1.0.0": r1.commit, "v1.1.0": r2.commit}
        assert pub.existing_tags() == ["v1.0.0", "v1.1.0"]
        requests = list(hub.requests)
    # the token travels in the Authorization header only, never in a body, a log record or the output
    assert {r.authorization for r in requests} == {f"Bearer {TOKEN}"}
    assert not any(TOKEN.encode() in r.body for r in requests)
    captured = capsys.readouterr()
    assert TOKEN not in caplog.text and TOKEN not in captured.out + captured.err


def test_existing_version_is_refused_before_any_write(bench_factory):
    files = release(bench_factory)
    with HubStub() as hub:
        pub = HubPublisher("org/atlas", token=TOKEN, endpoint=hub.url)
        pub.publish(files, Version.parse("1.0.0"), "Release v1.0.0")
        state = (dict(hub.repos["org/atlas"].tags), dict(hub.repos["org/atlas"].branches))
        hub.requests.clear()
        with pytest.raises(ConfigError, match="hub:org/atlas: version v1.0.0 already exists"):
            pub.publish(files, Version.parse("1.0.0"), "again")
        assert [r.method for r in hub.requests] == ["GET"]  # only the refs were read
        assert (hub.repos["org/atlas"].tags, hub.repos["org/atlas"].branches) == state


def test_errors_are_redacted(bench_factory):
    files = release(bench_factory)
    with HubStub(fail_commit_with=f"internal error for token {TOKEN}") as hub:
        pub = HubPublisher("org/atlas", token=TOKEN, endpoint=hub.url)
        with pytest.raises(FactatlasError) as info:
            pub.publish(files, Version.parse("1.0.0"), "Release v1.0.0")
        assert "create_commit failed" in str(info.value)
        assert TOKEN not in str(info.value) and "***" in str(info.value)
        assert info.value.__cause__ is None and info.value.__suppress_context__
        assert "v1.0.0" not in hub.repos["org/atlas"].tags  # no tag without its commit


def test_token_from_environment(bench_factory, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with HubStub() as hub:
        pub = open_target("hub", "org/atlas", endpoint=hub.url)
        assert pub.existing_tags() == []
        assert hub.requests[0].authorization == f"Bearer {TOKEN}"
        assert TOKEN not in pub.location


def test_redact():
    assert redact(f"x {TOKEN} y", [TOKEN]) == "x *** y"
    assert redact("https://user:s3cret@hf.co/datasets/a/b failed") == "https://***@hf.co/datasets/a/b failed"
    assert redact("token hf_abcdefghijklmnop leaked") == "token *** leaked"  # an Authorization-style value
    assert redact("saw hf_abcdefghijklmnop leaked") == "saw hf_*** leaked"
    assert redact("https://h/x?api_key=abc&x=1") == "https://h/x?api_key=***&x=1"  # the core's key parameters
    with pytest.raises(ConfigError, match="unknown target 'git'"):
        open_target("git", "org/atlas")


def test_publish_workflow_to_the_hub_target(bench_factory, monkeypatch):
    from factatlas.publish.workflow import publish

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    run = bench_factory()
    with HubStub() as hub:
        plan, none = publish(run, repo="org/atlas", version="1.0.0", target="hub", endpoint=hub.url, dry_run=True)
        assert none is None and hub.calls() == ["refs"] and not (run / "release").exists()
        plan, result = publish(run, repo="org/atlas", version="1.0.0", target="hub", endpoint=hub.url)
        assert hub.repos["org/atlas"].commits[result.commit] == dict(plan.release.files)
        assert hub.repos["org/atlas"].tags == {"v1.0.0": result.commit}
        assert result.url == f"{hub.url}/datasets/org/atlas/commit/{result.commit}"


def test_missing_token_is_a_clear_error(bench_factory, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with HubStub() as hub:
        pub = HubPublisher("org/atlas", endpoint=hub.url)
        with pytest.raises(ConfigError, match="no Hub token; set HF_TOKEN"):
            pub.publish(release(bench_factory), Version.parse("1.0.0"), "Release v1.0.0")
        assert [r.method for r in hub.requests] == []


def test_an_unreachable_hub_is_one_error_that_names_the_target_and_the_fix():
    import socket

    with socket.socket() as free:  # a loopback port nobody listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    pub = HubPublisher("org/atlas", token=TOKEN, endpoint=f"http://127.0.0.1:{port}")
    with pytest.raises(FactatlasError) as caught:
        pub.existing_tags()
    message = str(caught.value)
    assert message.startswith("hub:org/atlas: listing refs failed: ConnectError: ")
    assert message.endswith("; a publish, --dry-run too, first reads the versions at the target: check the network "
                            "and HF_ENDPOINT, or try the release on a git:PATH target")
    assert TOKEN not in message
