"""Uniqueness verdicts carry their coverage, checked against brute force and closed forms (no widgets).

Issue #37 items 2 and 3: a ✓ "unique in 0…N−1" only where every pair of
0…N−1 is covered; a closest pair called that of 0…N−1 only when it is. The
truths here are worked out independently of the app's search: brute force
over every pair (distances from differences, in blocks), and binary's bits.

Tolerances. A distance ‖PE(p) − PE(q)‖ computed from two rows of ``encode``
differs from the exact one by at most TIE = 4·√d·ε·(N/c_min + 1) for
sine/cosine columns (see tests/test_whole_range_verdicts.py); for tables
read as numbers (learned, binary, zero) by at most 4·√d·ε·max|value|.
Each search ties distances within 1e-9 of the largest ‖PE‖, so two pairs
that close may be listed in either order; comparisons of distances allow that.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from posenc_gui.model import EncodingParams, encode
from posenc_gui.model.analyses.closest import SWEEP_WORK, range_uniqueness
from posenc_gui.model.analyses.scorecard import UNIQUE_TOL, score_scheme

EPS = float(np.finfo(np.float64).eps)


def brute_closest(scheme: str, n: int, d: int, **params) -> tuple[int, int, float, float]:
    """``(p, q, distance, median step)`` over every pair of 0 … n−1: the earliest pair of the smallest distance
    (ties within 1e-9 of the largest norm count as equal).

    The Gram formula ‖a‖² + ‖b‖² − 2a·b picks the candidates (its error is far below 1e-8·max‖PE‖²);
    every pair within that margin of the smallest value is measured again from its difference.
    """
    pe = encode(scheme, np.arange(n, dtype=np.float64), d, **params)
    sq = np.einsum("ij,ij->i", pe, pe)
    scale2 = float(sq.max())
    slack = 1e-8 * scale2
    rows = 512
    below = np.tril(np.ones((rows, rows), dtype=bool))  # q ≤ p within the diagonal square
    lowest, kept = math.inf, []
    for start in range(0, n - 1, rows):
        stop = min(start + rows, n)
        block = sq[start:stop, None] + sq[None, start:] - 2.0 * (pe[start:stop] @ pe[start:].T)
        block[:, :stop - start][below[:stop - start, :stop - start]] = np.inf
        lowest = min(lowest, float(block.min()))
        r, c = np.nonzero(block <= lowest + slack)
        kept.append((r + start, c + start, block[r, c]))
    p_all, q_all, gram = (np.concatenate(part) for part in zip(*kept))
    near = gram <= lowest + slack
    exact = np.linalg.norm(pe[p_all[near]] - pe[q_all[near]], axis=1)
    candidates = [(float(x), int(p), int(q)) for x, p, q in zip(exact, p_all[near], q_all[near])]
    distance = min(candidates)[0]
    tie = 1e-9 * math.sqrt(scale2)
    p, q = min((p, q) for x, p, q in candidates if x <= distance + tie)
    steps = np.linalg.norm(pe[1:] - pe[:-1], axis=1)
    return p, q, distance, float(np.median(steps))


def brute_matrix(scheme: str, n: int, d: int, **params) -> np.ndarray:
    """‖PE(p) − PE(q)‖ for p < q of 0 … n−1 (others +inf), from differences (small n)."""
    pe = encode(scheme, np.arange(n, dtype=np.float64), d, **params)
    out = np.full((n, n), np.inf)
    for p in range(n - 1):
        out[p, p + 1:] = np.linalg.norm(pe[p + 1:] - pe[p], axis=1)
    return out


# --------------------------------------------------------------------------- #37.2: the Scorecard's cell


def test_binary_at_10000_positions_and_d12_repeats_every_4096_positions():
    # Bit k has period 2^(k+1): with 12 bits PE(p) = PE(p + 4096), so 0 … 9,999 is not unique (the
    # Scorecard said ✓ from positions 0 … 1,023).
    a, b = encode("binary", [0.0, 4096.0], 12)
    assert np.array_equal(a, b)
    verdict = score_scheme(EncodingParams("binary", 10_000, 12)).unique_verdict
    assert verdict.mark == "✗" and verdict.settled and verdict.witness == "PE(0) = PE(4,096)"


@pytest.mark.parametrize("bit_values", ["signed", "unsigned"])
def test_binary_below_2_to_the_d_is_proved_unique_over_the_whole_range(bit_values):
    n, d = 4096, 12  # every position below 2^12 has its own bits
    p, q, distance, step = brute_closest("binary", n, d, bit_values=bit_values)
    assert distance == (2.0 if bit_values == "signed" else 1.0)  # one bit apart, at the least
    score = score_scheme(EncodingParams("binary", n, d, {"bit_values": bit_values}))
    verdict = score.unique_verdict
    assert verdict.mark == "✓" and verdict.coverage.covers(0, n - 1)
    assert score.uniqueness.method == "closed form"
    assert score.closest_pair == (p, q) and score.min_distance == distance
    assert score.neighbour_step == pytest.approx(step, rel=1e-12)


def test_all_sine_at_10000_positions_and_d12_has_a_pair_under_a_tenth_of_a_step():
    # The Scorecard said ✓ from 0 … 1,023; the closest pair of 0 … 9,999 is (7211, 7212).
    n, d = 10_000, 12
    p, q, distance, step = brute_closest("all_sine", n, d)
    assert (p, q) == (7211, 7212) and distance / step < UNIQUE_TOL
    score = score_scheme(EncodingParams("all_sine", n, d))
    verdict = score.unique_verdict
    assert verdict.mark == "✗" and verdict.settled
    assert score.closest_pair == (p, q)
    tie = 4.0 * math.sqrt(d) * EPS * (n / 1.0 + 1.0)
    assert abs(score.min_distance - distance) <= tie
    assert score.neighbour_step == pytest.approx(step, rel=1e-9)


# --------------------------------------------------------------------------- #37.3: the panel's headline


def test_all_sine_closest_pair_of_20000_positions_is_found_past_the_leading_ones():
    # The panel showed (614, 1406) at 0.01075, the closest of 0 … 4,095, as that of 0 … 19,999.
    from posenc_gui.model.panels.panel_data import continue_uniqueness_data, uniqueness_data
    from posenc_gui.views.uniqueness import closest_pair_sentence

    n, d, base = 20_000, 4, 1.5
    p, q, distance, _ = brute_closest("all_sine", n, d, base=base)
    assert (p, q) == (3030, 17959)
    data = uniqueness_data(EncodingParams("all_sine", n, d, {"base": base}), 10, True)
    while data.found.pending:
        data = continue_uniqueness_data(data)
    assert data.found.whole_range and data.found.closest_pair[:2] == (p, q)
    tie = 4.0 * math.sqrt(d) * EPS * (n / 1.0 + 1.0)
    assert abs(data.found.closest_pair[2] - distance) <= tie
    sentence = closest_pair_sentence(data, rich=False)
    assert sentence.startswith("Closest pair: positions 3,030 and 17,959")
    assert "proved over pairs of positions 0…19,999" in sentence


def test_a_headline_past_the_budget_names_the_range_searched():
    from posenc_gui.model.panels.panel_data import uniqueness_data, view_positions
    from posenc_gui.views.uniqueness import closest_pair_sentence

    params = EncodingParams("all_sine", 1_048_576, 256)
    data = uniqueness_data(params, 10, True)
    assert not data.found.pending and not data.found.whole_range  # no search of 2^20 × 256 is even started
    m = view_positions(params)
    sentence = closest_pair_sentence(data, rich=False)
    assert sentence.startswith(f"Closest pair among 0…{m - 1:,} only (of 0…1,048,575):")
    assert sentence.endswith(f"proved over pairs of positions 0…{m - 1:,} only, of 0…1,048,575.")


# --------------------------------------------------------------------------- seeded random cases

SCHEMES = [
    ("all_sine", {}), ("all_sine", {"base": 1.5}), ("sine", {}), ("binary", {}), ("binary", {"bit_values": "unsigned"}),
    ("learned", {}), ("nope", {}), ("sinusoidal", {}), ("harmonic", {}), ("four_vector", {}), ("sincos_pair", {}),
    ("naive", {}),
]


def _random_cases(count: int, seed: int = 37):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        scheme, options = SCHEMES[rng.integers(len(SCHEMES))]
        n = int(rng.integers(40, 700))
        d = int(rng.integers(2, 17))
        if scheme in ("sinusoidal",) and d % 2 == 0:
            d += 1  # an unpaired sine: not offsets alone
        # the search's budget: none at all, enough for the whole range's steps only, or the default
        sweep = (1, 2 * n * d, SWEEP_WORK)[rng.integers(3)]
        yield scheme, n, d, options, bool(rng.integers(2)), int(rng.integers(1, 6)), sweep


@pytest.mark.parametrize(("scheme", "n", "d", "options", "distinct", "top", "sweep"), list(_random_cases(40)))
def test_no_verdict_contradicts_brute_force_over_the_range_it_names(scheme, n, d, options, distinct, top, sweep):
    # Budgets far below n²·d: the answers come from the offsets, the closed form, the sweep or the
    # leading positions, never from all pairs of 0 … n−1.
    params = EncodingParams(scheme, n, d, options)
    kwargs = params.scheme_kwargs()
    brute = brute_matrix(scheme, n, d, **kwargs)
    pe = encode(scheme, np.arange(n, dtype=np.float64), d, **kwargs)
    scale = float(np.max(np.linalg.norm(pe, axis=1)))
    tie = 1e-9 * scale + 4.0 * math.sqrt(d) * EPS * (n + 1.0) * max(scale, 1.0)
    found = range_uniqueness(scheme, n, d, top=top, distinct_offsets=distinct, pair_work=16 * d, sweep_work=sweep,
                             **kwargs)
    m = found.pairs_range
    assert found.pair_coverage().covers(0, m - 1) and not found.pending
    # the closest pair and the listed distances are those of every pair of 0 … m−1
    within = brute[:m, :m]
    p, q, distance = found.closest_pair
    assert abs(distance - within.min()) <= tie and abs(brute[int(p), int(q)] - distance) <= tie
    listed = np.array([x for _, _, x in found.near_repeats])
    if distinct:
        by_offset = np.sort([np.diagonal(within, k).min() for k in range(1, m)])
        truth = by_offset[:listed.size]
    else:
        truth = np.sort(within[np.isfinite(within)])[:listed.size]
    np.testing.assert_allclose(listed, truth, rtol=0, atol=tie)
    if found.method != "closed form":  # the closed form lists the closest distance's pairs only
        assert listed.size == min(top, truth.size if not distinct else m - 1, found.top)
    # the verdict, against the truth over 0 … n−1
    score = replace(score_scheme(EncodingParams(scheme, 4, d, options)), uniqueness=found)
    verdict = score.unique_verdict
    steps = np.diagonal(brute, 1)
    true_ratio = 0.0 if brute.min() == 0 else brute.min() / np.median(steps)
    if abs(true_ratio - UNIQUE_TOL) <= 1e-6:
        return  # on the threshold itself rounding decides: nothing to compare
    if verdict.settled and verdict.holds:
        assert verdict.coverage.covers(0, n - 1) and true_ratio > UNIQUE_TOL
    elif verdict.settled:
        assert true_ratio < UNIQUE_TOL
    else:  # nothing claimed past the range examined, and the cell says so
        assert not verdict.coverage.covers(0, n - 1)
        assert f"0…{score.unique_positions - 1:,}" in verdict.cell("unique", "repeats")


def test_an_unsettled_uniqueness_is_neither_a_pass_nor_a_fail_in_the_export():
    # all-sine at d = 512: the distances depend on the position and neither every pair of 0 … 4,999 nor the
    # sweep fits the Scorecard's budget, so only the leading positions are compared
    from posenc_gui.model.analyses.scorecard import scorecard

    card = scorecard(EncodingParams("all_sine", 5000, 512), schemes=["all_sine", "sinusoidal"])
    rows = {row["scheme"]: row for row in card.table()}
    all_sine, sinusoidal = rows["all_sine"], rows["sinusoidal"]
    m = all_sine["unique_positions"]
    assert m < 5000 and all_sine["unique"] is None
    assert all_sine["unique_verdict"]["mark"] == "–" and not all_sine["unique_verdict"]["settled"]
    assert all_sine["unique_verdict"]["coverage"]["last"] == m - 1
    assert all_sine["unique_coverage"] == f"proved over pairs of positions 0…{m - 1:,} only, of 0…4,999"
    # sinusoidal's offsets cover the whole range: settled, and the coverage says so
    assert sinusoidal["unique"] is True and sinusoidal["unique_verdict"]["settled"]
    assert sinusoidal["unique_verdict"]["coverage"]["last"] == 4999


@pytest.mark.parametrize(("n", "d"), [(2048, 2048), (4096, 2048)])
def test_the_panel_on_a_zero_table_stays_in_bounded_memory(n, d):
    # Issue #36 item 5: NoPE took 8.6 GB at 2048 × 2048 and over 5 GB at 4096 × 2048. Every pair ties at 0.
    import tracemalloc

    from posenc_gui.model.panels.panel_data import uniqueness_data

    tracemalloc.start()
    try:
        data = uniqueness_data(EncodingParams("nope", n, d), 10, False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 2**20, f"{peak / 2**20:.0f} MB"
    assert data.found.near_repeats == tuple((0.0, float(q), 0.0) for q in range(1, 11))  # the earliest pairs
