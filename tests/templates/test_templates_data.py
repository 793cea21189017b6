"""The data files under templates/data/: well-formed, no duplicate keys, only known types and values."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from factatlas.predicates import load_predicates
from factatlas.templates.backend_registry import BACKEND_NAMES
from factatlas.templates.morphology import ALL_FEATURES, language_registry
from factatlas.templates.predicates import PREDICATES


class _StrictLoader(yaml.SafeLoader):
    """Rejects duplicate keys, which PyYAML would otherwise silently overwrite."""


def _mapping(loader, node, deep=False):
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    dups = sorted({str(k) for k in keys if keys.count(k) > 1})
    if dups:
        raise yaml.constructor.ConstructorError(None, None, f"duplicate keys {dups}", node.start_mark)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(name: str):
    text = resources.files("factatlas.templates").joinpath(f"data/{name}").read_text("utf-8")
    return yaml.load(text, _StrictLoader)  # noqa: S506 - a SafeLoader subclass


@pytest.mark.parametrize("name", ["languages.yaml", "genders.yaml", "articles.yaml", "classes.yaml"])
def test_no_duplicate_keys(name):
    assert load(name)


def test_template_data_speaks_the_registry_vocabulary():
    # one vocabulary of types: what curate type-checks with is what templates key their data on
    registry = {t.name for spec in load_predicates().values() for t in (spec.subject_type, spec.object_type)}
    assert set(load("classes.yaml")) <= registry
    assert {p.subject_type for p in PREDICATES.values()} | {p.object_type for p in PREDICATES.values()} <= registry
    assert PREDICATES["P19"].object_type == load_predicates()["P19"].object_type.name == "settlement"
    for lang, spec in load("articles.yaml").items():
        for key in ("article_types", "common_head_types"):
            assert set(spec.get(key, ())) <= registry, (lang, key)
    for lang, spec in load("genders.yaml").items():
        assert set(spec.get("classes", {})) <= registry, lang


def test_gender_values_and_types_are_known():
    types = set(load("classes.yaml")) | {p.subject_type for p in PREDICATES.values()} | {
        p.object_type for p in PREDICATES.values()}
    for lang, spec in load("genders.yaml").items():
        assert lang in language_registry(), lang
        for table in ("classes", "lexicon", "suffixes"):
            for key, value in spec.get(table, {}).items():
                assert set(value.split(".")) <= {"masc", "fem", "neut", "pl"}, (lang, table, key, value)
                if table == "classes":
                    assert key in types, (lang, key)


def test_registry_backends_and_features_are_known():
    for code, spec in language_registry().items():
        assert spec.backend in BACKEND_NAMES, code
        assert spec.features <= set(ALL_FEATURES), code
