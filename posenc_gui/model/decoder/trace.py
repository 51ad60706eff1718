"""A Llama-family decoder traced in NumPy: attention, queries and keys of every layer and head.

The block is Hugging Face's ``LlamaDecoderLayer`` (Mistral's and Qwen2's are
the same, Qwen2 with biases on q, k, v), computed in float32 as the model
computes it::

    RMSNorm(x) = x / √(mean(x²) + ε) · w
    h   = x + o(Attn(RMSNorm(x)));   out = h + down(silu(gate(y)) · up(y)),  y = RMSNorm(h)
    q, k, v = W_q y (+ b_q), …  per head (head_dim channels); query head h reads kv head h // g
    q, k ← RoPE: pair (i, i + r/2) of the first r = rotary_dim channels rotated by
           position · θ_i (angle rounded to float32, as HF's ``inv_freq.float() @ position_ids.float()``),
           cos and sin multiplied by the attention factor
    A   = softmax(q kᵀ / √head_dim + causal mask)   (float32)

Only the layers up to the last one asked for are run; each layer's weights
are read, used and dropped (:class:`~posenc_gui.model.decoder.weights.WeightReader`).

Example
-------
>>> decoder = open_decoder("SmolLM2-135M-Instruct.Q4_1.gguf")          # doctest: +SKIP
>>> trace = decoder.trace(decoder.tokenize("The cat sat on the mat."))  # doctest: +SKIP
>>> trace.attention(3).shape                                            # doctest: +SKIP
(9, 8, 8)
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import limits
from ..files import ModelFile, ModelFileError
from ..files.model_tables import cached_model
from ..rope import rope_config, rope_frequencies
from . import tokenizer as tokenizers
from .config import DecoderConfig, decoder_config
from .weights import LayerWeights, WeightReader

#: At most this many tokens are traced at once.
MAX_TOKENS = 8192
#: Position ids are integers in 0…MAX_POSITION_ID (HF's are int64, rounded to float32 for RoPE).
MAX_POSITION_ID = 2**31 - 1
#: A trace keeps at most this many float32 values (attention, queries and keys of its layers): 1 GiB.
MAX_KEPT_VALUES = 2**28
#: Attention logits computed at once (query rows × keys): bounds a layer's temporaries whatever T is.
SCORE_VALUES = 2**22
#: Query rows scored at once: blocks of rows see fewer keys than the whole (causal mask).
SCORE_ROWS = 256
#: RoPE keys a ``rope`` what-if sets; the model's others (head_dim, hidden_size, …) stay.
_ROPE_SETUP_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor",
                    "max_position_embeddings", "freq_factors")
#: progress(layers_done, layers_total) -> False cancels the trace.
Progress = Callable[[int, int], "bool | None"]


class TraceCancelled(Exception):
    """The trace was cancelled: its ``progress`` callback returned False (or raised this)."""


@dataclass(frozen=True, eq=False)
class DecoderTrace:
    """What :meth:`Decoder.trace` computed, for the layers kept.

    Attributes
    ----------
    token_ids, positions : ndarray of int64, shape (T,)
    layers : tuple of int
        The layers kept, ascending; every layer up to the last was run.
    num_heads, num_kv_heads, head_dim : int
    inv_freq : ndarray of float64, shape (rotary_dim // 2,)
        θ_i of the RoPE set-up used (float64; the model rounds them to float32).
    attention_factor : float
        What cos and sin were multiplied by.
    rope : dict
        The RoPE set-up used, in Hugging Face config keys (a plain dict, so that a
        trace pickles: the app's worker process sends it back whole).
    exact_angles : bool
        Whether the angles were computed in float64 (see :meth:`Decoder.trace`).
    pairing : str
        ``"halves"``: pair i rotates channels (i, i + rotary_dim/2) of the
        queries and keys here (Hugging Face's order, GGUF's rows un-permuted).
    """

    token_ids: np.ndarray
    positions: np.ndarray
    layers: tuple[int, ...]
    num_heads: int
    num_kv_heads: int
    head_dim: int
    inv_freq: np.ndarray
    attention_factor: float
    rope: dict[str, Any]
    exact_angles: bool = False
    pairing: str = "halves"
    _attention: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _queries: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _keys: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def rotary_dim(self) -> int:
        return 2 * self.inv_freq.size

    def _layer(self, layer: object) -> int:
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or int(layer) not in self._attention:
            raise ValueError(f"layer must be one of the layers traced ({_ranges(self.layers)}), got {layer!r}")
        return int(layer)

    def attention(self, layer: int) -> np.ndarray:
        """The softmax attention of ``layer``: (heads, T, T) float32, row i over keys 0…i (read-only)."""
        return self._attention[self._layer(layer)]

    def queries(self, layer: int) -> np.ndarray:
        """The queries of ``layer`` after RoPE: (heads, T, head_dim) float32 (read-only)."""
        return self._queries[self._layer(layer)]

    def keys(self, layer: int) -> np.ndarray:
        """The keys of ``layer`` after RoPE, one per query head (repeat_kv): (heads, T, head_dim) float32."""
        keys = self._keys[self._layer(layer)]
        return keys[np.arange(self.num_heads) // (self.num_heads // self.num_kv_heads)]

    def kv_head(self, head: int) -> int:
        """The key/value head query head ``head`` reads."""
        head = limits.check_int("head", head, 0, self.num_heads - 1)
        return head // (self.num_heads // self.num_kv_heads)


@dataclass(frozen=True, eq=False)
class Decoder:
    """A Llama-family decoder opened by :func:`open_decoder`: its config, tokenizer and :meth:`trace`.

    Attributes
    ----------
    name : str
    path : Path
    kind : {"hf-folder", "gguf"}
    config : DecoderConfig
    notes : tuple of str
        What the reader inferred or could not use.
    """

    model: ModelFile
    config: DecoderConfig

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def path(self) -> Any:
        return self.model.path

    @property
    def kind(self) -> str:
        return self.model.kind

    @property
    def notes(self) -> tuple[str, ...]:
        loaded = self.__dict__.get("_tokenizer")  # the tokenizer's notes, once it is built
        return (*self.model.notes, *(loaded[2] if loaded else ()))

    @functools.cached_property
    def _tokenizer(self) -> tuple[Any, int | None, list[str]]:
        """The tokenizer, the BOS id it needs put first (or None) and notes; built on first use (a GGUF
        vocabulary takes a few hundred ms)."""
        if self.model.kind == "gguf":
            return tokenizers.gguf_tokenizer(self.model)
        return tokenizers.folder_tokenizer(self.model.path), None, []

    def _loaded_tokenizer(self) -> tuple[Any, int | None]:
        return self._tokenizer[0], self._tokenizer[1]

    def tokenize(self, text: str) -> list[int]:
        """The token ids of ``text`` as the model reads it (special tokens its tokenizer adds included).

        Raises
        ------
        ModelFileError
            The model has no tokenizer that can be read.
        ValueError
            ``text`` is not a str, too long, or the tokenizer refuses it.
        """
        tokenizer, bos = self._loaded_tokenizer()
        return tokenizers.encode(tokenizer, text, bos)

    def token_texts(self, token_ids: Iterable[int]) -> list[str]:
        """Each id's text as the tokenizer decodes it alone, its leading space kept (for labels)."""
        tokenizer, _ = self._loaded_tokenizer()
        ids = self._token_ids(token_ids)
        return [tokenizers.guarded(lambda i=i: tokenizer.decode([int(i)], skip_special_tokens=False),
                                   lambda message: ValueError(f"token {i} cannot be decoded ({message})"))
                for i in ids]

    def _token_ids(self, token_ids: object) -> np.ndarray:
        if isinstance(token_ids, (list, tuple, range, np.ndarray)) and len(token_ids) == 0:
            raise ValueError("token_ids must hold at least one token id")
        ids = limits.check_integers("token_ids", token_ids, 0, self.config.vocab_size - 1, MAX_TOKENS, "token ids")
        if ids.size == 0:
            raise ValueError("token_ids must hold at least one token id")
        return ids

    def rope_setup(self, rope: Mapping[str, Any] | None, seq_len: int) -> tuple[np.ndarray, float, dict[str, Any]]:
        """The inverse frequencies, attention factor and config of the model's RoPE set-up, or of the what-if
        ``rope``: Hugging Face keys (:data:`_ROPE_SETUP_KEYS`) replacing the model's; a key not given keeps
        the model's value, except that giving rope_scaling or rope_parameters drops the model's scaling, and
        any what-if drops llama.cpp's per-pair ``freq_factors`` unless it gives its own. ``seq_len`` is
        max(position) + 1 (dynamic NTK and LongRoPE read it). ValueError naming the key and its range."""
        setup = dict(self.config.rope)
        if rope is not None:
            if not isinstance(rope, Mapping):
                raise ValueError(f"rope must be a mapping of Hugging Face RoPE keys or None, got {limits.shown(rope)}")
            unknown = sorted(map(str, set(rope) - set(_ROPE_SETUP_KEYS)))
            if unknown:
                raise ValueError(f"rope: unknown keys {', '.join(unknown)} (known: {', '.join(_ROPE_SETUP_KEYS)})")
            if "rope_scaling" in rope or "rope_parameters" in rope:
                setup.pop("rope_scaling", None)
                setup.pop("rope_parameters", None)
            setup.pop("freq_factors", None)
            setup.update(rope)
        checked = rope_config(setup)  # ValueError naming the key and its range
        if checked.head_dim != self.config.head_dim:
            raise ValueError(f"rope: head_dim is {checked.head_dim}; the model's heads have {self.config.head_dim}")
        inv_freq, attention_factor = rope_frequencies(setup, seq_len=seq_len)
        factors = setup.get("freq_factors")
        if factors is not None:  # llama.cpp's rope_freqs: θ_i divided by one factor per pair
            factors = limits.check_numbers("freq_factors", factors, 1e-6, 1e6, inv_freq.size, "factors")
            if factors.size != inv_freq.size:
                raise ValueError(f"freq_factors holds {factors.size} factors; there are {inv_freq.size} pairs")
            inv_freq = inv_freq / factors
        return inv_freq, attention_factor, setup

    def trace(self, token_ids: object, layers: object = None, positions: object = None,
              rope: Mapping[str, Any] | None = None, progress: Progress | None = None, *,
              exact_angles: bool = False) -> DecoderTrace:
        """Run the decoder on ``token_ids`` up to the last layer in ``layers``, keeping those layers.

        Parameters
        ----------
        token_ids : sequence of int
            1 … :data:`MAX_TOKENS` ids in 0 … vocab_size − 1 (as :meth:`tokenize` gives).
        layers : int, sequence of int or None
            The layers to keep (0 … num_layers − 1); None: all.
        positions : sequence of int or None
            One position id per token, 0 … :data:`MAX_POSITION_ID` (None: 0 … T − 1).
            A gap (0…9, then 5000…5009) is a what-if; adding a constant
            changes nothing but float32 rounding of the angles (RoPE is relative).
        rope : Mapping or None
            Another RoPE set-up in Hugging Face keys (see :meth:`rope_setup`); None: the model's.
        progress : callable or None
            ``progress(layers_done, layers_total)`` after each layer; returning
            False (or raising :class:`TraceCancelled`) cancels.
        exact_angles : bool, keyword-only
            False (the model's arithmetic, as transformers): each angle
            position · θ_i is rounded to float32, off by up to position · 2⁻²⁴
            rad, so a shift of every position by 5,000 moves SmolLM2's
            attention by ~1e-4. True: angles in float64 (cos and sin then
            rounded to float32), so a shift changes attention only at
            float32's unit roundoff; the trace then differs from transformers'
            by about as much.

        Raises
        ------
        ValueError
            Naming the argument and its range (also when the kept layers would
            hold more than :data:`MAX_KEPT_VALUES` values).
        ModelFileError
            A tensor cannot be read, or the hidden state overflows float32 (huge weights).
        TraceCancelled
            ``progress`` returned False.
        """
        config = self.config
        ids = self._token_ids(token_ids)
        count = ids.size
        kept = _layers(layers, config.num_layers)
        if positions is None:
            position_ids = np.arange(count, dtype=np.int64)
        else:
            position_ids = limits.check_integers("positions", positions, 0, MAX_POSITION_ID, MAX_TOKENS, "positions")
            if position_ids.size != count:
                raise ValueError(f"positions must hold one position per token ({count}), got {position_ids.size}")
        per_layer = (config.num_heads * count * count
                     + (config.num_heads + config.num_kv_heads) * count * config.head_dim)
        if per_layer * len(kept) > MAX_KEPT_VALUES:
            raise ValueError(f"keeping {len(kept)} layers of {count:,} tokens needs {per_layer * len(kept):,} values "
                             f"(at most {MAX_KEPT_VALUES:,}): ask for fewer layers or fewer tokens")
        inv_freq, attention_factor, setup = self.rope_setup(rope, int(position_ids.max()) + 1)
        reader = WeightReader(self.model, config)
        hidden = reader.embeddings(ids)
        if not isinstance(exact_angles, bool):
            raise ValueError(f"exact_angles must be True or False, got {limits.shown(exact_angles)}")
        result = DecoderTrace(_readonly(ids), _readonly(position_ids), kept, config.num_heads, config.num_kv_heads,
                              config.head_dim, _readonly(inv_freq), attention_factor, setup, exact_angles)
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):  # threads spin-wait on a shared machine (see compute.py)
            return self._run(reader, hidden, result, progress)

    def _run(self, reader: WeightReader, hidden: np.ndarray, result: DecoderTrace,
             progress: Progress | None) -> DecoderTrace:
        """Layers 0 … the last kept of ``result`` on the embeddings ``hidden``, filling ``result``."""
        config, kept = self.config, result.layers
        cos, sin = _rotary_tables(result.positions, result.inv_freq, result.attention_factor, result.exact_angles)
        last = kept[-1]
        largest_safe = math.sqrt(float(np.finfo(np.float32).max) / config.hidden_size)  # mean(x²) stays finite
        for layer in range(last + 1):
            largest = float(np.abs(hidden).max())
            if not largest <= largest_safe:
                raise ModelFileError(self.model.path, f"the hidden state reaches {largest:.3g} before layer {layer}, "
                                                      f"past the {largest_safe:.3g} whose square float32 holds "
                                                      "(the weights are too large)")
            weights = reader.layer(layer, mlp=layer < last)
            with np.errstate(all="ignore"):  # overflow is checked below, once per layer
                window = config.sliding_window if layer in config.sliding_layers else None
                queries, keys, attention, hidden, finite = _block(hidden, weights, config, cos, sin, window,
                                                                  keep=layer in kept, run_rest=layer < last)
            if layer in kept:
                result._attention[layer] = _readonly(attention)
                result._queries[layer] = _readonly(queries)
                result._keys[layer] = _readonly(keys)
            if not finite:
                raise ModelFileError(self.model.path, f"the attention logits overflow float32 in layer {layer} "
                                                      "(the weights are too large)")
            if progress is not None and progress(layer + 1, last + 1) is False:
                raise TraceCancelled(f"the trace was cancelled after layer {layer} of {last}")
        return result


def open_decoder(path: str | os.PathLike[str]) -> Decoder:
    """Open the Llama-family decoder at ``path``: a Hugging Face folder (safetensors, sharded too) or a GGUF file.

    Only headers, the config and metadata are read; tensors are read layer by
    layer when traced, the tokenizer on first use.

    Raises
    ------
    ModelFileError
        Naming the file, the key or tensor and its range (see
        :func:`~posenc_gui.model.decoder.config.decoder_config`).
    """
    model = cached_model(path)
    return Decoder(model, decoder_config(model))


def is_decoder(path: str | os.PathLike[str]) -> bool:
    """Whether :func:`open_decoder` opens ``path`` (a Llama-family decoder whose headers and config are sound):
    what ``--model PATH`` asks before the window shows the Decoder panel. Reads only what opening reads."""
    try:
        open_decoder(path)
    except (ModelFileError, ValueError, OSError):
        return False
    return True


# ----------------------------------------------------------------- the block
def _rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    variance = np.mean(x * x, axis=-1, keepdims=True)
    return weight * (x / np.sqrt(variance + np.float32(eps)))


def _rotary_tables(positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float,
                   exact_angles: bool) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (T, rotary_dim) float32, as HF: angles in float32 (float64 if ``exact_angles``), halves
    concatenated, × attention factor."""
    if exact_angles:
        angles = positions.astype(np.float64)[:, None] * inv_freq[None, :]
    else:
        angles = positions.astype(np.float32)[:, None] * inv_freq.astype(np.float32)[None, :]
    angles = np.concatenate([angles, angles], axis=1).astype(np.float64)
    factor = np.float32(attention_factor)
    return (np.cos(angles).astype(np.float32) * factor), (np.sin(angles).astype(np.float32) * factor)


def _rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """HF's apply_rotary_pos_emb on (heads, T, head_dim): x·cos + rotate_half(x)·sin on the first rotary_dim
    channels, the others unchanged."""
    rotary = cos.shape[1]
    part, rest = x[..., :rotary], x[..., rotary:]
    half = rotary // 2
    rotated = np.concatenate([-part[..., half:], part[..., :half]], axis=-1)
    return np.concatenate([part * cos + rotated * sin, rest], axis=-1)


def _mask(start: int, stop: int, first: int, last: int, window: int | None) -> np.ndarray:
    """For queries start … stop − 1 and keys first … last − 1: True where query i may attend key j: j ≤ i
    (and i − j < window)."""
    offsets = np.arange(start, stop)[:, None] - np.arange(first, last)[None, :]
    allowed = offsets >= 0
    return allowed & (offsets < window) if window is not None else allowed


def _heads(x: np.ndarray, heads: int, head_dim: int) -> np.ndarray:
    return x.reshape(x.shape[0], heads, head_dim).transpose(1, 0, 2)


def _linear(x: np.ndarray, weights: LayerWeights, role: str, bias: str | None = None) -> np.ndarray:
    out = x @ weights[role].T
    if bias is not None and weights.get(bias) is not None:
        out += weights[bias]
    return out


def _block(hidden: np.ndarray, weights: LayerWeights, config: DecoderConfig, cos: np.ndarray, sin: np.ndarray,
           window: int | None, *, keep: bool,
           run_rest: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, bool]:
    """One decoder layer (its keys within ``window`` of their query, if not None): its queries and kv-head keys
    after RoPE, its attention (when ``keep``), its output (when ``run_rest``) and whether every attention
    weight was finite."""
    heads, kv_heads, head_dim = config.num_heads, config.num_kv_heads, config.head_dim
    x = _rms_norm(hidden, weights["attn_norm"], config.rms_norm_eps)
    queries = _rotate(_heads(_linear(x, weights, "q", "q_bias"), heads, head_dim), cos, sin)
    keys = _rotate(_heads(_linear(x, weights, "k", "k_bias"), kv_heads, head_dim), cos, sin)
    values = _heads(_linear(x, weights, "v", "v_bias"), kv_heads, head_dim) if run_rest else None
    attention, mixed, finite = _attend(queries, keys, values, window, keep=keep)
    if mixed is None:
        return queries, keys, attention, None, finite
    hidden = hidden + _linear(mixed.transpose(1, 0, 2).reshape(hidden.shape[0], heads * head_dim), weights, "o",
                              "o_bias")
    y = _rms_norm(hidden, weights["mlp_norm"], config.rms_norm_eps)
    gate = _linear(y, weights, "gate", "gate_bias")
    hidden = hidden + _linear((gate / (np.float32(1) + np.exp(-gate))) * _linear(y, weights, "up", "up_bias"),
                              weights, "down", "down_bias")
    return queries, keys, attention, hidden, finite


def _attend(queries: np.ndarray, keys: np.ndarray, values: np.ndarray | None, window: int | None, *,
            keep: bool) -> tuple[np.ndarray | None, np.ndarray | None, bool]:
    """Each head's softmax(q kᵀ/√d + mask) (kept when ``keep``) and its product with ``values`` (when given),
    and whether every weight was finite. Query rows are taken :data:`SCORE_ROWS` at a time (at most
    :data:`SCORE_VALUES` logits), each block against the keys it may see only (0 … its last row, or its
    window), so a causal layer costs about half of T² logits per head."""
    heads, count, head_dim = queries.shape
    group = heads // keys.shape[0]
    attention = np.zeros((heads, count, count), np.float32) if keep else None
    mixed = np.empty_like(queries) if values is not None else None
    rows = max(1, min(SCORE_ROWS, SCORE_VALUES // count))
    scale = np.float32(head_dim ** -0.5)
    finite = True
    for start in range(0, count, rows):
        stop = min(count, start + rows)
        first = 0 if window is None else max(0, start - window + 1)
        mask = _mask(start, stop, first, stop, window)
        for head in range(heads):
            scores = (queries[head, start:stop] @ keys[head // group, first:stop].T) * scale
            weights = _softmax(np.where(mask, scores, -np.inf))
            finite = finite and bool(np.isfinite(weights).all())
            if attention is not None:
                attention[head, start:stop, first:stop] = weights
            if mixed is not None:
                mixed[head, start:stop] = weights @ values[head // group, first:stop]
    return attention, mixed, finite


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


# ----------------------------------------------------------------- arguments
def _layers(layers: object, count: int) -> tuple[int, ...]:
    if layers is None:
        return tuple(range(count))
    if isinstance(layers, (int, np.integer)) and not isinstance(layers, bool):
        layers = [layers]
    chosen = limits.check_integers("layers", layers, 0, count - 1, count * 4 + 16, "layers")
    if chosen.size == 0:
        raise ValueError(f"layers must name at least one layer in 0…{count - 1}")
    return tuple(sorted({int(layer) for layer in chosen}))


def _ranges(layers: tuple[int, ...]) -> str:
    if layers == tuple(range(layers[0], layers[-1] + 1)):
        return f"{layers[0]}…{layers[-1]}" if len(layers) > 1 else str(layers[0])
    return ", ".join(map(str, layers))


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
