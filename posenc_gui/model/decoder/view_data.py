"""What the Decoder panel shows of a traced text: attention by offset and by key, token-0 shares, positional heads.

Every function here runs in the app's worker process (NumPy only, arguments
and results pickle). :func:`trace_text` opens the decoder, tokenizes the
text, traces it and summarises every head; :func:`frequency_use` splits one
head by rotary pair. Definitions (``A`` one head's causal attention, T tokens)::

    by_offset[d]  = mean over queries i = d … T−1 of A[i, i − d]          (d = 0 … T−1)
    by_key[j]     = mean over queries i = j … T−1 of A[i, j]              (j = 0 … T−1)
    sink_share    = mean over queries i = 1 … T−1 of A[i, 0]              (query 0 can only see token 0)
    positional[d] = mean over queries i = d + 1 … T−1 of A[i, i − d]      (keys ≥ 1: token 0 left out)

A head is *positional* when ``max positional[d]`` over d = 0 … ⌊(T − 1)/2⌋
(each mean then over at least half of the queries) is at least
:data:`POSITIONAL_SHARE`: it puts that share of its attention, on average, on
the token at one fixed offset. It is a *sink* head when ``sink_share`` is at
least :data:`SINK_SHARE`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import limits
from ..rope import rope_bands
from .pairs import PairContributions, pair_contributions
from .trace import DecoderTrace, Progress, TraceCancelled, open_decoder

#: A head whose mean attention at one offset (keys ≥ 1) reaches this share is marked positional.
POSITIONAL_SHARE = 0.5
#: A head whose mean attention on token 0 (queries ≥ 1) reaches this share is marked an attention sink.
SINK_SHARE = 0.5
#: At most this many characters of text are traced.
MAX_TEXT_CHARS = 20_000
#: A trace for the panel keeps at most this many attention weights (layers × heads × T², 128 MiB of float32):
#: it is sent back from the worker whole, and the model view reads every layer.
MAX_VIEW_VALUES = 2**25


@dataclass(frozen=True, eq=False)
class HeadSummary:
    """Every head of the layers traced, summarised (see the module docstring). L layers kept, H heads, T tokens.

    Attributes
    ----------
    by_offset, by_key, positional : ndarray (L, H, T)
        ``positional`` is NaN where no query has a key ≥ 1 at that offset.
    sink_share : ndarray (L, H)
    positional_offset : ndarray of int (L, H)
        The offset of the largest ``positional`` within 0 … ⌊(T − 1)/2⌋ (−1 when T = 1).
    positional_peak : ndarray (L, H)
        That largest share (NaN when T = 1).
    """

    by_offset: np.ndarray
    by_key: np.ndarray
    positional: np.ndarray
    sink_share: np.ndarray
    positional_offset: np.ndarray
    positional_peak: np.ndarray

    @property
    def is_positional(self) -> np.ndarray:
        """(L, H) bool: the heads marked positional (peak ≥ :data:`POSITIONAL_SHARE`)."""
        return np.nan_to_num(self.positional_peak, nan=0.0) >= POSITIONAL_SHARE

    @property
    def is_sink(self) -> np.ndarray:
        """(L, H) bool: the heads marked attention sinks (token-0 share ≥ :data:`SINK_SHARE`)."""
        return self.sink_share >= SINK_SHARE


@dataclass(frozen=True, eq=False)
class DecoderRun:
    """A text traced by :func:`trace_text`: the model, the tokens, the trace and its :class:`HeadSummary`.

    Attributes
    ----------
    name, path : str
        The model's name and the path it was opened from.
    text : str
    token_texts : tuple of str
        Each token's text (its leading space kept).
    num_layers : int
        The model's layers (the trace keeps ``trace.layers`` of them).
    max_positions : int or None
        The model's trained context (max_position_embeddings), if it gives one.
    what_if : str
        "" for the model's own RoPE and positions, else what was changed, in words.
    trace : DecoderTrace
    summary : HeadSummary
        Row k is layer ``trace.layers[k]``.
    """

    name: str
    path: str
    text: str
    token_texts: tuple[str, ...]
    num_layers: int
    max_positions: int | None
    what_if: str
    trace: DecoderTrace
    summary: HeadSummary

    def row(self, layer: int) -> int:
        """The row of ``layer`` in :attr:`summary`; ValueError naming the layers traced."""
        if layer not in self.trace.layers:
            raise ValueError(f"layer must be one of the layers traced ({self.trace.layers[0]}…"
                             f"{self.trace.layers[-1]}), got {layer!r}")
        return self.trace.layers.index(layer)


def head_summary(attention: np.ndarray) -> tuple[np.ndarray, ...]:
    """``by_offset, by_key, positional, sink_share`` of each head of one layer's (H, T, T) causal attention.

    Returns
    -------
    tuple of ndarray
        (H, T), (H, T), (H, T) and (H,), as defined in the module docstring.
    """
    attention = np.asarray(attention, dtype=np.float64)
    heads, count, _ = attention.shape
    by_offset = np.empty((heads, count))
    positional = np.full((heads, count), np.nan)
    for offset in range(count):
        diagonal = np.diagonal(attention, offset=-offset, axis1=1, axis2=2)  # A[i, i − d], i = d … T−1
        by_offset[:, offset] = diagonal.mean(axis=1)
        if diagonal.shape[1] > 1:  # the first entry is the key 0
            positional[:, offset] = diagonal[:, 1:].mean(axis=1)
    by_key = attention.sum(axis=1) / np.arange(count, 0, -1)  # A[i, j] = 0 for i < j
    sink_share = attention[:, 1:, 0].mean(axis=1) if count > 1 else attention[:, 0, 0]
    return by_offset, by_key, positional, sink_share


def summarise(trace: DecoderTrace) -> HeadSummary:
    """The :class:`HeadSummary` of every layer ``trace`` kept."""
    parts = [head_summary(trace.attention(layer)) for layer in trace.layers]
    by_offset, by_key, positional = (np.stack([part[k] for part in parts]) for k in range(3))
    sink_share = np.stack([part[3] for part in parts])
    count = by_offset.shape[2]
    reach = (count - 1) // 2 + 1  # offsets 0 … ⌊(T − 1)/2⌋
    if count > 1:
        window = positional[:, :, :reach]
        offset = np.nanargmax(window, axis=2)
        peak = np.take_along_axis(window, offset[..., None], axis=2)[..., 0]
    else:
        offset = np.full(sink_share.shape, -1)
        peak = np.full(sink_share.shape, np.nan)
    return HeadSummary(by_offset, by_key, positional, sink_share, offset.astype(np.int64), peak)


def gap_positions(count: int, gap: tuple[int, int] | None) -> np.ndarray | None:
    """Position ids 0 … T − 1 with ``gap = (token, size)``: tokens from ``token`` on moved up by ``size``.

    None for no gap. ValueError naming ``gap`` and its range.
    """
    if gap is None:
        return None
    if not isinstance(gap, (tuple, list)) or len(gap) != 2:
        raise ValueError(f"gap must be (token, size) or None, got {limits.shown(gap)}")
    token = limits.check_int("gap token", gap[0], 1, max(1, count - 1))
    size = limits.check_int("gap size", gap[1], 0, 1_000_000)
    positions = np.arange(count, dtype=np.int64)
    positions[token:] += size
    return positions


def describe_what_if(rope: Mapping[str, Any] | None, gap: tuple[int, int] | None) -> str:
    """A what-if in words: its RoPE keys and its gap ("" for the model's own)."""
    parts = []
    for key, value in (rope or {}).items():
        if key == "rope_theta":
            parts.append(f"θ = {value:,g}")
        elif key in ("rope_scaling", "rope_parameters") and isinstance(value, Mapping):
            parts.append(f"{value.get('rope_type', value.get('type', '?'))} scaling ×{value.get('factor', 1):g}")
        else:
            parts.append(f"{key} {value}")
    if gap is not None and gap[1]:
        parts.append(f"positions +{gap[1]:,} from token {gap[0]}")
    return "; ".join(parts)


def trace_text(path: str, text: str, layers: object = None, rope: Mapping[str, Any] | None = None,
               gap: tuple[int, int] | None = None, progress: Progress | None = None, *,
               max_tokens: int | None = None, name: str = "text") -> DecoderRun:
    """Open the decoder at ``path``, tokenize ``text`` and trace it (see :meth:`Decoder.trace`).

    Parameters
    ----------
    path : str
        A Llama-family model: Hugging Face folder or GGUF file.
    text : str
        1 … :data:`MAX_TEXT_CHARS` characters.
    layers : int, sequence of int or None
        The layers kept (None: all).
    rope : Mapping or None
        A RoPE what-if in Hugging Face keys (None: the model's).
    gap : (token, size) or None
        A gap in the positions (:func:`gap_positions`).
    progress : callable or None
        ``progress(layers_done, layers_total)`` after each layer; False cancels (the app's worker gives it:
        :meth:`posenc_gui.compute.ComputeService.submit`'s ``on_progress``).
    max_tokens : int or None, keyword-only
        Refuse a text of more tokens than this (None: as many as the layers kept allow).
    name : str, keyword-only
        What ``text`` is called in a message.

    Raises
    ------
    ValueError
        Naming the argument and its range (a ModelFileError naming the file).
    TraceCancelled
        The window cancelled the request.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} must hold at least one character that is not a space")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"{name} must hold at most {MAX_TEXT_CHARS:,} characters, got {len(text):,}")
    decoder = open_decoder(path)
    ids = decoder.tokenize(text)
    config = decoder.config
    kept = config.num_layers if layers is None else len(np.atleast_1d(np.asarray(layers, dtype=object)))
    most = int(np.sqrt(MAX_VIEW_VALUES / max(1, kept * config.num_heads)))
    if max_tokens is not None and len(ids) > max_tokens:
        raise ValueError(f"{name} is {len(ids):,} tokens; at most {max_tokens:,} here (shorten it)")
    if len(ids) > most:
        raise ValueError(f"{name} is {len(ids):,} tokens; {decoder.name}'s {kept} layers × {config.num_heads} heads "
                         f"are traced for at most {most:,} tokens here (shorten the text)")
    positions = gap_positions(len(ids), gap)
    trace = decoder.trace(ids, layers=layers, positions=positions, rope=rope,
                          progress=progress)
    rope_keys = config.rope
    max_positions = rope_keys.get("max_position_embeddings") if isinstance(rope_keys, Mapping) else None
    return DecoderRun(decoder.name, os.fspath(path), text, tuple(decoder.token_texts(ids)), decoder.config.num_layers,
                      int(max_positions) if isinstance(max_positions, (int, np.integer)) else None,
                      describe_what_if(rope, gap), trace, summarise(trace))


def one_layer(trace: DecoderTrace, layer: int) -> DecoderTrace:
    """``trace`` keeping ``layer`` only (the same arrays, not copied): what a request about one layer sends to
    the worker, a thirtieth of a whole trace's pickle (ValueError naming the layers traced)."""
    trace.attention(layer)  # ValueError for a layer not traced
    return dataclasses.replace(trace, layers=(layer,), _attention={layer: trace._attention[layer]},
                               _queries={layer: trace._queries[layer]}, _keys={layer: trace._keys[layer]})


@dataclass(frozen=True, eq=False)
class FrequencyUse:
    """One head split by rotary pair (:class:`PairContributions`), with each pair's wavelength and band.

    Attributes
    ----------
    pairs : PairContributions
    wavelength : ndarray (P,)
        2π/θ_p in positions.
    band : ndarray of str (P,)
        How the model's scaling treats the pair (``rope_bands``; "unscaled" without scaling).
    mean_query_norm, mean_key_norm : ndarray (P,)
        |q_p| and |k_p| averaged over the tokens.
    offsets : ndarray of int (query + 1,)
        The offset query − j of each key j of ``pairs.logits``.
    """

    pairs: PairContributions
    wavelength: np.ndarray
    band: np.ndarray
    mean_query_norm: np.ndarray
    mean_key_norm: np.ndarray
    offsets: np.ndarray


def frequency_use(trace: DecoderTrace, layer: int, head: int) -> FrequencyUse:
    """Head ``head`` of ``layer`` split by rotary pair, for the last token's logits (see :class:`FrequencyUse`)."""
    pairs = pair_contributions(trace, layer, head)
    try:
        band = rope_bands(trace.rope).band
    except ValueError:  # a set-up rope_bands does not know: no bands, the wavelengths stand
        band = np.full(trace.inv_freq.size, "unscaled")
    if band.size != trace.inv_freq.size:
        band = np.full(trace.inv_freq.size, "unscaled")
    with np.errstate(divide="ignore"):
        wavelength = 2 * np.pi / trace.inv_freq
    return FrequencyUse(pairs, wavelength, band, pairs.query_norms.mean(axis=0), pairs.key_norms.mean(axis=0),
                        pairs.query - np.arange(pairs.query + 1))


__all__ = ["MAX_TEXT_CHARS", "MAX_VIEW_VALUES", "POSITIONAL_SHARE", "SINK_SHARE", "DecoderRun", "FrequencyUse",
           "HeadSummary", "TraceCancelled", "frequency_use", "gap_positions", "head_summary", "one_layer",
           "summarise", "trace_text"]
