"""The decoder's API around the trace (tokenizers, layers kept, progress and cancel, the per-pair split) and
hostile decoder files: each gives one ModelFileError or ValueError naming the key and its range."""

from __future__ import annotations

import json

import numpy as np
import pytest
from decoder_files import gguf_tensors, reference_attention, tiny_config, tiny_weights, write_folder, write_gguf
from safetensors.numpy import save_file

from posenc_gui.model import ModelFileError, open_decoder
from posenc_gui.model.decoder import TraceCancelled, pair_contributions

IDS = [3, 17, 5, 5, 29, 0, 11, 38, 2, 21]
TEXTS = ["Hello world", "The 2 cats sat on 123 mats.", "  spaces  and\nnewlines", "ünïcödé ✓ 猫"]


@pytest.fixture
def tiny(tmp_path):
    weights = tiny_weights()
    config = tiny_config(weights)
    return weights, config, write_folder(tmp_path / "tiny", weights, config)


# ---------------------------------------------------------------- tokenizers
def _byte_level_tokenizer(vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(TEXTS * 5 + ["the cat, the mat, the hat: 42 and 7"], trainer)
    return tokenizer


def _byte_level_vocabulary():
    """A trained byte-level BPE tokenizer, its tokens in id order, its merges (as GGUF stores them: "a b") and
    tiny weights with one embedding row per token."""
    tokenizer = _byte_level_tokenizer(300)
    model = json.loads(tokenizer.to_str())["model"]
    tokens = sorted(model["vocab"], key=model["vocab"].get)
    merges = [" ".join(merge) if isinstance(merge, list) else merge for merge in model["merges"]]
    return tokenizer, tokens, merges, tiny_weights(vocab=len(tokens))


def test_a_gguf_vocabulary_tokenises_as_the_tokenizer_json_it_came_from(tmp_path):
    tokenizer, tokens, merges, weights = _byte_level_vocabulary()
    config = tiny_config(weights)
    folder = write_folder(tmp_path / "folder", weights, config)
    tokenizer.save(str(folder / "tokenizer.json"))
    path = write_gguf(tmp_path / "vocab.gguf", gguf_tensors(weights, 4, 2), config,
                      vocabulary=(tokens, merges, "gpt-2"))
    from_json, from_gguf = open_decoder(folder), open_decoder(path)
    for text in TEXTS:
        ids = from_json.tokenize(text)
        assert ids == tokenizer.encode(text).ids and len(ids) > 1
        assert from_gguf.tokenize(text) == ids, text
    assert "".join(from_gguf.token_texts(from_gguf.tokenize(TEXTS[1]))) == TEXTS[1]


def test_a_sentencepiece_gguf_vocabulary_merges_by_score_with_byte_fallback(tmp_path, monkeypatch):
    """Merges ranked by the merged token's score: ll, ▁w, or, ▁h, ▁he, llo, ▁hello, ▁wor. "▁hello▁world"
    (a "▁" before the text, spaces as "▁") merges, in that order, to ▁hello ▁wor l d; "é", not in the
    vocabulary, falls back to its UTF-8 bytes <0xC3> <0xA9>; BOS (1) comes first."""
    merged = ["ll", "▁w", "or", "▁h", "▁he", "llo", "▁hello", "▁wor"]
    tokens = ["<unk>", "<s>", "</s>", *[f"<0x{byte:02X}>" for byte in range(256)], *"▁helowrd", *merged]
    scores = [0.0] * 259 + [-100.0] * 8 + [-1.0 - rank for rank in range(len(merged))]
    types = [2, 3, 3] + [6] * 256 + [1] * 16
    weights = tiny_weights(vocab=len(tokens))
    metadata = {"tokenizer.ggml.model": ("add_string", "llama"), "tokenizer.ggml.tokens": ("add_array", tokens),
                "tokenizer.ggml.scores": ("add_array", scores), "tokenizer.ggml.token_type": ("add_array", types),
                "tokenizer.ggml.bos_token_id": ("add_uint32", 1)}
    decoder = open_decoder(write_gguf(tmp_path / "spm.gguf", gguf_tensors(weights, 4, 2), tiny_config(weights),
                                      metadata=metadata))
    ids = {token: index for index, token in enumerate(tokens)}
    assert decoder.tokenize("hello world") == [1, ids["▁hello"], ids["▁wor"], ids["l"], ids["d"]]
    assert decoder.tokenize("hello wé") == [1, ids["▁hello"], ids["▁w"], ids["<0xC3>"], ids["<0xA9>"]]
    assert decoder.token_texts(decoder.tokenize("hello world")[1:]) == [" hello", " wor", "l", "d"]
    from posenc_gui.model.decoder import tokenizer as tokenizer_module

    # splits of each token in two: <unk> 4, <s> 2, </s> 3, 256 × <0xNN> 5, the merged 1+1+1+2+1+2+5+3: 1,305
    monkeypatch.setattr(tokenizer_module, "MAX_MERGE_SPLITS", 1304)
    with pytest.raises(ModelFileError, match=r"split 1,305 ways to recover merges \(at most 1,304\)"):
        open_decoder(tmp_path / "spm.gguf").tokenize("hello")


def test_a_vocabulary_the_tokenizers_package_refuses_is_one_model_file_error(tmp_path):
    weights = tiny_weights()
    config = tiny_config(weights)
    tokens = ["a", "b", "ab"] + [f"t{i}" for i in range(37)]
    path = write_gguf(tmp_path / "bad.gguf", gguf_tensors(weights, 4, 2), config,
                      vocabulary=(tokens, ["a zz"], "gpt-2"))  # "zz" is not a token
    decoder = open_decoder(path)  # the vocabulary is read on first use
    with pytest.raises(ModelFileError, match="tokenizers package"):
        decoder.tokenize("ab")


def test_text_that_is_not_text_or_a_model_without_tokenizer_is_refused(tmp_path, tiny):
    decoder = open_decoder(tiny[2])
    with pytest.raises(ModelFileError, match=r"tokenizer.json: the model folder has no tokenizer.json: tokenize\(\) "
                                             r"reads it \(trace\(\) takes token ids without it\)$"):
        decoder.tokenize("hello")
    (tiny[2] / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": 3}}')
    with pytest.raises(ModelFileError, match="not a tokenizer the tokenizers package reads"):
        open_decoder(tiny[2]).tokenize("hello")
    weights, config, _ = tiny
    bert = write_gguf(tmp_path / "wordpiece.gguf", gguf_tensors(weights, 4, 2), config,
                      metadata={"tokenizer.ggml.model": ("add_string", "bert")})
    with pytest.raises(ModelFileError, match=r"tokenizer.ggml.model is 'bert'; tokenising reads byte-level BPE"):
        open_decoder(bert).tokenize("hello")
    tokenizer = _byte_level_tokenizer(300)
    folder = tiny[2]
    tokenizer.save(str(folder / "tokenizer.json"))
    with pytest.raises(ValueError, match="text must be a str, got int"):
        open_decoder(folder).tokenize(12)
    with pytest.raises(ValueError, match="text has 1,000,001 characters; at most 1,000,000"):
        open_decoder(folder).tokenize("a" * 1_000_001)


def test_a_tokenizer_panic_is_one_value_error():
    """tokenizers raises pyo3's PanicException, a BaseException, on some inputs: it becomes a ValueError."""
    from posenc_gui.model.decoder.tokenizer import encode

    class PanicException(BaseException):
        pass

    class Panicking:
        def encode(self, text):
            raise PanicException("called `Option::unwrap()` on a `None` value")

    with pytest.raises(ValueError, match=r"text cannot be tokenised \(called `Option::unwrap\(\)`"):
        encode(Panicking(), "hello")


def test_a_token_type_array_of_another_length_than_the_vocabulary_is_refused(tmp_path):
    _, tokens, merges, weights = _byte_level_vocabulary()
    path = write_gguf(tmp_path / "types.gguf", gguf_tensors(weights, 4, 2), tiny_config(weights),
                      vocabulary=(tokens, merges, "gpt-2"),
                      metadata={"tokenizer.ggml.token_type": ("add_array", [1, 1, 3])})
    with pytest.raises(ModelFileError, match=r"token_type must hold one type per token \(\d+\)"):
        open_decoder(path).tokenize("hello")


# ---------------------------------------------------------------- layers, progress, cancel
def test_only_the_layers_up_to_the_last_asked_are_run(tmp_path):
    weights = tiny_weights(layers=4)
    config = tiny_config(weights)
    decoder = open_decoder(write_folder(tmp_path / "four", weights, config))
    calls = []
    trace = decoder.trace(IDS, layers=[1], progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 2), (2, 2)] and trace.layers == (1,)
    np.testing.assert_allclose(trace.attention(1), reference_attention(weights, config, IDS)[1], rtol=0, atol=3e-5)
    with pytest.raises(ValueError, match=r"layer must be one of the layers traced \(1\)"):
        trace.attention(0)


def test_a_trace_pickles_whole_for_the_worker_process(tiny):
    import pickle

    trace = open_decoder(tiny[2]).trace(IDS, layers=[1], rope={"rope_theta": 500.0})
    copy = pickle.loads(pickle.dumps(trace))
    np.testing.assert_array_equal(copy.attention(1), trace.attention(1))
    np.testing.assert_array_equal(copy.keys(1), trace.keys(1))
    assert copy.rope["rope_theta"] == 500.0 and copy.layers == (1,)


def test_a_progress_callback_returning_false_cancels(tiny):
    decoder = open_decoder(tiny[2])
    calls = []

    def progress(done, total):
        calls.append(done)
        return False

    with pytest.raises(TraceCancelled):
        decoder.trace(IDS, progress=progress)
    assert calls == [1]


@pytest.mark.parametrize("arguments, message", [
    ({"token_ids": [0, 40]}, r"token_ids must be in 0…39"),
    ({"token_ids": []}, "at least one token"),
    ({"layers": [2]}, r"layers must be in 0…1"),
    ({"positions": [0, 1]}, "one position per token"),
    ({"positions": [-1] * 10}, r"positions must be in 0…"),
    ({"token_ids": [1] * 8192, "layers": [0, 1]}, "fewer layers or fewer tokens"),
    ({"rope": "theta"}, "rope must be a mapping"),
])
def test_bad_arguments_name_the_argument_and_its_range(tiny, arguments, message):
    decoder = open_decoder(tiny[2])
    with pytest.raises(ValueError, match=message):
        decoder.trace(**{"token_ids": IDS, **arguments})


# ---------------------------------------------------------------- the per-pair split
def test_the_pair_terms_add_up_to_the_logits_the_softmax_sees(tiny):
    trace = open_decoder(tiny[2]).trace(IDS)
    split = pair_contributions(trace, 1, head=3, query=6)
    q, k = trace.queries(1)[3].astype(np.float64), trace.keys(1)[3].astype(np.float64)
    logits = q[6] @ k[:7].T / 2.0  # √head_dim = 2
    np.testing.assert_allclose(split.logits.sum(axis=0) + split.rest, logits, rtol=0, atol=1e-12)
    assert split.logits.shape == (2, 7) and split.rest.shape == (7,)
    np.testing.assert_allclose(split.share.sum() + split.rest_share, 1.0)
    np.testing.assert_allclose(split.query_norms[:, 1], np.hypot(q[:, 1], q[:, 3]))
    # a key head's norms per pair do not depend on the position it is rotated to
    shifted = pair_contributions(open_decoder(tiny[2]).trace(IDS, positions=np.arange(10) + 77), 0, 0)
    np.testing.assert_allclose(shifted.key_norms, pair_contributions(trace, 0, 0).key_norms, rtol=1e-5)
    np.testing.assert_array_equal(split.first, [0, 1])
    np.testing.assert_array_equal(split.second, [2, 3])
    with pytest.raises(ValueError, match=r"head must be in 0…3"):
        pair_contributions(trace, 1, head=4)


@pytest.mark.parametrize("term_values", [2**22, 7])
def test_each_pairs_share_is_its_mean_absolute_term_over_the_causal_logits(tiny, monkeypatch, term_values):
    """Partial rotary (a what-if: partial_rotary_factor 0.5 of head_dim 4 rotates channels 0 and 1 as pair 0,
    channels 2 and 3 are the rest), the terms formed in one block or a few query rows at a time."""
    from posenc_gui.model.decoder import pairs as pairs_module

    monkeypatch.setattr(pairs_module, "TERM_VALUES", term_values)
    trace = open_decoder(tiny[2]).trace(IDS, rope={"partial_rotary_factor": 0.5})
    split = pair_contributions(trace, 0, head=1)
    q, k = trace.queries(0)[1].astype(np.float64), trace.keys(0)[1].astype(np.float64)
    causal = np.tril(np.ones((10, 10), dtype=bool))
    pair_terms = (np.outer(q[:, 0], k[:, 0]) + np.outer(q[:, 1], k[:, 1])) / 2.0
    rest_terms = (np.outer(q[:, 2], k[:, 2]) + np.outer(q[:, 3], k[:, 3])) / 2.0
    means = np.abs(pair_terms[causal]).mean(), np.abs(rest_terms[causal]).mean()
    np.testing.assert_allclose([split.share[0], split.rest_share], np.array(means) / sum(means), rtol=1e-12)
    np.testing.assert_allclose(split.logits[0] + split.rest, (q[9] @ k.T) / 2.0, rtol=0, atol=1e-12)
    assert split.first.tolist() == [0] and split.second.tolist() == [1] and 0 < split.rest_share < 1


# ---------------------------------------------------------------- hostile files
def _folder_with(tmp_path, config_changes=(), drop=(), reshape=()):
    weights = tiny_weights()
    config = tiny_config(weights)
    config.update(dict(config_changes))
    for name in drop:
        del weights[name]
    for name, shape in reshape:
        weights[name] = np.zeros(shape, np.float32)
    return write_folder(tmp_path / "hostile", weights, config)


@pytest.mark.parametrize("changes, drop, reshape, message", [
    ({"num_key_value_heads": 3}, (), (), r"num_key_value_heads is 3, which does not divide num_attention_heads 4"),
    ({"num_attention_heads": 0}, (), (), r"num_attention_heads is 0\b"),
    ({"num_hidden_layers": 10**12}, (), (), r"num_hidden_layers is 1000000000000; it must be an integer in 1…1,024"),
    ({"num_hidden_layers": 3}, (), (), r"no tensor model.layers.2.input_layernorm.weight"),
    ({"hidden_size": 2**40}, (), (), r"hidden_size is 1099511627776; it must be an integer in 1…65,536"),
    ({"head_dim": 3}, (), (), r"head_dim is 3|head dimension is 3"),
    ({"rms_norm_eps": float("1e300")}, (), (), r"rms_norm_eps is 1e\+300; it must be a number in \(0, 1\]"),
    ({"model_type": "bert"}, (), (), "model_type is 'bert'"),
    ({"rope_scaling": {"rope_type": "spiral", "factor": 2}}, (), (),
     r"config.json: its RoPE set-up cannot be used: rope_scaling.rope_type must be one of default"),
    ({"hidden_act": "gelu"}, (), (), "hidden_act is 'gelu'"),
    ({}, ("model.layers.1.mlp.up_proj.weight",), (), "no tensor model.layers.1.mlp.up_proj.weight"),
    ({}, (), (("model.layers.0.self_attn.k_proj.weight", (16, 16)),),
     r"tensor model.layers.0.self_attn.k_proj.weight has shape \(16, 16\); the config implies \(8, 16\)"),
    ({}, (), (("model.embed_tokens.weight", (40, 12)),), r"its rows must hold the hidden size 16"),
    ({}, (), (("model.layers.1.self_attn.q_norm.weight", (4,)),),
     r"tensor model.layers.1.self_attn.q_norm.weight is not part of the llama block the decoder traces"),
    ({}, (), (("model.layers.2.input_layernorm.weight", (16,)),),
     r"tensor model.layers.2.input_layernorm.weight is not part of the llama block"),
])
def test_a_lying_folder_is_one_model_file_error_naming_the_key(tmp_path, changes, drop, reshape, message):
    folder = _folder_with(tmp_path, changes, drop, reshape)
    with pytest.raises(ModelFileError, match=message):
        open_decoder(folder)


def _gguf_with(tmp_path, metadata):
    weights = tiny_weights()
    config = tiny_config(weights)
    return write_gguf(tmp_path / "hostile.gguf", gguf_tensors(weights, 4, 2), config, metadata=metadata)


@pytest.mark.parametrize("metadata, message", [
    ({"llama.attention.head_count_kv": ("add_uint32", 3)}, "head_count_kv is 3, which does not divide"),
    # refused on opening, by the file reader's bounds
    ({"llama.attention.head_count": ("add_uint64", 2**62)}, r"head_count is \d+, not an integer in 0 … 4,294,967,295"),
    ({"llama.block_count": ("add_uint64", 2**40)}, r"block_count is \d+; it must be an integer in 1…1,024"),
    ({"llama.block_count": ("add_uint32", 7)}, r"no tensor blk.2.attn_norm.weight \(the config gives 7 layers"),
    ({"llama.embedding_length": ("add_uint32", 32)}, r"has shape \(40, 16\)|the config implies"),
    ({"llama.feed_forward_length": ("add_uint32", 25)}, r"blk.0.ffn_gate.weight has shape \(24, 16\)"),
    ({"llama.attention.key_length": ("add_uint32", 2**20)}, r"key_length is 1048576; it must be an integer"),
    ({"llama.attention.layer_norm_rms_epsilon": ("add_float32", float("nan"))}, r"epsilon is nan"),
    ({"llama.attention.layer_norm_rms_epsilon": None}, r"epsilon is None"),
    ({"llama.attention.head_count": ("add_string", "nine")}, r"head_count is 'nine'"),
    ({"llama.rope.dimension_count": ("add_uint32", 1000)},
     r"llama.rope.dimension_count must be at most the head dimension \(4\), got 1,000"),
    ({"llama.rope.freq_base": ("add_float32", 0.5)}, r"rope_theta must be > 1 and ≤ 1e\+12, got 0.5"),
])
def test_a_lying_gguf_is_one_model_file_error_naming_the_key(tmp_path, metadata, message):
    with pytest.raises(ModelFileError, match=message):
        open_decoder(_gguf_with(tmp_path, metadata))


@pytest.mark.parametrize("value, message", [
    (np.nan, "NaN or infinite"), (1e30, r"hidden state reaches [\d.]+e\+3\d before layer 1, past the 4.61e\+18")])
def test_weights_that_are_not_finite_or_overflow_are_refused_when_traced(tmp_path, value, message):
    weights = tiny_weights()
    weights["model.layers.1.mlp.up_proj.weight"][:] = value
    weights["model.layers.0.mlp.up_proj.weight"][:] = value if value != value else 1e30
    folder = write_folder(tmp_path / "huge", weights, tiny_config(weights))
    with pytest.raises(ModelFileError, match=message):
        open_decoder(folder).trace(IDS)


def test_a_gguf_tensor_of_another_type_than_floats_is_refused(tmp_path):
    weights = tiny_weights()
    config = tiny_config(weights)
    tensors = gguf_tensors(weights, 4, 2)
    tensors["blk.0.attn_q.weight"] = tensors["blk.0.attn_q.weight"].astype(np.int32)
    decoder = open_decoder(write_gguf(tmp_path / "ints.gguf", tensors, config))
    with pytest.raises(ModelFileError, match="blk.0.attn_q.weight"):
        decoder.trace(IDS)


def test_a_safetensors_file_alone_or_a_bert_folder_is_not_a_decoder(tmp_path, tiny):
    weights = tiny_weights()
    save_file(weights, str(tmp_path / "alone.safetensors"))
    with pytest.raises(ModelFileError, match="Hugging Face model folder"):
        open_decoder(tmp_path / "alone.safetensors")


def test_attention_computed_a_few_query_rows_at_a_time_follows_the_formulas(tmp_path, monkeypatch):
    """Long texts are scored SCORE_VALUES logits at a time: the causal and sliding-window masks of each
    block of rows must start at its own first row."""
    from posenc_gui.model.decoder import trace as trace_module

    weights = tiny_weights(seed=9)
    config = tiny_config(weights, model_type="mistral", sliding_window=4)
    decoder = open_decoder(write_folder(tmp_path / "rows", weights, config))
    monkeypatch.setattr(trace_module, "SCORE_ROWS", 3)  # 3 query rows at a time, against the keys they see
    expected = reference_attention(weights, config, IDS, window=4)
    trace = decoder.trace(IDS)
    for layer in trace.layers:
        np.testing.assert_allclose(trace.attention(layer), expected[layer], rtol=0, atol=3e-5)


def test_a_corrupted_gguf_gives_a_model_file_error_or_a_trace_never_another_exception(tmp_path):
    """Bytes of a tiny GGUF's header overwritten at random (lengths, counts, types, names, values)."""
    _, tokens, merges, weights = _byte_level_vocabulary()
    good = write_gguf(tmp_path / "good.gguf", gguf_tensors(weights, 4, 2), tiny_config(weights),
                      vocabulary=(tokens, merges, "gpt-2")).read_bytes()
    header_end = good.index(b"blk.1.ffn_down.weight") + 64  # the tensor infos end near the last names
    rng = np.random.default_rng(13)
    outcomes = set()
    for attempt in range(60):
        data = bytearray(good)
        for _ in range(rng.integers(1, 4)):
            start = int(rng.integers(4, header_end))
            data[start:start + 8] = rng.integers(0, 256, size=8, dtype=np.uint8).tobytes()
        path = tmp_path / f"corrupt{attempt}.gguf"
        path.write_bytes(bytes(data))
        try:
            decoder = open_decoder(path)
            decoder.trace(decoder.tokenize("the cat")[:4] or [0])
            outcomes.add("traced")
        except (ModelFileError, ValueError) as error:
            assert str(error), "an error must say what is wrong"
            outcomes.add(type(error).__name__)
    assert "ModelFileError" in outcomes


def test_every_config_key_with_a_value_of_the_wrong_kind_is_one_error_naming_a_key(tmp_path):
    weights = tiny_weights()
    config = tiny_config(weights)
    folder = write_folder(tmp_path / "keys", weights, config)
    hostile = [None, -1, 0, 1e30, "x", [], {}, True, 2**70, 0.5]
    refused = {}
    for key in config:
        for value in hostile:
            (folder / "config.json").write_text(json.dumps({**config, key: value}))
            try:
                open_decoder(folder).trace(IDS[:3])
            except ValueError as error:  # ModelFileError is a ValueError
                refused[key, repr(value)] = str(error)
    for key in ("hidden_size", "num_attention_heads", "num_key_value_heads", "num_hidden_layers",
                "intermediate_size", "rms_norm_eps", "rope_theta", "head_dim", "max_position_embeddings"):
        for value in ("'x'", "-1", "True", "1e+30"):
            assert key in refused[key, value], (key, value)


def test_gguf_metadata_arrays_are_read_whole_through_the_public_reader(tmp_path):
    """gguf_file.read_metadata_arrays: the arrays asked for, whole (read_header keeps only short ones), and
    one GGUFFormatError for a header that claims more keys than the bound."""
    import os

    from posenc_gui.model.files import gguf_file
    from posenc_gui.model.files.model_file import open_regular_file

    weights = tiny_weights()
    tokens = [f"t{i}" for i in range(gguf_file.MAX_KEPT_ARRAY + 10)]  # longer than read_header keeps
    path = write_gguf(tmp_path / "vocab.gguf", gguf_tensors(weights, 4, 2), tiny_config(weights),
                      vocabulary=(tokens, ["t 1", "t1 0"], "gpt-2"))
    with open_regular_file(path) as stream:
        arrays = gguf_file.read_metadata_arrays(stream.fileno(), ("tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                                                                  "no.such.key"))
        header = gguf_file.read_header(stream.fileno())
    assert arrays == {"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.merges": ["t 1", "t1 0"]}
    assert isinstance(header.metadata["tokenizer.ggml.tokens"], gguf_file.SkippedArray)
    lying = tmp_path / "lying.gguf"
    data = bytearray(path.read_bytes())
    data[16:24] = (gguf_file.MAX_KEYS + 1).to_bytes(8, "little")  # the metadata key count
    lying.write_bytes(bytes(data))
    descriptor = os.open(lying, os.O_RDONLY)
    try:
        with pytest.raises(gguf_file.GGUFFormatError, match="metadata keys"):
            gguf_file.read_metadata_arrays(descriptor, ("tokenizer.ggml.tokens",))
    finally:
        os.close(descriptor)
