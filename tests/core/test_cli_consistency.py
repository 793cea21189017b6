"""One name per thing across every command (issues 9 and 13): RUN positional, --langs, --templates-dir,
--template-ids; `factatlas --version`; usage lines that match the descriptions; unwrapped error lines."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import factatlas
from factatlas.app.cli import app


# typer vendors its own click: commands and parameters are told apart by what they have, not by class
def commands() -> Iterator[tuple[str, Any]]:
    def walk(prefix: str, cmd: Any) -> Iterator[tuple[str, Any]]:
        if hasattr(cmd, "commands"):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(f"{prefix} {name}".strip(), sub)
        else:
            yield prefix, cmd

    yield from walk("", typer.main.get_command(app))


def visible_options(cmd: Any) -> list[Any]:
    return [p for p in cmd.params if p.param_type_name == "option" and not p.hidden]


def arguments(cmd: Any) -> list[Any]:
    return [p for p in cmd.params if p.param_type_name == "argument"]


def test_version_flag_prints_the_package_version():
    res = subprocess.run([sys.executable, "-m", "factatlas", "--version"], capture_output=True, text=True)
    assert res.returncode == 0
    assert res.stdout == f"factatlas {factatlas.__version__}\n"


def test_run_directories_are_the_positional_RUN_in_every_command():
    taking_run = []
    for name, cmd in commands():
        for opt in visible_options(cmd):
            assert "--run" not in opt.opts, f"{name}: --run (give RUN as the positional argument)"
            if "--out" in opt.opts:
                assert "run directory" not in (opt.help or "").lower(), f"{name}: --out names a run directory"
        for arg in arguments(cmd):
            if "run directory" in (getattr(arg, "help", "") or "").lower():
                taking_run.append(name)
                assert arg.metavar == "RUN", f"{name}: {arg.name} shown as {arg.metavar}"
    assert {"curate", "build", "render", "probe", "report", "publish", "quickstart", "import mlama",
            "import bmlama", "import dlama-v1"} <= set(taking_run)


def test_one_name_per_option_meaning():
    for name, cmd in commands():
        for opt in visible_options(cmd):
            text = (opt.help or "").lower()
            assert "--templates" not in opt.opts, f"{name}: --templates is ambiguous (ids or a folder?)"
            if "<lang>.yaml" in text:
                assert opt.opts == ["--templates-dir"], f"{name}: {opt.opts} for a template folder"
            if "template ids" in text:
                assert opt.opts == ["--template-ids"], f"{name}: {opt.opts} for template ids"
            if "comma-separated" in text and "language" in text:
                assert opt.opts == ["--langs"], f"{name}: {opt.opts} for languages"


def test_usage_lines_and_descriptions_name_the_run_the_same_way():
    runner = CliRunner()
    for name, cmd in commands():
        if not any(p.name == "run" for p in arguments(cmd)):
            continue
        res = runner.invoke(app, [*name.split(), "--help"], env={"COLUMNS": "200"}, prog_name="factatlas")
        usage = next(line for line in res.output.splitlines() if "Usage:" in line)
        assert re.search(r"[\[{]RUN[\]}]", usage), f"{name}: {usage.strip()}"
        assert "<run>" not in res.output.lower(), f"{name}: the description says <run>, the usage RUN"


def test_build_refuses_the_ambiguous_templates_flag_naming_both_new_ones(tmp_path):
    res = CliRunner().invoke(app, ["build", str(tmp_path), "--langs", "en", "--templates", "P19/1"])
    assert res.exit_code != 0
    assert "use --template-ids for template ids (P19/1,P19/q1) or --templates-dir for a folder" in str(res.exception)


def test_templates_show_takes_the_same_folder_option(tmp_path):
    folder = tmp_path / "tpl"
    folder.mkdir()
    (folder / "xx.yaml").write_text("")
    res = CliRunner().invoke(app, ["templates", "show", "xx", "--templates-dir", str(folder)])
    assert "No such option" not in res.output


@pytest.mark.parametrize("width_var", ["", "40"])
def test_error_lines_are_not_wrapped_when_stderr_is_a_file(tmp_path, width_var):
    missing = tmp_path / ("a-rather-long-run-directory-name-" * 3) / "run"
    env = {**__import__("os").environ, "COLUMNS": width_var} if width_var else None
    with open(tmp_path / "err.txt", "w") as err:
        res = subprocess.run([sys.executable, "-m", "factatlas", "build", str(missing), "--langs", "ar,en"],
                             stderr=err, env=env)
    assert res.returncode == 2
    lines = (tmp_path / "err.txt").read_text().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {missing}: no curated facts (") and lines[0].endswith(" first")


def test_http_deadline_and_retry_after_cap_have_one_name_each_where_http_messages_name_them():
    """factatlas.http's deadline and 429 messages say 'raise --timeout' / 'raise --max-retry-after': every
    command that talks to a server over it has both options, under those names and no other."""
    named: dict[str, set[str]] = {}
    for name, cmd in commands():
        for opt in visible_options(cmd):
            text = (opt.help or "").lower()
            if "deadline per http request" in text:
                assert opt.opts == ["--timeout"], f"{name}: {opt.opts} for the HTTP deadline"
                named.setdefault(name, set()).add("--timeout")
            if "retry-after" in text:
                assert opt.opts == ["--max-retry-after"], f"{name}: {opt.opts} for the Retry-After cap"
                named.setdefault(name, set()).add("--max-retry-after")
    for name in ("curate", "probe", "judge", "templates unimorph-fetch"):
        assert named.get(name) == {"--timeout", "--max-retry-after"}, (name, named.get(name))


def test_help_piped_is_not_cut_at_80_columns():
    """`factatlas probe --help | less`: every scoring rule name whole (no "…"), though stdout is a pipe;
    --help loads neither the template renderer nor torch."""
    import os
    from pathlib import Path

    from factatlas.probe.protocol import SCORING_RULES

    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    env["PYTHONPATH"] = str(repo)
    code = ("import sys, runpy; sys.argv = ['factatlas', 'probe', '--help']\n"
            "try:\n    runpy.run_module('factatlas', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print('LOADED', *sorted(m for m in ('torch', 'factatlas.templates.render') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    for name in SCORING_RULES:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", proc.stdout), name
    assert proc.stdout.rstrip().splitlines()[-1] == "LOADED"


def test_a_users_columns_win_and_a_terminal_is_left_alone():
    from factatlas.app.cli import PIPED_WIDTH, widen_when_piped

    class Tty:
        def isatty(self) -> bool:
            return True

    class Pipe:
        def isatty(self) -> bool:
            return False

    mine = {"COLUMNS": "100"}
    assert not widen_when_piped(mine, Pipe(), {}) and mine == {"COLUMNS": "100"}
    bare: dict[str, str] = {}
    assert not widen_when_piped(bare, Tty(), {}) and bare == {}
    assert widen_when_piped(bare, Pipe(), {}) and bare == {"COLUMNS": str(PIPED_WIDTH)}


# ---- option values refused while the command line is parsed (issue 42) ------------------------------

# probe/'s commands belong to the probe room (their options are checked where probe declares them)
PROBE_ROOM = {"probe", "judge", "report", "compare", "xfakt-context"}
# Path options that name what a command writes (or a cache it makes): they need not exist yet
OUTPUT_PATHS = {"--out", "--json", "--cache", "--cache-dir", "--run"}


def typed_params(kind: type) -> Iterator[tuple[str, Any]]:
    import typing

    for name, cmd in commands():
        if name.split()[0] in PROBE_ROOM:
            continue
        for param in cmd.params:
            annotation = param.type_descriptor.annotation
            if kind in (typing.get_args(annotation) or (annotation,)):
                yield name, param


def refused(name: str, param: Any, value: str, tmp_path) -> str:
    """stderr of `factatlas NAME OPTION VALUE` (nothing else given: the value is checked first, before a
    missing RUN or option), after checking that it is one `error:` line, exit 2, and wrote nothing."""
    from tests.clirun import factatlas

    words = [*param.opts[:1], value] if param.param_type_name == "option" else [value]
    res = factatlas(*name.split(), *words, cwd=tmp_path)
    assert res.returncode == 2, (name, words, res.stdout, res.stderr)
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, (name, words, res.stderr)
    assert list(tmp_path.iterdir()) == [], (name, words)  # no run folder, no lock, no output
    return res.stderr


@pytest.mark.slow  # every command's parser, in-process (4 s)
def test_every_number_option_refuses_nan_and_infinity_before_anything(tmp_path):
    """`curate --max-retry-after nan` switched the cap off: `nan < 0` is False, so NaN passed every check."""
    seen = []
    for name, param in [*typed_params(float), *typed_params(int)]:
        values = ("nan", "inf", "-inf") if "float" in str(param.type_descriptor.annotation) else ()
        for value in values:
            assert refused(name, param, value, tmp_path).startswith(f"error: {param.opts[0]} {value}: not a finite "
                                                                    "number"), (name, param.opts)
        seen.append(f"{name} {param.opts[0]}")
    assert {"curate --max-retry-after", "curate --timeout", "build --min-relation-share",
            "templates unimorph-fetch --max-retry-after"} <= set(seen)


@pytest.mark.parametrize("words, message", [
    (("curate", "--max-culture-share", "75"), "error: --max-culture-share 75.0: must be at least 0 and at most 1"),
    (("curate", "--max-retry-after", "-1"), "error: --max-retry-after -1.0: must be at least 0 (seconds)"),
    (("curate", "--timeout", "0"), "error: --timeout 0.0: must be above 0 (seconds)"),
    (("curate", "--max-subjects", "0"), "error: --max-subjects 0: must be at least 1"),
    (("build", "--min-relation-share", "2"), "error: --min-relation-share 2.0: must be at least 0 and at most 1"),
    (("build", "--min-paraphrase-share", "-0.1"), "error: --min-paraphrase-share -0.1: must be at least 0"),
    (("build", "--k", "1"), "error: --k 1: must be at least 2"),
    (("build", "--min-templates", "0"), "error: --min-templates 0: must be at least 1"),
    (("templates", "audit", "--limit", "-1"), "error: --limit -1: must be at least 0"),
    (("diff", "--details", "-1"), "error: --details -1: must be at least 0"),
    (("export", "lm-eval", "--max-gen-toks", "0"), "error: --max-gen-toks 0: must be at least 1"),
])
def test_out_of_range_values_are_refused_naming_the_range(tmp_path, words, message):
    from tests.clirun import factatlas

    res = factatlas(*words, cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.startswith(message), res.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # every command's parser, in-process (3 s)
def test_every_input_path_option_refuses_a_path_that_is_not_there(tmp_path):
    """`templates audit --review-dir nope` counted every filler unreviewed (exit 0); `--against nope.tsv` was
    a traceback; `--templates-dir nope` laid nothing over the packaged templates without a word."""
    from pathlib import Path

    seen = []
    for name, param in typed_params(Path):
        if param.param_type_name == "argument" and param.name in ("run", "out"):
            continue  # RUN and OUT: a run folder or an output folder, checked by the command
        if set(param.opts) & OUTPUT_PATHS or getattr(param, "hidden", False):  # hidden: renamed, refused as such
            continue
        stderr = refused(name, param, "nope-not-here", tmp_path)
        shown = param.opts[0] if param.param_type_name == "option" else param.name.upper()
        assert stderr.startswith((f"error: {shown} nope-not-here: no such", "error: nope-not-here: file not found")), (
            name, stderr)
        seen.append(f"{name} {shown}")
    assert {"templates audit --against", "templates audit --review-dir", "build --templates-dir", "curate --sample",
            "import mlama PATH"} <= set(seen), seen


def test_options_that_only_work_with_fillers_are_refused_without_it(tmp_path):
    from tests.clirun import factatlas

    res = factatlas("templates", "audit", tmp_path / "run", "--out", tmp_path / "ledger.tsv")
    assert res.returncode == 2
    assert res.stderr == "error: --out works only with --fillers; add --fillers, or drop --out\n"
    res = factatlas("templates", "audit", tmp_path / "run", "--all", "--check")
    assert res.stderr.startswith("error: --all and --check work only with --fillers")
    assert list(tmp_path.iterdir()) == []
