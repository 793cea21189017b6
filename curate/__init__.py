"""Curate: Wikidata -> facts (cultures, predicates, SPARQL, endpoints, popularity, augmentation)."""

from factatlas import require_namespaced  # noqa: E402

require_namespaced(__name__, "curate")
