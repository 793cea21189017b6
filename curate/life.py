"""Life status of a person, decided from Wikidata statements by one deterministic rule.

Templates agree with it (``{X: alive=is | dead=was | other=...}``): a sentence about a person is true in
the present tense only while they live. Wikidata has no "alive" statement, so:

- **dead** when the person has a date of death (P570, any value, an unknown one included) or a place of
  death (P20);
- **alive** when neither is recorded and a date of birth (P569) lies within ``alive_within_years`` of
  the run's ``reference_date`` (both recorded in the run's config; the earliest birth date counts when
  there are several);
- **unknown** otherwise (no birth date, or born earlier): the template's life-free forms, true of both,
  are used.

Why the living are decided at all rather than left unknown: a benchmark about musicians and footballers
who are alive would otherwise state every fact about them in a form written for both (a past or perfect),
which reads as if they had died; and a death is what Wikidata records fastest for notable people, so a
person born within a century with no death recorded is alive in nearly every case. The few who died
unrecorded are stated in the present, as Wikidata itself would state them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from factatlas.records import Life

DEFAULT_ALIVE_WITHIN_YEARS = 100
_YEAR = re.compile(r"^([+-]?)(\d{1,})-(\d\d)-(\d\d)")


def birth_date(value: str) -> date | None:
    """A date from an xsd:dateTime literal (``1958-08-16T00:00:00Z``); None for a year before 1 or after 9999,
    an unknown value (a blank node) or a malformed literal."""
    m = _YEAR.match(value.strip())
    if not m or m.group(1) == "-":
        return None
    year, month, day = int(m.group(2)), max(int(m.group(3)), 1), max(int(m.group(4)), 1)
    if not 1 <= year <= 9999:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return date(year, month, 1)


def life_status(deaths: Iterable[str], death_places: Iterable[str], births: Iterable[str], reference: date,
                alive_within_years: int = DEFAULT_ALIVE_WITHIN_YEARS) -> tuple[Life, str]:
    """(status, source) by the module's rule: source ``P570``, ``P20``, ``P569:within-<N>y`` or ``""``."""
    if any(True for _ in deaths):
        return Life.DEAD, "P570"
    if any(True for _ in death_places):
        return Life.DEAD, "P20"
    dates = [d for d in (birth_date(b) for b in births) if d is not None]
    if dates:
        born = min(dates)
        try:
            limit = reference.replace(year=reference.year - alive_within_years)
        except ValueError:  # 29 February
            limit = reference.replace(year=reference.year - alive_within_years, day=28)
        if born >= limit:
            return Life.ALIVE, f"P569:within-{alive_within_years}y"
    return Life.UNKNOWN, ""
