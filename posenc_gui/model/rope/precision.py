"""RoPE's cos and sin as a model computes them in float32, bfloat16 or float16, against float64.

What is computed follows Hugging Face transformers' ``LlamaRotaryEmbedding``
(the rotary embedding most models of the library copy) and
``modeling_rope_utils.py``:

1. ``inv_freq`` in float32: ``1.0 / (base ** (torch.arange(0, dim, 2,
   dtype=torch.int64).float() / dim))`` and then the scaling type's float32
   operations (:func:`model_inv_freq`);
2. position ids as float32 (``position_ids[:, None, :].float()``);
3. the angles ``inv_freq @ position_ids`` in float32 (autocast disabled;
   a matrix product with an inner dimension of 1, so one float32 rounding
   per angle);
4. ``cos`` and ``sin`` in float32, times ``attention_scaling`` (float32);
5. ``.to(dtype=x.dtype)``: rounded to the model's dtype (round to nearest,
   ties to even; ``ml_dtypes.bfloat16`` in NumPy).

The reference is the same in float64 from the exact frequencies
(:func:`~posenc_gui.model.rope.rope_frequencies`) and integer positions.

Position ids in the model's dtype
    Some code makes the position ids in the model's dtype: ``torch.arange(n,
    dtype=x.dtype)``, or Hugging Face's Llama before v4.38, whose
    ``t.type_as(self.inv_freq)`` took the dtype of an ``inv_freq`` buffer
    cast with the whole model (``model.to(torch.bfloat16)``; the float32
    forward of transformers PR #29285 fixed it). With ``positions="model"``
    the ids are rounded to the model's dtype before step 3; the rest is as
    above (that old code also held ``inv_freq`` and the angles in bfloat16,
    which is not modelled). bfloat16 holds integers exactly only up to 256
    (8 significant bits: 257 rounds to 256), float16 up to 2048 (11 bits) and
    overflows to infinity from 65,520, float32 up to 2²⁴ = 16,777,216.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.coverage import Coverage
from ..core.params import EncodingParams, check_params
from . import rope_config, rope_frequencies, rope_type

#: The model dtypes offered (float64 is the reference).
DTYPES = ("float32", "bfloat16", "float16")
#: Where the position ids are made: float32 (Hugging Face today) or the model's dtype.
POSITION_CHOICES = ("float32", "model")


def _numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of ``dtype`` (one of :data:`DTYPES`)."""
    if dtype == "bfloat16":
        # Imported on first use: ml_dtypes' extension takes most of a second to load, at every start-up.
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(np.float32 if dtype == "float32" else np.float16)

#: Significand bits p (the implicit one included): integers up to 2^p are exact, and the rounding of a
#: value x is at most 2^−p · |x| (the unit roundoff).
SIGNIFICAND_BITS = {"float32": 24, "bfloat16": 8, "float16": 11}
#: The first integer whose id is infinite in the dtype (float16: 65504 is the largest finite value,
#: and 65520, halfway to 2^16, rounds to infinity by ties-to-even).
OVERFLOW_POSITION = {"float16": 65520}
#: Position bins (heatmap columns) at most.
MAX_BINS = 512
#: (position, pair) values the error map evaluates at most, besides one position per bin and pair.
MAX_EVALUATED = 2**22
#: (position, pair) values held at once.
_BLOCK = 2**20


@dataclass(frozen=True)
class RopePrecisionData:
    """The error of a model dtype's RoPE cos and sin against float64, per position bin and rotary pair.

    Attributes
    ----------
    params : EncodingParams
        The rope scheme's parameters (``seq_len`` = N positions 0 … N − 1).
    dtype : str
        The model dtype, one of :data:`DTYPES`.
    positions : str
        Where the position ids are made, one of :data:`POSITION_CHOICES`.
    inv_freq : ndarray, shape (pairs,), float32
        θ_i as the model holds them (:func:`model_inv_freq`).
    inv_freq_reference : ndarray, shape (pairs,), float64
        The exact θ_i (:func:`~posenc_gui.model.rope.rope_frequencies`).
    attention_factor : float
        What cos and sin are multiplied by.
    bin_edges : ndarray of int64, shape (bins + 1,)
        Bin b holds the positions ``bin_edges[b] … bin_edges[b + 1] − 1``.
    evaluated : ndarray of int64, shape (bins,)
        Positions evaluated in each bin: all of them when N · pairs ≤
        :data:`MAX_EVALUATED`, else an evenly spread subset with an odd
        stride (so that it is not made only of multiples of a power of two,
        which a low-precision dtype holds exactly).
    error : ndarray, shape (bins, pairs), float64
        Per bin and pair, the largest error over the evaluated positions:
        ``|(cos, sin)_dtype − (cos, sin)_float64|``, the Euclidean distance
        between the model's and the exact rotation of the unit vector
        (1, 0) (both times the attention factor); inf where the model's
        value is not finite (a float16 position id that overflowed).
    max_error : float
        The largest entry of ``error``: over every position, or over the
        evaluated ones only (:attr:`coverage` says which).
    max_error_position, max_error_pair : int
        Where it is (the first such position and pair). An infinite error is
        there from the first infinite position id on (float16 ids from
        :data:`OVERFLOW_POSITION`): that position, pair 0, whether it was
        evaluated or not.
    first_indistinguishable : int or None
        The first position p (0 ≤ p ≤ N − 2) at which the model's cos and
        sin of every pair equal those at p + 1, so that positions p and
        p + 1 rotate queries and keys identically; None if there is none
        below N − 1. Every position is checked, not only the evaluated ones.
    position_collision : int
        The first p at which the position ids p and p + 1 round to the same
        value in the dtype the ids are made in: 2^p for p significand bits
        (:data:`SIGNIFICAND_BITS`), whether or not it is below N.
    overflow_position : int or None
        The first position whose id is infinite (float16 ids), or None.
    unit_roundoff : float
        2^−p of the model dtype: the most a cast moves cos or sin, relative to the attention factor.
    """

    params: EncodingParams
    dtype: str
    positions: str
    inv_freq: np.ndarray
    inv_freq_reference: np.ndarray
    attention_factor: float
    bin_edges: np.ndarray
    evaluated: np.ndarray
    error: np.ndarray
    max_error: float
    max_error_position: int
    max_error_pair: int
    first_indistinguishable: int | None
    position_collision: int
    overflow_position: int | None
    unit_roundoff: float

    @property
    def position_dtype(self) -> str:
        """The dtype of the position ids: float32, or the model's dtype."""
        return self.dtype if self.positions == "model" else "float32"

    @property
    def coverage(self) -> Coverage:
        """The positions :attr:`max_error` and :attr:`error` were taken over: all of 0 … N − 1, or a sample."""
        last, evaluated = self.params.seq_len - 1, int(self.evaluated.sum())
        if evaluated == self.params.seq_len:
            return Coverage("positions", 0, last)
        return Coverage("positions", 0, last, "sampled", evaluated)

    @property
    def indistinguishable_coverage(self) -> Coverage:
        """What :attr:`first_indistinguishable` was established over: every position p ≤ N − 2 (with p + 1)."""
        return Coverage("positions p (with p + 1)", 0, max(self.params.seq_len - 2, 0))

    @property
    def max_error_per_bin(self) -> np.ndarray:
        """The largest error over the pairs, per bin."""
        return self.error.max(axis=1)

    def title(self) -> str:
        """The parameters' title, the dtype and (when it is not float32) the dtype of the position ids."""
        where = f", position ids in {self.dtype}" if self.positions == "model" else ""
        return f"{self.params.title()}, {self.dtype}{where}"


def check_dtype(dtype: object, name: str = "dtype") -> str:
    """``dtype`` if it is one of :data:`DTYPES`, else ValueError naming ``name`` and the choices."""
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"{name} must be one of {', '.join(DTYPES)}; got {dtype!r}")
    return dtype


def check_positions(positions: object, name: str = "positions") -> str:
    """``positions`` if it is one of :data:`POSITION_CHOICES`, else ValueError naming ``name`` and the choices."""
    if not isinstance(positions, str) or positions not in POSITION_CHOICES:
        raise ValueError(f"{name} must be one of {', '.join(POSITION_CHOICES)}; got {positions!r}")
    return positions


# -- the model's float32 frequencies ------------------------------------------------------------------------


def model_inv_freq(config: dict, seq_len: int | None = None) -> tuple[np.ndarray, float]:
    """The float32 inverse frequencies a Hugging Face model holds, and its attention factor.

    HF's float32 operations are replayed in order: the default frequencies
    (see :func:`~posenc_gui.model.rope.config.float32_powers`; ntk and dynamic with the raised base,
    computed in Python floats as HF does), linear's ``inv_freq / factor``,
    llama3's blend and YaRN's. Two steps are not bit-for-bit: ``pow`` is
    correctly rounded (torch's is within one float32 ULP of it), and YaRN's
    ramp is HF's float64 ramp rounded to float32 (HF computes it in float32:
    within one float32 ULP). So each θ_i is within a few float32 ULP of a
    given HF run, about as close as HF on CPU is to HF on CUDA.

    Parameters
    ----------
    config : dict
        Hugging Face config keys (see :func:`~posenc_gui.model.rope.rope_config`); longrope is not offered.
    seq_len : int, optional
        The sequence length dynamic NTK scales at.

    Returns
    -------
    inv_freq : ndarray, shape (rotary_dim // 2,), float32
    attention_factor : float

    Raises
    ------
    ValueError
        As :func:`~posenc_gui.model.rope.rope_frequencies`, and for a type without a float32 path (longrope).
    """
    rope_frequencies(config, seq_len)  # every check of the config and seq_len
    rope = rope_config(config)
    kind = rope_type(rope.rope_type)
    if kind.float32_inv_freq is None:
        raise ValueError(f"rope_type {kind.name} is not offered here: {kind.float32_refusal}")
    inv_freq = kind.float32_inv_freq(rope, seq_len)
    return inv_freq.astype(np.float32), rope.attention_factor


# -- cos and sin --------------------------------------------------------------------------------------------


def model_position_ids(positions: np.ndarray, dtype: str, where: str) -> np.ndarray:
    """Integer positions as the float32 ids the angle product takes: exact, or rounded to ``dtype`` first.

    Parameters
    ----------
    positions : ndarray of int64
        Non-negative; converted to float32 with round to nearest, ties to
        even (exact up to 2²⁴), as ``.float()`` converts an int64 tensor.
    dtype : str
        One of :data:`DTYPES`.
    where : str
        ``"float32"`` (``position_ids.float()``) or ``"model"`` (made in ``dtype``).
    """
    ids = positions.astype(np.float32)
    if where == "model":
        with np.errstate(over="ignore"):
            ids = ids.astype(_numpy_dtype(dtype)).astype(np.float32)
    return ids


def model_cos_sin(positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, dtype: str,
                  where: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    """The model's cos and sin, shape (len(positions), len(inv_freq)), in ``dtype`` (see the module docstring).

    Parameters
    ----------
    positions : ndarray of int64
        Non-negative (see :func:`model_position_ids`).
    inv_freq : ndarray of float32
        From :func:`model_inv_freq`.
    attention_factor : float
        Multiplies cos and sin (in float32, as HF's ``attention_scaling``).
    dtype : str
        One of :data:`DTYPES`.
    where : str
        One of :data:`POSITION_CHOICES`.
    """
    ids = model_position_ids(positions, dtype, where)
    with np.errstate(invalid="ignore", over="ignore"):
        angles = np.multiply.outer(ids, inv_freq)  # float32 × float32: one rounding
        scale = np.float32(attention_factor)
        cos, sin = np.cos(angles) * scale, np.sin(angles) * scale
        return cos.astype(_numpy_dtype(dtype)), sin.astype(_numpy_dtype(dtype))


def _errors(positions: np.ndarray, inv_freq: np.ndarray, reference: np.ndarray, attention_factor: float,
            dtype: str, where: str) -> np.ndarray:
    """|(cos, sin)_dtype − (cos, sin)_float64| per position and pair, inf where the model's value is not finite."""
    cos, sin = model_cos_sin(positions, inv_freq, attention_factor, dtype, where)
    exact = np.multiply.outer(positions.astype(np.float64), reference)
    with np.errstate(invalid="ignore"):
        error = np.hypot(cos.astype(np.float64) - np.cos(exact) * attention_factor,
                         sin.astype(np.float64) - np.sin(exact) * attention_factor)
    error[~np.isfinite(error)] = np.inf
    return error


def _evaluated_positions(edges: np.ndarray, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions evaluated in each bin (all, or an odd-strided subset) and how many per bin."""
    widths = np.diff(edges)
    per_bin = max(1, MAX_EVALUATED // (widths.size * pairs))
    counts = np.minimum(widths, per_bin)
    strides = widths // counts
    strides = np.where((strides % 2 == 0) & (strides > 1), strides - 1, strides)
    starts = np.repeat(edges[:-1], counts)
    steps = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return starts + np.repeat(strides, counts) * steps, counts


def _first_indistinguishable(seq_len: int, inv_freq: np.ndarray, attention_factor: float, dtype: str,
                             where: str) -> int | None:
    """The first p ≤ N − 2 whose cos and sin equal those at p + 1 for every pair (see :class:`RopePrecisionData`).

    From the first position collision P of the ids (ids p and p + 1 equal)
    on, every pair agrees, so only 0 … min(N − 1, P) − 1 is scanned, and
    the answer is P if nothing before it agrees. Positions are scanned in
    blocks, in order, small ones first (an early answer is found early);
    within a block the pairs are tried fastest first and only the positions
    still equal are carried to the next pair, so a block costs about one
    pair's evaluation unless neighbours agree in many pairs.
    """
    collision = 2 ** SIGNIFICAND_BITS[dtype if where == "model" else "float32"]
    end = min(seq_len - 1, collision)
    order = np.argsort(-inv_freq, kind="stable")
    start, block = 0, 4096
    while start < end:
        candidates = np.arange(start, min(start + block, end), dtype=np.int64)
        for pair in order:
            frequency = inv_freq[pair:pair + 1]
            here = model_cos_sin(candidates, frequency, attention_factor, dtype, where)
            after = model_cos_sin(candidates + 1, frequency, attention_factor, dtype, where)
            same = np.ones(candidates.size, dtype=bool)
            for a, b in zip(here, after):
                same &= a[:, 0] == b[:, 0]
            candidates = candidates[same]
            if candidates.size == 0:
                break
        if candidates.size:
            return int(candidates[0])
        start, block = start + block, min(2 * block, _BLOCK)
    return collision if collision <= seq_len - 2 else None


def rope_precision_data(params: EncodingParams, dtype: str = "bfloat16", positions: str = "float32") -> RopePrecisionData:
    """The Precision panel's data: the error of ``dtype``'s RoPE cos and sin against float64.

    Parameters
    ----------
    params : EncodingParams
        Of the rope scheme; ``seq_len`` positions 0 … N − 1 (N ≤ 1,048,576).
    dtype : str
        The model dtype, one of :data:`DTYPES`.
    positions : str
        ``"float32"``: position ids as float32 (Hugging Face); ``"model"``:
        made in the model's dtype (see the module docstring).

    Returns
    -------
    RopePrecisionData
        At most :data:`MAX_BINS` bins of positions; at most about
        :data:`MAX_EVALUATED` (position, pair) errors are evaluated, in
        blocks of bounded memory. The first indistinguishable position
        checks every position (about one pair's work per position when
        neighbours differ in their fastest pair).

    Raises
    ------
    ValueError
        For parameters of another scheme, a dtype or positions choice not offered (naming the choices),
        or a configuration Hugging Face refuses.
    """
    params = check_params(params)
    if params.info.hf_rope is None:
        raise ValueError(f"params must be of the rope scheme (or another with a Hugging Face RoPE configuration), "
                         f"got {params.scheme!r}")
    dtype, positions = check_dtype(dtype), check_positions(positions)
    config = params.info.hf_rope(params.d_model, **params.options)
    inv_freq, attention_factor = model_inv_freq(config, params.seq_len)
    reference, _ = rope_frequencies(config, seq_len=params.seq_len)
    seq_len, pairs = params.seq_len, inv_freq.size
    bins = min(seq_len, MAX_BINS)
    edges = (np.arange(bins + 1, dtype=np.int64) * seq_len) // bins
    sampled, counts = _evaluated_positions(edges, pairs)
    per_sample = np.empty((sampled.size, pairs))
    rows = max(1, _BLOCK // pairs)
    for start in range(0, sampled.size, rows):
        chunk = sampled[start:start + rows]
        per_sample[start:start + rows] = _errors(chunk, inv_freq, reference, attention_factor, dtype, positions)
    error = np.maximum.reduceat(per_sample, np.cumsum(counts) - counts, axis=0)
    flat = int(np.argmax(per_sample))
    position_dtype = dtype if positions == "model" else "float32"
    max_position, max_pair = int(sampled[flat // pairs]), flat % pairs
    overflow = OVERFLOW_POSITION.get(position_dtype)
    if math.isinf(per_sample.flat[flat]) and overflow is not None and overflow < max_position:
        max_position, max_pair = overflow, 0  # every pair's id is infinite from there: cos and sin NaN
    return RopePrecisionData(
        params=params, dtype=dtype, positions=positions, inv_freq=inv_freq, inv_freq_reference=reference,
        attention_factor=float(attention_factor), bin_edges=edges, evaluated=counts, error=error,
        max_error=float(per_sample.flat[flat]), max_error_position=max_position, max_error_pair=max_pair,
        first_indistinguishable=_first_indistinguishable(seq_len, inv_freq, attention_factor, dtype, positions),
        position_collision=2 ** SIGNIFICAND_BITS[position_dtype],
        overflow_position=overflow,
        unit_roundoff=2.0 ** -SIGNIFICAND_BITS[dtype],
    )
