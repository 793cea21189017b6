"""What the importers share: the pause of the cyclic garbage collector around an import."""

from __future__ import annotations

import gc

import pytest

from factatlas.builder.importers import bmlama, dlama, mlama
from factatlas.builder.importers.common import gc_paused, paused_gc


@pytest.fixture
def collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_gc_restores_the_collector_as_it_was_also_on_error(collector_enabled):
    with pytest.raises(ValueError, match="inside"), paused_gc():
        assert not gc.isenabled()
        raise ValueError("inside")
    assert gc.isenabled()
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()  # it was off: it stays off


def test_every_import_runs_with_the_collector_paused(collector_enabled):
    seen = []

    @gc_paused
    def build(x, *, y):
        seen.append(gc.isenabled())
        return x + y

    assert build(1, y=2) == 3 and seen == [False] and gc.isenabled()
    assert build.__name__ == "build"
    for fn in (bmlama.import_bmlama, dlama.import_dlama, mlama.import_mlama):
        assert fn.__wrapped__.__name__ == fn.__name__, fn
