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

Everything is deterministic: a word's toy embedding depends only on the word,
the seed and ``d_model`` (seeded with a CRC-32 of the word, not Python's
salted ``hash``), so the same word gets the same vector in every sentence and
every run; ``W_q``, ``W_k``, ``W_v`` depend only on the seed and ``d_model``.

Example
-------
>>> from posenc_gui.model.attention import permutation_demo
>>> demo = permutation_demo("dog bites man", "man bites dog")
>>> demo.without_pe.max_abs_diff_output < 1e-12
True
"""

from __future__ import annotations

import functools
import math
import unicodedata
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any, Mapping, Sequence

import numpy as np

from . import limits
from .rope import rope_pairs, rope_rotate
from .schemes import SCHEMES, encode

#: Allowed demo model dimension: small, so every number can be read.
MIN_DEMO_D_MODEL = 2
MAX_DEMO_D_MODEL = 64
DEFAULT_DEMO_D_MODEL = 8
#: Longest sentence (in words) the demo accepts.
MAX_WORDS = 512
#: Largest seed.
MAX_SEED = 2**32 - 1
#: The seed of the demo's embeddings and weights unless another is given.
DEFAULT_SEED = 0
#: Below this a difference is called "the same" in the verdicts (rounding is ~1e-16).
SAME_TOLERANCE = 1e-9

DEFAULT_SENTENCE_A = "dog bites man"
DEFAULT_SENTENCE_B = "man bites dog"

#: At most this many repeated words get a line in the verdict.
MAX_REPEATED_LINES = 3

#: Names of the four terms of the logit split, in order.
SPLIT_TERMS = ("e·e", "e·p", "p·e", "p·p")
#: Names of the matrices of the rotation split, in order.
ROTATION_TERMS = ("without rotation", "with rotation", "difference")
#: How far the offset check shifts every position (the rotated logits must stay the same).
SHIFT_CHECK = 1000.0
#: Why a rotation has no four-term split, and what the demo shows instead.
ROTATION_SPLIT_NOTE = (
    "The four-term split e·e + e·p + p·e + p·p applies to encodings added to the embeddings only. "
    "RoPE adds nothing (X = E) and rotates each query and key by its position instead, so what applies "
    "is the logits without and with the rotation and their difference, the rotation's contribution."
)


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array, dtype=np.float64)
    array.setflags(write=False)
    return array


# --------------------------------------------------------------------------- tokens


def _strip_punctuation(word: str) -> str:
    start, end = 0, len(word)
    while start < end and unicodedata.category(word[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(word[end - 1]).startswith("P"):
        end -= 1
    return word[start:end]


def tokenize(sentence: str, name: str = "sentence") -> tuple[str, ...]:
    """Split a sentence into lower-case words.

    Splits on whitespace, lower-cases, and strips punctuation from both ends
    of each word (``"Dog,"`` → ``"dog"``, ``"man's"`` stays); pieces that are
    only punctuation are dropped.

    Parameters
    ----------
    sentence : str
        The text.
    name : str
        The parameter name used in error messages (``"sentence_a"``, …).

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        If the sentence is not a string, has no words, or has more than
        :data:`MAX_WORDS` words.
    """
    if not isinstance(sentence, str):
        raise ValueError(f"{name} must be text, got {type(sentence).__name__}")
    words = tuple(w for w in (_strip_punctuation(p.lower()) for p in sentence.split()) if w)
    if not words:
        raise ValueError(f"{name} is empty: type 1…{MAX_WORDS} words")
    if len(words) > MAX_WORDS:
        raise ValueError(f"{name} has {len(words)} words; the limit is {MAX_WORDS} words")
    return words


def _check_tokens(tokens: Sequence[str], name: str) -> tuple[str, ...]:
    if isinstance(tokens, str):
        raise ValueError(f"{name} must be a sequence of words; use tokenize() on a sentence")
    if not isinstance(tokens, Iterable):
        raise ValueError(f"{name} must be a sequence of 1…{MAX_WORDS} words, got {limits.shown(tokens)}")
    tokens = tuple(islice(tokens, MAX_WORDS + 1))
    if not tokens or not all(isinstance(t, str) and t for t in tokens):
        raise ValueError(f"{name} must hold 1…{MAX_WORDS} non-empty words")
    if len(tokens) > MAX_WORDS:
        raise ValueError(f"{name} has more than {MAX_WORDS} words; the limit is {MAX_WORDS} words")
    return tokens


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
        (:attr:`~.schemes.Scheme.rotation`: Q and K are rotated), ``"added"`` for a scheme that gives a table (X = E + PE),
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


def check_demo_d_model(d_model: object) -> int:
    """Validate the demo's model dimension (``2 … 64``)."""
    return limits.check_int("d_model", d_model, MIN_DEMO_D_MODEL, MAX_DEMO_D_MODEL)


def _check_seed(seed: object) -> int:
    return limits.check_int("seed", seed, 0, MAX_SEED)


# --------------------------------------------------------------------------- parameters


def word_embedding(word: str, d_model: int, seed: int = 0) -> np.ndarray:
    """The toy embedding ``e`` of one word: standard normal entries.

    Seeded by ``(seed, crc32(word))``, so it is the same in every sentence,
    process and platform.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(d_model,)``.
    """
    if not isinstance(word, str) or not word:
        raise ValueError(f"word must be a non-empty str, got {limits.shown(word)}")
    d_model = check_demo_d_model(d_model)
    seed = _check_seed(seed)
    rng = np.random.default_rng([seed, zlib.crc32(word.encode("utf-8")), d_model])
    return rng.standard_normal(d_model)


def token_embeddings(tokens: Sequence[str], d_model: int, seed: int = 0) -> np.ndarray:
    """Stack the embeddings of ``tokens`` into ``E``, shape ``(len(tokens), d_model)``.

    Repeated words get identical rows.
    """
    tokens = _check_tokens(tokens, "tokens")
    d_model = check_demo_d_model(d_model)
    unique = {word: word_embedding(word, d_model, seed) for word in dict.fromkeys(tokens)}
    return np.vstack([unique[word] for word in tokens])


@dataclass(frozen=True, eq=False)
class AttentionWeights:
    """The projections of the toy attention head, each ``(d_model, d_k)``.

    Entries are normal with variance ``1 / d_model``, so ``Q`` and ``K`` keep
    the scale of ``X`` and the scaled scores ``Q Kᵀ / √d_k`` stay near unit
    size (the softmax is neither flat nor saturated).
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray

    @property
    def d_k(self) -> int:
        """The key (and query) dimension."""
        return int(self.w_k.shape[1])


def attention_weights(d_model: int, seed: int = 0) -> AttentionWeights:
    """Seeded ``W_q``, ``W_k``, ``W_v`` for a head with ``d_k = d_v = d_model`` (read-only, shared)."""
    return _attention_weights(check_demo_d_model(d_model), _check_seed(seed))


@functools.lru_cache(maxsize=16)
def _attention_weights(d_model: int, seed: int) -> AttentionWeights:
    # Drawn once per head: every trace and split of the same head used to
    # draw them again (two draws per scale of the Addition dock's 51-scale
    # sweep, 45 % of its time).
    rng = np.random.default_rng([seed, 0x5EED, d_model])
    w = rng.standard_normal((3, d_model, d_model)) / math.sqrt(d_model)
    return AttentionWeights(_readonly(w[0]), _readonly(w[1]), _readonly(w[2]))


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

    The scheme's :attr:`~.schemes.Scheme.rotation` at head dimension ``d_k``
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
        (:attr:`~.schemes.Scheme.rotation`) leaves ``X = E`` and rotates ``Q`` and
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


# --------------------------------------------------------------------------- four-term split


@dataclass(frozen=True, eq=False)
class LogitSplit:
    """The attention logits of ``e + p`` split into meaning and position terms.

    ``(e_i + p_i) W_q · ((e_j + p_j) W_k)ᵀ / √d_k`` expands into four
    ``(n, n)`` matrices, each scaled by ``1 / √d_k`` like the scores:

    - ``ee``: ``e_i W_q · (e_j W_k)ᵀ`` — meaning attends to meaning;
    - ``ep``: ``e_i W_q · (p_j W_k)ᵀ`` — a word attends to a position;
    - ``pe``: ``p_i W_q · (e_j W_k)ᵀ`` — a position attends to a word;
    - ``pp``: ``p_i W_q · (p_j W_k)ᵀ`` — position attends to position.

    ``total`` is the trace's ``scores``; ``max_abs_residual`` is
    ``max |ee + ep + pe + pp (+ bias) − total|`` over the keys each query
    sees (rounding only, ~1e-15). Under a mask (``allowed`` False) a term
    still has its value, but the head never uses it: ``total`` is ``−∞``
    there, and the check and the shares leave those entries out.
    """

    tokens: tuple[str, ...]
    ee: np.ndarray
    ep: np.ndarray
    pe: np.ndarray
    pp: np.ndarray
    total: np.ndarray
    max_abs_residual: float
    #: Which keys each query sees (None: every key).
    allowed: np.ndarray | None = None
    #: The trace's ``logit_bias``, a fifth term of the total (None without).
    bias: np.ndarray | None = None

    def terms(self) -> dict[str, np.ndarray]:
        """The four terms keyed by :data:`SPLIT_TERMS`."""
        return dict(zip(SPLIT_TERMS, (self.ee, self.ep, self.pe, self.pp)))

    def shares(self) -> dict[str, float]:
        """Each term's share of the summed absolute values of all the total's terms over the allowed keys (sums
        to 1): the four of :data:`SPLIT_TERMS`, and ``"bias"`` when the trace has one (a fifth term)."""
        keep = slice(None) if self.allowed is None else self.allowed
        terms = self.terms() if self.bias is None else {**self.terms(), "bias": self.bias}
        sizes = {name: float(np.abs(t[keep]).sum()) for name, t in terms.items()}
        total = sum(sizes.values())
        return {name: (s / total if total > 0 else 0.0) for name, s in sizes.items()}


def logit_split(trace: AttentionTrace, seed: int = 0) -> LogitSplit:
    """Split the scores of a trace made *with* position into its four terms.

    Parameters
    ----------
    trace : AttentionTrace
        From :func:`self_attention` with a ``scheme``.
    seed : int
        The seed the trace was made with (for the weights).

    Raises
    ------
    ValueError
        If the trace has neither a positional encoding nor a bias, or rotates
        Q and K (see :func:`rotation_split`).
    """
    if not isinstance(trace, AttentionTrace):
        raise ValueError(f"trace must be an AttentionTrace from self_attention(), got {limits.shown(trace)}")
    if trace.rotation is not None:
        raise ValueError(f"trace rotates Q and K: {ROTATION_SPLIT_NOTE} Use rotation_split().")
    if trace.positional is None and trace.bias is None:
        raise ValueError("trace has no positional encoding; make it with a scheme to split the logits")
    d_model = trace.embeddings.shape[1]
    weights = attention_weights(d_model, seed)
    scale = 1.0 / math.sqrt(weights.d_k)
    # a bias scheme adds nothing to X: its three position terms are 0 and the bias is the fifth term
    e = trace.embeddings
    p = np.zeros_like(e) if trace.positional is None else trace.positional
    eq, ek = e @ weights.w_q, e @ weights.w_k
    pq, pk = p @ weights.w_q, p @ weights.w_k
    ee, ep, pe, pp = (eq @ ek.T) * scale, (eq @ pk.T) * scale, (pq @ ek.T) * scale, (pq @ pk.T) * scale
    total = ee + ep + pe + pp if trace.bias is None else ee + ep + pe + pp + trace.bias
    allowed = trace.allowed
    residual = float(np.max(np.abs(total[allowed] - trace.scores[allowed])))  # masked keys: −∞, unused
    return LogitSplit(trace.tokens, _readonly(ee), _readonly(ep), _readonly(pe), _readonly(pp), trace.scores,
                      residual, allowed, trace.bias)


@dataclass(frozen=True, eq=False)
class RotationSplit:
    """What the four-term split becomes for a rotation: the logits without and with it.

    Attributes
    ----------
    tokens : tuple of str
    unrotated : ndarray, (n, n)
        ``q_m · k_n / √d_k``: the same head without the rotation (the logits
        without position).
    rotated : ndarray, (n, n)
        ``(R_m q_m)·(R_n k_n) / √d_k``: the trace's ``logits`` (its scores
        before a bias and the mask).
    difference : ndarray, (n, n)
        ``rotated − unrotated``: the rotation's contribution. On the
        diagonal (offset 0) it is ``(attention_factor² − 1)`` times the rotated
        channels' part, so 0 unless YaRN scales cos and sin.
    shift_residual : float
        ``max |S(positions + SHIFT_CHECK) − S(positions)|`` of the rotated
        logits: rounding only (the logits depend on the offsets only).
    note : str
        :data:`ROTATION_SPLIT_NOTE`.
    allowed : ndarray of bool or None
        Which keys each query sees (None: every key); the three matrices are
        defined everywhere, but the head uses only these entries.
    """

    tokens: tuple[str, ...]
    unrotated: np.ndarray
    rotated: np.ndarray
    difference: np.ndarray
    shift_residual: float
    note: str = ROTATION_SPLIT_NOTE
    allowed: np.ndarray | None = None

    def terms(self) -> dict[str, np.ndarray]:
        """The three matrices keyed by :data:`ROTATION_TERMS`."""
        return dict(zip(ROTATION_TERMS, (self.unrotated, self.rotated, self.difference)))


def rotation_split(trace: AttentionTrace) -> RotationSplit:
    """The logits of a trace made with a rotation, without and with it, and their difference.

    Raises
    ------
    ValueError
        If the trace has no rotation (an added encoding has :func:`logit_split`).
    """
    if not isinstance(trace, AttentionTrace):
        raise ValueError(f"trace must be an AttentionTrace from self_attention(), got {limits.shown(trace)}")
    if trace.rotation is None or trace.unrotated_scores is None:
        raise ValueError("trace has no rotation; make it with a rotating scheme (rope), or split an added "
                         "encoding's logits with logit_split()")
    shifted = trace.rotation.logits(trace.q, trace.k, SHIFT_CHECK)
    residual = float(np.max(np.abs(shifted - trace.logits)))
    return RotationSplit(trace.tokens, trace.unrotated_scores, trace.logits,
                         _readonly(trace.logits - trace.unrotated_scores), residual, ROTATION_SPLIT_NOTE,
                         trace.allowed)


def split_logits(trace: AttentionTrace, seed: int = 0) -> LogitSplit | RotationSplit:
    """What applies to the trace: :func:`rotation_split` for a rotation, else :func:`logit_split`."""
    if isinstance(trace, AttentionTrace) and trace.rotation is not None:
        return rotation_split(trace)
    return logit_split(trace, seed)


# --------------------------------------------------------------------------- comparison


def align_permutation(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> tuple[int, ...] | None:
    """The permutation that reorders ``a`` into ``b``, or ``None`` if there is none.

    Returns ``perm`` with ``tokens_b[i] == tokens_a[perm[i]]``: the matrix
    ``P`` with ``P[i, perm[i]] = 1`` satisfies ``P @ X_a == X_b`` for the
    embeddings. A repeated word's occurrences are matched in order (the first
    ``dog`` of b to the first ``dog`` of a, …).

    Raises
    ------
    ValueError
        Unless each is a sequence of 1 … :data:`MAX_WORDS` words (str).
    """
    tokens_a, tokens_b = _check_tokens(tokens_a, "tokens_a"), _check_tokens(tokens_b, "tokens_b")
    if len(tokens_a) != len(tokens_b) or Counter(tokens_a) != Counter(tokens_b):
        return None
    where: dict[str, list[int]] = defaultdict(list)
    for index, word in enumerate(tokens_a):
        where[word].append(index)
    used: dict[str, int] = defaultdict(int)
    perm = []
    for word in tokens_b:
        perm.append(where[word][used[word]])
        used[word] += 1
    return tuple(perm)


def permutation_matrix(perm: Sequence[int]) -> np.ndarray:
    """``P`` with ``P[i, perm[i]] = 1``, so ``(P @ M)[i] = M[perm[i]]``."""
    n = len(perm)
    p = np.zeros((n, n))
    p[np.arange(n), np.asarray(perm, dtype=np.int64)] = 1.0
    return p


def word_difference(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> str:
    """Which words (with multiplicity) one sentence has and the other lacks, e.g.
    ``"only in a: dog; only in b: cat"``; empty if they hold the same words."""
    count_a, count_b = Counter(tokens_a), Counter(tokens_b)
    only_a = sorted((count_a - count_b).elements())
    only_b = sorted((count_b - count_a).elements())
    parts = []
    for key, words in (("a", only_a), ("b", only_b)):
        if words:
            parts.append(f"only in {key}: " + ", ".join(words[:8]) + (" …" if len(words) > 8 else ""))
    return "; ".join(parts)


def _not_permutation_message(tokens_a: tuple[str, ...], tokens_b: tuple[str, ...]) -> str:
    return (
        f"Sentence b is not a reordering of sentence a ({word_difference(tokens_a, tokens_b)}), so there is no "
        "permutation to compare. Each sentence is still traced on its own; use the same words in "
        "another order to compare."
    )


def repeated_word_spread(trace: AttentionTrace) -> dict[str, float]:
    """For each word that occurs more than once: the largest difference between its output rows.

    Without position identical words have identical rows of ``Z`` (spread
    ≈ 0); with position they differ.
    """
    rows: dict[str, list[int]] = defaultdict(list)
    for index, word in enumerate(trace.tokens):
        rows[word].append(index)
    spread = {}
    for word, index in rows.items():
        if len(index) > 1:
            block = trace.output[index]
            spread[word] = float(np.max(np.abs(block - block[0])))
    return spread


#: At most this many words are named in a verdict's list of keys seen.
MAX_LISTED_WORDS = 4


@dataclass(frozen=True, eq=False)
class MaskEvidence:
    """What a causal mask lets each word see in two orderings of the same words, measured from the traces.

    Attributes
    ----------
    words : tuple of str
        Sentence a's words, in a's order.
    keys_seen_a, keys_seen_b : tuple of int
        How many keys each of a's words attends to in a, and the same
        occurrence of the word in b (``i + 1`` at position ``i``).
    first_words : tuple of str
        The first word of a and of b.
    first_output_minus_value : tuple of float
        ``max |Z[0] − V[0]|`` in a and in b: the first word sees only
        itself, so its output is its own value vector (0, exactly).
    """

    words: tuple[str, ...]
    keys_seen_a: tuple[int, ...]
    keys_seen_b: tuple[int, ...]
    first_words: tuple[str, str]
    first_output_minus_value: tuple[float, float]

    @property
    def changed(self) -> int:
        """How many words see a different number of keys in b than in a."""
        return sum(1 for a, b in zip(self.keys_seen_a, self.keys_seen_b) if a != b)

    def sentence(self) -> str:
        """Why the mask is positional, with these numbers, in words."""
        listed = ", ".join(f"“{word}” {a} → {b}" for word, a, b in
                           islice(zip(self.words, self.keys_seen_a, self.keys_seen_b), MAX_LISTED_WORDS))
        more = (f", … ({self.changed} of {len(self.words)} words see a different number)"
                if len(self.words) > MAX_LISTED_WORDS else "")
        first_a, first_b = self.first_words
        res_a, res_b = self.first_output_minus_value
        return (
            f"the causal mask is itself positional: word i attends only to words 0…i, so what a word sees "
            f"depends on its place (keys seen in a → b: {listed}{more}). The first word sees only itself, so "
            f"its output is its own value vector whatever the words are: max |Z[0] − V[0]| = {res_a:.1g} "
            f"(“{first_a}”, a) and {res_b:.1g} (“{first_b}”, b)."
        )


def mask_evidence(trace_a: AttentionTrace, trace_b: AttentionTrace, perm: Sequence[int]) -> MaskEvidence:
    """Measure what the mask lets each word see in ``trace_a`` and in ``trace_b`` (``perm`` aligns b to a).

    Counts the allowed keys of each query row and compares the first word's
    output with its value vector, in both traces.
    """
    seen_a, seen_b = trace_a.keys_seen(), trace_b.keys_seen()
    in_b = np.empty(len(perm), dtype=np.int64)
    in_b[np.asarray(perm, dtype=np.int64)] = np.arange(len(perm))  # a's row r is b's row in_b[r]
    first = tuple(float(np.max(np.abs(t.output[0] - t.v[0]))) for t in (trace_a, trace_b))
    return MaskEvidence(trace_a.tokens, tuple(int(c) for c in seen_a), tuple(int(c) for c in seen_b[in_b]),
                        (trace_a.tokens[0], trace_b.tokens[0]), (first[0], first[1]))


@dataclass(frozen=True, eq=False)
class OrderingComparison:
    """Two sentences through the same head, compared after aligning b to a.

    Attributes
    ----------
    trace_a, trace_b : AttentionTrace
    permutation : tuple of int or None
        ``perm`` with ``tokens_b[i] == tokens_a[perm[i]]``; ``None`` if b is
        not a reordering of a.
    max_abs_diff_output : float or None
        ``max |Z_b − P Z_a|``; ``None`` without a permutation.
    max_abs_diff_attention : float or None
        ``max |A_b − P A_a Pᵀ|``; ``None`` without a permutation.
    verdict : str
        The result in plain words, with the measured numbers.
    mask : MaskEvidence or None
        With a causal head and a permutation, what the mask lets each word
        see in a and in b; otherwise ``None``.
    """

    trace_a: AttentionTrace
    trace_b: AttentionTrace
    permutation: tuple[int, ...] | None
    max_abs_diff_output: float | None
    max_abs_diff_attention: float | None
    verdict: str
    mask: MaskEvidence | None = None

    @property
    def is_permutation(self) -> bool:
        """True if b is a reordering of a."""
        return self.permutation is not None

    @property
    def same(self) -> bool:
        """True if b's outputs are a's rows reordered (up to rounding)."""
        return self.max_abs_diff_output is not None and self.max_abs_diff_output <= SAME_TOLERANCE

    @property
    def causal(self) -> bool:
        """True if the head masks future keys."""
        return self.trace_a.causal


def _position_label(rotation: bool, bias: bool = False) -> str:
    """How the verdicts name the head with position: an added encoding, RoPE's rotation or a logit bias."""
    return "with RoPE" if rotation else "with the bias" if bias else "with position"


def _verdict(with_position: bool, perm: tuple[int, ...] | None, diff_z: float | None, diff_a: float | None,
             same_vectors: bool = False, rotation: bool = False, mask: MaskEvidence | None = None,
             causal: bool = False, bias: bool = False, bias_kept: bool = False) -> str:
    """The comparison in words; ``same_vectors``: the encoding gives every position the same vector;
    ``rotation``: the head rotates Q and K (RoPE) instead of adding an encoding; ``mask``: what a causal
    head's mask lets each word see (``causal``: the head has one); ``bias``: a bias is added to the logits;
    ``bias_kept``: the reordering gives every pair of words the bias it had (measured)."""
    label = _position_label(rotation, bias) if with_position else "without position"
    if causal:
        label += " and the causal mask" if with_position else " but with the causal mask"
    label = label[0].upper() + label[1:]  # not str.capitalize: "RoPE" keeps its capitals
    if perm is None or diff_z is None or diff_a is None:
        return f"{label}: no comparison — sentence b is not a reordering of sentence a."
    identity = all(i == j for i, j in enumerate(perm))
    if diff_z <= SAME_TOLERANCE and diff_a <= SAME_TOLERANCE:
        text = (
            f"{label} the outputs are the same rows permuted: max difference {diff_z:.1e} "
            f"(attention weights {diff_a:.1e})"
        )
        text += " — only floating-point rounding." if max(diff_z, diff_a) > 0 else "."
        if identity and (with_position or causal):
            text += (" Both sentences have the same order, so "
                     + ("position and the mask change" if with_position and causal
                        else "position changes" if with_position else "the mask changes")
                     + " nothing here.")
        elif with_position and same_vectors:
            text += (" The encoding gives every position the same vector, so attention still cannot see word "
                     "order: it is permutation invariant, as without position.")
        elif with_position and rotation:
            text += (" The rotation turns too little over these offsets to change the outputs: the head "
                     "still cannot see word order.")
        elif with_position and bias_kept:
            text += (" The reordering gives every pair of words the bias it had (e.g. a reversal under a "
                     "symmetric bias, which depends on |i − j| only), so the head cannot tell the two apart.")
        return text
    text = (
        f"{label} they differ by {diff_z:.2g} (largest |Z_b − P Z_a|; attention weights "
        f"by {diff_a:.2g}): the head now sees word order"
    )
    if mask is not None:
        if not with_position or same_vectors:
            reason = ("no position is added (every position's vector is the same), yet "
                      if with_position else "no position is added, yet ")
            return text + f" — {reason}{mask.sentence()}"
        if rotation:
            return text + (" — a rotated logit depends on the offset n − m between key and query, and the "
                           f"reordering changes the offsets; besides, {mask.sentence()}")
        if bias:
            return text + (" — the bias depends on the positions of query and key, which the reordering "
                           f"changes; besides, {mask.sentence()}")
        return text + f" — from the added encoding, and because {mask.sentence()}"
    if bias:
        return text + (" — the bias added to each logit depends on the positions of query and key, and the "
                       "reordering moves the words to other positions.")
    if rotation:
        return text + (" — a rotated logit depends on the offset n − m between key and query, and the "
                       "reordering changes the offsets.")
    return text + "."


def compare_orderings(trace_a: AttentionTrace, trace_b: AttentionTrace) -> OrderingComparison:
    """Compare two traces after aligning b's rows (and columns) to a's.

    Both traces must be made with the same ``d_model``, seed, causal mask
    and, for a fair comparison, the same scheme (or none). With a rotation
    the verdict says so and why the outputs differ (the rotated logits
    depend on the offsets); with a causal mask it measures what the mask
    lets each word see (:func:`mask_evidence`), which changes with the order
    even without position.

    Raises
    ------
    ValueError
        If one trace is causal and the other is not.
    """
    if trace_a.causal != trace_b.causal:
        raise ValueError("trace_a and trace_b must both have the causal mask or both not "
                         f"(causal {trace_a.causal} and {trace_b.causal})")
    perm = align_permutation(trace_a.tokens, trace_b.tokens)
    with_position = trace_a.with_position or trace_b.with_position
    rotation = trace_a.rotation is not None or trace_b.rotation is not None
    bias = trace_a.bias is not None or trace_b.bias is not None
    causal = trace_a.causal
    if perm is None:
        return OrderingComparison(trace_a, trace_b, None, None, None,
                                  _verdict(with_position, None, None, None, rotation=rotation, causal=causal,
                                           bias=bias))
    index = np.asarray(perm, dtype=np.int64)
    diff_z = float(np.max(np.abs(trace_b.output - trace_a.output[index])))
    diff_a = float(np.max(np.abs(trace_b.attention - trace_a.attention[np.ix_(index, index)])))
    same_vectors = all(trace.positional is not None and bool(np.all(trace.positional == trace.positional[0]))
                       for trace in (trace_a, trace_b))
    mask = mask_evidence(trace_a, trace_b, perm) if causal else None
    bias_kept = (trace_a.bias is not None and trace_b.bias is not None
                 and bool(np.array_equal(trace_b.bias, trace_a.bias[np.ix_(index, index)])))
    return OrderingComparison(trace_a, trace_b, perm, diff_z, diff_a,
                              _verdict(with_position, perm, diff_z, diff_a, same_vectors, rotation, mask, causal,
                                       bias, bias_kept),
                              mask)


# --------------------------------------------------------------------------- the whole demo


@dataclass(frozen=True, eq=False)
class PermutationDemo:
    """Everything the Permutation demo shows, for one pair of sentences.

    Attributes
    ----------
    sentence_a, sentence_b : str
        The sentences as typed.
    tokens_a, tokens_b : tuple of str
    d_model, seed : int
    scheme : str
        The positional-encoding scheme of the ``with_pe`` traces: a table
        added to the embeddings, or a rotation of Q and K (RoPE).
    scheme_kwargs : dict
        Its parameters.
    without_pe, with_pe : OrderingComparison
    split_a, split_b : LogitSplit or RotationSplit
        Each sentence's logits with position: the four-term split of an added
        encoding, or, for a rotation, the logits without and with it
        (:class:`RotationSplit`, whose ``note`` says why).
    message : str
        Empty when b reorders a; otherwise why there is no comparison.
    repeated : dict
        ``{"a": {word: (spread without PE, spread with PE)}, "b": {…}}`` for
        words that occur more than once (see :func:`repeated_word_spread`).
    causal : bool
        Whether the head masks future keys (in both comparisons).
    """

    sentence_a: str
    sentence_b: str
    tokens_a: tuple[str, ...]
    tokens_b: tuple[str, ...]
    d_model: int
    seed: int
    scheme: str
    scheme_kwargs: dict
    without_pe: OrderingComparison
    with_pe: OrderingComparison
    split_a: LogitSplit | RotationSplit
    split_b: LogitSplit | RotationSplit
    message: str
    repeated: dict
    causal: bool = False

    @property
    def rotates(self) -> bool:
        """True if position is a rotation of Q and K (RoPE), not an encoding added to X."""
        return self.with_pe.trace_a.rotation is not None

    @property
    def biased(self) -> bool:
        """True if position is a bias added to the logits (ALiBi, T5), not an encoding added to X."""
        return self.with_pe.trace_a.positional is None and self.with_pe.trace_a.bias is not None

    @property
    def masked_split(self) -> bool:
        """True if some key is masked in the split (a causal mask, or a bias of −∞)."""
        return self.with_pe.trace_a.masked or self.with_pe.trace_b.masked

    @property
    def is_permutation(self) -> bool:
        """True if sentence b is a reordering of sentence a."""
        return self.without_pe.is_permutation

    @property
    def permutation(self) -> tuple[int, ...] | None:
        """``perm`` with ``tokens_b[i] == tokens_a[perm[i]]``, or ``None``."""
        return self.without_pe.permutation

    def comparison(self, with_position: bool) -> OrderingComparison:
        """``with_pe`` or ``without_pe``."""
        return self.with_pe if with_position else self.without_pe

    def verdict_lines(self) -> list[str]:
        """The verdicts in plain words: the comparison, or the reason there is none, and repeated words."""
        lines = [self.without_pe.verdict, self.with_pe.verdict] if self.is_permutation else [self.message]
        seen: set[str] = set()
        for key in ("a", "b"):
            for word, (plain, positioned) in self.repeated[key].items():
                if word in seen:
                    continue
                seen.add(word)
                if len(seen) > MAX_REPEATED_LINES:
                    break
                if plain <= SAME_TOLERANCE:
                    plain_text = f"are identical (max difference {plain:.1e})"
                else:  # only under the causal mask: each occurrence sees another number of words
                    plain_text = (f"differ by {plain:.2g}, as the causal mask lets each occurrence see a "
                                  "different number of words")
                lines.append(
                    f"“{word}” occurs more than once in sentence {key}: without position its output rows "
                    f"{plain_text}; {_position_label(self.rotates)} they differ by {positioned:.2g}."
                )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The numbers as JSON-able values (lists, floats, ``None``); see :func:`permutation_dict`."""
        return permutation_dict(self)


def _unmasked_list(matrix: np.ndarray, allowed: np.ndarray | None) -> list:
    """``matrix`` as nested lists, ``None`` (JSON null) at the masked entries."""
    if allowed is None or np.all(allowed):
        return matrix.tolist()
    return [[value if keep else None for value, keep in zip(row, keep_row)]
            for row, keep_row in zip(matrix.tolist(), allowed.tolist())]


def _comparison_dict(comparison: OrderingComparison) -> dict[str, Any]:
    mask = comparison.mask
    trace_a, trace_b = comparison.trace_a, comparison.trace_b
    return {
        "attention_a": trace_a.attention.tolist(),
        "attention_b": trace_b.attention.tolist(),
        "output_a": trace_a.output.tolist(),
        "output_b": trace_b.output.tolist(),
        "max_abs_diff_output": comparison.max_abs_diff_output,
        "max_abs_diff_attention": comparison.max_abs_diff_attention,
        "scores_a": _unmasked_list(trace_a.scores, trace_a.allowed),
        "scores_b": _unmasked_list(trace_b.scores, trace_b.allowed),
        "allowed_a": trace_a.allowed.tolist(),
        "allowed_b": trace_b.allowed.tolist(),
        "mask": None if mask is None else {
            "words": list(mask.words),
            "keys_seen_a": list(mask.keys_seen_a),
            "keys_seen_b": list(mask.keys_seen_b),
            "first_words": list(mask.first_words),
            "first_output_minus_value": list(mask.first_output_minus_value),
        },
        "verdict": comparison.verdict,
    }


def permutation_dict(demo: PermutationDemo) -> dict[str, Any]:
    """The demo's numbers as a JSON-able dict (for ``json.dump``).

    Keys: ``tokens_a``, ``tokens_b``, and for each of ``without_pe`` and
    ``with_pe``: ``attention_a``, ``attention_b``, ``output_a``, ``output_b``
    (nested lists, rows = words), ``max_abs_diff_output`` and
    ``max_abs_diff_attention`` (after aligning b to a; ``null`` if b is not a
    reordering of a), plus ``scores_a``/``scores_b`` (``null`` at a masked
    key), ``allowed_a``/``allowed_b`` (which keys each word sees), ``mask``
    (with the causal mask: ``words``, ``keys_seen_a``, ``keys_seen_b``,
    ``first_words``, ``first_output_minus_value`` of :class:`MaskEvidence`;
    else ``null``) and ``verdict``. Also ``causal``,
    ``sentence_a``, ``sentence_b``, ``is_permutation``, ``permutation``,
    ``message``, ``d_model``, ``seed``, ``scheme``, ``scheme_kwargs``,
    ``position`` (``"added"``, ``"bias"`` or ``"rotation"``) and, for an added encoding or a bias,
    ``logit_split`` (``a``/``b``: the four terms, ``bias`` (``null`` without), ``total``, ``sum_of`` (the
    terms that add up to ``total``), ``max_abs_residual`` (max |their sum − total| over the keys the head
    uses), ``shares`` (the bias's too)) with ``rotation`` and ``rotation_split`` ``null``; for a rotation,
    ``logit_split`` ``null``,
    ``rotation`` (``inv_freq``, ``attention_factor``, ``pairing``,
    ``rotary_dim``) and ``rotation_split`` (``a``/``b``:
    ``without_rotation``, ``with_rotation``, ``difference``,
    ``shift_residual``; and ``note``). Split matrices hold ``null`` at the
    masked keys (the head does not use them).
    """
    if not isinstance(demo, PermutationDemo):
        raise ValueError(f"demo must be a PermutationDemo from permutation_demo(), got {limits.shown(demo)}")

    def split(s: LogitSplit) -> dict[str, Any]:
        return {
            **{name: _unmasked_list(term, s.allowed) for name, term in s.terms().items()},
            "bias": None if s.bias is None else _unmasked_list(s.bias, s.allowed),
            "total": _unmasked_list(s.total, s.allowed),
            "sum_of": [*SPLIT_TERMS, *(() if s.bias is None else ("bias",))],
            "max_abs_residual": s.max_abs_residual, "shares": s.shares(),
        }

    def rotated(s: RotationSplit) -> dict[str, Any]:
        return {
            **{name.replace(" ", "_"): _unmasked_list(term, s.allowed) for name, term in s.terms().items()},
            "shift_residual": s.shift_residual,
        }

    rotation = demo.with_pe.trace_a.rotation
    splits = (demo.split_a, demo.split_b)
    return {
        "sentence_a": demo.sentence_a,
        "sentence_b": demo.sentence_b,
        "tokens_a": list(demo.tokens_a),
        "tokens_b": list(demo.tokens_b),
        "is_permutation": demo.is_permutation,
        "permutation": None if demo.permutation is None else list(demo.permutation),
        "message": demo.message,
        "causal": demo.causal,
        "d_model": demo.d_model,
        "seed": demo.seed,
        "scheme": demo.scheme,
        "scheme_kwargs": {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in demo.scheme_kwargs.items()},
        "position": "rotation" if demo.rotates else "bias" if demo.biased else "added",
        "without_pe": _comparison_dict(demo.without_pe),
        "with_pe": _comparison_dict(demo.with_pe),
        "logit_split": None if demo.rotates else dict(zip("ab", map(split, splits))),
        "rotation": None if rotation is None else {
            "inv_freq": rotation.inv_freq.tolist(), "attention_factor": rotation.attention_factor,
            "pairing": rotation.pairing, "rotary_dim": rotation.rotary_dim,
            **({} if rotation.zeta is None else {"zeta": rotation.zeta.tolist(), "scale_base": rotation.scale_base}),
        },
        "rotation_split": None if not demo.rotates else {**dict(zip("ab", map(rotated, splits))),
                                                         "note": ROTATION_SPLIT_NOTE},
    }


def permutation_demo(
    sentence_a: str = DEFAULT_SENTENCE_A,
    sentence_b: str = DEFAULT_SENTENCE_B,
    d_model: int = DEFAULT_DEMO_D_MODEL,
    scheme: str = "sinusoidal",
    scheme_kwargs: Mapping[str, Any] | None = None,
    seed: int = DEFAULT_SEED,
    causal: bool = False,
) -> PermutationDemo:
    """Trace two sentences through the toy head, with and without position, and compare.

    Parameters
    ----------
    sentence_a, sentence_b : str
        The sentences; b is usually a reordering of a ("dog bites man",
        "man bites dog"). If it is not, the result says so in ``message``
        (no exception) and the per-sentence traces are still there.
    d_model : int
        Embedding size of the demo, ``2 … 64`` (default 8).
    scheme : str
        Positional-encoding scheme for the ``with_pe`` traces: a table is
        added to the embeddings; ``rope`` rotates the head's Q and K by
        position instead (see :func:`self_attention`).
    scheme_kwargs : mapping, optional
        Its parameters (``EncodingParams.scheme_kwargs()``).
    seed : int
        Seed of embeddings and weights, ``0 … 2³²−1``.
    causal : bool
        Mask future keys in every trace (a decoder's head): word ``i``
        attends to words ``0 … i`` only. The mask is positional, so the
        outputs then change with the order even without position, and the
        comparisons say why (:class:`MaskEvidence`).

    Returns
    -------
    PermutationDemo

    Raises
    ------
    ValueError
        For an empty sentence or one over :data:`MAX_WORDS` words (naming
        ``sentence_a`` / ``sentence_b``), a ``d_model`` outside ``2 … 64``, or
        a bad scheme or scheme parameter (for RoPE also a ``d_model`` whose
        rotated channels are odd or fewer than 2).
    """
    tokens_a = tokenize(sentence_a, "sentence_a")
    tokens_b = tokenize(sentence_b, "sentence_b")
    d_model = check_demo_d_model(d_model)
    seed = _check_seed(seed)
    scheme = _check_scheme(scheme)
    kwargs = _check_scheme_kwargs(scheme_kwargs)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {limits.shown(causal)}")
    causal = bool(causal)
    plain_a = self_attention(tokens_a, d_model, seed=seed, causal=causal)
    plain_b = self_attention(tokens_b, d_model, seed=seed, causal=causal)
    pos_a = self_attention(tokens_a, d_model, scheme=scheme, scheme_kwargs=kwargs, seed=seed, causal=causal)
    pos_b = self_attention(tokens_b, d_model, scheme=scheme, scheme_kwargs=kwargs, seed=seed, causal=causal)
    without_pe = compare_orderings(plain_a, plain_b)
    with_pe = compare_orderings(pos_a, pos_b)
    message = "" if without_pe.is_permutation else _not_permutation_message(tokens_a, tokens_b)
    repeated = {}
    for key, plain, positioned in (("a", plain_a, pos_a), ("b", plain_b, pos_b)):
        spread_plain, spread_pos = repeated_word_spread(plain), repeated_word_spread(positioned)
        repeated[key] = {w: (spread_plain[w], spread_pos[w]) for w in spread_plain}
    return PermutationDemo(
        sentence_a, sentence_b, tokens_a, tokens_b, d_model, seed, scheme, kwargs,
        without_pe, with_pe, split_logits(pos_a, seed), split_logits(pos_b, seed), message, repeated, causal,
    )
