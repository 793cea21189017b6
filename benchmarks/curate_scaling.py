"""How curation on the embedded store grows with the store: samples of 1x, 10x, ... the bundled one.

A sample of scale k is the bundled sample plus k-1 renamed copies of everything that is not a country, a
continent, an organisation countries belong to, or a class: copy j renames Q<n> to Q<n + j*10^9>, appends
``_(j)`` to its article IRIs and `` (j)`` to its article titles, and keeps its links to the shared
countries and classes. So a copy of a singer is another singer of the same country, born in a copy of the
same city: the store, the candidate pools and every query's answer grow k-fold, with the sample's shape.
Copies get tiny article lengths (below every real one), so popularity ranking keeps the originals first.

Each scale runs in its own child process (so its peak memory is its own) and prints its process CPU time
for the whole curation (``curate()``, store loading timed apart), for one describe query on a fixed 200
original entities (min of 5), and its peak resident memory (``resource.getrusage``). Before any exponent
is printed, the facts and entities about original subjects must be identical at every scale.

    python benchmarks/curate_scaling.py                 # 1x, 10x, 30x (about 5 minutes on 2 cores)
    python benchmarks/curate_scaling.py --scales 1,10,100
    python benchmarks/curate_scaling.py --endpoint-server   # also over HTTP against `oxigraph serve`
    python benchmarks/curate_scaling.py --scales 1,10,100 --engines oxigraph,virtuoso --json scale.json

Each query kind is then replayed in another process against the smallest and the largest scale at once
(both stores loaded, or both servers left running): ``--rounds`` rounds, the two scales' turns interleaved
(1x, 30x, then 30x, 1x, ...) so that a change of the box's load hits both ends alike, and in every round a
control query (the describe of 200 fixed entities: the same answer at every scale) timed at each scale.
It prints, per kind, the least round's CPU (this process's plus the server's, from /proc) and wall time,
the median round, and the least after taking each round's load out by the control; and the control's
drift over the replay. Kinds are judged on the least round's CPU over the whole span.

Over HTTP (``--engines oxigraph,virtuoso``: the engines of ``factatlas.curate.localengines`` on 127.0.0.1,
loaded with each scale's store) it also reports, per curation stage, the wall time, the requests sent and
the peak resident memory of the client and of the server (VmHWM, reset at each stage), and the exponents
of curation time and requests against the facts curated (which the per-predicate caps bound), beside the
exponent against the store size.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WD = "http://www.wikidata.org/entity/"
QID_IRI = re.compile(r"<http://www\.wikidata\.org/entity/Q(\d+)>")
ARTICLE_IRI = re.compile(r"^<(https://[a-z0-9-]+\.wikipedia\.org/wiki/[^>]*)>")
COPY_STRIDE = 10**9
# Predicates whose subjects (and objects) are countries: the entities every copy shares.
COUNTRY_EDGES = ("P530", "P47", "P30", "P463")
PAIR, LANGS = "arab-west", ("ar", "en", "fr")
DESCRIBE_ENTITIES = 200


def shared_entities(lines: list[str]) -> set[str]:
    """QIDs every copy keeps pointing at: countries, continents, organisations, classes."""
    shared: set[str] = set()
    for line in lines:
        s, p, o = line.split(" ", 2)
        if not p.startswith("<http://www.wikidata.org/prop/direct/"):
            continue
        pid = p.rsplit("/", 1)[1][:-1]
        if pid in COUNTRY_EDGES or pid == "P279":
            shared.update(QID_IRI.findall(s) + QID_IRI.findall(o))
        elif pid == "P31":
            shared.update(QID_IRI.findall(o))
    return {f"Q{n}" for n in shared}


def articles_about(lines: list[str]) -> dict[str, str]:
    """Article IRI -> the QID it is about."""
    out = {}
    for line in lines:
        if " <http://schema.org/about> " in line:
            s, _, o = line.split(" ", 2)
            out[s] = "Q" + QID_IRI.findall(o)[0]
    return out


def owner(line: str, about: dict[str, str]) -> str | None:
    """The entity a triple describes: its subject, or what its article subject is about."""
    s = line.split(" ", 1)[0]
    m = QID_IRI.fullmatch(s)
    return f"Q{m.group(1)}" if m else about.get(s)


def copy_line(line: str, j: int, shared: set[str]) -> str:
    def rename(m: re.Match) -> str:
        q = f"Q{m.group(1)}"
        return m.group(0) if q in shared else f"<{WD}Q{int(m.group(1)) + j * COPY_STRIDE}>"

    line = QID_IRI.sub(rename, line)
    m = ARTICLE_IRI.match(line)
    if m:
        line = f"<{m.group(1)}_%28{j}%29>" + line[m.end():]
        if " <http://schema.org/name> " in line:
            line = re.sub(r'"@([a-z-]+) \.$', rf' ({j})"@\1 .', line)
    return line


def write_sample(scale: int, out: Path) -> Path:
    """The scale-``scale`` sample under ``out``: ``sample.nt``, ``page_lengths.tsv``, ``redirects.tsv``."""
    src = ROOT / "curate" / "sample"
    lines = gzip.decompress((src / "wikidata-sample.nt.gz").read_bytes()).decode().splitlines()
    shared = shared_entities(lines)
    about = articles_about(lines)
    copied = [x for x in lines if owner(x, about) not in shared]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "sample.nt", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        for j in range(1, scale):
            f.write("\n".join(copy_line(x, j, shared) for x in copied) + "\n")
    rows = (src / "page_lengths.tsv").read_text(encoding="utf-8").splitlines()
    with open(out / "page_lengths.tsv", "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
        for j in range(1, scale):
            for row in rows[1:]:
                site, title, length = row.split("\t")
                f.write(f"{site}\t{title} ({j})\t{1 + int(length) % 500}\n")
    shutil.copy(src / "redirects.tsv", out / "redirects.tsv")
    return out / "sample.nt"


def original(qid: str) -> bool:
    return int(qid[1:]) < COPY_STRIDE


STAGES = ("checks", "candidates", "popularity", "objects", "labels", "augment+write")


def peak_rss_mb(pid: int | str = "self", reset: bool = True) -> float:
    """The process's peak resident memory since the last reset (VmHWM), then reset it (clear_refs 5), so
    that each stage reports its own peak."""
    status = Path(f"/proc/{pid}/status").read_text()
    kb = int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M).group(1))
    if reset:
        with contextlib.suppress(OSError):  # not ours to reset: the peak then runs from the process's start
            Path(f"/proc/{pid}/clear_refs").write_text("5")
    return kb / 1024


def cpu_s(pid: int | str = "self") -> float:
    """User + system CPU seconds the process has used (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class StageClock:
    """Wall time, requests and peak memory (client and server) per curation stage, cut at the progress
    messages ``curate()`` prints at each step."""

    def __init__(self, requests, server_pid: int | None):
        self.requests, self.server_pid = requests, server_pid
        self.stages: list[dict] = []
        self._start()

    def _start(self) -> None:
        self.t0, self.r0 = time.perf_counter(), self.requests()
        self.c0 = cpu_s()
        self.s0 = cpu_s(self.server_pid) if self.server_pid else 0.0
        peak_rss_mb()
        if self.server_pid:
            peak_rss_mb(self.server_pid)

    def cut(self) -> None:
        name = STAGES[len(self.stages)]
        self.stages.append({"stage": name, "wall_s": time.perf_counter() - self.t0, "requests": self.requests() - self.r0,
                            "client_cpu_s": cpu_s() - self.c0,
                            "server_cpu_s": cpu_s(self.server_pid) - self.s0 if self.server_pid else None,
                            "client_peak_mb": peak_rss_mb(),
                            "server_peak_mb": peak_rss_mb(self.server_pid) if self.server_pid else None})
        self._start()

    def progress(self, message: str) -> None:
        if message.startswith("step "):
            self.cut()


class TimedEndpoint:
    """The curation's endpoint, with the cost of every query it answers: CPU seconds of this process (the
    embedded store answers in it) plus, over HTTP, the server's CPU seconds during the request, and the rows
    it returned. Keyed by the query text, which queries.jsonl maps to its kind."""

    def __init__(self, endpoint, server_pid: int | None):
        self.endpoint, self.server_pid = endpoint, server_pid
        self.costs: dict[str, tuple[float, int]] = {}

    @property
    def id(self) -> str:
        return self.endpoint.id

    def select(self, query: str):
        rows: list = []
        self.stream(query, rows.append)
        return rows

    def stream(self, query: str, sink) -> int:
        """The endpoint's own streaming path (what the curation uses), timed: the rows pass to ``sink`` (the
        query runner's cache file) as they are parsed, so the time includes writing them there."""
        c0 = time.process_time()
        s0 = cpu_s(self.server_pid) if self.server_pid else 0.0
        rows = self.endpoint.stream(query, sink)
        spent = time.process_time() - c0 + (cpu_s(self.server_pid) - s0 if self.server_pid else 0.0)
        seconds, _ = self.costs.get(query, (0.0, 0))
        self.costs[query] = (seconds + spent, rows)
        return rows


def kind_of(logged_kind: str) -> str:
    """One kind per query builder: ``objects:P17`` and ``objects:P19`` are the same query shape."""
    return logged_kind.split(":")[0]


def cost_by_kind(queries_jsonl: Path, costs: dict[str, tuple[float, int]]) -> tuple[dict[str, dict], dict[str, list]]:
    """kind -> queries sent, rows returned and CPU seconds, from the run's query log and the timed endpoint;
    and kind -> the texts of its queries, in the order they were sent (for the replay)."""
    out: dict[str, dict] = {}
    texts: dict[str, list] = {}
    for line in queries_jsonl.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("status") != "ok" or row["text"] not in costs:
            continue
        seconds, rows = costs.pop(row["text"])
        kind = out.setdefault(kind_of(row["kind"]), {"queries": 0, "rows": 0, "cpu_s": 0.0})
        kind["queries"] += 1
        kind["rows"] += rows
        kind["cpu_s"] += seconds
        texts.setdefault(kind_of(row["kind"]), []).append(row["text"])
    return out, texts


REPLAY_MIN_S = 1.5  # a kind's replay is repeated until one round takes this long: a shorter one is noise (at 0.5 s
# the objects kind of one embedded 3x -> 30x run read 1.12 on its least round and 1.03 in the next run)
CONTROL_MIN_S = 1.5  # the control query is repeated until it takes this long, in every round at every scale


def timed_pass(endpoint, queries: list, server_pid: int | None, repeats: int) -> tuple[float, float]:
    """(CPU seconds of this process + the server's, wall seconds) of sending ``queries`` ``repeats`` times,
    divided by the repeats."""
    c0, w0 = time.process_time(), time.perf_counter()
    s0 = cpu_s(server_pid) if server_pid else 0.0
    for _ in range(repeats):
        for query in queries:
            endpoint.stream(query, _discard)
    cpu = time.process_time() - c0 + (cpu_s(server_pid) - s0 if server_pid else 0.0)
    return cpu / repeats, (time.perf_counter() - w0) / repeats


def repeats_for(first_s: float, least_s: float) -> int:
    return 1 if first_s >= least_s else min(200, math.ceil(least_s / max(first_s, 0.002)))


def replay(sides: list[dict], texts: dict[int, dict[str, list]], control: str, rounds: int) -> dict:
    """Each kind's queries sent again at every scale of ``sides`` (each {"scale", "endpoint", "pid"}), the
    scales' rounds interleaved (1x, 30x, then 30x, 1x, ...) so that a change of the box's load during the
    replay hits both ends alike, and the control query (a describe of fixed entities: the same answer at
    every scale) timed at each scale in every round. A kind whose queries take under ``REPLAY_MIN_S`` at a
    scale is sent that many times over (its cost: the round's time divided by the repeats), so a kind of a
    few milliseconds is judged on half a second of work. Returns, per kind and scale, the CPU and wall
    seconds of every round and the repeats, and the control's per round and scale. CPU is this process's
    plus the server's (read from /proc in clock ticks: hence whole rounds, not per-query minima)."""
    kinds = sorted({k for per in texts.values() for k in per})
    out: dict = {"kinds": {k: {} for k in kinds}, "control": {}}
    repeats: dict[tuple[str, int], int] = {}
    for side in sides:  # the calibration pass, not counted
        scale = side["scale"]
        first = timed_pass(side["endpoint"], [control], side["pid"], 1)[0]
        repeats[("control", scale)] = repeats_for(first, CONTROL_MIN_S)
        for kind in kinds:
            queries = texts[scale].get(kind, [])
            if queries:
                first = timed_pass(side["endpoint"], queries, side["pid"], 1)[0]
                repeats[(kind, scale)] = repeats_for(first, REPLAY_MIN_S)
    for r in range(rounds):
        order = sides if r % 2 == 0 else sides[::-1]
        for side in order:
            scale = side["scale"]
            cpu, wall = timed_pass(side["endpoint"], [control], side["pid"], repeats[("control", scale)])
            entry = out["control"].setdefault(str(scale), {"cpu_s": [], "wall_s": [], "repeats": repeats[("control", scale)]})
            entry["cpu_s"].append(cpu)
            entry["wall_s"].append(wall)
        for kind in kinds:
            for side in order:
                scale, queries = side["scale"], texts[side["scale"]].get(kind, [])
                if not queries:
                    continue
                cpu, wall = timed_pass(side["endpoint"], queries, side["pid"], repeats[(kind, scale)])
                entry = out["kinds"][kind].setdefault(str(scale), {"cpu_s": [], "wall_s": [], "repeats": repeats[(kind, scale)]})
                entry["cpu_s"].append(cpu)
                entry["wall_s"].append(wall)
    return out


def run_replay(spec_path: Path, rounds: int) -> dict:
    """The replay child: the stores (embedded) or the running servers of the scales in ``spec_path``, each
    kind's queries as the curations sent them, the rounds interleaved (``replay``)."""
    from factatlas.curate import sparql
    from factatlas.curate.endpoints import EmbeddedEndpoint, HttpSparqlEndpoint, load_store
    from factatlas.http import HttpPolicy

    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    sides, texts = [], {}
    for item in spec["sides"]:
        if item["url"] is None:
            sample = Path(item["sample"])
            endpoint = EmbeddedEndpoint(sample, store=load_store(sample))
        else:
            endpoint = HttpSparqlEndpoint(item["url"], policy=HttpPolicy(timeout_s=600))
        sides.append({"scale": item["scale"], "endpoint": endpoint, "pid": item["pid"]})
        texts[item["scale"]] = json.loads(Path(item["texts"]).read_text(encoding="utf-8"))
    control = sparql.describe_query(spec["control_entities"], LANGS)
    result = replay(sides, texts, control, rounds)
    result["loadavg"] = os.getloadavg()
    return result


def _discard(_row: dict) -> None:
    pass


def run_scale(scale: int, workdir: Path, endpoint_url: str | None, server_pid: int | None = None) -> dict:
    """One scale in this process: generate, load, curate, time one describe query; each kind's query texts
    are left in ``texts<scale>.json`` for the replay (``run_replay``, another process)."""
    from factatlas.curate import sparql
    from factatlas.curate.endpoints import EmbeddedEndpoint, load_store, run_on_store
    from factatlas.curate.engine import CurationConfig, curate

    sample = workdir / f"x{scale}" / "sample.nt"
    if not sample.exists():
        sample = write_sample(scale, workdir / f"x{scale}")
    store, load_s, store_mb = None, 0.0, 0.0
    if endpoint_url is None:
        t0 = time.process_time()
        store = load_store(sample)
        load_s = time.process_time() - t0
        store_mb = rss_mb()
        triples = len(store)
        endpoint = EmbeddedEndpoint(sample, store=store)
        requests = lambda: endpoint.requests  # noqa: E731
    else:  # the server holds the store; this process is only its client
        with open(sample, encoding="utf-8") as f:
            triples = sum(1 for _ in f)
    config = CurationConfig(pair=PAIR, langs=LANGS, sample=str(sample), endpoint=endpoint_url,
                            page_lengths=str(sample.with_name("page_lengths.tsv")))
    if endpoint_url is not None:
        from factatlas.curate.endpoints import HttpSparqlEndpoint
        from factatlas.http import HttpPolicy
        # a local server may take longer than a public one's 60 s on a big store: no deadline but a generous one
        endpoint = HttpSparqlEndpoint(endpoint_url, policy=HttpPolicy(timeout_s=600))
        requests = lambda: endpoint.stats.requests  # noqa: E731
    clock_ = StageClock(requests, server_pid)
    timed = TimedEndpoint(endpoint, server_pid)
    t0, w0 = time.process_time(), time.perf_counter()
    result = curate(config, workdir / f"run{scale}", endpoint=timed, progress=clock_.progress)
    clock_.cut()  # the outputs written
    server_cpu = sum(st["server_cpu_s"] or 0.0 for st in clock_.stages)
    curate_s, curate_wall = time.process_time() - t0, time.perf_counter() - w0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    entities = sorted((q for q in result.entities if original(q)), key=lambda q: int(q[1:]))[:DESCRIBE_ENTITIES]
    facts = sorted(json.dumps(_fact_key(f), sort_keys=True) for f in result.facts if original(f.subject))
    ents = sorted(json.dumps(_entity_key(e), sort_keys=True) for q, e in result.entities.items() if original(q))
    counts = {"facts": len(result.facts), "entities": len(result.entities), "drops": len(result.drops),
              "requests": result.queries["sent"], "by_kind": result.queries["by_kind"]}
    kinds, texts = cost_by_kind(workdir / f"run{scale}" / "curate" / "queries.jsonl", timed.costs)
    (workdir / f"texts{scale}.json").write_text(json.dumps(texts), encoding="utf-8")
    query = sparql.describe_query(entities, LANGS)
    times = []
    clock = time.process_time if endpoint_url is None else time.perf_counter  # a server's work is wall time
    for _ in range(5):
        t0 = clock()
        rows = run_on_store(store, query) if endpoint_url is None else endpoint.select(query)
        times.append(clock() - t0)
    return {"scale": scale, "triples": triples, "load_s": load_s, "curate_s": curate_s, "curate_wall_s": curate_wall,
            **counts, "describe_s": min(times), "describe_rows": len(rows), "peak_mb": peak_mb,
            "store_mb": store_mb, "stages": clock_.stages, "server_cpu_s": server_cpu,
            "total_cpu_s": curate_s + server_cpu, "kinds": kinds,
            "rows": sum(k["rows"] for k in kinds.values()), "loadavg": os.getloadavg()[0], "control_entities": entities,
            "shared_facts": facts, "shared_entities": ents}


def rss_mb() -> float:
    """The process's resident memory now (after loading the embedded store: what the store holds)."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1)) / 1024


def _fact_key(f) -> list:
    return [f.id, f.predicate, f.subject, [[o.qid, o.provenance.value, o.via] for o in f.objects], f.culture,
            list(f.countries), f.popularity, f.rank]


def _entity_key(e) -> list:
    return [e.qid, sorted(e.labels.items()), sorted((k, list(v)) for k, v in e.aliases.items()), e.gender.value,
            e.gender_source, list(e.classes), e.sitelinks]


def exponent(a: dict, b: dict, key: str) -> float:
    return math.log(b[key] / a[key]) / math.log(b["scale"] / a["scale"])


def exponent_vs_facts(a: dict, b: dict, key: str) -> float | None:
    """How ``key`` grows with the facts curated (not with the store): None when the facts did not grow."""
    if b["facts"] == a["facts"] or not a[key] or not b[key]:
        return None
    return math.log(b[key] / a[key]) / math.log(b["facts"] / a["facts"])


KIND_LIMIT = 1.1  # a query kind whose cost grows faster than this with the rows it returns is named
MIN_KIND_S = 0.05  # below this (at the larger scale) one pass's time is noise, not a trend


def growth_exponent(cost_a: float, cost_b: float, size_a: float, size_b: float,
                    min_s: float = MIN_KIND_S) -> float | None:
    """How a cost grows with a size: log(cost ratio) / log(size ratio); None when either does not move
    or the cost is too small to time (``min_s``: 0 for a replay, which repeats a cheap kind until it
    takes ``REPLAY_MIN_S``)."""
    if not cost_a or cost_b < min_s or not size_a or size_a == size_b:
        return None
    return math.log(cost_b / cost_a) / math.log(size_b / size_a)


def _fmt(e: float | None) -> str:
    return "  n/a" if e is None else f"{e:5.2f}"


def corrected(kind_s: list[float], control_s: list[float]) -> list[float]:
    """Each round's cost with the load of that round taken out: times (the control's least / the control's
    cost in the same round, at the same scale). The control's answer is fixed, so what moves it between
    rounds is the box, not the query."""
    least = min(control_s)
    return [k * least / c for k, c in zip(kind_s, control_s, strict=True)]


def kind_exponents(side: str, a: dict, b: dict, replayed: dict | None) -> list[str]:
    """Print each query kind's cost at both scales and its exponent against the rows it returned: one pass
    in the curation, and the interleaved replay (``replay``): least of the rounds in CPU (client + server,
    judged) and in wall time, the median round, and the least after the control's correction (``corrected``).
    Return the kinds whose replayed CPU grows faster than ``KIND_LIMIT`` with their rows."""
    above = []
    sa, sb = str(a["scale"]), str(b["scale"])
    for kind in sorted(set(a["kinds"]) | set(b["kinds"])):
        ka, kb = a["kinds"].get(kind), b["kinds"].get(kind)
        if not ka or not kb:
            print(f"[{side}]   kind {kind:<15} sent at one scale only")
            continue
        run_rows = growth_exponent(ka["cpu_s"], kb["cpu_s"], ka["rows"], kb["rows"])
        line = (f"[{side}]   kind {kind:<12} {ka['queries']:>4} -> {kb['queries']:>4} queries, {ka['rows']:>9,} -> "
                f"{kb['rows']:>9,} rows; in the run {ka['cpu_s']:7.3f} -> {kb['cpu_s']:8.3f} s CPU (exp {_fmt(run_rows)})")
        ra, rb = ((replayed or {}).get("kinds", {}).get(kind, {}).get(x) for x in (sa, sb))
        if not ra or not rb:
            print(line)
            continue

        def exp(cost_a: float, cost_b: float, rows_a: int = ka["rows"], rows_b: int = kb["rows"]) -> float | None:
            return growth_exponent(cost_a, cost_b, rows_a, rows_b, 0.0)

        cpu = exp(min(ra["cpu_s"]), min(rb["cpu_s"]))
        wall = exp(min(ra["wall_s"]), min(rb["wall_s"]))
        median = exp(statistics.median(ra["cpu_s"]), statistics.median(rb["cpu_s"]))
        ca, cb = replayed["control"][sa]["cpu_s"], replayed["control"][sb]["cpu_s"]
        fixed = exp(min(corrected(ra["cpu_s"], ca)), min(corrected(rb["cpu_s"], cb)))
        # per round, the kind's growth over the control's (whose answer does not grow): what the store's size
        # does to every lookup (an engine's storage) taken out, what is left is the query's own growth
        per_round = [e for x, y, cx, cy in zip(ra["cpu_s"], rb["cpu_s"], ca, cb, strict=True)
                     if (e := exp(cy / cx, y / x)) is not None]
        over_control = statistics.median(per_round) if per_round else None
        print(f"{line}; replayed x{ra['repeats']}/x{rb['repeats']}, {len(ra['cpu_s'])} rounds: CPU "
              f"{min(ra['cpu_s']):7.4f} -> {min(rb['cpu_s']):8.4f} s (exp {_fmt(cpu)}; median round {_fmt(median)}; "
              f"control-corrected {_fmt(fixed)}; over the control {_fmt(over_control)}), wall {min(ra['wall_s']):7.4f} -> {min(rb['wall_s']):8.4f} s "
              f"(exp {_fmt(wall)})")
        if cpu is not None and cpu > KIND_LIMIT:
            above.append(f"{kind} ({cpu:.2f})")
    return above


def control_line(side: str, replayed: dict, control_rows: int) -> str:
    """The control query per round at each scale (ms of CPU, then wall), its drift over the replay (the last
    round over the first: the load's change) and its cost at the largest scale over the smallest in the
    same round (what the store's size does to a query whose answer does not change)."""
    parts, scales = [], sorted(replayed["control"], key=int)
    for scale in scales:
        c = replayed["control"][scale]
        parts.append(f"{scale}x CPU {' '.join(f'{x * 1000:.1f}' for x in c['cpu_s'])} ms, wall "
                     f"{' '.join(f'{x * 1000:.1f}' for x in c['wall_s'])} ms, drift x{c['cpu_s'][-1] / c['cpu_s'][0]:.2f} "
                     f"CPU x{c['wall_s'][-1] / c['wall_s'][0]:.2f} wall")
    lo, hi = (replayed["control"][x] for x in (scales[0], scales[-1]))
    same_round = [b / a for a, b in zip(lo["cpu_s"], hi["cpu_s"], strict=True)]
    return (f"[{side}] control (describe {DESCRIBE_ENTITIES} fixed entities, {control_rows} rows at every scale), per "
            f"round: {'; '.join(parts)}; {scales[-1]}x / {scales[0]}x in the same round: "
            f"{' '.join(f'x{x:.2f}' for x in same_round)} CPU; load average at the replay's end "
            f"{' '.join(f'{x:.1f}' for x in replayed['loadavg'])}")


def _engine(name: str, sample: Path, workdir: Path, virtuoso_buffers: int):
    from factatlas.curate.localengines import OxigraphServer, VirtuosoServer

    if name == "virtuoso":
        return VirtuosoServer(sample, workdir / name, buffers=virtuoso_buffers)
    return OxigraphServer(sample, workdir / name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", default="1,10,30", help="comma-separated multiples of the bundled sample")
    ap.add_argument("--engines", default="embedded",
                    help="comma-separated: embedded (pyoxigraph in the process), oxigraph (`oxigraph "
                         "serve-read-only`, pip install oxigraph), virtuoso (Debian's virtuoso-opensource-7-bin)")
    ap.add_argument("--endpoint-server", action="store_true", help="same as adding oxigraph to --engines")
    ap.add_argument("--virtuoso-buffers", type=int, default=100000,
                    help="Virtuoso's NumberOfBuffers (8 KiB pages; 100000 = 800 MB, enough for the 100x store)")
    ap.add_argument("--json", type=Path, help="also write every raw measurement to this file")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of the replay: each kind's queries sent again this many times, the least kept "
                         "(0: no replay, for a run that measures memory only)")
    ap.add_argument("--no-matmul", action="store_true",
                    help="skip the matmul probe of benchmarks/quickstart_time.py (it needs torch)")
    ap.add_argument("--reprint", type=Path, metavar="FILE.json",
                    help="print the measurements a run saved with --json again (no run)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--replay", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if str(ROOT) not in sys.path:  # run as a script from anywhere: this tree's factatlas, not an installed one
        sys.path.insert(0, str(ROOT))
    if args.child:
        print(json.dumps(run_scale(args.child, Path(args.workdir), args.url, args.server_pid)))
        return 0
    if args.replay:
        print(json.dumps(run_replay(args.replay, args.rounds)))
        return 0
    if args.reprint:
        return reprint(args.reprint)
    scales = sorted({int(x) for x in args.scales.split(",")})
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if args.endpoint_server and "oxigraph" not in engines:
        engines.append("oxigraph")
    unknown_engines = sorted(set(engines) - {"embedded", "oxigraph", "virtuoso"})
    if unknown_engines:
        print(f"error: unknown engine(s) {', '.join(unknown_engines)}; expected embedded, oxigraph, virtuoso",
              file=sys.stderr)
        return 2
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ok, everything = True, {}
    started = time.perf_counter()
    print(f"machine: {os.cpu_count()} CPUs ({cpu_model()}), load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at start (a shared box: timings move with the load)"
          f"{'' if args.no_matmul else f'; matmul {matmul_gflops():.1f} GFLOP/s fp32 on one thread'}", flush=True)
    for side in engines:
        results = []
        with tempfile.TemporaryDirectory(prefix=f"factatlas-scale-{side}-") as tmp, contextlib.ExitStack() as kept:
            ends: dict[int, dict] = {}  # the smallest and largest scales, kept for the interleaved replay
            for scale in scales:
                with contextlib.ExitStack() as server:
                    url = pid = running = None
                    cmd = [sys.executable, __file__, "--child", str(scale), "--workdir", tmp]
                    sample = write_sample(scale, Path(tmp) / f"x{scale}")
                    if side != "embedded":
                        running = server.enter_context(_engine(side, sample, Path(tmp) / f"x{scale}",
                                                               args.virtuoso_buffers))
                        url, pid = running.url, running.pid
                        cmd += ["--url", url, "--server-pid", str(pid)]
                    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
                    if out.returncode != 0:
                        print(f"[{side}] {scale}x: the curation child exited {out.returncode}:\n{out.stderr[-3000:]}",
                              file=sys.stderr)
                        return 1
                    if args.rounds and scale in (scales[0], scales[-1]):
                        ends[scale] = {"scale": scale, "url": url, "pid": pid, "sample": str(sample),
                                       "texts": str(Path(tmp) / f"texts{scale}.json")}
                        kept.enter_context(server.pop_all())  # the server stays up until the replay is done
                r = json.loads(out.stdout.strip().splitlines()[-1])
                if running is not None:
                    r["load_s"], r["server_triples"] = running.load_s, running.triples
                results.append(r)
                print_scale(side, r)
            replayed = None
            if args.rounds and len(ends) > 1:
                spec = Path(tmp) / "replay.json"
                spec.write_text(json.dumps({"sides": [ends[x] for x in sorted(ends)],
                                            "control_entities": results[0]["control_entities"]}), encoding="utf-8")
                out = subprocess.run([sys.executable, __file__, "--replay", str(spec), "--rounds", str(args.rounds)],
                                     capture_output=True, text=True, env=env)
                if out.returncode != 0:
                    print(f"[{side}] the replay exited {out.returncode}:\n{out.stderr[-3000:]}", file=sys.stderr)
                    return 1
                replayed = json.loads(out.stdout.strip().splitlines()[-1])
        everything[side] = results
        base = results[0]
        for r in results[1:]:
            if r["shared_facts"] != base["shared_facts"] or r["shared_entities"] != base["shared_entities"]:
                print(f"[{side}] FAILED: the facts or entities about original subjects differ at {r['scale']}x "
                      f"from {base['scale']}x", file=sys.stderr)
                ok = False
        if not ok:
            return 1
        if replayed:
            print(control_line(side, replayed, base["describe_rows"]))
            results[-1]["replayed"] = replayed
        print(f"[{side}] original facts ({len(base['shared_facts'])}) and entities "
              f"({len(base['shared_entities'])}) identical at every scale")
        report(side, results, replayed)
    summary(everything)
    print(f"\nthe whole run: {time.perf_counter() - started:.0f} s wall; load average at the end "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        for results in everything.values():
            for r in results:
                r.pop("shared_facts"), r.pop("shared_entities")
        args.json.write_text(json.dumps(everything, indent=1))
    return 0


def report(side: str, results: list[dict], replayed: dict | None) -> None:
    """The exponents of one engine: the whole curation per step and over the whole span, each kind's."""
    base = results[0]
    # over HTTP the work is split: client CPU (parsing answers, the steps) + server CPU (the queries); CPU
    # rather than wall time, which on a shared box follows the load
    key = "curate_s" if side == "embedded" else "total_cpu_s"
    pairs = list(zip(results, results[1:], strict=False))
    if len(results) > 2:
        pairs.append((base, results[-1]))
    for a, b in pairs:
        print(f"[{side}] exponent {a['scale']}x -> {b['scale']}x: curate CPU vs rows "
              f"{_fmt(growth_exponent(a[key], b[key], a['rows'], b['rows']))} (rows {a['rows']:,} -> "
              f"{b['rows']:,}), vs facts {_fmt(growth_exponent(a[key], b[key], a['facts'], b['facts']))} (facts "
              f"{a['facts']} -> {b['facts']}), vs store size {exponent(a, b, key):.2f}; requests vs facts "
              f"{_fmt(exponent_vs_facts(a, b, 'requests'))}; describe query {exponent(a, b, 'describe_s'):.2f}")
        worst = kind_exponents(side, a, b, replayed if (a, b) == (base, results[-1]) else None)
        if (a, b) != (base, results[-1]):
            # a 3x step turns a 10 % timing error into +-0.09 of exponent, the whole span into +-0.03
            print(f"[{side}] (a step of {b['scale'] // a['scale']}x: printed, judged only over the whole span)")
        elif not (replayed or {}).get("kinds"):
            # kinds are judged on the replay only: one pass in the curation is too noisy to name a kind
            print(f"[{side}] query kinds not judged ({a['scale']}x -> {b['scale']}x): no replay (--rounds 0)")
        elif worst:
            print(f"[{side}] query kinds above {KIND_LIMIT} ({a['scale']}x -> {b['scale']}x): {', '.join(worst)}")
        else:
            print(f"[{side}] every query kind at most {KIND_LIMIT} ({a['scale']}x -> {b['scale']}x)")


def reprint(path: Path) -> int:
    """The closing lines of a run again, from the measurements it saved with ``--json``."""
    everything = json.loads(path.read_text(encoding="utf-8"))
    for side, results in everything.items():
        replayed = results[-1].get("replayed")
        for r in results:
            print_scale(side, r)
        if replayed:
            print(control_line(side, replayed, results[0]["describe_rows"]))
        report(side, results, replayed)
    summary(everything)
    return 0


def print_scale(side: str, r: dict) -> None:
    """One scale's curation: its size, CPU, rows and peak memory, then each stage's."""
    load = f"load {r['load_s']:6.1f} s {'CPU' if side == 'embedded' else 'wall (start + load)'}"
    held = f" (the store alone {r['store_mb']:,.0f} MB)" if side == "embedded" else ""
    print(f"[{side}] {r['scale']:>4}x: {r['triples']:>9,} triples; {load}; curate {r['curate_s']:7.2f} s client CPU "
          f"+ {r['server_cpu_s']:.2f} s server CPU ({r['curate_wall_s']:.1f} s wall), {r['facts']} facts, "
          f"{r['entities']} entities, {r['requests']} requests, {r['rows']:,} rows; describe 200 entities "
          f"{r['describe_s'] * 1000:7.1f} ms ({r['describe_rows']} rows); client peak RSS {r['peak_mb']:,.0f} MB{held}; "
          f"load average {r['loadavg']:.1f}", flush=True)
    for st in r["stages"]:
        server = (f"; server {st['server_cpu_s']:7.2f} s CPU, peak {st['server_peak_mb']:,.0f} MB"
                  if st["server_peak_mb"] else "")
        print(f"[{side}] {r['scale']:>4}x   {st['stage']:<13} {st['wall_s']:8.2f} s wall, {st['requests']:>4} "
              f"requests; client {st['client_cpu_s']:6.2f} s CPU, peak {st['client_peak_mb']:,.0f} MB{server}",
              flush=True)


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def matmul_gflops() -> float:
    """benchmarks/quickstart_time.py's probe: one fp32 2048-cubed product on one thread, best of 5."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from quickstart_time import matmul_rate

    return matmul_rate(sys.executable)


def summary(everything: dict[str, list[dict]]) -> None:
    """One markdown table of every engine and scale (docs/curate.md quotes it as printed)."""
    print("\n| engine | scale | triples | candidate rows | facts | client CPU | server CPU | client peak "
          "| of which the store | candidates stage peak | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for side, results in everything.items():
        for r in results:
            stage = next((st for st in r["stages"] if st["stage"] == "candidates"), None)
            store = f"{r['store_mb']:,.0f} MB" if side == "embedded" else "-"
            print(f"| {side} | {r['scale']}x | {r['triples']:,} | {r['kinds'].get('candidates', {}).get('rows', 0):,} "
                  f"| {r['facts']:,} | {r['curate_s']:.2f} s | {r['server_cpu_s']:.2f} s | {r['peak_mb']:,.0f} MB "
                  f"| {store} | {stage['client_peak_mb'] if stage else 0:,.0f} MB | {r['loadavg']:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
