"""SPARQL JSON answers read one binding at a time (curate/results.py), over HTTP and from the embedded store:
rows come out before the body has ended, are exactly what ``json.loads`` gives, and a body cut short is a
timeout (the runner halves), never fewer rows."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from factatlas.curate.cache import QueryRunner, read_rows
from factatlas.curate.endpoints import EmbeddedEndpoint, HttpSparqlEndpoint, QueryTimeout, load_store
from factatlas.curate.results import MalformedAnswer, iter_bindings

# Terms that a parser of the body could get wrong: escapes (quote, backslash, tab, newline, \u2028, a
# surrogate pair), language tags, a datatype, a blank node.
TRIPLES = (
    '<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> '
    '"tab\\there\\nnew line \\"quoted\\" back\\\\slash"@fr .\n'
    '<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "\u0645\u0635\u0631"@ar .\n'
    '<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "line\u2028sep \U0001F600"@pt-br .\n'
    '<http://www.wikidata.org/entity/Q1> <http://wikiba.se/ontology#sitelinks> '
    '"42"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
    '<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P570> _:b0 .\n'
    '<http://www.wikidata.org/entity/Q2> <http://www.w3.org/2000/01/rdf-schema#label> "plain" .\n'
)
QUERY = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p STR(?o)"
EXPECTED_VALUES = [  # (s, p, o as the SPARQL JSON term), in the query's order
    ("Q1", "http://wikiba.se/ontology#sitelinks",
     {"type": "literal", "value": "42", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}),
    ("Q1", "http://www.w3.org/2000/01/rdf-schema#label", {"type": "literal", "value": "line\u2028sep \U0001F600",
                                                         "xml:lang": "pt-br"}),
    ("Q1", "http://www.w3.org/2000/01/rdf-schema#label",
     {"type": "literal", "value": 'tab\there\nnew line "quoted" back\\slash', "xml:lang": "fr"}),
    ("Q1", "http://www.w3.org/2000/01/rdf-schema#label", {"type": "literal", "value": "\u0645\u0635\u0631",
                                                         "xml:lang": "ar"}),
    ("Q1", "http://www.wikidata.org/prop/direct/P570", {"type": "bnode"}),
    ("Q2", "http://www.w3.org/2000/01/rdf-schema#label", {"type": "literal", "value": "plain"}),
]


def check_rows(rows: list[dict]) -> None:
    assert len(rows) == len(EXPECTED_VALUES)
    for row, (s, p, o) in zip(rows, EXPECTED_VALUES, strict=True):
        assert row["s"] == {"type": "uri", "value": f"http://www.wikidata.org/entity/{s}"}
        assert row["p"] == {"type": "uri", "value": p}
        if o["type"] == "bnode":  # its label is the engine's own
            assert row["o"]["type"] == "bnode" and row["o"]["value"]
        else:
            assert row["o"] == o


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    path = tmp_path_factory.mktemp("terms") / "terms.nt"
    path.write_text(TRIPLES, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def body(graph) -> bytes:
    """The embedded store's own SPARQL JSON answer (pyoxigraph's serializer), as one body."""
    import pyoxigraph as ox

    return load_store(graph).query(QUERY).serialize(format=ox.QueryResultsFormat.JSON)


def test_the_embedded_store_streams_exact_terms(graph):
    check_rows(EmbeddedEndpoint(graph).select(QUERY))


def test_every_cut_of_the_body_gives_the_rows_json_loads_gives(body):
    whole = json.loads(body)["results"]["bindings"]
    check_rows(whole)
    for cut in range(1, len(body)):
        assert list(iter_bindings([body[:cut], body[cut:]])) == whole, cut
    assert list(iter_bindings(body[i:i + 1] for i in range(len(body)))) == whole  # a byte at a time


def test_a_body_cut_short_is_malformed_at_every_cut(body):
    for cut in range(len(body) - 1):
        tail = body[cut:].strip()
        if tail in (b"", b"}"):
            continue
        with pytest.raises(MalformedAnswer):
            list(iter_bindings([body[:cut]]))



def test_empty_objects_and_arrays_are_read_past_exactly():
    assert list(iter_bindings([b'{"head":{},"results":{"bindings":[]},"x":{}}'])) == []
    assert list(iter_bindings([b'{"results":{"bindings":[{}]}}'])) == [{}]
    with pytest.raises(MalformedAnswer, match="has no results.bindings"):
        list(iter_bindings([b'{"results":{},"head":{"vars":[]}}']))
    with pytest.raises(MalformedAnswer, match="has no results.bindings"):
        list(iter_bindings([b'{}']))

def test_rows_come_out_before_the_body_has_ended(body):
    """The guarantee that bounds the client's memory: the first row is handed over while most of a long
    body is still unread (a parser of the whole body reads every chunk first)."""
    doc = json.loads(body)
    doc["results"]["bindings"] *= 500  # 3,000 rows
    data = json.dumps(doc).encode()
    pieces = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    read = []

    def chunks():
        for piece in pieces:
            read.append(len(piece))
            yield piece

    rows = iter_bindings(chunks())
    assert next(rows) == doc["results"]["bindings"][0]
    assert len(read) <= 2 < len(pieces)
    assert sum(1 for _ in rows) == 2_999


class _Dripping(BaseHTTPRequestHandler):
    """Sends the first half of the answer, then waits until the client has handed over a row before the
    rest: a client that parses the answer whole never gets a row, and times out."""

    body = b""
    row_seen = threading.Event()

    def do_GET(self):  # noqa: N802
        half = len(self.body) // 2
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body[:half])
        self.wfile.flush()
        if self.row_seen.wait(5):
            self.wfile.write(self.body[half:])

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args):
        pass


@pytest.fixture
def dripping(body):
    handler = type("Handler", (_Dripping,), {"body": body, "row_seen": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql", handler
    handler.row_seen.set()
    server.shutdown()
    server.server_close()


def test_the_http_endpoint_hands_rows_over_as_the_body_arrives(dripping):
    url, handler = dripping
    endpoint = HttpSparqlEndpoint(url, timeout_s=3)
    rows = []

    def sink(row):
        rows.append(row)
        handler.row_seen.set()

    assert endpoint.stream(QUERY, sink) == 6
    check_rows(rows)


def test_a_cut_answer_leaves_no_cache_file_and_a_whole_one_reads_back_row_by_row(dripping, tmp_path, body):
    url, handler = dripping
    handler.body = body[: len(body) - 10]  # cut inside the last binding: HTTP 200, fewer bytes than promised
    handler.row_seen.set()
    runner = QueryRunner(HttpSparqlEndpoint(url, timeout_s=3), tmp_path / "cache", tmp_path / "q.jsonl")
    with pytest.raises(QueryTimeout):
        runner.select("probe", QUERY, retries=0)
    assert list((tmp_path / "cache").iterdir()) == []
    handler.body = body
    rows = runner.select("probe", QUERY, retries=0)
    check_rows(rows)
    (cached,) = (tmp_path / "cache").iterdir()
    assert json.loads(cached.read_bytes()) == rows  # still one JSON document
    assert list(read_rows(cached)) == rows


@pytest.mark.servers
def test_oxigraph_server_rows_are_the_embedded_stores(graph, tmp_path):
    from factatlas.curate.localengines import EngineUnavailable, OxigraphServer

    server = OxigraphServer(graph, tmp_path / "oxigraph")
    try:
        running = server.__enter__()
    except EngineUnavailable as e:
        pytest.skip(str(e))
    try:
        rows = []
        HttpSparqlEndpoint(running.url).stream(QUERY, rows.append)
    finally:
        server.__exit__(None, None, None)
    check_rows(rows)


def test_a_cache_file_of_the_older_layout_reads_back(tmp_path):
    """A run cached by an earlier version (the whole array on one line) resumes from its files."""
    from factatlas.curate.cache import count_rows

    rows = [{"s": {"type": "uri", "value": "http://www.wikidata.org/entity/Q1"}},
            {"s": {"type": "literal", "value": "a\nb ]", "xml:lang": "fr"}}]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(rows, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    assert list(read_rows(old)) == rows and count_rows(old) == 2
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    assert list(read_rows(empty)) == [] and count_rows(empty) == 0
