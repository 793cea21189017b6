"""The verdict's coverage rule (PROBING.md "Validating a dataset"): rankings that leave prompts unranked, or
that the metrics had to skip, warn; only a whole ranking is information. The mutation sweep's
``verdict:check_coverage`` (WARN -> INFO) ran past its timeout behind the report's slow tests: this kills it
in a second."""

from __future__ import annotations

from factatlas.probe.verdict import INFO, WARN, check_coverage


def coverage(**changes) -> dict:
    return {"coverage": {"benchmark_prompts": 12, "eligible_prompts": 8, "other_kind_prompts": 4, "used": 8,
                         "coverage": 1.0, **changes}}


def test_every_eligible_prompt_ranked_is_information():
    check = check_coverage(coverage())
    assert (check.status, check.summary) == (INFO, "all 8 prompts ranked (4 prompts of another kind, e.g. "
                                                   "questions, are not used by this scoring rule)")


def test_prompts_left_unranked_warn_with_their_share():
    check = check_coverage(coverage(used=4, coverage=0.5))
    assert check.status == WARN and check.summary.startswith("4 of 8 prompts ranked (")


def test_rows_the_metrics_skipped_warn_and_are_named():
    check = check_coverage(coverage(unknown_prompt=2, duplicate_prompt=1))
    assert check.status == WARN and check.details == ("unknown_prompt: 2", "duplicate_prompt: 1")
