"""Probe: prompts x model -> rankings -> metrics -> validation report."""
