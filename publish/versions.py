"""Semantic versions of releases: parsing, ordering, tags, and the bump a diff calls for.

A release version is ``MAJOR.MINOR.PATCH`` with an optional pre-release (``1.0.0-rc.1``); its git/Hub
tag is ``v`` + the version. Build metadata (``+...``) is refused: two tags differing only in build
metadata would have equal precedence, and a version must name exactly one release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import total_ordering

from factatlas.errors import ConfigError

_NUM = r"0|[1-9][0-9]*"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
SEMVER_RE = re.compile(rf"^v?(?P<major>{_NUM})\.(?P<minor>{_NUM})\.(?P<patch>{_NUM})"
                       rf"(?:-(?P<pre>{_PRE_ID}(?:\.{_PRE_ID})*))?$")
TAG_PREFIX = "v"


class Bump(StrEnum):
    NONE = "none"
    PATCH = "patch"
    MINOR = "minor"
    MAJOR = "major"

    @property
    def weight(self) -> int:
        return ("none", "patch", "minor", "major").index(self.value)


@total_ordering
@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Version:
        """``"1.2.3"``, ``"v1.2.3"`` or ``"1.2.3-rc.1"``; ConfigError with the expected shape otherwise."""
        m = SEMVER_RE.match(text.strip())
        if not m:
            raise ConfigError(f"invalid version '{text}': expected a semantic version MAJOR.MINOR.PATCH "
                              "such as 1.0.0 or 1.1.0-rc.1 (no leading zeros, no build metadata)")
        pre = tuple(m["pre"].split(".")) if m["pre"] else ()
        return cls(int(m["major"]), int(m["minor"]), int(m["patch"]), pre)

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(self.pre) if self.pre else "")

    @property
    def tag(self) -> str:
        return TAG_PREFIX + str(self)

    def _key(self) -> tuple:
        # semver precedence: a pre-release sorts before its release; numeric ids before alphanumeric ones
        pre_key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre_key)

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()

    def bumped(self, bump: Bump) -> Version:
        if bump is Bump.MAJOR:
            return Version(self.major + 1, 0, 0)
        if bump is Bump.MINOR:
            return Version(self.major, self.minor + 1, 0)
        if bump is Bump.PATCH:
            return Version(self.major, self.minor, self.patch + 1)
        return self


def versions_from_tags(tags: list[str] | tuple[str, ...]) -> list[Version]:
    """The release versions among a repository's tags (other tags are ignored), ascending."""
    out = []
    for t in tags:
        if t.startswith(TAG_PREFIX) and SEMVER_RE.match(t):
            out.append(Version.parse(t))
    return sorted(out)


def bump_between(old: Version, new: Version) -> Bump:
    """The kind of step from ``old`` to ``new`` (``new`` must be greater)."""
    if new.major != old.major:
        return Bump.MAJOR
    if new.minor != old.minor:
        return Bump.MINOR
    if new.patch != old.patch:
        return Bump.PATCH
    return Bump.NONE


def previous_version(new: Version, existing: list[Version]) -> Version | None:
    """The release ``new`` follows: the greatest existing version below it (None for a first release)."""
    below = [v for v in existing if v < new]
    return max(below) if below else None


def moves_default_branch(new: Version, existing: list[Version]) -> bool:
    """Whether releasing ``new`` may move the default branch: a final version above every existing final
    one, or, while no final release exists, a pre-release above every existing one. A backport (1.1.0
    after 2.0.0) or a pre-release after a final release is tagged, but readers of the default branch keep
    the highest release."""
    finals = [v for v in existing if not v.pre]
    if new.pre:
        return not finals and all(new > v for v in existing)
    return all(new > v for v in finals)


def branch_release(existing: list[Version]) -> Version | None:
    """The release the default branch holds under ``moves_default_branch``."""
    finals = [v for v in existing if not v.pre]
    return max(finals) if finals else max(existing, default=None)


def check_new_version(new: Version, existing: list[Version], where: str) -> None:
    """Refuse a version that already exists at ``where``: tags are never moved or overwritten."""
    if new in existing:
        listed = ", ".join(v.tag for v in existing)
        raise ConfigError(f"{where}: version {new.tag} already exists and releases are never overwritten "
                          f"(existing: {listed}). Publish a new version instead, e.g. "
                          f"{max(existing).bumped(Bump.PATCH).tag}.")


def check_bump(previous: Version | None, new: Version, needed: Bump) -> str | None:
    """An explanation when the step previous -> new is smaller than what the changes need, else None."""
    if previous is None or needed is Bump.NONE:
        return None
    if new.pre or previous.pre:  # pre-releases are previews; any step to or from them is allowed
        return None
    step = bump_between(previous, new)
    if step.weight >= needed.weight:
        return None
    return (f"{previous.tag} -> {new.tag} is a {step.value} step but the changes need a {needed.value} "
            f"bump: publish {previous.bumped(needed).tag}")
