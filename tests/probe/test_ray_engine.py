"""``--engine ray`` on a local Ray instance with CPU actors: rankings equal to the single-process run, and
(under strace) no connect() by any Ray process to an address outside the loopback network."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from factatlas.probe.runner import ProbeConfig, probe_benchmark
from factatlas.tables import RANKINGS_SCHEMA, read_rows
from tests.probe.probe_capitals import write_benchmark

CONNECT = re.compile(r'connect\(\d+, \{sa_family=AF_INET6?, .*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")')


def connected_addresses(strace_log: str) -> list[str]:
    return [a or b for a, b in CONNECT.findall(strace_log)]


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def wait_for_child(pid: int, timeout: float = 30) -> int:
    import time

    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = psutil.Process(pid).children()
        if children:
            return children[0].pid
        time.sleep(0.05)
    raise AssertionError(f"process {pid} started no child in {timeout} s")


def wait_for_exit(pid: int, timeout: float) -> None:
    """Until a process that is not our child (its tracer reaps it) has ended."""
    import time

    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still running after {timeout} s")


def wait_for_tracer(traced: subprocess.Popen, timeout: float) -> int:
    """strace's exit status once every process it traces has ended; past ``timeout`` a failure that names the
    processes still traced (they outlived the driver), after killing them and strace."""
    import psutil

    try:
        return traced.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        alive = psutil.Process(traced.pid).children(recursive=True)
        names = [f"{p.pid} {' '.join(p.cmdline())[:120]}" for p in alive if p.is_running()]
        for proc in (*alive, psutil.Process(traced.pid)):
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        traced.wait()
        raise AssertionError(f"{len(names)} traced processes outlived the driver by {timeout:.0f} s: {names}") from None


def ray_processes_of(run: Path) -> list[str]:
    """Live processes of a Ray started for ``run`` (its HOME is under the run folder): ``ray::`` workers,
    raylet, gcs. Zombies do not count: they hold no memory and wait for their parent to reap them."""
    import psutil

    found = []
    for proc in psutil.process_iter(["pid", "name", "cmdline", "environ", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            env = proc.info["environ"] or {}
            cmd = " ".join(proc.info["cmdline"] or ())
            if str(run) in env.get("HOME", "") or (cmd.startswith("ray::") and str(run) in cmd):
                found.append(f"{proc.pid} {cmd[:120]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_connect_parser_sees_off_machine_addresses():
    log = ('12 connect(6, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("8.8.8.8")}, 16) = 0\n'
           '12 connect(7, {sa_family=AF_INET6, sin6_port=htons(1), sin6_flowinfo=htonl(0), '
           'inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = 0\n')
    assert connected_addresses(log) == ["8.8.8.8", "::ffff:127.0.0.1"]
    assert [is_loopback(a) for a in connected_addresses(log)] == [False, True]


@pytest.mark.slow
@pytest.mark.servers
def test_ray_engine_equals_single_process_and_stays_on_loopback(tmp_path, capitals_rows, tiny_gpt2_dir):
    pytest.importorskip("ray")
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is needed to verify Ray stays on loopback (apt-get install strace)")
    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    probe_benchmark(run, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring="causal-sum", out_name="single", device="cpu"))
    log = tmp_path / "connect.log"
    # Ray's session folder goes under TMPDIR: a short private one, so other sessions' Rays do not count
    tmp = Path(tempfile.mkdtemp(prefix="fa-t-", dir="/tmp"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp)}
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    try:
        with out.open("w") as stdout, err.open("w") as stderr:
            # --seccomp-bpf: only connect() stops a traced process (plain ptrace stopped every Ray process at
            # every system call: 21 s of system CPU, 5 s with the filter)
            traced = subprocess.Popen(
                [strace, "-f", "--seccomp-bpf", "-qq", "-e", "trace=connect", "-o", str(log), sys.executable, "-m", "factatlas",
                 "probe", str(run), "--model", str(tiny_gpt2_dir), "--scoring", "causal-sum", "--device", "cpu",
                 "--engine", "ray", "--ray-cpus", "2", "--ray-actors", "2", "--ray-shards", "4", "--out-name", "ray"],
                env=env, stdout=stdout, stderr=stderr)
            # strace -f runs until every traced process is gone: watch the driver itself, its only child
            driver = wait_for_child(traced.pid)
            wait_for_exit(driver, timeout=540)
            lingering = ray_processes_of(run)  # the moment the command is over
            code = wait_for_tracer(traced, timeout=180)  # strace exits with its child's status
        assert code == 0, out.read_text()[-2000:] + err.read_text()[-3000:]
        # the run took its Ray with it: no worker of its session lives on, its session folder is gone
        assert lingering == [], "Ray processes outlived the run"
        assert sorted(p.name for p in tmp.iterdir()) == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # the merged folder has the shape of a single-process one: the same files, no shard left over
    assert sorted(p.name for p in (run / "probe" / "ray").iterdir()) == \
        sorted(p.name for p in (run / "probe" / "single").iterdir())
    info = json.loads((run / "probe" / "ray" / "probe.json").read_text())
    assert info["counts"]["prompts/scored"] == 96 and info["counts"]["ray/shards"] == 4
    manifest = json.loads((run / "manifest.json").read_text())
    single_outputs = manifest["stages"]["probe/single"]["outputs"]
    assert sorted(manifest["stages"]["probe/ray"]["outputs"]) == sorted(n.replace("/single/", "/ray/") for n in single_outputs)
    addresses = connected_addresses(log.read_text())
    assert addresses, "strace saw no inet connect at all: the check would be vacuous"
    assert [a for a in addresses if not is_loopback(a)] == []
    for name in ("rankings.parquet", "rankings_template_only.parquet"):
        single = read_rows(run / "probe" / "single" / name, RANKINGS_SCHEMA)
        ray = read_rows(run / "probe" / "ray" / name, RANKINGS_SCHEMA)
        assert [r["prompt_id"] for r in ray] == [r["prompt_id"] for r in single] and len(single) == 96
        for a, b in zip(single, ray, strict=True):
            # other shards batch prompts differently: float noise of ~1e-7 in scores, rankings the same
            assert (b["ranked_qids"], b["correct_at_1"], b["model"]) == (a["ranked_qids"], a["correct_at_1"], a["model"])
            assert b["scores"] == pytest.approx(a["scores"], abs=1e-5)
