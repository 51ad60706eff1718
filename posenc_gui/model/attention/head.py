"""A toy single-head self-attention, to see why attention ignores word order.

The notes start from the claim that self-attention cannot tell
*dog bites man* from *man bites dog*. This module traces both sentences
through the formula, number by number::

    X = E            (or E + PE, the positional encoding added)
    Q = X W_q,  K = X W_k,  V = X W_v
    S = Q Kᵀ / √d_k                 (the attention logits, "scores")
    A = softmax(S) row by row       (each row sums to 1)
    Z = A V                         (the output, one row per word)

Without position, reordering the words (a permutation matrix ``P``) only
reorders the rows: ``Z_b = P Z_a`` and ``A_b = P A_a Pᵀ``. With a positional
encoding added, word ``i`` carries ``e_i + p_i`` and the equality breaks.

RoPE (the ``rope`` scheme) adds nothing: ``X = E``, and the head rotates its
queries and keys by their positions before the logits,
``S = (R_m q_m)·(R_n k_n) / √d_k`` (:class:`HeadRotation`), with ``V``
unrotated. The rotation is RoPE at the demo head's dimension ``d_k`` (the
app's d_model, RoPE's head dimension, is not used; the demo's is small so
its numbers can be read) with the scheme's ``rope_theta``, pairing, partial
rotary factor and context scaling, for the sentence's positions ``0 … n−1``
(dynamic NTK scales for the sentence's length ``n``). A rotated logit depends
on the offset ``n − m`` only, and reordering the words changes the offsets.

A causal (decoder) head masks the future: with ``causal=True`` query ``i``
sees only the keys ``j ≤ i``; the masked logits are ``−∞`` before the
softmax, so their weights are exactly 0 and each row's softmax runs over the
allowed keys only (:func:`mask_logits`). The mask is itself positional: the
set of words a word attends to depends on where it stands, and the first
word's output is its own value vector, whatever the words are. So even with
no position at all (the ``nope`` scheme), permuting the words changes the
outputs beyond a permutation (Kazemnejad et al. 2023, NoPE in causal
decoders); :class:`MaskEvidence` measures why.

A bias added to the logits (ALiBi, T5: the "bias" family) enters through
``self_attention(..., logit_bias=B)``: ``B`` is a ``(queries, keys)`` array
added to the head's logits before the mask and the softmax, ``−∞`` allowed
(that key is then masked too), e.g. ``B = positional_logits(scheme,
positions, positions, ...)`` for the sentence's positions ``0 … n−1``.

Everything is deterministic: the embeddings and weights are seeded
(:mod:`.embeddings`). The logits' split is :mod:`.split`, the comparison of
two orderings :mod:`.ordering`, the whole demo :mod:`.permutation`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..core import limits
from ..rope import rope_pairs, rope_rotate
from ..schemes import SCHEMES, encode
from .embeddings import (
    DEFAULT_DEMO_D_MODEL,
    MAX_WORDS,
    _check_tokens,
    _readonly,
    attention_weights,
    check_demo_d_model,
    token_embeddings,
)



def _check_scheme(scheme: object) -> str:
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}; got {limits.shown(scheme)}")
    return scheme


def _check_scheme_kwargs(scheme_kwargs: object) -> dict[str, Any]:
    if scheme_kwargs is None:
        return {}
    if not isinstance(scheme_kwargs, Mapping):
        raise ValueError(
            f"scheme_kwargs must be a mapping of the scheme's parameters (base, layout, length), "
            f"got {limits.shown(scheme_kwargs)}"
        )
    return dict(scheme_kwargs)


def position_kind(scheme: str) -> str:
    """How the demo gives the head position with ``scheme``.

    Returns
    -------
    str
        ``"rotation"`` for a scheme that declares its rotation
        (:attr:`~posenc_gui.model.schemes.Scheme.rotation`: Q and K are rotated), ``"added"`` for a scheme that gives a table (X = E + PE),
        ``"bias"`` for a scheme that adds a bias to the logits (ALiBi, T5).

    Raises
    ------
    ValueError
        For an unknown scheme, or one that gives neither.
    """
    info = SCHEMES[_check_scheme(scheme)]
    if info.rotation is not None:
        return "rotation"
    if "table" in info.provides:
        return "added"
    if info.family == "bias":
        return "bias"
    raise ValueError(
        f"scheme {scheme!r} ({info.label}) gives no table to add to the embeddings and is not one of the "
        f"rotations the demo applies (it declares no rotation of the queries and keys)"
    )


def positional_matrix(
    n: int, d_model: int, scheme: str, scheme_kwargs: Mapping[str, Any] | None = None
) -> np.ndarray:
    """``PE`` for positions ``0 … n−1``: ``encode(scheme, range(n), d_model, **scheme_kwargs)``."""
    n = limits.check_int("n", n, 0, limits.MAX_SEQ_LEN)
    return encode(scheme, np.arange(n, dtype=np.float64), d_model, **_check_scheme_kwargs(scheme_kwargs))


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax, stable for large logits (the row maximum is subtracted).

    A ``−∞`` entry (a masked key) gets weight exactly 0, and the row is a
    softmax over its finite entries only; every row needs one finite entry
    (:func:`mask_logits` makes sure of it).
    """
    shifted = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True)


def causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """The keys a causal head lets each query see: ``allowed[i, j] = j ≤ i``.

    Parameters
    ----------
    n_queries : int
        Queries at positions ``0 … n_queries−1``, ``1 … MAX_WORDS``.
    n_keys : int, optional
        Keys at positions ``0 … n_keys−1`` (default: as many as queries).

    Returns
    -------
    numpy.ndarray
        bool, ``(n_queries, n_keys)``, read-only; row ``i`` has ``min(i + 1, n_keys)`` True entries.
    """
    n_queries = limits.check_int("n_queries", n_queries, 1, MAX_WORDS)
    n_keys = n_queries if n_keys is None else limits.check_int("n_keys", n_keys, 1, MAX_WORDS)
    allowed = np.tri(n_queries, n_keys, dtype=bool)
    allowed.setflags(write=False)
    return allowed


def check_logit_bias(logit_bias: object, n_queries: int, n_keys: int) -> np.ndarray:
    """Validate a bias added to the logits: a real ``(n_queries, n_keys)`` array, ``−∞`` allowed.

    Returns
    -------
    numpy.ndarray
        float64, read-only.

    Raises
    ------
    ValueError
        Naming ``logit_bias``, for another shape, NaN or ``+∞`` entries, or
        values that are not numbers.
    """
    try:
        bias = np.asarray(logit_bias, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"logit_bias must be a ({n_queries}, {n_keys}) array of numbers (query × key), "
                         f"got {limits.shown(logit_bias)}") from None
    if bias.shape != (n_queries, n_keys):
        raise ValueError(f"logit_bias must have the shape (queries, keys) = ({n_queries}, {n_keys}), "
                         f"got {bias.shape}")
    if np.isnan(bias).any() or np.isposinf(bias).any():
        raise ValueError("logit_bias must be finite or −inf (a masked key); it holds NaN or +inf")
    return _readonly(bias)


def mask_logits(logits: np.ndarray, causal: bool = False, logit_bias: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """The scores a softmax sees: the logits plus a bias, ``−∞`` at every masked key.

    Parameters
    ----------
    logits : ndarray, (n_queries, n_keys)
        The head's logits, ``Q Kᵀ / √d_k`` (rotated for RoPE).
    causal : bool
        Mask the future: query ``i`` sees the keys ``j ≤ i`` only (:func:`causal_mask`).
    logit_bias : ndarray, optional
        Added to the logits first (:func:`check_logit_bias`); a ``−∞`` entry
        masks its key as well.

    Returns
    -------
    scores : ndarray
        ``logits + logit_bias`` where allowed, ``−∞`` elsewhere; without a
        mask and a bias, the logits themselves.
    allowed : ndarray of bool
        Which keys each query sees (all True without a mask or a ``−∞`` bias).

    Raises
    ------
    ValueError
        For a bad ``logit_bias``, or one that masks every key of a query
        (its softmax would be 0/0).
    """
    logits = np.asarray(logits, dtype=np.float64)
    n_queries, n_keys = logits.shape
    scores = logits
    allowed = np.ones((n_queries, n_keys), dtype=bool)
    if logit_bias is not None:
        bias = check_logit_bias(logit_bias, n_queries, n_keys)
        allowed &= bias > -np.inf
        scores = logits + bias  # a finite logit plus −∞ is −∞
    if causal:
        allowed &= causal_mask(n_queries, n_keys)
        scores = np.where(allowed, scores, -np.inf)
    empty = np.flatnonzero(~allowed.any(axis=1))
    if empty.size:
        raise ValueError(f"logit_bias masks every key of query {int(empty[0])} (−inf in its whole row"
                         + (" of allowed keys" if causal else "") + "): its softmax has nothing to weigh")
    allowed.setflags(write=False)
    return scores, allowed


@dataclass(frozen=True, eq=False)
class HeadRotation:
    """How the head rotates its queries and keys: the scheme's rotation at the head's dimension.

    Attributes
    ----------
    positions : ndarray, (n,)
        The words' positions, ``0 … n−1``.
    inv_freq : ndarray, (rotary_dim / 2,)
        θ_i, from :func:`~posenc_gui.model.rope.rope_frequencies`.
    attention_factor : float
        Multiplies cos and sin of the rotated channels, as Hugging Face's
        ``attention_scaling``: their part of a logit scales by its square
        (1 except for YaRN); the pass-through channels are not scaled.
    pairing : str
        ``"halves"`` or ``"interleaved"`` (see :func:`~posenc_gui.model.rope.rope_pairs`).
    zeta : ndarray or None, (rotary_dim / 2,)
        A scale per pair (xPos's ζ_i): a query's pair i at position p is
        multiplied by ζ_i^(p/scale_base), a key's by ζ_i^(−p/scale_base); None without one.
    scale_base : float
        The distance over which the scale changes by ζ_i.
    """

    positions: np.ndarray
    inv_freq: np.ndarray
    attention_factor: float
    pairing: str
    zeta: np.ndarray | None = None
    scale_base: float = 1.0

    @property
    def name(self) -> str:
        """What the texts call the rotation: ``"xPos"`` with a scale per pair, else ``"RoPE"``."""
        return "RoPE" if self.zeta is None else "xPos"

    @property
    def rotary_dim(self) -> int:
        """The rotated channels (the first ``rotary_dim`` of the head; the rest pass through)."""
        return 2 * int(np.size(self.inv_freq))

    def rotate(self, x: np.ndarray, shift: float = 0.0, key: bool = False) -> np.ndarray:
        """Row ``m`` of ``x`` rotated by the angles ``(positions[m] + shift) · θ_i`` (:func:`rope_rotate`), and
        scaled by ζ_i^(±(positions[m] + shift)/scale_base) with a scale (− for the keys, ``key``)."""
        positions = np.asarray(self.positions, dtype=np.float64) + shift
        rotated = rope_rotate(x, positions, self.inv_freq, self.pairing, attention_factor=self.attention_factor)
        if self.zeta is None:
            return rotated
        scale = np.power(self.zeta[None, :], ((-positions if key else positions) / self.scale_base)[:, None])
        for channels in rope_pairs(self.rotary_dim, self.pairing):
            rotated[:, channels] *= scale
        return rotated

    def logits(self, q: np.ndarray, k: np.ndarray, shift: float = 0.0) -> np.ndarray:
        """``(R_m q_m)·(R_n k_n) / √d_k`` for every query row ``m`` and key row ``n``, ``(n, n)``.

        ``shift`` moves every position by the same amount: the result
        depends on the offsets only, so it does not change (up to rounding).
        """
        return (self.rotate(q, shift) @ self.rotate(k, shift, key=True).T) / math.sqrt(np.shape(k)[1])


def head_rotation(n: int, d_k: int, scheme: str = "rope", scheme_kwargs: Mapping[str, Any] | None = None
                  ) -> HeadRotation:
    """The rotation a head of width ``d_k`` applies to ``n`` words with ``scheme``, a rotation scheme.

    The scheme's :attr:`~posenc_gui.model.schemes.Scheme.rotation` at head dimension ``d_k``
    with its options (defaults filled in) and sequence length ``n`` (what
    dynamic NTK scales for), positions ``0 … n−1``.

    Raises
    ------
    ValueError
        For a scheme that is not a rotation, a bad option, or a ``d_k`` the
        rotation does not fit (RoPE: Hugging Face's ceil(int(d_k · partial_rotary_factor) / 2)
        pairs of channels, at least one), naming ``d_model``, the demo's.
    """
    n = limits.check_int("n", n, 1, MAX_WORDS)
    d_k = check_demo_d_model(d_k)
    if position_kind(scheme) != "rotation":
        raise ValueError(f"scheme {scheme!r} adds a table; it does not rotate the queries and keys")
    options = SCHEMES[scheme].check(_check_scheme_kwargs(scheme_kwargs))
    info = SCHEMES[scheme]
    try:
        rotation = info.rotation(d_k, n, **options)
    except ValueError as error:
        raise ValueError(f"d_model: the demo head's d_k {d_k} does not suit {info.label}: {error} (choose an even "
                         "demo d_model)") from None
    return HeadRotation(_readonly(np.arange(n, dtype=np.float64)), _readonly(rotation.inv_freq),
                        rotation.attention_factor, rotation.pairing,
                        None if rotation.zeta is None else _readonly(rotation.zeta), rotation.scale_base)


# --------------------------------------------------------------------------- one sentence


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """Every matrix of one sentence's pass through the head.

    Attributes
    ----------
    tokens : tuple of str
        The words, one per row.
    embeddings : ndarray, (n, d_model)
        ``E``, the toy word embeddings.
    positional : ndarray or None, (n, d_model)
        ``PE`` added to ``E``, or ``None`` without it (no position, or a rotation).
    x, q, k, v : ndarray
        ``X = E (+ PE)``, ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``.
    scores : ndarray, (n, n)
        What the softmax sees: the ``logits`` plus the ``bias``, ``−∞`` at
        the masked keys (row = query word, column = key word). Without a
        mask and a bias, the logits themselves.
    attention : ndarray, (n, n)
        ``A = softmax(scores)`` by rows: exactly 0 at the masked keys, each
        row a softmax over its allowed keys.
    output : ndarray, (n, d_model)
        ``Z = A V``.
    rotation : HeadRotation or None
        How Q and K were rotated (RoPE), or ``None``.
    q_rotated, k_rotated : ndarray or None, (n, d_k)
        ``Q̃ = R Q`` and ``K̃ = R K``, each row rotated by its word's
        position; ``None`` without a rotation.
    unrotated_scores : ndarray or None, (n, n)
        ``Q Kᵀ / √d_k`` of the same head without the rotation (the logits
        without position); ``None`` without a rotation.
    logits : ndarray, (n, n)
        The head's logits before the bias and the mask: ``Q Kᵀ / √d_k``, or
        ``Q̃ K̃ᵀ / √d_k`` with a rotation (given as None: the ``scores``).
    bias : ndarray or None, (n, n)
        The ``logit_bias`` added to the logits, or ``None``.
    allowed : ndarray of bool, (n, n)
        Which keys each query sees: the causal mask (``j ≤ i``) and the
        keys a ``−∞`` bias masks removed (given as None: every key).
    causal : bool
        Whether the head masks future keys.
    """

    tokens: tuple[str, ...]
    embeddings: np.ndarray
    positional: np.ndarray | None
    x: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    attention: np.ndarray
    output: np.ndarray
    rotation: HeadRotation | None = None
    q_rotated: np.ndarray | None = None
    k_rotated: np.ndarray | None = None
    unrotated_scores: np.ndarray | None = None
    logits: np.ndarray | None = None
    bias: np.ndarray | None = None
    allowed: np.ndarray | None = None
    causal: bool = False

    def __post_init__(self) -> None:
        if self.logits is None:  # a trace without bias and mask: its scores are its logits
            object.__setattr__(self, "logits", self.scores)
        if self.allowed is None:
            every = np.ones(np.shape(self.scores), dtype=bool)
            every.setflags(write=False)
            object.__setattr__(self, "allowed", every)

    @property
    def with_position(self) -> bool:
        """True if the head saw position: an encoding added, Q and K rotated, or a bias added to the logits."""
        return self.positional is not None or self.rotation is not None or self.bias is not None

    @property
    def masked(self) -> bool:
        """True if some query does not see some key (a causal mask, or a ``−∞`` bias)."""
        return not bool(np.all(self.allowed))

    def keys_seen(self) -> np.ndarray:
        """How many keys each query word attends to (``i + 1`` for word ``i`` under the causal mask)."""
        return np.count_nonzero(self.allowed, axis=1)

    def steps(self) -> dict[str, np.ndarray]:
        """The matrices in the order of the formula, keyed by their names."""
        rotated = {} if self.rotation is None else {"Q_rotated": self.q_rotated, "K_rotated": self.k_rotated}
        return {
            "X": self.x, "Q": self.q, "K": self.k, **rotated, "V": self.v,
            "scores": self.scores, "A": self.attention, "Z": self.output,
        }


def self_attention(
    tokens: Sequence[str],
    d_model: int = DEFAULT_DEMO_D_MODEL,
    *,
    scheme: str | None = None,
    scheme_kwargs: Mapping[str, Any] | None = None,
    seed: int = 0,
    causal: bool = False,
    logit_bias: np.ndarray | None = None,
) -> AttentionTrace:
    """Run one sentence through the toy attention head.

    Parameters
    ----------
    tokens : sequence of str
        The words (see :func:`tokenize`).
    d_model : int
        Embedding size, ``2 … 64``.
    scheme : str, optional
        A positional-encoding scheme (a key of ``SCHEMES``); ``None`` for no
        position (``X = E``). A table is added (``X = E + PE``); a rotation
        (:attr:`~posenc_gui.model.schemes.Scheme.rotation`) leaves ``X = E`` and rotates ``Q`` and
        ``K`` by position before the logits (:func:`head_rotation`), ``V``
        unrotated; a bias scheme leaves ``X = E`` and adds its bias at the
        words' positions ``0 … n−1`` to the logits (with ``logit_bias``, if given).
    scheme_kwargs : mapping, optional
        The scheme's parameters, e.g. ``EncodingParams.scheme_kwargs()``.
    seed : int
        Seed of the embeddings and weights.
    causal : bool
        Mask future keys: word ``i`` attends to words ``0 … i`` only (their
        logits ``−∞``, their weights exactly 0).
    logit_bias : ndarray, optional
        ``(n, n)`` (query word × key word), added to the logits before the
        mask and the softmax; ``−∞`` masks a key. The hook for the biases of
        the "bias" family (ALiBi, T5), with this sentence's positions
        ``0 … n−1``: the trace keeps it as ``bias``, and the split's check
        counts it (:func:`logit_split`).

    Returns
    -------
    AttentionTrace

    Raises
    ------
    ValueError
        For bad words, ``d_model``, scheme or seed, a ``logit_bias`` of
        another shape or with NaN or ``+∞``, or one masking every key of a word.
    """
    tokens = _check_tokens(tokens, "tokens")
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {limits.shown(causal)}")
    d_model = check_demo_d_model(d_model)
    weights = attention_weights(d_model, seed)
    e = token_embeddings(tokens, d_model, seed)
    kind = None if scheme is None else position_kind(scheme)
    pe = positional_matrix(len(tokens), d_model, scheme, scheme_kwargs) if kind == "added" else None
    x = e if pe is None else e + pe
    q, k, v = x @ weights.w_q, x @ weights.w_k, x @ weights.w_v
    plain_scores = (q @ k.T) / math.sqrt(weights.d_k)
    rotation = q_rotated = k_rotated = None
    logits = plain_scores
    if kind == "rotation":
        rotation = head_rotation(len(tokens), weights.d_k, scheme, scheme_kwargs)
        q_rotated, k_rotated = _readonly(rotation.rotate(q)), _readonly(rotation.rotate(k, key=True))
        logits = (q_rotated @ k_rotated.T) / math.sqrt(weights.d_k)  # as HeadRotation.logits
    bias = None if logit_bias is None else check_logit_bias(logit_bias, len(tokens), len(tokens))
    if kind == "bias":
        positions = np.arange(len(tokens), dtype=np.float64)
        scheme_bias = SCHEMES[scheme].bias(positions, positions, d_model, **dict(scheme_kwargs or {}))
        bias = _readonly(scheme_bias if bias is None else bias + scheme_bias)
    scores, allowed = mask_logits(logits, bool(causal), bias)
    a = softmax_rows(scores)
    z = a @ v
    return AttentionTrace(
        tokens, _readonly(e), None if pe is None else _readonly(pe), _readonly(x), _readonly(q),
        _readonly(k), _readonly(v), _readonly(scores), _readonly(a), _readonly(z),
        rotation, q_rotated, k_rotated, None if rotation is None else _readonly(plain_scores),
        _readonly(logits), bias, allowed, bool(causal),
    )
