"""The built-in scoring rules, one registration each (``factatlas.probe.rule.register_rule``), grouped by the
model family they score. ``factatlas.probe.rule.RULES`` imports these modules on first use."""
