"""Probe: prompts x model -> rankings -> metrics -> validation report."""

from factatlas import require_namespaced  # noqa: E402

require_namespaced(__name__, "probe")
