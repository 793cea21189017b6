"""Augmentation graphs (networkx): P279 superclass chains and P131 containing-area chains.

Edges point from the narrower item to the broader one (sub -> super, place -> containing area).

Stopping rule for containing areas: walk P131 upward from a place and stop *before* any country (an
entity whose P31 reaches Q6256, or one of the culture's countries): the country is never added, and the
walk does not continue above it. "Spain" is never a valid birthplace; "Madrid" and "Community of Madrid"
are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import networkx as nx

from factatlas.records import id_order


def closure_edges(starts: Iterable[str],
                  parent_edges: Callable[[Sequence[str]], Iterable[tuple[str, str]]]) -> list[tuple[str, str]]:
    """Every (sub, super) edge on the chains above ``starts``: the edges out of the starts, then out of each
    super not yet seen, one hop at a time until none is new (cycles end there). ``parent_edges(items)`` gives
    the edges out of ``items`` (one batched query per hop); the result is the edge set that
    ``?start wdt:P279* ?sub . ?sub wdt:P279 ?super`` answers, in the order found."""
    seen = dict.fromkeys(starts)
    frontier = list(seen)
    edges: list[tuple[str, str]] = []
    while frontier:
        found: list[str] = []
        for sub, sup in parent_edges(frontier):
            edges.append((sub, sup))
            if sup not in seen:
                seen[sup] = None
                found.append(sup)
        frontier = sorted(found, key=id_order)
    return edges


def build_graph(edges: Iterable[tuple[str, str]]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_edges_from(edges)
    return g


def superclasses(graph: nx.DiGraph, item: str) -> list[str]:
    """Every P279 ancestor of ``item`` (not the item itself), in QID order."""
    if item not in graph:
        return []
    return sorted((n for n in nx.descendants(graph, item) if n != item), key=id_order)


def containing_areas(graph: nx.DiGraph, place: str, is_country: Callable[[str], bool]) -> list[str]:
    """P131 ancestors of ``place`` up to, and excluding, the first country on each chain."""
    if place not in graph:
        return []
    seen: set[str] = set()
    frontier = [place]
    while frontier:
        node = frontier.pop()
        for parent in graph.successors(node):
            if parent in seen or parent == place or is_country(parent):
                continue
            seen.add(parent)
            frontier.append(parent)
    return sorted(seen, key=id_order)
