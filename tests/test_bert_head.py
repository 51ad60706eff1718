"""The real head: layer 0 of a BERT-family folder on the user's sentences (posenc_gui.model.attention.bert_head)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from bert_folders import (
    PANICS, VOCAB, bert_config, distilbert_folder, hand_folder, hand_tensors, random_folder, roberta_folder, write_folder,
    write_panicking_tokenizer,
)
from helpers_imports import QT_PACKAGES, assert_loads_none_of
from posenc_gui.model import ModelFileError, open_model
from posenc_gui.model.attention.bert_head import (
    TABLE_TERMS, bert_layout, bert_permutation_demo, head_count, layer_norm, load_tokenizer, real_head_available,
)

# LayerNorm of a centred ±c vector is ±1 up to the eps: 1/√(1 + 1e-12) differs from 1 by 5e-13.
TOL = 1e-9
R2 = math.sqrt(2.0)
E = math.exp(R2)  # the two logits of a row of A (without the table) differ by (3.5 − 1.5)/√2 = √2


def test_the_hand_worked_head_without_the_table(tmp_path):
    demo = bert_permutation_demo(str(hand_folder(tmp_path / "m")), "dog man", "man dog", head=1)
    trace = demo.without_pe.trace_a
    assert trace.tokens == ("dog", "man") and demo.ids_a == (3, 5)
    # e = word + type 0 = [1, −1, −1, 1] and [1, 1, −1, −1] (mean 0, variance 1): LayerNorm gives them back,
    # then × γ [2, 1, 1, 1] + β [0, 0, 0, 1]
    np.testing.assert_allclose(trace.embeddings, [[1, -1, -1, 1], [1, 1, -1, -1]], atol=1e-15)
    np.testing.assert_allclose(trace.x, [[2, -1, -1, 2], [2, 1, -1, 0]], atol=TOL)
    # head 1 takes the output rows 2, 3 of each (out, in) weight: q = (x0, x1) + (0.5, 0), k = (x2, x3) + (0, −1),
    # v = (x0, x3)
    np.testing.assert_allclose(trace.q, [[2.5, -1], [2.5, 1]], atol=TOL)
    np.testing.assert_allclose(trace.k, [[-1, 1], [-1, -1]], atol=TOL)
    np.testing.assert_allclose(trace.v, [[2, 2], [2, 0]], atol=TOL)
    # S = q·k / √2: dog·dog = −2.5 − 1 = −3.5, dog·man = −2.5 + 1 = −1.5, man·dog = −1.5, man·man = −3.5
    np.testing.assert_allclose(trace.scores, np.array([[-3.5, -1.5], [-1.5, -3.5]]) / R2, atol=TOL)
    np.testing.assert_allclose(trace.attention, [[1 / (1 + E), E / (1 + E)], [E / (1 + E), 1 / (1 + E)]], atol=TOL)
    # Z = A V: first column 2 everywhere; second 2·A[i, dog]
    np.testing.assert_allclose(trace.output, [[2, 2 / (1 + E)], [2, 2 * E / (1 + E)]], atol=TOL)


def test_the_hand_worked_head_with_the_table(tmp_path):
    demo = bert_permutation_demo(str(hand_folder(tmp_path / "m")), "dog man", "man dog", head=1)
    trace = demo.with_pe.trace_a
    np.testing.assert_array_equal(trace.positional, [[1, 1, -1, -1], [0, 0, 0, 0]])
    # dog at 0: e + p = [2, 0, −2, 0], mean 0, variance 2 → [√2, 0, −√2, 0] → × γ + β = [2√2, 0, −√2, 1]
    np.testing.assert_allclose(trace.x, [[2 * R2, 0, -R2, 1], [2, 1, -1, 0]], atol=TOL)
    # q_dog = (2√2 + 0.5, 0), k_dog = (−√2, 0); man as without the table
    s = np.array([[-(2 * R2 + 0.5), -(2 * R2 + 0.5) / R2], [-2.5, -3.5 / R2]])
    np.testing.assert_allclose(trace.scores, s, atol=TOL)
    split = demo.split_a
    assert tuple(split.terms()) == TABLE_TERMS
    np.testing.assert_allclose(split.difference, s - np.array([[-3.5, -1.5], [-1.5, -3.5]]) / R2, atol=TOL)


def test_reordering_changes_the_output_only_through_the_table(tmp_path):
    demo = bert_permutation_demo(str(hand_folder(tmp_path / "m")), "dog bites man", "man bites dog", head=1)
    assert demo.permutation == (2, 1, 0)
    assert demo.without_pe.max_abs_diff_output < 1e-12 and demo.without_pe.same
    assert demo.with_pe.max_abs_diff_output > 0.1
    lines = demo.verdict_lines()
    assert "same rows permuted" in lines[0] and "sees word order" in lines[1]


def test_every_head_matches_an_independent_computation(tmp_path):
    folder = random_folder(tmp_path / "r", seed=3, eps=1e-3, gamma_beta=True)
    config = json.loads((folder / "config.json").read_text())
    from safetensors.numpy import load_file

    weights = {name.removeprefix("bert."): value.astype(np.float64)
               for name, value in load_file(str(folder / "model.safetensors")).items()}
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    # the tokenizer adds [CLS] (1) and [SEP] (2) around the words: the model reads them too
    ids = [1, *(VOCAB[w] for w in ("dog", "bites", "man", "dog")), 2]
    n = len(ids)
    for with_table in (False, True):
        x = weights["embeddings.word_embeddings.weight"][ids] + weights["embeddings.token_type_embeddings.weight"][0]
        if with_table:
            x = x + weights["embeddings.position_embeddings.weight"][:n]
        x = ((x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + config["layer_norm_eps"])
             * weights["embeddings.LayerNorm.gamma"] + weights["embeddings.LayerNorm.beta"])
        q, k, v = (np.einsum("ni,oi->no", x, weights[f"encoder.layer.0.attention.self.{p}.weight"])
                   + weights[f"encoder.layer.0.attention.self.{p}.bias"] for p in ("query", "key", "value"))
        q, k, v = (m.reshape(n, heads, hidden // heads).transpose(1, 0, 2) for m in (q, k, v))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(hidden // heads)
        probs = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
        context = probs @ v
        for head in range(heads):
            trace = bert_permutation_demo(str(folder), "dog bites man dog", "man bites dog dog",
                                          head).comparison(with_table).trace_a
            np.testing.assert_allclose(trace.x, x, rtol=0, atol=1e-12)
            np.testing.assert_allclose(trace.scores, scores[head], rtol=0, atol=1e-12)
            np.testing.assert_allclose(trace.attention, probs[head], rtol=0, atol=1e-12)
            np.testing.assert_allclose(trace.output, context[head], rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [roberta_folder, distilbert_folder], ids=["roberta", "distilbert"])
def test_roberta_offset_and_distilbert_names_give_the_hand_model(tmp_path, make):
    # RoBERTa: positions are rows 2, 3, … (pad_token_id 1 + 1); DistilBERT: no token types, q_lin/k_lin/v_lin
    reference = bert_permutation_demo(str(hand_folder(tmp_path / "bert", special=True)), "dog man", "man dog", 1)
    folder = make(tmp_path / "other")
    demo = bert_permutation_demo(str(folder), "dog man", "man dog", 1)
    assert demo.family == make.__name__.removesuffix("_folder")
    assert demo.position_offset == (2 if make is roberta_folder else 0)
    for with_table in (False, True):
        ours, theirs = demo.comparison(with_table).trace_a, reference.comparison(with_table).trace_a
        np.testing.assert_allclose(ours.output, theirs.output, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours.scores, theirs.scores, rtol=0, atol=1e-12)


def test_the_layout_names_the_tensors_read(tmp_path):
    model = open_model(random_folder(tmp_path / "r", prefix="bert."))
    layout = bert_layout(model)
    assert layout.word == "bert.embeddings.word_embeddings.weight"
    assert layout.query == ("bert.encoder.layer.0.attention.self.query.weight",
                            "bert.encoder.layer.0.attention.self.query.bias")
    assert (layout.hidden_size, layout.num_heads, layout.d_head, layout.layer_norm_eps) == (4, 2, 2, 1e-5)
    assert head_count(str(model.path)) == 2


def test_layer_norm_uses_the_biased_variance():
    # [1, 2, 3, 4]: mean 2.5, centred ±1.5 and ±0.5, biased variance (2.25 + 0.25) / 2 = 1.25
    out = layer_norm(np.array([[1.0, 2.0, 3.0, 4.0]]), np.ones(4), np.zeros(4), 0.0)
    np.testing.assert_allclose(out, [[-1.5, -0.5, 0.5, 1.5]] / np.sqrt(1.25), rtol=1e-15)


def test_only_the_sentences_rows_of_the_word_table_are_read(tmp_path):
    model = open_model(hand_folder(tmp_path / "m"))
    rows = model.read_rows("embeddings.word_embeddings.weight", [5, 3, 5])
    np.testing.assert_array_equal(rows, hand_tensors()["embeddings.word_embeddings.weight"][[5, 3, 5]])
    assert model.read_rows("embeddings.LayerNorm.weight").tolist() == [2, 1, 1, 1]
    with pytest.raises(ModelFileError, match="rows 0 … 5; asked for row 6"):
        model.read_rows("embeddings.word_embeddings.weight", [6])


# --------------------------------------------------------------------------- bad folders and inputs


def _without(name: str) -> dict:
    tensors = hand_tensors()
    del tensors[name]
    return tensors


@pytest.mark.parametrize("tensors, config, problem", [
    (_without("encoder.layer.0.attention.self.value.bias"), bert_config(),
     "lacks tensor encoder.layer.0.attention.self.value.bias"),
    ({"wpe.weight": np.zeros((8, 4), np.float32), "h.0.attn.c_attn.weight": np.zeros((4, 12), np.float32)},
     {"model_type": "gpt2"}, "not BERT-family"),
    (_without("encoder.layer.0.attention.self.query.weight"), bert_config(), "no first attention layer"),
    (hand_tensors(), bert_config(hidden_size=8), "has shape .*hidden_size 8"),
    (hand_tensors(), bert_config(num_attention_heads=3), "not a multiple of its 3 heads"),
    (hand_tensors(), bert_config(position_embedding_type="relative_key"), "relative_key"),
    (hand_tensors(), bert_config(type_vocab_size=3), "token_type_embeddings.weight has shape"),
])
def test_a_folder_that_is_not_bert_family_is_refused_with_one_line(tmp_path, tensors, config, problem):
    folder = write_folder(tmp_path / "bad", tensors, config)
    with pytest.raises(ValueError, match=problem) as caught:
        bert_permutation_demo(str(folder), "dog man", "man dog")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("model: ")
    assert real_head_available(str(folder)) is not None


def test_a_folder_without_a_tokenizer_or_config(tmp_path):
    folder = write_folder(tmp_path / "m", hand_tensors(), bert_config(), tokenizer=False)
    with pytest.raises(ValueError, match="no tokenizer.json"):
        bert_permutation_demo(str(folder), "dog", "dog")
    assert "no tokenizer.json" in real_head_available(str(folder))
    (folder / "config.json").unlink()
    with pytest.raises(ValueError, match="not a Hugging Face model folder with config.json"):
        bert_permutation_demo(str(folder), "dog", "dog")
    assert real_head_available("") == "no model folder is open"


@pytest.mark.parametrize("text, problem", [
    ("not json at all", "not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, "nests 100,000 levels deep"),
    (json.dumps({"version": "1.0", "model": {"type": "NoSuchModel"}}), "not a tokenizer the tokenizers package"),
])
def test_a_hostile_tokenizer_gives_one_line(tmp_path, text, problem):
    folder = hand_folder(tmp_path / "m")
    (folder / "tokenizer.json").write_text(text)
    with pytest.raises(ValueError, match=problem) as caught:
        bert_permutation_demo(str(folder), "dog", "dog")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("panic", PANICS)
def test_a_tokenizer_that_makes_the_package_panic_is_one_value_error_naming_the_file(tmp_path, panic):
    folder = hand_folder(tmp_path / "m", special=True)
    path = write_panicking_tokenizer(folder, panic)
    for attempt in range(2):  # the second time from the tokenizer cache: the same message, no panic
        with pytest.raises(ValueError) as caught:
            bert_permutation_demo(str(folder), "dog bites man", "man bites dog")
        message = str(caught.value)
        assert type(caught.value) is ValueError  # not tokenizers' PanicException, a BaseException
        assert message.startswith("model: ") and str(path) in message and "\n" not in message
        assert "the tokenizers package failed" in message


def test_a_tokenizer_file_past_the_size_limit_is_not_read(tmp_path, monkeypatch):
    from posenc_gui.model.attention import bert_head

    folder = hand_folder(tmp_path / "m")
    monkeypatch.setattr(bert_head, "MAX_JSON_BYTES", 100)
    with pytest.raises(ModelFileError, match="larger than"):
        load_tokenizer(folder)


@pytest.mark.parametrize("sentences, head, problem", [
    (("", "dog"), 0, "sentence_a is empty"),
    (("dog", "dog " * 9), 0, "sentence_b has 9 tokens; the model's position table has 8 positions"),
    (("dog", "dog"), 2, "head must be"),
    ((3, "dog"), 0, "sentence_a must be text"),
])
def test_bad_sentences_and_heads_name_the_parameter(tmp_path, sentences, head, problem):
    folder = hand_folder(tmp_path / "m")
    with pytest.raises(ValueError, match=problem):
        bert_permutation_demo(str(folder), *sentences, head)


def test_a_tokenizer_of_another_model_is_refused(tmp_path):
    tensors = hand_tensors()
    tensors["embeddings.word_embeddings.weight"] = tensors["embeddings.word_embeddings.weight"][:4]
    folder = write_folder(tmp_path / "m", tensors, bert_config(vocab_size=4), special=False)
    with pytest.raises(ValueError, match="id 5, past the word table's 4 rows"):
        bert_permutation_demo(str(folder), "man", "man")


def test_the_export_dict_carries_the_model_and_head(tmp_path):
    demo = bert_permutation_demo(str(hand_folder(tmp_path / "m", special=True)), "dog man", "man dog", 1)
    data = json.loads(json.dumps(demo.to_dict()))
    assert data["model"]["head"] == 1 and data["model"]["num_heads"] == 2 and data["model"]["d_head"] == 2
    assert data["tokens_a"] == ["[CLS]", "dog", "man", "[SEP]"] and data["ids_a"] == [1, 3, 5, 2]
    np.testing.assert_allclose(data["with_pe"]["attention_a"], demo.with_pe.trace_a.attention, rtol=0, atol=0)
    assert set(data["table_split"]["a"]) == {"without_the_table", "with_the_table", "table_contribution"}


def test_importing_the_real_head_loads_no_tokenizer_and_no_qt():
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    assert_loads_none_of("import posenc_gui.model.attention.bert_head", ("tokenizers", *QT_PACKAGES), env=env)
