"""RoPE precision: the model dtype's cos and sin against float64, with values worked out by hand; the Precision panel."""

from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest

from helpers_panels import show_panel
from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.model.core.params import EncodingParams
from posenc_gui.model.rope import rope_frequencies
from posenc_gui.model.rope.precision import (
    MAX_BINS, MAX_EVALUATED, model_inv_freq, model_position_ids, rope_precision_data,
)
from posenc_gui.model.schemes.rope import hf_config
from posenc_gui.views.rope_precision import RopePrecisionPanel
from waiting import TIMEOUT_MS

#: One float32 rounding, relative: the unit roundoff 2^−24.
F32 = 2.0**-24
LLAMA_31 = {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
SCALING = {"partial_rotary_factor": 1.0, "factor": 8.0, "original_max_position_embeddings": 8192,
           "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 0.0, "truncate": True,
           "low_freq_factor": 1.0, "high_freq_factor": 4.0}


def rope(seq_len: int, d_model: int, **options) -> EncodingParams:
    return EncodingParams.validated(scheme="rope", seq_len=seq_len, d_model=d_model, options=options)


# ----------------------------------------------------------------------------------- position ids


def test_bfloat16_position_ids_hold_integers_to_256_then_round_to_even():
    # bfloat16 has 8 significant bits: in [256, 512) the spacing is 2. 257 lies halfway between 256
    # (significand 1.0000000, even) and 258 (1.0000001, odd): ties to even give 256; 259 lies halfway
    # between 258 (odd) and 260 (1.0000010, even): 260.
    ids = model_position_ids(np.array([255, 256, 257, 258, 259]), "bfloat16", "model")
    np.testing.assert_array_equal(ids, [255, 256, 256, 258, 260])
    # Made in float32 (Hugging Face's position_ids.float()), the same positions stay exact.
    np.testing.assert_array_equal(model_position_ids(np.array([257, 259]), "bfloat16", "float32"), [257, 259])


def test_float16_position_ids_collide_above_2048_and_overflow_from_65520():
    # 11 significant bits: 2049 is halfway between 2048 (even) and 2050 → 2048; 2051 between 2050 (odd)
    # and 2052 (even) → 2052. The largest float16 is 65504 (spacing 32 there); 65519 is nearer to it,
    # 65520 is halfway to 65536 = 2^16, whose significand would be even: it rounds to infinity.
    ids = model_position_ids(np.array([2047, 2048, 2049, 2051, 65504, 65519, 65520]), "float16", "model")
    np.testing.assert_array_equal(ids, [2047, 2048, 2048, 2052, 65504, 65504, np.inf])


def test_float32_position_ids_collide_above_2_to_the_24():
    # 24 significant bits: 2^24 + 1 is halfway between 2^24 and 2^24 + 2 → 2^24 (even); 2^24 + 3 → 2^24 + 4.
    ids = model_position_ids(np.array([2**24, 2**24 + 1, 2**24 + 3]), "float32", "float32")
    np.testing.assert_array_equal(ids, [2**24, 2**24, 2**24 + 4])


# ----------------------------------------------------------------------------------- frequencies


def test_default_inv_freq_is_the_float32_chain():
    # d = 4, base 10000: exponents 0/4 and 2/4 = 0.5 (exact in float32); 10000^0.5 = 100 exactly;
    # 1/1 = 1 and 1/100 rounded once to float32.
    inv_freq, attention_factor = model_inv_freq(hf_config(4, rope_theta=10000.0, partial_rotary_factor=1.0,
                                                          rope_type="default"))
    assert inv_freq.dtype == np.float32
    np.testing.assert_array_equal(inv_freq, np.array([1.0, np.float32(1.0) / np.float32(100.0)], np.float32))
    assert attention_factor == 1.0


def test_the_float32_exponent_makes_the_inv_freq_differ_from_the_exact_one_rounded():
    # d = 6: the exponent 2/6 is float32(1/3) = 11184811/2^25 = 0.33333334327, so pair 1's power is
    # 10000^0.33333334327 = 21.54434887 instead of 10000^(1/3) = 21.54434690 (1.9e-6 apart, about one
    # float32 ULP of 2^−19 there); θ_1 = 1/21.54434887 = 0.0464158841, one rounding away, while the exact
    # 10000^(−1/3) rounds to another float32.
    inv_freq, _ = model_inv_freq(hf_config(6, rope_theta=10000.0, partial_rotary_factor=1.0, rope_type="default"))
    assert inv_freq[1] == pytest.approx(0.0464158841, rel=F32)
    assert inv_freq[1] != np.float32(10000.0 ** (-1 / 3))


def test_linear_inv_freq_divides_in_float32():
    # HF's inv_freq / factor: 1/4 and float32(0.01)/4 (a division by a power of two is exact).
    inv_freq, _ = model_inv_freq(hf_config(4, **{**SCALING, "rope_theta": 10000.0, "rope_type": "linear",
                                                 "factor": 4.0}))
    np.testing.assert_array_equal(inv_freq, np.array([0.25, np.float32(0.01) / np.float32(4.0)], np.float32))


def test_llama3_medium_pair_is_smoothed():
    # d = 4, base 10^6: θ = 1 and 10^6^(−1/2) = 0.001. Wavelengths 2π (high: < 8192/4 = 2048, kept) and
    # 2π·1000 = 6283.19, between 2048 and 8192/1: medium. smooth = (8192/6283.185 − 1)/(4 − 1)
    # = (1.3037973 − 1)/3 = 0.1012658; θ' = (1 − s)·0.001/8 + s·0.001 = 0.001·(0.1123418 + 0.1012658)
    # = 2.1360754e-4. HF's float32 chain (about six roundings of 2^−24 each) stays within 8·2^−24.
    inv_freq, _ = model_inv_freq(hf_config(4, **{**SCALING, "rope_theta": 1e6, "rope_type": "llama3"}))
    assert inv_freq[0] == 1.0
    assert inv_freq[1] == pytest.approx(2.1360754e-4, rel=8 * F32)


def test_llama3_factors_hugging_face_warns_about_are_computed_in_float32_too():
    # L0 8192, low = high = 4: L0/low = L0/high = 2048; of θ = 1, 0.1, 0.01, 0.001 (wavelengths 6.3 … 6283) only
    # the last is past it: divided by 8, the others kept, none smoothed (HF's division by 0 is never used)
    config = hf_config(8, rope_type="llama3", **{**SCALING, "low_freq_factor": 4.0, "high_freq_factor": 4.0},
                       rope_theta=10000.0)
    inv_freq, _ = model_inv_freq(config)
    np.testing.assert_allclose(inv_freq, [1.0, 0.1, 0.01, 0.001 / 8], rtol=4 * F32)


@pytest.mark.parametrize("rope_type", ["default", "linear", "ntk", "dynamic", "yarn", "llama3"])
def test_float32_inv_freq_is_within_float32_rounding_of_the_exact_one(rope_type):
    # Each scaling type's float32 chain has at most about six operations, each rounding by ≤ 2^−24 relative
    # (pow correctly rounded): within 8·2^−24 of the float64 frequencies, and not equal to them all.
    config = hf_config(128, **{**SCALING, "rope_theta": 500000.0, "rope_type": rope_type})
    inv_freq, _ = model_inv_freq(config, 100_000)
    exact, _ = rope_frequencies(config, 100_000)
    np.testing.assert_allclose(inv_freq.astype(np.float64), exact, rtol=8 * F32, atol=0)
    assert np.any(inv_freq.astype(np.float64) != exact)


# ----------------------------------------------------------------------------------- errors


def test_float16_error_at_position_1_worked_by_hand():
    # d_model 2: one pair, θ = 1. Position 1: cos 1 = 0.5403023, sin 1 = 0.8414710. float16 spacing in
    # [0.5, 1) is 2^−11: cos → round(1106.539)/2048 = 1107/2048 = 0.5405273; sin → round(1723.329)/2048
    # = 1723/2048 = 0.8413086. Error √((0.5405273 − 0.5403023)² + (0.8413086 − 0.8414710)²) = 2.77512e-4.
    # Position 0: cos 0 = 1, sin 0 = 0 are exact.
    data = rope_precision_data(rope(2, 2), "float16")
    assert data.error[0, 0] == 0.0
    assert data.error[1, 0] == pytest.approx(math.hypot(1107 / 2048 - math.cos(1), 1723 / 2048 - math.sin(1)),
                                             abs=1e-12)
    assert data.error[1, 0] == pytest.approx(2.77512e-4, abs=1e-9)


def test_bfloat16_error_at_position_1_worked_by_hand():
    # bfloat16 spacing in [0.5, 1) is 2^−8: cos → round(138.316)/256 = 0.5390625, sin → round(215.418)/256
    # = 0.8398438; error √(0.0012398² + 0.0016272²) = 2.04573e-3, below the unit roundoff 2^−8 = 0.0039.
    data = rope_precision_data(rope(2, 2), "bfloat16")
    assert data.error[1, 0] == pytest.approx(2.04573e-3, abs=1e-8)
    assert data.max_error == data.error[1, 0] and data.max_error_position == 1 and data.max_error_pair == 0
    assert data.unit_roundoff == 2.0**-8


def test_bfloat16_position_ids_turn_position_257_into_256():
    # With ids in bfloat16, 257 becomes 256: pair 0 (θ = 1) turns by 256 rad instead of 257, an error of
    # |e^{256i} − e^{257i}| = 2·sin(1/2) = 0.958851, give or take the cast (≤ 2^−8) and float32's cos
    # (about 2^−24). Position 256 itself is exact but for the cast.
    data = rope_precision_data(rope(258, 2), "bfloat16", "model")
    assert data.error[257, 0] == pytest.approx(2 * math.sin(0.5), abs=2.0**-8)
    assert data.error[256, 0] <= 2.0**-8 + 1e-6
    # Made in float32, the same position errs only by the cast.
    assert rope_precision_data(rope(258, 2), "bfloat16").error[257, 0] <= 2.0**-8 + 1e-6


def test_float32_error_at_the_default_size_is_within_the_rounding_bound():
    # 128 positions, θ_i ≤ 1: the float32 angle p·θ_i (≤ 127) errs by at most half its ULP (2^−18 below 128)
    # plus p·θ_i·|δθ_i| with |δθ_i| ≤ 1.5·2^−24 (reciprocal of a correctly rounded power), ≤ 1.14e-5; cos and
    # sin add about 2^−24 each: in all ≤ 3.8e-6 + 1.14e-5 + 1.2e-7 < 2e-5.
    data = rope_precision_data(rope(128, 512), "float32")
    assert 0.0 < data.max_error < 2e-5
    assert data.unit_roundoff == F32


def test_float16_position_ids_overflow_to_infinite_error():
    data = rope_precision_data(rope(65600, 2), "float16", "model")
    assert data.overflow_position == 65520
    assert math.isinf(data.max_error)
    assert np.all(np.isinf(data.error[data.bin_edges[:-1] >= 65520]))
    assert np.all(np.isfinite(data.error[data.bin_edges[1:] <= 65520]))


# ----------------------------------------------------------------------------------- indistinguishable


@pytest.mark.parametrize(("dtype", "positions", "seq_len", "expected"), [
    ("bfloat16", "model", 258, 256),     # ids 256 and 257 are both 256 (ties to even)
    ("bfloat16", "model", 257, None),    # 256 needs 257 to compare with: p ≤ N − 2 = 255
    ("float16", "model", 4096, 2048),    # ids 2048 and 2049 are both 2048
    ("bfloat16", "float32", 4096, None),  # float32 ids are exact; θ_0 = 1 rad between neighbours
    ("float16", "float32", 4096, None),
])
def test_first_indistinguishable_position(dtype, positions, seq_len, expected):
    data = rope_precision_data(rope(seq_len, 2), dtype, positions)
    assert data.first_indistinguishable == expected


def test_slow_pairs_become_indistinguishable_in_bfloat16_with_exact_position_ids():
    # linear ×16384: θ = 2^−14 exactly, angle p·2^−14 exact in float32. For 128 ≤ p < 256 the angle is in
    # [2^−7, 2^−6), where bfloat16's spacing is 2^−14: sin x = x − x³/6 (x³/6 < 6.4e-7, far below half the
    # spacing) rounds to x, so the sines differ; below 128 the spacing is finer still. In [2^−6, 2^−5)
    # the spacing is 2^−13: sin(257·2^−14) is just below the midpoint of 256·2^−14 and 258·2^−14 and
    # rounds to 256·2^−14 = sin(256·2^−14) in bfloat16; both cosines (1 − 2^−13 and below) round to 1.
    data = rope_precision_data(rope(300, 2, rope_type="linear", factor=16384.0), "bfloat16")
    assert data.inv_freq[0] == np.float32(2.0**-14)
    assert data.first_indistinguishable == 256
    assert data.position_collision == 2**24


def test_position_collision_is_two_to_the_significand_bits():
    assert rope_precision_data(rope(8, 2), "bfloat16", "model").position_collision == 256
    assert rope_precision_data(rope(8, 2), "float16", "model").position_collision == 2048
    assert rope_precision_data(rope(8, 2), "float16").position_collision == 2**24


# ----------------------------------------------------------------------------------- long N


def test_a_million_positions_are_binned_with_bounded_work():
    # 1,048,576 positions in 512 bins of 2,048; 2^22 / (512 · 64 pairs) = 128 evaluated per bin, with the
    # odd stride 15 (2048 // 128 = 16, made odd).
    data = rope_precision_data(rope(1_048_576, 128, **LLAMA_31), "bfloat16")
    assert data.error.shape == (MAX_BINS, 64)
    assert data.bin_edges[1] == 2048 and data.bin_edges[-1] == 1_048_576
    np.testing.assert_array_equal(data.evaluated, MAX_EVALUATED // (MAX_BINS * 64))
    assert data.first_indistinguishable is None
    # Near 10^6 the float32 angle of the fast pairs has a ULP of 2^−4 (angles in [2^19, 2^20)): its rounding
    # swamps the cast (2^−8), and the largest error is in the last quarter of the positions.
    assert data.max_error > 2.0**-8
    assert data.max_error_position > 3 * 1_048_576 // 4
    assert data.max_error_per_bin[-1] > 2 * data.max_error_per_bin[0]


def test_an_infinite_error_is_placed_where_the_ids_overflow_even_between_samples():
    # 32 pairs: 2^22 / (512 · 32) = 256 of each bin's 2,048 positions, stride 2048 // 256 = 8 made odd, 7.
    # Bin 31 (63,488…65,535) evaluates 63,488 + 7k, k < 256, up to 65,273: not 65,520, where float16 ids
    # become infinite (and every later id); the first evaluated infinite error is at 65,536, bin 32's first.
    data = rope_precision_data(rope(1_048_576, 64), "float16", "model")
    assert not data.coverage.proved and data.coverage.samples == 512 * 256
    assert data.coverage.extent() == "over 131,072 sampled positions in 0…1,048,575"
    assert math.isinf(data.max_error) and (data.max_error_position, data.max_error_pair) == (65520, 0)
    assert data.indistinguishable_coverage.proved and data.indistinguishable_coverage.last == 1_048_574


def test_every_position_is_evaluated_when_the_work_allows():
    data = rope_precision_data(rope(1000, 64), "float16")
    np.testing.assert_array_equal(data.evaluated, np.diff(data.bin_edges))
    assert data.evaluated.sum() == 1000


# ----------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"dtype": "float64"}, "dtype must be one of float32, bfloat16, float16"),
    ({"dtype": ml_dtypes.bfloat16}, "dtype must be one of"),
    ({"positions": "int64"}, "positions must be one of float32, model"),
])
def test_bad_choices_are_named(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        rope_precision_data(rope(8, 2), **kwargs)


def test_other_schemes_are_refused():
    with pytest.raises(ValueError, match="rope scheme"):
        rope_precision_data(EncodingParams.validated(scheme="sinusoidal"), "bfloat16")


# ----------------------------------------------------------------------------------- the panel


def make_panel(state, compute, qtbot, **params):
    assert state.update(scheme="rope", **params) is None
    state.flush()
    panel = show_panel(qtbot, RopePrecisionPanel(state, compute), (1000, 700))
    qtbot.waitUntil(lambda: panel.data is not None)
    return panel


def settle(panel, compute, qtbot, **check):
    assert compute.wait_idle()
    qtbot.waitUntil(lambda: all(getattr(panel.data, key) == value for key, value in check.items()))


def test_panel_follows_its_dtype_and_position_ids(state, compute, qtbot):
    panel = make_panel(state, compute, qtbot, seq_len=300, d_model=2)
    assert panel.data.dtype == "bfloat16" and panel.data.positions == "float32"
    text = panel.summary_label.text()
    assert "<b>bfloat16</b>" in text and "every position can be told from the next up to N − 1 = 299" in text
    assert "</b> over positions 0…299, at position" in text  # every position evaluated
    assert panel.curve_plot.getAxis("left").labelText == "largest error over the pairs"
    assert not panel.indistinguishable_line.isVisible()

    panel.apply_options(position_ids="model")
    settle(panel, compute, qtbot, positions="model")
    assert "cannot be told from the next is <b>256</b>" in panel.summary_label.text()
    assert "position ids 256 and 257 round to the same bfloat16 value" in panel.summary_label.text()
    assert panel.indistinguishable_line.isVisible() and panel.indistinguishable_line.value() == 256
    assert "bfloat16, position ids in bfloat16" in panel.matrix.plot.titleLabel.text
    # the map: pairs as rows, one column per position (300 ≤ 512 bins)
    assert panel.matrix.values.shape == (1, 300)

    panel.dtype_box.setCurrentIndex(panel.dtype_box.findData("float16"))
    settle(panel, compute, qtbot, dtype="float16")
    assert "<b>float16</b>" in panel.summary_label.text()
    assert "every position can be told" in panel.summary_label.text()  # float16 ids are exact to 2048
    assert panel.current_options() == {"dtype": "float16", "position_ids": "model"}


def test_panel_follows_the_parameters(state, compute, qtbot):
    panel = make_panel(state, compute, qtbot, seq_len=100, d_model=8)
    assert panel.matrix.values.shape == (4, 100)
    assert state.update(seq_len=1_048_576, d_model=128, **LLAMA_31) is None
    state.flush()
    settle(panel, compute, qtbot)
    qtbot.waitUntil(lambda: panel.data.params.seq_len == 1_048_576)
    assert panel.matrix.values.shape == (64, MAX_BINS)
    assert "llama3" in panel.matrix.plot.titleLabel.text
    assert "largest error over 128 evaluated of its 2,048 positions" in panel.summary_label.text()
    # 128 of each bin's 2,048 positions: the largest is that of 512 · 128 = 65,536 sampled positions, and says so
    assert "</b> over 65,536 sampled positions in 0…1,048,575, at position" in panel.summary_label.text()
    assert "sampled positions" in panel.curve_plot.getAxis("left").labelText


def test_bad_panel_options_are_named_and_keep_the_view(state, compute, qtbot):
    panel = make_panel(state, compute, qtbot, seq_len=50, d_model=4)
    shown = panel.data
    with pytest.raises(ValueError, match="dtype must be one of float32, bfloat16, float16"):
        panel.apply_options(dtype="float64")
    with pytest.raises(ValueError, match="position_ids must be one of float32, model"):
        panel.apply_options(position_ids="int")
    assert compute.wait_idle()
    assert panel.data is shown and panel.dtype == "bfloat16" and panel.position_ids == "float32"


def test_panel_does_not_apply_to_other_schemes(state, compute, qtbot):
    panel = make_panel(state, compute, qtbot, seq_len=50, d_model=4)
    assert state.update(scheme="sinusoidal") is None
    state.flush()
    message = panel.unavailable_message()
    assert "RoPE precision panel does not apply here" in message and "rotation of the queries and keys" in message
    assert not panel.unavailable_label.isHidden()


def test_export_data_holds_the_error_and_the_summary(state, compute, qtbot):
    panel = make_panel(state, compute, qtbot, seq_len=300, d_model=2)
    panel.apply_options(dtype="float16", position_ids="model")
    settle(panel, compute, qtbot, dtype="float16", positions="model")
    exported = panel.export_data()
    np.testing.assert_array_equal(exported["arrays"]["error"], panel.data.error)
    assert exported["arrays"]["bins"].shape == (300, 4)
    meta = exported["meta"]
    assert meta["dtype"] == "float16" and meta["position_ids"] == "float16"
    assert meta["position_collision"] == 2048 and meta["first_indistinguishable_position"] is None
    assert meta["sampled"] is False


def test_export_says_an_infinite_largest_error_is_infinite_and_what_it_covers(state, compute, qtbot):
    panel = make_panel(state, compute, qtbot, seq_len=70000, d_model=2)
    panel.apply_options(dtype="float16", position_ids="model")
    settle(panel, compute, qtbot, dtype="float16", positions="model")
    meta = json.loads(export.export_bytes(panel, "json"))["meta"]
    # JSON has no infinity: max_error is null, and max_error_infinite says why, at the first infinite id
    assert meta["max_error"] is None and meta["max_error_infinite"] is True
    assert (meta["max_error_position"], meta["overflow_position"]) == (65520, 65520)
    coverage = meta["max_error_coverage"]
    assert (coverage["method"], coverage["first"], coverage["last"], coverage["proved"]) == ("exact", 0, 69999, True)
    assert meta["first_indistinguishable_coverage"]["last"] == 69998


def test_export_command_takes_the_dtype(qapp, tmp_path, capsys):
    path = tmp_path / "precision.json"
    status = export_cli.main(["precision", "--scheme", "rope", "--seq-len", "300", "--d-model", "2",
                              "--dtype", "bfloat16", "--position-ids", "model", "-o", str(path)])
    assert status == 0, capsys.readouterr().err
    document = json.loads(path.read_text())
    assert document["meta"]["dtype"] == "bfloat16"
    assert document["meta"]["first_indistinguishable_position"] == 256


def test_the_map_and_the_curve_below_it_show_the_same_positions_on_the_same_pixels(state, compute, qtbot):
    panel = make_panel(state, compute, qtbot, seq_len=131_072, d_model=128)
    above, below = panel.matrix.plot.getViewBox(), panel.curve_plot.getViewBox()

    def edges(view_box):
        rect = view_box.sceneBoundingRect()
        return rect.left(), rect.right()

    def aligned() -> bool:  # the same left and right edges on screen, within a pixel
        return all(abs(a - b) <= 1.0 for a, b in zip(edges(above), edges(below)))

    qtbot.waitUntil(aligned, timeout=TIMEOUT_MS)
    (low_above, high_above), (low_below, high_below) = above.viewRange()[0], below.viewRange()[0]
    per_pixel = (high_above - low_above) / above.width()
    assert abs(low_above - low_below) <= 2 * per_pixel and abs(high_above - high_below) <= 2 * per_pixel
    assert high_below < 131_072 + 2 * per_pixel  # not 140 k: the curve ends where the map does
