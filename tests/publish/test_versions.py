from __future__ import annotations

import pytest

from factatlas.errors import ConfigError
from factatlas.publish.versions import (
    Bump,
    Version,
    branch_release,
    bump_between,
    check_bump,
    check_new_version,
    moves_default_branch,
    previous_version,
    versions_from_tags,
)


@pytest.mark.parametrize("text,expected", [
    ("1.0.0", (1, 0, 0, ())), ("v2.10.3", (2, 10, 3, ())), ("1.1.0-rc.1", (1, 1, 0, ("rc", "1"))),
    ("0.0.1-alpha", (0, 0, 1, ("alpha",))),
])
def test_parse_valid(text, expected):
    v = Version.parse(text)
    assert (v.major, v.minor, v.patch, v.pre) == expected
    assert v.tag == "v" + text.removeprefix("v")


@pytest.mark.parametrize("text", ["1.0", "01.0.0", "1.0.0+build.1", "1.0.0-", "v", "1.0.0-01", "latest", "1.0.0 x"])
def test_parse_invalid_names_the_expected_shape(text):
    with pytest.raises(ConfigError, match="MAJOR.MINOR.PATCH"):
        Version.parse(text)


def test_semver_precedence():
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
               "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "10.0.0"]
    versions = [Version.parse(t) for t in ordered]
    assert sorted(reversed(versions)) == versions


def test_versions_from_tags_ignores_other_tags():
    assert [str(v) for v in versions_from_tags(["v1.1.0", "latest", "v1.0.0", "1.2.0", "vX"])] == ["1.0.0", "1.1.0"]


def test_bumps():
    v = Version.parse("1.2.3")
    assert [str(v.bumped(b)) for b in (Bump.PATCH, Bump.MINOR, Bump.MAJOR)] == ["1.2.4", "1.3.0", "2.0.0"]
    assert bump_between(v, Version.parse("2.0.0")) is Bump.MAJOR
    assert bump_between(v, Version.parse("1.3.0")) is Bump.MINOR
    assert bump_between(v, Version.parse("1.2.4")) is Bump.PATCH


def test_previous_version_is_the_greatest_below():
    existing = [Version.parse(t) for t in ("1.0.0", "1.1.0", "2.0.0")]
    assert previous_version(Version.parse("1.1.1"), existing) == Version.parse("1.1.0")
    assert previous_version(Version.parse("0.9.0"), existing) is None


def test_existing_version_is_refused_with_a_suggestion():
    existing = [Version.parse("1.0.0"), Version.parse("1.1.0")]
    with pytest.raises(ConfigError, match=r"git:x: version v1.0.0 already exists.*e.g. v1.1.1"):
        check_new_version(Version.parse("1.0.0"), existing, "git:x")
    check_new_version(Version.parse("1.2.0"), existing, "git:x")  # no error


def test_check_bump():
    v1 = Version.parse("1.0.0")
    assert check_bump(v1, Version.parse("1.0.1"), Bump.MAJOR) == (
        "v1.0.0 -> v1.0.1 is a patch step but the changes need a major bump: publish v2.0.0")
    assert check_bump(v1, Version.parse("1.1.0"), Bump.MINOR) is None
    assert check_bump(v1, Version.parse("2.0.0"), Bump.PATCH) is None
    assert check_bump(None, v1, Bump.MAJOR) is None
    assert check_bump(v1, Version.parse("1.0.1-rc.1"), Bump.MAJOR) is None


def test_the_default_branch_holds_the_highest_final_release_and_only_a_higher_one_moves_it():
    v = Version.parse
    existing = [v("1.0.0"), v("1.1.0"), v("2.0.0-rc.1")]
    assert branch_release(existing) == v("1.1.0")  # a pre-release above the finals is tagged only
    assert branch_release([v("1.0.0-rc.1"), v("1.0.0-rc.2")]) == v("1.0.0-rc.2")  # no final yet
    assert branch_release([]) is None
    assert moves_default_branch(v("1.2.0"), existing)
    assert not moves_default_branch(v("1.1.0"), existing)  # the same version again moves nothing
    assert not moves_default_branch(v("1.0.1"), existing)  # a backport
    assert not moves_default_branch(v("2.0.0-rc.2"), existing)  # a pre-release after a final release
    assert moves_default_branch(v("1.0.0-rc.2"), [v("1.0.0-rc.1")])  # no final yet: the highest pre-release
    assert not moves_default_branch(v("1.0.0-rc.1"), [v("1.0.0-rc.1")])
