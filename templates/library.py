"""The template library: every language's template file (``templates/lang/<lang>.yaml``, or a user folder's
overlay), loaded and validated.

``load_library(langs=("ar", "en"))`` reads ``templates/lang/<lang>.yaml``, validates every file
(factatlas.templates.validate) and raises one ``ConfigError`` listing every problem as
``path:line:col: message; fix: hint``. One file's reading and its records are
factatlas.templates.language_file (importable from here too).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from factatlas.errors import ConfigError
from factatlas.templates.language_file import (  # noqa: F401 (the records and the reader, importable here)
    FILE_KEYS,
    KINDS,
    STATUSES,
    TEMPLATE_KEYS,
    Issue,
    LanguageFile,
    Template,
    TextAnchor,
    read_language_file,
)

# ---- the library -------------------------------------------------------------------------------

def templates_dir() -> Path:
    return Path(str(resources.files("factatlas.templates").joinpath("lang")))


def available_languages(root: str | os.PathLike | None = None) -> tuple[str, ...]:
    folder = Path(root) if root else templates_dir()
    if not folder.is_dir():
        return ()
    return tuple(sorted(p.name.removesuffix(".yaml") for p in folder.glob("*.yaml")))


@dataclass(frozen=True)
class Library:
    files: dict[str, LanguageFile]
    # lang -> (the file's templates, id -> its first template): ``get`` looks a template up instead of scanning
    # the file (the build asks 200,000 times); rebuilt when a language's templates tuple is not the one indexed
    _by_id: dict[str, tuple[tuple[Template, ...], dict[str, Template]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted(self.files))

    def file(self, lang: str) -> LanguageFile:
        if lang not in self.files:
            from factatlas.errors import unknown

            raise ConfigError(unknown("template language", lang, self.files))
        return self.files[lang]

    def templates(self, lang: str, predicate: str | None = None, kind: str | None = None) -> tuple[Template, ...]:
        return tuple(t for t in self.file(lang).templates
                     if (predicate is None or t.predicate == predicate) and (kind is None or t.kind == kind))

    def get(self, lang: str, template_id: str) -> Template | None:
        templates = self.file(lang).templates
        indexed = self._by_id.get(lang)
        if indexed is None or indexed[0] is not templates:
            by_id: dict[str, Template] = {}
            for t in templates:
                by_id.setdefault(t.id, t)
            indexed = self._by_id[lang] = (templates, by_id)
        return indexed[1].get(template_id)

    def predicates(self, lang: str) -> tuple[str, ...]:
        return tuple(sorted({t.predicate for t in self.file(lang).templates}, key=lambda p: int(p[1:] or 0)
                            if p[1:].isdigit() else 0))

    def template_ids(self, lang: str) -> tuple[str, ...]:
        return tuple(t.id for t in self.file(lang).templates)


def overlay_files(langs: Sequence[str] | None, root: str | os.PathLike | None) -> list[Path]:
    """The template file of each language: ``root/<lang>.yaml`` when the user folder has it, else the
    packaged one. ConfigError naming both folders for a language neither has."""
    packaged = templates_dir()
    user = Path(root) if root else None
    if user is not None and not user.is_dir():
        raise ConfigError(f"--templates-dir {user}: no such folder; give a folder of <lang>.yaml template files")
    mine = set(available_languages(user)) if user is not None else set()
    have = tuple(sorted(mine | set(available_languages(packaged))))
    wanted = tuple(langs) if langs is not None else have
    missing = [lang for lang in wanted if lang not in have]
    if missing:
        from factatlas.errors import unknown

        where = f"{user / (missing[0] + '.yaml')} nor {packaged / (missing[0] + '.yaml')}" if user else \
            f"{packaged / (missing[0] + '.yaml')}"
        raise ConfigError(unknown("template language", missing[0], have) +
                          f" (no {where}); write it or drop the language")
    return [(user if lang in mine else packaged) / f"{lang}.yaml" for lang in wanted]


def load_library(langs: Sequence[str] | None = None, root: str | os.PathLike | None = None,
                 paths: Iterable[str | os.PathLike] | None = None, validate: bool = True) -> Library:
    """Load (and by default validate) template files; raises ConfigError listing every problem.

    ``langs``: languages to load (None = all). ``root``: a user folder laid over the packaged
    templates/lang/: a language whose ``<lang>.yaml`` is in ``root`` comes from there, every other one
    from the package, so a user adds or overrides one language without copying the others.
    ``paths``: explicit files instead (their stems are the languages).
    """
    files = [Path(p) for p in paths] if paths is not None else overlay_files(langs, root)
    loaded: dict[str, LanguageFile] = {}
    problems: list[Issue] = []
    for f in files:
        lf = read_language_file(f)
        problems.extend(lf.issues)
        if validate:
            from factatlas.templates.validate import validate_file

            problems.extend(validate_file(lf, structural=False))
        loaded[lf.stem] = lf
    if problems:
        head = f"{len(problems)} problem(s) in template files:\n" if len(problems) > 1 else ""
        raise ConfigError(head + "\n".join(str(p) for p in problems))
    return Library(loaded)
