"""The positional part of the attention logit, for every family of scheme, and the Positional-logits panel's data.

Every scheme contributes a positional term to the logit between a query at
position m and a key at position n (DESIGN.md, "Schemes, in three families"):

- an added table: the p·p term of the four-term split, PE(m)·PE(n);
- a rotation (RoPE): q·R(n − m)·k for given query and key vectors. With the
  rotary pairs (a_i, b_i) of q and (c_i, d_i) of k (:func:`~.rope.rope_pairs`)
  and the distance r = m − n (how far back the key is),

  ``q·R(n − m)·k = af² · Σ_i [(a_i c_i + b_i d_i) cos(r θ_i) + (a_i d_i − b_i c_i) sin(r θ_i)] + q_u·k_u``

  where af is Hugging Face's attention factor (it multiplies cos and sin of q
  and of k, so the rotated part scales by af²) and q_u·k_u the unrotated
  channels' constant (partial rotary). For q = k = 1 this is
  ``af² · 2 Σ_i cos(r θ_i) + (head_dim − rotary_dim)``;
        ``"rotation"`` (rope, xpos): q·R(n − m)·k as in the module docstring, for
        xPos with each pair scaled by ζ_i^((m − n)/scale_base);
        ``"bias"``: not supported yet (ValueError).
- a bias (ALiBi, T5): the bias itself, the scheme's :attr:`~.schemes.Scheme.bias`, ``−inf`` where the key
  is masked (a causal bias's keys after the query).

RoFormer's long-term decay bound (§3.4.3, eq. 35–37) is
:func:`~.rope.rope_decay_bound`: |rotated part| ≤ af² · max_i |h_{i+1} − h_i| ·
(d/2) · B(r), with h_i = (a_i + i b_i)(c_i − i d_i) and h_{d/2} = 0. For
q = k = 1 every h_i = 2 and the largest step is the last one, 2, so the
bound in logit units is ``af² · rotary_dim · B(r)``: at r = 0 it is
(d/2 + 1)/2 times the logit itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import limits
from ..core.colour_bound import file_colour_bound
from ..core.params import EncodingParams, check_params
from ..rope import rope_decay_bound, rope_pairs
from ..core.sampling import AxisSample, sample_axis
from ..schemes import Rotation, encode, scheme as scheme_info

#: The query and key vectors of the panel: all ones (q = k), or independent N(0, 1) pairs, one per seed.
VECTORS = ("ones", "random")
DEFAULT_SEEDS = 16
MIN_SEEDS, MAX_SEEDS = 2, 64
#: Positions per axis of the panel's matrix (the whole range, sampled evenly when longer).
MATRIX_POSITIONS = 256
#: Every distance 0 … DENSE_OFFSETS − 1 is in the profile; beyond, LOG_OFFSETS log-spaced ones up to N − 1.
DENSE_OFFSETS = 1024
LOG_OFFSETS = 1024
#: Most logits :func:`positional_logits` returns at once.
MAX_LOGITS = limits.MAX_SIMILARITY_ELEMENTS
#: Offsets × rotary pairs evaluated at once (the angles, their cos and their sin: 16 MiB each). Large blocks:
#: threaded BLAS multiplies many small blocks far slower than a few large ones.
_BLOCK = 2**21


# -- the logit of each family -------------------------------------------------------------------------------


def _rotation(params: EncodingParams) -> Rotation:
    """The rotation of ``params``' scheme (:attr:`~.schemes.Scheme.rotation`) at its d_model and N."""
    info = params.info
    if info.rotation is None:
        raise ValueError(f"scheme {params.scheme!r} ({info.label}) declares no rotation its logits are computed from")
    return info.rotation(params.d_model, params.seq_len, **params.options)


def _pair_weights(rotation: Rotation, query: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                     np.ndarray]:
    """Per pair, the weights of cos(rθ_i) and sin(rθ_i), and the unrotated constant, for columns of q and k.

    ``query`` and ``key`` are (head_dim, S); the results are (pairs, S), (pairs, S) and (S,).
    """
    first, second = rope_pairs(rotation.rotary_dim, rotation.pairing)
    a, b, c, d = query[first], query[second], key[first], key[second]
    constant = np.einsum("ij,ij->j", query[rotation.rotary_dim:], key[rotation.rotary_dim:])
    return a * c + b * d, a * d - b * c, constant


def _rotation_profile(rotation: Rotation, distances: np.ndarray, cos_weight: np.ndarray, sin_weight: np.ndarray,
                      constant: np.ndarray) -> np.ndarray:
    """The logit at each distance r = m − n for each column of the weights: shape (len(distances), S).

    xPos multiplies each pair's cos and sin by its scale ζ_i^(r/scale_base);
    distances below ``−rotation.farthest_after`` are refused (their scale is no float64).
    """
    if distances.size and distances.min() < -rotation.farthest_after:
        raise ValueError(f"key_positions: with xPos a key more than {rotation.farthest_after:,.0f} positions after "
                         f"its query has a scale ζ^((m − n)/scale_base) beyond float64's range (e^700); got one "
                         f"{-distances.min():,.0f} after")
    scale = rotation.attention_factor ** 2
    out = np.empty((distances.size, cos_weight.shape[1]))
    rows = max(1, _BLOCK // rotation.inv_freq.size)
    for start in range(0, distances.size, rows):
        block = distances[start:start + rows]
        angles = np.multiply.outer(block, rotation.inv_freq)
        cos, sin = np.cos(angles), np.sin(angles)
        decay = rotation.decay(block)
        if decay is not None:
            cos *= decay
            sin *= decay
        out[start:start + rows] = cos @ cos_weight + sin @ sin_weight
    return out * scale + constant


def _vector(name: str, value: object, head_dim: int) -> np.ndarray:
    vector = limits.check_numbers(name, value, -limits.MAX_POSITION, limits.MAX_POSITION, head_dim, "channels",
                                  f" (head_dim, the scheme's d_model, is {head_dim})")
    if vector.size != head_dim:
        raise ValueError(f"{name} must hold head_dim = d_model = {head_dim} channels, got {vector.size:,}")
    return vector


def _rotation_logits(params: EncodingParams, rows: np.ndarray, cols: np.ndarray, query: object,
                     key: object, causal: bool = False) -> np.ndarray:
    """q·R(n − m)·k (× xPos's scale) at rows m × columns n; with ``causal``, NaN for keys after their query."""
    rotation = _rotation(params)
    q = np.ones(params.d_model) if query is None else _vector("query", query, params.d_model)
    k = np.ones(params.d_model) if key is None else _vector("key", key, params.d_model)
    # The logit depends on m − n only: evaluate each distance once (a Toeplitz matrix has M + N − 1 of them).
    distances, where = np.unique(np.subtract.outer(rows, cols), return_inverse=True)
    evaluated = distances >= 0 if causal else np.ones(distances.size, dtype=bool)
    profile = np.full(distances.size, np.nan)
    profile[evaluated] = _rotation_profile(rotation, distances[evaluated],
                                           *_pair_weights(rotation, q[:, None], k[:, None]))[:, 0]
    return profile[where].reshape(rows.size, cols.size)


def positional_logits(scheme: str, query_positions: object, key_positions: object, *, d_model: int,
                      seq_len: int | None = None, query: object = None, key: object = None,
                      **options: Any) -> np.ndarray:
    """The positional part of the attention logit of each query position and key position.

    Parameters
    ----------
    scheme : str
        A key of :data:`~posenc_gui.model.schemes.SCHEMES`. Its family decides the term:
        ``"table"``: PE(m)·PE(n), the p·p term of the four-term split;
        ``"rotation"`` (rope, xpos): q·R(n − m)·k as in the module docstring, for
        xPos with each pair scaled by ζ_i^((m − n)/scale_base);
        ``"bias"``: the bias added to the logit, ``−inf`` for a masked key.
    query_positions, key_positions : array_like, 1-D
        Positions m and n, real numbers in 0 … ``limits.MAX_POSITION``, any order.
        For xPos a key may be at most :func:`~.bias.xpos.xpos_farthest` positions
        after its query (about 286,000 for the defaults): further, its scale
        ζ^((m − n)/scale_base) exceeds float64. Keys before their query
        have no limit (the scale falls towards 0).
    d_model : int, keyword-only
        The scheme's d_model (for rope, the head dimension).
    seq_len : int, optional, keyword-only
        The number of positions the scheme is set up for, 1 … ``limits.MAX_SEQ_LEN``
        (dynamic NTK scales for it; the normalized table divides by it). Default:
        the largest position + 1, within that range.
    query, key : array_like, optional, keyword-only
        Rotation only: the head's query and key vectors, ``d_model`` finite numbers
        each; all ones by default (then the logit is ``af² · 2 Σ cos(rθ_i)`` plus
        the unrotated channels' count; for xPos ``2 Σ ζ_i^(r/scale_base) cos(rθ_i)``).
    **options
        The scheme's options (its parameter specs; defaults where omitted).

    Returns
    -------
    ndarray, shape (len(query_positions), len(key_positions)), float64
        Row m, column n. At most :data:`MAX_LOGITS` values. Finite, but for a
        bias's masked keys (``−inf``).

    Raises
    ------
    ValueError
        Naming the parameter and its range; for query or key vectors given to
        a table or bias scheme, for positions a bias cannot take (T5's are
        integers), for too many logits.
    """
    rows = limits.check_positions(query_positions, "query_positions")
    cols = limits.check_positions(key_positions, "key_positions")
    limits.check_size("positional_logits", rows.size, cols.size, MAX_LOGITS)
    info = scheme_info(scheme)
    if seq_len is None:
        largest = max(rows.max(initial=0.0), cols.max(initial=0.0))
        seq_len = int(min(max(math.floor(largest) + 1, limits.MIN_SEQ_LEN), limits.MAX_SEQ_LEN))
    params = EncodingParams.validated(scheme=scheme, seq_len=seq_len, d_model=d_model, **options)
    if info.family == "rotation":
        return _rotation_logits(params, rows, cols, query, key)
    if info.family == "table":
        if query is not None or key is not None:
            raise ValueError(f"query and key vectors apply to rotation schemes; {scheme!r} adds a table, "
                             "whose positional logit is PE(m)·PE(n)")
        kwargs = params.scheme_kwargs()
        return encode(scheme, rows, params.d_model, **kwargs) @ encode(scheme, cols, params.d_model, **kwargs).T
    if query is not None or key is not None:
        raise ValueError(f"query and key vectors apply to rotation schemes; {scheme!r} adds a bias to the logits, "
                         "which is its positional logit")
    return info.bias(rows, cols, params.d_model, **params.scheme_kwargs())


# -- the panel ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class XposScale:
    """xPos's scale per pair and what it does to the logit by distance, for the panel.

    Attributes
    ----------
    zeta : ndarray, shape (pairs,)
        ζ_i = (2i/d + γ)/(1 + γ) (:func:`~.bias.xpos.xpos_zeta`).
    scale_base : float
        Pair i of the logit is multiplied by ζ_i^(r/scale_base) at distance r = m − n.
    envelope : ndarray
        ``2 Σ_i ζ_i^(r/scale_base)`` per distance: the q = k = 1 logit without the
        rotation (every angle 0), so the scale alone; it bounds |the q = k = 1 logit|.
    expected_std : ndarray
        ``√(2 Σ_i ζ_i^(2r/scale_base))`` per distance: the spread of the logit of
        independent random q, k ~ N(0, 1) (each pair's weights have variance 2,
        scaled by ζ_i^(r/scale_base)). Unlike RoPE's, it decays.
    """

    zeta: np.ndarray
    scale_base: float
    envelope: np.ndarray
    expected_std: np.ndarray

    @property
    def half_distances(self) -> np.ndarray:
        """The distance at which each pair's scale is ½: ``scale_base · ln 2 / |ln ζ_i|`` (inf where ζ_i = 1)."""
        with np.errstate(divide="ignore"):
            return self.scale_base * math.log(2.0) / np.abs(np.log(self.zeta))


@dataclass(frozen=True)
class RotationTerms:
    """What the panel adds for a rotation: the random pairs, the decay bound or xPos's scale, the attention factor.

    Attributes
    ----------
    vectors : {"ones", "random"}
        The matrix's query and key: all ones, or the pair of the first seed.
    seeds : int
        Independent N(0, 1) query–key pairs of the random profile (seeds 0 … seeds − 1).
    random_mean, random_std : ndarray
        Mean and standard deviation over the seeds of the random pairs' logits, per distance.
    decay_bound : ndarray or None
        RoFormer's B(r) (:func:`~.rope.rope_decay_bound`), B(0) = (d/2 + 1)/2; None for xPos.
    ones_bound : ndarray or None
        Eq. 37's bound on |the rotated part of the q = k = 1 logit|: af² · rotary_dim · B(r); None for xPos,
        whose bound is its scale's envelope.
    attention_factor : float
        af: the rotated part of every logit is scaled by af² (1 for xPos).
    rotary_dim, head_dim : int
    xpos : XposScale or None
        xPos's scale per pair and its effect by distance; None for RoPE.
    """

    vectors: str
    seeds: int
    random_mean: np.ndarray
    random_std: np.ndarray
    decay_bound: np.ndarray | None
    ones_bound: np.ndarray | None
    attention_factor: float
    rotary_dim: int
    head_dim: int
    xpos: XposScale | None = None

    @property
    def mean_random_std(self) -> float:
        """The random pairs' standard deviation averaged over the distances."""
        return float(np.mean(self.random_std))

    @property
    def expected_random_std(self) -> float:
        """The spread the random pairs' logit has at distance 0: √(af⁴ · rotary_dim + head_dim − rotary_dim).

        Each pair's weights (ac + bd) and (ad − bc) have variance 2 and are
        uncorrelated, so the variance is 2 per pair whatever the angle: for
        RoPE's independent q and k nothing decays, and this is the spread at
        every distance. xPos's shrinks with its scale (:attr:`XposScale.expected_std`).
        """
        return math.sqrt(self.attention_factor ** 4 * self.rotary_dim + self.head_dim - self.rotary_dim)


@dataclass(frozen=True)
class BiasTerms:
    """What the panel adds for a bias: the keys after the query, and how many cells of the matrix are masked.

    Attributes
    ----------
    after : ndarray or None
        The bias of the key r positions after the query at m = 0 (n = r), per
        distance of the profile; None when every key after the query is
        masked (−inf: a causal bias), or there is none.
    masked : int
        Cells of the matrix that are masked (−inf).
    """

    after: np.ndarray | None
    masked: int


@dataclass(frozen=True)
class LogitProfileData:
    """What the Positional-logits panel shows: the logit over query × key positions and against the distance.

    Attributes
    ----------
    params : EncodingParams
    positions : AxisSample
        The query positions (rows) and key positions (columns) of the matrix.
    matrix : ndarray, shape (positions.count, positions.count)
        The positional logit at row m, column n: q·R(n − m)·k for the
        rotation's chosen vectors, PE(m)·PE(n) for a table, the bias for a
        bias scheme (−inf where the key is masked).
    distances : ndarray of int64
        The profile's distances r = m − n: every one up to ``dense_until``, then log-spaced up to N − 1.
    dense_until : int
        The last distance before which none is left out.
    query_position : int
        The profile's query m: keys at m − r. The rotation's logit depends on r
        only (any m gives the same; 0 is given); a table's and a bias's are
        from the last position, N − 1.
    profile : ndarray
        The logit at each distance: for q = k = 1 (rotation), PE(m)·PE(m − r)
        (table), the bias of the key r before the query (bias).
    half_distance : int or None
        The first distance whose logit is below half the logit at 0 (None if
        none is, and for a bias, whose logit at 0 need not be positive).
    half_after : int or None
        The distance sampled before ``half_distance``: the first crossing lies after it
        (``half_distance`` − 1 where every distance is sampled).
    rotation : RotationTerms or None
        The random pairs, decay bound and attention factor of a rotation; None for a table or a bias.
    bias : BiasTerms or None
        A bias's keys after the query and masked cells; None for a table or a rotation.
    colour_bound : tuple of (float, int, float) or None
        For a table read from a file with outliers, the matrix's ``(bound, beyond, largest)``
        (:func:`.colour_bound.outlier_bound`): the |logit| its colours span; None otherwise.
    """

    params: EncodingParams
    positions: AxisSample
    matrix: np.ndarray
    distances: np.ndarray
    dense_until: int
    query_position: int
    profile: np.ndarray
    half_distance: int | None
    half_after: int | None
    rotation: RotationTerms | None
    bias: BiasTerms | None = None
    colour_bound: tuple[float, int, float] | None = None

    @property
    def logit_at_zero(self) -> float:
        """The profile at distance 0: af² · rotary_dim + (head_dim − rotary_dim) for q = k = 1, ‖PE(m)‖² for a table,
        the bias of a query and a key at one position for a bias."""
        return float(self.profile[0])


def profile_distances(seq_len: int) -> tuple[np.ndarray, int]:
    """The distances the profile evaluates for ``seq_len`` positions, and the last of the dense run.

    Every distance 0 … min(N, :data:`DENSE_OFFSETS`) − 1, then up to
    :data:`LOG_OFFSETS` integers log-spaced from there to N − 1 (N − 1 included).
    """
    seq_len = limits.check_int("seq_len", seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    dense = min(seq_len, DENSE_OFFSETS)
    distances = np.arange(dense, dtype=np.int64)
    if seq_len > dense:
        spaced = np.geomspace(dense, seq_len - 1, LOG_OFFSETS)
        distances = np.union1d(distances, np.unique(np.round(spaced).astype(np.int64)))
    return distances, dense - 1


def random_vectors(head_dim: int, seeds: int) -> tuple[np.ndarray, np.ndarray]:
    """The random profile's queries and keys: column s of each is ``default_rng(s).standard_normal((2, head_dim))``.

    Returns
    -------
    query, key : ndarray, shape (head_dim, seeds)
    """
    head_dim = limits.check_int("head_dim", head_dim, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    seeds = limits.check_int("seeds", seeds, 1, MAX_SEEDS)
    pairs = np.stack([np.random.default_rng(seed).standard_normal((2, head_dim)) for seed in range(seeds)], axis=-1)
    return pairs[0], pairs[1]


def _first_below_half(distances: np.ndarray, profile: np.ndarray) -> tuple[int | None, int | None]:
    below = np.flatnonzero(profile < profile[0] / 2)
    if below.size == 0:
        return None, None
    index = int(below[0])
    return int(distances[index]), int(distances[index - 1])


def _scale_sums(rotation: Rotation, distances: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ_i ζ_i^(r/scale_base) and Σ_i ζ_i^(2r/scale_base) per distance r, a block of distances at a time."""
    sums, squares = np.empty(distances.size), np.empty(distances.size)
    rows = max(1, _BLOCK // rotation.inv_freq.size)
    for start in range(0, distances.size, rows):
        block = slice(start, start + rows)
        decay = rotation.decay(distances[block])
        sums[block] = decay.sum(axis=1)
        decay *= decay  # each pair's variance 2 is scaled by the square of its scale
        squares[block] = decay.sum(axis=1)
    return sums, squares


def _rotation_data(params: EncodingParams, vectors: str, seeds: int, distances: np.ndarray,
                   where: np.ndarray) -> tuple[np.ndarray, np.ndarray, RotationTerms]:
    """The matrix at positions ``where``, the q = k = 1 profile and the rotation's terms.

    xPos's matrix holds the keys up to their query (n ≤ m) and NaN after it:
    for later keys its scale grows as ζ^(−(n − m)/scale_base), which causal
    models (the paper's language models) never see, and which would swamp the colours.
    """
    rotation = _rotation(params)
    offsets = distances.astype(np.float64)
    query, key = random_vectors(params.d_model, seeds)
    # q = k = 1 as column 0, the random pairs after it: one evaluation of the angles' cos and sin for all
    ones = np.ones((params.d_model, 1))
    logits = _rotation_profile(rotation, offsets, *_pair_weights(rotation, np.hstack([ones, query]),
                                                                 np.hstack([ones, key])))
    profile, random = logits[:, 0], logits[:, 1:]
    chosen = (None, None) if vectors == "ones" else (query[:, 0], key[:, 0])
    matrix = _rotation_logits(params, where, where, *chosen, causal=rotation.causal)
    shared = (vectors, seeds, random.mean(axis=1), random.std(axis=1))
    if rotation.zeta is None:
        bound = rope_decay_bound(offsets, rotation.inv_freq)
        terms = RotationTerms(*shared, bound, rotation.attention_factor ** 2 * rotation.rotary_dim * bound,
                              rotation.attention_factor, rotation.rotary_dim, params.d_model)
        return matrix, profile, terms
    envelope, squares = _scale_sums(rotation, offsets)
    scale = XposScale(rotation.zeta, rotation.scale_base, 2.0 * envelope, np.sqrt(2.0 * squares))
    terms = RotationTerms(*shared, None, None, rotation.attention_factor, rotation.rotary_dim, params.d_model, scale)
    return matrix, profile, terms


def _table_profile(params: EncodingParams, query_position: int, distances: np.ndarray) -> np.ndarray:
    """PE(m)·PE(m − r) for each distance r, the keys encoded a block at a time."""
    kwargs = params.scheme_kwargs()
    query = encode(params.scheme, [float(query_position)], params.d_model, **kwargs)[0]
    keys = (query_position - distances).astype(np.float64)
    rows = max(1, _BLOCK // params.d_model)
    return np.concatenate([encode(params.scheme, keys[start:start + rows], params.d_model, **kwargs) @ query
                           for start in range(0, keys.size, rows)])


def _bias_data(params: EncodingParams, distances: np.ndarray,
               where: np.ndarray) -> tuple[np.ndarray, int, np.ndarray, BiasTerms]:
    """The bias at positions ``where``, the profile's query, its keys before the query, and the bias's terms."""
    kwargs = params.scheme_kwargs()

    def bias(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return params.info.bias(queries, keys, params.d_model, **kwargs)

    matrix = bias(where, where)
    query_position = params.seq_len - 1
    offsets = distances.astype(np.float64)
    profile = bias(np.array([float(query_position)]), query_position - offsets)[0]
    after = bias(np.zeros(1), offsets)[0]
    all_masked = bool(np.all(np.isneginf(after[1:])))
    return matrix, query_position, profile, BiasTerms(None if all_masked else after,
                                                     int(np.count_nonzero(np.isneginf(matrix))))


def logit_profile_data(params: EncodingParams, vectors: str = "ones", seeds: int = DEFAULT_SEEDS) -> LogitProfileData:
    """The Positional-logits panel's data for ``params`` (a rope, xpos, table or bias scheme).

    Parameters
    ----------
    params : EncodingParams
        A rope or xpos scheme's parameters (``d_model`` is the head dimension), a table scheme's or a bias
        scheme's.
    vectors : {"ones", "random"}
        Rotation: the matrix's query and key vectors, all ones or seed 0's random pair.
    seeds : int
        Rotation: random query–key pairs of the profile's mean and spread, ``MIN_SEEDS`` … ``MAX_SEEDS``.

    Returns
    -------
    LogitProfileData
        The matrix over at most :data:`MATRIX_POSITIONS` evenly spaced
        positions per axis, and the profile at :func:`profile_distances`: at
        most ``DENSE_OFFSETS + LOG_OFFSETS`` distances whatever N.

    Raises
    ------
    ValueError
        For a rotation other than rope, ``vectors`` not in :data:`VECTORS`,
        ``seeds`` out of range.
    """
    params = check_params(params)
    if vectors not in VECTORS:
        raise ValueError(f"vectors must be one of {', '.join(VECTORS)}; got {limits.shown(vectors)}")
    seeds = limits.check_int("seeds", seeds, MIN_SEEDS, MAX_SEEDS)
    family = params.info.family
    distances, dense_until = profile_distances(params.seq_len)
    positions = sample_axis(-0.5, params.seq_len - 0.5, params.seq_len, MATRIX_POSITIONS)
    where = positions.indices().astype(np.float64)
    if family == "bias":
        matrix, query_position, profile, bias = _bias_data(params, distances, where)
        return LogitProfileData(params, positions, matrix, distances, dense_until, query_position, profile,
                                None, None, None, bias)
    if family == "rotation":
        matrix, profile, rotation = _rotation_data(params, vectors, seeds, distances, where)
        query_position = 0
    else:
        kwargs = params.scheme_kwargs()
        table = encode(params.scheme, where, params.d_model, **kwargs)
        matrix, rotation = table @ table.T, None
        query_position = params.seq_len - 1
        profile = _table_profile(params, query_position, distances)
    bound = file_colour_bound(params, matrix) if rotation is None else None
    return LogitProfileData(params, positions, matrix, distances, dense_until, query_position, profile,
                            *_first_below_half(distances, profile), rotation, None, bound)
