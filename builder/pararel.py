"""mParaRel's language inclusion rule (Fierro & Søgaard 2022, dataset construction): a language enters the dataset only when
its templates cover at least 60 % of the reference language's relations and at least 20 % of its
paraphrases (cloze templates). Shares are relative to the reference language (English in mParaRel):

- relation share = #relations with at least one cloze template in the language that the reference also has
  / #relations with a cloze template in the reference;
- paraphrase share = #cloze templates of the language (for those relations) / #cloze templates of the
  reference.

The reference language itself is always kept. ``factatlas build --min-relation-share 0.6
--min-paraphrase-share 0.2`` applies it to the template library before building.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factatlas.errors import ConfigError

MPARAREL_MIN_RELATIONS = 0.6
MPARAREL_MIN_PARAPHRASES = 0.2


@dataclass(frozen=True, slots=True)
class LanguageCoverage:
    lang: str
    relations: int
    relation_share: float
    paraphrases: int
    paraphrase_share: float
    kept: bool
    reason: str  # "" when kept; else which threshold failed


def cloze_counts(templates: Iterable) -> dict[str, dict[str, int]]:
    """lang -> predicate -> number of cloze templates (``templates.library.Template`` records)."""
    out: dict[str, dict[str, int]] = {}
    for t in templates:
        if t.kind == "cloze":
            per = out.setdefault(t.lang, {})
            per[t.predicate] = per.get(t.predicate, 0) + 1
    return out


def language_coverage(counts: Mapping[str, Mapping[str, int]], langs: Sequence[str], reference: str,
                      min_relations: float = MPARAREL_MIN_RELATIONS,
                      min_paraphrases: float = MPARAREL_MIN_PARAPHRASES) -> list[LanguageCoverage]:
    """The rule applied to each of ``langs`` (module docstring)."""
    ref = {p: n for p, n in counts.get(reference, {}).items() if n > 0}
    if not ref:
        raise ConfigError(f"coverage reference language '{reference}' has no cloze template; "
                          "give --coverage-reference a language with templates")
    total = sum(ref.values())
    out = []
    for lang in langs:
        mine = {p: n for p, n in counts.get(lang, {}).items() if n > 0 and p in ref}
        rel_share, para_share = len(mine) / len(ref), sum(mine.values()) / total
        reasons = []
        if lang != reference:
            if rel_share < min_relations:
                reasons.append(f"relations {rel_share:.0%} < {min_relations:.0%}")
            if para_share < min_paraphrases:
                reasons.append(f"paraphrases {para_share:.0%} < {min_paraphrases:.0%}")
        out.append(LanguageCoverage(lang, len(mine), rel_share, sum(mine.values()), para_share, not reasons,
                                    "; ".join(reasons)))
    return out


# ---- mLAMA templates as extra paraphrases ------------------------------------------------------------
# mParaRel (Fierro & Søgaard 2022, dataset construction) adds each language's mLAMA template of a relation
# to that relation's paraphrases. Here it is one more cloze template per (language, relation) with the
# language-neutral id ``<P>/mlama``, so it is the same paraphrase in every language that has it.

MLAMA_TEMPLATE_NUMBER = "mlama"


def mlama_template_id(predicate: str) -> str:
    return f"{predicate}/{MLAMA_TEMPLATE_NUMBER}"


def _comparable(text: str) -> str:
    """Template text up to case, spacing, sentence-final punctuation (mParaRel's ``clean_template``
    lower-cases and drops the final ``.``/``:``/``。``) and slot features (``[Y.def]`` is ``[Y]``), to see
    that an mLAMA template is already there."""
    import re

    squeezed = re.sub(r"\[([XY])(\.[^\]]*)?\]", r"[\1]", text)
    squeezed = re.sub(r"\s+", " ", squeezed).strip()
    squeezed = re.sub(r"\s*[.:。]$", "", squeezed)
    return re.sub(r"\s+([,;!?])", r"\1", squeezed).casefold()


def mlama_text(text: str) -> str:
    """An mLAMA template as a cloze template: LAMA's tokenised space before the final period removed
    ("[X] was born in [Y] ." -> "[X] was born in [Y]."), nothing else changed."""
    import re

    return re.sub(r"\s+([.。])$", r"\1", text.strip())


@dataclass(frozen=True, slots=True)
class MlamaParaphrases:
    library: Any  # templates.library.Library with the added templates
    added: Mapping[str, tuple[str, ...]]  # lang -> predicates given a <P>/mlama template
    skipped: Mapping[str, int]  # "<lang>:<reason>" -> relations not added (reasons below)


def with_mlama_paraphrases(library: Any, mlama: Mapping[str, Mapping[str, str]], origin: str = "") -> MlamaParaphrases:
    """``library`` with each language's mLAMA template (``mlama``: lang -> relation -> text, as
    ``read_mlama_templates`` reads them) added as the cloze template ``<P>/mlama`` of every predicate the
    toolkit curates (a language's library may lack the predicate: then it is its first template). Not added,
    counted per language: ``unknown-predicate`` (a relation the toolkit does not curate), ``same-as:<id>`` (equal to one of its cloze templates up to case, spacing and
    final punctuation), ``no-slots`` (a text without both [X] and [Y]); a library language that mLAMA lacks
    is counted as ``<lang>:no-mlama-templates``."""
    from dataclasses import replace

    from factatlas.templates.library import Template
    from factatlas.templates.predicates import PREDICATES

    files, added, skipped = dict(library.files), {}, {}
    for lang in library.languages:
        texts = mlama.get(lang)
        if texts is None:
            skipped[f"{lang}:no-mlama-templates"] = 1
            continue
        file = files[lang]
        have = set(PREDICATES)
        extra, mine = [], []
        for predicate, text in sorted(texts.items()):
            reason = ""
            if predicate not in have:
                reason = "unknown-predicate"
            elif "[X]" not in text or "[Y]" not in text:
                reason = "no-slots"
            else:
                same = next((t.id for t in library.templates(lang, predicate, "cloze")
                             if _comparable(t.text) == _comparable(text)), None)
                if same is not None:
                    reason = f"same-as:{same}"
            if reason:
                key = f"{lang}:{reason.split(':')[0] if reason.startswith('same-as') else reason}"
                skipped[key] = skipped.get(key, 0) + 1
                continue
            # "draft": mLAMA's wording as published, not read by us (its French is not grammatical), so the
            # release card lists these templates among the unreviewed
            extra.append(Template(mlama_template_id(predicate), lang, predicate, "cloze", mlama_text(text),
                                  "draft", "mlama", origin))
            mine.append(predicate)
        if extra:
            files[lang] = replace(file, templates=(*file.templates, *extra))
            added[lang] = tuple(mine)
    return MlamaParaphrases(replace(library, files=files), added, dict(sorted(skipped.items())))


def read_mlama_paraphrases(folder: str | os.PathLike, langs: Sequence[str]) -> dict[str, dict[str, str]]:
    """The mLAMA templates of those of ``langs`` that the user's mLAMA folder has (``<folder>/<lang>.jsonl``
    or ``<folder>/<lang>/templates.jsonl``, as ``import mlama`` reads them); the others are absent from the
    result (``with_mlama_paraphrases`` counts them). ConfigError when the folder has none of them."""
    from pathlib import Path

    from factatlas.builder.importers.dlama import read_mlama_templates

    root = Path(folder)
    present = [lang for lang in langs if (root / f"{lang}.jsonl").is_file()
               or (root / lang / "templates.jsonl").is_file()]
    if not present:
        raise ConfigError(f"--mlama-paraphrases {root}: no mLAMA templates for {', '.join(langs)} (expected "
                          f"{root}/<lang>.jsonl or {root}/<lang>/templates.jsonl, e.g. mlama1.1/ or its templates/)")
    return read_mlama_templates(root, present)
