"""Local stand-ins on 127.0.0.1: a SPARQL 1.1 protocol endpoint over pyoxigraph, a fault injector in
front of it, and a MediaWiki ``prop=info`` API answering from a table.

Serve the bundled sample as a SPARQL endpoint (then ``factatlas curate --endpoint http://127.0.0.1:7878/sparql``):

    python3 -m factatlas.curate.localserver --port 7878 [--data file.nt.gz]
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from socketserver import ThreadingMixIn
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

WsgiApp = Callable[[dict, Callable], list[bytes]]


def _read_query(environ: dict) -> str | None:
    method = environ.get("REQUEST_METHOD", "GET")
    if method == "GET":
        return (parse_qs(environ.get("QUERY_STRING", "")).get("query") or [None])[0]
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length).decode("utf-8")
    ctype = environ.get("CONTENT_TYPE", "")
    if ctype.startswith("application/sparql-query"):
        return body
    return (parse_qs(body).get("query") or [None])[0]


class SparqlApp:
    """A WSGI app speaking the SPARQL 1.1 protocol (GET ?query=, POST form or sparql-query body)."""

    def __init__(self, store):
        self.store = store
        self.requests: list[str] = []
        self.user_agents: list[str] = []
        self.methods: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict, start_response: Callable) -> list[bytes]:
        import pyoxigraph as ox

        query = _read_query(environ)
        with self._lock:
            self.methods.append(environ.get("REQUEST_METHOD", "GET"))
            self.user_agents.append(environ.get("HTTP_USER_AGENT", ""))
            if query is not None:
                self.requests.append(query)
        if not query:
            start_response("400 Bad Request", [("Content-Type", "text/plain")])
            return [b"missing 'query' parameter"]
        try:
            result = self.store.query(query)
        except SyntaxError as e:
            start_response("400 Bad Request", [("Content-Type", "text/plain")])
            return [str(e).encode()]
        body = result.serialize(format=ox.QueryResultsFormat.JSON)
        start_response("200 OK", [("Content-Type", "application/sparql-results+json"),
                                  ("Content-Length", str(len(body)))])
        return [body]


class FaultInjector:
    """Wraps a WSGI app; answers the next requests with scripted faults, then passes through.

    Faults: ``"429"`` (Retry-After: 7), ``"429-no-retry-after"``, ``"500"``, ``"503"``, ``"truncated"``
    (HTTP 200 with the first half of the real JSON), ``"slow:<seconds>"`` (sleep, then answer).
    """

    def __init__(self, app: WsgiApp, faults: Sequence[str] = (), match: Callable[[str], bool] | None = None):
        self.app = app
        self.faults = list(faults)
        self.match = match or (lambda _q: True)
        self.injected: list[str] = []
        self.requests = 0
        self._lock = threading.Lock()

    def __call__(self, environ: dict, start_response: Callable) -> list[bytes]:
        with self._lock:
            self.requests += 1
            fault = None
            if self.faults:
                # Peek at the query without consuming the body for the wrapped app.
                body = b""
                if environ.get("REQUEST_METHOD") == "POST":
                    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
                    import io

                    environ["wsgi.input"] = io.BytesIO(body)
                q = (parse_qs(environ.get("QUERY_STRING", "")).get("query") or [""])[0] or \
                    (parse_qs(body.decode()).get("query") or [""])[0]
                if self.match(q):
                    fault = self.faults.pop(0)
                    self.injected.append(fault)
        if fault is None:
            return self.app(environ, start_response)
        if fault == "429":
            start_response("429 Too Many Requests", [("Retry-After", "7"), ("Content-Type", "text/plain")])
            return [b"rate limited"]
        if fault == "429-no-retry-after":
            start_response("429 Too Many Requests", [("Content-Type", "text/plain")])
            return [b"rate limited"]
        if fault in ("500", "502", "503"):
            status = {"500": "500 Internal Server Error", "502": "502 Bad Gateway", "503": "503 Service Unavailable"}
            start_response(status[fault], [("Content-Type", "text/plain")])
            return [b"java.util.concurrent.TimeoutException"]
        if fault == "truncated":
            captured: dict = {}

            def capture(status, headers, exc_info=None):
                captured["status"], captured["headers"] = status, headers

            chunks = self.app(environ, capture)
            body = b"".join(chunks)
            cut = body[: max(1, len(body) // 2)]
            start_response("200 OK", [("Content-Type", "application/sparql-results+json")])
            return [cut]
        if fault.startswith("slow:"):
            time.sleep(float(fault.split(":", 1)[1]))
            return self.app(environ, start_response)
        raise ValueError(f"unknown fault {fault!r}")


class MediaWikiApp:
    """A MediaWiki API stand-in: ``action=query&prop=info`` (lengths, normalized titles, redirects,
    maxlag errors with Retry-After) and REST ``history/counts/edits``, from tables."""

    def __init__(self, lengths: Mapping[tuple[str, str], int], redirects: Mapping[tuple[str, str], str] | None = None,
                 edits: Mapping[tuple[str, str], int] | None = None, maxlag_first: int = 0):
        self.lengths = dict(lengths)
        self.redirects = dict(redirects or {})
        self.edits = dict(edits or {})
        self.maxlag_left = maxlag_first
        self.calls: list[dict] = []
        self.user_agents: list[str] = []

    @staticmethod
    def _normalize(title: str) -> str:
        t = title.replace("_", " ").strip()
        return t[:1].upper() + t[1:]

    def __call__(self, environ: dict, start_response: Callable) -> list[bytes]:
        # WSGI hands PATH_INFO over percent-decoded as latin-1; titles are UTF-8.
        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace")
        site = path.strip("/").split("/")[0]
        self.user_agents.append(environ.get("HTTP_USER_AGENT", ""))
        if "/rest.php/v1/page/" in path:
            title = path.split("/v1/page/")[1].split("/history")[0].replace("_", " ")
            self.calls.append({"site": site, "rest": title})
            if (site, title) not in self.edits:
                return self._json(start_response, {"httpCode": 404}, "404 Not Found")
            return self._json(start_response, {"count": self.edits[(site, title)], "limit": False})
        params = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        self.calls.append({"site": site, **params})
        if self.maxlag_left > 0:
            self.maxlag_left -= 1
            return self._json(start_response, {"error": {"code": "maxlag", "info": "Waiting for a database server"}},
                              extra=[("Retry-After", "3")])
        titles = params.get("titles", "").split("|")
        if len(titles) > 50:
            return self._json(start_response, {"error": {"code": "toomanyvalues", "info": "max 50"}})
        query: dict = {"normalized": [], "redirects": [], "pages": []}
        for t in titles:
            n = self._normalize(t)
            if n != t:
                query["normalized"].append({"fromencoded": False, "from": t, "to": n})
            target = self.redirects.get((site, n))
            if target and params.get("redirects"):
                query["redirects"].append({"from": n, "to": target})
                n = target
            if (site, n) in self.lengths:
                query["pages"].append({"ns": 0, "title": n, "length": self.lengths[(site, n)]})
            else:
                query["pages"].append({"ns": 0, "title": n, "missing": True})
        query = {k: v for k, v in query.items() if v}
        return self._json(start_response, {"batchcomplete": True, "query": query})

    @staticmethod
    def _json(start_response: Callable, data: dict, status: str = "200 OK",
              extra: list[tuple[str, str]] | None = None) -> list[bytes]:
        body = json.dumps(data).encode()
        start_response(status, [("Content-Type", "application/json; charset=utf-8"),
                                ("Content-Length", str(len(body))), *(extra or [])])
        return [body]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # keep test and CLI output clean
        pass


@contextmanager
def serve(app: WsgiApp, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` on a background thread; yields the base URL (``http://127.0.0.1:PORT``)."""
    server = make_server(host, port, app, server_class=_ThreadingServer, handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    from factatlas.curate.endpoints import SAMPLE_PATH, load_store

    parser = argparse.ArgumentParser(description="Serve an N-Triples file as a local SPARQL endpoint.")
    parser.add_argument("--data", default=str(SAMPLE_PATH), help="N-Triples file (.nt or .nt.gz)")
    parser.add_argument("--port", type=int, default=7878)
    args = parser.parse_args(argv)
    app = SparqlApp(load_store(args.data))
    server = make_server("127.0.0.1", args.port, app, server_class=_ThreadingServer)
    print(f"SPARQL endpoint: http://127.0.0.1:{args.port}/sparql  (Ctrl-C to stop)")
    server.serve_forever()


if __name__ == "__main__":
    main()
