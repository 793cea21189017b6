"""Build: curated facts + rendered prompts -> multi-parallel benchmark (splits, candidates, stats).

The build stage writes the benchmark directory (``factatlas.builder.benchmark.write_benchmark``); every
stage reads it back with the core's one reader:

```python
from factatlas.benchmark import Benchmark
bench = Benchmark.open("runs/arab-west")        # or the build/ folder itself, or a release folder
bench.meta["languages"], bench.prompts[0].text, bench.facts[0], bench.entities["Q85"]
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factatlas.entropy import predicate_entropy

__all__ = ["predicate_entropy"]


def __getattr__(name: str) -> Any:  # lazy: `factatlas --help` must not import pyarrow
    if name == "predicate_entropy":
        from factatlas.entropy import predicate_entropy

        return predicate_entropy
    raise AttributeError(f"module 'factatlas.builder' has no attribute {name!r}")

from factatlas import require_namespaced  # noqa: E402

require_namespaced(__name__, "builder")
