"""The positional logit at every offset 0 … N − 1, evaluated exactly, a step at a time (the decay verdict).

The profile is the logit of the query m and the key r positions before it,
p(r) = L(m, m − r), as attention sees it: divided by √d_head for a table's
PE(m)·PE(n) and a rotation's q·R(n − m)·k (q = k = the all-ones vector), a
bias as it is added (after the scaling). For a rotation and for a table of
sin, cos and linear columns it is a sum of complex exponentials and a line,

    p(r) = Re Σ_i z_i·e^{r·λ_i} + c₀ + c₁·r,

λ_i = iθ_i for RoPE, ln ζ_i / scale_base + iθ_i for xPos (its scale decays
the keys before the query), iω for a column of frequency ω. A block of
offsets s_b + j is one matrix product, Re(E·C) with E[j, i] = e^{j·λ_i} and
C[i, b] = z_i·e^{s_b·λ_i}: every offset is evaluated, none is sampled.
Rounding: each term carries a few ULPs of its angle (≤ r·|λ_i|), so
|error| ≤ ε·Σ_i |z_i|·(2 r |λ_i| + K + 8) for K terms (:meth:`CosineSum.error_bound`),
below 1e-8 of the largest term even at r = 2²⁰. Any other table is
PE(m)·PE(m − r) from its encoded keys, a block at a time; a bias is
evaluated directly.

The scan keeps what the verdicts need, not the profile: the last offset whose
key keeps at least 1 % of the softmax weight of distance 0, the mean drop
over the farther half, the lowest value, and the running largest
|p(r) − p(r + 1)| (which decides "tells positions apart" for a logit of the
offset alone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..core import limits
from ..core.params import EncodingParams, check_params
from ..schemes import columns as scheme_columns, encode

#: ln 100: a logit this much lower gets 1 % of the softmax weight.
ONE_PERCENT_DROP = math.log(100.0)
#: Offsets × terms evaluated per step of a scan (one worker request: about a second at most).
SCAN_WORK = 2**28
#: Offsets × dimensions a table without columns is encoded for, at most (its keys cost ~0.1 µs a value):
#: beyond, its scan stops there and its verdict says it covers the offsets before.
DIRECT_WORK = 2**25
#: Offsets a table without columns is scanned for at least, whatever its width.
MIN_DIRECT = 4096
#: Largest E or C block of the matrix product, in complex elements, and E's rows (offsets j) at most.
_BLOCK = 2**20
_ROWS = 512
_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class CosineSum:
    """p(r) = Re Σ_i z_i·e^{r·λ_i} + c₀ + c₁·r (module docstring), already scaled as attention sees it."""

    rates: np.ndarray  # complex λ_i, real part ≤ 0
    weights: np.ndarray  # complex z_i
    constant: float = 0.0
    slope: float = 0.0

    def values(self, start: int, count: int) -> np.ndarray:
        """p(r) for r = start … start + count − 1, every offset."""
        r = start + np.arange(count, dtype=np.float64)
        out = self.constant + self.slope * r
        terms = self.rates.size
        if terms == 0 or count == 0:
            return out
        # E: rows × K, computed once; C: K × bases per block of rows × bases offsets (each at most _BLOCK)
        rows = int(max(1, min(_ROWS, count, _BLOCK // terms)))
        steps = np.exp(np.multiply.outer(np.arange(rows, dtype=np.float64), self.rates))
        steps_real, steps_imag = np.ascontiguousarray(steps.real), np.ascontiguousarray(steps.imag)
        per_block = max(1, _BLOCK // terms)
        bases = -(-count // rows)
        for first in range(0, bases, per_block):
            last = min(bases, first + per_block)
            starts = start + rows * np.arange(first, last, dtype=np.float64)
            phases = self.weights[:, None] * np.exp(np.multiply.outer(self.rates, starts))  # (K, bases)
            block = steps_real @ phases.real - steps_imag @ phases.imag  # (rows, bases): offset s_b + j
            begin, stop = first * rows, min(count, last * rows)
            out[begin:stop] += block.T.reshape(-1)[:stop - begin]
        return out

    def error_bound(self, last: int) -> float:
        """A bound on the rounding of :meth:`values` at offsets up to ``last`` (module docstring)."""
        size = np.abs(self.weights)
        return _EPS * float(np.sum(size * (2.0 * last * np.abs(self.rates) + self.rates.size + 8)))

    @property
    def bound(self) -> float:
        """Σ |z_i|: |p(r) − c₀ − c₁ r| ≤ this at every offset r ≥ 0 (each |e^{rλ_i}| ≤ 1)."""
        return float(np.abs(self.weights).sum())


def head_scale(params: EncodingParams) -> float:
    """1/√d_head for a table or a rotation (d_head = d_model), 1 for a bias (added as it is)."""
    return 1.0 if params.info.family == "bias" else 1.0 / math.sqrt(params.d_model)


def query_position(params: EncodingParams) -> int:
    """The profile's query: any for a rotation (its logit depends on the offset alone; 0), else N − 1."""
    return 0 if params.info.family == "rotation" else params.seq_len - 1


def cosine_sum(params: EncodingParams) -> CosineSum | None:
    """The profile of ``params`` as a :class:`CosineSum` (scaled), or None for a table without columns or a bias."""
    from .logits import _pair_weights, _rotation

    params = check_params(params)
    scale = head_scale(params)
    family = params.info.family
    if family == "rotation":
        rotation = _rotation(params)
        ones = np.ones((params.d_model, 1))
        cos_weight, sin_weight, constant = _pair_weights(rotation, ones, ones)
        rates = 1j * rotation.inv_freq
        if rotation.zeta is not None:
            rates = rates + np.log(rotation.zeta) / rotation.scale_base
        weights = rotation.attention_factor ** 2 * (cos_weight[:, 0] - 1j * sin_weight[:, 0])
        return CosineSum(rates, scale * weights, scale * float(constant[0]))
    if family != "table" or params.info.columns is None:
        return None
    cols = scheme_columns(params.scheme, params.d_model, **params.scheme_kwargs())
    m = float(query_position(params))
    angle = m / cols.divisor
    sin, cos = np.sin(angle), np.cos(angle)
    # sin(mω)·sin((m − r)ω) = sin²(mω)·cos(rω) − sin(mω)cos(mω)·sin(rω); cos·cos: cos², + sin·cos
    alpha = np.where(cols.kind == "sin", sin * sin, cos * cos)
    beta = np.where(cols.kind == "sin", -sin * cos, sin * cos)
    periodic = cols.kind != "linear"
    linear = cols.divisor[~periodic]
    # (m/c)·((m − r)/c) = m²/c² − (m/c²)·r
    constant = float(np.sum((m / linear) ** 2))
    slope = -float(np.sum(m / linear ** 2))
    frequencies, where = np.unique(1.0 / cols.divisor[periodic], return_inverse=True)
    weights = np.zeros(frequencies.size, dtype=np.complex128)
    np.add.at(weights, where, alpha[periodic] - 1j * beta[periodic])
    return CosineSum(1j * frequencies, scale * weights, scale * constant, scale * slope)


def _direct_values(params: EncodingParams, start: int, count: int) -> np.ndarray:
    """p(r) for a table without columns (its keys encoded) or a bias, r = start … start + count − 1."""
    m = query_position(params)
    keys = m - (start + np.arange(count, dtype=np.float64))
    kwargs = params.scheme_kwargs()
    if params.info.family == "bias":
        return params.info.bias(np.array([float(m)]), keys, params.d_model, **kwargs)[0]
    query = encode(params.scheme, [float(m)], params.d_model, **kwargs)[0]
    return head_scale(params) * (encode(params.scheme, keys, params.d_model, **kwargs) @ query)


@dataclass(frozen=True)
class ProfileScan:
    """A scan of p(0 … N − 1) in steps, and what it found so far (the module docstring).

    Attributes
    ----------
    params : EncodingParams
    length : int
        N: the claim is about offsets 0 … N − 1.
    stop : int
        The scan evaluates offsets 0 … stop − 1: N, or fewer for a table without columns
        (:data:`DIRECT_WORK`), whose verdicts then name the offsets covered.
    done : int
        Offsets evaluated so far (0 … done − 1).
    at_zero : float
        p(0), scaled (nan until the first step).
    last_kept : int
        The largest offset evaluated whose logit is above p(0) − ln 100 (its key keeps ≥ 1 % of the weight of
        distance 0); 0 when none is but distance 0 itself; −1 when p(0) is not finite.
    far_sum, far_count : float, int
        Sum and number of the finite drops p(0) − p(r) over the farther half, r ≥ (stop − 1)/2.
    lowest : float
        The smallest finite p(r) so far.
    previous : float
        p(done − 1), for the next step's first difference.
    steps_max : ndarray
        max |p(r) − p(r + 1)| over r < k, recorded at each k of ``steps_at`` once the scan passes it.
    steps_at : ndarray of int
        The offsets at which the running largest difference is recorded.
    """

    params: EncodingParams
    length: int
    stop: int
    done: int = 0
    at_zero: float = math.nan
    last_kept: int = -1
    far_sum: float = 0.0
    far_count: int = 0
    lowest: float = math.inf
    previous: float = math.nan
    running_step: float = 0.0
    steps_at: tuple[int, ...] = ()
    steps_max: tuple[float, ...] = ()

    @property
    def pending(self) -> bool:
        return self.done < self.stop

    @property
    def complete(self) -> bool:
        """Every offset 0 … N − 1 evaluated."""
        return self.done == self.length

    @property
    def share_done(self) -> float:
        return self.done / self.stop

    @property
    def decay_distance(self) -> int | None:
        """From this offset on every evaluated key gets under 1 % of distance 0's weight; None if the last does not."""
        if self.pending or self.last_kept < 0 or self.last_kept >= self.done - 1:
            return None
        return self.last_kept + 1

    @property
    def far_drop(self) -> float:
        """Mean p(0) − p(r) over the farther half of the offsets (nan when none is finite)."""
        return self.far_sum / self.far_count if self.far_count else math.nan


def start_scan(params: EncodingParams, steps_at: tuple[int, ...] = ()) -> ProfileScan:
    """A scan of ``params``' profile over every offset 0 … N − 1, nothing evaluated yet.

    ``steps_at``: offsets k at which to record max |p(r) − p(r + 1)| over r < k (each 1 … N − 1).
    """
    params = check_params(params)
    n = params.seq_len
    stop = n if cosine_sum(params) is not None or params.info.family == "bias" else min(
        n, max(MIN_DIRECT, DIRECT_WORK // params.d_model))
    return ProfileScan(params, n, stop, steps_at=tuple(int(k) for k in steps_at))


def advance_scan(scan: ProfileScan, work: int | None = SCAN_WORK) -> ProfileScan:
    """``scan`` with about ``work`` offsets × terms more evaluated (all the rest with None)."""
    if not scan.pending:
        return scan
    params = scan.params
    summed = cosine_sum(params)
    terms = (1 if params.info.family == "bias" else params.d_model) if summed is None else max(1, summed.rates.size)
    count = scan.stop - scan.done if work is None else max(1, limits.check_int("work", work, 1, 2**62) // terms)
    state = scan
    while state.pending and count > 0:
        chunk = min(count, state.stop - state.done,
                    max(1, (2**26 if summed is not None else limits.MAX_SIMILARITY_ELEMENTS) // max(terms, 1)))
        values = (summed.values(state.done, chunk) if summed is not None
                  else _direct_values(params, state.done, chunk))
        state = _absorb(state, values)
        count -= chunk
    return state


def _absorb(scan: ProfileScan, values: np.ndarray) -> ProfileScan:
    """The scan's findings with ``values`` = p(done …) added."""
    start = scan.done
    values = np.where(np.isnan(values), -np.inf, values)  # a masked key (−inf) gets no weight
    at_zero = float(values[0]) if start == 0 else scan.at_zero
    r = start + np.arange(values.size)
    last_kept = scan.last_kept
    if math.isfinite(at_zero):
        kept = np.flatnonzero(values > at_zero - ONE_PERCENT_DROP)
        if kept.size:
            last_kept = max(last_kept, int(r[kept[-1]]))
    finite = np.isfinite(values)
    far = finite & (2 * r >= scan.stop - 1)
    far_sum = scan.far_sum + (float(np.sum(at_zero - values[far])) if far.any() else 0.0)
    lowest = min(scan.lowest, float(values[finite].min())) if finite.any() else scan.lowest
    # |p(r) − p(r + 1)| for r = start − 1 … done − 2: the running maximum, recorded where asked
    joined = np.concatenate([[scan.previous], values]) if start > 0 else values
    with np.errstate(invalid="ignore"):
        steps = np.abs(np.diff(joined))
    steps = np.where(np.isnan(steps), np.inf, steps)  # a masked key next to a seen one
    first_step = start - 1 if start > 0 else 0  # the offset r of steps[0]
    running = np.maximum.accumulate(np.concatenate([[scan.running_step], steps]))[1:] if steps.size else np.array([])
    recorded = list(scan.steps_max)
    for k in scan.steps_at[len(recorded):]:
        index = k - 1 - first_step  # max over r < k: up to r = k − 1
        if index >= steps.size:
            break
        recorded.append(float(running[index]) if index >= 0 else scan.running_step)
    return replace(scan, done=start + values.size, at_zero=at_zero, last_kept=last_kept, far_sum=far_sum,
                   far_count=scan.far_count + int(far.sum()), lowest=lowest, previous=float(values[-1]),
                   running_step=float(running[-1]) if running.size else scan.running_step,
                   steps_max=tuple(recorded))


def scan_profile(params: EncodingParams) -> ProfileScan:
    """The whole scan at once (tests, notebooks)."""
    return advance_scan(start_scan(params), None)
