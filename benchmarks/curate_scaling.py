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
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import resource
import shutil
import socket
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


def run_scale(scale: int, workdir: Path, endpoint_url: str | None) -> dict:
    """One scale in this process: generate, load, curate, time one describe query."""
    from factatlas.curate import sparql
    from factatlas.curate.endpoints import EmbeddedEndpoint, load_store, run_on_store
    from factatlas.curate.engine import CurationConfig, curate

    sample = write_sample(scale, workdir / f"x{scale}")
    store, load_s = None, 0.0
    if endpoint_url is None:
        t0 = time.process_time()
        store = load_store(sample)
        load_s = time.process_time() - t0
        triples = len(store)
        endpoint = EmbeddedEndpoint(sample, store=store)
    else:  # the server holds the store; this process is only its client
        with open(sample, encoding="utf-8") as f:
            triples = sum(1 for _ in f)
    config = CurationConfig(pair=PAIR, langs=LANGS, sample=str(sample), endpoint=endpoint_url,
                            page_lengths=str(sample.with_name("page_lengths.tsv")))
    if endpoint_url is not None:
        from factatlas.curate.endpoints import HttpSparqlEndpoint
        endpoint = HttpSparqlEndpoint(endpoint_url)
    t0, w0 = time.process_time(), time.perf_counter()
    result = curate(config, workdir / f"run{scale}", endpoint=endpoint)
    curate_s, curate_wall = time.process_time() - t0, time.perf_counter() - w0
    entities = sorted((q for q in result.entities if original(q)), key=lambda q: int(q[1:]))[:DESCRIBE_ENTITIES]
    query = sparql.describe_query(entities, LANGS)
    times = []
    clock = time.process_time if endpoint_url is None else time.perf_counter  # a server's work is wall time
    for _ in range(5):
        t0 = clock()
        rows = run_on_store(store, query) if endpoint_url is None else endpoint.select(query)
        times.append(clock() - t0)
    facts = sorted(json.dumps(_fact_key(f), sort_keys=True) for f in result.facts if original(f.subject))
    ents = sorted(json.dumps(_entity_key(e), sort_keys=True) for q, e in result.entities.items() if original(q))
    return {"scale": scale, "triples": triples, "load_s": load_s, "curate_s": curate_s, "curate_wall_s": curate_wall,
            "facts": len(result.facts), "describe_s": min(times), "describe_rows": len(rows),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "shared_facts": facts, "shared_entities": ents}


def _fact_key(f) -> list:
    return [f.id, f.predicate, f.subject, [[o.qid, o.provenance.value, o.via] for o in f.objects], f.culture,
            list(f.countries), f.popularity, f.rank]


def _entity_key(e) -> list:
    return [e.qid, sorted(e.labels.items()), sorted((k, list(v)) for k, v in e.aliases.items()), e.gender.value,
            e.gender_source, list(e.classes), e.sitelinks]


def exponent(a: dict, b: dict, key: str) -> float:
    return math.log(b[key] / a[key]) / math.log(b["scale"] / a["scale"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", default="1,10,30", help="comma-separated multiples of the bundled sample")
    ap.add_argument("--endpoint-server", action="store_true",
                    help="also curate over HTTP against `oxigraph serve` (pip install oxigraph) at each scale")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_scale(args.child, Path(args.workdir), args.url)))
        return 0
    scales = sorted({int(x) for x in args.scales.split(",")})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sides = [("embedded", None)]
    if args.endpoint_server:
        if shutil.which("oxigraph") is None:
            print("no `oxigraph` server binary: pip install 'oxigraph==0.5.13'", file=sys.stderr)
            return 2
        sides.append(("oxigraph-server", "server"))
    ok = True
    for side, mode in sides:
        results = []
        for scale in scales:
            with tempfile.TemporaryDirectory(prefix=f"factatlas-scale{scale}-") as tmp:
                url, server = None, None
                if mode == "server":
                    sample = write_sample(scale, Path(tmp) / f"x{scale}")
                    subprocess.run(["oxigraph", "load", "--location", f"{tmp}/db", "--file", str(sample)],
                                   check=True, capture_output=True)
                    port = free_port()
                    server = subprocess.Popen(["oxigraph", "serve-read-only", "--location", f"{tmp}/db",
                                               "--bind", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL)
                    url = f"http://127.0.0.1:{port}/query"
                    _wait_for(port)
                try:
                    cmd = [sys.executable, __file__, "--child", str(scale), "--workdir", tmp]
                    if url:
                        cmd += ["--url", url]
                    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
                finally:
                    if server is not None:
                        server.terminate()
                        server.wait()
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results.append(r)
            print(f"[{side}] {scale:>4}x: {r['triples']:>9,} triples; load {r['load_s']:6.1f} s CPU; curate "
                  f"{r['curate_s']:7.2f} s CPU ({r['curate_wall_s']:.1f} s wall), {r['facts']} facts; describe "
                  f"200 entities {r['describe_s'] * 1000:7.1f} ms ({r['describe_rows']} rows); "
                  f"peak RSS {r['peak_mb']:,.0f} MB", flush=True)
        base = results[0]
        for r in results[1:]:
            if r["shared_facts"] != base["shared_facts"] or r["shared_entities"] != base["shared_entities"]:
                print(f"[{side}] FAILED: the facts or entities about original subjects differ at {r['scale']}x "
                      f"from {base['scale']}x", file=sys.stderr)
                ok = False
        if not ok:
            return 1
        print(f"[{side}] original facts ({len(base['shared_facts'])}) and entities "
              f"({len(base['shared_entities'])}) identical at every scale")
        # over HTTP the work is the server's: its wall time counts (the client's CPU only parses answers)
        key = "curate_s" if mode is None else "curate_wall_s"
        for a, b in zip(results, results[1:], strict=False):
            print(f"[{side}] exponent {a['scale']}x -> {b['scale']}x: curate {exponent(a, b, key):.2f}, "
                  f"describe query {exponent(a, b, 'describe_s'):.2f}")
        if len(results) > 2:
            print(f"[{side}] exponent {base['scale']}x -> {results[-1]['scale']}x: curate "
                  f"{exponent(base, results[-1], key):.2f} (goal <= 1.1), describe query "
                  f"{exponent(base, results[-1], 'describe_s'):.2f} (goal ~0: fixed input)")
    return 0


def _wait_for(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"oxigraph server on 127.0.0.1:{port} did not start within {seconds} s")


if __name__ == "__main__":
    sys.exit(main())
