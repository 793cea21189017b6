"""Translation bootstrap with deterministic local translators (no network): voting, repair, cache."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import pytest
import yaml

from factatlas.templates.library import Template, read_language_file
from factatlas.templates.translate import (
    CachedTranslator,
    TranslationBackend,
    draft_document,
    dump_yaml,
    normalise,
    placeholder_problem,
    repair_placeholders,
    to_source_text,
    translate_templates,
    vote,
)
from factatlas.templates.validate import validate_file
from tests.clirun import factatlas


class PhraseTranslator:
    """A real translator for a tiny English -> Swahili/Russian phrasebook: word-by-word with phrase rules.

    ``style`` varies the output the way different MT systems do (spacing, casing, mangled placeholders)."""

    PHRASES = {
        ("en", "sw"): {"was born in": "alizaliwa", "died in": "alifariki", "is the capital of": "ni mji mkuu wa",
                       "is a citizen of": "ni raia wa", "plays the": "anapiga",
                       "Where was [X] born?": "[X] alizaliwa wapi?"},
        ("en", "ru"): {"was born in": "родился в", "died in": "умер в", "is the capital of": "— столица"},
    }

    def __init__(self, name: str, style: str = "plain"):
        self.name, self.style = name, style
        self.calls: list[tuple[str, ...]] = []

    def translate(self, texts: Sequence[str], src: str, dst: str) -> list[str]:
        self.calls.append(tuple(texts))
        out = []
        for text in texts:
            t = text
            for en, tr in sorted(self.PHRASES[(src, dst)].items(), key=lambda kv: -len(kv[0])):
                t = t.replace(en, tr)
            if self.style == "spaced":
                t = t.replace("[X]", "[ X ]").replace("[Y]", "[ Y ]").upper()
            elif self.style == "fullwidth":
                t = t.replace("[X]", "［Ｘ］").replace("[Y]", "［Ｙ］")
            elif self.style == "cyrillic":
                t = t.replace("[X]", "[Х]").replace("[Y]", "[У]")
            elif self.style == "lossy":
                t = t.replace("[Y]", "")
            out.append(t)
        return out


class Broken:
    name = "broken"

    def translate(self, texts, src, dst):
        raise OSError("service unreachable")


def tpl(tid: str, text: str, kind: str = "cloze", predicate: str = "P19") -> Template:
    return Template(tid, "en", predicate, kind, text, "reviewed", "human")


TEMPLATES = [tpl("P19/1", "[X] was born in [Y]."), tpl("P20/1", "[X] died in [Y].", predicate="P20"),
             tpl("P36/1", "[Y] is the capital of [X].", predicate="P36"),
             tpl("P19/q1", "Where was [X] born?", "question")]


def test_protocol_is_implemented_by_the_local_translator():
    assert isinstance(PhraseTranslator("a"), TranslationBackend)


def test_source_text_strips_features_and_uses_the_neutral_agreement_form():
    t = Template("P19/1", "fr", "P19", "cloze", "[X] est {X: masc=né | fem=née | other=né(e)} [Y.a].", "reviewed", "")
    assert to_source_text(t) == "[X] est né(e) [Y]."


@pytest.mark.parametrize(("mangled", "fixed"), [
    ("[x] alizaliwa [y].", "[X] alizaliwa [Y]."),
    ("[ X ] alizaliwa [ Y ].", "[X] alizaliwa [Y]."),
    ("［Ｘ］ alizaliwa ［Ｙ］.", "[X] alizaliwa [Y]."),
    ("[Х] родился в [У].", "[X] родился в [Y]."),
    ("[엑스]는 [와이]에서 태어났다.", "[X]는 [Y]에서 태어났다."),
    ("(X) was born in (Y).", "[X] was born in [Y]."),
])
def test_placeholder_repair(mangled, fixed):
    assert repair_placeholders(mangled) == fixed


def test_placeholder_checks():
    assert placeholder_problem("[X] alizaliwa [Y].", "cloze") is None
    assert placeholder_problem("[X] alizaliwa.", "cloze") == "[Y] occurs 0 times"
    assert placeholder_problem("[X] [Y] [Y]", "cloze") == "[Y] occurs 2 times"
    assert placeholder_problem("alizaliwa [Y]", "cloze") == "[X] lost"
    assert placeholder_problem("[X] [Y]?", "question") == "[Y] appeared in a question"


def test_vote_keeps_agreement_of_two_after_normalisation():
    v = vote({"a": "[X] alizaliwa [Y].", "b": "[ X ] ALIZALIWA [ Y ]", "c": "[X] alizaliwa huko [Y]."}, "cloze")
    assert (v.text, v.voters) == ("[X] alizaliwa [Y].", ("a", "b"))
    assert normalise("[X]  Alizaliwa [Y] .") == normalise("[x] alizaliwa [y]".replace("x", "X").replace("y", "Y"))
    none = vote({"a": "[X] alizaliwa [Y].", "b": "[X] alizaliwa huko [Y]."}, "cloze")
    assert none.text is None and none.reason.startswith("no-agreement")
    lost = vote({"a": "[X] alizaliwa.", "b": "alizaliwa [Y]."}, "cloze")
    assert lost.text is None and lost.reason == "placeholder-lost: a: [Y] occurs 0 times; b: [X] lost"


def test_translate_templates_end_to_end(tmp_path):
    backends = [PhraseTranslator("alpha"), PhraseTranslator("beta", "spaced"), PhraseTranslator("gamma", "lossy")]
    result = translate_templates(TEMPLATES, "sw", backends)
    kept = {e["id"]: e for _, e in result.kept}
    assert kept["P19/1"] == {"id": "P19/1", "text": "[X] alizaliwa [Y].", "status": "draft", "source": "mt:alpha+beta"}
    assert kept["P36/1"]["text"] == "[Y] ni mji mkuu wa [X]."
    # the question has no [Y]: the lossy system agrees too
    assert kept["P19/q1"] == {"id": "P19/q1", "kind": "question", "text": "[X] alizaliwa wapi?", "status": "draft",
                              "source": "mt:alpha+beta+gamma"}
    assert result.dropped == []
    assert result.counts == {"kept": 4}
    doc = draft_document(result, name="Swahili")
    assert doc["scripts"] == ["Latin"] and list(doc["templates"]) == ["P19", "P20", "P36"]
    path = tmp_path / "sw.yaml"
    path.write_text(dump_yaml(doc), "utf-8")
    assert validate_file(read_language_file(path)) == []  # the draft file is valid as written
    assert yaml.safe_load(path.read_text("utf-8"))["templates"]["P19"][0]["status"] == "draft"


def test_single_system_or_disagreement_is_dropped_with_reasons():
    result = translate_templates(TEMPLATES[:1], "sw", [PhraseTranslator("alpha"), Broken()])
    assert result.kept == []
    assert result.dropped == [("P19/1", "no-agreement: 1 different translations, need 2 equal")]
    dead = translate_templates(TEMPLATES[:1], "sw", [Broken()])
    assert dead.dropped == [("P19/1", "backend-error: broken: OSError: service unreachable")]
    assert dead.counts == {"kept": 0, "dropped/backend-error": 1}


def test_repaired_placeholders_vote_together():
    result = translate_templates(TEMPLATES[:1], "ru", [PhraseTranslator("a", "fullwidth"),
                                                       PhraseTranslator("b", "cyrillic")])
    assert [e for _, e in result.kept] == [{"id": "P19/1", "text": "[X] родился в [Y].", "status": "draft",
                                            "source": "mt:a+b"}]


def test_cache_answers_repeats_without_calling_the_backend(tmp_path):
    inner = PhraseTranslator("alpha")
    cached = CachedTranslator(inner, tmp_path)
    first = cached.translate(["[X] was born in [Y].", "[X] died in [Y]."], "en", "sw")
    again = CachedTranslator(PhraseTranslator("alpha"), tmp_path)
    assert again.translate(["[X] died in [Y]."], "en", "sw") == [first[1]]
    assert again.calls == 0 and cached.calls == 2 and len(inner.calls) == 1
    stored = json.loads((tmp_path / "alpha" / "en-sw.json").read_text("utf-8"))
    assert stored == {"[X] was born in [Y].": "[X] alizaliwa [Y].", "[X] died in [Y].": "[X] alifariki [Y]."}


def alpha() -> PhraseTranslator:
    return PhraseTranslator("alpha")


def beta() -> PhraseTranslator:
    return PhraseTranslator("beta", "spaced")


def test_cli_translate_writes_a_valid_draft_file(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from factatlas.app.cli import app

    folder = tmp_path / "lang"
    folder.mkdir()
    (folder / "en.yaml").write_text(
        "lang: en\nname: English\nscripts: [Latin]\ngenders: []\ntemplates:\n  P19:\n"
        "    - {id: P19/1, text: \"[X] was born in [Y].\", status: reviewed, source: human, timeless: a birth}\n"
        "    - {id: P19/2, text: \"[X] is from [Y].\", status: reviewed, source: human, timeless: a birth}\n", "utf-8")
    out = tmp_path / "sw.yaml"
    monkeypatch.setattr("factatlas.templates.library.templates_dir", lambda: folder)
    result = CliRunner().invoke(app, ["templates", "translate", "--from", "en", "--to", "sw",
                                      "--backend", "tests.templates.test_templates_translate:alpha",
                                      "--backend", "tests.templates.test_templates_translate:beta",
                                      "--out", str(out), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(out.read_text("utf-8"))
    # P19/2 came back as its English source from both systems: not a translation, not kept
    assert doc["templates"]["P19"] == [
        {"id": "P19/1", "text": "[X] alizaliwa [Y].", "status": "draft", "source": "mt:alpha+beta"},
    ]
    assert validate_file(read_language_file(out)) == []
    assert (tmp_path / "cache" / "alpha" / "en-sw.json").is_file()


def test_text_returned_unchanged_is_not_a_translation():
    english = tpl("P19/2", "[X] is from [Y].")
    result = translate_templates([english], "sw", [PhraseTranslator("alpha"), PhraseTranslator("beta", "spaced")])
    assert result.kept == []
    assert result.dropped == [("P19/2", "untranslated: alpha, beta returned the source text unchanged")]
    assert result.counts == {"kept": 0, "dropped/untranslated": 1}


class Offline:
    """What googletrans raises without a network: httpx's ConnectError, which is not an OSError."""

    name = "offline"

    def translate(self, texts, src, dst):
        import httpx

        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution")


def test_no_network_is_a_backend_error_per_template_not_a_crash():
    dead = translate_templates(TEMPLATES[:2], "sw", [Offline(), Broken()])
    assert dead.dropped == [
        (t.id, "backend-error: offline: ConnectError: [Errno -3] Temporary failure in name resolution; "
               "broken: OSError: service unreachable") for t in TEMPLATES[:2]]


def offline() -> Offline:
    return Offline()


def test_cli_nothing_kept_exits_non_zero_and_writes_no_file(tmp_path):
    out = tmp_path / "sw.yaml"
    done = factatlas("templates", "translate", "--from", "en", "--to", "sw",
                     "--backend", "tests.templates.test_templates_translate:offline",
                     "--backend", "tests.templates.test_templates_translate:offline",
                     "--out", out, "--cache", tmp_path / "cache")
    assert done.returncode == 1
    assert not out.exists()
    assert "dropped P19/1: backend-error: offline: ConnectError:" in done.stderr
    assert "Traceback" not in done.stderr
    assert f"error: no template of en was kept for sw; nothing written (no {out})" in done.stderr


def test_missing_googletrans_names_the_extra(monkeypatch):
    from factatlas.errors import ConfigError
    from factatlas.templates.translate import make_translator

    monkeypatch.setitem(sys.modules, "googletrans", None)  # not importable
    with pytest.raises(ConfigError, match=r"needs the optional package googletrans; install it with "
                                          r"pip install 'factatlas\[translate\]'"):
        make_translator("googletrans")
