"""Templates: facts -> prompts (template language, morphology backends, translation bootstrap).

```python
from factatlas.templates import load_library, Renderer
lib = load_library(langs=("ru", "en"))
r = Renderer(entities)
r.render_prompt(lib.get("ru", "P19/1"), "Q7200")       # RenderedPrompt(text="Пушкин родился в [Y].")
r.render_answer(lib.get("ru", "P19/1"), "Q649", "Q7200")  # forms ("Москве", "Москва", ...)
```
"""

from typing import TYPE_CHECKING, Any

# Loaded on first use: the command line imports this package to register its commands, and `--help` should
# not pay for the renderer, the template language and the predicate tables.
_EXPORTS = {"Issue": "library", "LanguageFile": "library", "Library": "library", "Template": "library",
            "load_library": "library", "RenderedAnswer": "render", "RenderedPrompt": "render", "Renderer": "render",
            "RenderFailure": "render"}

__all__ = ["Issue", "LanguageFile", "Library", "RenderFailure", "RenderedAnswer", "RenderedPrompt", "Renderer",
           "Template", "load_library"]

if TYPE_CHECKING:
    from factatlas.templates.library import Issue, LanguageFile, Library, Template, load_library
    from factatlas.templates.render import RenderedAnswer, RenderedPrompt, Renderer, RenderFailure


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'factatlas.templates' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"factatlas.templates.{module}"), name)

from factatlas import require_namespaced  # noqa: E402

require_namespaced(__name__, "templates")
