"""Curate: Wikidata -> facts (cultures, predicates, SPARQL, endpoints, popularity, augmentation)."""
