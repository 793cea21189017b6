"""Suite-wide guards: no traffic to anything but loopback, no Hub downloads, no telemetry."""

from __future__ import annotations

import ipaddress
import os
import socket

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_real_connect = socket.socket.connect


def _is_loopback(address) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # AF_UNIX paths


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise OSError(f"tests may only reach loopback addresses; blocked connect to {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _block_non_loopback_sockets():
    socket.socket.connect = _guarded_connect
    yield
    socket.socket.connect = _real_connect
