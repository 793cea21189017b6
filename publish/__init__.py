"""Publish: benchmark -> versioned dataset release (Hub or git), diffs between versions."""
