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

    def __init__(self, store, max_rows: int | None = None):
        self.store = store
        # like Virtuoso's ResultSetMaxRows on a public endpoint: answers are cut to the first rows, HTTP 200
        self.max_rows = max_rows
        self.cut: int = 0
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
        if self.max_rows is not None:
            answer = json.loads(body)
            if len(answer["results"]["bindings"]) > self.max_rows:
                answer["results"]["bindings"] = answer["results"]["bindings"][:self.max_rows]
                body = json.dumps(answer).encode()
                with self._lock:
                    self.cut += 1
        start_response("200 OK", [("Content-Type", "application/sparql-results+json"),
                                  ("Content-Length", str(len(body)))])
        return [body]


class FaultInjector:
    """Wraps a WSGI app; answers the next requests with scripted faults, then passes through.

    Faults: ``"429"`` (Retry-After: 7), ``"429-no-retry-after"``, ``"500"``, ``"503"``, ``"truncated"``
    (HTTP 200 with the first half of the real JSON), ``"slow:<seconds>"`` (sleep, then answer), ``"301"``
    (a redirect to another host, with a token in its URL).
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
        if fault == "301":
            start_response("301 Moved Permanently", [("Location", "https://elsewhere.example/sparql?token=abc123")])
            return [b""]
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


class FaultProxy:
    """A raw TCP proxy in front of a local server, for faults a WSGI app cannot make: it reads each
    request, and either forwards it (``Connection: close``) or answers with the next scripted fault.

    Faults: ``"short-body"`` (Content-Length of the real body, half of it sent, then close),
    ``"chunked-cut"`` (chunked encoding, one chunk, then close mid-stream), ``"bad-status"`` (a garbage
    status line), ``"reset"`` (TCP reset after 0.2 s), ``"drip:<pieces>:<seconds>"`` (the real answer in
    pieces, a pause before each), ``"retry-after:<value>"`` (HTTP 429 with that Retry-After),
    ``"echo-auth"`` (the real answer plus the request's Authorization header echoed back as
    ``X-Echo-Authorization``).
    """

    def __init__(self, upstream: str, faults: Sequence[str] = (), match: Callable[[str], bool] | None = None):
        from urllib.parse import urlsplit

        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.faults = list(faults)
        self.match = match or (lambda _q: True)
        self.injected: list[str] = []
        self.requests = 0
        self.authorizations: list[str] = []
        self._lock = threading.Lock()

    def handle(self, sock) -> None:
        request = _read_raw_request(sock)
        if request is None:
            return
        method, target, headers, body = request
        query = (parse_qs(target.partition("?")[2]).get("query") or [""])[0] or \
            (parse_qs(body.decode("utf-8", "replace")).get("query") or [""])[0]
        with self._lock:
            self.requests += 1
            self.authorizations.append(headers.get("authorization", ""))
            fault = self.faults.pop(0) if self.faults and self.match(query) else None
            if fault is not None:
                self.injected.append(fault)
        if fault == "bad-status":
            sock.sendall(b"HTTP/1.1 garbage garbage\r\n\r\n")
            return
        if fault == "reset":
            import socket
            import struct

            time.sleep(0.2)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if fault is not None and fault.startswith("retry-after:"):
            sock.sendall(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: " + fault.split(":", 1)[1].encode()
                         + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        status, out_headers, payload = self._forward(method, target, headers, body)
        kept = [(k, v) for k, v in out_headers if k.lower() not in ("content-length", "connection",
                                                                      "transfer-encoding")]
        if fault == "echo-auth":
            kept.append(("X-Echo-Authorization", headers.get("authorization", "")))
        head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in kept) + "Connection: close\r\n"
        if fault == "chunked-cut":
            half = payload[: max(1, len(payload) // 2)]
            sock.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode("latin-1")
                         + f"{len(payload):x}\r\n".encode() + half)
            return
        sock.sendall((head + f"Content-Length: {len(payload)}\r\n\r\n").encode("latin-1"))
        if fault == "short-body":
            sock.sendall(payload[: max(1, len(payload) // 2)])
            return
        if fault is not None and fault.startswith("drip:"):
            _, pieces, pause = fault.split(":")
            step = max(1, -(-len(payload) // int(pieces)))
            for i in range(0, len(payload), step):
                time.sleep(float(pause))
                try:
                    sock.sendall(payload[i:i + step])
                except OSError:  # the client gave up: that is the point of the fault
                    return
            return
        if fault not in (None, "echo-auth"):
            raise ValueError(f"unknown fault {fault!r}")
        sock.sendall(payload)

    def _forward(self, method: str, target: str, headers: Mapping[str, str],
                 body: bytes) -> tuple[str, list[tuple[str, str]], bytes]:
        import http.client

        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            skip = ("host", "connection", "content-length")
            conn.request(method, target, body=body or None, headers={k: v for k, v in headers.items() if k not in skip})
            response = conn.getresponse()
            return f"{response.status} {response.reason}", response.getheaders(), response.read()
        finally:
            conn.close()


def _read_raw_request(sock) -> tuple[str, str, dict[str, str], bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
    length = int(headers.get("content-length") or 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return method, target, headers, body


@contextmanager
def serve_proxy(proxy: FaultProxy, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve a ``FaultProxy`` on a background thread; yields its base URL."""
    import socketserver

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            proxy.handle(self.request)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server((host, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class MediaWikiApp:
    """A MediaWiki API stand-in: ``action=query&prop=info`` (lengths, normalized titles, redirects,
    maxlag errors with Retry-After) and REST ``history/counts/edits``, from tables."""

    def __init__(self, lengths: Mapping[tuple[str, str], int], redirects: Mapping[tuple[str, str], str] | None = None,
                 edits: Mapping[tuple[str, str], int] | None = None, maxlag_first: int = 0,
                 pageviews: Mapping[tuple[str, str], Mapping[str, int]] | None = None, throttle_first: int = 0):
        self.pageviews = {k: dict(v) for k, v in (pageviews or {}).items()}  # (site, title) -> YYYYMM -> views
        self.throttle_left = throttle_first  # pageviews answers 429 (Retry-After: 2) this many times first
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
        if "/pageviews/per-article/" in path:
            return self._pageviews(path, start_response)
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

    def _pageviews(self, path: str, start_response: Callable) -> list[bytes]:
        """The Wikimedia REST ``pageviews/per-article/{project}/{access}/{agent}/{article}/monthly/{start}/{end}``:
        the months of the table inside [start, end]; 404 (as Wikimedia does) for an article without data."""
        parts = path.split("/pageviews/per-article/")[1].split("/")
        project, access, agent, granularity, start, end = *parts[:3], *parts[-3:]
        title = "/".join(parts[3:-3]).replace("_", " ")
        site = project.removesuffix(".wikipedia")
        self.calls.append({"site": site, "pageviews": title, "start": start, "end": end})
        if self.throttle_left > 0:
            self.throttle_left -= 1
            return self._json(start_response, {"title": "Too many requests"}, "429 Too Many Requests",
                              extra=[("Retry-After", "2")])
        months = self.pageviews.get((site, title))
        if granularity != "monthly" or access != "all-access" or agent != "user" or not months:
            return self._json(start_response, {"type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found",
                                               "title": "Not found."}, "404 Not Found")
        items = [{"project": project, "article": title.replace(" ", "_"), "granularity": "monthly",
                  "timestamp": f"{m}0100", "access": access, "agent": agent, "views": v}
                 for m, v in sorted(months.items()) if start[:6] <= m <= end[:6]]
        return self._json(start_response, {"items": items})

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
