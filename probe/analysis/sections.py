"""Analyses -> page sections (tables + figures as records: probe/figures.py draws them with the page)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.probe.aggregate import Accuracy
from factatlas.probe.analysis import compare as C
from factatlas.probe.analysis import crosslingual as X
from factatlas.probe.analysis import dlama as D
from factatlas.probe.analysis import xfactr_views as V
from factatlas.probe.analysis.page import LazyRows, Section, Table
from factatlas.probe.analysis.records import ModelResults
from factatlas.probe.figures import Figure, figure
from factatlas.records import Fact, ScoredPrompt


@dataclass(frozen=True)
class CompareOptions:
    western: str = "west"
    n_boot: int = 1000
    confidence: float = 0.95
    seed: int = 0
    mcnemar: C.McNemarMethod = "exact"


def _interval(n_boot: int, seed: int, how: str) -> str:
    """How a section's intervals were drawn, or that there are none (``--bootstrap 0``)."""
    return (f"Interval: percentile bootstrap ({n_boot} resamples, seed {seed}), {how}." if n_boot
            else "No interval (--bootstrap 0).")


def _scoped(text: str, scope: str) -> str:
    """A table caption or figure title naming the data it reads (e.g. "split test")."""
    return f"{text} ({scope})" if scope else text


def compare_sections(by_model: Mapping[str, Sequence[ScoredPrompt]], options: CompareOptions,
                     *, scope: str = "") -> list[Section]:
    cells = C.accuracy_table(by_model)
    rows = tuple((c.model, c.culture, c.lang, c.acc.n_facts, c.acc.n_prompts, c.acc.micro, c.acc.macro)
                 for c in cells)
    table = Table("p_at_1", ("model", "culture", "language", "facts", "prompts", "P@1 micro", "P@1 macro"), rows,
                  _scoped("P@1 per model × culture × language", scope))
    cultures = sorted({c.culture for c in cells if c.culture != C.ALL})
    series = {m: [next((c.acc.macro for c in cells if c.model == m and c.culture == cu and c.lang == C.ALL), None)
                  for cu in cultures] for m in by_model}
    plots = [figure("grouped_bars", "compare_p_at_1.png", cultures, series,
                    _scoped("Macro P@1 per culture and model", scope), ylabel="macro P@1")]
    accuracy = Section(
        "P@1 across models", "DLAMA (Keleg & Magdy 2023) Table 3 (macro over predicates); BMLAMA (Qi et al. 2023) "
        "reports micro",
        "micro: mean over facts; macro: mean over predicates of the mean over their facts. A fact's value is the "
        "mean correctness of its prompts in the cell (templates and languages weigh alike).", (table,), tuple(plots))

    gaps, missing = [], []
    for model, results in by_model.items():
        g = C.culture_gap(model, results, options.western, n_boot=options.n_boot, confidence=options.confidence,
                          seed=options.seed)
        (gaps.append(g) if g else missing.append(f"{model}: no facts of the Western culture "
                                                 f"'{options.western}' or none of another culture"))
    gap_plots: tuple[Figure, ...] = ()
    if gaps:
        drawn = f"{options.confidence:.0%} bootstrap CI" if options.n_boot else "no interval (--bootstrap 0)"
        gap_plots = (figure("intervals", "compare_gap.png", [g.model for g in gaps], [g.gap for g in gaps],
                            [g.gap if g.ci_low is None else g.ci_low for g in gaps],
                            [g.gap if g.ci_high is None else g.ci_high for g in gaps],
                            _scoped(f"Macro P@1 {options.western} − non-{options.western}, {drawn}", scope),
                            xlabel="P@1 gap"),)
    gap_table = Table("culture_gap", ("model", "P@1 western (macro)", "P@1 non-western (macro)", "gap", "CI low",
                                      "CI high", "western facts", "non-western facts", "resamples"),
                      tuple((g.model, g.western, g.non_western, g.gap, g.ci_low, g.ci_high, g.n_western_facts,
                             g.n_non_western_facts, g.n_boot) for g in gaps), _scoped("Western vs non-Western gap", scope))
    gap = Section(
        "Western vs non-Western gap", "DLAMA (Keleg & Magdy 2023), Western vs non-Western P@1",
        f"gap = macro P@1 on '{options.western}' facts − macro P@1 on all other cultures' facts (pooled per "
        f"predicate). {_interval(options.n_boot, options.seed, 'facts resampled within each side × predicate')}",
        (gap_table,), gap_plots, tuple(missing))

    tests = C.paired_tests(by_model, options.mcnemar)
    method = ("exact two-sided binomial test on the discordant prompts" if options.mcnemar == "exact" else
              "chi-square with continuity correction (|b−c|−1)²/(b+c), 1 df")
    test_table = Table("mcnemar", ("model A", "model B", "language", "paired prompts", "both right", "A only",
                                   "B only", "both wrong", "statistic", "p"),
                       tuple((t.model_a, t.model_b, t.lang, t.test.n, t.test.both, t.test.a_only, t.test.b_only,
                              t.test.neither, t.test.statistic, t.test.p) for t in tests), _scoped("McNemar between models", scope))
    unpaired = sorted({(t.model_a, t.model_b, t.unpaired) for t in tests if t.unpaired})
    note = (f"McNemar's test, {method}, on prompts both models ranked (pairs by prompt id). Prompts of one fact "
            "are not independent (templates, languages), so read p as a screening value, not a corrected one.")
    if unpaired:
        note += " Left out (ranked by one model only): " + "; ".join(f"{a} vs {b}: {n}" for a, b, n in unpaired) + "."
    significance = Section("Paired significance between models", "McNemar (1947); as a test between two "
                           "classifiers on the same items: Dietterich (1998)", note, (test_table,),
                           unavailable=() if tests else ("needs two or more models",))
    return [accuracy, gap, significance]


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)


def dlama_sections(by_model: Mapping[str, Sequence[ScoredPrompt]], *,
                   owners: Mapping[tuple[str, str], frozenset[str]],
                   country_label: Mapping[str, str] | None = None,
                   equivalences: D.Equivalences | None = None, equivalences_source: str = "",
                   scope: str = "") -> list[Section]:
    names = country_label or {}
    rows, no_country = [], []
    for model, results in by_model.items():
        for c in D.accuracy_by_country(results):
            rows.append((model, c.culture, c.country, names.get(c.country, ""), c.lang, c.acc.n_facts, c.acc.micro,
                         c.acc.macro))
        missing = len({r.fact_id for r in results if not r.countries})
        if missing:
            no_country.append(f"{model}: {missing} facts have no country and are in no row")
    plots = []
    for culture in sorted({r[1] for r in rows}):
        countries = sorted({r[2] for r in rows if r[1] == culture},
                           key=lambda q: (-max(r[5] for r in rows if r[1] == culture and r[2] == q), q))
        series = {m: [next((r[6] for r in rows if r[0] == m and r[1] == culture and r[2] == q and r[4] == "all"), None)
                      for q in countries] for m in by_model}
        plots.append(figure("grouped_bars", f"country_{_slug(culture)}.png", [f"{names.get(q, q)}" for q in countries],
                            series, _scoped(f"P@1 (micro) per country: {culture}", scope), ylabel="P@1"))
    country = Section(
        "P@1 per country", "DLAMA (Keleg & Magdy 2023), per-country analysis",
        "A fact counts for every country it was curated for. Sorted by culture and country QID; the plot orders "
        "countries by their number of facts.",
        (Table("p_at_1_by_country", ("model", "culture", "country", "country label", "language", "facts",
                                     "P@1 micro", "P@1 macro"), tuple(rows), _scoped("P@1 per country", scope)),),
        tuple(plots), tuple(no_country))

    aug_rows, aug_plots = [], []
    for model, results in by_model.items():
        effects = D.augmentation_effect(results)
        aug_rows += [(model, e.predicate, e.n_facts, e.n_augmented_facts, e.direct_only, e.all_valid,
                      e.all_valid - e.direct_only) for e in effects]
        preds = [e.predicate for e in effects]
        aug_plots.append(figure("grouped_bars", f"augmentation_{_slug(model)}.png", preds,
                                {"direct objects only": [e.direct_only for e in effects],
                                 "all valid objects": [e.all_valid for e in effects]},
                                _scoped(f"{model}: P@1 before vs after augmentation", scope), ylabel="P@1"))
    augmentation = Section(
        "Before vs after augmentation", "DLAMA (Keleg & Magdy 2023), appendix: P@1 with direct objects vs all valid "
        "objects", "Per predicate: micro P@1 over facts; 'all': macro over predicates. Valid objects added by "
        "augmentation are superclasses (P279) and containing areas (P131); their provenance is in facts.parquet.",
        (Table("augmentation", ("model", "predicate", "facts", "augmented facts", "P@1 direct only",
                                "P@1 all valid", "difference"), tuple(aug_rows), _scoped("P@1 before vs after augmentation", scope)),),
        tuple(aug_plots))

    err_rows = []
    for model, results in by_model.items():
        err_rows += [(model, e.predicate, e.culture, e.lang, e.n_prompts, e.wrong, e.other_culture, e.shared,
                      e.own_culture, e.neither, e.other_share) for e in D.cross_culture_errors(results, owners)]
    errors = Section(
        "Wrong answers from the other culture", "DLAMA (Keleg & Magdy 2023), culture-bias discussion",
        "A wrong top-1 answer is 'other culture' when it is a valid object only of facts of another culture "
        "(same predicate), 'shared' when it is valid for facts of both, 'own' when only for facts of the asked "
        "culture, 'neither' when it is valid for no fact of the predicate; the facts are every fact of the "
        "benchmark (all splits), whatever split is analysed. Counted per prompt.",
        (Table("other_culture_errors", ("model", "predicate", "culture", "language", "prompts", "wrong",
                                        "other culture", "shared", "own culture", "neither", "other share of wrong"),
               tuple(err_rows), _scoped("Wrong answers by the culture they belong to", scope)),))
    sections = [country, augmentation, errors]
    if equivalences is not None:
        eq_rows = []
        for model, results in by_model.items():
            eq_rows += [(model, e.predicate, e.n_facts, e.strict, e.with_equivalences, e.rescued_prompts)
                        for e in D.equivalence_effect(results, equivalences)]
        sections.append(Section(
            "Equivalent answers", "DLAMA (Keleg & Magdy 2023), e.g. Islam / Muslim counted as one answer",
            f"Equivalence table: {equivalences_source} ({len(equivalences.groups)} groups). Reported beside, never "
            "instead of, the strict P@1 (per predicate micro over facts; 'all' macro).",
            (Table("equivalences", ("model", "predicate", "facts", "P@1 strict", "P@1 with equivalences",
                                    "prompts rescued"), tuple(eq_rows), _scoped("P@1 with the equivalence table", scope)),)))
    return sections


def crosslingual_sections(models: Sequence[ModelResults], weighting: str = "softmax", *, scope: str = ""
                          ) -> list[Section]:
    pair_rows, corr_rows, plots, notes = [], [], [], []
    for m in models:
        if not any(r.order for r in m.results):  # open answers carry no ranking (order is empty)
            notes.append(f"{m.model}: RankC and COverlap n/a: its answers are open (generated and matched), "
                         "not rankings of the candidates")
            continue
        pairs = X.pair_consistency(m.results, weighting)
        langs = sorted({p.lang_a for p in pairs} | {p.lang_b for p in pairs})
        traits, missing = X.language_traits(langs)
        if missing:
            notes.append(f"{m.model}: no family/script in templates/data/languages.yaml for {', '.join(missing)}; "
                         "their pairs are left out of the family and script correlations")
        # the languages of the pairs only (the vocabularies come from the subword view's child, one per language)
        vocab = m.vocabularies
        overlap = X.vocabulary_overlap_of({lang: vocab[lang] for lang in langs if lang in vocab}) \
            if vocab is not None else None
        if overlap is None:
            notes.append(f"{m.model}: subword overlap not measured: {m.tokenizer_note}")
        from factatlas.probe.analysis.typology import uriel_similarity

        typology, typology_note = uriel_similarity(langs)
        if typology_note:
            notes.append(f"{m.model}: {typology_note}")
        foreign = sum(p.foreign for p in pairs)
        if foreign:
            notes.append(f"{m.model}: {foreign} (query, language pair) left out: the candidates differ between the "
                         "two languages or a ranking is not a permutation of them")
        for p in pairs:
            ta, tb = traits.get(p.lang_a), traits.get(p.lang_b)
            same = [None if ta is None or tb is None else int(getattr(ta, k) == getattr(tb, k))
                    for k in ("family", "genus", "script")]
            pair_rows.append((m.model, p.lang_a, p.lang_b, p.n_queries, p.rankc, p.coverlap, *same,
                              (overlap or {}).get((p.lang_a, p.lang_b)), (typology or {}).get((p.lang_a, p.lang_b))))
        corr_rows += [(m.model, c.feature, c.n_pairs, c.r, c.p, c.reason)
                      for c in X.rankc_correlations(pairs, traits, overlap, typology)]
        if not pairs:
            notes.append(f"{m.model}: fewer than two languages ranked; no pair to compare")
            continue
        value = {(p.lang_a, p.lang_b): p.rankc for p in pairs} | {(p.lang_b, p.lang_a): p.rankc for p in pairs}
        matrix = [[1.0 if a == b else value.get((a, b)) for b in langs] for a in langs]
        plots.append(figure("heatmap", f"rankc_{_slug(m.model)}.png", matrix, langs, langs,
                            _scoped(f"{m.model}: RankC ({weighting})", scope), cmap="magma", colorbar_label="RankC"))
        scored = [p for p in pairs if p.rankc is not None and p.coverlap is not None]
        if len(scored) >= 2:
            plots.append(figure("scatter", f"rankc_coverlap_{_slug(m.model)}.png", [p.coverlap for p in scored],
                                [p.rankc for p in scored], [f"{p.lang_a}-{p.lang_b}" for p in scored],
                                _scoped(f"{m.model}: RankC vs COverlap", scope), xlabel="COverlap", ylabel="RankC"))
        if overlap and len(pairs) >= 2:
            ok = [p for p in pairs if p.rankc is not None]
            plots.append(figure("scatter", f"rankc_vocab_{_slug(m.model)}.png",
                                [overlap[(p.lang_a, p.lang_b)] for p in ok], [p.rankc for p in ok],
                                [f"{p.lang_a}-{p.lang_b}" for p in ok], _scoped(f"{m.model}: RankC vs subword overlap", scope),
                                xlabel="subword vocabulary overlap (Jaccard)", ylabel="RankC"))
    pair_rows.sort(key=lambda r: (r[0], -(r[4] if r[4] is not None else -1.0), r[1], r[2]))
    return [Section(
        "Cross-lingual consistency: RankC by language pair",
        "BMLAMA (Qi, Fernández & Bisazza 2023): RankC heat map, RankC vs language family, script and subword "
        "overlap; COverlap from X-FACTR (Jiang et al. 2020)",
        f"RankC ({weighting} weights) over the (fact, template) queries ranked in both languages; pairs listed "
        "from the highest RankC down, each with its COverlap. Family, genus (branch) and script from "
        "templates/data/languages.yaml; subword overlap: Jaccard of the subword ids the model's tokenizer uses "
        "for each language's prompts and answer forms; typological similarity: cosine of the URIEL syntax_knn "
        "vectors (lang2vec's data, §6 of BMLAMA). Pearson r and two-sided p: scipy.stats.pearsonr over "
        "language pairs (pairs share languages, so p is optimistic).",
        (Table("rankc_pairs", ("model", "language A", "language B", "queries", "RankC", "COverlap", "same family",
                               "same genus", "same script", "subword overlap",
                               "typological similarity"), tuple(pair_rows),
               _scoped("RankC and COverlap per language pair", scope)),
         Table("rankc_correlations", ("model", "RankC against", "pairs", "Pearson r", "p", "not computed because"),
               tuple(corr_rows), _scoped("What RankC goes with", scope))),
        tuple(plots), tuple(notes))]


def xfactr_sections(models: Sequence[ModelResults], *, scope: str = "") -> list[Section]:
    split_rows, notes = [], []
    histograms = {}
    for m in models:
        splits, unmeasured = V.by_gold_length(m.results)
        split_rows += [(m.model, s.lang, s.gold, s.acc.n_prompts, s.acc.n_facts, s.acc.micro, s.acc.macro)
                       for s in splits]
        if unmeasured:
            notes.append(f"{m.model}: {unmeasured} prompts without a subword count"
                         + (f" ({m.tokenizer_note})" if m.tokenizer_note else " (no slot form for the gold)"))
        histograms[m.model] = V.recall_histogram(m.results)
        if histograms[m.model].incomplete:
            notes.append(f"{m.model}: {histograms[m.model].incomplete} facts not ranked in every language are left "
                         "out of the histogram")
    hist_rows = tuple((model, k, n, n / sum(h.counts) if sum(h.counts) else None)
                      for model, h in histograms.items() for k, n in enumerate(h.counts))
    plots: tuple[Figure, ...] = ()
    if histograms:
        width = max(len(h.counts) for h in histograms.values())
        plots = (figure("grouped_bars", "recall_histogram.png", [str(k) for k in range(width)],
                        {model: [h.counts[k] if k < len(h.counts) else None for k in range(width)]
                         for model, h in histograms.items()},
                        _scoped("Facts recalled in k languages", scope), ylabel="facts", ylim=None, value_fmt="{:.0f}"),)
    split_plots = []
    for m in models:
        rows = [r for r in split_rows if r[0] == m.model]
        langs = sorted({r[1] for r in rows}, key=lambda x: (x == "all", x))
        if rows:
            series = {kind: [next((r[5] for r in rows if r[1] == lang and r[2] == kind), None) for lang in langs]
                      for kind in (V.SINGLE, V.MULTI)}
            split_plots.append(figure("grouped_bars", f"gold_length_{_slug(m.model)}.png", langs, series,
                                      _scoped(f"{m.model}: P@1 by gold length", scope), ylabel="P@1 micro"))
    return [Section(
        "Single- vs multi-token answers; facts recalled across languages",
        "X-FACTR (Jiang et al. 2020): accuracy on single- vs multi-token answers; per-fact recall across languages",
        "Gold length: subword tokens of the direct gold's form as it fills the slot (inflected), tokenized by the "
        "model's own tokenizer with a leading space. A fact is recalled in a language when at least half of its "
        "prompts there are right at rank 1.",
        (Table("gold_length", ("model", "language", "gold", "prompts", "facts", "P@1 micro", "P@1 macro"),
               tuple(split_rows), _scoped("P@1 by gold answer length", scope)),
         Table("recall_histogram", ("model", "languages recalled", "facts", "share"), hist_rows,
               _scoped("Facts by the number of languages they are recalled in", scope))),
        (*split_plots, *plots), tuple(notes))]


def error_sections(by_model: Mapping[str, Sequence[ScoredPrompt]], ctx, *,
                   prompts: Mapping[str, object] | Callable[[Sequence[ScoredPrompt]], Any] | None = None,
                   scope: str = "", examples: int = 3) -> list[Section]:
    """X-FACTR's error taxonomy (with DLAMA's other-culture answers) per model, predicate and language; one
    row per wrong answer with its category and evidence (``wrong_answers.csv``), and ``examples`` of each
    category per model on the page. ``prompts``: the benchmark's prompts by id, or a function giving a fresh
    lookup for a model's results each time they are read (a ``PromptStream``): the rows of every wrong
    answer are then made as the CSV is written (``LazyRows``), never held."""
    from factatlas.probe.analysis import errors as E

    def lookup(results):
        return prompts(results) if callable(prompts) else prompts

    rows, series, shown, counts = [], {}, [], []
    for model, results in by_model.items():
        table = E.error_taxonomy(results, ctx)
        rows += [(model, e.predicate, e.lang, e.prompts, e.wrong, *e.by_category) for e in table]
        total = next((e for e in table if e.predicate == "all" and e.lang == "all"), None)
        if total is not None and total.wrong:
            series[model] = [n / total.wrong for n in total.by_category]
        first: dict[str, list[tuple]] = {kind: [] for kind in E.CATEGORIES}
        n = 0
        for w in E.iter_wrong_answers(results, ctx, lookup(results)):
            n += 1
            if len(first.setdefault(w.category, [])) < examples:
                first[w.category].append(w.row())
        counts.append(n)
        for kind in E.CATEGORIES:
            shown += first[kind]

    def every_answer():
        for results in by_model.values():
            yield from (w.row() for w in E.iter_wrong_answers(results, ctx, lookup(results)))

    answers = LazyRows(every_answer, sum(counts))
    plots = ()
    if series:
        plots = (figure("grouped_bars", "error_taxonomy.png", list(E.CATEGORIES), series,
                        _scoped("Wrong answers by kind (share of wrong)", scope), ylabel="share of wrong answers"),)
    notes = () if ctx.classes else ("the benchmark records no entity classes: every type is 'type unknown'",)
    return [Section(
        "Kinds of wrong answers", "X-FACTR (Jiang et al. 2020) §5 Table 2; other-culture answers from DLAMA "
        "(Keleg & Magdy 2023)",
        "Each wrong prompt gets the first kind that applies: unk/empty (an empty open answer); repeats subject "
        "(the subject's QID, or its label inside an open answer); other culture (valid for the predicate only "
        "in other cultures' facts, or a country only other cultures' facts list); related concept (a valid "
        "object of another fact of the same subject, or one of the fact's countries); wrong type (no P31 class "
        "shared with any valid object); wrong entity (a shared class); type unknown (classes not recorded); "
        "unmatched text (an open answer naming no candidate). Whose answer it is comes from every fact of the "
        "benchmark (all splits). Counted per prompt; 'all' rows are margins. Every wrong answer, with the facts "
        "or classes that decided its kind, is in wrong_answers.csv.",
        (Table("error_taxonomy", ("model", "predicate", "language", "prompts", "wrong", *E.CATEGORIES),
               tuple(rows), _scoped("Wrong answers by kind", scope)),
         Table("wrong_answer_examples", E.WRONG_ANSWER_HEAD, tuple(shown),
               _scoped(f"The first {examples} wrong answers of each kind per model, with their evidence", scope)),
         Table("wrong_answers", E.WRONG_ANSWER_HEAD, answers,
               _scoped(f"Every wrong answer ({len(answers)}), its kind and evidence", scope), page_rows=0)),
        plots, notes)]


def scale_sections(models: Sequence[ModelResults], model_dirs: Sequence[Path],
                   weighting: str = "softmax") -> list[Section]:
    """P@1 and mean RankC against parameter count, per model family."""
    from factatlas.probe.analysis import scale as S

    points, notes = S.scale_points(models, model_dirs, weighting)
    plots = []
    for family in sorted({p.family for p in points}):
        fam = [p for p in points if p.family == family]
        for metric, label in (("p_at_1_macro", "P@1 (macro)"), ("mean_rankc", "mean RankC"), ("xfakt", "X-FaKT")):
            ok = [p for p in fam if getattr(p, metric) is not None]
            if len(ok) >= 2:
                plots.append(figure("scatter", f"scale_{_slug(family)}_{metric}.png", [p.parameters for p in ok],
                                    [getattr(p, metric) for p in ok], [p.model for p in ok],
                                    f"{family}: {label} vs parameters", xlabel="parameters", ylabel=label))
    rows = tuple((p.family, p.model, p.parameters, p.p_at_1_micro, p.p_at_1_macro, p.mean_rankc, p.xfakt)
                 for p in points)
    return [Section(
        "Model size within a family", "BMLAMA (Qi, Fernández & Bisazza 2023) §5.2 Fig. 4; X-FaKT Fig. 4",
        "Parameters: the element counts in the checkpoint's safetensors headers; family: config.json model_type. "
        "P@1 micro (facts) and macro (predicates) over every prompt; RankC: mean over language pairs; X-FaKT: "
        "the score of metrics.json with the default language-culture association (blank when undefined).",
        (Table("model_scale", ("family", "model", "parameters", "P@1 micro", "P@1 macro", "mean RankC", "X-FaKT"),
               rows,
               "P@1 and RankC by model size"),), tuple(plots), tuple(notes))]


def locality_sections(by_model: Mapping[str, Sequence[ScoredPrompt]], facts: Iterable[Fact], *,
                      n_boot: int = 1000, confidence: float = 0.95, seed: int = 0) -> list[Section]:
    """Knowledge locality: P@1 on the local view per language, and the transfer score per language pair
    (``factatlas.probe.analysis.locality``) with a heat map per model."""
    from factatlas.probe.analysis import locality as L

    where = L.localities(facts)
    follows = ("ECLeKTic (Goldman et al. 2025): facts with a Wikipedia article in some languages only, asked "
               "in the others; transfer = share right in the target of those right in the source")
    if not where:
        return [Section("Knowledge locality and transfer", follows, unavailable=(
            "the benchmark's facts carry no article_langs (imported, or curated before knowledge locality was "
            "recorded): curate and build again",))]
    cells = L.local_table(by_model, where)
    local_rows = tuple((c.model, c.lang, *(_acc_cells(c.local)), *(_acc_cells(c.with_article)), c.no_locality)
                       for c in cells)
    rows, plots, notes = [], [], []
    for model, scored in by_model.items():
        transfers = L.transfer_scores(model, scored, where, n_boot=n_boot, confidence=confidence, seed=seed)
        rows += [(t.model, t.source, t.target, t.n_facts, t.n_known, t.transfer, t.ci_low, t.ci_high)
                 for t in transfers]
        langs, matrix = L.transfer_matrix(transfers)
        if any(v is not None for row in matrix for v in row):
            plots.append(figure("heatmap", f"transfer_{_slug(model)}.png", matrix, langs, langs,
                                f"{model}: transfer, row → column", colorbar_label="transfer"))
        else:
            notes.append(f"{model}: no language pair has a fact known in a source language with the article and "
                         "missing in the target's")
    return [Section(
        "Knowledge locality and transfer", follows,
        "Local view: prompts whose subject has an article in the culture's Wikipedia edition(s) but none in the "
        "probe language's. Transfer (source → target): facts with the article in the source's edition and none "
        "in the target's; of those known in the source (every source prompt right), the micro P@1 of their "
        f"target prompts. {_interval(n_boot, seed, 'facts resampled within predicates')}",
        (Table("local_view", ("model", "language", "local prompts", "local facts", "P@1 local (micro)",
                              "P@1 local (macro)", "prompts with article", "facts with article",
                              "P@1 with article (micro)", "P@1 with article (macro)", "prompts without locality"),
               local_rows, "P@1 on local knowledge vs where the language has the article"),
         Table("transfer", ("model", "source", "target", "facts", "known in source", "transfer", "CI low",
                            "CI high"), tuple(rows), "Transfer per language pair")),
        tuple(plots), tuple(notes))]


def _acc_cells(acc: Accuracy | None) -> tuple:
    return (None, None, None, None) if acc is None else (acc.n_prompts, acc.n_facts, acc.micro, acc.macro)


def popularity_sections(by_model: Mapping[str, Sequence[ScoredPrompt]], facts: Iterable[Fact]) -> list[Section]:
    """Accuracy vs popularity: P@1 per popularity bucket and Spearman's rho per model, culture, language
    (``factatlas.probe.analysis.popularity``), with a plot of P@1 per quantile per model."""
    from factatlas.popbuckets import QUANTILES, log_bin_label
    from factatlas.probe.analysis import popularity as Pop

    buckets, popularity = Pop.fact_buckets(facts)
    cells = Pop.bucket_table(by_model, buckets)
    rows = tuple((c.model, c.culture, c.lang, c.kind, c.bucket if c.kind == "quantile" else log_bin_label(c.bucket),
                  c.acc.n_facts, c.acc.n_prompts, c.acc.micro, c.acc.macro) for c in cells)
    corr = Pop.correlations(by_model, popularity)
    plots, notes = [], []
    quantiles = list(range(1, QUANTILES + 1))
    for model in by_model:
        mine = [c for c in cells if c.model == model and c.culture == Pop.ALL and c.kind == "quantile"]
        langs = sorted({c.lang for c in mine}, key=lambda x: (x == Pop.ALL, x))
        if not mine:
            notes.append(f"{model}: no scored prompt has a fact with a popularity")
            continue
        series = {lang: [next((c.acc.micro for c in mine if c.lang == lang and c.bucket == b), None)
                         for b in quantiles] for lang in langs}
        plots.append(figure("grouped_bars", f"popularity_{_slug(model)}.png", [f"Q{b}" for b in quantiles], series,
                            f"{model}: P@1 by popularity quartile (Q1 least popular)", ylabel="P@1 micro"))
    if popularity and len(set(popularity.values())) < 2:
        notes.append("every fact has the same popularity (an import without a popularity signal?): buckets and "
                     "correlations say nothing")
    return [Section(
        "Accuracy vs popularity", "PopQA (Mallen et al. 2023): accuracy against subject popularity (monthly page "
        "views, log bins); Spearman's rank correlation",
        "Popularity: what curation ranked subjects by (article length by default; page views with --rank-by "
        "pageviews; DLAMA-v1 imports: article length). Quantile: 1 (least popular) to 4 within the fact's "
        "predicate; log10: PopQA-style bins by powers of ten. Spearman's rho between a fact's popularity and its "
        "P@1 in the cell (the mean correctness of its prompts there); p two-sided (scipy).",
        (Table("popularity_buckets", ("model", "culture", "language", "bucket kind", "bucket", "facts", "prompts",
                                      "P@1 micro", "P@1 macro"), rows, "P@1 per popularity bucket"),
         Table("popularity_spearman", ("model", "culture", "language", "facts", "Spearman rho", "p"),
               tuple((c.model, c.culture, c.lang, c.n_facts, c.rho, c.p) for c in corr),
               "Rank correlation of popularity and fact P@1")),
        tuple(plots), tuple(notes))]
