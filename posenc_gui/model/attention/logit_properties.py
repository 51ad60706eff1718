"""What a scheme's positional logit does, measured the same way for every family (issue #27's "one footing").

Every verdict carries its coverage (:mod:`.coverage`): proved over the range
it names — every element evaluated, or a closed form that holds for all of
them — or checked on the samples it names, and then it shows no ✓. The logit
is :func:`~.logits.positional_logits`' — the p·p term of an added table, a
rotation's q·R(n − m)·k for q = k = the all-ones vector, a bias — with one
exception: xPos is causal (the paper's language models), so its keys after
the query are masked, as a causal bias's are, and every verdict is about the
keys a query sees (n ≤ m).

depends only on the offset
    Along every diagonal of L(m, n) the spread of the finite logits (and one
    mask state) is at most :data:`OFFSET_TOL` of the largest finite |L|.
    Proved by a closed form for a rotation (q·R(n − m)·k is a function of
    n − m) and for a table whose sines and cosines come in pairs of one
    frequency (sin a sin b + cos a cos b = cos(a − b)); else over every pair
    of positions when N ≤ :data:`MATRIX_POSITIONS`, sampled beyond. Rounding
    stays far below the tolerance: a relative error under 1e-9 at N = 2²⁰.
symmetric
    L(m, n) = L(n, m) within the same tolerance, with the same mask. A
    table's PE(m)·PE(n) and a rotation's q·R(n − m)·q are symmetric by a
    closed form (a dot product; R(n − m)ᵀ = R(m − n)).
decays
    As attention sees it: softmax over the keys of the logit divided by
    √d_head (d_head = d_model; a bias is added as it is), from the query
    m = N − 1 (any query for a rotation) to every key m − r, r = 0 … N − 1,
    each evaluated (:mod:`.logit_scan`): decays from the first r from which
    every key gets under 1 % of the weight of the key at distance 0 (its
    logit ln 100 lower). For independent random q, k with N(0, 1) channels the
    drop (L(0) − L(r))/√d has mean 0 at every offset, in closed form: they
    do not decay (their spread is reported, exact for RoPE from the same scan).
bounded
    The largest finite |L| over positions ``0 … 16N − 1`` against that over
    ``0 … N − 1`` (the scheme set up for N; ``N/16`` against ``N`` where 16N
    would pass the largest length): bounded when it grows at most
    :data:`GROWTH_TOL` times. Proved by a Cauchy–Schwarz bound where the
    values have one (a rotation's |L| ≤ L(0); a table's ‖PE(p)‖² ≤ the pairs
    + the lone periodic columns + Σ (p/c)² of the linear ones, or its exact
    extremes): ✓ when the longer range's bound is within ×1.5 of a value
    attained in ``0 … N − 1``, ✗ when a value attained in the longer range
    passes ×1.5 the bound of ``0 … N − 1``; else as sampled.
defined past N
    Positions ``N … 2N − 1`` of the scheme set up for N give a value (or a
    mask) for every pair: no error, no NaN. A closed form for a rotation and
    a table of columns (finite everywhere); an error is its own witness.
tells positions apart
    Query m and its neighbour m + 1 have different logit rows (a different
    mask counts): the smallest difference over all m is at least
    :data:`UNIQUE_TOL` of the median one, the difference of two rows being
    the largest over the keys both see. For a symmetric logit of the offset
    alone the rows' differences follow from the profile (max |p(r) − p(r + 1)|
    over a window of r), so the scan decides it for every m; a causal
    rotation's rows differ in their mask at every m (key m + 1); else
    sampled (:data:`NEIGHBOUR_ROWS` queries against every fourth measured
    key and the keys next to m).

Sizes stay bounded whatever N: at most :data:`MATRIX_POSITIONS` positions
per axis, and the scan evaluates N offsets in steps (:func:`continue_properties`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..core import limits
from . import logit_checks as checks
from ..core.coverage import Coverage, Verdict
from .logit_checks import (
    GROWTH_TOL, MATRIX_POSITIONS, NEIGHBOUR_ROWS, OFFSET_TOL, PAST_POSITIONS, UNIQUE_TOL,
)
from .logit_scan import ONE_PERCENT_DROP, SCAN_WORK, ProfileScan, advance_scan, start_scan
from .logits import profile_distances
from ..core.params import EncodingParams, check_params

__all__ = ["GROWTH_TOL", "MATRIX_POSITIONS", "NEIGHBOUR_ROWS", "OFFSET_TOL", "ONE_PERCENT_DROP",
           "PAST_POSITIONS", "SCAN_WORK", "UNIQUE_TOL"]

#: What the q and k of the measured logit are, in words (captions, tooltips).
VECTORS_WORDS = ("q = k = the all-ones vector for a rotation (RoPE, xPos); a table's PE(m)·PE(n) (W_q W_kᵀ = I); "
                 "a bias as it is; a table's and a rotation's logit divided by √d_head (d_head = d_model) before "
                 "the softmax")


@dataclass(frozen=True)
class LogitProperties:
    """The measured properties of one setup's positional logit (module docstring for each definition).

    Attributes
    ----------
    params : EncodingParams
    stride : int
        Spacing of the measured positions (1 when N ≤ :data:`MATRIX_POSITIONS`: every pair measured).
    scale : float
        Largest finite |L| over the measured matrix (0 for an all-zero one).
    offset_spread : float
        Largest spread along a diagonal over ``scale`` (inf where a diagonal is partly masked).
    offset_witness : str
        Two cells of one diagonal that differ most, in words ("" when none differ).
    asymmetry : float
        Largest |L(m, n) − L(n, m)| over ``scale`` (inf where the masks differ).
    symmetric_witness : str
    masked : bool
        Some logits are −inf (a causal mask).
    scan : ProfileScan
        The profile over every offset (decay; tells apart where it decides): pending until finished.
    max_within, max_longer : float
        Largest finite |L| over the measured positions of the two ranges of the bounded check.
    bound_lengths : tuple of int
        Those ranges' lengths.
    limit_within, limit_longer : float
        Proved upper bounds of |L| over the whole of each range (nan where none is known).
    past_error : str
        Empty when positions N … 2N − 1 give values; else what went wrong.
    row_difference : float
        Sampled: smallest neighbour-row difference over the median one, on the keys both see (a pair whose masks
        differ counts as told apart: inf).
    rows_by_mask : bool
        The logits are the same on the keys both neighbours see, and every pair differs in its mask only.
    causal, offset_proof, symmetric_proof, defined_proof, rows_proof : bool
        xPos's mask; the closed forms of the module docstring; ``rows_proof``: the scan decides "tells apart".
    rows_exact : bool
        ``row_difference`` compares every pair of neighbour rows on every key (N ≤ :data:`MATRIX_POSITIONS`).
    zero : bool
        The logit is 0 everywhere (a proved bound of 0): nothing depends on position.
    """

    params: EncodingParams
    stride: int
    scale: float
    offset_spread: float
    offset_witness: str
    asymmetry: float
    symmetric_witness: str
    masked: bool
    scan: ProfileScan
    max_within: float
    max_longer: float
    bound_lengths: tuple[int, int]
    limit_within: float
    limit_longer: float
    past_error: str
    row_difference: float
    rows_by_mask: bool
    causal: bool = False
    offset_proof: bool = False
    symmetric_proof: bool = False
    defined_proof: bool = False
    rows_proof: bool = False
    zero: bool = False
    rows_exact: bool = False

    # -------------------------------------------------------------- the answers
    @property
    def pending(self) -> bool:
        """The scan over every offset is still running (see :func:`continue_properties`)."""
        return self.scan.pending

    @property
    def offset_only(self) -> bool:
        return self.offset_proof or self.offset_spread <= OFFSET_TOL

    @property
    def symmetric(self) -> bool:
        return self.symmetric_proof or self.asymmetry <= OFFSET_TOL

    @property
    def decay_distance(self) -> int | None:
        """From this offset on every key gets under 1 % of distance 0's weight; None: not within N (or pending)."""
        return self.scan.decay_distance

    @property
    def decays(self) -> bool:
        return self.decay_distance is not None

    @property
    def far_drop(self) -> float:
        """Mean (scaled) drop p(0) − p(r) over the farther half of the offsets (nan when all are masked)."""
        return self.scan.far_drop

    @property
    def random_spread(self) -> float | None:
        """A rotation's largest spread of (L(0) − L(r))/√d over independent N(0, 1) pairs q, k: exact for RoPE
        (2af²·(p(0) − min p)/√d, p the scaled q = k = 1 profile), the closed-form bound 2 for xPos; None else."""
        if self.params.info.family != "rotation" or self.scan.pending:
            return None
        if self.causal:
            return 2.0
        from .logits import _rotation

        factor = _rotation(self.params).attention_factor ** 2
        deepest = self.scan.at_zero - self.scan.lowest
        return math.sqrt(max(0.0, 2.0 * factor * deepest / math.sqrt(self.params.d_model)))

    @property
    def bounded(self) -> bool:
        return self.max_longer <= GROWTH_TOL * self.max_within

    @property
    def growth(self) -> float:
        """max_longer / max_within (1 for two all-zero ranges)."""
        if self.max_within == 0:
            return 1.0 if self.max_longer == 0 else math.inf
        return self.max_longer / self.max_within

    @property
    def defined_past(self) -> bool:
        return not self.past_error

    @property
    def exact_rows(self) -> tuple[float, bool] | None:
        """(row difference, by mask) decided for every m by the scan or the mask; None where sampled or pending."""
        if self.causal:
            return math.inf, False
        if self.zero:
            return 0.0, False
        if self.rows_proof and not self.scan.pending:
            return checks.ratio_from_steps(self.scan), False
        return (self.row_difference, self.rows_by_mask) if self.rows_exact else None

    @property
    def tells_apart(self) -> bool:
        exact = self.exact_rows
        return (exact[0] if exact is not None else self.row_difference) >= UNIQUE_TOL

    def passes(self) -> dict[str, bool | None]:
        """Whether each property holds where it is settled (✓ True, ✗ False), None where it is not (–)."""
        return {name: (None if verdict.mark == "–" else verdict.holds)
                for name, verdict in self.verdict_records().items()}

    # ------------------------------------------------------------ the coverage
    def _positions(self, first: int, last: int, exact: bool, proof: bool, samples: int,
                   quantity: str = "query and key positions") -> Coverage:
        if proof:
            return Coverage(quantity, first, last, "closed form")
        if exact:
            return Coverage(quantity, first, last)
        return Coverage(quantity, first, last, "sampled", samples=samples)

    def verdict_records(self) -> dict[str, Verdict]:
        """Each property's :class:`~.coverage.Verdict`: its answer, what it was established over, its witness."""
        n = self.params.seq_len
        everything = (0, n - 1)
        measured = -(-n // self.stride)
        exact_matrix = self.stride == 1
        offset = Verdict(self.offset_only, self._positions(0, n - 1, exact_matrix, self.offset_proof or self.zero,
                                                          measured), everything, self.offset_witness or None)
        symmetric = Verdict(self.symmetric, self._positions(0, n - 1, exact_matrix, self.symmetric_proof or self.zero,
                                                            measured), everything, self.symmetric_witness or None)
        scan = self.scan
        if scan.complete:
            decay_cov = Coverage("offsets", 0, n - 1)
        elif self.decays:  # proved for the offsets before the scan's stop, not past them
            decay_cov = Coverage("offsets", 0, scan.done - 1)
        else:
            decay_cov = Coverage("offsets", 0, n - 1, "sampled", samples=max(scan.done, 1))
        kept = (f"the key at r = {scan.last_kept:,} keeps ≥ 1 %; every offset 0…{n - 1:,} evaluated"
                if scan.complete and not self.decays and scan.last_kept >= 0 else None)
        decays = Verdict(self.decays, decay_cov, everything, kept)
        low, high = self.bound_lengths
        bound_exact = high <= MATRIX_POSITIONS
        proved_yes = self.limit_longer <= GROWTH_TOL * self.max_within
        proved_no = self.max_longer > GROWTH_TOL * self.limit_within
        bounded_holds = proved_yes or (self.bounded and not proved_no)
        witness = None
        if not bounded_holds and (proved_no or bound_exact):
            witness = (f"|L| reaches {self.max_longer:.4g} in 0…{high - 1:,}, over ×{GROWTH_TOL:g} the "
                       f"{min(self.limit_within, self.max_within) if bound_exact else self.limit_within:.4g} "
                       f"{'largest' if bound_exact else 'bound'} in 0…{low - 1:,}")
        bounded = Verdict(bounded_holds, self._positions(0, high - 1, bound_exact, proved_yes or proved_no,
                                                         -(-high // max(1, math.ceil(high / MATRIX_POSITIONS))),
                                                         "positions"), (0, high - 1), witness)
        past = Verdict(self.defined_past, self._positions(n, 2 * n - 1, n <= PAST_POSITIONS,
                                                          self.defined_proof and self.defined_past,
                                                          min(n, PAST_POSITIONS), "positions"),
                       (n, 2 * n - 1), self.past_error or None)
        rows = self.exact_rows
        quantity = "neighbour rows (m, m + 1) at m"
        last_query = max(n - 2, 0)
        if rows is not None:
            rows_cov = Coverage(quantity, 0, last_query, "closed form" if self.causal or self.zero else "exact")
        else:  # sampled, or the scan still running
            rows_cov = Coverage(quantity, 0, last_query, "sampled", samples=max(1, min(NEIGHBOUR_ROWS, n - 1)))
        apart = Verdict(self.tells_apart, rows_cov, (0, last_query))
        return {"offset only": offset, "decays": decays, "symmetric": symmetric, "bounded": bounded,
                "defined past N": past, "tells positions apart": apart}

    def _words(self) -> dict[str, tuple[str, str]]:
        """Per property, the words for when it holds and for when it fails, with its number."""
        if self.offset_only:
            offset = ("yes", "")
        elif math.isinf(self.offset_spread):
            offset = ("", "no (mask varies)")
        else:
            offset = ("", f"no (spread {self.offset_spread:.2g})")
        if self.symmetric:
            symmetric = ("yes", "")
        elif math.isinf(self.asymmetry):
            symmetric = ("", "no (causal mask)" if self.masked else "no (masks differ)")
        else:
            symmetric = ("", f"no ({self.asymmetry:.2g})")
        if self.scan.pending:
            decay = (f"… {100 * self.scan.share_done:.0f} % of offsets scanned", "")
        elif self.decays:
            decay = (f"to 1 % from r = {self.decay_distance:,}", "")
        elif math.isnan(self.far_drop):
            decay = ("", "no (all masked)")
        elif not self.scan.complete:
            decay = ("", f"no within offsets 0…{self.scan.done - 1:,} (the key at r = {self.scan.last_kept:,} keeps "
                         "≥ 1 %)")
        else:
            decay = ("", f"no (far drop {self.far_drop:.3g})")
        bounded = (f"yes (≤ {max(self.max_longer, 0):.4g})",
                   f"no (×{self.growth:.3g} over ×{self.bound_lengths[1] // self.bound_lengths[0]} range)")
        rows = self.exact_rows
        by_mask = rows[1] if rows is not None else self.rows_by_mask
        apart = ("by the mask alone" if by_mask else "by the mask" if self.causal else "yes", "no")
        if self.params.seq_len < 2:
            apart = ("yes (one position: no neighbour to confuse)", "no")
        return {"offset only": offset, "decays": decay, "symmetric": symmetric, "bounded": bounded,
                "defined past N": ("yes", "no"), "tells positions apart": apart}

    def verdicts(self) -> dict[str, str]:
        """One cell per property: its mark, its number and its coverage (:meth:`~.coverage.Verdict.cell`)."""
        n = self.params.seq_len
        words = self._words()
        cells = {}
        for name, verdict in self.verdict_records().items():
            holds_words, fails_words = words[name]
            if name == "decays" and self.scan.pending:
                cells[name] = f"{holds_words} (of 0…{n - 1:,})"
                continue
            cells[name] = verdict.cell(holds_words, fails_words)
        return cells

    def short_cells(self) -> dict[str, str]:
        """Compact cells for a table: a settled ✓ or ✗ is proved over its column's whole range, so its mark and
        number say it (:meth:`verdicts` has the coverage, for the tooltip); an unsettled one names its samples."""
        words = self._words()
        cells = {}
        for name, verdict in self.verdict_records().items():
            text = words[name][0 if verdict.holds else 1]
            if name == "decays" and self.scan.pending:
                cells[name] = words[name][0]  # how far the scan is
            elif verdict.mark == "–":
                cells[name] = f"– {text}, {verdict.coverage.phrase()}"
            else:
                cells[name] = f"{verdict.mark} {text}"
        return cells

    def decay_words(self) -> str:
        """What the decay verdict is about, in a sentence: the vectors, the scale, the random pairs."""
        spread = self.random_spread
        random = ("" if spread is None else
                  f" Random q, k with independent N(0, 1) channels: the drop (L(0) − L(r))/√d has mean 0 at every "
                  f"offset (closed form), spread ≤ {spread:.3g}{' (closed form)' if self.causal else ''}: no decay "
                  "in the mean.")
        return f"Decay: the softmax weight of the key r back against distance 0, {VECTORS_WORDS}.{random}"

    def as_dict(self) -> dict:
        """A JSON-ready record: each property's cell and :class:`~.coverage.Verdict` record, and the vectors."""
        records = self.verdict_records()
        return {"cells": self.verdicts(), "verdicts": {name: v.as_dict() for name, v in records.items()},
                "decay_distance": self.decay_distance, "far_drop": self.far_drop,
                "random_drop_mean": None if self.random_spread is None else 0.0,
                "random_drop_spread": self.random_spread, "vectors": VECTORS_WORDS,
                "scale": "1/sqrt(d_model)" if self.params.info.family != "bias" else "1 (a bias is added as it is)"}


#: The properties' names, in the order the panel and the Scorecard show them.
PROPERTY_NAMES = ("offset only", "decays", "symmetric", "bounded", "defined past N", "tells positions apart")
#: What each property means, in a sentence (the tables' tooltips).
PROPERTY_HELP = {
    "offset only": "Along every diagonal of the logit matrix (one offset m − n) the logits agree within 1e-6 of "
                   "the largest |logit|, masked entries included.",
    "decays": "From which distance r every key at r or farther gets under 1 % of the softmax weight of the key at "
              "distance 0 (its logit/√d_head ≥ ln 100 lower; a bias as it is), q = k = the all-ones vector for a "
              "rotation, every offset 0 … N − 1 evaluated. Independent random q, k: no decay in the mean.",
    "symmetric": "L(m, n) = L(n, m) within 1e-6 of the largest |logit|, with the same mask.",
    "bounded": "The largest |logit| over positions 0 … 16N − 1 is at most 1.5 × that over 0 … N − 1 "
               "(N/16 against N at the longest N).",
    "defined past N": "Positions N … 2N − 1 of the setup made for N give a logit (or a mask) for every pair.",
    "tells positions apart": "A query at m and one at m + 1 have different logits against the keys (a different "
                             "mask counts): the smallest difference is at least 0.1 of the median one.",
}


def decay_profile(params: EncodingParams) -> tuple[np.ndarray, np.ndarray]:
    """The profile p(r) = L(N − 1, N − 1 − r) at :func:`~.logits.profile_distances`: (distances, logits), as plotted."""
    params = check_params(params)
    distances, _ = profile_distances(params.seq_len)
    last = params.seq_len - 1
    return distances, checks.logits(params, np.array([float(last)]), (last - distances).astype(np.float64))[0]


def logit_properties(params: EncodingParams, scan_work: int | None = None) -> LogitProperties:
    """The measured properties of the positional logit of ``params`` (q = k = 1 for a rotation).

    Parameters
    ----------
    params : EncodingParams
        Any scheme whose positional logit :func:`~.logits.positional_logits` computes.
    scan_work : int, optional
        Offsets × terms of the scan over every offset done in this call (the result is then
        :attr:`LogitProperties.pending` until :func:`continue_properties` has done the rest); all by default.

    Returns
    -------
    LogitProperties

    Raises
    ------
    ValueError
        When ``positional_logits`` does not compute this scheme's logit (naming why).
    """
    params = check_params(params)
    if scan_work is not None:
        scan_work = limits.check_int("scan_work", scan_work, 1, 2**62)
    positions, stride = checks.spaced(params.seq_len)
    matrix = checks.logits(params, positions, positions)
    scale = checks.largest(matrix)
    spread, offset_witness = checks.spread(matrix, scale, positions)
    asymmetry, symmetric_witness = checks.asymmetry(matrix, scale, positions)
    max_within, max_longer, lengths, limit_within, limit_longer = checks.bounded(params)
    rows_exact = stride == 1  # every row and every key: the criterion itself
    # else a quarter of the measured keys, and each query's neighbours: the rows' costs stay a few hundred ms
    row_difference, by_mask = (checks.row_ratio(matrix[:-1], matrix[1:]) if rows_exact
                               else checks.rows(params, positions[::4]))
    offset_proof, symmetric_proof, defined_proof = checks.closed_forms(params)
    causal = checks.causal_rotation(params)
    zero = limit_within == 0 and limit_longer == 0
    # a range whose every position was evaluated has its largest |L| as its bound
    if lengths[0] <= MATRIX_POSITIONS:
        limit_within = max_within if math.isnan(limit_within) else min(limit_within, max_within)
    if lengths[1] <= MATRIX_POSITIONS:
        limit_longer = max_longer if math.isnan(limit_longer) else min(limit_longer, max_longer)
    rows_proof = offset_proof and symmetric_proof and not causal and params.seq_len >= 2
    steps = tuple(k + 1 for k in checks.steps_needed(params.seq_len)) if rows_proof else ()
    scan = advance_scan(start_scan(params, steps), scan_work)
    return LogitProperties(params, stride, scale, spread, offset_witness, asymmetry, symmetric_witness,
                           bool(np.isneginf(matrix).any()), scan, max_within, max_longer, lengths, limit_within,
                           limit_longer, checks.past(params), row_difference, by_mask, causal, offset_proof,
                           symmetric_proof, defined_proof, rows_proof, zero, rows_exact)


def continue_properties(measured: LogitProperties, scan_work: int | None = SCAN_WORK) -> LogitProperties:
    """``measured`` with its scan over every offset advanced by ``scan_work`` (all of it with None)."""
    if not measured.pending:
        return measured
    return replace(measured, scan=advance_scan(measured.scan, scan_work))


#: Setups compared with the panel's own, at most.
MAX_COMPARED = 3


@dataclass(frozen=True)
class ComparedSetup:
    """One scheme compared with the panel's setup: the same N and d_model, its own options at their defaults.

    ``distances`` and ``profile`` are :func:`decay_profile`'s. ``params``, ``distances`` and ``profile``
    are None, and ``error`` says why, when the scheme does not take these sizes or its logit is not computed.
    """

    key: str
    params: EncodingParams | None
    distances: np.ndarray | None
    profile: np.ndarray | None
    error: str = ""


def _check_compared(schemes: object) -> tuple[str, ...]:
    from ..schemes import SCHEMES

    if isinstance(schemes, str) or not isinstance(schemes, (tuple, list)):
        raise ValueError(f"compare must be a list of scheme names, got {limits.shown(schemes)}")
    if len(schemes) > MAX_COMPARED:
        raise ValueError(f"compare takes at most {MAX_COMPARED} schemes, got {len(schemes)}")
    for key in schemes:
        if key not in SCHEMES:
            raise ValueError(f"compare: unknown scheme {limits.shown(key)} (known: {', '.join(SCHEMES)})")
    return tuple(dict.fromkeys(schemes))


def compared_setup(params: EncodingParams, key: str) -> EncodingParams:
    """``params`` with scheme ``key``: options of the same name carried over, the others at their defaults."""
    return check_params(params).replaced(scheme=key)


def compared_profiles(params: EncodingParams, schemes: tuple[str, ...]) -> tuple[ComparedSetup, ...]:
    """The :func:`decay_profile` of each scheme in ``schemes`` (at most :data:`MAX_COMPARED`) beside ``params``.

    Raises
    ------
    ValueError
        For ``schemes`` that are not a list of at most :data:`MAX_COMPARED` known scheme names.
    """
    params = check_params(params)
    results = []
    for key in _check_compared(schemes):
        try:
            setup = compared_setup(params, key)
            results.append(ComparedSetup(key, setup, *decay_profile(setup)))
        except ValueError as error:
            results.append(ComparedSetup(key, None, None, None, str(error)))
    return tuple(results)


def pinned_comparison(pinned: EncodingParams, scan_work: int | None = None
                      ) -> tuple[ComparedSetup, LogitProperties | str]:
    """Setup A of an A/B comparison, for the plot and table of setup B: its own decay profile and properties.

    Unlike a compared scheme, A keeps all of its own parameters (its sizes
    too). The setup's ``key`` is ``"A"``; when its logit is not computed,
    the profile is None and ``error`` (and the second value) says why.
    ``scan_work``: as for :func:`logit_properties` (:func:`continue_pinned` does the rest).
    """
    pinned = check_params(pinned)
    try:
        setup = ComparedSetup("A", pinned, *decay_profile(pinned))
    except ValueError as error:
        setup = ComparedSetup("A", None, None, None, str(error))
    try:
        measured: LogitProperties | str = logit_properties(pinned, scan_work)
    except ValueError as error:
        measured = str(error)
    return setup, measured


def continue_pinned(result: tuple[ComparedSetup, LogitProperties | str], scan_work: int | None = SCAN_WORK
                    ) -> tuple[ComparedSetup, LogitProperties | str]:
    """:func:`pinned_comparison`'s result with its scan advanced by ``scan_work`` (all of it with None)."""
    setup, measured = result
    return setup, continue_properties(measured, scan_work) if isinstance(measured, LogitProperties) else measured


def properties_table(params: EncodingParams, schemes: tuple[str, ...] = (), scan_work: int | None = None
                     ) -> tuple[tuple[str, LogitProperties | str], ...]:
    """:func:`logit_properties` of ``params`` and of each compared scheme (or why it has none), in that order.

    ``scan_work``: as for :func:`logit_properties`, per setup (:func:`continue_table` does the rest).
    """
    params = check_params(params)
    setups: list[tuple[str, EncodingParams | str]] = [(params.scheme, params)]
    for key in _check_compared(schemes):
        try:
            setups.append((key, compared_setup(params, key)))
        except ValueError as error:
            setups.append((key, str(error)))
    results = []
    for key, setup in setups:
        if isinstance(setup, str):
            results.append((key, setup))
            continue
        try:
            results.append((key, logit_properties(setup, scan_work)))
        except ValueError as error:
            results.append((key, str(error)))
    return tuple(results)


def continue_table(measured: tuple[tuple[str, LogitProperties | str], ...], scan_work: int | None = SCAN_WORK
                   ) -> tuple[tuple[str, LogitProperties | str], ...]:
    """:func:`properties_table`'s result with the first pending scan advanced by ``scan_work`` (all with None)."""
    rows = list(measured)
    for index, (key, result) in enumerate(rows):
        if isinstance(result, LogitProperties) and result.pending:
            rows[index] = (key, continue_properties(result, scan_work))
            break
    return tuple(rows)


def table_pending(measured: tuple[tuple[str, LogitProperties | str], ...]) -> bool:
    """Whether a scan of :func:`properties_table`'s result is still running."""
    return any(isinstance(result, LogitProperties) and result.pending for _, result in measured)


def finish_table(measured: tuple[tuple[str, LogitProperties | str], ...]
                 ) -> tuple[tuple[str, LogitProperties | str], ...]:
    """:func:`properties_table`'s result with every scan run to its end (an export cannot wait for the steps)."""
    while table_pending(measured):
        measured = continue_table(measured, None)
    return measured


def properties_caption(measured: tuple[tuple[str, LogitProperties | str], ...]) -> str:
    """The measured properties of each setup in words, with what q and k are and each verdict's coverage."""
    parts = []
    for scheme, result in measured:
        if isinstance(result, LogitProperties):
            parts.append(f"{scheme}: " + "; ".join(f"{name} {text}" for name, text in result.verdicts().items()))
            spread = result.random_spread
            if spread is not None:
                parts.append(f"{scheme}, random q, k with N(0, 1) channels: the drop (L(0) − L(r))/√d has mean 0 at "
                             f"every offset (closed form) and spread ≤ {spread:.3g}: no decay in the mean")
        else:
            parts.append(f"{scheme}: not measured ({result})")
    return (f"Measured properties ({VECTORS_WORDS}; decays: from which distance every farther key gets under 1 % "
            "of the softmax weight of distance 0; bounded: the largest |logit| over a 16× longer range; ✓ and ✗ "
            "are proved over the range they name, – only checked where it says) — " + ". ".join(parts) + ".")
