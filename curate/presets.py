"""Named public SPARQL endpoints and their known limits: ``--endpoint wdqs|qlever-wikidata|URL``.

Each limit names its source; where a service documents no value, the field is ``None`` and the source
says so. The limits are applied where the request is made (``curate/endpoints.py``): the client deadline
is the server's plus a margin (a client that gives up first would retry a query the server is still
running), requests are paced at ``min_interval_s``, one query is in flight (always), an answer with
``result_cap`` rows is treated as truncated (the batch is halved), and a preset that requires a
descriptive User-Agent refuses to run without one.
"""

from __future__ import annotations

from dataclasses import dataclass

from factatlas.errors import ConfigError, unknown

CLIENT_MARGIN_S = 5.0  # the client's deadline is the server's plus this


@dataclass(frozen=True)
class EndpointPreset:
    name: str
    url: str
    server_timeout_s: float  # the server cancels a query after this
    min_interval_s: float  # at least this long between the starts of two requests
    result_cap: int | None  # rows an answer may hold at most; None: no documented cap
    user_agent_required: bool
    sources: tuple[str, ...]  # where each value comes from

    @property
    def client_timeout_s(self) -> float:
        return self.server_timeout_s + CLIENT_MARGIN_S


PRESETS: dict[str, EndpointPreset] = {p.name: p for p in (
    EndpointPreset(
        name="wdqs",
        url="https://query.wikidata.org/sparql",
        server_timeout_s=60.0,
        min_interval_s=0.0,
        result_cap=None,
        user_agent_required=True,
        sources=(
            "timeout: WDQS User Manual, 'Query limits' (a hard 60 s deadline per query)",
            "rate: 60 s of query time per 60 s and 30 errors per minute per User-Agent + IP, one request "
            "in parallel, 429 with Retry-After (WMF announcements on the wikidata lists, 2017 and 2019); one "
            "query in flight keeps a client under the time budget, so no extra pacing",
            "result cap: none documented (the deadline is the limit)",
            "User-Agent: Wikimedia User-Agent policy (generic agents are blocked)",
        ),
    ),
    EndpointPreset(
        name="qlever-wikidata",
        url="https://qlever.dev/api/wikidata",
        server_timeout_s=600.0,
        min_interval_s=1.0,
        result_cap=None,
        user_agent_required=False,
        sources=(
            "URL: qlever-control's `benchmark-queries` command lists https://qlever.dev/api/wikidata as the "
            "public Wikidata endpoint (src/qlever/commands/benchmark_queries.py, since commit 97f0855, "
            "2025-07-10); the former https://qlever.cs.uni-freiburg.de/api/wikidata is reported to redirect there, "
            "which this client does not follow (credentials never travel to another address)",
            "timeout: the Wikidata Qleverfile of qlever-control sets the server's TIMEOUT to 600s (commit "
            "d4902b9, 2024-11-16; 300s from commit 1cf292f, 2024-10-19; QLever's own default is 30s, "
            "src/qlever/qleverfile.py); the public instance's value is not published, so the client waits "
            "as long as the Qleverfile lets the server work",
            "rate: none published; 1 request per second is this project's courtesy pace for a university-run "
            "service",
            "result cap: none documented for the API",
        ),
    ),
)}


def resolve(endpoint: str | None) -> tuple[str | None, EndpointPreset | None]:
    """``--endpoint`` -> (URL or None for the embedded sample, the preset when a name was given)."""
    if endpoint is None or endpoint == "embedded":
        return None, None
    if endpoint in PRESETS:
        return PRESETS[endpoint].url, PRESETS[endpoint]
    if "://" not in endpoint:
        raise ConfigError("--endpoint: " + unknown("endpoint preset", endpoint, ["embedded", *PRESETS])
                          + " (or give a URL like http://127.0.0.1:7878/query)")
    return endpoint, None
