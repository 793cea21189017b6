"""Giving freed memory back to the system between the steps of a long walk (``give_back``).

Freed memory is not given back by itself. The Arrow pool (mimalloc) keeps the pages of the tables just read,
and glibc's heap keeps what Python's larger objects (dict tables, lists, bytes) freed below its top: a step
that made 126,336 fact ids into a dict leaves its peak resident after the dict is gone (39 MB at a million
prompts in publish's digest), and every later step's peak stacks on it. Where the heap is not glibc's, the
C side is left as it is."""

from __future__ import annotations

import ctypes
from functools import cache


@cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS, Windows)."""
    try:  # the symbols the process has loaded, libc's among them (no `ldconfig -p` run as find_library would)
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def give_back() -> None:
    """Return what the Arrow pool and the C heap hold unused to the system (their live objects stay)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
