"""Pure parts of the prober: tie policy, batching, shards, in-context tokenization, family detection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factatlas.errors import ConfigError
from factatlas.probe.batching import greedy_batches, pad_right, token_budget_batches
from factatlas.probe.protocol import ClozeQuery, check_scoring_for_family, rank_candidates, scoring_rule
from factatlas.probe.runner import parse_shard, placeholder_for, shard_of, template_only_text


def test_rank_candidates_ties_keep_candidate_order():
    ranked, scores = rank_candidates(["Q1", "Q2", "Q3", "Q4"], [-1.0, -0.5, -1.0, -0.5])
    assert ranked == ("Q2", "Q4", "Q1", "Q3")
    assert scores == (-0.5, -0.5, -1.0, -1.0)


def test_rank_candidates_rejects_length_mismatch():
    with pytest.raises(ValueError):
        rank_candidates(["Q1"], [0.0, 1.0])


def test_a_budget_fills_to_the_token_and_an_empty_row_counts_as_one():
    assert token_budget_batches([2, 2, 2], budget=6) == [[0, 1, 2]]  # 3 rows x 2 tokens: exactly the budget
    assert token_budget_batches([2, 2, 2], budget=5) == [[0, 1], [2]]
    assert token_budget_batches([0, 1, 0, 1], budget=4) == [[1, 3, 0, 2]]  # longest first, ties in input order


def test_pad_right_pads_ids_and_marks_only_the_real_tokens():
    ids, mask = pad_right([[5, 6], [7], []], pad_id=0)
    assert ids.tolist() == [[5, 6], [7, 0], [0, 0]] and mask.tolist() == [[1, 1], [1, 0], [0, 0]]


@given(st.lists(st.integers(1, 60), max_size=80), st.integers(1, 200), st.booleans())
def test_token_budget_batches_partition_and_respect_budget(lengths, budget, same_length):
    batches = token_budget_batches(lengths, budget, same_length=same_length)
    if same_length:
        assert all(len({lengths[i] for i in b}) == 1 for b in batches)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))
    for b in batches:
        widest = max(lengths[i] for i in b)
        assert len(b) == 1 or widest * len(b) <= budget
    # longest first: a batch never holds an item longer than one in an earlier batch
    seen_min = None
    for b in batches:
        if seen_min is not None:
            assert max(lengths[i] for i in b) <= seen_min
        seen_min = min(lengths[i] for i in b)


def test_greedy_batches_cut_on_any_limit():
    costs = [(3, 10), (3, 10), (3, 100), (1, 1)]
    assert greedy_batches([0, 1, 2, 3], costs, (7, 50)) == [[0, 1], [2], [3]]


def test_parse_shard_and_errors():
    assert parse_shard("1/4") == (1, 4)
    assert parse_shard(None) is None
    for bad in ("4/4", "-1/2", "a/b", "3"):
        with pytest.raises(ConfigError, match="--shard"):
            parse_shard(bad)


def test_shards_partition_prompts():
    ids = [f"arab:P36:Q{i}|en|P36/1" for i in range(1, 500)]
    parts = [[p for p in ids if shard_of(p, 3) == k] for k in range(3)]
    assert sorted(sum(parts, [])) == sorted(ids)
    assert all(len(p) > 100 for p in parts)  # a stable hash spreads them


def test_template_only_text():
    assert template_only_text("The capital of France is [Y].", "France", "en") == "The capital of something is [Y]."
    assert template_only_text("La capitale de la France est [Y].", "la France", "fr") == \
        "La capitale de quelque chose est [Y]."
    assert template_only_text("Столица Франции — [Y].", "Франция", "ru") is None  # inflected: counted as a skip
    assert placeholder_for("zz") == "X"


def test_scoring_registry_errors_name_the_fix():
    with pytest.raises(ConfigError, match="Did you mean 'mlm-pll'"):
        scoring_rule("mlm-pl")
    with pytest.raises(ConfigError, match="needs a mlm model"):
        check_scoring_for_family("mlm-pll", "causal")
    assert check_scoring_for_family("generative", "seq2seq").kind == "generate"


def test_cloze_query_requires_one_marker():
    with pytest.raises(ValueError):
        ClozeQuery("no slot here", ("a",))
    q = ClozeQuery("a [Y] b", ("x",))
    assert (q.left, q.right) == ("a ", " b")


def test_detect_family_from_config_not_name():
    import transformers

    from factatlas.probe.models import detect_family

    assert detect_family(transformers.BertConfig(architectures=["BertForMaskedLM"])) == "mlm"
    assert detect_family(transformers.GPT2Config(architectures=["GPT2LMHeadModel"])) == "causal"
    assert detect_family(transformers.T5Config()) == "seq2seq"
    # no architectures recorded: the auto-mappings of model_type decide
    assert detect_family(transformers.XLMRobertaConfig()) == "mlm"
    assert detect_family(transformers.LlamaConfig()) == "causal"
    with pytest.raises(ConfigError, match="--family"):
        detect_family(transformers.CLIPVisionConfig())


def test_model_slug(tmp_path):
    from factatlas.probe.models import model_slug

    assert model_slug("google-bert/bert-base-multilingual-cased") == "google-bert--bert-base-multilingual-cased"
    folder = tmp_path / "my model"
    folder.mkdir()
    assert model_slug(str(folder)) == "my-model"


def test_slots_reproduce_tokenization_in_context(tiny_gpt2, tiny_bert, tiny_t5):
    from factatlas.probe.slots import tokenize_slots

    queries = [ClozeQuery("The capital of France is [Y].", ("Paris", "Le Caire", "Amsterdam")),
               ClozeQuery("[Y] is the capital city of Egypt.", ("Cairo", "Rome")),
               ClozeQuery("La capitale de l'[Y] est Rome.", ("Italie", "Égypte"))]
    for lm in (tiny_gpt2, tiny_bert, tiny_t5):
        tok = lm.tokenizer
        for q, s in zip(queries, tokenize_slots(tok, queries), strict=True):
            for form, cand in zip(q.forms, s.candidates, strict=True):
                assert cand, form
                whole = tok(q.left + form + q.right, add_special_tokens=False)["input_ids"]
                # prefix + candidate is exactly how the tokenizer reads the text up to the filler's end
                assert list(s.prefix + cand) == tok(q.left + form, add_special_tokens=False)["input_ids"]
                if form == q.forms[0]:
                    assert list(s.prefix + cand + s.suffix) == whole


def test_every_scoring_rule_has_a_scorer_factory_and_unknown_rules_get_a_suggestion():
    from factatlas.errors import ConfigError
    from factatlas.probe.protocol import SCORING_RULES
    from factatlas.probe.rule import RULES, Rule, register_rule, rule_named

    assert len(SCORING_RULES) == 13 and all(r.local is not None for r in RULES.values())
    assert {n for n, r in RULES.items() if r.remote is not None} == {"causal-mean", "causal-sum", "chat",
                                                                      "chat-lenient"}
    with pytest.raises(ConfigError, match="unknown scoring rule 'causal-men'. Did you mean 'causal-mean'"):
        rule_named("causal-men")
    with pytest.raises(ValueError, match="scoring rule 'seq2seq' is registered twice"):
        register_rule(Rule("seq2seq", "seq2seq", "rank", "again", local=lambda lm, options, backend: None))


@pytest.mark.parametrize("arch", ["bert", "gpt2", "t5"])
def test_cached_filler_ids_equal_the_whole_text_tokenization_on_every_query(arch):
    """The cached path (filler ids per distinct whitespace and candidate list) against every ``left + form``
    tokenized whole, on all queries rather than the sample ``tokenize_slots`` checks: shared candidate
    lists, a slot after two spaces, one at the start, one glued to the word before it (left to the exact
    path), and a remainder glued to the slot."""
    from factatlas.probe.slots import _exact_slots, _fast_slots
    from factatlas.probe.tiny import train_tokenizer

    shared = ("Paris", "Le Caire", "Amsterdam Centraal", "Rome")
    queries = [ClozeQuery(f"The capital of {c} is [Y].", shared) for c in ("France", "Egypt", "the Netherlands")]
    queries += [ClozeQuery("[Y] is the capital city of Egypt.", ("Cairo", "Rome")),
                ClozeQuery("Its capital is  [Y], on the river.", shared),
                ClozeQuery("La capitale de l'[Y] est Rome.", ("Italie", "Égypte")),
                ClozeQuery("Die Hauptstadt von Peru ist [Y]s Zentrum.", ("Lima", "Cusco"))]
    tok = train_tokenizer([q.text.replace("[Y]", f) for q in queries for f in q.forms] * 3, arch, vocab_size=150)
    fast = _fast_slots(tok, queries)
    assert fast is not None
    assert fast == _exact_slots(tok, queries)
