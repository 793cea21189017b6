"""The dataset card (README.md): YAML metadata generated from the data, and a body documenting it.

The YAML comes from ``huggingface_hub.DatasetCardData`` (what the Hub validates); the body is plain
Markdown built from the benchmark's own numbers, so the card can never disagree with the files.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from factatlas.entropy import predicate_entropy
from factatlas.records import Prompt
from factatlas.release_input import ReleaseInput

from .source import table_from_bytes

HUB_TARGET = "hub"  # ReleaseOptions.target for the Hub; git targets are "git:PATH_OR_URL"

SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                   (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))
TAGS = ("wikidata", "knowledge-probing", "factual-knowledge", "cultural-diversity", "factatlas")
UPSTREAM_LICENSES = {"curated": "cc0-1.0"}  # Wikidata statements and labels are CC0
DLAMA_BIBTEX = """@inproceedings{keleg-magdy-2023-dlama,
  title = {{DLAMA}: A Framework for Curating Culturally Diverse Facts for Probing the Knowledge of Pretrained Language Models},
  author = {Keleg, Amr and Magdy, Walid},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2023},
  year = {2023}
}"""


@dataclass(frozen=True)
class ConfigEntry:
    """One dataset config: its name, the language it holds (None = all) and split -> data file paths."""

    name: str
    lang: str | None
    splits: tuple[tuple[str, tuple[str, ...], int], ...]  # (split, paths, rows)

    @property
    def rows(self) -> int:
        return sum(n for _, _, n in self.splits)


@dataclass(frozen=True)
class PredicateStats:
    culture: str
    predicate: str
    facts: int
    answers: int  # distinct objects stated directly
    entropy_bits: float  # DLAMA entropy (factatlas.entropy.predicate_entropy), the value stats.json holds
    majority_share: float  # share of facts whose gold set holds the most frequent object


def size_category(n: int) -> str:
    for limit, name in SIZE_CATEGORIES:
        if n < limit:
            return name
    return "n>100M"


def majority_share(object_sets: Sequence[Sequence[str]]) -> float:
    """P@1 of always answering the object valid for most facts (ties: any of them, the share is the same):
    the floor a model must beat to show knowledge."""
    if not object_sets:
        return 0.0
    hits: Counter[str] = Counter(o for objs in object_sets for o in set(objs))
    return round(max(hits.values()) / len(object_sets), 3)


def predicate_stats(src: ReleaseInput) -> list[PredicateStats]:
    """Per culture and predicate: DLAMA entropy over every valid object (the one definition that
    stats.json and metrics.json use), distinct direct answers, and the majority baseline."""
    facts = src.facts  # each fact's gold QIDs per (culture, predicate), read from the columns
    return [PredicateStats(key[0], key[1], len(sets), len(facts.direct[key]), round(predicate_entropy(sets), 3),
                           majority_share(sets)) for key, sets in sorted(facts.golds.items())]


def license_for(src: ReleaseInput, override: str | None) -> str:
    if override:
        return override
    return UPSTREAM_LICENSES.get(src.provenance.source_kind, "other")


def card_yaml(src: ReleaseInput, configs: Sequence[ConfigEntry], *, license_id: str, pretty_name: str,
              default_config: str) -> str:
    from huggingface_hub import DatasetCardData

    kinds = set(src.digest.kinds)
    tasks = sorted({"fill-mask" if k == "cloze" else "question-answering" for k in kinds}) or ["fill-mask"]
    all_rows = sum(c.rows for c in configs if c.lang is None)
    yaml_configs = []
    for c in configs:
        entry: dict[str, Any] = {
            "config_name": c.name,
            "data_files": [{"split": s, "path": _glob(paths)} for s, paths, _ in c.splits],
        }
        if c.name == default_config:
            entry["default"] = True
        yaml_configs.append(entry)
    data = DatasetCardData(
        language=list(src.languages),
        license=license_id,
        multilinguality="multilingual" if len(src.languages) > 1 else "monolingual",
        size_categories=[size_category(all_rows)],
        task_categories=tasks,
        task_ids=["open-domain-qa"] if "question-answering" in tasks else None,
        source_datasets=["original"] if src.provenance.source_kind == "curated" else ["extended"],
        pretty_name=pretty_name,
        configs=yaml_configs,
        tags=list(TAGS),
    )
    return data.to_yaml()


def _glob(paths: Sequence[str]) -> str:
    """``data/<config>/<split>-*.parquet`` — one pattern for all shards of a split."""
    first = paths[0]
    folder, name = first.rsplit("/", 1)
    return f"{folder}/{name.split('-', 1)[0]}-*.parquet"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def _body_template() -> str:
    return (resources.files("factatlas.publish") / "card_body.md").read_text("utf-8")


def dataset_title(src: ReleaseInput) -> str:
    """The card's default title, from what the benchmark holds (not the run folder's name): its cultures
    and languages, e.g. "factatlas facts: arab vs west (ar, en)". ``--pretty-name`` overrides it."""
    cultures = list(src.meta.get("cultures") or sorted(src.facts.per_culture))
    return f"factatlas facts: {' vs '.join(cultures) or 'benchmark'} ({', '.join(src.languages)})"


def card_body(src: ReleaseInput, configs: Sequence[ConfigEntry], *, repo: str, version: str,
              license_id: str, pretty_name: str, default_config: str, target: str = HUB_TARGET) -> str:
    """The Markdown body. Every number comes from ``src``; sections are filled into card_body.md."""
    meta = src.meta
    cultures = list(meta.get("cultures") or sorted(src.facts.per_culture))
    culture_rows = []
    for c in cultures:
        names = ", ".join(f"{src.country_labels.get(q, q)} ({q}): {n}" for q, n in
                          sorted(src.facts.countries.get(c, {}).items(), key=lambda kv: (-kv[1], kv[0])))
        culture_rows.append((c, src.facts.per_culture.get(c, 0), names or "—"))

    pstats = predicate_stats(src)
    labels = src.predicate_labels
    predicate_rows = [(f"{p.predicate} {labels.get(p.predicate, '')}".strip(), p.culture, p.facts, p.answers,
                       f"{p.entropy_bits:.3f}", f"{p.majority_share:.3f}") for p in pstats]

    lang_rows = []
    digest = src.digest  # one streaming pass over the prompts gathered what the tables count
    for lang in src.languages:
        templates = digest.lang_templates.get(lang, {})
        status = Counter(templates.values())
        lang_rows.append((lang, digest.lang_rows.get(lang, 0), digest.lang_facts.get(lang, 0), len(templates),
                          ", ".join(f"{k}: {v}" for k, v in sorted(status.items())) or "—"))

    locality = locality_rows(src)
    config_rows = [(f"`{c.name}`" + (" (default)" if c.name == default_config else ""),
                    c.lang or "all", ", ".join(f"{s}: {n}" for s, _, n in c.splits)) for c in configs]

    prov = src.provenance
    hashes = prov.query_hashes
    provenance_rows = [
        ("source", prov.source_kind), ("endpoint", prov.endpoint), ("Wikidata retrieval time", prov.retrieved),
        ("SPARQL queries", f"{len(hashes)} (sha256 listed in manifest.json)" if hashes else "not recorded"),
        ("toolkit", f"factatlas {prov.toolkit_version}"),
        ("candidate sets", f"{meta.get('candidate_mode', 'not recorded')}"
                           + (f", k={meta['k']}" if meta.get("k") else "")),
        ("templates in this repo", {"benchmark": "copied from the benchmark directory",
                                    "run": "copied from the run directory",
                                    "library": "factatlas library files at publish time (the benchmark "
                                               "kept no copy)",
                                    "none": "not available"}[src.templates_origin]),
    ]

    example = digest.example
    values = {
        "pretty_name": pretty_name,
        "repo": repo,
        "version": version,
        "summary": _summary(src, cultures),
        "load_example": load_example(repo, version, default_config, target),
        "example_row": _example_row(example),
        "configs_table": _table(("config", "language", "rows per split"), config_rows),
        "cultures_table": _table(("culture", "facts", "countries (facts matched through each)"), culture_rows),
        "predicates_table": _table(("predicate", "culture", "facts", "distinct answers", "DLAMA entropy (bits)",
                                    "majority-answer P@1"), predicate_rows),
        "languages_table": _table(("language", "prompts", "facts", "templates", "template status"), lang_rows),
        "provenance_table": _table(("", ""), provenance_rows),
        "locality_table": _table(("language", "facts", "article in this language's Wikipedia",
                                  "local: no article here, one in a culture edition", "not recorded"), locality)
        if locality else "Not recorded for this benchmark (imported, or curated before knowledge locality).",
        "popularity_source": prov.popularity_source,
        "popularity_table": _table(("quantile", "facts", "popularity from", "popularity to"), popularity_rows(src))
        if digest.popularity else "Not recorded for this benchmark.",
        "limitations": "\n".join(f"- {x}" for x in limitations(src, pstats)),
        "citation": citation(repo, version, pretty_name, prov, target),
        "dlama_citation": DLAMA_BIBTEX,
        "license_note": _license_note(license_id, prov.source_kind),
    }
    return _body_template().format(**values)


def locality_rows(src: ReleaseInput) -> list[tuple[str, int, int, int, int]]:
    """Per language: facts, facts whose subject has an article in its Wikipedia edition, facts local to
    the culture's editions (an article there, none in this language's), facts without a record; [] when
    no prompt records knowledge locality. Each fact counts by its last row in the language (the digest)."""
    if not src.digest.any_locality:
        return []
    return [(lang, *src.digest.locality.get(lang, (0, 0, 0, 0))) for lang in src.languages]


def popularity_rows(src: ReleaseInput) -> list[tuple[int, int, str, str]]:
    """Per popularity quantile (``factatlas.popbuckets``): facts and the range of their popularity."""
    return [(q, facts, f"{least:g}", f"{most:g}") for q, (facts, least, most) in sorted(src.digest.popularity.items())]


def _summary(src: ReleaseInput, cultures: Sequence[str]) -> str:
    n_facts = src.facts.count
    n_prompts = src.digest.n_prompts
    return (f"{n_facts} facts about {' and '.join(cultures) or 'the cultures below'}, "
            f"{len(src.languages)} language(s) ({', '.join(src.languages)}), {n_prompts} prompts "
            f"(multi-parallel: the same facts and candidate answers in every language, each language asked "
            f"with the templates it has; the languages table counts them).")


def _example_row(row: Prompt | None) -> str:
    if row is None:
        return "(no rows)"
    keep = ("prompt_id", "lang", "template_id", "kind", "text", "subject_label", "gold_qids", "candidate_qids")
    lines = []
    for k in keep:
        v = getattr(row, k)
        if isinstance(v, tuple):  # shared candidate lists are read as tuples
            v = list(v)
        if isinstance(v, list) and len(v) > 6:
            v = v[:6] + [f"... {len(v) - 6} more"]
        lines.append(f"{k}: {v}")
    return "\n".join(lines)


def draft_list(ids: Sequence[str], used: int) -> str:
    """The draft template ids of one language, grouped by predicate: «P17 (1, 2, q1), P19 (3)», and
    «all 80» when every template the release uses is a draft."""
    if len(ids) == used:
        return f"all {used} templates"
    by_predicate: dict[str, list[str]] = {}
    for tid in ids:
        pred, _, rest = tid.partition("/")
        by_predicate.setdefault(pred, []).append(rest)
    order = sorted(by_predicate, key=lambda p: (len(p), p))
    return ", ".join(f"{p} ({', '.join(by_predicate[p])})" for p in order)


def limitations(src: ReleaseInput, pstats: Sequence[PredicateStats]) -> list[str]:
    """Known limitations, stated with this release's own numbers."""
    out = ["Facts come from Wikidata as retrieved at the time above; Wikidata is incomplete and its "
           "coverage differs between cultures, so a missing object is not evidence of a false answer."]
    per_culture = src.facts.per_culture
    if len(per_culture) > 1:
        lo, hi = min(per_culture.values()), max(per_culture.values())
        if hi and lo / hi < 0.8:
            out.append(f"The cultures are unbalanced: {', '.join(f'{c}: {n}' for c, n in sorted(per_culture.items()))} "
                       "facts; compare per-culture scores, not pooled ones.")
    templates = dict(src.digest.templates)  # (language, template id) -> status
    drafts = sorted({lang for (lang, _), s in templates.items() if s != "reviewed"})
    if drafts:
        n = sum(1 for s in templates.values() if s != "reviewed")
        out.append(f"{n} template(s) are not reviewed by a native speaker (languages: {', '.join(drafts)}); "
                   "machine-translated drafts can be ungrammatical and lower scores in those languages. "
                   "Draft templates: " + "; ".join(
                       f"{lang}: {draft_list(sorted(t for (lg, t), s in templates.items() if lg == lang and s != 'reviewed'), sum(1 for (lg, _) in templates if lg == lang))}"
                       for lang in drafts) + ".")
    augmented = src.facts.derived_objects
    if augmented:
        out.append(f"{augmented} gold objects are not stated directly in Wikidata but derived (superclasses "
                   "or containing administrative areas); they widen what counts as correct.")
    low = [p for p in pstats if p.facts >= 5 and p.majority_share >= 0.5]
    if low:
        out.append("Low-diversity relations, where always answering the most frequent object reaches at least "
                   "50% P@1: " + ", ".join(f"{p.predicate}/{p.culture} ({p.majority_share:.0%})" for p in low)
                   + ".")
    drops = _drop_reasons(src)
    if drops:
        top = ", ".join(f"{r}: {n}" for r, n in drops.most_common(5))
        out.append(f"{sum(drops.values())} items were dropped while building (benchmark/dropped.parquet); "
                   f"most frequent reasons: {top}. Dropping facts without labels in every language biases "
                   "the benchmark towards well-documented subjects.")
    if src.provenance.source_kind == "curated":
        out.append("Subjects were selected by popularity (Wikipedia signals); rare entities are under-represented.")
    return out


def _drop_reasons(src: ReleaseInput) -> Counter[str]:
    data = src.side_files.get("dropped.parquet")
    if not data:
        return Counter()
    return Counter(r["reason"] for r in table_from_bytes(data).select(["reason"]).to_pylist())


def _license_note(license_id: str, source_kind: str) -> str:
    if source_kind == "curated":
        return (f"`{license_id}`. Facts and labels come from Wikidata (CC0 1.0). Prompt templates are part of "
                "factatlas (`templates/`, Apache-2.0).")
    return (f"`{license_id}`. This release was imported from `{source_kind}`: check that dataset's own "
            "licence before redistribution; factatlas adds no restrictions of its own.")


def is_git_url(where: str) -> bool:
    return "://" in where or re.match(r"^[\w.-]+@[\w.-]+:", where) is not None


def published_at(repo: str, target: str) -> str | None:
    """The address readers can fetch the release from: the Hub page, a git URL, or None for a git
    repository on a local path (a path of the publishing machine means nothing to a reader)."""
    if target == HUB_TARGET:
        return f"https://huggingface.co/datasets/{repo}"
    where = target.removeprefix("git:")
    return where if is_git_url(where) else None


def load_example(repo: str, version: str, default_config: str, target: str) -> str:
    if target == HUB_TARGET:
        return (f'from datasets import load_dataset\n\nds = load_dataset("{repo}", "{default_config}", '
                f'revision="v{version}")')
    folder = repo.rsplit("/", 1)[-1]
    source = published_at(repo, target) or "PATH_OF_THIS_REPOSITORY"
    return (f"# git clone {source} {folder} && git -C {folder} checkout v{version}\n"
            f'from datasets import load_dataset\n\nds = load_dataset("{folder}", "{default_config}")')


def citation(repo: str, version: str, pretty_name: str, prov: Any, target: str = HUB_TARGET) -> str:
    key = repo.replace("/", "_").replace("-", "_") + "_v" + version.replace(".", "_").replace("-", "_")
    year = prov.retrieved[:4] if prov.retrieved[:4].isdigit() else ""
    url = published_at(repo, target)
    where = f"\\url{{{url}}}" if url else f"git repository {repo}, tag v{version}"
    lines = [f"@misc{{{key},", f"  title = {{{{{pretty_name}}}}},", f"  version = {{{version}}},",
             f"  howpublished = {{{where}}},"]
    if year:
        lines.append(f"  year = {{{year}}},")
    lines.append(f"  note = {{Built with factatlas {prov.toolkit_version} from Wikidata}}")
    lines.append("}")
    return "\n".join(lines)


def render_card(yaml_text: str, body: str) -> str:
    return "---\n" + yaml_text.rstrip("\n") + "\n---\n\n" + body.rstrip("\n") + "\n"


def split_card(text: str) -> tuple[dict[str, Any], str]:
    """(YAML metadata, body) of a card; ({}, text) when it has no front matter."""
    import yaml

    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        return {}, text
    return yaml.safe_load(text[4:end]) or {}, text[end + 5:]
