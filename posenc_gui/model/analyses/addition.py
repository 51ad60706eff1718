"""Why add the positional encoding instead of concatenating it?

Three measurements answer the notes' question:

1. **Cost** (:func:`projection_cost`). A projection ``W`` (one of W_q, W_k,
   W_v) maps the model input to ``d_out`` outputs. Adding keeps the input at
   ``d`` dimensions: ``d·d_out`` parameters and ``N·d·d_out`` multiply-adds
   for ``N`` tokens. Concatenating ``[e | p]`` doubles the input to ``2d``:
   ``2d·d_out`` parameters and ``2·N·d·d_out`` multiply-adds, per projection.

2. **Interference** (:func:`scale_sweep`). With ``x = e + p`` the attention
   logit ``(e_i + p_i) W_q · ((e_j + p_j) W_k)ᵀ / √d_k`` is the sum of four
   terms e·e, e·p, p·e, p·p (split by
   :func:`posenc_gui.model.attention.logit_split`, the permutation demo's
   code). How large each term is, and how close ``e + p`` stays to ``e``
   (``cos(e, e + p)``), depends on the embedding scale ``σ``: embedding
   entries are i.i.d. ``N(0, σ²)``, so ``‖e‖ ≈ σ·√d`` (as in
   :func:`posenc_gui.model.analyses.analysis.embedding_norm`).

3. **Near-orthogonality** (:func:`orthogonality`). In high ``d`` a random
   embedding and a positional vector are almost orthogonal: ``|cos(e, p)|``
   concentrates near 0 like ``√(2/(π d))``, so after the addition the two
   still occupy nearly separate directions that ``W_q``, ``W_k`` can tell
   apart.

Everything is seeded and deterministic.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from ..core import limits
from ..attention import MAX_DEMO_D_MODEL, AttentionTrace, attention_weights, logit_split, softmax_rows
from ..core.cache import encode_sampled
from ..core.params import EncodingParams, check_params
from ..core.sampling import AxisSample
from ..schemes import encode

#: Names of the four logit terms, in order (the same as ``attention.SPLIT_TERMS``).
TERMS = ("e·e", "e·p", "p·e", "p·p")
#: At most this many positions are used for cos(e, e + p) (evenly sampled from 0 … N−1).
MAX_COSINE_POSITIONS = 512
#: At most this many tokens (positions 0 … n−1) go through the toy head for the logit split.
MAX_SPLIT_TOKENS = 64
#: Scale range accepted by the sweep.
MIN_SCALE = 1e-6
MAX_SCALE = limits.MAX_ADDITION_SCALE
#: Most scales one sweep evaluates.
MAX_SCALES = 1024
#: Samples per dimension in :func:`orthogonality`.
DEFAULT_ORTHO_SAMPLES = 512
MAX_ORTHO_SAMPLES = 4096
#: Largest samples × d the orthogonality sweep allocates at once.
MAX_ORTHO_ELEMENTS = 2**23


def default_scales() -> np.ndarray:
    """Log-spaced embedding scales σ from 10⁻² to 10³ (51 values)."""
    return np.logspace(-2.0, 3.0, 51)


# --------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class ProjectionCost:
    """Parameters and multiply-adds of one projection, adding vs concatenating.

    Attributes
    ----------
    d_model, d_out, seq_len : int
        Embedding size d, projection outputs, tokens N.
    input_add, input_concat : int
        Input width: ``d`` when adding, ``2d`` when concatenating.
    params_add, params_concat : int
        ``input · d_out`` weights (no bias).
    macs_add, macs_concat : int
        ``N · input · d_out`` multiply-adds for a sequence of N tokens.
    """

    d_model: int
    d_out: int
    seq_len: int
    input_add: int
    input_concat: int
    params_add: int
    params_concat: int
    macs_add: int
    macs_concat: int

    @property
    def params_ratio(self) -> float:
        """``params_concat / params_add`` (2 for concatenating a d-dimensional p)."""
        return self.params_concat / self.params_add

    @property
    def macs_ratio(self) -> float:
        """``macs_concat / macs_add``."""
        return self.macs_concat / self.macs_add


def projection_cost(d_model: int, seq_len: int, d_out: int | None = None) -> ProjectionCost:
    """Cost of one attention projection ``x W`` for ``x = e + p`` vs ``x = [e | p]``.

    Parameters
    ----------
    d_model : int
        Embedding (and positional encoding) size d.
    seq_len : int
        Tokens N in the sequence.
    d_out : int, optional
        Columns of W; ``d_model`` by default (the notes' 512 × 512).

    Returns
    -------
    ProjectionCost

    Examples
    --------
    >>> c = projection_cost(512, 128)
    >>> (c.params_add, c.params_concat)
    (262144, 524288)
    """
    d = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    n = limits.check_int("seq_len", seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    out = d if d_out is None else limits.check_int("d_out", d_out, 1, limits.MAX_D_MODEL)
    return ProjectionCost(d, out, n, d, 2 * d, d * out, 2 * d * out, n * d * out, 2 * n * d * out)


# --------------------------------------------------------------------------- scale sweep


@dataclass(frozen=True, eq=False)
class ScaleSweep:
    """cos(e, e + p) and the four logit terms against the embedding scale σ.

    Attributes
    ----------
    params : EncodingParams
    scales : ndarray, (m,)
        Embedding scales σ (entries of e are N(0, σ²)).
    cosine_mean, cosine_min : ndarray, (m,)
        Mean and minimum over the sampled positions of cos(e_i, e_i + p_i),
        at the full ``d_model``. 1 means the position left the embedding's
        direction untouched.
    cosine_positions : ndarray
        The positions used for the cosine (all of 0 … N−1 up to
        :data:`MAX_COSINE_POSITIONS`, else evenly sampled).
    term_rms : ndarray, (m, 4)
        Root mean square of each term's n × n matrix, in the order of :data:`TERMS`.
    term_share : ndarray, (m, 4)
        Each term's share of the summed |values| of all four (rows sum to 1).
    split_residual : ndarray, (m,)
        ``max |e·e + e·p + p·e + p·p − logits|`` (rounding only; a property, computed when first read).
    split_d_model, split_tokens : int
        The toy head's size: ``min(d_model, 64)`` dimensions (the permutation
        demo's limit), tokens at positions ``0 … split_tokens−1``.
    pe_norm_rms : float
        RMS of ‖p_i‖ over the cosine positions.
    balance_scale : float
        The σ at which ‖e‖ ≈ σ√d equals that RMS ‖p‖ (0 if p is all zeros).
    seed : int
    """

    params: EncodingParams
    scales: np.ndarray
    cosine_mean: np.ndarray
    cosine_min: np.ndarray
    cosine_positions: np.ndarray
    term_rms: np.ndarray
    term_share: np.ndarray
    split_d_model: int
    split_tokens: int
    pe_norm_rms: float
    balance_scale: float
    seed: int

    @functools.cached_property
    def split_residual(self) -> np.ndarray:
        """``max |e·e + e·p + p·e + p·p − logits|`` per scale (rounding only), computed on first use."""
        split = replace(self.params, d_model=self.split_d_model)
        return _split_residual(split, tuple(self.scales.tolist()), self.seed)


def _check_scales(scales: object) -> np.ndarray:
    array = limits.check_numbers("scales", scales, MIN_SCALE, MAX_SCALE, MAX_SCALES, "scales")
    if array.size == 0:
        raise ValueError(f"scales must hold 1…{MAX_SCALES} scales, got none")
    return array


def _check_seed(seed: object) -> int:
    return limits.check_int("seed", seed, 0, 2**32 - 1)


def sample_positions(seq_len: int, count: int) -> np.ndarray:
    """``0 … seq_len−1`` if at most ``count`` of them, else ``count`` evenly spaced integers (ends included).

    Both in ``1 … limits.MAX_SEQ_LEN``.
    """
    seq_len = limits.check_int("seq_len", seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    count = limits.check_int("count", count, 1, limits.MAX_SEQ_LEN)
    if seq_len <= count:
        return np.arange(seq_len, dtype=np.float64)
    return np.unique(np.round(np.linspace(0, seq_len - 1, count)))


def split_at_scale(params: EncodingParams, scale: float, seed: int = 0):
    """The four-term logit split for embedding scale ``σ`` in the toy head.

    Builds the permutation demo's head (``attention.attention_weights``) at
    ``min(d_model, 64)`` dimensions, with seeded embeddings ``σ·z`` (z
    standard normal) for positions ``0 … n−1`` (``n = min(seq_len, 64)``),
    adds ``PE`` of the current scheme, and splits the logits with
    :func:`posenc_gui.model.attention.logit_split`.

    Returns
    -------
    posenc_gui.model.attention.LogitSplit
    """
    params = check_params(params)
    scale = limits.check_real("scale", scale, MIN_SCALE, MAX_SCALE)
    seed = _check_seed(seed)
    d = min(params.d_model, MAX_DEMO_D_MODEL)
    n = min(params.seq_len, MAX_SPLIT_TOKENS)
    z = np.random.default_rng([seed, 0xADD, d, n]).standard_normal((n, d))
    pe = encode(params.scheme, np.arange(n, dtype=np.float64), d, **params.scheme_kwargs())
    return _split(z * scale, pe, seed)


def _split(e: np.ndarray, pe: np.ndarray, seed: int):
    n, d = e.shape
    weights = attention_weights(d, seed)
    x = e + pe
    q, k, v = x @ weights.w_q, x @ weights.w_k, x @ weights.w_v
    scores = (q @ k.T) / math.sqrt(weights.d_k)
    a = softmax_rows(scores)
    tokens = tuple(f"t{i}" for i in range(n))
    trace = AttentionTrace(tokens, e, pe, x, q, k, v, scores, a, a @ v)
    return logit_split(trace, seed)


@functools.lru_cache(maxsize=64)
def _unit_terms(params: EncodingParams, seed: int) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """The toy head's z and p, and its four logit terms at σ = 1 (z·z, z·p, p·z, p·p, each n × n).

    ``params.d_model`` is the toy head's (at most 64), and the head sees at
    most 64 tokens, so for d_model ≥ 64 these do not depend on d_model.
    """
    n_split, d_split = min(params.seq_len, MAX_SPLIT_TOKENS), params.d_model
    z = np.random.default_rng([seed, 0xADD, d_split, n_split]).standard_normal((n_split, d_split))
    p = params.encode(np.arange(n_split, dtype=np.float64))
    weights = attention_weights(d_split, seed)
    zq, zk, pq, pk = z @ weights.w_q, z @ weights.w_k, p @ weights.w_q, p @ weights.w_k
    scale = 1.0 / math.sqrt(weights.d_k)  # as logit_split scales the terms
    terms = ((zq @ zk.T) * scale, (zq @ pk.T) * scale, (pq @ zk.T) * scale, (pq @ pk.T) * scale)
    return _ro(z), _ro(p), tuple(_ro(term) for term in terms)


def _term_powers(scales: tuple) -> np.ndarray:
    """σ², σ, σ, 1 per scale: with embeddings σ·z the four terms are those powers times the terms at σ = 1."""
    return np.asarray(scales, dtype=np.float64)[:, None] ** np.array([2.0, 1.0, 1.0, 0.0])


@functools.lru_cache(maxsize=64)
def _split_sweep(params: EncodingParams, scales: tuple, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """RMS and share of the four logit terms per scale (read-only).

    After a d_model step (d_model ≥ 64) these come from here instead of 51
    more attention heads: the terms at σ = 1 are computed once and scaled;
    :func:`_split_residual` checks the scaled terms against each scale's
    own logits.
    """
    unit_terms = _unit_terms(params, seed)[2]
    unit_rms = np.array([math.sqrt(float(np.mean(term ** 2))) for term in unit_terms])
    unit_size = np.array([float(np.abs(term).sum()) for term in unit_terms])
    powers = _term_powers(scales)
    rms = powers * unit_rms
    sizes = powers * unit_size
    totals = sizes.sum(axis=1, keepdims=True)
    share = np.divide(sizes, totals, out=np.zeros_like(sizes), where=totals > 0)
    return _ro(rms), _ro(share)


@functools.lru_cache(maxsize=16)
def _split_residual(params: EncodingParams, scales: tuple, seed: int) -> np.ndarray:
    """``max |σ²·ee₁ + σ·ep₁ + σ·pe₁ + pp₁ − logits(σ)|`` per scale, with each scale's own logits.

    ``logits(σ) = (σz + p)W_q · ((σz + p)W_k)ᵀ / √d_k``. Nothing on screen
    shows it (it is rounding only, about 1e-15 of the logits), so it is
    computed when asked for, not on every step.
    """
    z, p, unit_terms = _unit_terms(params, seed)
    weights = attention_weights(params.d_model, seed)
    powers = _term_powers(scales)
    residual = np.empty(len(scales))
    for row, sigma in enumerate(scales):
        x = sigma * z + p
        logits = ((x @ weights.w_q) @ (x @ weights.w_k).T) / math.sqrt(weights.d_k)
        terms = [power * term for power, term in zip(powers[row], unit_terms)]
        residual[row] = float(np.max(np.abs(terms[0] + terms[1] + terms[2] + terms[3] - logits)))
    return _ro(residual)


@functools.lru_cache(maxsize=8)
def _cosine_terms(params: EncodingParams, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sampled positions and, per position, z·z, z·p and p·p (read-only).

    They do not depend on the scale σ: the Addition dock sweeps the default
    scales and then its own σ for the same parameters, and drew the
    embeddings and encoded the positions twice.
    """
    d = params.d_model
    positions = sample_positions(params.seq_len, MAX_COSINE_POSITIONS)
    if positions.size == params.seq_len:  # every position: the rows the core panels encode, shared with them
        pe = encode_sampled(params, AxisSample(0, 1, params.seq_len))
    else:
        pe = encode(params.scheme, positions, d, **params.scheme_kwargs())
    z = np.random.default_rng([seed, 0xC05, d, positions.size]).standard_normal((positions.size, d))
    terms = (positions, np.einsum("ij,ij->i", z, z), np.einsum("ij,ij->i", z, pe), np.einsum("ij,ij->i", pe, pe))
    return tuple(_ro(term) for term in terms)


def scale_sweep(params: EncodingParams, scales=None, seed: int = 0) -> ScaleSweep:
    """cos(e, e + p) and the four logit terms for each embedding scale σ.

    Parameters
    ----------
    params : EncodingParams
        Scheme, ``seq_len``, ``d_model``, …
    scales : array_like, optional
        Embedding scales σ in ``1e-6 … 1e6``; :func:`default_scales` by default.
    seed : int
        Seed of the embeddings (and of the toy head's weights).

    Returns
    -------
    ScaleSweep
    """
    params = check_params(params)
    scales = default_scales() if scales is None else _check_scales(scales)
    seed = _check_seed(seed)
    d = params.d_model
    positions, zz, zp, pp = _cosine_terms(params, seed)
    # cos(σz, σz + p) = (σ zz + zp) / (√zz · ‖σz + p‖), ‖σz + p‖² = σ² zz + 2σ zp + pp
    s = scales[:, None]
    norm_x = np.sqrt(np.maximum(s * s * zz + 2.0 * s * zp + pp, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = (s * zz + zp) / (np.sqrt(zz) * norm_x)
    cosine = np.clip(cosine, -1.0, 1.0)
    pe_rms = float(math.sqrt(pp.mean()))
    # Four-term split in the permutation demo's toy head, for every scale.
    d_split = min(d, MAX_DEMO_D_MODEL)
    n_split = min(params.seq_len, MAX_SPLIT_TOKENS)
    rms, share = _split_sweep(replace(params, d_model=d_split), tuple(scales.tolist()), seed)
    return ScaleSweep(
        params=params,
        scales=_ro(scales),
        cosine_mean=_ro(np.nanmean(cosine, axis=1) if positions.size else np.full(scales.size, np.nan)),
        cosine_min=_ro(np.nanmin(cosine, axis=1)),
        cosine_positions=_ro(positions),
        term_rms=_ro(rms),
        term_share=_ro(share),
        split_d_model=d_split,
        split_tokens=n_split,
        pe_norm_rms=pe_rms,
        balance_scale=pe_rms / math.sqrt(d),
        seed=seed,
    )


# --------------------------------------------------------------------------- orthogonality


@dataclass(frozen=True, eq=False)
class Orthogonality:
    """|cos| between random embeddings and positional vectors, against d.

    Attributes
    ----------
    dims : ndarray of int, (m,)
        The dimensions d measured (powers of two and the current ``d_model``).
    pe_mean, pe_q95, pe_max : ndarray, (m,)
        Mean, 95th percentile and maximum of |cos(e, p)| over the samples:
        e standard normal, p = PE(position) of the scheme at that d, position
        drawn uniformly from 0 … N−1 (zero vectors p, e.g. sin(0), left out).
    random_mean, random_q95 : ndarray, (m,)
        The same for two independent random embeddings, for reference.
    reference : ndarray, (m,)
        √(2/(π d)), the mean |cos| of a random direction with any fixed
        vector in high d (cos·√d tends to a standard normal).
    current_values : ndarray
        The |cos(e, p)| samples at the current ``d_model`` (for a histogram).
    n_samples : int
    seed : int
    """

    params: EncodingParams
    dims: np.ndarray
    pe_mean: np.ndarray
    pe_q95: np.ndarray
    pe_max: np.ndarray
    random_mean: np.ndarray
    random_q95: np.ndarray
    reference: np.ndarray
    current_values: np.ndarray
    n_samples: int
    seed: int


def default_dims(d_model: int) -> np.ndarray:
    """Powers of two from 2 to ``max(1024, d_model)`` (at most 8192), plus ``d_model``."""
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    top = min(max(1024, d_model), limits.MAX_D_MODEL)
    powers = 2 ** np.arange(1, int(math.log2(top)) + 1)
    return np.unique(np.concatenate([powers, [d_model]])).astype(np.int64)


def _abs_cos(dot: np.ndarray, norm_a: np.ndarray, norm_b: np.ndarray) -> np.ndarray:
    """|cos| from row-wise dot products and norms, rows where either vector is zero left out."""
    ok = (norm_a > 0) & (norm_b > 0)
    return np.clip(np.abs(dot[ok]) / (norm_a[ok] * norm_b[ok]), 0.0, 1.0)


#: Columns in one block of the embeddings drawn for :func:`orthogonality` (see :func:`orthogonality_embeddings`).
EMBEDDING_BLOCK = 256
#: Upper bound of the memory held by kept embedding blocks: both draws at d 8192 and 512 samples.
MAX_EMBEDDING_BYTES = 64 * 2**20

_EMBEDDING_BLOCKS: OrderedDict[tuple, np.ndarray] = OrderedDict()
_EMBEDDING_LOCK = threading.Lock()


def _sample_count(n_samples: int, d: int) -> int:
    """Pairs drawn for dimension ``d``: ``n_samples``, fewer where count × d would pass MAX_ORTHO_ELEMENTS."""
    return min(n_samples, max(16, MAX_ORTHO_ELEMENTS // d))


def _embedding_block(seed: int, rows: int, draw: int, block: int) -> np.ndarray:
    key = (seed, rows, draw, block)
    with _EMBEDDING_LOCK:
        kept = _EMBEDDING_BLOCKS.get(key)
        if kept is not None:
            _EMBEDDING_BLOCKS.move_to_end(key)
            return kept
    values = _ro(np.random.default_rng([seed, 0x0A7, rows, draw, block]).standard_normal((rows, EMBEDDING_BLOCK)))
    with _EMBEDDING_LOCK:
        _EMBEDDING_BLOCKS[key] = values
        while sum(array.nbytes for array in _EMBEDDING_BLOCKS.values()) > MAX_EMBEDDING_BYTES:
            _EMBEDDING_BLOCKS.popitem(last=False)
    return values


def _blocks(seed: int, count: int, d: int, draw: int) -> list[np.ndarray]:
    """The column blocks of :func:`orthogonality_embeddings`, the last cut to d columns in all."""
    blocks = [_embedding_block(seed, count, draw, block) for block in range(-(-d // EMBEDDING_BLOCK))]
    blocks[-1] = blocks[-1][:, :d - EMBEDDING_BLOCK * (len(blocks) - 1)]
    return blocks


def orthogonality_embeddings(seed: int, count: int, d: int, draw: int = 0) -> np.ndarray:
    """``count`` random embeddings e ~ N(0, I_d), as :func:`orthogonality` draws them.

    Columns come in blocks of :data:`EMBEDDING_BLOCK`, each block from its
    own generator seeded by ``(seed, count, draw, block index)``, so the
    embeddings of dimension d are the first d columns of those of any larger
    dimension with the same count: a base or scheme change measures every
    dimension again without drawing anything, and a d_model step draws at
    most one new block. ``draw`` 0 gives e, 1 the second embedding e' of
    the random pairs. Blocks are kept up to :data:`MAX_EMBEDDING_BYTES`.

    Parameters
    ----------
    seed : int
    count : int
        Rows (embeddings), at least 1.
    d : int
        Columns (dimensions), at least 1.
    draw : int
        0 or 1.

    Returns
    -------
    numpy.ndarray
        Shape ``(count, d)``.
    """
    seed, count, draw = _check_seed(seed), _check_count(count), limits.check_int("draw", draw, 0, 1)
    d = limits.check_int("d", d, 1, limits.MAX_D_MODEL)
    return np.hstack(_blocks(seed, count, d, draw))


def _check_count(count: object) -> int:
    return limits.check_int("count", count, 1, MAX_ORTHO_SAMPLES)


def _row_dots(blocks: list[np.ndarray], other: np.ndarray) -> np.ndarray:
    """Row-wise dot products of the embeddings in ``blocks`` with ``other``, block by block (no copy of the blocks)."""
    dots = np.einsum("ij,ij->i", blocks[0], other[:, :blocks[0].shape[1]])
    start = blocks[0].shape[1]
    for block in blocks[1:]:
        dots += np.einsum("ij,ij->i", block, other[:, start:start + block.shape[1]])
        start += block.shape[1]
    return dots


@functools.lru_cache(maxsize=256)
def _embedding_norms(seed: int, count: int, d: int, draw: int) -> np.ndarray:
    """Row norms of :func:`orthogonality_embeddings` (they never see the encoding: kept across base steps)."""
    blocks = _blocks(seed, count, d, draw)
    return _ro(np.sqrt(sum(np.einsum("ij,ij->i", block, block) for block in blocks)))


def orthogonality_positions(seq_len: int, count: int, seed: int) -> np.ndarray:
    """The positions (0 … seq_len − 1, float64) paired with the embeddings of :func:`orthogonality_embeddings`."""
    seq_len = limits.check_int("seq_len", seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    count, seed = _check_count(count), _check_seed(seed)
    return np.random.default_rng([seed, 0x0A8, seq_len, count]).integers(0, seq_len, size=count).astype(np.float64)


@functools.lru_cache(maxsize=16)
def _distinct_positions(seq_len: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct positions of :func:`orthogonality_positions` and each draw's index among them (read-only).

    At most seq_len distinct positions among the draws: each is encoded, and
    its norm taken, once. The draws are the same for every dimension with the
    same count, so a base step draws and sorts them once, not per dimension.
    """
    distinct, where = np.unique(orthogonality_positions(seq_len, count, seed), return_inverse=True)
    return _ro(distinct), _ro(where)


@functools.lru_cache(maxsize=256)
def _cosines_at(params: EncodingParams, n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray, tuple]:
    """|cos(e, PE)| and |cos(e, e')| of the samples drawn for dimension ``params.d_model`` (read-only), and their summary.

    The draws do not depend on the app's d_model: after a d_model step only
    the new d_model's entry is computed again, and its summary with it
    (mean, 95th percentile and maximum of the first, mean and 95th
    percentile of the second; NaN for no samples). The arrays hold at most
    ``n_samples`` values each.
    """
    d = params.d_model
    count = _sample_count(n_samples, d)
    distinct, where = _distinct_positions(params.seq_len, count, seed)
    pe = encode(params.scheme, distinct, d, **params.scheme_kwargs())
    pe_norms = np.sqrt(np.einsum("ij,ij->i", pe, pe))[where]
    dots = _row_dots(_blocks(seed, count, d, 0), pe[where])
    values = _ro(_abs_cos(dots, _embedding_norms(seed, count, d, 0), pe_norms))
    if values.size:
        pe_summary = (float(values.mean()), float(np.quantile(values, 0.95)), float(values.max()))
    else:
        pe_summary = (math.nan, math.nan, math.nan)
    rand, rand_summary = _random_pairs(seed, count, d)
    return values, rand, (*pe_summary, *rand_summary)


@functools.lru_cache(maxsize=256)
def _random_pairs(seed: int, count: int, d: int) -> tuple[np.ndarray, tuple[float, float]]:
    """|cos(e, e')| of the random pairs (read-only), and its mean and 95th percentile.

    They never see the scheme, base or sequence length, so they are kept
    apart from :func:`_cosines_at`'s entries: a base or scheme change
    reuses them.
    """
    dots = sum(np.einsum("ij,ij->i", a, b) for a, b in zip(_blocks(seed, count, d, 0), _blocks(seed, count, d, 1)))
    rand = _ro(_abs_cos(dots, _embedding_norms(seed, count, d, 0), _embedding_norms(seed, count, d, 1)))
    return rand, (float(rand.mean()), float(np.quantile(rand, 0.95)))


def orthogonality(params: EncodingParams, dims=None, n_samples: int = DEFAULT_ORTHO_SAMPLES,
                  seed: int = 0) -> Orthogonality:
    """How orthogonal random embeddings are to positional vectors, as d grows.

    Parameters
    ----------
    params : EncodingParams
        Scheme, ``seq_len`` (positions are drawn from 0 … N−1), base, layout;
        ``d_model`` is added to the dimensions measured.
    dims : array_like of int, optional
        Dimensions to measure, each in 2 … 8192; :func:`default_dims` by default.
    n_samples : int
        Pairs per dimension, 16 … 4096.
    seed : int

    Returns
    -------
    Orthogonality
    """
    params = check_params(params)
    n_samples = limits.check_int("n_samples", n_samples, 16, MAX_ORTHO_SAMPLES)
    seed = _check_seed(seed)
    if dims is None:
        dims_arr = default_dims(params.d_model)
        if params.info.sizes is not None:  # a table read from a file has its own width, and no wider one
            dims_arr = dims_arr[dims_arr <= params.d_model]
    else:
        dims_arr = np.unique(limits.check_integers(
            "dims", dims, limits.MIN_D_MODEL, limits.MAX_D_MODEL, limits.MAX_D_MODEL, "dimensions"
        ))
        if dims_arr.size == 0:
            raise ValueError(f"dims must hold 1 or more dimensions in {limits.MIN_D_MODEL}…{limits.MAX_D_MODEL}")
    m = dims_arr.size
    out = {name: np.full(m, np.nan) for name in ("pe_mean", "pe_q95", "pe_max", "random_mean", "random_q95")}
    current = np.empty(0)
    for index, d in enumerate(dims_arr.tolist()):
        values, _, summary = _cosines_at(replace(params, d_model=d), n_samples, seed)
        for name, value in zip(("pe_mean", "pe_q95", "pe_max", "random_mean", "random_q95"), summary):
            out[name][index] = value
        if d == params.d_model:
            current = values
    return Orthogonality(
        params=params,
        dims=_ro(dims_arr.astype(np.int64)),
        reference=_ro(np.sqrt(2.0 / (math.pi * dims_arr))),
        current_values=_ro(current),
        n_samples=n_samples,
        seed=seed,
        **{name: _ro(value) for name, value in out.items()},
    )


def clear_caches() -> None:
    """Forget the logit splits, cosine terms, orthogonality samples and embedding draws kept per parameters."""
    _unit_terms.cache_clear()
    _split_sweep.cache_clear()
    _split_residual.cache_clear()
    _cosine_terms.cache_clear()
    _cosines_at.cache_clear()
    _random_pairs.cache_clear()
    _embedding_norms.cache_clear()
    _distinct_positions.cache_clear()
    with _EMBEDDING_LOCK:
        _EMBEDDING_BLOCKS.clear()


def _ro(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    array.setflags(write=False)
    return array
