"""Reading in proportion to the work (issue 41 item 3): every command on a 1-copy and an N-copy benchmark.

Makes an N-copy benchmark from a real build (the quickstart's, or ``--from DIR``): copy 0 is the build itself,
copy c >= 1 repeats every fact under a new subject QID (``Q<c * 10^9 + n>``) and so a new fact id, with the
same labels, texts, candidates, golds and splits (in a 'predicate' candidate mode a copy's row gets the
predicate's whole list, since its new subject is no candidate: ``subject_restorer``); its subjects get entity
and label rows of their own. The
result is a valid benchmark (``validate-benchmark`` accepts it: the first command timed; a failed command is
flagged in the table) whose rows,
facts and entities are N times the build's. It is written row group by row group, sorted by prompt_id as
the one writer sorts, so making a million prompts never holds them in memory.

Then each command runs as a child process (``python3 -m factatlas ...``, this tree or ``--against REF``
checked out into a temporary git worktree) on the 1-copy and the N-copy benchmark, each side on its own
copies of both, and the script prints, per command, its peak memory (the larger of ``wait4``'s ru_maxrss of the
command and its process tree's summed PSS, sampled every 20 ms: the report's metrics and subword counts run in
forked children; measured by a small launcher process so that this script's own size is not inherited through
fork), CPU (user + system) and wall time, with the ratios big/small beside the ratio of the
rows the command needs (what a shard or a language selects; every row for the rest):

    validate-benchmark B
    probe B --model TINY --shard 0/S                  (S = --shards, default N: the big shard is one copy)
    probe B --model TINY --langs en --out-name en     (--skip-langs leaves it out)
    report B --model en --bootstrap 100               (after the --langs run)
    publish B --repo org/big --version 1.0.0 --target git:... --dry-run

TINY is a tiny BERT fine-tuned once on the 1-copy benchmark before any command is timed (the same model
folder for every run). Targets: peak within 1.5x of the small run; CPU in proportion to the rows needed.

    python benchmarks/big_benchmark.py --copies 20 --against c2eb5d7
    python benchmarks/big_benchmark.py --copies 94 --skip-langs      (1,010,688 prompts from the quickstart)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUBJECT_STRIDE = 10**9  # copy c's subject Qn is Q(c * 10^9 + n): above every Wikidata QID in use
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(ROOT))  # this tree's factatlas (the script imports it to read the build), not an installed one
from quickstart_time import MATMUL_CODE  # noqa: E402  (the one matmul probe of the benchmarks)

ROWS_PER_GROUP = 2048  # the one writer's row groups (builder/benchmark.py PROMPT_ROWS_PER_GROUP)



# ---- the N-copy benchmark ------------------------------------------------------------------------

def copied_qid(qid: str, copy: int) -> str:
    return qid if copy == 0 else f"Q{copy * SUBJECT_STRIDE + int(qid[1:])}"


def copied_fact_id(fact_id: str, subject: str, copy: int) -> str:
    head, _, tail = fact_id.rpartition(":")
    if tail != subject:
        raise SystemExit(f"error: fact id {fact_id!r} does not end with its subject {subject!r}; "
                         "pass a curated build (culture:predicate:subject ids)")
    return f"{head}:{copied_qid(subject, copy)}"


def make_copies(src: Path, out: Path, copies: int) -> dict[str, int]:
    """Write the N-copy benchmark of the benchmark directory ``src`` into ``out`` (a benchmark directory)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    prompts = pq.read_table(src / "prompts.parquet")
    schema = prompts.schema
    # the file is sorted by prompt_id and every fact id is culture:predicate:subject, so all rows under one
    # "culture:predicate:" prefix are contiguous in the N-copy file too: copy one prefix group at a time
    keys = [f.rpartition(":")[0] + ":" for f in prompts.column("fact_id").to_pylist()]
    prefixes = sorted(set(keys))
    meta = json.loads((src / "benchmark.json").read_text("utf-8"))
    restore = subject_restorer(prompts) if meta.get("candidate_mode") == "predicate" else None
    rows_written = 0
    with pq.ParquetWriter(out / "prompts.parquet", schema, compression="zstd", write_statistics=False,
                          store_schema=True) as writer:
        pending: list[pa.Table] = []
        pending_rows = 0
        for prefix in prefixes:
            group = prompts.filter(pa.array([k == prefix for k in keys]))
            fact_ids, subjects = group.column("fact_id").to_pylist(), group.column("subject_qid").to_pylist()
            lang_tpl = [pid[len(fid):] for pid, fid in zip(group.column("prompt_id").to_pylist(), fact_ids,
                                                          strict=True)]
            parts = []
            for c in range(copies):
                new_facts = [copied_fact_id(f, s, c) for f, s in zip(fact_ids, subjects, strict=True)]
                t = group.set_column(schema.get_field_index("fact_id"), "fact_id", pa.array(new_facts, pa.string()))
                t = t.set_column(schema.get_field_index("prompt_id"), "prompt_id",
                                 pa.array([f + rest for f, rest in zip(new_facts, lang_tpl, strict=True)], pa.string()))
                t = t.set_column(schema.get_field_index("subject_qid"), "subject_qid",
                                 pa.array([copied_qid(s, c) for s in subjects], pa.string()))
                if c and restore is not None:
                    t = restore(t, group)
                parts.append(t)
            block = pa.concat_tables(parts)
            block = block.take(pc.sort_indices(block, [("prompt_id", "ascending")]))
            pending.append(block)
            pending_rows += block.num_rows
            while pending_rows >= ROWS_PER_GROUP:
                merged = pa.concat_tables(pending).combine_chunks()
                writer.write_table(merged.slice(0, ROWS_PER_GROUP))
                rest = merged.slice(ROWS_PER_GROUP)
                pending, pending_rows = [rest], rest.num_rows
                rows_written += ROWS_PER_GROUP
        if pending_rows:
            writer.write_table(pa.concat_tables(pending).combine_chunks())
            rows_written += pending_rows

    facts = pq.read_table(src / "facts.parquet")
    fact_parts = []
    for c in range(copies):
        fids, subs = facts.column("fact_id").to_pylist(), facts.column("subject_qid").to_pylist()
        t = facts.set_column(0, "fact_id", pa.array([copied_fact_id(f, s, c) for f, s in zip(fids, subs, strict=True)],
                                                     pa.string()))
        t = t.set_column(facts.schema.get_field_index("subject_qid"), "subject_qid",
                         pa.array([copied_qid(s, c) for s in subs], pa.string()))
        fact_parts.append(t)
    all_facts = pa.concat_tables(fact_parts)
    all_facts = all_facts.take(pc.sort_indices(all_facts, [("fact_id", "ascending")]))
    pq.write_table(all_facts, out / "facts.parquet", compression="zstd", write_statistics=False, store_schema=True)

    subjects = set(facts.column("subject_qid").to_pylist())
    for name in ("entities.parquet", "labels.parquet"):
        table = pq.read_table(src / name)
        is_subject = pa.array([q in subjects for q in table.column("qid").to_pylist()])
        extra = []
        for c in range(1, copies):
            t = table.filter(is_subject)
            extra.append(t.set_column(0, "qid", pa.array([copied_qid(q, c) for q in t.column("qid").to_pylist()],
                                                          pa.string())))
        whole = pa.concat_tables([table, *extra])
        order = [("qid", "ascending")] + ([("lang", "ascending")] if name == "labels.parquet" else [])
        whole = whole.take(pc.sort_indices(whole, order))
        pq.write_table(whole, out / name, compression="zstd", write_statistics=False, store_schema=True)

    for name in ("candidates.parquet", "dropped.parquet", "stats.json"):
        shutil.copyfile(src / name, out / name)
    if (src / "templates").is_dir():
        shutil.copytree(src / "templates", out / "templates", dirs_exist_ok=True)
    meta["counts"] = {**meta.get("counts", {}), "facts": all_facts.num_rows, "prompts": rows_written}
    meta["splits"]["counts"] = {k: v * copies for k, v in meta["splits"].get("counts", {}).items()}
    (out / "benchmark.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1, sort_keys=True), "utf-8")
    return {"prompts": rows_written, "facts": all_facts.num_rows}


def subject_restorer(prompts):
    """For a 'predicate' candidate mode: a function giving a copy's rows their predicate's whole candidate list.

    Each fact's list is the predicate's list less its own subject where the subject is one of the predicate's
    candidates (a country does not border itself). A copy's subject is a new QID, no candidate, so its list is
    the whole list: the original subject put back in its place, with the form other prompts of the same
    language and template give it."""
    import pyarrow as pa

    rows = prompts.select(["predicate", "lang", "template_id", "subject_qid", "candidate_qids",
                           "candidate_forms"]).to_pylist()
    full: dict[str, list[str]] = {}
    forms: dict[tuple[str, str, str, str], str] = {}
    for r in rows:
        order = full.setdefault(r["predicate"], list(r["candidate_qids"]))
        have = set(order)
        for i, q in enumerate(r["candidate_qids"]):  # merge: a QID missing so far goes after its predecessor
            if q not in have:
                order.insert(order.index(r["candidate_qids"][i - 1]) + 1 if i else 0, q)
                have.add(q)
            forms.setdefault((r["predicate"], r["lang"], r["template_id"], q), r["candidate_forms"][i])

    def restore(copy, original):
        qids, cforms = [], []
        for r in original.select(["predicate", "lang", "template_id", "subject_qid", "candidate_qids",
                                  "candidate_forms"]).to_pylist():
            whole = full[r["predicate"]]
            if r["subject_qid"] in whole and r["subject_qid"] not in r["candidate_qids"]:
                key = (r["predicate"], r["lang"], r["template_id"])
                qids.append(whole)
                cforms.append([forms[(*key, q)] for q in whole])
            else:
                qids.append(r["candidate_qids"])
                cforms.append(r["candidate_forms"])
        schema = copy.schema
        copy = copy.set_column(schema.get_field_index("candidate_qids"), schema.field("candidate_qids"),
                               pa.array(qids, schema.field("candidate_qids").type))
        return copy.set_column(schema.get_field_index("candidate_forms"), schema.field("candidate_forms"),
                               pa.array(cforms, schema.field("candidate_forms").type))

    return restore


# ---- timing the commands ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Measure:
    peak_mb: float
    cpu: float
    wall: float
    rc: int
    tail: str


# Linux keeps the larger of a process's peak RSS before and after exec: a child forked from this script
# (hundreds of MB after writing the copies) would report at least this script's size. The launcher, a
# small Python (tree_peak.py's measure), starts the command and reports the peak of its own child only: its
# largest process (wait4's ru_maxrss) and, since the report forks children of its own (factatlas.forked), the
# peak of the process tree's summed proportional set size (shared pages counted once), sampled every 20 ms.
LAUNCHER = f"""
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from tree_peak import measure
tree_mb, largest_mb, cpu, rc = measure([sys.executable, "-m", "factatlas", *sys.argv[2:]], 0.02)
with open(sys.argv[1], "w") as f:
    f.write(f"{{round(largest_mb * 1024)}} {{cpu}} {{round(tree_mb * 1024)}}")
sys.exit(rc)
"""


def run_child(argv: list[str], tree: Path, cwd: Path) -> Measure:
    env = dict(os.environ, PYTHONPATH=str(tree), FACTATLAS_TORCH_THREADS="1")
    with tempfile.TemporaryFile() as log, tempfile.NamedTemporaryFile("r") as usage_file:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", LAUNCHER, usage_file.name, *argv], cwd=cwd, env=env,
                              stdout=log, stderr=log)
        wall = time.perf_counter() - t0
        peak_kb, cpu, tree_kb = usage_file.read().split()
        log.seek(0)
        tail = log.read().decode("utf-8", "replace")[-1500:]
    # the larger: a short peak between two samples is in ru_maxrss, children working beside it in the tree's
    return Measure(max(int(peak_kb), int(tree_kb)) / 1024, float(cpu), wall, proc.returncode, tail)


def add_ref_tree(ref: str, tree: Path) -> Path:
    """``ref`` checked out at ``tree`` as a detached git worktree of this repository (``remove_ref_tree``
    takes it away)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True,
                   capture_output=True)
    return tree


def remove_ref_tree(tree: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)


def run_launched(launcher: str, argv: list[str], tree: Path, cwd: Path, env: dict[str, str]) -> list[str]:
    """The fields ``launcher`` (run as ``python -c LAUNCHER USAGE_FILE *argv``) wrote to its usage file, for
    ``factatlas *argv`` from ``tree``; exits with the command's last output when it fails."""
    with tempfile.TemporaryFile() as log, tempfile.NamedTemporaryFile("r") as usage:
        proc = subprocess.run([sys.executable, "-c", launcher, usage.name, *argv], cwd=cwd, env=env,
                              stdout=log, stderr=log)
        if proc.returncode != 0:
            log.seek(0)
            raise SystemExit(f"error: factatlas {' '.join(argv)} ({tree}) exited {proc.returncode}:\n"
                             + log.read().decode("utf-8", "replace")[-2000:])
        return usage.read().split()


def selected_rows(bench: Path, langs: tuple[str, ...] | None, shard: tuple[int, int] | None) -> int:
    """Rows a --langs/--shard selection keeps (the stable shard rule of the probe, re-stated here so the
    count does not depend on either tree)."""
    import hashlib

    import pyarrow.parquet as pq

    if not langs and not shard:
        return pq.ParquetFile(bench / "prompts.parquet").metadata.num_rows
    pf = pq.ParquetFile(bench / "prompts.parquet")
    n = 0
    for g in range(pf.num_row_groups):
        t = pf.read_row_group(g, columns=["prompt_id", "lang"])
        for pid, lang in zip(t.column("prompt_id").to_pylist(), t.column("lang").to_pylist(), strict=True):
            if langs and lang not in langs:
                continue
            if shard and int.from_bytes(hashlib.sha256(pid.encode()).digest()[:8], "big") % shard[1] != shard[0]:
                continue
            n += 1
    return n


def commands(bench: Path, tiny: Path, shards: int, skip_langs: bool, work: Path, tag: str):
    """(name, argv, rows selector) in the order they run; report reads the --langs probe."""
    yield "validate-benchmark", ["validate-benchmark", str(bench)], (None, None)
    yield f"probe --shard 0/{shards}", ["probe", str(bench), "--model", str(tiny), "--shard", f"0/{shards}",
                                        "--out-name", "shard"], (None, (0, shards))
    if not skip_langs:
        yield "probe --langs en", ["probe", str(bench), "--model", str(tiny), "--langs", "en", "--out-name", "en"], \
            (("en",), None)
        yield "report (of the --langs run)", ["report", str(bench.parent), "--model", "en", "--bootstrap", "100"], \
            (("en",), None)
    yield "publish --dry-run", ["publish", str(bench), "--repo", "org/big", "--version", "1.0.0", "--target",
                                f"git:{work / f'release-{tag}.git'}", "--dry-run"], (None, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--shards", type=int, default=None, help="probe --shard 0/S (default: --copies)")
    ap.add_argument("--from", dest="source", type=Path, help="a built run or benchmark directory (default: run "
                                                             "the quickstart's curate and build into --work)")
    ap.add_argument("--work", type=Path, help="folder for the benchmarks (default: a temporary one, removed)")
    ap.add_argument("--against", help="also run these commands with this git ref (a temporary worktree)")
    ap.add_argument("--skip-ours", action="store_true", help="with --against: run only REF (measure it once)")
    ap.add_argument("--skip-langs", action="store_true", help="leave out probe --langs en and the report")
    ap.add_argument("--only", help="comma-separated command names to run (prefixes: validate,probe,report,publish)")
    args = ap.parse_args(argv)
    shards = args.shards or args.copies
    work = args.work or Path(tempfile.mkdtemp(prefix="big-benchmark-"))
    work.mkdir(parents=True, exist_ok=True)
    rates = [matmul_rate()]

    source = args.source
    if source is None:
        source = work / "quickstart"
        if not (source / "build" / "benchmark.json").is_file():
            run_checked(["quickstart", str(source), "--skip-probe"], ROOT, work)
    from factatlas.benchmark import locate

    src = locate(source).benchmark
    small, big = work / "small" / "build", work / "big" / "build"
    if not (small / "benchmark.json").is_file():
        make_copies(src, small, 1)
    if not (big / "benchmark.json").is_file():
        t0 = time.process_time()
        made = make_copies(src, big, args.copies)
        print(f"made {big}: {made['prompts']:,} prompts, {made['facts']:,} facts ({args.copies} copies) in "
              f"{time.process_time() - t0:.1f} s CPU", flush=True)
    tiny = work / "tiny-bert"
    if not (tiny / "config.json").is_file():
        run_checked(["probe", str(small), "--model", "tiny", "--langs", "en", "--shard", "0/50", "--out-name",
                     "tiny-build", "--no-template-only"], ROOT, work)
        shutil.copytree(work / "small" / "probe" / "_models" / "tiny-bert", tiny)
        shutil.rmtree(work / "small" / "probe")

    sides = [] if args.skip_ours and args.against else [("this tree", ROOT)]
    worktree = None
    if args.against:
        worktree = Path(tempfile.mkdtemp(prefix="big-benchmark-ref-")) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), args.against],
                       check=True, capture_output=True)
        sides.insert(0, (args.against, worktree))
    only = tuple(x.strip() for x in args.only.split(",")) if args.only else None
    rows_cache: dict[tuple, int] = {}
    results = []
    try:
        for side, tree in sides:
            for size, bench_src in (("small", small), ("big", big)):
                run = work / f"{side.replace(' ', '-')}-{size}"
                shutil.rmtree(run, ignore_errors=True)
                shutil.copytree(bench_src, run / "build")
                for name, cmd, (langs, shard) in commands(run / "build", tiny, shards, args.skip_langs, run, size):
                    if only and not name.startswith(only):
                        continue
                    m = run_child(cmd, tree, work)
                    key = (size, langs, shard)
                    if key not in rows_cache:
                        rows_cache[key] = selected_rows(bench_src, langs, shard)
                    results.append((side, name, size, m, rows_cache[key]))
                    status = "" if m.rc == 0 else f"  EXIT {m.rc}: {m.tail[-600:]}"
                    print(f"{side:>10} {size:5} {name:30} peak {m.peak_mb:8.1f} MB  cpu {m.cpu:8.1f} s  wall "
                          f"{m.wall:8.1f} s  rows {rows_cache[key]:>9,}{status}", flush=True)
    finally:
        if worktree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], capture_output=True)
            shutil.rmtree(worktree.parent, ignore_errors=True)
    rates.append(matmul_rate())
    print_table(results, args.copies)
    print(f"MATMUL fp32 2048^3, one thread: {min(rates):.1f}-{max(rates):.1f} GFLOP/s (before and after the runs); "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(m.rc == 0 for *_, m, _ in results) else 1


def print_table(results, copies: int) -> None:
    print("\n| side | command | peak MB small -> big (ratio) | CPU s small -> big (ratio) | rows small -> big (ratio) "
          "| wall s small -> big |")
    print("| --- | --- | --- | --- | --- | --- |")
    by = {(side, name, size): (m, rows) for side, name, size, m, rows in results}
    for side, name in dict.fromkeys((s, n) for s, n, *_ in results):
        if (side, name, "small") not in by or (side, name, "big") not in by:
            continue
        (ms, rs), (mb, rb) = by[(side, name, "small")], by[(side, name, "big")]
        flag = "" if ms.rc == 0 and mb.rc == 0 else " (FAILED)"
        print(f"| {side} | {name}{flag} | {ms.peak_mb:.0f} -> {mb.peak_mb:.0f} ({mb.peak_mb / ms.peak_mb:.2f}x) | "
              f"{ms.cpu:.1f} -> {mb.cpu:.1f} ({mb.cpu / max(ms.cpu, 1e-9):.1f}x) | {rs:,} -> {rb:,} "
              f"({rb / max(rs, 1):.1f}x) | {ms.wall:.0f} -> {mb.wall:.0f} |")
    print(f"(big = {copies} copies of small)")


def run_checked(argv: list[str], tree: Path, cwd: Path) -> None:
    m = run_child(argv, tree, cwd)
    if m.rc != 0:
        raise SystemExit(f"error: factatlas {' '.join(argv)} exited {m.rc}:\n{m.tail}")


def matmul_rate() -> float:
    try:
        out = subprocess.run([sys.executable, "-c", MATMUL_CODE], capture_output=True, text=True, check=True)
    except (subprocess.CalledProcessError, OSError):
        return float("nan")
    return float(out.stdout.strip())


if __name__ == "__main__":
    sys.exit(main())
