"""Publish: benchmark -> versioned dataset release (Hub or git), diffs between versions.

Modules (flat):
    source      ``load_source``: the core's release reader (``factatlas.release_input``) + the template library
    render      ``render_release(source, ReleaseOptions, previous_files) -> Release`` (pure, deterministic)
    card        dataset card: YAML via huggingface_hub.DatasetCardData + a body built from the data
    diff        ``snapshot_from_files`` / ``diff_snapshots`` -> ``ReleaseDiff`` (+ CHANGELOG text, bump)
    versions    semantic versions, tags, bump rules
    publishers  ``GitPublisher`` and ``HubPublisher`` behind the ``Publisher`` protocol; ``read_ref``
    workflow    ``publish(run, repo=, version=, target=, dry_run=)`` and ``diff_refs(old, new)``
    cli         the ``factatlas publish`` and ``factatlas diff`` commands
"""

from factatlas import require_namespaced  # noqa: E402

require_namespaced(__name__, "publish")
