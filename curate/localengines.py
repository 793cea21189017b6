"""Real SPARQL engines on 127.0.0.1, loaded with an N-Triples file: ``oxigraph serve-read-only`` (the
``oxigraph`` PyPI package) and Virtuoso 7 (Debian's ``virtuoso-opensource-7-bin``).

The tests curate the embedded sample through them and compare the outputs with the embedded store's; the
scaling benchmark measures them. Each engine runs in its own temporary directory on free loopback ports
(Virtuoso's SQL port too) and is stopped, with its files removed, when the ``with`` block ends.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from factatlas.errors import FactatlasError

LOOPBACK = "127.0.0.1"
# the named graph Virtuoso loads the data into; the endpoint URL names it as the default graph, so that
# Virtuoso's own system graphs never answer a query
VIRTUOSO_GRAPH = "http://factatlas.invalid/sample"
VIRTUOSO_BINARIES = ("virtuoso-t", "isql-vt")


class EngineUnavailable(FactatlasError):
    """The engine's binaries are not installed here (the tests skip, naming the package)."""


class EngineFailed(FactatlasError):
    """The engine did not start or did not load the data."""


@dataclass(frozen=True)
class RunningEngine:
    name: str
    url: str  # the SPARQL endpoint, for --endpoint
    pid: int
    triples: int  # what the engine reports holding after the load
    load_s: float  # wall seconds for start + load
    workdir: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def count_triples(url: str) -> int:
    rows = select(url, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    return int(rows[0]["n"]["value"])


def select(url: str, query: str, timeout_s: float = 60.0) -> list[dict]:
    """A bare SPARQL SELECT for setting engines up (the curation goes through ``HttpSparqlEndpoint``)."""
    data = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(url, data=data, headers={"Accept": "application/sparql-results+json"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (loopback only)
        return json.loads(response.read())["results"]["bindings"]


def wait_for_port(port: int, process: subprocess.Popen, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EngineFailed(f"{what} exited with status {process.returncode} before listening on "
                               f"{LOOPBACK}:{port}")
        with socket.socket() as s:
            if s.connect_ex((LOOPBACK, port)) == 0:
                return
        time.sleep(0.1)
    raise EngineFailed(f"{what} did not listen on {LOOPBACK}:{port} within {seconds:g} s")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class _Engine:
    name = "engine"

    def __init__(self, data: str | Path, workdir: str | Path | None = None):
        self.data = Path(data).resolve()
        if not self.data.exists():
            raise EngineFailed(f"{self.data}: no such N-Triples file to load")
        self._own_dir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix=f"factatlas-{self.name}-")) if workdir is None else Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen | None = None
        self.log = self.workdir / "engine.log"

    def __enter__(self) -> RunningEngine:
        started = time.monotonic()
        try:
            url = self._start()
            triples = count_triples(url)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        assert self.process is not None
        return RunningEngine(self.name, url, self.process.pid, triples, time.monotonic() - started, self.workdir)

    def __exit__(self, *_exc) -> None:
        if self.process is not None:
            _stop(self.process)
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _start(self) -> str:
        raise NotImplementedError

    def _log_tail(self) -> str:
        try:
            return "\n".join(self.log.read_text("utf-8", "replace").splitlines()[-5:])
        except OSError:
            return ""


def oxigraph_binary() -> str | None:
    """The ``oxigraph`` CLI: on PATH, else beside the running interpreter, where ``pip install oxigraph``
    puts it in a virtual environment that is not activated (its bin/ is then not on PATH)."""
    return shutil.which("oxigraph") or shutil.which("oxigraph", path=str(Path(sys.executable).parent))


class OxigraphServer(_Engine):
    """``oxigraph load`` then ``oxigraph serve-read-only`` on a free loopback port."""

    name = "oxigraph"

    def _start(self) -> str:
        binary = oxigraph_binary()
        if binary is None:
            raise EngineUnavailable("no `oxigraph` server binary on PATH or beside this Python "
                                    f"({Path(sys.executable).parent}): pip install 'oxigraph==0.5.13'")
        db = self.workdir / "db"
        loaded = subprocess.run([binary, "load", "--location", str(db), "--file", str(self.data)],
                                capture_output=True, text=True)
        if loaded.returncode:
            raise EngineFailed(f"oxigraph load {self.data}: {loaded.stderr.strip()[-300:]}")
        port = free_port()
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([binary, "serve-read-only", "--location", str(db), "--bind",
                                             f"{LOOPBACK}:{port}"], stdout=log, stderr=subprocess.STDOUT)
        wait_for_port(port, self.process, 30, "oxigraph serve-read-only")
        return f"http://{LOOPBACK}:{port}/query"


VIRTUOSO_INI = """\
[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
Striping = 0

[Parameters]
ServerPort = {host}:{sql_port}
DirsAllowed = ., {d}/data
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
ServerThreads = 4
CheckpointInterval = 0

[HTTPServer]
ServerPort = {host}:{http_port}
ServerRoot = {d}
ServerThreads = 4
MaxClientConnections = 4

[SPARQL]
ResultSetMaxRows = 10000000
MaxQueryExecutionTime = 0
MaxQueryCostEstimationTime = 0
"""


def virtuoso_available() -> str | None:
    """None when Virtuoso can be started here; otherwise why not."""
    missing = [b for b in VIRTUOSO_BINARIES if shutil.which(b) is None]
    if missing:
        return (f"Virtuoso is not installed ({', '.join(missing)} not found): apt-get install "
                "virtuoso-opensource-7-bin (.ci/run does)")
    return None


class VirtuosoServer(_Engine):
    """``virtuoso-t`` with its SQL and HTTP ports on free loopback ports, loaded with ``ld_dir`` +
    ``rdf_loader_run`` through ``isql-vt`` into one named graph, which the endpoint URL makes the default."""

    name = "virtuoso"

    def __init__(self, data: str | Path, workdir: str | Path | None = None, buffers: int = 20000):
        super().__init__(data, workdir)
        self.buffers = buffers  # 8 KiB pages: 20000 is 160 MB, plenty for the sample and its 100x copy

    def _start(self) -> str:
        why = virtuoso_available()
        if why:
            raise EngineUnavailable(why)
        d = self.workdir
        (d / "data").mkdir(exist_ok=True)
        target = d / "data" / self.data.name
        if not target.exists():
            os.symlink(self.data, target)
        sql_port, http_port = free_port(), free_port()
        while http_port == sql_port:
            http_port = free_port()
        (d / "virtuoso.ini").write_text(VIRTUOSO_INI.format(
            d=d, host=LOOPBACK, sql_port=sql_port, http_port=http_port, buffers=self.buffers,
            dirty=self.buffers * 3 // 4), "utf-8")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(["virtuoso-t", "+foreground", "+configfile", str(d / "virtuoso.ini")],
                                            cwd=d, stdout=log, stderr=subprocess.STDOUT)
        wait_for_port(http_port, self.process, 120, "virtuoso-t")
        wait_for_port(sql_port, self.process, 30, "virtuoso-t")
        script = (f"ld_dir('{d / 'data'}', '{self.data.name}', '{VIRTUOSO_GRAPH}'); rdf_loader_run(); checkpoint; "
                  "SELECT 'load-error', ll_file, ll_error FROM DB.DBA.LOAD_LIST WHERE ll_error IS NOT NULL;")
        loaded = subprocess.run(["isql-vt", f"{LOOPBACK}:{sql_port}", "dba", "dba", f"exec={script}"],
                                capture_output=True, text=True, cwd=d, timeout=3600)
        # the last statement lists the files that failed to load: none is "0 Rows."
        if loaded.returncode or "0 Rows." not in loaded.stdout:
            raise EngineFailed(f"Virtuoso did not load {self.data}: {(loaded.stdout + loaded.stderr)[-600:]}"
                               f"\n{self._log_tail()}")
        return (f"http://{LOOPBACK}:{http_port}/sparql?"
                + urllib.parse.urlencode({"default-graph-uri": VIRTUOSO_GRAPH}))
