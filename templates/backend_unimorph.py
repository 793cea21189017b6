"""UniMorph-table inflection: exact lookup by feature set, suffix analogy for unseen names ("guessed").

A UniMorph table has one line per form: ``lemma<TAB>form<TAB>features`` (``Москва	Москве	N;ESS;SG``),
one repository per ISO 639-3 language under github.com/unimorph. Tables are fetched on demand by
``download_table`` into a user cache (``$FACTATLAS_CACHE/unimorph`` or ``~/.cache/factatlas/unimorph``)
— never at import time, never implicitly during a render: a missing table is a failure that says
which command fetches it.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from factatlas.atomic import atomic_path
from factatlas.errors import FactatlasError
from factatlas.templates.morphology import (
    EXACT,
    FAILED,
    GUESSED,
    NONE,
    Features,
    InflectionRequest,
    InflectionResult,
    language_registry,
)

DEFAULT_URL = "https://raw.githubusercontent.com/unimorph/{iso}/master/{iso}"
CASE_TAGS = {"nom": "NOM", "gen": "GEN", "dat": "DAT", "acc": "ACC", "ins": "INS", "loc": "ESS"}
NUMBER_TAGS = {"sg": "SG", "pl": "PL"}
MAX_SUFFIX = 6


def default_cache_dir() -> Path:
    root = os.environ.get("FACTATLAS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "factatlas")
    return Path(root) / "unimorph"


def unimorph_features(features: Features, loc_tag: str = "ESS") -> frozenset[str]:
    tags = {"N", NUMBER_TAGS[features.number or "sg"]}
    if features.case:
        tags.add(loc_tag if features.case == "loc" else CASE_TAGS[features.case])
    return frozenset(tags)


def _rule(lemma: str, form: str) -> tuple[str, str]:
    """The suffix rewrite lemma -> form: (lemma ending to remove, form ending to add)."""
    p = 0
    while p < min(len(lemma), len(form)) and lemma[p] == form[p]:
        p += 1
    return lemma[p:], form[p:]


@dataclass
class UnimorphTable:
    iso: str
    forms: dict[tuple[str, frozenset[str]], str] = field(default_factory=dict)
    # feature set -> lemma suffix -> Counter of rewrite rules seen for lemmas with that suffix
    analogies: dict[frozenset[str], dict[str, Counter]] = field(default_factory=dict)
    # lower-cased form -> (lemma, features) of its nominative readings: how a modifier is found again
    nominatives: dict[str, list[tuple[str, frozenset[str]]]] = field(default_factory=dict)

    @classmethod
    def from_lines(cls, iso: str, lines: Iterable[str]) -> UnimorphTable:
        table = cls(iso)
        index: dict[frozenset[str], dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
        for line in lines:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or not parts[0]:
                continue
            lemma, form, feats = parts[0], parts[1], frozenset(parts[2].split(";"))
            table.forms.setdefault((lemma, feats), form)
            if "NOM" in feats:
                table.nominatives.setdefault(form.lower(), []).append((lemma, feats))
            rule = _rule(lemma, form)
            for k in range(1, min(MAX_SUFFIX, len(lemma)) + 1):
                index[feats][lemma[-k:]][rule] += 1
        table.analogies = {f: dict(v) for f, v in index.items()}
        return table

    @classmethod
    def load(cls, path: str | os.PathLike, iso: str | None = None) -> UnimorphTable:
        path = Path(path)
        with open(path, encoding="utf-8") as f:
            return cls.from_lines(iso or path.stem, f)

    def lookup(self, lemma: str, feats: frozenset[str]) -> str | None:
        return self.forms.get((lemma, feats))

    def agree(self, word: str, feats: frozenset[str]) -> str | None:
        """A modifier of a multiword name in the case/number of ``feats``, agreeing as the table says:
        «Nowa» (nowy;ADJ;NOM;FEM;SG) -> «Nowej» (ADJ;ESS;FEM;SG). None when the table does not know it."""
        case_tags = {t for t in feats if t not in ("N", "SG", "PL")}
        for lemma, nom_feats in self.nominatives.get(word.lower(), ()):
            wanted = (nom_feats - {"NOM", "SG", "PL"}) | case_tags | (feats & {"SG", "PL"})
            form = self.forms.get((lemma, frozenset(wanted)))
            if form is not None:
                return form[:1].upper() + form[1:] if word[:1].isupper() else form
        return None

    def guess(self, lemma: str, feats: frozenset[str]) -> tuple[str, str] | None:
        """(form, evidence) by analogy with lemmas sharing the longest suffix; None without evidence."""
        by_suffix = self.analogies.get(feats)
        if not by_suffix:
            return None
        for k in range(min(MAX_SUFFIX, len(lemma)), 0, -1):
            rules = by_suffix.get(lemma[-k:])
            if not rules:
                continue
            for (old, new), count in rules.most_common():
                if lemma.endswith(old):
                    stem = lemma[: len(lemma) - len(old)] if old else lemma
                    return stem + new, f"analogy with {count} lemma(s) ending in '-{lemma[-k:]}': -{old} -> -{new}"
        return None


def download_table(iso: str, cache_dir: str | os.PathLike | None = None, url: str = DEFAULT_URL,
                   timeout: float = 60.0, max_retry_after: float | None = None) -> Path:
    """Fetch the UniMorph table of ``iso`` into the cache (atomic); returns its path. ``timeout`` and
    ``max_retry_after`` are `templates unimorph-fetch`'s --timeout and --max-retry-after, the options
    factatlas.http's deadline and throttle messages name."""
    from factatlas import __version__
    from factatlas.http import (
        DEFAULT_MAX_RETRY_AFTER_S,
        HttpPolicy,
        Throttled,
        Transient,
        Transport,
        parse_retry_after,
        retrying,
    )

    target = Path(cache_dir or default_cache_dir()) / f"{iso}.tsv"
    address = url.format(iso=iso)
    policy = HttpPolicy(timeout_s=timeout, max_retry_after_s=DEFAULT_MAX_RETRY_AFTER_S if max_retry_after is None
                        else max_retry_after)
    transport = Transport(policy, f"factatlas/{__version__} (UniMorph table download)")

    def fetch() -> bytes:
        response = transport.get(address)
        if response.status == 429:  # waits what the server asks, up to --max-retry-after
            raise Throttled(f"{response.url}: HTTP 429", parse_retry_after(response.header("Retry-After")))
        if response.status >= 500:
            raise Transient(f"{response.url}: HTTP {response.status}")
        if response.status != 200:
            raise FactatlasError(f"{response.url}: HTTP {response.status} {response.reason}")
        return response.body

    try:
        body = retrying(fetch, policy)
    except FactatlasError as e:  # the transport's and the retry loop's errors, all named
        raise FactatlasError(f"could not fetch the UniMorph table '{iso}' from {e}; check the code "
                             f"(ISO 639-3, e.g. 'rus') or download it by hand to {target}") from e
    with atomic_path(target) as tmp:
        tmp.write_bytes(body)
    return target


class UnimorphBackend:
    name = "unimorph"

    def __init__(self, cache_dir: str | os.PathLike | None = None, tables: dict[str, UnimorphTable] | None = None):
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._tables: dict[str, UnimorphTable | None] = dict(tables or {})

    def table(self, iso: str) -> UnimorphTable | None:
        if iso not in self._tables:
            path = self.cache_dir / f"{iso}.tsv"
            self._tables[iso] = UnimorphTable.load(path, iso) if path.is_file() else None
        return self._tables[iso]

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if features.article or features.preposition or features.particle:
            return None
        if features.is_plain or (features.case in (None, "nom") and features.number in (None, "sg")):
            return InflectionResult(label, NONE, self.name)
        spec = language_registry().get(lang)
        iso = spec.unimorph if spec and spec.unimorph else lang
        table = self.table(iso)
        if table is None:
            return InflectionResult(label, FAILED, self.name,
                                    f"no UniMorph table '{iso}' in {self.cache_dir}; fetch it with "
                                    f"`factatlas templates unimorph-fetch {iso}`")
        loc_tag = str(spec.options.get("loc_tag", "ESS")) if spec else "ESS"
        feats = unimorph_features(features, loc_tag)
        exact = table.lookup(label, feats)
        if exact is not None:
            return InflectionResult(exact, EXACT, self.name)
        words = label.split(" ")
        head_index = 0 if spec is not None and spec.head == "first" else len(words) - 1
        head = words[head_index]
        found = table.lookup(head, feats) if len(words) > 1 else None
        status, detail = EXACT, ""
        if found is None:
            guess = table.guess(head, feats)
            if guess is None:
                return InflectionResult(label, FAILED, self.name,
                                        f"'{label}' is not in the {iso} table and no analogy applies")
            found, detail = guess
            status = GUESSED
        words[head_index] = found
        # the other words agree as a phrase («Nowa Warszawa» -> «Nowej Warszawie»); inflecting the head
        # alone is not exact, so a word the table cannot agree makes the whole form a guess
        unknown = []
        for i, word in enumerate(words):
            if i == head_index:
                continue
            agreed = table.agree(word, feats)
            if agreed is None:
                unknown.append(word)
            else:
                words[i] = agreed
        if unknown:
            status = GUESSED
            detail = "; ".join(x for x in (detail, "left as written, agreement unknown: " + ", ".join(unknown)) if x)
        return InflectionResult(" ".join(words), status, self.name, detail)
