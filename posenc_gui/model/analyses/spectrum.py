"""Spectrum of an encoding: the wavelength of each frequency, and what it resolves.

The sinusoidal encoding gives (sin, cos) pair ``i`` the angular frequency
``ω_i = base^(−2i/d)``, i.e. the wavelength ``λ_i = 2π · base^(2i/d)`` positions:
``2π`` for the first pair, ``2π · base^((d−2)/d)`` for the last (just under
``2π · base``). Over a sequence of ``N`` positions, pair ``i`` turns by
``ω_i`` radians per position and by ``ω_i · (N − 1)`` radians in total.

Two measurable criteria sort the components:

- **resolves neighbours** — one step ``p → p + 1`` moves the pair's point on
  its circle by the chord ``2·|sin(ω/2)|`` (the same for every ``p``); the
  component resolves neighbouring positions if this chord is at least
  ``step_tol`` (default 0.1, a tenth of the circle's radius);
- **barely moves** — the total phase over the sequence, ``ω · (N − 1)``, is
  below ``static_tol`` radians (default 0.1): every position of the sequence
  sits within a chord of 0.1 of position 0, so the component is almost a
  constant here;

components in between are **coarse** (they order far-apart positions but not
neighbours). A component **wraps** if its total phase reaches ``2π``: on its
own it repeats inside the sequence.

For a non-periodic (``"linear"``) column ``pos / c`` the step is ``1/c`` and
the total change ``(N − 1)/c``, judged with the same tolerances; a scheme with
no periodic column (naive, normalized) has no wavelength at all, and its
summary says so.

Components are the distinct frequencies of a scheme, in order of first
appearance: the pairs of ``sinusoidal`` (either layout) and ``harmonic``,
single columns of ``all_sine``, one shared frequency for the tiled schemes.

A table without columns (``binary``, ``nope``) has the periods its scheme
declares (``inf``: none) and ``ω = 2π / period``, the phase of its cycle per
position; how far it moves is measured on its values at the integers
``0 … M−1`` (all N within :data:`TABLE_WORK`): the step is the mean
``|PE(p+1)_j − PE(p)_j|`` (its largest over the component's dimensions), and
a component is static when its values do not change there at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import limits
from ..core.params import EncodingParams, check_params
from ..schemes import columns, encode, wavelengths
from ..schemes import scheme as scheme_of

#: Default chord per step at or above which a component resolves neighbours.
STEP_TOL = 0.1
#: Default total phase (radians) over the sequence below which a component barely moves.
STATIC_TOL = 0.1

#: Largest positions × d_model of a table evaluated to measure its steps.
TABLE_WORK = 2**20

#: Category names, in order from fast to slow.
CATEGORIES = ("fine", "coarse", "static")


@dataclass(frozen=True, eq=False)
class Spectrum:
    """Per-component wavelengths and how far each moves over the sequence.

    Attributes
    ----------
    params : EncodingParams
        What was analysed.
    component_dims : tuple of tuple of int
        The dimensions of each component (e.g. ``(2i, 2i+1)`` interleaved,
        ``(i, i + d/2)`` in the halves layout).
    kinds : tuple of str
        ``"sin+cos"``, ``"sin"``, ``"cos"``, ``"linear"`` or ``"table"`` per component.
    wavelength : ndarray
        Period in positions, ``2π / ω``; ``inf`` for linear components.
    omega : ndarray
        Phase advance per position in radians (``1 / divisor``); for linear
        components the value change per position.
    step_chord : ndarray
        Distance a component's point moves in one step: ``2·|sin(ω/2)|`` for
        periodic components (the chord on the unit circle; for a lone sine
        the largest change of its value), ``ω`` for linear ones, the mean
        change of its values over the positions measured for a table.
    total_phase : ndarray
        ``ω · (N − 1)``: radians turned (or value change) over the sequence.
    category : ndarray of str
        ``"fine"``, ``"coarse"`` or ``"static"`` (see the module docstring).
    wraps : ndarray of bool
        ``total_phase ≥ 2π`` for periodic components.
    step_tol, static_tol : float
        The tolerances used.
    measured_positions : int
        For a table: its steps were measured on ``0 … measured_positions − 1``
        (0 for a scheme of columns, whose steps follow from its frequencies).
    """

    params: EncodingParams
    component_dims: tuple[tuple[int, ...], ...]
    kinds: tuple[str, ...]
    wavelength: np.ndarray
    omega: np.ndarray
    step_chord: np.ndarray
    total_phase: np.ndarray
    category: np.ndarray
    wraps: np.ndarray
    step_tol: float
    static_tol: float
    measured_positions: int = 0

    @property
    def periodic(self) -> bool:
        """True when some component is periodic (has a wavelength)."""
        return bool(np.any(np.isfinite(self.wavelength)))

    @property
    def n_components(self) -> int:
        """Number of distinct frequencies."""
        return len(self.kinds)

    def count(self, category: str) -> int:
        """How many components are in ``category``."""
        if category not in CATEGORIES:
            raise ValueError(f"category must be one of {', '.join(CATEGORIES)}; got {category!r}")
        return int(np.count_nonzero(self.category == category))

    @property
    def seq_len_crossing(self) -> float:
        """Fractional component index where the wavelength first reaches ``seq_len``.

        ``nan`` if no periodic component reaches it (or none is periodic);
        interpolated in ``log λ`` between the two components around it, so a
        view can mark the sequence length on the component axis.
        """
        n = float(self.params.seq_len)
        wl = self.wavelength
        finite = np.isfinite(wl)
        above = np.flatnonzero(finite & (wl >= n))
        if above.size == 0:
            return math.nan
        j = int(above[0])
        if j == 0 or not np.isfinite(wl[j - 1]) or wl[j - 1] <= 0:
            return float(j)
        lo, hi = math.log(wl[j - 1]), math.log(wl[j])
        return float(j - 1 + (math.log(n) - lo) / (hi - lo)) if hi > lo else float(j)

    def no_wavelength_reason(self) -> str:
        """Why a scheme that is not :attr:`periodic` has no wavelength, in one sentence."""
        if not self.measured_positions:
            return "Every column is pos / c: it grows with the position and never repeats, so it has no wavelength " \
                   "and no phase to plot."
        if self.count("static") == self.n_components:
            return "Every dimension takes the same value at every position: no wavelength and no phase to plot."
        return "No dimension repeats with a period: no wavelength and no phase to plot."

    def category_names(self) -> dict[str, str]:
        """What each category means here, for a key: ``{"fine": "resolves neighbours (step chord ≥ 0.1)", …}``."""
        if self.measured_positions:
            return {"fine": f"resolves neighbours (mean step ≥ {self.step_tol:g})", "coarse": "coarse",
                    "static": "constant over the sequence"}
        return {"fine": f"resolves neighbours (step chord ≥ {self.step_tol:g})", "coarse": "coarse",
                "static": f"barely moves (total phase < {self.static_tol:g} rad)"}

    def summary(self) -> str:
        """One sentence with the counts, e.g. for a status line."""
        n = self.n_components
        table = self.measured_positions > 0
        measured = ""
        if table and self.measured_positions < self.params.seq_len:
            measured = f" (steps measured on positions 0…{self.measured_positions - 1:,})"
        if not self.periodic and table:
            moving = "takes one value" if self.count("static") == n else "does not repeat"
            return (f"not periodic: no wavelength — every dimension of {self.params.scheme} {moving} over the "
                    f"positions measured{measured}.")
        if not self.periodic:
            return (f"not periodic: no wavelength — every column of {self.params.scheme} is pos / c, which grows "
                    f"without repeating ({n} distinct column{'s' if n != 1 else ''}).")
        step = "mean step" if table else "step chord"
        text = (f"{n} component{'s' if n != 1 else ''}: {self.count('fine')} resolve neighbouring positions "
                f"({step} ≥ {self.step_tol:g}), {self.count('coarse')} are coarse, "
                f"{self.count('static')} " + (f"do not change over {self.params.seq_len:,} positions" if table else
                                              f"barely move over {self.params.seq_len:,} positions "
                                              f"(total phase < {self.static_tol:g} rad)"))
        n_wrap = int(np.count_nonzero(self.wraps))
        return text + f"; {n_wrap} wrap around (repeat) within the sequence{measured}."


def spectrum(params: EncodingParams, step_tol: float = STEP_TOL, static_tol: float = STATIC_TOL) -> Spectrum:
    """Wavelength, phase step and total phase of each component of ``params``.

    Parameters
    ----------
    params : EncodingParams
        Scheme, ``seq_len`` (the ``N`` of the total phase), ``d_model``, ``base``, ``layout``.
    step_tol : float
        Chord per step, in ``(0, 2]``, at or above which a component resolves neighbours.
    static_tol : float
        Total phase in radians, ``> 0``, below which a component barely moves.

    Returns
    -------
    Spectrum

    Raises
    ------
    ValueError
        For invalid parameters or tolerances.

    Examples
    --------
    >>> s = spectrum(EncodingParams("sinusoidal", 128, 512))
    >>> round(s.wavelength[0] / (2 * math.pi), 12)
    1.0
    """
    params = check_params(params)
    step_tol = limits.check_real("step_tol", step_tol, 0.0, 2.0, low_open=True)
    static_tol = limits.check_real("static_tol", static_tol, 0.0, 2.0 * math.pi, low_open=True)
    if scheme_of(params.scheme).columns is None:
        return _table_spectrum(params, step_tol, static_tol)
    cols = columns(params.scheme, params.d_model, **params.scheme_kwargs())
    # Group dimensions by (periodic?, divisor) in order of first appearance.
    groups: dict[tuple[bool, float], list[int]] = {}
    for dim, (kind, divisor) in enumerate(zip(cols.kind.tolist(), cols.divisor.tolist())):
        groups.setdefault((kind != "linear", divisor), []).append(dim)
    dims_of = tuple(tuple(d) for d in groups.values())
    kinds = []
    for dims in dims_of:
        present = {str(cols.kind[d]) for d in dims}
        kinds.append("sin+cos" if present == {"sin", "cos"} else present.pop())
    divisor = np.array([key[1] for key in groups], dtype=np.float64)
    periodic = np.array([key[0] for key in groups], dtype=bool)
    omega = 1.0 / divisor
    wavelength = np.where(periodic, 2.0 * math.pi * divisor, np.inf)
    step = np.where(periodic, 2.0 * np.abs(np.sin(omega / 2.0)), omega)
    total = omega * (params.seq_len - 1)
    category = np.where(step >= step_tol, "fine", np.where(total < static_tol, "static", "coarse"))
    wraps = periodic & (total >= 2.0 * math.pi)
    return Spectrum(params, dims_of, tuple(kinds), _ro(wavelength), _ro(omega), _ro(step), _ro(total),
                    _ro(category), _ro(wraps), step_tol, static_tol)


def _table_spectrum(params: EncodingParams, step_tol: float, static_tol: float) -> Spectrum:
    """The spectrum of a table scheme: its declared periods, its steps measured on its values."""
    kwargs = params.scheme_kwargs()
    period = wavelengths(params.scheme, params.d_model, **kwargs)
    groups: dict[float, list[int]] = {}
    for dim, value in enumerate(period.tolist()):
        groups.setdefault(value, []).append(dim)
    dims_of = tuple(tuple(d) for d in groups.values())
    measured = min(params.seq_len, max(2, TABLE_WORK // params.d_model))
    values = encode(params.scheme, np.arange(measured, dtype=np.float64), params.d_model, **kwargs)
    steps = np.abs(np.diff(values, axis=0))
    mean_step = steps.mean(axis=0) if steps.size else np.zeros(params.d_model)
    moves = steps.max(axis=0) > 0 if steps.size else np.zeros(params.d_model, dtype=bool)
    wavelength = np.array(list(groups), dtype=np.float64)
    step = np.array([mean_step[list(d)].max() for d in dims_of])
    constant = np.array([not moves[list(d)].any() for d in dims_of])
    omega = 2.0 * math.pi / wavelength
    total = omega * (params.seq_len - 1)
    category = np.where(step >= step_tol, "fine", np.where(constant, "static", "coarse"))
    wraps = np.isfinite(wavelength) & (total >= 2.0 * math.pi)
    return Spectrum(params, dims_of, ("table",) * len(dims_of), _ro(wavelength), _ro(omega), _ro(step), _ro(total),
                    _ro(category), _ro(wraps), step_tol, static_tol, measured)


def _ro(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    array.setflags(write=False)
    return array


__all__ = ["CATEGORIES", "STATIC_TOL", "STEP_TOL", "Spectrum", "spectrum"]
