"""``--engine ray`` on a local Ray instance with CPU actors: rankings equal to the single-process run, and
(under strace) no connect() by any Ray process to an address outside the loopback network."""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import subprocess
import sys

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


def test_connect_parser_sees_off_machine_addresses():
    log = ('12 connect(6, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("8.8.8.8")}, 16) = 0\n'
           '12 connect(7, {sa_family=AF_INET6, sin6_port=htons(1), sin6_flowinfo=htonl(0), '
           'inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = 0\n')
    assert connected_addresses(log) == ["8.8.8.8", "::ffff:127.0.0.1"]
    assert [is_loopback(a) for a in connected_addresses(log)] == [False, True]


@pytest.mark.slow
@pytest.mark.servers
def test_ray_engine_equals_single_process_and_stays_on_loopback(tmp_path, capitals_rows, tiny_gpt2_dir):
    pytest.importorskip("ray.data")
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is needed to verify Ray stays on loopback (apt-get install strace)")
    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    probe_benchmark(run, ProbeConfig(model=str(tiny_gpt2_dir), scoring="causal-sum", out_name="single", device="cpu"))
    log = tmp_path / "connect.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        # --seccomp-bpf: only connect() stops a traced process (plain ptrace stopped every Ray process at every
        # system call: 21 s of system CPU, 5 s with the filter); strace falls back to ptrace without seccomp
        [strace, "-f", "--seccomp-bpf", "-qq", "-e", "trace=connect", "-o", str(log), sys.executable, "-m", "factatlas", "probe",
         str(run), "--model", str(tiny_gpt2_dir), "--scoring", "causal-sum", "--device", "cpu", "--engine", "ray",
         "--ray-cpus", "2", "--ray-actors", "2", "--ray-shards", "4", "--out-name", "ray"],
        env=env, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
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
