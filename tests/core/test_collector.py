"""The garbage collector's settings belong to the command line's process, never to a program or test
session that imports factatlas (factatlas.collector)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_freezing_needs_the_command_line_to_have_taken_the_collector():
    out = _python("""
        import gc
        from factatlas.collector import GEN0_THRESHOLD, freeze_loaded_libraries, tune_for_pipeline
        before = gc.get_threshold()
        assert before[0] < GEN0_THRESHOLD, before  # Python's default: 700 on 3.11
        assert freeze_loaded_libraries() is False and gc.get_freeze_count() == 0
        tune_for_pipeline()
        assert gc.get_threshold() == (GEN0_THRESHOLD, *before[1:]), gc.get_threshold()
        assert freeze_loaded_libraries() is True and gc.get_freeze_count() > 0
        print("ok")
    """)
    assert out == "ok"


def test_the_command_line_takes_the_collector():
    out = _python("""
        import contextlib, gc, io, sys
        from factatlas.app.cli import main
        sys.argv = ["factatlas", "--help"]
        with contextlib.redirect_stdout(io.StringIO()) as shown, contextlib.suppress(SystemExit):
            main()
        assert "Usage" in shown.getvalue()
        print(gc.get_threshold()[0])
    """)
    from factatlas.collector import GEN0_THRESHOLD

    assert out == str(GEN0_THRESHOLD)
