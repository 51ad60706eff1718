"""A Llama-family decoder's shape: its config (from config.json or GGUF metadata), checked, and its tensor names.

:func:`decoder_config` reads the shape of a decoder from a
:class:`~posenc_gui.model.files.ModelFile` (opened with headers only) and
checks it against itself and against every tensor the trace will read, before
anything is read: each number is bounded, the head counts divide, and every
tensor of every layer is present with the shape the config implies. A file
that fails gets one :class:`~posenc_gui.model.files.ModelFileError` naming the
key (or tensor) and the range it must be in.

Hugging Face folders: ``model_type`` llama (SmolLM too), mistral or qwen2,
tensors ``model.layers.{i}.self_attn.q_proj.weight`` …; GGUF files:
``general.architecture`` llama or qwen2, tensors ``blk.{i}.attn_q.weight`` ….
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..files import ModelFile, ModelFileError
from ..rope import rope_config

#: Model types (config.json) and GGUF architectures traced: the Llama block (RMSNorm, GQA, SwiGLU, RoPE).
HF_MODEL_TYPES = ("llama", "mistral", "qwen2")
GGUF_ARCHITECTURES = ("llama", "qwen2")
#: GGUF architectures whose W_q and W_k rows llama.cpp's converter permuted (LlamaModel.permute).
PERMUTED_ARCHITECTURES = frozenset({"llama"})
#: Bounds of the config values (a lying file is refused before anything is allocated).
MAX_HIDDEN_SIZE = 2**16
MAX_LAYERS = 1024
MAX_HEADS = 1024
MAX_HEAD_DIM = 8192
MAX_INTERMEDIATE_SIZE = 2**20
MAX_VOCAB_SIZE = 2**24
#: A tensor of more values than this (1 GiB as float32; a 70B model's largest holds 235 M) is refused.
MAX_TENSOR_VALUES = 2**28
#: What each layer reads, by role, and whether it is optional (biases).
ATTENTION_ROLES = ("attn_norm", "q", "k", "v", "o")
MLP_ROLES = ("mlp_norm", "gate", "up", "down")
MLP_BIAS_ROLES = ("gate_bias", "up_bias", "down_bias")
BIAS_ROLES = ("q_bias", "k_bias", "v_bias", "o_bias", *MLP_BIAS_ROLES)

_HF_NAMES = {
    "attn_norm": "input_layernorm.weight", "q": "self_attn.q_proj.weight", "k": "self_attn.k_proj.weight",
    "v": "self_attn.v_proj.weight", "o": "self_attn.o_proj.weight", "q_bias": "self_attn.q_proj.bias",
    "k_bias": "self_attn.k_proj.bias", "v_bias": "self_attn.v_proj.bias", "o_bias": "self_attn.o_proj.bias",
    "mlp_norm": "post_attention_layernorm.weight", "gate": "mlp.gate_proj.weight", "up": "mlp.up_proj.weight",
    "down": "mlp.down_proj.weight", "gate_bias": "mlp.gate_proj.bias", "up_bias": "mlp.up_proj.bias",
    "down_bias": "mlp.down_proj.bias",
}
_GGUF_NAMES = {
    "attn_norm": "attn_norm.weight", "q": "attn_q.weight", "k": "attn_k.weight", "v": "attn_v.weight",
    "o": "attn_output.weight", "q_bias": "attn_q.bias", "k_bias": "attn_k.bias", "v_bias": "attn_v.bias",
    "o_bias": "attn_output.bias", "mlp_norm": "ffn_norm.weight", "gate": "ffn_gate.weight", "up": "ffn_up.weight",
    "down": "ffn_down.weight", "gate_bias": "ffn_gate.bias", "up_bias": "ffn_up.bias", "down_bias": "ffn_down.bias",
}
_HF_EMBEDDING = "embed_tokens.weight"
#: Layer tensors that change nothing the trace computes: RoPE's inverse frequencies, saved by old checkpoints
#: (and by llama.cpp's converter as attn_rot_embd, which llama.cpp does not read either).
_HARMLESS_LAYER_TENSORS = ("self_attn.rotary_emb.inv_freq", "attn_rot_embd", "attn_rot_embd.weight")
_GGUF_EMBEDDING = "token_embd.weight"


@dataclass(frozen=True)
class DecoderConfig:
    """The shape of a Llama-family decoder, checked against its tensors.

    Attributes
    ----------
    architecture : str
        ``model_type`` of a Hugging Face folder, ``general.architecture`` of a GGUF file.
    hidden_size, num_layers, num_heads, num_kv_heads, head_dim, intermediate_size, vocab_size : int
        As Hugging Face names them; query head ``h`` reads key/value head
        ``h // (num_heads // num_kv_heads)`` (``repeat_kv``).
    rms_norm_eps : float
        RMSNorm's ε, in (0, 1].
    sliding_window : int or None
        In the layers of ``sliding_layers``, a key at offset ≥ this from its
        query is masked (Mistral: every layer; Qwen2 with ``use_sliding_window``:
        its ``layer_types``, or the layers from ``max_window_layers`` on); None: no window.
    sliding_layers : frozenset of int
    rope : Mapping
        The RoPE set-up in Hugging Face config keys (``rope_theta``,
        ``rope_scaling``/``rope_parameters``, ``head_dim``,
        ``partial_rotary_factor``, ``max_position_embeddings``; from GGUF,
        perhaps ``freq_factors``), as :func:`~posenc_gui.model.rope.rope_frequencies` reads it.
    permuted_qk : bool
        Whether the file stores W_q and W_k rows permuted for interleaved
        RoPE (llama.cpp's converter, GGUF ``llama``); they are un-permuted on reading.
    """

    architecture: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    rms_norm_eps: float
    sliding_window: int | None
    sliding_layers: frozenset[int]
    rope: Mapping[str, Any]
    permuted_qk: bool
    #: Tensor names: the embedding table, and per layer by role (see :meth:`tensor_name`).
    embedding_name: str
    _layer_prefix: str = field(repr=False)
    _names: Mapping[str, str] = field(repr=False)
    #: The optional roles (biases: Qwen2's q, k, v; Llama's attention_bias and mlp_bias) this file has.
    biases: frozenset[str] = field(repr=False)

    @property
    def group_size(self) -> int:
        """Query heads per key/value head."""
        return self.num_heads // self.num_kv_heads

    def tensor_name(self, layer: int, role: str) -> str:
        """The name of layer ``layer``'s tensor ``role`` (one of ATTENTION_ROLES, MLP_ROLES, BIAS_ROLES)."""
        return f"{self._layer_prefix}{layer}.{self._names[role]}"

    def expected_shape(self, role: str) -> tuple[int, ...]:
        """The shape (NumPy order: out, in) the tensor ``role`` must have."""
        hidden, query, key = self.hidden_size, self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim
        shapes = {"attn_norm": (hidden,), "mlp_norm": (hidden,), "q": (query, hidden), "k": (key, hidden),
                  "v": (key, hidden), "o": (hidden, query), "q_bias": (query,), "k_bias": (key,),
                  "v_bias": (key,), "o_bias": (hidden,), "gate_bias": (self.intermediate_size,),
                  "up_bias": (self.intermediate_size,), "down_bias": (hidden,),
                  "gate": (self.intermediate_size, hidden),
                  "up": (self.intermediate_size, hidden), "down": (hidden, self.intermediate_size)}
        return shapes[role]


def _integer(path: Any, key: str, value: Any, low: int, high: int) -> int:
    """``value`` of config key ``key`` as an int in low…high; ModelFileError naming the key and range if not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or not low <= value <= high:
        raise ModelFileError(path, f"{key} is {value!r}; it must be an integer in {low:,}…{high:,}")
    return int(value)


def _epsilon(path: Any, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value <= 1:
        raise ModelFileError(path, f"{key} is {value!r}; it must be a number in (0, 1]")
    return float(value)


def _heads(path: Any, names: tuple[str, str, str], values: tuple[Any, Any, Any], hidden: int) -> tuple[int, int, int]:
    """Heads, key/value heads and head_dim (None: hidden / heads), checked: kv heads divide heads."""
    heads = _integer(path, names[0], values[0], 1, MAX_HEADS)
    kv_heads = heads if values[1] is None else _integer(path, names[1], values[1], 1, heads)
    if heads % kv_heads:
        divisors = ", ".join(str(d) for d in range(1, heads + 1) if heads % d == 0)
        raise ModelFileError(path, f"{names[1]} is {kv_heads}, which does not divide {names[0]} {heads}; "
                                   f"it must be one of {divisors}")
    if values[2] is None:
        if hidden % heads:
            raise ModelFileError(path, f"{names[0]} {heads} does not divide the hidden size {hidden:,} and "
                                       f"no head dimension is given")
        head_dim = hidden // heads
    else:
        head_dim = _integer(path, names[2], values[2], 2, MAX_HEAD_DIM)
    if head_dim % 2 or head_dim < 2:
        raise ModelFileError(path, f"the head dimension is {head_dim}; RoPE needs an even number ≥ 2")
    return heads, kv_heads, head_dim


def decoder_config(model: ModelFile) -> DecoderConfig:
    """The checked :class:`DecoderConfig` of ``model`` (a Hugging Face folder or a GGUF file).

    Raises
    ------
    ModelFileError
        Naming the key or tensor and its allowed range: an architecture that
        is not Llama-family, a value out of range, head counts that do not
        divide, a tensor missing, of another shape than the config implies,
        or too large.
    """
    if model.kind == "gguf":
        config = _gguf_config(model)
    elif model.kind == "hf-folder":
        config = _hf_config(model)
    else:
        raise ModelFileError(model.path, "a decoder is read from a Hugging Face model folder (config.json and "
                                         "safetensors) or a GGUF file")
    _check_tensors(model, config)
    try:
        rope_config(config.rope)  # every key in range, defaults known (another set-up is checked when traced)
    except ValueError as error:
        where = model.path / "config.json" if model.kind == "hf-folder" else model.path
        source = "" if model.kind == "hf-folder" else f" (from {config.architecture}.rope.*)"
        raise ModelFileError(where, f"its RoPE set-up{source} cannot be used: {error}") from None
    return config


def _hf_config(model: ModelFile) -> DecoderConfig:
    path = model.path / "config.json"
    values = model.config
    if values is None:
        raise ModelFileError(path, "the folder has no config.json; a decoder's shape is read from it")
    model_type = values.get("model_type")
    if model_type not in HF_MODEL_TYPES:
        raise ModelFileError(path, f"model_type is {model_type!r}; the decoder traces {', '.join(HF_MODEL_TYPES)}")
    activation = values.get("hidden_act", "silu")
    if activation not in ("silu", "swish"):  # transformers' ACT2FN: both are x·sigmoid(x)
        raise ModelFileError(path, f"hidden_act is {activation!r}; the Llama block's SwiGLU uses 'silu'")
    hidden = _integer(path, "hidden_size", values.get("hidden_size"), 1, MAX_HIDDEN_SIZE)
    heads, kv_heads, head_dim = _heads(
        path, ("num_attention_heads", "num_key_value_heads", "head_dim"),
        (values.get("num_attention_heads"), values.get("num_key_value_heads"), values.get("head_dim")), hidden)
    layers = _integer(path, "num_hidden_layers", values.get("num_hidden_layers"), 1, MAX_LAYERS)
    window, sliding = _sliding_window(path, values, layers)
    embedding = next((tensor.name for tensor in model.tensors if tensor.name.endswith(_HF_EMBEDDING)), None)
    if embedding is None:
        raise ModelFileError(model.path, f"it has no {_HF_EMBEDDING} tensor (the token embeddings)")
    prefix = embedding[: -len(_HF_EMBEDDING)] + "layers."
    rope = dict(model.rope_config or {})
    rope.update(head_dim=head_dim, hidden_size=hidden, num_attention_heads=heads)
    return DecoderConfig(
        architecture=model_type, hidden_size=hidden, num_layers=layers, num_heads=heads, num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=_integer(path, "intermediate_size", values.get("intermediate_size"), 1,
                                   MAX_INTERMEDIATE_SIZE),
        vocab_size=_vocabulary(model, embedding),
        rms_norm_eps=_epsilon(path, "rms_norm_eps", values.get("rms_norm_eps", 1e-6)),
        sliding_window=window, sliding_layers=sliding, rope=rope, permuted_qk=False, embedding_name=embedding,
        _layer_prefix=prefix, _names=_HF_NAMES,
        biases=_biases(model, prefix, _HF_NAMES))


def _gguf_config(model: ModelFile) -> DecoderConfig:
    path, metadata = model.path, model.config or {}
    arch = metadata.get("general.architecture")
    if arch not in GGUF_ARCHITECTURES:
        raise ModelFileError(path, f"general.architecture is {arch!r}; the decoder traces "
                                   f"{', '.join(GGUF_ARCHITECTURES)}")
    hidden = _integer(path, f"{arch}.embedding_length", metadata.get(f"{arch}.embedding_length"), 1,
                      MAX_HIDDEN_SIZE)
    heads, kv_heads, head_dim = _heads(
        path, (f"{arch}.attention.head_count", f"{arch}.attention.head_count_kv", f"{arch}.attention.key_length"),
        (metadata.get(f"{arch}.attention.head_count"), metadata.get(f"{arch}.attention.head_count_kv"),
         metadata.get(f"{arch}.attention.key_length")), hidden)
    value_length = metadata.get(f"{arch}.attention.value_length")
    if value_length is not None and value_length != head_dim:
        raise ModelFileError(path, f"{arch}.attention.value_length is {value_length!r}; the Llama block needs "
                                   f"it equal to the key length {head_dim}")
    if model.rope_config is None:
        raise ModelFileError(path, f"{arch}.rope.* gives no RoPE set-up")
    rope = dict(model.rope_config)
    rope.update(head_dim=head_dim, hidden_size=hidden, num_attention_heads=heads)
    return DecoderConfig(
        architecture=arch, hidden_size=hidden,
        num_layers=_integer(path, f"{arch}.block_count", metadata.get(f"{arch}.block_count"), 1, MAX_LAYERS),
        num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim,
        intermediate_size=_integer(path, f"{arch}.feed_forward_length",
                                   metadata.get(f"{arch}.feed_forward_length"), 1, MAX_INTERMEDIATE_SIZE),
        vocab_size=_vocabulary(model, _GGUF_EMBEDDING),
        rms_norm_eps=_epsilon(path, f"{arch}.attention.layer_norm_rms_epsilon",
                              metadata.get(f"{arch}.attention.layer_norm_rms_epsilon")),
        sliding_window=None, sliding_layers=frozenset(), rope=rope, permuted_qk=arch in PERMUTED_ARCHITECTURES,
        embedding_name=_GGUF_EMBEDDING, _layer_prefix="blk.", _names=_GGUF_NAMES,
        biases=_biases(model, "blk.", _GGUF_NAMES))


def _sliding_window(path: Any, values: Mapping[str, Any], layers: int) -> tuple[int | None, frozenset[int]]:
    """The window and the layers it applies to, as transformers' Mistral and Qwen2 configs derive them."""
    window = values.get("sliding_window")
    if values.get("model_type") == "llama" or window is None:
        return None, frozenset()
    if values.get("model_type") == "mistral":
        return _integer(path, "sliding_window", window, 1, 2**40), frozenset(range(layers))
    if not values.get("use_sliding_window", False):  # Qwen2
        return None, frozenset()
    window = _integer(path, "sliding_window", window, 1, 2**40)
    types = values.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers \
                or not all(kind in ("full_attention", "sliding_attention") for kind in types):
            raise ModelFileError(path, f"layer_types must list 'full_attention' or 'sliding_attention' for each of "
                                       f"the {layers} layers")
        return window, frozenset(i for i, kind in enumerate(types) if kind == "sliding_attention")
    first = _integer(path, "max_window_layers", values.get("max_window_layers", 28), 0, 2**40)
    return window, frozenset(range(first, layers))


def _vocabulary(model: ModelFile, name: str) -> int:
    info = next((tensor for tensor in model.tensors if tensor.name == name), None)
    if info is None:
        raise ModelFileError(model.path, f"it has no tensor {name} (the token embeddings)")
    if len(info.shape) != 2:
        raise ModelFileError(model.path, f"tensor {name} has shape {info.shape}; it must be vocabulary × hidden size")
    return _integer(model.path, f"the rows of {name}", info.shape[0], 1, MAX_VOCAB_SIZE)


def _biases(model: ModelFile, prefix: str, names: Mapping[str, str]) -> frozenset[str]:
    """The bias roles layer 0 has (a file has them in every layer, or in none: checked in _check_tensors)."""
    present = {tensor.name for tensor in model.tensors}
    return frozenset(role for role in BIAS_ROLES if f"{prefix}0.{names[role]}" in present)


def _check_tensors(model: ModelFile, config: DecoderConfig) -> None:
    """Every tensor the trace reads exists with the shape ``config`` implies and at most MAX_TENSOR_VALUES values."""
    tensors = {tensor.name: tensor for tensor in model.tensors}
    embedding = tensors[config.embedding_name]
    if embedding.shape[1] != config.hidden_size:
        raise ModelFileError(model.path, f"tensor {config.embedding_name} has shape {embedding.shape}; its rows "
                                         f"must hold the hidden size {config.hidden_size:,}")
    roles = (*ATTENTION_ROLES, *MLP_ROLES, *sorted(config.biases))
    for layer in range(config.num_layers):
        for role in roles:
            name = config.tensor_name(layer, role)
            info = tensors.get(name)
            if info is None:
                raise ModelFileError(model.path, f"it has no tensor {name} (the config gives {config.num_layers} "
                                                 f"layers, 0…{config.num_layers - 1})")
            expected = config.expected_shape(role)
            if tuple(info.shape) != expected:
                raise ModelFileError(model.path, f"tensor {name} has shape {tuple(info.shape)}; the config "
                                                 f"implies {expected}")
            if math.prod(expected) > MAX_TENSOR_VALUES:
                raise ModelFileError(model.path, f"tensor {name} holds {math.prod(expected):,} values (at most "
                                                 f"{MAX_TENSOR_VALUES:,} are read)")
    _check_no_other_layer_tensors(model, config, roles)


def _check_no_other_layer_tensors(model: ModelFile, config: DecoderConfig, roles: tuple[str, ...]) -> None:
    """Refuse a layer tensor the Llama block does not have (a q/k norm, a gate of another kind …): the trace
    would leave it out and show attention the model does not compute."""
    suffixes = {config._names[role] for role in roles} | set(_HARMLESS_LAYER_TENSORS)
    for tensor in model.tensors:
        if not tensor.name.startswith(config._layer_prefix):
            continue
        layer, _, rest = tensor.name[len(config._layer_prefix):].partition(".")
        if not layer.isdigit() or int(layer) >= config.num_layers or rest not in suffixes:
            raise ModelFileError(model.path, f"tensor {tensor.name} is not part of the {config.architecture} block "
                                             "the decoder traces (its layers hold "
                                             f"{', '.join(sorted(config._names[role] for role in roles))})")
