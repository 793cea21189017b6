"""Templates: facts -> prompts (template language, morphology backends, translation bootstrap).

```python
from factatlas.templates import load_library, Renderer
lib = load_library(langs=("ru", "en"))
r = Renderer(entities)
r.render_prompt(lib.get("ru", "P19/1"), "Q7200")       # RenderedPrompt(text="Пушкин родился в [Y].")
r.render_answer(lib.get("ru", "P19/1"), "Q649", "Q7200")  # forms ("Москве", "Москва", ...)
```
"""

from factatlas.templates.library import Issue, LanguageFile, Library, Template, load_library
from factatlas.templates.render import RenderedAnswer, RenderedPrompt, Renderer, RenderFailure

__all__ = ["Issue", "LanguageFile", "Library", "RenderFailure", "RenderedAnswer", "RenderedPrompt", "Renderer",
           "Template", "load_library"]

from factatlas import require_namespaced  # noqa: E402

require_namespaced(__name__, "templates")
