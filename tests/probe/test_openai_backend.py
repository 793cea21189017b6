"""The OpenAI-compatible backend against real servers on 127.0.0.1: a log-prob server over the tiny GPT-2
(tests/probe/logprob_server.py) and ``transformers serve`` with the tiny chat model; results equal the
in-process backend on the same model."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from factatlas.probe.chat import LocalChat
from factatlas.probe.openai_backend import (
    EndpointConfig,
    OpenAIChat,
    OpenAIClient,
    OpenAILogprobScorer,
    RemoteError,
)
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.runner import ProbeConfig, probe_benchmark
from factatlas.tables import RANKINGS_SCHEMA, read_rows
from tests.probe.logprob_server import LogprobServer

QUERY = ClozeQuery("The capital of France is [Y].", ("Paris", "Berlin", "Kuwait City"))


def _rankings(run, name):
    return {r["prompt_id"]: r for r in read_rows(run / "probe" / name / "rankings.parquet", RANKINGS_SCHEMA)}


def test_logprob_scoring_over_http_equals_in_process(tmp_path, capitals_rows, tiny_gpt2, tiny_gpt2_dir):
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    for scoring in ("causal-mean", "causal-sum"):
        probe_benchmark(run, ProbeConfig.from_flags(model="m", scoring=scoring, out_name=f"local-{scoring}"), lm=tiny_gpt2)
        with LogprobServer(tiny_gpt2) as server:
            probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring=scoring, backend="openai",
                                             api_base=server.base_url, concurrency=3, out_name=f"http-{scoring}"))
        local, remote = _rankings(run, f"local-{scoring}"), _rankings(run, f"http-{scoring}")
        assert sorted(local) == sorted(remote) and len(local) == 96
        for pid, lo in local.items():
            re_ = remote[pid]
            assert re_["ranked_qids"] == lo["ranked_qids"], pid
            assert re_["scores"] == pytest.approx(lo["scores"], abs=1e-4)
            assert re_["correct_at_1"] == lo["correct_at_1"]
        info = json.loads((run / "probe" / f"http-{scoring}" / "probe.json").read_text())
        # one request per distinct query: the 96 prompts have 96 texts, but with the subject replaced by the
        # placeholder the template-only run is left with one query per template
        shared = info["counts"]["template_only/queries-shared"]
        assert info["counts"]["scored/queries-shared"] == 0 and 0 < shared < 96
        counts = info["counts"]
        assert counts.get("http/answers/stored", 0) + counts["http/answers/reused"] == 96 + (96 - shared) == 100
        # only the text before the slot is sent, so templates differing after it are one request; causal-sum
        # sends the very requests causal-mean sent (the reduction is made here), so its new server, on another
        # port, is asked nothing: the answer store's key holds no host or port
        sent = 52 if scoring == "causal-mean" else 0
        assert counts.get("http/requests", 0) == counts.get("http/answers/stored", 0) == sent
        assert info["device"] == "remote"


def test_retry_after_backoff_and_counts(tiny_gpt2, tiny_gpt2_dir):
    from factatlas.probe.causal import CausalLMScorer

    waits: list[float] = []
    faults = [(429, {"Retry-After": "2"}, "{}"), (503, {}, "{}")]
    with LogprobServer(tiny_gpt2, faults) as server:
        client = OpenAIClient(EndpointConfig(server.base_url, "m", backoff=0.5), sleep=waits.append)
        scores = OpenAILogprobScorer(client, tiny_gpt2.tokenizer).score([QUERY])
    assert waits[0] == 2.0  # Retry-After wins
    # the first transient failure waits the base back-off +-20 % (factatlas.http counts throttle waits apart)
    assert 0.5 * 0.8 <= waits[1] <= 0.5 * 1.2
    assert client.stats == {"requests": 3, "retries/http-429": 1, "retries/http-503": 1}
    assert scores[0] == pytest.approx(CausalLMScorer(tiny_gpt2).score([QUERY])[0], abs=1e-4)


def test_gives_up_after_max_retries_and_names_the_fix(tiny_gpt2):
    faults = [(503, {}, "{}")] * 3
    with LogprobServer(tiny_gpt2, faults) as server:
        client = OpenAIClient(EndpointConfig(server.base_url, "m", max_retries=2), sleep=lambda s: None)
        with pytest.raises(RemoteError, match=r"/v1/completions: HTTP 503 after 3 attempt\(s\)"):
            OpenAILogprobScorer(client, tiny_gpt2.tokenizer).score([QUERY])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    client = OpenAIClient(EndpointConfig(f"http://127.0.0.1:{closed}/v1", "m", max_retries=1), sleep=lambda s: None)
    # a refused connection is not retried (factatlas.http: nothing listens there), and says so at once
    with pytest.raises(RemoteError, match="cannot connect.*is the server running at --api-base"):
        OpenAILogprobScorer(client, tiny_gpt2.tokenizer).score([QUERY])
    assert client.stats == {"requests": 1}


def test_api_key_sent_but_never_printed(tmp_path, monkeypatch, capitals_rows, tiny_gpt2, tiny_gpt2_dir):
    from typer.testing import CliRunner

    from factatlas.app.cli import app
    from tests.probe.probe_capitals import write_benchmark

    secret = "sk-test-5ecret-value"
    monkeypatch.setenv("FACTATLAS_TEST_KEY", secret)
    write_benchmark(tmp_path / "run" / "build", capitals_rows)
    faults = [(401, {}, '{"error": "invalid key: {auth}"}')]
    with LogprobServer(tiny_gpt2, faults) as server:
        result = CliRunner().invoke(app, ["probe", str(tmp_path / "run"), "--model", str(tiny_gpt2_dir), "--backend",
                                          "openai", "--api-base", server.base_url, "--api-key-env",
                                          "FACTATLAS_TEST_KEY", "--scoring", "causal-mean"])
    assert server.authorizations[0] == f"Bearer {secret}"
    assert result.exit_code != 0
    message = str(result.exception) + result.output
    assert "HTTP 401" in message and "invalid key: ***" in message and "--api-key-env" in message
    assert secret not in message
    assert secret not in repr(EndpointConfig(server.base_url, "m", api_key=secret))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def transformers_server(tiny_chat_dir, tmp_path_factory):
    """``transformers serve`` (transformers[serving]) on 127.0.0.1, offline, serving the tiny chat model."""
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    exe = shutil.which("transformers")
    if exe is None:
        pytest.skip("the transformers CLI is not installed (pip install 'transformers[serving]')")
    port = _free_port()
    env = {**os.environ, "HF_HUB_DISABLE_UPDATE_CHECK": "1", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1"}
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, exe, "serve", str(tiny_chat_dir), "--host", "127.0.0.1", "--port",
                                 str(port), "--device", "cpu"], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"transformers serve did not come up:\n{log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.servers
def test_chat_over_transformers_serve_equals_in_process(tmp_path, capitals_rows, tiny_chat, tiny_chat_dir,
                                                        transformers_server):
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    configs = {  # the one-turn form the model was trained on (so it answers), and a system prompt + a shot
        "zero-shot": {"scoring": "chat", "max_new_tokens": 8},
        "one-shot": {"scoring": "chat-lenient", "shots": 1, "shot_split": "train",
                     "system_prompt": "Answer with a name.", "max_new_tokens": 8},
    }
    for name, common in configs.items():
        probe_benchmark(run, ProbeConfig.from_flags(model="m", out_name=f"local-{name}", **common), lm=tiny_chat)
        probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_chat_dir), backend="openai", api_base=transformers_server,
                                         concurrency=2, out_name=f"http-{name}", **common))
        local, remote = _rankings(run, f"local-{name}"), _rankings(run, f"http-{name}")
        assert sorted(local) == sorted(remote) and len(local) == 48
        for pid, lo in local.items():
            re_ = remote[pid]
            assert (re_["prediction"], re_["correct_at_1"], re_["ranked_qids"]) == \
                   (lo["prediction"], lo["correct_at_1"], lo["ranked_qids"]), (name, pid)
            local_record, remote_record = json.loads(lo["conversation"]), json.loads(re_["conversation"])
            assert remote_record["messages"] == local_record["messages"]
            assert remote_record["rendered"] is None and local_record["rendered"]
        if name == "zero-shot":  # the model does answer its trained questions, so equality is not vacuous
            assert sum(r["correct_at_1"] for r in local.values()) >= 12


@pytest.mark.slow
@pytest.mark.servers
def test_transformers_serve_has_no_prompt_logprobs(transformers_server, tiny_chat, tiny_chat_dir):
    client = OpenAIClient(EndpointConfig(transformers_server, str(tiny_chat_dir), max_retries=0))
    # transformers serve answers HTTP 400 "prompt must be a string." to token ids: the error says what it means
    with pytest.raises(RemoteError, match=r"refused a token-id prompt with echo=true, logprobs=1 \(.*HTTP 400.*prompt "
                                          r"must be a string.*\): the server cannot give prompt log-probabilities, "
                                          r"which --scoring causal-mean needs \(transformers serve cannot\); use a "
                                          r"server that does, e.g. vllm serve, or --scoring chat"):
        OpenAILogprobScorer(client, tiny_chat.tokenizer).score([QUERY])


# ---- answers that are not the JSON expected: faults of the one HTTP policy ------------------------------

CUT_JSON = '{"object": "text_completion", "choices": [{"index": 0, "logprobs": {"token_logpr'
HTML_PAGE = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


def test_bodies_that_are_not_the_json_expected_are_retried_like_a_503(tiny_gpt2):
    from factatlas.probe.causal import CausalLMScorer

    faults = [(200, {}, CUT_JSON), (200, {"Content-Type": "text/html"}, HTML_PAGE),
              (200, {}, '{"object": "list", "data": []}'), (200, {}, '{"choices": "none"}'),
              (200, {}, json.dumps({"choices": [{"index": i, "logprobs": {"token_logprobs": [None] + ["x"] * 40}}
                                               for i in range(3)]}))]
    with LogprobServer(tiny_gpt2, faults) as server:
        client = OpenAIClient(EndpointConfig(server.base_url, "m", max_retries=5), sleep=lambda s: None)
        scores = OpenAILogprobScorer(client, tiny_gpt2.tokenizer).score([QUERY])
    assert client.stats == {"requests": 6, "retries/not-json": 2, "retries/wrong-shape": 3}
    assert scores[0] == pytest.approx(CausalLMScorer(tiny_gpt2).score([QUERY])[0], abs=1e-4)


def test_cut_bodies_from_a_raw_proxy_are_retried(tiny_gpt2):
    from factatlas.curate.localserver import FaultProxy, serve_proxy

    with LogprobServer(tiny_gpt2) as server:
        proxy = FaultProxy(server.base_url, ["short-body", "chunked-cut", "bad-status"])
        with serve_proxy(proxy) as url:
            client = OpenAIClient(EndpointConfig(url + "/v1", "m", max_retries=3), sleep=lambda s: None)
            OpenAILogprobScorer(client, tiny_gpt2.tokenizer).score([QUERY])
    assert proxy.injected == ["short-body", "chunked-cut", "bad-status"]
    assert client.stats == {"requests": 4, "retries/connection": 3}


def test_a_chat_answer_of_the_wrong_shape_is_retried(tiny_chat):
    faults = [(200, {}, '{"choices": []}'), (200, {}, '{"choices": [{"message": {"content": 7}}]}')]
    with LogprobServer(tiny_chat, faults) as server:
        client = OpenAIClient(EndpointConfig(server.base_url, "m"), sleep=lambda s: None)
        reply = OpenAIChat(client, max_new_tokens=8).chat([[{"role": "user", "content": "Capital of Egypt?"}]])[0]
    assert client.stats == {"requests": 3, "retries/wrong-shape": 2}
    assert reply.answer == LocalChat(tiny_chat, max_new_tokens=8).chat(
        [[{"role": "user", "content": "Capital of Egypt?"}]])[0].answer


@pytest.mark.servers
@pytest.mark.parametrize("body, headers, said", [
    (HTML_PAGE, {"Content-Type": "text/html"}, "HTTP 200 but the body is not JSON (Expecting value, byte 0; "
                                                "text/html, 89 bytes: '<!DOCTYPE html>"),
    (CUT_JSON, {}, "HTTP 200 but the body is not JSON (Unterminated string starting at, byte 68; "),
    ('{"id": "x", "object": "error"}', {}, "HTTP 200 but the JSON is not an OpenAI answer (no choices[0]"),
])
def test_after_the_last_try_the_cli_names_the_server_the_fault_and_the_fix(tmp_path, capitals_rows, tiny_gpt2,
                                                                            body, headers, said):
    """The first case runs the real command line (exit 2, one ``error:`` line, no traceback); the others
    check the same message in process (the error main() prints)."""
    from typer.testing import CliRunner

    from factatlas.app.cli import app
    from factatlas.errors import FactatlasError
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    args = ["probe", str(run), "--model", "m", "--backend", "openai", "--scoring", "chat", "--max-retries", "1",
            "--concurrency", "2", "--api-base"]
    with LogprobServer(tiny_gpt2, [(200, headers, body)] * 400) as server:
        if body == HTML_PAGE:
            res = subprocess.run([sys.executable, "-m", "factatlas", *args, server.base_url], capture_output=True,
                                 text=True, env={**os.environ, "PYTHONPATH": os.getcwd()}, timeout=120)
            assert res.returncode == 2, res.stderr
            assert "Traceback" not in res.stderr
            errors = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
            assert len(errors) == 1, res.stderr
            error = errors[0]
        else:
            result = CliRunner().invoke(app, [*args, server.base_url])
            assert isinstance(result.exception, FactatlasError), result.exception
            error = f"error: {result.exception}"
        sent = server.requests
    assert f"error: {server.base_url}/chat/completions: {said}" in error
    assert "after 2 attempt(s); " in error
    assert "check that --api-base is the OpenAI-compatible API's /v1 URL" in error or \
        "check --api-base (the /v1 URL of" in error
    assert "rerun (answers received so far are kept)" in error
    assert sent <= 2 * 2  # the first failure stops the rest: only the other request in flight is tried again
