"""Fixtures of the publish tests: hand-built benchmark run directories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.publish.publish_fixtures import make_benchmark


@pytest.fixture
def bench_factory(tmp_path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def factory(**kw) -> Path:
        return make_benchmark(tmp_path / f"run{next(counter)}", **kw)

    return factory
