"""The tokenizer and parser: AST with offsets, named agreement options, errors with offsets and hints."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factatlas.templates.morphology import Features
from factatlas.templates.syntax import Group, Option, Slot, TemplateSyntaxError, Text, parse, tokenize


def test_parse_slots_features_groups_and_glued_affixes():
    text = "[X] {X: masc=родился | fem=родилась | other=родился(-ась)} в [Y.loc]."
    p = parse(text)
    group_end = text.index("}") + 1
    y = text.index("[Y")
    assert p.nodes == (
        Slot("X", Features(), "[X]", 0, 3),
        Text(" ", 3, 4),
        Group("X", (Option("masc", "родился", text.index("masc"), text.index("родился")),
                    Option("fem", "родилась", text.index("fem"), text.index("родилась")),
                    Option("other", "родился(-ась)", text.index("other"), text.index("родился(-ась)"))),
              4, group_end),
        Text(" в ", group_end, y),
        Slot("Y", Features(case="loc"), "[Y.loc]", y, y + 7),
        Text(".", y + 7, y + 8),
    )
    assert p.slots("Y")[0].raw == "[Y.loc]" and p.groups[0].values == ("masc", "fem", "other")


def test_features_are_classified_and_particles_kept():
    assert parse("[Y.def.de]").nodes[0].features == Features(article="def", preposition="de")
    assert parse("[Y.def.dat.in]").nodes[0].features == Features(case="dat", article="def", preposition="in")
    assert parse("[X+은]").nodes[0].features == Features(particle="은")
    glued = parse("ب[Y]").nodes
    assert [type(n).__name__ for n in glued] == ["Text", "Slot"] and glued[0].value == "ب"


def test_empty_option_form_is_allowed_for_glued_agreement():
    group = parse("ولد{X: masc= | fem=ت} [X]").nodes[1]
    assert group.form("masc") == "" and group.form("fem") == "ت"


@pytest.mark.parametrize(("text", "offset", "message", "hint"), [
    ("[X] born in [Y.loc", 12, "unclosed slot '['", "close it with ']'"),
    ("[X] born ] in [Y]", 9, "unmatched ']'", "remove it"),
    ("[ X ] born in [Y]", 1, "space inside a slot", "without spaces"),
    ("[Х] born in [Y]", 1, "unknown slot 'Х' (U+0425 CYRILLIC CAPITAL LETTER HA)", "type the Latin capital letter: [X]"),
    ("[Z] born in [Y]", 1, "unknown slot 'Z'", "slots are [X]"),
    ("[X] born in [Y.lok]", 15, "unknown feature 'lok'. Did you mean 'loc'?", "case nom gen"),
    ("[X] born in [Y.loc.gen]", 19, "two case features ('loc' and 'gen')", "keep one case"),
    ("[X] {X: mas=a | fem=b} [Y]", 8, "unknown agreement value 'mas'. Did you mean 'masc'?", "values:"),
    ("[X] {X: masc=a | masc=b} [Y]", 17, "agreement value 'masc' given twice", "one form per value"),
    ("[X] {X: masc=a | fem} [Y]", 17, "agreement option without '='", "value=form"),
    ("[X] {X masc=a} [Y]", 4, "agreement group without ':'", "{X: masc=form"),
    ("[X] {X: masc=a [Y]", 15, "'[' inside an agreement option", "put slots outside"),
    ("[X] {X: masc=a", 4, "unclosed agreement group '{'", "close it with '}'"),
    ("[] born", 0, "empty slot", "write [X] or [Y]"),
    ("[X+] born", 3, "empty particle after '+'", "[X+은]"),
])
def test_syntax_errors_point_at_the_offending_character(text, offset, message, hint):
    with pytest.raises(TemplateSyntaxError) as info:
        parse(text)
    assert info.value.offset == offset
    assert info.value.message == message
    assert hint in info.value.hint


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="[]{}", blacklist_categories=("Cs",)), max_size=40))
def test_plain_text_round_trips_as_one_text_node(text):
    p = parse(text)
    assert "".join(n.value for n in p.nodes) == text
    assert all(isinstance(n, Text) for n in p.nodes)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["[X]", "[Y.loc]", "[X.gen]", "{X: masc=a | fem=b | other=c}", " word ", "ب",
                                 "[Y.def.de]", "[X+은]"]), max_size=8))
def test_node_offsets_cover_the_text_exactly(parts):
    text = "".join(parts)
    p = parse(text)
    pos = 0
    for node in p.nodes:
        assert node.start == pos
        pos = node.end
    assert pos == len(text)


def test_tokenizer_yields_typed_tokens():
    kinds = [t.kind for t in tokenize("a [Y.loc] {X: masc=b}")]
    assert kinds == ["TEXT", "LBRACK", "NAME", "DOT", "NAME", "RBRACK", "TEXT", "LBRACE", "NAME", "COLON", "NAME",
                     "EQ", "FORM", "RBRACE", "END"]


def test_life_status_options_join_values_and_the_most_specific_holds():
    """{X: fem+dead=была | dead=был | alive=является | other=...}: the option whose values all hold, the most
    specific first; an unknown life status takes the life-free options."""
    from factatlas.records import Gender, Life
    from factatlas.templates.gender import Agreement
    from factatlas.templates.render import choose_option

    group = parse("[X] {X: fem+dead=была | dead=был | alive=является | other=—} [Y.ins].").groups[0]
    assert [o.values for o in group.options] == [("fem", "dead"), ("dead",), ("alive",), ("other",)]
    assert group.atoms == {"fem", "dead", "alive", "other"}

    def form(gender: Gender, life: Life, number: str = "sg") -> str | None:
        return choose_option(group, Agreement(gender, number, "P21"), life)

    assert form(Gender.FEMININE, Life.DEAD) == "была"
    assert form(Gender.MASCULINE, Life.DEAD) == "был"
    assert form(Gender.UNKNOWN, Life.DEAD) == "был"
    assert form(Gender.FEMININE, Life.ALIVE) == "является"
    assert form(Gender.FEMININE, Life.UNKNOWN) == "—"
    # plural still comes before gender, a gender before a life status alone
    both = parse("{X: pl=были | fem=была | dead=был | other=—}").groups[0]
    assert choose_option(both, Agreement(Gender.FEMININE, "pl", "P21"), Life.DEAD) == "были"
    assert choose_option(both, Agreement(Gender.FEMININE, "sg", "P21"), Life.DEAD) == "была"
    assert choose_option(both, Agreement(Gender.MASCULINE, "sg", "P21"), Life.DEAD) == "был"
    # two values that hold beat one, whatever its kind
    joined = parse("{X: pl=a | fem+dead=b | other=c}").groups[0]
    assert choose_option(joined, Agreement(Gender.FEMININE, "pl", "P21"), Life.DEAD) == "b"
    assert choose_option(joined, Agreement(Gender.FEMININE, "pl", "P21"), Life.ALIVE) == "a"


@pytest.mark.parametrize(("text", "message"), [
    ("{X: fem+masc=a | other=b}", "two gender values ('fem' and 'masc') in one option (at offset 8)"),
    ("{X: dead+other=a}", "'other' joined with other values (at offset 9)"),
    ("{X: alive+dead=a | other=b}", "two life values ('alive' and 'dead') in one option (at offset 10)"),
    ("{X: dead+fem=a | fem+dead=b | other=c}", "agreement value 'fem+dead' given twice (at offset 17)"),
    ("{X: fem+livng=a | other=b}", "unknown agreement value 'livng'. Did you mean 'alive'? (at offset 8)"),
])
def test_joined_values_are_checked(text, message):
    with pytest.raises(TemplateSyntaxError) as err:
        parse(text)
    assert str(err.value).startswith(message)


def test_an_unknown_name_in_an_agreement_group_is_pointed_at_past_its_spaces():
    with pytest.raises(TemplateSyntaxError) as e:
        parse("Er {  Z: masc=a | other=b} kam.")
    assert (e.value.offset, e.value.message) == (6, "unknown slot 'Z'")


def test_the_text_before_a_slot_its_last_sound_and_the_punctuation_after_it():
    """What a slot's preposition or particle may depend on: the letter both forms of an agreeing group end in
    (none when the subject changes it), and whether sentence punctuation follows the slot."""
    from factatlas.templates.slot_context import before_punctuation, last_sound, text_before

    nodes = parse("{X: masc=народився | fem=народилася} [Y].").nodes
    assert text_before(nodes[:2]) == "я "  # «народився» and «народилася» both end in «я»
    assert before_punctuation(nodes, 2) and not before_punctuation(nodes, 3)  # [Y] then «.»; nothing after «.»
    nodes = parse("[X] {X: masc=був | fem=була} [Y], так.").nodes
    assert text_before(nodes[:4]) is None  # «в» or «а»: it changes with the subject
    assert before_punctuation(nodes, 4) and not before_punctuation(nodes, 0)
    assert last_sound("народився ") == "я" and last_sound(None) is None


def test_a_title_noun_stays_in_the_nominative_only_where_the_language_says_so():
    from factatlas.templates.labels import title_noun_always

    assert title_noun_always("ru") and title_noun_always("vi")
    assert not title_noun_always("en") and not title_noun_always("xx")  # no such option; no such language
