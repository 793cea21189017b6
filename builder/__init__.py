"""Build: curated facts + rendered prompts -> multi-parallel benchmark (splits, candidates, stats).

```python
from factatlas.builder import load_benchmark
bench = load_benchmark("runs/arab-west")        # or the build/ folder itself
bench.meta["languages"], bench.prompts[0]["text"], bench.facts[0], bench.entities["Q85"]
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factatlas.builder.benchmark import Benchmark, load_benchmark
    from factatlas.builder.stats import predicate_entropy

__all__ = ["Benchmark", "load_benchmark", "predicate_entropy"]


def __getattr__(name: str) -> Any:  # lazy: `factatlas --help` must not import pyarrow
    if name in ("Benchmark", "load_benchmark"):
        from factatlas.builder import benchmark

        return getattr(benchmark, name)
    if name == "predicate_entropy":
        from factatlas.builder.stats import predicate_entropy

        return predicate_entropy
    raise AttributeError(f"module 'factatlas.builder' has no attribute {name!r}")

from factatlas import require_namespaced  # noqa: E402

require_namespaced(__name__, "builder")
