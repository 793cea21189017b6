"""The answer store of the server backends (probe/answer_store.py): answers kept as they arrive, by the
request's identity, so a killed probe resumes sending only what was never answered and a rerun sends
nothing. Requests are counted by a real server on 127.0.0.1 (tests/probe/logprob_server.py), which scores
each request's prompts in one batch: what is tested is which requests are sent, not the scores."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from factatlas.probe.answer_store import AnswerStore, request_key, request_secrets, scrub, store_path
from factatlas.probe.runner import ProbeConfig, probe_benchmark
from factatlas.tables import RANKINGS_SCHEMA, read_rows
from tests.probe.logprob_server import LogprobServer

BODY = {"model": "m", "prompt": [[1, 2, 3]], "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}
URL = "http://127.0.0.1:8000/v1/completions"


def test_the_key_is_the_request_path_model_content_and_options_but_not_the_server_or_credentials():
    key = request_key("/completions", BODY)
    assert key == request_key("/completions", dict(reversed(BODY.items())))  # canonical: key order does not matter
    others = [request_key("/chat/completions", BODY),
              request_key("/completions", {**BODY, "model": "other"}),
              request_key("/completions", {**BODY, "prompt": [[1, 2, 4]]}),
              request_key("/completions", {**BODY, "temperature": 0.7}),
              request_key("/completions", {**BODY, "logprobs": 5})]
    assert len({key, *others}) == 6


def test_every_credential_of_a_request_is_named_and_scrubbed_at_any_depth(tmp_path):
    secrets = request_secrets("http://alice:pa%24s@127.0.0.1:8000/v1?api_key=qk-1234567&lang=en", "sk-abc/123+z")
    basic = base64.b64encode(b"alice:pa$s").decode()
    for secret in ("sk-abc/123+z", "Bearer sk-abc/123+z", "sk-abc%2F123%2Bz", "pa$s", "pa%24s", basic,
                   f"Basic {basic}", "qk-1234567"):
        assert secret in secrets
    assert "en" not in secrets and "alice" not in secrets
    assert secrets.index("Bearer sk-abc/123+z") < secrets.index("sk-abc/123+z")  # longest first: masked whole
    echoed = {"id": "x-Bearer sk-abc/123+z", "debug": [{"h": {"authorization": f"Basic {basic}"}}],
              "choices": [{"message": {"content": "Cairo (sk-abc%2F123%2Bz)"}}], "qk-1234567": 1, "n": 2.5}
    assert scrub(echoed, secrets) == {"id": "x-***", "debug": [{"h": {"authorization": "***"}}],
                                      "choices": [{"message": {"content": "Cairo (***)"}}], "***": 1, "n": 2.5}
    store = AnswerStore(tmp_path / "a.jsonl")
    store.put("k", echoed, "http://127.0.0.1:8000/v1/completions", secrets)
    text = (tmp_path / "a.jsonl").read_text("utf-8")
    assert not any(s in text for s in secrets)
    assert AnswerStore(tmp_path / "a.jsonl").get("k") == scrub(echoed, secrets) == store.get("k")


def test_answers_survive_a_new_process_and_a_torn_last_line(tmp_path):
    path = store_path(tmp_path, "org/Model-7B")
    assert path == tmp_path / "probe" / "_answers" / "org--Model-7B.jsonl"
    first = AnswerStore(path)
    first.put("k1", {"choices": [1]}, URL)
    first.put("k2", {"choices": [2]}, URL)
    with path.open("ab") as f:  # a kill in the middle of a write: half a line, no newline
        f.write(b'{"answer": {"choices": [3]}, "ke')
    stats: Counter = Counter()
    second = AnswerStore(path, stats=stats)
    assert second.get("k1") == {"choices": [1]} and second.get("k2") == {"choices": [2]}
    assert second.get("k3") is None
    assert stats["answers/unreadable-lines"] == 1
    second.put("k3", {"choices": [3]}, URL)  # lands on a fresh line, not glued to the torn one
    third = AnswerStore(path)
    assert third.get("k3") == {"choices": [3]}
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[-2]) == {"answer": {"choices": [3]}, "key": "k3", "server": URL}
    assert b"secret" not in path.read_bytes()
    # one compact line, keys sorted, an answer in another script kept as written (the file is read by people too)
    third.put("k4", {"text": "القاهرة"}, URL)
    assert path.read_bytes().split(b"\n")[-2] == (
        f'{{"answer":{{"text":"القاهرة"}},"key":"k4","server":"{URL}"}}').encode()


def test_a_kept_answer_that_fails_the_check_is_asked_again(tmp_path):
    store = AnswerStore(tmp_path / "a.jsonl")
    store.put("k", {"object": "error"}, URL)

    def check(answer):
        if "choices" not in answer:
            raise ValueError("no choices")

    assert store.get("k", check) is None and store.stats["answers/kept-but-rejected"] == 1


def test_threads_and_processes_append_whole_lines(tmp_path):
    path = tmp_path / "a.jsonl"
    store = AnswerStore(path)
    threads = [threading.Thread(target=lambda i=i: [store.put(f"t{i}-{j}", {"x": "y" * 5000}, URL)
                                                    for j in range(20)]) for i in range(4)]
    code = ("import sys; from factatlas.probe.answer_store import AnswerStore; s = AnswerStore(sys.argv[1]); "
            "[s.put(f'p-{j}', {'x': 'z' * 5000}, 'u') for j in range(40)]")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], env={**os.environ, "PYTHONPATH": os.getcwd()})
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert proc.wait(timeout=60) == 0
    stats: Counter = Counter()
    again = AnswerStore(path, stats=stats)
    assert again.get("t3-19") == {"x": "y" * 5000} and again.get("p-39") == {"x": "z" * 5000}
    assert len(path.read_bytes().splitlines()) == 120 and not stats["answers/unreadable-lines"]


def _rankings(run: Path, name: str) -> list[dict]:
    return read_rows(run / "probe" / name / "rankings.parquet", RANKINGS_SCHEMA)


@pytest.mark.servers
def test_a_rerun_with_the_same_options_sends_nothing_and_other_options_are_asked(tmp_path, capitals_rows,
                                                                                   tiny_gpt2, tiny_gpt2_dir):
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    with LogprobServer(tiny_gpt2, batched=True) as server:
        config = ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring="causal-mean", backend="openai",
                             api_base=server.base_url, concurrency=2, out_name="http")
        probe_benchmark(run, config)
        sent = server.requests
        first = _rankings(run, "http")
        probe_benchmark(run, config)
        # 96 prompts + 4 distinct template-only queries, but only the text before the slot is sent: templates
        # that differ after it are one request (asked once, the twin waits for its answer); then none
        assert server.requests == sent == 52
        assert _rankings(run, "http") == first
        info = json.loads((run / "probe" / "http" / "probe.json").read_text())
        assert info["counts"]["http/answers/reused"] == 100 and "http/requests" not in info["counts"]
        # another decoding option (the template's remainder scored too) is another request for every prompt
        probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring="causal-mean", backend="openai",
                                         api_base=server.base_url, remainder=True, out_name="rem"))
        assert server.requests > sent + 90


def _probe_cli(run: Path, model_dir: Path, base_url: str, crash_at: str | None = None):
    """`factatlas probe` over HTTP; a real child process where it is killed at `crash_at`, else in this process
    (tests/clirun.py: the same command without a second start-up and imports)."""
    from tests.clirun import factatlas

    args = ["probe", str(run), "--model", str(model_dir), "--backend", "openai", "--api-base", base_url,
            "--scoring", "causal-mean", "--concurrency", "3", "--out-name", "http"]
    if not crash_at:
        return factatlas(*args, env={"HF_HUB_OFFLINE": "1"})
    env = {k: v for k, v in os.environ.items() if k != "FACTATLAS_CRASH_AT"}
    env.update(PYTHONPATH=os.getcwd(), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", FACTATLAS_CRASH_AT=crash_at)
    return subprocess.run([sys.executable, "-m", "factatlas", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def _settled(server: LogprobServer) -> int:
    """The server's request count once requests the dead process left in socket buffers have arrived."""
    seen = -1
    while seen != server.requests:
        seen = server.requests
        time.sleep(0.5)
    return seen


@pytest.mark.slow
@pytest.mark.servers
def test_a_probe_killed_mid_way_resends_only_the_missing_requests(tmp_path, capitals_rows, tiny_gpt2,
                                                                   tiny_gpt2_dir):
    """A real probe process SIGKILLed after its 46th kept answer of 52; the rerun asks the server only the 6 it
    never answered, a second rerun asks nothing, and the rankings equal those of an uninterrupted run."""
    from tests.probe.probe_capitals import write_benchmark

    whole, killed = tmp_path / "whole", tmp_path / "killed"
    for run in (whole, killed):
        write_benchmark(run / "build", capitals_rows)
    with LogprobServer(tiny_gpt2, batched=True) as server:
        done = _probe_cli(whole, tiny_gpt2_dir, server.base_url)
        assert done.returncode == 0, done.stderr
        total = server.requests
        assert total == 52  # 100 queries, 52 distinct requests (test above)

        dead = _probe_cli(killed, tiny_gpt2_dir, server.base_url, crash_at="answers:stored-46")
        assert dead.returncode == -9, dead.stderr
        answered = _settled(server) - total  # 46, plus what was in flight when the kill came
        kept = store_path(killed, str(tiny_gpt2_dir)).read_bytes().count(b"\n")
        assert kept == 46 and 46 <= answered <= 46 + 2
        assert not (killed / "probe" / "http" / "rankings.parquet").exists()

        before = server.requests
        resumed = _probe_cli(killed, tiny_gpt2_dir, server.base_url)
        assert resumed.returncode == 0, resumed.stderr
        resent = server.requests - before
        assert resent == total - kept == 6

        before = server.requests
        again = _probe_cli(killed, tiny_gpt2_dir, server.base_url)
        assert again.returncode == 0, again.stderr
        assert server.requests == before
    print(f"requests: uninterrupted {total}; killed run {answered} sent, {kept} kept; resumed {resent}; "
          "rerun 0")
    assert _rankings(killed, "http") == _rankings(whole, "http")
    info = json.loads((killed / "probe" / "http" / "probe.json").read_text())
    assert info["counts"]["http/answers/reused"] == 100


@pytest.mark.servers
def test_a_probe_stopped_by_a_long_retry_after_resumes_with_the_missing_requests(tmp_path, capitals_rows, tiny_gpt2,
                                                                                 tiny_gpt2_dir):
    """The 429 message names options that exist and keeps its promise: the answers before it are kept."""
    from factatlas.http import RetryTooLate
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    faults = [None] * 10 + [(429, {"Retry-After": "3600"}, "{}")]
    with LogprobServer(tiny_gpt2, faults, batched=True) as server:
        config = ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring="causal-mean", backend="openai",
                             api_base=server.base_url, concurrency=1, out_name="http", max_retry_after=30)
        with pytest.raises(RetryTooLate, match=r"asks to retry in 3600 s .* longer than --max-retry-after 30 s; "
                                               r"rerun after that time \(cached answers are kept\) or raise "
                                               r"--max-retry-after"):
            probe_benchmark(run, config)
        assert server.requests == 11
        probe_benchmark(run, config)
        assert server.requests == 11 + 52 - 10


@pytest.mark.servers
def test_the_judge_keeps_its_answers_too(tmp_path, capitals_rows, tiny_chat, tiny_chat_dir):
    from factatlas.probe.judge import JudgeConfig, judge_run
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    probe_benchmark(run, ProbeConfig.from_flags(model="m", scoring="chat", max_new_tokens=8, out_name="c"), lm=tiny_chat)
    with LogprobServer(tiny_chat) as server:
        config = JudgeConfig.from_flags("judge", "openai", api_base=server.base_url, concurrency=2)
        first = judge_run(run, "c", config)[0]
        asked = server.requests
        again = judge_run(run, "c", config)[0]
        assert server.requests == asked == first.summary["asked"] > 0
    assert again.summary == first.summary
    assert store_path(run, "judge").read_bytes().count(b"\n") == asked


KEY = "sk-fa-0123456789abcdef"


def _files_holding(run: Path, needle: bytes) -> list[str]:
    return sorted(str(p.relative_to(run)) for p in run.rglob("*") if p.is_file() and needle in p.read_bytes())


@pytest.mark.servers
def test_a_server_echoing_the_key_leaves_it_in_no_file_of_the_run(tmp_path, capitals_rows, tiny_gpt2, tiny_gpt2_dir,
                                                                  tiny_chat, tiny_chat_dir, monkeypatch):
    """A server that echoes the Authorization value in its JSON (nested, in other fields, inside a chat reply):
    the answers kept, the rankings and every other file of the run hold neither the key nor its header."""
    from factatlas.probe.judge import JudgeConfig, judge_run
    from tests.probe.probe_capitals import write_benchmark

    monkeypatch.setenv("FA_TEST_KEY", KEY)
    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    with LogprobServer(tiny_gpt2, batched=True, echo_auth=True) as server:
        probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring="causal-mean", backend="openai",
                                         api_base=server.base_url, api_key_env="FA_TEST_KEY", out_name="http"))
        assert server.authorizations and set(server.authorizations) == {f"Bearer {KEY}"}
    with LogprobServer(tiny_chat, echo_auth=True) as server:
        probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_chat_dir), scoring="chat", backend="openai", max_new_tokens=4,
                                         api_base=server.base_url, api_key_env="FA_TEST_KEY", out_name="chat",
                                         langs=("en",), template_only=False))
        judge_run(run, "chat", JudgeConfig.from_flags("judge", "openai", api_base=server.base_url,
                                           api_key_env="FA_TEST_KEY"))
    assert _files_holding(run, KEY.encode()) == []
    answers = [json.loads(line) for line in store_path(run, str(tiny_chat_dir)).read_text("utf-8").splitlines()]
    # the chat reply keeps its text, the echo masked; nothing but what the rule reads is kept
    assert answers and all(a["answer"]["choices"][0]["message"]["content"].endswith(" [***]") for a in answers)
    assert all(set(a["answer"]) == {"choices"} for a in answers)
    kept = json.loads(store_path(run, str(tiny_gpt2_dir)).read_text("utf-8").splitlines()[0])["answer"]
    assert set(kept["choices"][0]) == {"index", "logprobs"} and set(kept["choices"][0]["logprobs"]) == {
        "token_logprobs"}


@pytest.mark.servers
def test_a_probe_resumed_against_a_server_on_another_port_sends_nothing(tmp_path, capitals_rows, tiny_gpt2,
                                                                       tiny_gpt2_dir):
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    with LogprobServer(tiny_gpt2, batched=True) as first:
        probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring="causal-mean", backend="openai",
                                         api_base=first.base_url, out_name="a"))
        assert first.requests == 52
    with LogprobServer(tiny_gpt2, batched=True) as second:
        assert second.base_url != first.base_url
        probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring="causal-mean", backend="openai",
                                         api_base=second.base_url.replace("127.0.0.1", "localhost"), out_name="b"))
        assert second.requests == 0
    assert _rankings(run, "a") == _rankings(run, "b")
    info = json.loads((run / "probe" / "b" / "probe.json").read_text())
    assert info["counts"]["http/answers/reused"] == 100 and "http/requests" not in info["counts"]
