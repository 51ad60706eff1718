"""T_k by its 2×2 blocks at every d_model, least-squares rows only where no rotation exists."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from posenc_gui.model import EncodingParams, encode, limits
from posenc_gui.model.analyses.linear_relation import (
    FIT_CUTOFFS,
    VALIDATION_SLACK,
    fit_columns,
    linear_relation,
    positions_between,
)
from posenc_gui.model.panels.panel_data import VIEW_ELEMENTS, linear_relation_data
from tolerances import angle_atol, assert_close

BASE = 10000.0


def by_hand(d_model: int, k: float, layout: str = "interleaved") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sin channels, cos channels, blocks) of the sinusoidal T_k, from the formula."""
    pairs = (d_model + 1) // 2 if layout == "halves" else d_model // 2
    i = np.arange(d_model // 2)  # pairs that have a cosine
    sin_ch = 2 * i if layout == "interleaved" else i
    cos_ch = 2 * i + 1 if layout == "interleaved" else i + pairs
    angle = k / BASE ** (2 * i / d_model)
    c, s = np.cos(angle), np.sin(angle)
    return sin_ch, cos_ch, np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
@pytest.mark.parametrize("d_model", [2, 7, 8192])
def test_sinusoidal_blocks_at_every_d_model_without_a_dense_matrix(d_model, layout):
    positions = np.linspace(0, limits.MAX_SEQ_LEN - 1, 33).round()
    tracemalloc.start()
    relation = linear_relation("sinusoidal", positions, d_model, 3, layout=layout, fit_width=min(d_model, 64))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20  # T_k at d = 8192 as a dense matrix would take 512 MiB
    sin_ch, cos_ch, blocks = by_hand(d_model, 3, layout)
    np.testing.assert_array_equal(relation.sin_channels, sin_ch)
    np.testing.assert_array_equal(relation.cos_channels, cos_ch)
    angle = 3 / BASE ** (2 * np.arange(d_model // 2) / d_model)
    assert_close(relation.blocks, blocks, angle_atol(angle)[:, None, None])
    assert relation.exact == (d_model % 2 == 0)
    assert relation.within_rounding  # the rotations hold to rounding at positions up to 10⁶


def test_a_window_of_the_matrix_is_the_blocks_placed_in_t_k():
    relation = linear_relation("sinusoidal", np.arange(20.0), 10, 2, layout="halves")
    dense = np.zeros((10, 10))
    for (s, c), block in zip(zip(relation.sin_channels, relation.cos_channels), relation.blocks):
        dense[np.ix_([s, c], [s, c])] = block
    np.testing.assert_array_equal(relation.matrix(), dense)
    rows, cols = [7, 2, 5], [0, 5, 9, 2]
    np.testing.assert_array_equal(relation.matrix(rows, cols), dense[np.ix_(rows, cols)])
    x = encode("sinusoidal", [3.5, 17.0], 10, layout="halves")
    np.testing.assert_allclose(relation.apply(x), x @ dense.T, rtol=0, atol=1e-15)
    assert relation.entry(0, 5) == (dense[0, 5], relation.block_error[0])
    assert relation.entry(0, 1) == (0.0, 0.0)


def test_odd_d_rotates_the_pairs_and_fits_only_the_unpaired_sine():
    relation = linear_relation("sinusoidal", np.arange(128.0), 9, 1)
    assert not relation.exact and relation.method == "rotation + least squares"
    assert relation.fit.dims.tolist() == [8] and relation.pairs == 4
    assert relation.note.startswith("Exact on the 8 paired dimensions; the unpaired sine (dimension 8) has no exact T_k")
    dense = relation.matrix()
    _, _, blocks = by_hand(9, 1)
    for i, block in enumerate(blocks):
        np.testing.assert_array_equal(dense[2 * i:2 * i + 2, 2 * i:2 * i + 2], block)
    np.testing.assert_array_equal(dense[8], relation.fit.coefficients[0])  # its row combines every column
    assert relation.within_rounding and relation.rotation_residual < relation.max_residual


def test_all_sine_fit_is_the_minimum_norm_one_at_its_cut_off():
    # lstsq without a cut-off drew this T_k with entries near ±10¹², rounding noise of directions
    # the data do not determine.
    positions = np.arange(128.0)
    relation = linear_relation("all_sine", positions, 64, 1)
    fit = relation.fit
    assert fit.cutoff in FIT_CUTOFFS and np.abs(fit.coefficients).max() < 1e3
    x, y = encode("all_sine", fit.positions, 64), encode("all_sine", fit.positions + 1, 64)
    by_pinv = (np.linalg.pinv(x, rcond=fit.cutoff) @ y).T
    np.testing.assert_allclose(fit.coefficients, by_pinv, rtol=0, atol=1e3 * fit.error.max() + 1e-9)
    assert fit.rank.max() < 64  # not unique
    # fitted between the integers, cut-off chosen on other positions, residual on the integers
    assert np.all(fit.positions != np.round(fit.positions))
    assert np.intersect1d(fit.positions, fit.validation_positions).size == 0
    assert relation.positions.tolist() == positions.tolist()
    residual = encode("all_sine", positions + 1, 64) - encode("all_sine", positions, 64) @ relation.matrix().T
    assert relation.max_residual == pytest.approx(np.abs(residual).max(), rel=1e-9)


def test_the_cut_off_is_the_largest_within_the_slack_of_the_best_on_validation():
    positions = np.arange(1000.0)
    relation = linear_relation("all_sine", positions, 32, 3)
    fit = relation.fit
    x, y = encode("all_sine", fit.positions, 32), encode("all_sine", fit.positions + 3, 32)
    xv, yv = encode("all_sine", fit.validation_positions, 32), encode("all_sine", fit.validation_positions + 3, 32)
    misses = {c: np.linalg.norm(yv - xv @ (np.linalg.pinv(x, rcond=c) @ y)) for c in FIT_CUTOFFS}
    best = min(misses.values())
    assert fit.cutoff == max(c for c, miss in misses.items() if miss <= VALIDATION_SLACK * best)


def test_a_narrow_fit_uses_the_columns_nearest_in_frequency():
    divisors = BASE ** (np.arange(20) / 20)  # all-sine: frequency falls with the index
    np.testing.assert_array_equal(fit_columns(divisors, np.array([0, 9, 19]), 5),
                                  [[0, 1, 2, 3, 4], [7, 8, 9, 10, 11], [15, 16, 17, 18, 19]])
    relation = linear_relation("all_sine", np.arange(64.0), 20, 1, fit_width=5)
    assert relation.fit.columns.shape == (20, 5)
    dense = relation.matrix()
    assert np.count_nonzero(dense[9, :7]) == 0 and np.count_nonzero(dense[9, 12:]) == 0
    np.testing.assert_allclose(relation.apply(encode("all_sine", [5.5], 20)),
                               encode("all_sine", [5.5], 20) @ dense.T, rtol=1e-12, atol=1e-12)


def test_residual_says_max_relative_where_and_the_rounding_bound():
    # "Residual ≈ 1e-15" was the relative residual; the largest is 1.3e-14 at 128 × 512 and 1.2e-10 at 10⁶.
    for seq_len, d_model, largest in ((128, 512, 1e-12), (limits.MAX_SEQ_LEN, 8192, 1e-8)):
        data = linear_relation_data(EncodingParams(seq_len=seq_len, d_model=d_model), 1)
        rel = data.relation
        p = data.positions
        residual = np.abs(encode("sinusoidal", p + 1, d_model) - rel.apply(encode("sinusoidal", p, d_model)))
        assert rel.max_residual == residual.max()
        at = np.unravel_index(np.argmax(residual), residual.shape)
        assert (rel.worst_position, rel.worst_dimension) == (p[at[0]], at[1])
        assert rel.relative_residual == pytest.approx(
            np.linalg.norm(residual) / np.linalg.norm(encode("sinusoidal", p + 1, d_model)), rel=1e-12)
        assert rel.within_rounding and rel.max_residual <= rel.rounding_bound < largest
        assert p[-1] == seq_len - 1 and p.size * d_model <= VIEW_ELEMENTS + d_model
    assert rel.max_residual > 1e-12 and rel.relative_residual < 1e-10  # at 10⁶ the largest is far from 1e-15


def test_positions_between_are_never_integers():
    at = positions_between(0.0, 127.0, 1032)
    assert at.size == 1032 and np.all(at != np.round(at)) and 0 < at.min() and at.max() < 127
    assert positions_between(0.0, 0.0, 4).max() < 1  # one position: its unit interval
    with pytest.raises(ValueError, match="last"):
        positions_between(5.0, 1.0, 3)


def test_linear_relation_data_fits_every_size_the_app_allows():
    for params in (EncodingParams(scheme="all_sine", seq_len=limits.MAX_SEQ_LEN, d_model=8192),
                   EncodingParams(seq_len=1, d_model=3), EncodingParams(scheme="naive", seq_len=1, d_model=2)):
        rel = linear_relation_data(params, 1).relation
        assert rel.d_model == params.d_model and math.isfinite(rel.max_residual)
        assert np.all(rel.fit.positions != np.round(rel.fit.positions))
