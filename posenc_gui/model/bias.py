"""Biases added to the attention logits (ALiBi, T5 buckets), the xPos scale, and seeded untrained tables.

Each function follows the authors' or the canonical implementation, quirks
included (``REFERENCES.md``):

- ALiBi (Press et al. 2022): the slopes of the authors' fairseq code
  (``get_slopes``), the paper's bias −m·(i − j).
- T5: Hugging Face's ``T5Attention._relative_position_bucket`` (float32
  logarithm, truncation toward zero), relative position = key − query.
- xPos (Sun et al. 2022): torchscale's ``XPOS`` (``xpos_relative_position.py``).
- Learned tables and T5 bias tables drawn as a model starts training: the
  untrained baseline.

Everything here is float64 (the canonical code computes in float32 where it
is not stated otherwise) and deterministic; every bad input is a
``ValueError`` naming the parameter and its allowed range, and every matrix's
size is checked before it is allocated.

Example
-------
>>> from posenc_gui.model.bias import alibi_slopes, t5_relative_bucket
>>> alibi_slopes(8).tolist()[:3]
[0.5, 0.25, 0.125]
>>> t5_relative_bucket([-200, -8, 0, 8, 200]).tolist()
[15, 8, 0, 24, 31]
"""

from __future__ import annotations

import math

import numpy as np

from .core import limits

#: Most attention heads (ALiBi slopes, T5 bias tables).
MAX_HEADS = 1024
#: Most T5 buckets.
MAX_BUCKETS = 4096
#: Largest ALiBi slope accepted; every slope of the rule lies in (0, 1).
MAX_SLOPE = 1.0
#: Largest xPos γ accepted (the paper's is 0.4; a larger γ decays less).
MAX_GAMMA = 1000.0
#: Largest standard deviation of a seeded table.
MAX_SIGMA = 1000.0
#: Largest seed.
MAX_SEED = 2**32 - 1
#: Hugging Face's ``initializer_range`` for BERT's and GPT-2's position embeddings.
DEFAULT_LEARNED_SIGMA = 0.02
#: Hugging Face's T5 initialisation of ``relative_attention_bias``: ``d_model**-0.5`` (t5-small, d_model 512).
DEFAULT_T5_SIGMA = 512**-0.5
#: |ln| of the largest and smallest xPos scale allowed: float64 holds e^±709, the rest is a margin for pow.
XPOS_LOG_LIMIT = 700.0

#: Elements of a large matrix computed at a time: the temporaries stay a few MiB, whatever the matrix's size.
BLOCK_ELEMENTS = 2**18

_LEARNED_STREAM = 0x1EA2
_T5_STREAM = 0x75


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {limits.shown(value)}")
    return bool(value)


def _check_seed(seed: object) -> int:
    return limits.check_int("seed", seed, 0, MAX_SEED)


def _check_sigma(sigma: object) -> float:
    return limits.check_real("sigma", sigma, 0.0, MAX_SIGMA, low_open=True)


def _query_key_positions(query_positions: object, key_positions: object) -> tuple[np.ndarray, np.ndarray]:
    """Both position arrays, and their query × key matrix checked against ``limits.MAX_SIMILARITY_ELEMENTS``."""
    most = limits.MAX_SIMILARITY_ELEMENTS
    queries = limits.check_positions(query_positions, "query_positions", most)
    keys = limits.check_positions(key_positions, "key_positions", most)
    limits.check_size("query_positions × key_positions", queries.size, keys.size, most)
    return queries, keys


def _exp2_exact(exponents: np.ndarray) -> np.ndarray:
    """``2**exponents``, exact where an exponent is an integer (``np.exp2`` is only within a few ULP)."""
    whole = np.floor(exponents)
    fraction = exponents - whole  # exact
    mantissa = np.where(fraction == 0.0, 1.0, np.exp2(fraction))
    return np.ldexp(mantissa, whole.astype(np.int64))


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's slope of every head, as in the authors' fairseq code (Press et al. 2022).

    For a power of two n the slopes are ``2^(−8k/n)``, k = 1 … n (n = 8:
    1/2 … 1/256). Otherwise, with c the largest power of two below n, the
    slopes of c heads are followed by every other slope of 2c heads, from
    the first: ``slopes(c) + slopes(2c)[0::2][:n − c]``. So for a head count
    that is not a power of two the largest slope is not head 0's (n = 3:
    1/16, 1/256, 1/4).

    Parameters
    ----------
    n_heads : int
        1 … :data:`MAX_HEADS`.

    Returns
    -------
    ndarray, shape (n_heads,)
        float64. Every exponent −8k/n is exact (n is a power of two), so a
        slope that is a power of two is exact and the others are within
        ``np.exp2``'s accuracy. fairseq computes ``start·start**i`` in Python
        floats and keeps float32 (``torch.Tensor``); Hugging Face's BLOOM
        (``build_alibi_tensor``) raises a float32 base to integer powers:
        both agree with these to float32 precision.

    Raises
    ------
    ValueError
        Naming ``n_heads`` and its allowed range.
    """
    n = limits.check_int("n_heads", n_heads, 1, MAX_HEADS)
    closest = 1 << (n.bit_length() - 1)  # 2**floor(log2 n)
    exponents = -8.0 * np.arange(1, closest + 1) / closest
    if closest != n:
        doubled = -8.0 * np.arange(1, 2 * closest + 1) / (2 * closest)
        exponents = np.concatenate([exponents, doubled[0::2][: n - closest]])
    return _exp2_exact(exponents)


def alibi_bias(query_positions, key_positions, slope: float, causal: bool = True) -> np.ndarray:
    """ALiBi's bias added to the logit of a query at position i and a key at position j.

    Causal (the paper's decoder): ``−m·(i − j)`` for keys j ≤ i and ``−inf``
    (masked) for j > i. Not causal (bidirectional use): ``−m·|i − j|``. The
    fairseq code adds ``m·j`` instead, which differs by ``−m·i`` in each
    query's row and so gives the same softmax.

    Parameters
    ----------
    query_positions, key_positions : array_like
        1-D positions in ``0 … limits.MAX_POSITION`` (any real numbers);
        queries × keys at most ``limits.MAX_SIMILARITY_ELEMENTS``, checked
        before the matrix is allocated.
    slope : float
        The head's slope m, ``0 … MAX_SLOPE`` (see :func:`alibi_slopes`).
    causal : bool

    Returns
    -------
    ndarray, shape (len(query_positions), len(key_positions))

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    queries, keys = _query_key_positions(query_positions, key_positions)
    m = limits.check_real("slope", slope, 0.0, MAX_SLOPE)
    causal = _check_flag("causal", causal)
    bias = keys[None, :] - queries[:, None]  # j − i, then the bias in place
    if not causal:
        np.abs(bias, out=bias)
        bias *= -m
        bias += 0.0  # +0 on the diagonal, not −0
        return bias
    future = bias > 0
    bias *= m
    np.copyto(bias, -np.inf, where=future)
    return bias


def _check_t5_settings(bidirectional: object, num_buckets: object, max_distance: object) -> tuple[bool, int, int]:
    """The bucket settings, validated: T5's formula needs at least one exact and one logarithmic bucket."""
    bidirectional = _check_flag("bidirectional", bidirectional)
    buckets = limits.check_int("num_buckets", num_buckets, 4 if bidirectional else 2, MAX_BUCKETS)
    max_exact = (buckets // 2 if bidirectional else buckets) // 2
    distance = limits.check_int("max_distance", max_distance, max_exact + 1, int(limits.MAX_POSITION))
    return bidirectional, buckets, distance


def _integers(name: str, values: object, low: float, high: float, limit: int) -> np.ndarray:
    """``values`` as float64 integers in ``[low, high]``: an ndarray keeps its shape, anything else is 1-D."""
    if isinstance(values, np.ndarray):
        limits.check_count(name, values.size, limit, "values")
        flat = limits.check_numbers(name, values.reshape(-1), low, high, limit)
        shape = values.shape
    else:
        flat = limits.check_numbers(name, values, low, high, limit)
        shape = flat.shape
    fractional = flat[flat != np.floor(flat)]
    if fractional.size:
        raise ValueError(f"{name} must be integers in {low:g}…{high:g}, got {limits.shown(fractional[0])}")
    return flat.reshape(shape)


def _buckets(relative: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int) -> np.ndarray:
    """Hugging Face's ``_relative_position_bucket`` on int64 relative positions (settings already checked)."""
    buckets = np.zeros(relative.shape, dtype=np.int64)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0) * num_buckets
        distance = np.abs(relative)
    else:
        distance = -np.minimum(relative, 0)
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    # float32 as in the reference: distance.float() / max_exact, a float32 log (here correctly rounded, through
    # float64, so that no CPU's log changes a bucket), divided by math.log(...) and multiplied in float32.
    # Distances below max_exact are replaced by max_exact before the log: their bucket is the distance itself.
    ratio = np.maximum(distance, max_exact).astype(np.float32) / np.float32(max_exact)
    log_ratio = np.log(ratio.astype(np.float64)).astype(np.float32)
    scaled = log_ratio / np.float32(math.log(max_distance / max_exact)) * np.float32(num_buckets - max_exact)
    if_large = np.minimum(max_exact + scaled.astype(np.int64), num_buckets - 1)  # astype truncates toward zero
    return buckets + np.where(is_small, distance, if_large)


def t5_relative_bucket(
    relative_position, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    """T5's bucket for each relative position (key position − query position), as Hugging Face computes it.

    Bidirectional (encoder): half the buckets for keys after the query
    (offset by ``num_buckets // 2``), half for the others, by distance
    ``|relative|``; causal (decoder): distance ``−min(relative, 0)``, so
    every key after the query falls in bucket 0. Of each half, distances
    below ``max_exact`` (half of it) have a bucket each; larger distances
    share logarithmically wider buckets, ``max_exact + trunc(ln(n /
    max_exact) / ln(max_distance / max_exact) · (half − max_exact))`` in
    float32, up to the half's last bucket, which holds every distance
    from about ``max_distance`` on.

    Parameters
    ----------
    relative_position : array_like of int
        Integers in ``−limits.MAX_POSITION … limits.MAX_POSITION``, at most
        ``limits.MAX_SIMILARITY_ELEMENTS`` of them. An ndarray may have any
        shape (a query × key matrix); anything else is read as 1-D (one
        number gives one bucket).
    bidirectional : bool
    num_buckets : int
        4 … :data:`MAX_BUCKETS` when bidirectional, 2 … when causal.
    max_distance : int
        Greater than ``max_exact`` (8 for the defaults), at most ``limits.MAX_POSITION``.

    Returns
    -------
    ndarray of int64, the shape of ``relative_position``
        Buckets in ``0 … num_buckets − 1``.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    bidirectional, num_buckets, max_distance = _check_t5_settings(bidirectional, num_buckets, max_distance)
    relative = _integers(
        "relative_position", relative_position, -limits.MAX_POSITION, limits.MAX_POSITION,
        limits.MAX_SIMILARITY_ELEMENTS,
    )
    flat = relative.reshape(-1)
    buckets = np.empty(flat.shape, dtype=np.int64)
    for start in range(0, flat.size, BLOCK_ELEMENTS):
        block = slice(start, start + BLOCK_ELEMENTS)
        buckets[block] = _buckets(flat[block].astype(np.int64), bidirectional, num_buckets, max_distance)
    return buckets.reshape(relative.shape)


def t5_random_table(num_buckets: int, n_heads: int, seed: int = 0, sigma: float = DEFAULT_T5_SIGMA) -> np.ndarray:
    """A T5 bias table (bucket × head) drawn as training starts: N(0, sigma²), seeded.

    Parameters
    ----------
    num_buckets : int
        2 … :data:`MAX_BUCKETS`.
    n_heads : int
        1 … :data:`MAX_HEADS`.
    seed : int
        0 … :data:`MAX_SEED`; the same seed, ``num_buckets`` and ``n_heads`` give the same table.
    sigma : float
        The standard deviation, > 0 and ≤ :data:`MAX_SIGMA` (default
        :data:`DEFAULT_T5_SIGMA`, Hugging Face's initialisation for t5-small).

    Returns
    -------
    ndarray, shape (num_buckets, n_heads)
    """
    buckets = limits.check_int("num_buckets", num_buckets, 2, MAX_BUCKETS)
    heads = limits.check_int("n_heads", n_heads, 1, MAX_HEADS)
    return _normal_table((buckets, heads), _check_sigma(sigma), [_check_seed(seed), _T5_STREAM, buckets, heads])


def t5_bias(
    query_positions,
    key_positions,
    table,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    head: int | None = None,
) -> np.ndarray:
    """T5's relative position bias: ``table[bucket(key − query), head]`` for every query and key.

    As Hugging Face's ``T5Attention.compute_bias``; when causal (the
    decoder), keys after the query are masked with ``−inf``, as the
    decoder's causal mask does (their bucket, 0, is never used).

    Parameters
    ----------
    query_positions, key_positions : array_like
        1-D integer positions in ``0 … limits.MAX_POSITION``; queries × keys
        (× heads, when ``head`` is None) at most ``limits.MAX_SIMILARITY_ELEMENTS``,
        checked before anything is allocated.
    table : array_like, shape (num_buckets, n_heads)
        Finite biases, one per bucket and head (:func:`t5_random_table`, or
        a model's ``relative_attention_bias.weight``); 1 … :data:`MAX_HEADS` heads.
    bidirectional, num_buckets, max_distance
        As for :func:`t5_relative_bucket`.
    head : int or None
        One head, ``0 … n_heads − 1``; None for all of them.

    Returns
    -------
    ndarray
        Shape (len(query_positions), len(key_positions)) for one head;
        (n_heads, len(query_positions), len(key_positions)) for all, as
        ``compute_bias`` without its batch axis.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    bidirectional, num_buckets, max_distance = _check_t5_settings(bidirectional, num_buckets, max_distance)
    queries, keys = _query_key_positions(query_positions, key_positions)
    for name, positions in (("query_positions", queries), ("key_positions", keys)):
        if not np.all(positions == np.floor(positions)):
            raise ValueError(f"{name} must be integers in 0…{limits.MAX_POSITION:g}")
    table = limits.check_matrix("table", table, MAX_BUCKETS * MAX_HEADS)
    if table.shape[0] != num_buckets:
        raise ValueError(f"table must have num_buckets ({num_buckets}) rows, one per bucket; got {table.shape[0]}")
    n_heads = table.shape[1]
    if not 1 <= n_heads <= MAX_HEADS:
        raise ValueError(f"table must have 1…{MAX_HEADS} columns (heads), got {n_heads}")
    if head is None:
        limits.check_size("heads × query_positions", n_heads * queries.size, keys.size, limits.MAX_SIMILARITY_ELEMENTS)
    else:
        head = limits.check_int("head", head, 0, n_heads - 1)
    heads_table = table.T if head is None else table[:, head]  # (heads, buckets) or (buckets,)
    queries, keys = queries.astype(np.int64), keys.astype(np.int64)
    bias = np.empty(heads_table.shape[:-1] + (queries.size, keys.size))
    rows = max(1, BLOCK_ELEMENTS // keys.size)
    for start in range(0, queries.size, rows):
        block = slice(start, start + rows)
        relative = keys[None, :] - queries[block, None]  # key − query
        values = heads_table[..., _buckets(relative, bidirectional, num_buckets, max_distance)]
        if not bidirectional:
            np.copyto(values, -np.inf, where=relative > 0)
        bias[..., block, :] = values
    return bias


def _check_rotary_dim(rotary_dim: object) -> int:
    dim = limits.check_int("rotary_dim", rotary_dim, 2, limits.MAX_D_MODEL)
    if dim % 2:
        raise ValueError(f"rotary_dim must be an even integer in 2…{limits.MAX_D_MODEL}, got {dim}")
    return dim


def _check_scale_base(scale_base: object) -> float:
    return limits.check_real("scale_base", scale_base, 0.0, limits.MAX_POSITION, low_open=True)


def xpos_zeta(rotary_dim: int, gamma: float = 0.4) -> np.ndarray:
    """xPos's ζ_i = (2i/d + γ)/(1 + γ) of each rotary pair i = 0 … d/2 − 1 (Sun et al. 2022).

    torchscale's ``XPOS`` buffer ``scale``: ``(arange(0, d, 2) + 0.4·d) / (1.4·d)``,
    γ fixed at 0.4 there. ζ rises from γ/(1 + γ) (pair 0, the fastest
    rotation, decays most) towards 1 (the slowest pairs barely decay).

    Parameters
    ----------
    rotary_dim : int
        d, even, ``2 … limits.MAX_D_MODEL``.
    gamma : float
        γ, > 0 and ≤ :data:`MAX_GAMMA`.

    Returns
    -------
    ndarray, shape (rotary_dim // 2,), float64
        Each within 3 ULP of its exact value (a division of integers, an
        addition and a division; 0.4 itself is rounded).

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    dim = _check_rotary_dim(rotary_dim)
    g = limits.check_real("gamma", gamma, 0.0, MAX_GAMMA, low_open=True)
    return (2.0 * np.arange(dim // 2) / dim + g) / (1.0 + g)


def xpos_farthest(rotary_dim: int, gamma: float = 0.4, scale_base: float = 512) -> float:
    """The largest |exponent · scale_base| of an xPos scale ζ^(exponent): ``700·scale_base / |ln ζ_0|``.

    ζ_0 = γ/(1 + γ) is the smallest ζ, so every ζ_i^(±x/scale_base) with
    |x| up to this lies in e^±700, inside float64 (about 286,000 for the
    defaults), capped at ``limits.MAX_POSITION``. It bounds the positions
    of :func:`xpos_scale` and the distances of xPos's positional logits.
    """
    zeta = xpos_zeta(rotary_dim, gamma)
    base = _check_scale_base(scale_base)
    return min(limits.MAX_POSITION, XPOS_LOG_LIMIT * base / abs(math.log(zeta[0])))


def xpos_scale(
    positions, rotary_dim: int, gamma: float = 0.4, scale_base: float = 512, downscale: bool = False
) -> np.ndarray:
    """xPos's scale of each rotary channel at each position, applied on top of the rotation (Sun et al. 2022).

    ``ζ_i = (2i/d + γ)/(1 + γ)`` for the pair i = 0 … d/2 − 1; a query at
    position n is scaled by ``ζ_i^(n/scale_base)``, a key by
    ``ζ_i^(−n/scale_base)`` (``downscale``), so their product decays as
    ``ζ_i^((m − n)/scale_base)`` with the offset. As torchscale's
    ``XPOS``: one scale per pair, on both of its channels, pairs
    interleaved (channels 2i and 2i + 1, ``duplicate_interleave`` and
    ``rotate_every_two``).

    torchscale does not scale at the token's index but at an index
    centred on the block (:func:`xpos_centered_positions`); the centre
    cancels in every query-key product.

    Parameters
    ----------
    positions : array_like
        1-D positions, signed; |position| at most ``700 · scale_base /
        |ln(γ/(1+γ))|`` (about 286,000 for the defaults) and
        ``limits.MAX_POSITION``, so that every scale lies in e^±700.
        At most ``limits.MAX_ENCODE_ELEMENTS / rotary_dim`` of them.
    rotary_dim : int
        The rotated dimensions d, even, ``2 … limits.MAX_D_MODEL``.
    gamma : float
        γ, > 0 and ≤ :data:`MAX_GAMMA` (torchscale fixes it at 0.4).
    scale_base : float
        > 0 and ≤ ``limits.MAX_POSITION`` (torchscale's default 512).
    downscale : bool
        True for keys: ``ζ^(−n/scale_base)``.

    Returns
    -------
    ndarray, shape (len(positions), rotary_dim)
        float64 (torchscale computes in float32).

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    dim = _check_rotary_dim(rotary_dim)
    zeta = xpos_zeta(dim, gamma)
    base = _check_scale_base(scale_base)
    downscale = _check_flag("downscale", downscale)
    farthest = xpos_farthest(dim, gamma, base)
    most = limits.MAX_ENCODE_ELEMENTS // dim
    positions = limits.check_numbers(
        "positions", positions, -farthest, farthest, most, "positions",
        f" (positions × rotary_dim ≤ {limits.MAX_ENCODE_ELEMENTS:,})",
    )
    exponent = (-positions if downscale else positions) / base
    scale = np.empty((positions.size, dim))
    rows = max(1, BLOCK_ELEMENTS // dim)
    for start in range(0, positions.size, rows):
        block = slice(start, start + rows)
        per_pair = np.power(zeta[:, None], exponent[None, block]).T  # positions innermost: pow's fast loop
        scale[block, 0::2] = per_pair  # torchscale's duplicate_interleave: each pair's scale on both channels
        scale[block, 1::2] = per_pair
    return scale


def xpos_centered_positions(length: int, offset: int = 0) -> np.ndarray:
    """The positions torchscale's ``XPOS.forward(x, offset)`` scales a block of ``length`` tokens at.

    The last ``length`` of ``arange(min_pos, max_pos)``, ``min_pos =
    −(length + offset) // 2`` (floor division), ``max_pos = length + offset
    + min_pos``: token t of ``length + offset`` is at ``t − ⌈(length + offset)/2⌉``.
    torchscale scales the keys with ``offset=0`` and the queries with
    ``offset`` = the cached length, so in every step a query and a key of
    the same token share a position.

    Parameters
    ----------
    length : int
        1 … ``limits.MAX_SEQ_LEN``.
    offset : int
        Tokens before the block, ``0 … limits.MAX_SEQ_LEN − length``.

    Returns
    -------
    ndarray of float64, shape (length,)
    """
    length = limits.check_int("length", length, 1, limits.MAX_SEQ_LEN)
    offset = limits.check_int("offset", offset, 0, limits.MAX_SEQ_LEN - length)
    total = length + offset
    return np.arange(offset, total, dtype=np.float64) + (-total // 2)


def _normal_table(shape: tuple[int, int], sigma: float, entropy: list[int]) -> np.ndarray:
    return sigma * np.random.default_rng(entropy).standard_normal(shape)


_MASK64 = (1 << 64) - 1
#: SplitMix64 (Steele, Lea and Flood 2014; Vigna's ``splitmix64.c``): the state steps by this odd constant …
_SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
#: … and each output is the state mixed by two multiply–xorshift rounds with these multipliers.
_SPLITMIX_MULTIPLIERS = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
#: Bits of a learned table's column index in its counter: ``limits.MAX_D_MODEL`` columns fit.
_COLUMN_BITS = 13
assert limits.MAX_D_MODEL <= 1 << _COLUMN_BITS


def splitmix64_mix(state: int) -> int:
    """SplitMix64's output function of one 64-bit state (a Python int), as in Vigna's ``splitmix64.c``.

    ``z = (z ^ (z >> 30))·0xBF58476D1CE4E5B9``, ``z = (z ^ (z >> 27))·0x94D049BB133111EB``,
    ``z ^ (z >> 31)``, all modulo 2⁶⁴. The k-th output (k = 1, 2, …) of the
    generator seeded with s is ``splitmix64_mix(s + k·0x9E3779B97F4A7C15)``.
    """
    z = state & _MASK64
    z = ((z ^ (z >> 30)) * _SPLITMIX_MULTIPLIERS[0]) & _MASK64
    z = ((z ^ (z >> 27)) * _SPLITMIX_MULTIPLIERS[1]) & _MASK64
    return z ^ (z >> 31)


def _mix_in_place(z: np.ndarray, scratch: np.ndarray) -> None:
    """:func:`splitmix64_mix` of every element of the uint64 array ``z``, in place (uint64 products wrap)."""
    for shift, multiplier in ((30, _SPLITMIX_MULTIPLIERS[0]), (27, _SPLITMIX_MULTIPLIERS[1])):
        np.right_shift(z, np.uint64(shift), out=scratch)
        z ^= scratch
        z *= np.uint64(multiplier)
    np.right_shift(z, np.uint64(31), out=scratch)
    z ^= scratch


def _open_unit(z: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The top 52 bits of each uint64 as a float64 in (0, 1): ``((z >> 12) + ½)·2⁻⁵²``, exact; ``z`` is spent."""
    z >>= np.uint64(12)
    out[...] = z  # below 2⁵²: exact
    out += 0.5
    out *= 2.0**-52
    return out


def learned_key(seed: int) -> int:
    """The SplitMix64 seed of a learned table drawn with ``seed``: ``splitmix64_mix(seed·2¹⁶ + 0x1EA2)``."""
    return splitmix64_mix((_check_seed(seed) << 16) | _LEARNED_STREAM)


def learned_values(positions, dims, sigma: float = DEFAULT_LEARNED_SIGMA, seed: int = 0) -> np.ndarray:
    """Entries of a seeded untrained learned table at any positions and columns, each drawn on its own.

    Entry (p, j) — row ⌊p⌋, column j — is ``sigma·√(−2 ln u₁)·cos(2π u₂)``
    (Box–Muller), with u₁ and u₂ SplitMix64 outputs number 2c + 1 and 2c + 2
    of the generator seeded with ``learned_key(seed)``, for the counter
    ``c = ⌊p⌋·2¹³ + j``, each turned into ``((output >> 12) + ½)·2⁻⁵²`` in
    (0, 1). So an entry depends on ``seed``, its row and its column only:
    not on which other positions or columns are asked for, their order or
    their number, nor on d_model. A view can sample one position in a
    thousand of a million-row table without drawing the others.

    Parameters
    ----------
    positions : array_like
        1-D positions in ``0 … limits.MAX_POSITION``; a position that is not an
        integer has the entries of its row ⌊p⌋ (the table is constant between rows).
    dims : array_like of int
        1-D column indices in ``0 … limits.MAX_D_MODEL − 1``.
        positions × dims at most ``limits.MAX_ENCODE_ELEMENTS``.
    sigma : float
        The standard deviation, > 0 and ≤ :data:`MAX_SIGMA`.
    seed : int
        0 … :data:`MAX_SEED`.

    Returns
    -------
    ndarray, shape (len(positions), len(dims)), float64
        The integer arithmetic is exact on every CPU; ``log`` and ``cos``
        may differ by an ULP or two between CPUs (SIMD or libm), never between
        two calls on one machine.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    rows = np.floor(limits.check_positions(positions)).astype(np.uint64)
    columns = limits.check_integers("dims", dims, 0, limits.MAX_D_MODEL - 1, limits.MAX_DIMS, "dimensions")
    limits.check_size("positions × dims", rows.size, columns.size, limits.MAX_ENCODE_ELEMENTS)
    scale = _check_sigma(sigma)
    key = np.uint64(learned_key(seed))
    gamma = np.uint64(_SPLITMIX_GAMMA)
    row_counters = rows << np.uint64(_COLUMN_BITS)
    column_counters = columns.astype(np.uint64)
    out = np.empty((rows.size, columns.size))
    if out.size == 0:
        return out
    step = max(1, BLOCK_ELEMENTS // columns.size)
    for start in range(0, rows.size, step):
        block = slice(start, start + step)
        counter = row_counters[block, None] | column_counters[None, :]
        first = counter << np.uint64(1)  # output 2c + 1: state key + (2c + 1)·γ
        first += np.uint64(1)
        first *= gamma
        first += key
        second = first + gamma  # output 2c + 2
        scratch = np.empty_like(first)
        radius, angle = np.empty(first.shape), np.empty(first.shape)
        _mix_in_place(first, scratch)
        _mix_in_place(second, scratch)
        np.log(_open_unit(first, radius), out=radius)
        radius *= -2.0
        np.sqrt(radius, out=radius)
        _open_unit(second, angle)
        angle *= 2.0 * math.pi
        np.cos(angle, out=angle)
        np.multiply(radius, angle, out=out[block])
    out *= scale
    return out


def learned_table(n_positions: int, d_model: int, sigma: float = DEFAULT_LEARNED_SIGMA, seed: int = 0) -> np.ndarray:
    """A learned absolute position table as training starts: N(0, sigma²), seeded.

    Row p is position p's vector (BERT's ``position_embeddings``, GPT-2's
    ``wpe``); positions from ``n_positions`` on have none. Entry (p, j) is
    :func:`learned_values`' (it depends on the seed, p and j only), so a
    longer table extends a shorter one and a wider one a narrower one.

    Parameters
    ----------
    n_positions : int
        ``1 … limits.MAX_SEQ_LEN``.
    d_model : int
        ``limits.MIN_D_MODEL … limits.MAX_D_MODEL``; ``n_positions × d_model``
        at most ``limits.MAX_ENCODE_ELEMENTS``.
    sigma : float
        > 0 and ≤ :data:`MAX_SIGMA` (default :data:`DEFAULT_LEARNED_SIGMA`).
    seed : int
        0 … :data:`MAX_SEED`.

    Returns
    -------
    ndarray, shape (n_positions, d_model)

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    rows = limits.check_int("n_positions", n_positions, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    columns = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    limits.check_size("n_positions × d_model", rows, columns, limits.MAX_ENCODE_ELEMENTS)
    return learned_values(np.arange(rows, dtype=np.float64), np.arange(columns), _check_sigma(sigma), _check_seed(seed))
