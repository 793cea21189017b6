"""Control characters in template text (issue 11): a NUL or other control character written as a YAML
escape is refused with file:line:col; a raw one is refused by the shared YAML reader with its place."""

from __future__ import annotations

import pytest

from factatlas.errors import ConfigError
from factatlas.templates.library import load_library, read_language_file
from factatlas.templates.validate import validate_file
from tests.templates.test_templates_validate import HEADER, col, entry, write


@pytest.mark.parametrize(("escape", "code"), [("\\0", "0000"), ("\\t", "0009"), ("\\x1b", "001B"),
                                             ("\\x7f", "007F"), ("\\x85", "0085")])
def test_escaped_control_character_in_text_is_an_issue_at_its_place(tmp_path, escape, code):
    path = write(tmp_path, "en", "  P36:\n" + entry("P36/1", f"The capital of [X]{escape} is [Y]."))
    issues = [str(i) for i in validate_file(read_language_file(path, display_path=path.name))]
    where = f"en.yaml:8:{col(path, 8, escape)}"
    assert f"{where}: control character U+{code} in template text" in "\n".join(issues)
    with pytest.raises(ConfigError, match=f"U\\+{code}"):
        load_library(["en"], root=tmp_path)


def test_raw_nul_in_the_file_is_refused_with_its_place(tmp_path):
    path = tmp_path / "en.yaml"
    path.write_text(HEADER["en"] + "  P36:\n" + entry("P36/1", "The capital of [X]\0 is [Y]."), "utf-8")
    with pytest.raises(ConfigError, match=r"en\.yaml:8:\d+: not valid YAML: control character U\+0000"):
        load_library(["en"], root=tmp_path)


def test_clean_text_has_no_control_character_issue(tmp_path):
    path = write(tmp_path, "en", "  P36:\n" + entry("P36/1", "The capital of [X] is [Y]."))
    assert not [i for i in validate_file(read_language_file(path)) if i.code == "control-character"]
