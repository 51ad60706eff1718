"""Tiny Llama-family decoders written by the tests (safetensors folders and GGUF files), and a plain reference.

:func:`reference_attention` is Hugging Face's ``LlamaDecoderLayer`` written
out from its formulas in float64 (RMSNorm, q/k/v projections with optional
biases, ``rotate_half`` RoPE, ``repeat_kv``, causal softmax, SwiGLU), without
calling the code under test: the tests compare the decoder's float32 trace
with it.
"""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
from safetensors.numpy import save_file


def tiny_weights(seed: int = 0, hidden: int = 16, heads: int = 4, kv_heads: int = 2, head_dim: int = 4,
                 layers: int = 2, intermediate: int = 24, vocab: int = 40, biases: bool = False,
                 scale: float = 0.5) -> dict[str, np.ndarray]:
    """Random float32 weights under Hugging Face's Llama names."""
    rng = np.random.default_rng(seed)

    def matrix(rows, columns):
        return (rng.normal(size=(rows, columns)) * scale).astype(np.float32)

    tensors = {"model.embed_tokens.weight": matrix(vocab, hidden), "model.norm.weight": np.ones(hidden, np.float32)}
    for layer in range(layers):
        prefix = f"model.layers.{layer}."
        tensors.update({
            prefix + "input_layernorm.weight": (1 + 0.1 * rng.normal(size=hidden)).astype(np.float32),
            prefix + "post_attention_layernorm.weight": (1 + 0.1 * rng.normal(size=hidden)).astype(np.float32),
            prefix + "self_attn.q_proj.weight": matrix(heads * head_dim, hidden),
            prefix + "self_attn.k_proj.weight": matrix(kv_heads * head_dim, hidden),
            prefix + "self_attn.v_proj.weight": matrix(kv_heads * head_dim, hidden),
            prefix + "self_attn.o_proj.weight": matrix(hidden, heads * head_dim),
            prefix + "mlp.gate_proj.weight": matrix(intermediate, hidden),
            prefix + "mlp.up_proj.weight": matrix(intermediate, hidden),
            prefix + "mlp.down_proj.weight": matrix(hidden, intermediate),
        })
        if biases:
            for name, rows in (("q", heads * head_dim), ("k", kv_heads * head_dim), ("v", kv_heads * head_dim)):
                tensors[prefix + f"self_attn.{name}_proj.bias"] = (rng.normal(size=rows) * scale).astype(np.float32)
    return tensors


def tiny_config(weights: dict[str, np.ndarray], heads: int = 4, kv_heads: int = 2, head_dim: int = 4,
                model_type: str = "llama", **overrides) -> dict:
    hidden = weights["model.embed_tokens.weight"].shape[1]
    layers = sum(name.endswith("q_proj.weight") for name in weights)
    config = {"model_type": model_type, "architectures": ["LlamaForCausalLM"], "hidden_size": hidden,
              "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
              "num_hidden_layers": layers, "intermediate_size": weights["model.layers.0.mlp.up_proj.weight"].shape[0],
              "vocab_size": weights["model.embed_tokens.weight"].shape[0], "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "max_position_embeddings": 256, "hidden_act": "silu"}
    config.update(overrides)
    return config


def write_folder(folder: Path, weights: dict[str, np.ndarray], config: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file(weights, str(folder / "model.safetensors"))
    return folder


def permute(weights: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf.py ``LlamaModel.permute``: each head's rows reordered for interleaved RoPE."""
    return (weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


_GGUF_ROLES = {"input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
               "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
               "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
               "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
               "self_attn.v_proj.bias": "attn_v.bias", "mlp.gate_proj.weight": "ffn_gate.weight",
               "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight"}


def gguf_name(hf_name: str) -> str:
    """The GGUF name of the Hugging Face tensor ``hf_name`` (llama.cpp's tensor map)."""
    if hf_name == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf_name == "model.norm.weight":
        return "output_norm.weight"
    layer, role = hf_name.removeprefix("model.layers.").split(".", 1)
    return f"blk.{layer}.{_GGUF_ROLES[role]}"


def gguf_tensors(weights: dict[str, np.ndarray], heads: int, kv_heads: int, arch: str = "llama") -> dict:
    """``weights`` under GGUF names, Q and K permuted as convert_hf_to_gguf.py does for ``llama``."""
    out = {}
    for name, values in weights.items():
        if arch == "llama" and ".self_attn.q_proj." in name:
            values = permute(values, heads)
        elif arch == "llama" and ".self_attn.k_proj." in name:
            values = permute(values, kv_heads)
        out[gguf_name(name)] = values
    return out


def write_gguf(path: Path, tensors: dict, config: dict, arch: str = "llama", types: dict | None = None,
               metadata: dict | None = None, vocabulary: tuple | None = None) -> Path:
    """A GGUF file of ``tensors`` (GGUF names; ``types`` maps a name to (raw bytes, GGMLQuantizationType)),
    its keys from the HF ``config``, ``metadata`` overriding them (key → (writer method, value) or None to drop)."""
    writer = gguf.GGUFWriter(path, arch)
    keys = {
        f"{arch}.block_count": ("add_uint32", config["num_hidden_layers"]),
        f"{arch}.context_length": ("add_uint32", config["max_position_embeddings"]),
        f"{arch}.embedding_length": ("add_uint32", config["hidden_size"]),
        f"{arch}.feed_forward_length": ("add_uint32", config["intermediate_size"]),
        f"{arch}.attention.head_count": ("add_uint32", config["num_attention_heads"]),
        f"{arch}.attention.head_count_kv": ("add_uint32", config["num_key_value_heads"]),
        f"{arch}.attention.key_length": ("add_uint32", config["head_dim"]),
        f"{arch}.rope.freq_base": ("add_float32", config["rope_theta"]),
        f"{arch}.rope.dimension_count": ("add_uint32", config["head_dim"]),
        f"{arch}.attention.layer_norm_rms_epsilon": ("add_float32", config["rms_norm_eps"]),
    }
    keys.update(metadata or {})
    for key, entry in keys.items():
        if entry is not None:
            method, value = entry
            getattr(writer, method)(key, value)
    if vocabulary is not None:
        tokens, merges, pre = vocabulary
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre(pre)
        writer.add_token_list(tokens)
        writer.add_token_merges(merges)
    for name, values in tensors.items():
        if types and name in types:
            raw, kind = types[name]
            writer.add_tensor(name, raw, raw_dtype=kind)
        else:
            writer.add_tensor(name, np.ascontiguousarray(values))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def reference_attention(weights: dict[str, np.ndarray], config: dict, ids, positions=None, theta=None,
                        inv_freq=None, window=None, window_layers=None) -> list[np.ndarray]:
    """Every layer's (heads, T, T) attention, from Hugging Face's formulas in float64 (see the module docstring);
    keys at offset ≥ ``window`` masked in ``window_layers`` (None: every layer)."""
    heads, kv_heads, head_dim = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    eps = config["rms_norm_eps"]
    ids = np.asarray(ids)
    count = ids.size
    positions = np.arange(count) if positions is None else np.asarray(positions, dtype=np.float64)
    if inv_freq is None:
        theta = config["rope_theta"] if theta is None else theta
        inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2) / head_dim)
    angles = np.outer(positions, inv_freq)
    cos, sin = np.cos(np.hstack([angles, angles])), np.sin(np.hstack([angles, angles]))

    def w(name):
        return weights[name].astype(np.float64)

    def rms_norm(x, weight):
        return weight * x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)

    def rotate_half(x):
        return np.concatenate([-x[..., head_dim // 2:], x[..., :head_dim // 2]], axis=-1)

    def project(x, name, count_heads):
        out = x @ w(name + ".weight").T
        if name + ".bias" in weights:
            out = out + w(name + ".bias")
        return out.reshape(count, count_heads, head_dim).transpose(1, 0, 2)

    full = np.tril(np.ones((count, count), dtype=bool))
    windowed = full & ((np.arange(count)[:, None] - np.arange(count)[None, :]) < (window or count))
    hidden = w("model.embed_tokens.weight")[ids]
    attentions = []
    for layer in range(config["num_hidden_layers"]):
        prefix = f"model.layers.{layer}."
        x = rms_norm(hidden, w(prefix + "input_layernorm.weight"))
        q = project(x, prefix + "self_attn.q_proj", heads)
        k = project(x, prefix + "self_attn.k_proj", kv_heads)
        v = project(x, prefix + "self_attn.v_proj", kv_heads)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = np.repeat(k, heads // kv_heads, axis=0), np.repeat(v, heads // kv_heads, axis=0)
        causal = windowed if window_layers is None or layer in window_layers else full
        scores = np.where(causal, q @ k.transpose(0, 2, 1) / np.sqrt(head_dim), -np.inf)
        attention = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attention /= attention.sum(axis=-1, keepdims=True)
        attentions.append(attention)
        mixed = (attention @ v).transpose(1, 0, 2).reshape(count, heads * head_dim)
        hidden = hidden + mixed @ w(prefix + "self_attn.o_proj.weight").T
        if prefix + "self_attn.o_proj.bias" in weights:
            hidden = hidden + w(prefix + "self_attn.o_proj.bias")
        y = rms_norm(hidden, w(prefix + "post_attention_layernorm.weight"))
        def linear(x, name):
            return x @ w(name + ".weight").T + (w(name + ".bias") if name + ".bias" in weights else 0)

        gate = linear(y, prefix + "mlp.gate_proj")
        swiglu = (gate / (1 + np.exp(-gate))) * linear(y, prefix + "mlp.up_proj")
        hidden = hidden + linear(swiglu, prefix + "mlp.down_proj")
    return attentions
