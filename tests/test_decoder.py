"""The Llama-family decoder (posenc_gui/model/decoder): tiny models written here, checked against a plain
float64 computation of Hugging Face's formulas (tests/decoder_files.py) and against values known in closed form."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from decoder_files import (gguf_name, gguf_tensors, permute, reference_attention, tiny_config, tiny_weights,
                           write_folder, write_gguf)
from gguf.constants import GGMLQuantizationType
from gguf.quants import dequantize, quantize
from safetensors.numpy import save_file

from posenc_gui.model import open_decoder
from posenc_gui.model.decoder import pair_contributions

#: float32 against float64: the unit roundoff u = 2⁻²⁴ ≈ 6e-8, and each logit here is a chain of about 100
#: roundings (two layers of RMSNorm and products of 16–24 terms of size ≲ 1) over logits of size ≲ 10, so a
#: logit is off by ≲ 100·u·10 ≈ 6e-5 at worst and attention (slope ≤ 1/2 in each logit) by ≲ 3e-5.
ATTENTION_ATOL = 3e-5
IDS = [3, 17, 5, 5, 29, 0, 11, 38, 2, 21]


@pytest.fixture
def tiny(tmp_path):
    weights = tiny_weights()
    config = tiny_config(weights)
    return weights, config, write_folder(tmp_path / "tiny", weights, config)


def assert_attention(trace, expected, atol=ATTENTION_ATOL):
    assert len(trace.layers) == len(expected)
    for layer, reference in zip(trace.layers, expected):
        assert trace.attention(layer).dtype == np.float32
        np.testing.assert_allclose(trace.attention(layer), reference, rtol=0, atol=atol)


# ---------------------------------------------------------------- against the formulas
def test_a_folder_traces_every_layer_as_hugging_faces_formulas(tiny):
    weights, config, folder = tiny
    decoder = open_decoder(folder)
    assert (decoder.config.num_layers, decoder.config.num_heads, decoder.config.num_kv_heads,
            decoder.config.head_dim, decoder.config.group_size) == (2, 4, 2, 4, 2)
    trace = decoder.trace(IDS)
    assert trace.layers == (0, 1) and trace.attention(1).shape == (4, 10, 10)
    assert_attention(trace, reference_attention(weights, config, IDS))


def test_the_reference_tolerance_tells_a_wrong_pairing_apart(tiny):
    """Interleaved pairs instead of rotate_half's halves move attention far past ATTENTION_ATOL."""
    weights, config, folder = tiny
    swapped = dict(weights)
    order = np.concatenate([np.arange(0, 4, 2), np.arange(1, 4, 2)])  # channel 2i+s read as s·2 + i
    for layer in range(2):
        for name, heads in (("q_proj", 4), ("k_proj", 2)):
            key = f"model.layers.{layer}.self_attn.{name}.weight"
            swapped[key] = weights[key].reshape(heads, 4, -1)[:, order].reshape(weights[key].shape)
    trace = open_decoder(folder).trace(IDS)
    wrong = reference_attention(swapped, config, IDS)
    assert max(np.abs(trace.attention(layer) - wrong[layer]).max() for layer in (0, 1)) > 30 * ATTENTION_ATOL


def test_attention_is_known_in_closed_form_for_a_rotating_pair(tmp_path):
    """One head of two channels, x = (1, 1) for every token, W_q = c·I, W_k = I: RMSNorm gives (1, 1)/√(1 + ε),
    q·k = 2c/(1 + ε)·cos((m − n)θ₀) with θ₀ = 1, so row m is softmax over n ≤ m of
    √2·c·cos(m − n)/(1 + ε)."""
    c, eps = 1.5, 1e-5
    weights = {"model.embed_tokens.weight": np.ones((3, 2), np.float32)}
    prefix = "model.layers.0."
    eye = np.eye(2, dtype=np.float32)
    weights.update({prefix + "input_layernorm.weight": np.ones(2, np.float32),
                    prefix + "post_attention_layernorm.weight": np.ones(2, np.float32),
                    prefix + "self_attn.q_proj.weight": c * eye, prefix + "self_attn.k_proj.weight": eye,
                    prefix + "self_attn.v_proj.weight": eye, prefix + "self_attn.o_proj.weight": eye,
                    prefix + "mlp.gate_proj.weight": np.ones((2, 2), np.float32),
                    prefix + "mlp.up_proj.weight": np.ones((2, 2), np.float32),
                    prefix + "mlp.down_proj.weight": np.ones((2, 2), np.float32)})
    config = tiny_config(weights, heads=1, kv_heads=1, head_dim=2, rms_norm_eps=eps)
    trace = open_decoder(write_folder(tmp_path / "pair", weights, config)).trace([0, 1, 2, 0])
    for m in range(4):
        logits = math.sqrt(2) * c * np.cos(m - np.arange(m + 1)) / (1 + eps)
        expected = np.exp(logits) / np.exp(logits).sum()
        np.testing.assert_allclose(trace.attention(0)[0, m, :m + 1], expected, rtol=0, atol=1e-6)
        assert not trace.attention(0)[0, m, m + 1:].any()
    # row 1: 1 / (1 + exp(√2·1.5·(1 − cos 1)/(1 + 1e-5))) = 0.2738539 (by hand: 1 − cos 1 = 0.4596977)
    np.testing.assert_allclose(trace.attention(0)[0, 1, :2], [0.2738539, 0.7261461], rtol=0, atol=1e-6)
    split = pair_contributions(trace, 0, 0)
    assert split.share.tolist() == [1.0] and split.rest_share == 0.0
    np.testing.assert_allclose(split.query_norms, c * math.sqrt(2 / (1 + eps)), rtol=1e-6)  # |c·(1, 1)|/√(1 + ε)


@pytest.mark.parametrize("model_type, extra", [
    ("qwen2", {"biases": True}), ("mistral", {}), ("llama", {"heads": 4, "kv_heads": 4}),
    ("llama", {"heads": 4, "kv_heads": 1}),
])
def test_qwen2_biases_mistral_and_every_grouping_follow_the_formulas(tmp_path, model_type, extra):
    heads, kv_heads = extra.get("heads", 4), extra.get("kv_heads", 2)
    weights = tiny_weights(seed=3, heads=heads, kv_heads=kv_heads, biases=extra.get("biases", False))
    config = tiny_config(weights, heads=heads, kv_heads=kv_heads, model_type=model_type)
    trace = open_decoder(write_folder(tmp_path / model_type, weights, config)).trace(IDS)
    assert_attention(trace, reference_attention(weights, config, IDS))


def test_llamas_attention_and_mlp_biases_follow_the_formulas(tmp_path):
    """attention_bias (q, k, v and o) and mlp_bias (gate, up, down) of LlamaConfig."""
    weights = tiny_weights(seed=14, biases=True)
    rng = np.random.default_rng(15)
    for layer in range(2):
        prefix = f"model.layers.{layer}."
        for name, size in (("self_attn.o_proj", 16), ("mlp.gate_proj", 24), ("mlp.up_proj", 24), ("mlp.down_proj", 16)):
            weights[f"{prefix}{name}.bias"] = (rng.normal(size=size) * 0.5).astype(np.float32)
    config = tiny_config(weights, attention_bias=True, mlp_bias=True)
    decoder = open_decoder(write_folder(tmp_path / "biases", weights, config))
    assert len(decoder.config.biases) == 7
    assert_attention(decoder.trace(IDS), reference_attention(weights, config, IDS))


def test_mistrals_sliding_window_masks_keys_as_far_as_the_window(tmp_path):
    weights = tiny_weights(seed=4)
    config = tiny_config(weights, model_type="mistral", sliding_window=3)
    trace = open_decoder(write_folder(tmp_path / "mistral", weights, config)).trace(IDS)
    assert_attention(trace, reference_attention(weights, config, IDS, window=3))
    assert not trace.attention(0)[:, 5, :3].any() and trace.attention(0)[:, 5, 3:6].all()


@pytest.mark.parametrize("extra, window_layers", [
    ({"max_window_layers": 1}, {1}), ({"layer_types": ["sliding_attention", "full_attention"]}, {0}),
    ({"use_sliding_window": False}, set()),
])
def test_qwen2s_sliding_window_applies_to_the_layers_its_config_names(tmp_path, extra, window_layers):
    weights = tiny_weights(seed=12, biases=True)
    config = tiny_config(weights, model_type="qwen2", sliding_window=3, **{"use_sliding_window": True, **extra})
    decoder = open_decoder(write_folder(tmp_path / "qwen2", weights, config))
    assert decoder.config.sliding_layers == window_layers
    assert_attention(decoder.trace(IDS), reference_attention(weights, config, IDS, window=3,
                                                              window_layers=window_layers))


def test_an_old_checkpoints_saved_inverse_frequencies_and_swish_are_accepted(tmp_path):
    weights = tiny_weights(seed=16)
    config = tiny_config(weights, hidden_act="swish")
    saved = {**weights, "model.layers.0.self_attn.rotary_emb.inv_freq": np.ones(2, np.float32)}
    trace = open_decoder(write_folder(tmp_path / "old", saved, config)).trace(IDS)
    assert_attention(trace, reference_attention(weights, config, IDS))


def test_a_sharded_folder_traces_as_the_single_file(tmp_path, tiny):
    weights, config, folder = tiny
    shards = tmp_path / "sharded"
    shards.mkdir()
    (shards / "config.json").write_text(json.dumps(config))
    names = sorted(weights)
    parts = {"model-00001-of-00002.safetensors": names[::2], "model-00002-of-00002.safetensors": names[1::2]}
    for file, part in parts.items():
        save_file({name: weights[name] for name in part}, str(shards / file))
    index = {"weight_map": {name: file for file, part in parts.items() for name in part}}
    (shards / "model.safetensors.index.json").write_text(json.dumps(index))
    assert_attention(open_decoder(shards).trace(IDS), reference_attention(weights, config, IDS))


# ---------------------------------------------------------------- positions and RoPE what-ifs
def test_a_gap_in_the_positions_follows_the_formulas(tiny):
    weights, config, folder = tiny
    positions = [0, 1, 2, 3, 4, 5000, 5001, 5002, 5003, 5004]
    trace = open_decoder(folder).trace(IDS, positions=positions)
    np.testing.assert_array_equal(trace.positions, positions)
    # angles up to 5004 rad: HF rounds them to float32 (≤ 5004·2⁻²⁴ ≈ 3e-4 rad off), which moves logits of
    # size ≲ 10 by ≲ 3e-3 and attention by ≲ 1.5e-3; without the gap the attention moves by ≫ that
    expected = reference_attention(weights, config, IDS, positions=positions)
    assert_attention(trace, expected, atol=1.5e-3)
    plain = reference_attention(weights, config, IDS)
    assert np.abs(trace.attention(1) - plain[1]).max() > 0.05


def test_a_constant_shift_of_every_position_changes_nothing(tiny):
    _, _, folder = tiny
    decoder = open_decoder(folder)
    plain = decoder.trace(IDS)
    shifted = decoder.trace(IDS, positions=np.arange(len(IDS)) + 300)
    # RoPE is relative: only the float32 rounding of angles ≤ 310 rad (≤ 310·2⁻²⁴ ≈ 2e-5 rad) differs
    for layer in plain.layers:
        np.testing.assert_allclose(shifted.attention(layer), plain.attention(layer), rtol=0, atol=2e-4)
    assert not np.allclose(shifted.queries(0), plain.queries(0), atol=1e-2)  # the rotations themselves differ


def test_with_exact_angles_a_shift_of_a_million_changes_nothing_but_float32_rounding(tiny):
    """float64 angles: only q, k, cos and sin rounded to float32 remain (as in ATTENTION_ATOL); the model's
    float32 angles at 10⁶ are off by up to 10⁶·2⁻²⁴ ≈ 0.06 rad, which moves attention visibly."""
    _, _, folder = tiny
    decoder = open_decoder(folder)
    plain = decoder.trace(IDS, exact_angles=True)
    far = np.arange(len(IDS)) + 10**6
    shifted = decoder.trace(IDS, positions=far, exact_angles=True)
    assert shifted.exact_angles and not decoder.trace(IDS).exact_angles
    for layer in plain.layers:
        np.testing.assert_allclose(shifted.attention(layer), plain.attention(layer), rtol=0, atol=ATTENTION_ATOL)
    rounded = decoder.trace(IDS, positions=far)
    assert max(np.abs(rounded.attention(layer) - plain.attention(layer)).max() for layer in plain.layers) > 1e-3
    with pytest.raises(ValueError, match="exact_angles must be True or False"):
        decoder.trace(IDS, exact_angles=1)


def test_a_rope_what_if_replaces_theta_and_scaling(tiny):
    weights, config, folder = tiny
    decoder = open_decoder(folder)
    other_theta = decoder.trace(IDS, rope={"rope_theta": 50.0})
    assert other_theta.rope["rope_theta"] == 50.0
    assert_attention(other_theta, reference_attention(weights, config, IDS, theta=50.0))
    # linear scaling by 4 divides every frequency by 4: the same as positions / 4 at the model's theta
    linear = decoder.trace(IDS, rope={"rope_scaling": {"rope_type": "linear", "factor": 4.0}})
    assert_attention(linear, reference_attention(weights, config, IDS, positions=np.arange(len(IDS)) / 4))
    with pytest.raises(ValueError, match="rope_scaling.factor"):
        decoder.trace(IDS, rope={"rope_scaling": {"rope_type": "linear", "factor": -1}})
    with pytest.raises(ValueError, match="unknown keys colour"):
        decoder.trace(IDS, rope={"colour": 1})


# ---------------------------------------------------------------- GGUF
def test_a_gguf_with_permuted_q_and_k_gives_the_folders_attention(tmp_path, tiny):
    weights, config, folder = tiny
    path = write_gguf(tmp_path / "tiny.gguf", gguf_tensors(weights, 4, 2), config)
    decoder = open_decoder(path)
    assert decoder.config.permuted_qk and decoder.kind == "gguf"
    ours, theirs = decoder.trace(IDS), open_decoder(folder).trace(IDS)
    for layer in (0, 1):
        np.testing.assert_allclose(ours.attention(layer), theirs.attention(layer), rtol=0, atol=1e-6)
        np.testing.assert_allclose(ours.queries(layer), theirs.queries(layer), rtol=0, atol=1e-5)
    # the file's rows read as they are (not un-permuted) would pair the wrong channels
    unpermuted = write_gguf(tmp_path / "plain.gguf", gguf_tensors(weights, 4, 2, arch="qwen2"), config, arch="llama")
    assert np.abs(open_decoder(unpermuted).trace(IDS).attention(1) - theirs.attention(1)).max() > 30 * ATTENTION_ATOL


def test_a_qwen2_gguf_is_not_permuted(tmp_path):
    weights = tiny_weights(seed=5, biases=True)
    config = tiny_config(weights, model_type="qwen2")
    path = write_gguf(tmp_path / "qwen.gguf", gguf_tensors(weights, 4, 2, arch="qwen2"), config, arch="qwen2")
    decoder = open_decoder(path)
    assert not decoder.config.permuted_qk and decoder.config.biases == {"q_bias", "k_bias", "v_bias"}
    assert_attention(decoder.trace(IDS), reference_attention(weights, config, IDS))


def _k_quant_blocks(rng, rows, columns, kind):
    """Random Q4_K or Q6_K blocks whose float16 scales are small and finite (gguf cannot quantize to these)."""
    block_bytes = {GGMLQuantizationType.Q4_K: 144, GGMLQuantizationType.Q6_K: 210}[kind]
    raw = rng.integers(0, 256, size=(rows, columns // 256, block_bytes), dtype=np.uint8)
    scale = np.frombuffer(np.float16(0.002).tobytes(), np.uint8)
    if kind == GGMLQuantizationType.Q4_K:
        raw[..., 0:2], raw[..., 2:4] = scale, scale  # d, dmin
    else:
        raw[..., 208:210] = scale  # d
    return raw.reshape(rows, -1)


@pytest.mark.parametrize("kind", ["F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q4_K", "Q6_K"])
def test_quantized_gguf_tensors_are_dequantized_as_the_gguf_package_does(tmp_path, kind):
    kind = GGMLQuantizationType[kind]
    heads, kv_heads, head_dim = 2, 1, 128
    weights = tiny_weights(seed=6, hidden=256, heads=heads, kv_heads=kv_heads, head_dim=head_dim, layers=1,
                           intermediate=256, vocab=12, scale=0.05)
    config = tiny_config(weights, heads=heads, kv_heads=kv_heads, head_dim=head_dim)
    tensors = gguf_tensors(weights, heads, kv_heads)
    rng = np.random.default_rng(7)
    types, read_back = {}, {}
    for name, values in tensors.items():
        if values.ndim == 2:
            raw = _k_quant_blocks(rng, *values.shape, kind) if kind.name.endswith("_K") else quantize(values, kind)
            types[name] = (raw, kind)
            read_back[name] = dequantize(raw, kind).reshape(values.shape)
    path = write_gguf(tmp_path / f"{kind.name}.gguf", tensors, config, types=types)
    expected = {}  # the weights as the file holds them, un-permuted by the test's own formula
    for hf_name, values in weights.items():
        values = read_back.get(gguf_name(hf_name), values)
        if ".q_proj.weight" in hf_name or ".k_proj.weight" in hf_name:
            count = heads if ".q_proj." in hf_name else kv_heads
            values = values.reshape(count, head_dim // 2, 2, -1).swapaxes(1, 2).reshape(values.shape)
        expected[hf_name] = values
    ids = [1, 4, 4, 9, 0, 11]
    trace = open_decoder(path).trace(ids)
    np.testing.assert_allclose(trace.attention(0), reference_attention(expected, config, ids)[0], rtol=0,
                               atol=ATTENTION_ATOL)


def test_the_permutation_written_here_is_llama_cpps():
    """convert_hf_to_gguf.py: row 2i + s of a head holds Hugging Face's row s·d/2 + i."""
    rows = np.arange(8)[:, None]
    np.testing.assert_array_equal(permute(rows, 1)[:, 0], [0, 4, 1, 5, 2, 6, 3, 7])


@pytest.mark.parametrize("kind", ["F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q4_K", "Q6_K", "Q5_0"])
def test_the_fast_dequantization_gives_the_gguf_packages_bits(kind):
    """Random bytes (NaN and infinite scales too): the same values, bit for bit, as gguf.quants.dequantize."""
    from gguf.constants import GGML_QUANT_SIZES

    from posenc_gui.model.decoder.dequantize import dequantize_rows

    block_size, block_bytes = GGML_QUANT_SIZES[GGMLQuantizationType[kind]]
    columns = 2 * max(block_size, 32)
    raw = np.random.default_rng(8).integers(0, 256, size=(300, columns // block_size * block_bytes), dtype=np.uint8)
    ours = dequantize_rows(raw, kind, columns)
    with np.errstate(all="ignore"):
        theirs = np.asarray(dequantize(raw, GGMLQuantizationType[kind]), np.float32).reshape(300, columns)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))


def test_a_gguf_rope_freqs_tensor_divides_each_pairs_frequency_as_llama_cpp_does(tmp_path, tiny):
    """llama.cpp's rope_freqs (Llama 3.1 GGUF): θ_i / factor_i; a rope what-if drops it."""
    weights, config, _ = tiny
    tensors = gguf_tensors(weights, 4, 2)
    factors = np.array([1.0, 8.0], np.float32)
    tensors["rope_freqs.weight"] = factors
    decoder = open_decoder(write_gguf(tmp_path / "freqs.gguf", tensors, config))
    plain = 1.0 / 10000.0 ** (np.arange(0, 4, 2) / 4)
    assert_attention(decoder.trace(IDS), reference_attention(weights, config, IDS, inv_freq=plain / factors))
    assert_attention(decoder.trace(IDS, rope={"rope_theta": 10000.0}),
                     reference_attention(weights, config, IDS, inv_freq=plain))
