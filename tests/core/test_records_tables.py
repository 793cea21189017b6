import pytest

from factatlas.records import Drop, Entity, Fact, Gender, ObjectRef, Provenance, fact_id, frozen_mapping
from factatlas.tables import read_drops, read_entities, read_facts, write_drops, write_entities, write_facts


def _facts():
    return [
        Fact(fact_id("west", "P36", "Q142"), "P36", "Q142", (ObjectRef("Q90"),), "west", ("Q142",), 9.0, 1),
        Fact(fact_id("arab", "P19", "Q1"), "P19", "Q1",
             (ObjectRef("Q85"), ObjectRef("Q1234", Provenance.ADMIN_ANCESTOR, "Q85")), "arab", ("Q79",), 3.5, 2),
    ]


def test_facts_round_trip_and_are_byte_identical(tmp_path):
    write_facts(tmp_path / "a.parquet", _facts())
    write_facts(tmp_path / "b.parquet", list(reversed(_facts())))
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    back = read_facts(tmp_path / "a.parquet")
    assert back == sorted(_facts(), key=lambda f: f.id)
    assert back[0].objects[1].provenance is Provenance.ADMIN_ANCESTOR and back[0].objects[1].via == "Q85"


def test_entities_round_trip(tmp_path):
    e = Entity("Q85", frozen_mapping({"en": "Cairo", "ar": "القاهرة"}), frozen_mapping({"en": ("Al-Qahira",)}),
               Gender.UNKNOWN, "", ("Q515",), 250)
    p = Entity("Q1", frozen_mapping({"en": "Umm Kulthum"}), frozen_mapping(), Gender.FEMININE, "P21", ("Q5",), 80)
    write_entities(tmp_path, [e, p])
    back = read_entities(tmp_path)
    assert back["Q85"].labels == {"en": "Cairo", "ar": "القاهرة"}
    assert back["Q85"].aliases == {"en": ("Al-Qahira",)}
    assert back["Q1"].gender is Gender.FEMININE and back["Q1"].gender_source == "P21"


def test_drops_round_trip(tmp_path):
    drops = [Drop("arab:P19:Q1", "labels", "no-label:ar", "", "arab", "P19", "Q79")]
    write_drops(tmp_path / "d.parquet", drops)
    assert read_drops(tmp_path / "d.parquet") == drops


def test_wikidata_ids_sort_by_number_and_other_text_after_them():
    from factatlas.records import id_order

    assert sorted(["Q10", "Q2", "Q100", "Q1"], key=id_order) == ["Q1", "Q2", "Q10", "Q100"]
    assert sorted(["P131", "P17", "P1412", "P27"], key=id_order) == ["P17", "P27", "P131", "P1412"]
    assert sorted(["Qx", "Q5", "all", "Q"], key=id_order) == ["Q5", "Q", "Qx", "all"]


def test_table_schemas_are_derived_from_their_records():
    """The prompt and ranking tables have exactly the records' fields, in order; a field added to a record
    is a column without a second edit (the writers read the records' fields, so no column can be missing)."""
    import dataclasses

    import pyarrow as pa

    from factatlas.records import ProbeResult, Prompt
    from factatlas.tables import PROMPTS_SCHEMA, RANKINGS_SCHEMA, RESULT_VALUES, schema_of

    assert PROMPTS_SCHEMA.names == [f.name for f in dataclasses.fields(Prompt)]
    assert RANKINGS_SCHEMA.names == [f.name for f in dataclasses.fields(ProbeResult)] == list(RESULT_VALUES)
    assert PROMPTS_SCHEMA.field("answer_start").type == pa.int32()
    assert PROMPTS_SCHEMA.field("gold_forms").type == pa.list_(pa.list_(pa.string()))

    @dataclasses.dataclass(frozen=True)
    class Wider(Prompt):
        difficulty: float = 0.0

    assert schema_of(Wider).names == [*PROMPTS_SCHEMA.names, "difficulty"]
    with pytest.raises(TypeError, match="no Arrow type"):
        schema_of(dataclasses.make_dataclass("Odd", [("when", "set[int]")]))


def test_the_prompt_writer_writes_every_record_field_as_its_row_says():
    from factatlas.builder.benchmark import prompts_table
    from factatlas.tables import prompt_from_row

    row = {"prompt_id": "f|en|t", "fact_id": "f", "lang": "en", "template_id": "t", "kind": "cloze", "text": "[Y]",
           "answer_start": 0, "pair": "p", "culture": "c", "predicate": "P1", "split": "test", "subject_qid": "Q1",
           "subject_label": "s", "gold_qids": ["Q2"], "gold_forms": [["o"]], "candidate_qids": ["Q2", "Q3"],
           "candidate_forms": ["o", "p"], "template_status": "reviewed", "article_langs": ["en"], "home_langs": [],
           "popularity": 12.0, "popularity_quantile": 1, "popularity_log10": 1}
    record = prompt_from_row(row)
    (written,) = prompts_table([record]).to_pylist()
    assert written == row and prompt_from_row(written) == record


def test_life_status_round_trips_and_tables_without_it_stay_readable(tmp_path):
    """entities.parquet carries life status (issue 40); a table written before it (ENTITIES_SCHEMA_V1: a run
    or a release of an earlier version) is read with every life unknown."""

    from factatlas.records import Life
    from factatlas.tables import ENTITIES_SCHEMA_V1, write_table

    dead = Entity("Q1110560", frozen_mapping({"en": "Umm Kulthum"}), frozen_mapping(), Gender.FEMININE, "P21",
                  ("Q5",), 80, life=Life.DEAD, life_source="P570")
    alive = Entity("Q1354960", frozen_mapping({"en": "Mohamed Salah"}), frozen_mapping(), Gender.MASCULINE, "P21",
                   ("Q5",), 110, life=Life.ALIVE, life_source="P569:within-100y")
    write_entities(tmp_path, [dead, alive])
    back = read_entities(tmp_path)
    assert (back["Q1110560"].life, back["Q1110560"].life_source) == (Life.DEAD, "P570")
    assert (back["Q1354960"].life, back["Q1354960"].life_source) == (Life.ALIVE, "P569:within-100y")
    old = [{"qid": "Q1110560", "gender": str(Gender.FEMININE), "gender_source": "P21", "classes": ["Q5"], "sitelinks": 80}]
    write_table(tmp_path / "entities.parquet", old, ENTITIES_SCHEMA_V1, sort_by=("qid",))
    before = read_entities(tmp_path)["Q1110560"]
    assert (before.gender, before.life, before.life_source) == (Gender.FEMININE, Life.UNKNOWN, "")
    import pyarrow.parquet as pq

    assert pq.read_schema(tmp_path / "entities.parquet").names == ENTITIES_SCHEMA_V1.names


def test_the_analyses_fact_table_finds_facts_by_id_with_no_python_string_per_fact(tmp_path):
    """``FactTable`` keeps fact id -> row as 64-bit hashes and row numbers (``KeyIndex``), not a dict of the
    ids (about 120 bytes a fact in Python; seen red with the dict: over 100 bytes a fact here); its mapping
    is ``read_facts``'s, and a file that repeats an id keeps the dict's answers (the last row, each id once)."""
    import tracemalloc
    from dataclasses import replace

    import pyarrow.parquet as pq

    from factatlas import tables as T
    from tests.builder.builder_fixtures import build

    one = build().content.facts
    facts = [replace(f, id=f"{f.id}-{n}") for n in range(2000) for f in one]  # 2,000 copies of each fact
    path = tmp_path / "facts.parquet"
    T.write_facts(path, facts)
    expected = {f.id: f for f in T.read_facts(path)}
    tracemalloc.start()
    table = T.FactTable(path)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert held / len(facts) < 40
    assert len(table) == len(expected) and list(table) == list(expected)
    assert all(table[fact_id] == f for fact_id, f in expected.items())
    assert "nope" not in table and table.get(7) is None

    rows = pq.read_table(path)
    twice = pq.read_table(path).slice(0, 3)
    moved = twice.set_column(twice.schema.get_field_index("predicate"), "predicate",
                             pq.read_table(path).column("predicate").slice(3, 3))
    import pyarrow as pa

    pq.write_table(pa.concat_tables([rows, moved]), path)
    again = T.FactTable(path)
    first_three = list(expected)[:3]
    assert len(again) == len(expected) and list(again) == list(expected)
    assert [again[f].predicate for f in first_three] == moved.column("predicate").to_pylist()
