"""The comparisons the field publishes, computed from rankings that already exist (no re-probing).

Every analysis is a pure function over ``factatlas.records.ScoredPrompt`` records, aggregated by
``factatlas.probe.aggregate``; one adapter (``records.read_model_results``) turns a run's files into them. ``factatlas compare`` writes
the tables (markdown, CSV) and an HTML page; definitions and the papers they follow: docs/metrics.md.
"""
