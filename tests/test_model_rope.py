"""RoPE model layer: frequencies of every Hugging Face scaling type against values worked out by hand, the pairings,
the rotation's relative-position property, the decay bound, and the refusal of bad configs.

Most cases use head_dim 8 and rope_theta 10000, so θ_i = 10000^(−2i/8) = 10^(−i) = 1, 0.1, 0.01, 0.001 exactly and
every expected value can be written out from the published formula.
"""

import cmath
import math

import numpy as np
import pytest

from posenc_gui.model import (rope_angles, rope_bands, rope_config, rope_decay_bound, rope_frequencies, rope_pairs,
                              rope_rotate)
from tolerances import DIVISION_ULPS, EPS, FUNCTION_ULPS, angle_atol, assert_close, sum_atol

THETA = np.array([1.0, 0.1, 0.01, 0.001])  # 10^(−i), i = 0 … 3
BASE = {"head_dim": 8, "rope_theta": 10000.0, "max_position_embeddings": 2048}

#: Relative error allowed between a frequency and its hand value, in ULP. On any path here (the model's and the
#: hand derivation's together) there are at most 3 library calls (pow, log: FUNCTION_ULPS each) and 8 correctly
#: rounded operations (DIVISION_ULPS each); relative errors add to first order, and the steps that amplify them —
#: an exponent d/(d − 2) ≤ 4/3 applied to a rounded base, YaRN's ramp dividing by high − low ≥ 1.5 — at most
#: quadruple them. A wrong formula moves a frequency by 10⁻⁴ of itself or more, ~10¹¹ of these ULP.
FREQ_ULPS = 4 * (3 * FUNCTION_ULPS + 8 * DIVISION_ULPS)


def freq_atol(expected):
    return FREQ_ULPS * EPS * np.abs(np.asarray(expected, dtype=np.float64))


def assert_frequencies(config, expected_inv_freq, expected_attention=1.0, seq_len=None):
    inv_freq, attention_factor = rope_frequencies(config, seq_len=seq_len)
    assert inv_freq.dtype == np.float64
    assert_close(inv_freq, expected_inv_freq, freq_atol(expected_inv_freq), "inv_freq")
    assert_close(attention_factor, expected_attention, freq_atol(expected_attention), "attention_factor")


def scaled(rope_scaling, **top_level):
    """BASE with an older-form ``rope_scaling`` and top-level overrides."""
    return {**BASE, **top_level, "rope_scaling": rope_scaling}


# -- every scaling type, by hand ----------------------------------------------------------------------------


def test_default_frequencies_are_the_base_to_minus_2i_over_d():
    assert_frequencies(BASE, THETA)
    assert_frequencies(scaled(None), THETA)
    assert_frequencies(scaled({"rope_type": "default"}), THETA)


def test_linear_divides_every_frequency_by_factor():
    # position interpolation: θ_i / 4
    assert_frequencies(scaled({"rope_type": "linear", "factor": 4.0}), [0.25, 0.025, 0.0025, 0.00025])


def test_ntk_raises_the_base_by_factor_to_d_over_d_minus_2():
    # base' = 10000 · 8^(8/6) = 10000 · 16 = 160000 = 20⁴, so θ'_i = 160000^(−i/4) = 20^(−i)
    assert_frequencies(scaled({"rope_type": "ntk", "factor": 8.0}), [1.0, 0.05, 0.0025, 0.000125])


@pytest.mark.parametrize("seq_len", [None, 1, 1000, 2048])
def test_dynamic_up_to_max_position_embeddings_is_the_default(seq_len):
    # L = max(seq_len, 2048) = 2048: base' = 10000 · (2·2048/2048 − (2 − 1))^(4/3) = 10000
    assert_frequencies(scaled({"rope_type": "dynamic", "factor": 2.0}), THETA, seq_len=seq_len)


def test_dynamic_beyond_max_position_embeddings_raises_the_base_for_seq_len():
    # L = 4096: base' = 10000 · (2·4096/2048 − 1)^(8/6) = 10000 · 3^(4/3), θ'_i = 10^(−i) · 3^(−i/3)
    expected = [1.0, 0.1 * 3 ** (-1 / 3), 0.01 * 3 ** (-2 / 3), 0.001 / 3]
    assert_frequencies(scaled({"rope_type": "dynamic", "factor": 2.0}), expected, seq_len=4096)


# YaRN with d = 8, base 10⁴: find_correction_dim(r) = 8·ln(L0/(2πr)) / (2·ln 10⁴) = log10(L0/(2πr)).
# L0 = 4096: low = floor(log10(4096/(64π))) = floor(1.309) = 1, high = ceil(log10(4096/(2π))) = ceil(2.814) = 3,
# ramp_j = clip((j − 1)/2, 0, 1) = 0, 0, ½, 1; θ'_j = θ_j·(1 − ramp) + (θ_j/4)·ramp.
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
YARN_INV_FREQ = [1.0, 0.1, 0.01 * (0.5 + 0.5 / 4), 0.001 / 4]  # 1, 0.1, 0.00625, 0.00025
YARN_MSCALE = 0.1 * math.log(4) + 1  # get_mscale(4) = 1.1386…


def test_yarn_keeps_fast_pairs_ramps_the_middle_and_interpolates_slow_pairs():
    assert_frequencies(scaled(YARN, max_position_embeddings=16384), YARN_INV_FREQ, YARN_MSCALE)


def test_yarn_factor_defaults_to_max_over_original_positions():
    no_factor = {key: value for key, value in YARN.items() if key != "factor"}
    assert_frequencies(scaled(no_factor, max_position_embeddings=16384), YARN_INV_FREQ, YARN_MSCALE)  # 16384 / 4096


def test_yarn_without_truncate_ramps_between_the_unrounded_correction_dims():
    # low = log10(64/π) = 1.309…, high = log10(4096/(2π)), high − low = log10(32):
    # ramp_2 = (2 − log10(64/π)) / log10(32) = 0.4591…, ramp_3 = (3 − 1.309)/1.505 > 1 → 1
    ramp_2 = (2 - math.log10(64 / math.pi)) / math.log10(32)
    expected = [1.0, 0.1, 0.01 * (1 - ramp_2 + ramp_2 / 4), 0.001 / 4]
    assert_frequencies(scaled({**YARN, "truncate": False}, max_position_embeddings=16384), expected, YARN_MSCALE)


def test_yarn_beta_fast_moves_the_start_of_the_ramp_and_zero_means_the_default():
    # beta_fast 2: low = floor(log10(4096/(4π))) = floor(2.513) = 2, high = 3: ramp = 0, 0, 0, 1
    assert_frequencies(scaled({**YARN, "beta_fast": 2.0}), [1.0, 0.1, 0.01, 0.00025], YARN_MSCALE)
    # HF reads get("beta_fast") or 32: a 0 is the default
    assert_frequencies(scaled({**YARN, "beta_fast": 0, "beta_slow": 0}), YARN_INV_FREQ, YARN_MSCALE)


def test_yarn_correction_range_is_clamped_to_d_minus_1_not_the_pair_count():
    # L0 = 100000: low = floor(log10(100000/(64π))) = floor(2.697) = 2, high = ceil(log10(100000/(2π))) = ceil(4.2) = 5
    # stays 5 (min with d − 1 = 7): ramp_3 = (3 − 2)/3 = ⅓, θ'_3 = 0.001·(⅔ + ⅓/4) = 0.00075
    yarn = {**YARN, "original_max_position_embeddings": 100000}
    assert_frequencies(scaled(yarn), [1.0, 0.1, 0.01, 0.00075], YARN_MSCALE)


def test_yarn_equal_correction_bounds_get_hf_s_0_001_offset():
    # L0 = 4: low = max(floor(log10(4/(64π))), 0) = max(−2, 0) = 0, high = ceil(log10(4/(2π))) = ceil(−0.196) = 0;
    # low == high, so high = 0.001 and ramp = clip(j / 0.001) = 0, 1, 1, 1 (no division by zero)
    yarn = {**YARN, "original_max_position_embeddings": 4}
    assert_frequencies(scaled(yarn), [1.0, 0.025, 0.0025, 0.00025], YARN_MSCALE)


def test_yarn_attention_factor_from_mscale_and_mscale_all_dim():
    # both set: get_mscale(4, 1) / get_mscale(4, 0.5) = (0.1·ln 4 + 1) / (0.05·ln 4 + 1) = 1.0648…
    yarn = {**YARN, "mscale": 1.0, "mscale_all_dim": 0.5}
    assert_frequencies(scaled(yarn), YARN_INV_FREQ, (0.1 * math.log(4) + 1) / (0.05 * math.log(4) + 1))
    # equal mscales (DeepSeek-V3's 1.0 / 1.0): the ratio is 1
    assert_frequencies(scaled({**YARN, "mscale": 1.0, "mscale_all_dim": 1.0}), YARN_INV_FREQ, 1.0)
    # HF tests "if mscale and mscale_all_dim": a 0 falls back to get_mscale(factor)
    assert_frequencies(scaled({**YARN, "mscale": 0.707, "mscale_all_dim": 0}), YARN_INV_FREQ, YARN_MSCALE)


def test_yarn_attention_factor_given_wins_and_factor_one_gives_one():
    assert_frequencies(scaled({**YARN, "attention_factor": 0.8, "mscale": 1.0, "mscale_all_dim": 0.5}), YARN_INV_FREQ, 0.8)
    # get_mscale(s) = 1 for s ≤ 1, and θ/1 = θ whatever the ramp
    assert_frequencies(scaled({**YARN, "factor": 1.0}), THETA, 1.0)


# llama3 with L0 = 2048, factor 8, low_freq_factor 1, high_freq_factor 4: wavelengths 2π/θ = 6.28, 62.8, 628, 6283
# against L0/4 = 512 and L0/1 = 2048: pairs 0, 1 high (kept), pair 2 medium, pair 3 low (θ/8).
# Pair 2: smooth = (L0/wavelength − 1)/(4 − 1) = (2048·0.01/(2π) − 1)/3 = 0.7532…, θ' = (1 − smooth)·θ/8 + smooth·θ.
LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 2048,
}
LLAMA3_SMOOTH = (2048 * 0.01 / (2 * math.pi) - 1) / 3
LLAMA3_INV_FREQ = [1.0, 0.1, (1 - LLAMA3_SMOOTH) * 0.01 / 8 + LLAMA3_SMOOTH * 0.01, 0.001 / 8]


def test_llama3_keeps_high_smooths_medium_and_divides_low_frequencies():
    assert_frequencies(scaled(LLAMA3, max_position_embeddings=131072), LLAMA3_INV_FREQ)


def test_llama3_original_context_defaults_to_max_position_embeddings():
    no_original = {key: value for key, value in LLAMA3.items() if key != "original_max_position_embeddings"}
    assert_frequencies(scaled(no_original, max_position_embeddings=2048), LLAMA3_INV_FREQ)


# LongRoPE (Phi-3 style: original_max_position_embeddings at the top level): θ'_i = θ_i / ext_i, ext = short_factor
# up to L0 = 4096 and long_factor beyond; factor = 131072/4096 = 32, attention = sqrt(1 + ln 32/ln 4096) =
# sqrt(1 + 5/12) = sqrt(17/12).
SHORT, LONG = [1.0, 1.5, 2.0, 4.0], [1.0, 2.0, 4.0, 8.0]
LONGROPE = {"type": "longrope", "short_factor": SHORT, "long_factor": LONG}
PHI3 = scaled(LONGROPE, max_position_embeddings=131072, original_max_position_embeddings=4096)


@pytest.mark.parametrize("seq_len", [None, 1, 4096])
def test_longrope_uses_short_factors_up_to_the_original_length(seq_len):
    assert_frequencies(PHI3, THETA / SHORT, math.sqrt(17 / 12), seq_len=seq_len)


@pytest.mark.parametrize("seq_len", [4097, 131072, 10**6])
def test_longrope_uses_long_factors_beyond_the_original_length(seq_len):
    assert_frequencies(PHI3, THETA / LONG, math.sqrt(17 / 12), seq_len=seq_len)


def test_longrope_attention_factor_from_a_given_factor_or_given_outright():
    inside = scaled({**LONGROPE, "original_max_position_embeddings": 4096, "factor": 8.0})
    assert_frequencies(inside, THETA / SHORT, math.sqrt(1 + 3 / 12))  # ln 8 / ln 4096 = 3/12
    assert_frequencies(scaled({**LONGROPE, "factor": 1.0}), THETA / SHORT, 1.0)  # factor ≤ 1
    assert_frequencies(scaled({**LONGROPE, "factor": 8.0, "attention_factor": 1.5}), THETA / SHORT, 1.5)


# -- what Hugging Face accepts with a warning, computed as it computes it ---------------------------------------


def test_an_odd_rotary_dimension_has_ceil_d_over_2_frequencies_over_d():
    # int(64 × 0.3) = 19: HF's arange(0, 19, 2) / 19 = 0, 2/19, …, 18/19, ten frequencies turning 20 channels
    config = {"head_dim": 64, "partial_rotary_factor": 0.3}
    rope = rope_config(config)
    assert rope.rotary_dim == 19 and "= 19 is odd" in rope.warnings[0] and "turn 20 channels" in rope.warnings[0]
    assert_frequencies(config, [10000.0 ** (-2 * i / 19) for i in range(10)])
    # LongRoPE divides by one factor per frequency (HF's validation asks for 19 // 2 = 9 and warns)
    odd = {"head_dim": 6, "partial_rotary_factor": 0.5, "rope_scaling": {**LONGROPE, "short_factor": [1.0, 2.0],
           "long_factor": [1.0, 2.0], "factor": 1.0, "original_max_position_embeddings": 4096}}
    assert_frequencies(odd, [1.0, 10000.0 ** (-2 / 3) / 2.0])  # rotary_dim 3: frequencies 1 and 10000^(−2/3)
    assert any("must have length rotary_dim // 2 = 1" in warning for warning in rope_config(odd).warnings)
    # NTK-aware with rotary_dim 3 (head 4 × 0.75): base' = 10000 · 2^(3/(3 − 2)) = 80000, θ' = 1, 80000^(−2/3)
    ntk = {"head_dim": 4, "partial_rotary_factor": 0.75, "rope_scaling": {"rope_type": "ntk", "factor": 2.0}}
    assert_frequencies(ntk, [1.0, 80000.0 ** (-2 / 3)])


def test_yarn_with_beta_fast_below_beta_slow_runs_its_ramp_backwards_with_a_warning():
    # d 8, base 10000, L0 4096: fcd(r) = 8·ln(4096/(2πr)) / (2 ln 10000) = 0.434294·ln(651.9/r).
    # beta_fast 1: low = floor(fcd(1)) = floor(2.814) = 2; beta_slow 1000: high = ceil(fcd(1000)) = ceil(−0.186) = 0.
    # ramp_j = clip((j − 2)/(0 − 2), 0, 1) = 1, 0.5, 0, 0: the fast pairs are interpolated, the slow ones kept.
    config = scaled({**YARN, "beta_fast": 1.0, "beta_slow": 1000.0})
    assert_frequencies(config, [1.0 / 4, 0.1 * (0.5 + 0.5 / 4), 0.01, 0.001], YARN_MSCALE)
    (warning,) = rope_config(config).warnings
    assert "beta_fast (1) must be greater than beta_slow (1000)" in warning
    assert rope_config(scaled({**YARN, "beta_fast": 2.0, "beta_slow": 2.0})).warnings == ()  # HF warns only for <


def test_llama3_with_high_freq_factor_not_above_low_divides_the_long_wavelengths_and_keeps_the_others():
    # L0 2048, low 4, high 1: wavelengths 2π/θ = 6.28, 62.8, 628, 6283 against L0/low = 512 and L0/high = 2048:
    # over 512 divided by 8 (pairs 2, 3), the rest kept; no pair is smoothed (none is ≥ 2048 and ≤ 512)
    config = scaled({**LLAMA3, "low_freq_factor": 4.0, "high_freq_factor": 1.0}, max_position_embeddings=131072)
    assert_frequencies(config, [1.0, 0.1, 0.01 / 8, 0.001 / 8])
    assert "high_freq_factor (1) must be greater than low_freq_factor (4)" in rope_config(config).warnings[0]
    # equal factors: L0/low = L0/high = 2048; only pair 3 (6283) is past it
    assert_frequencies(scaled({**LLAMA3, "high_freq_factor": 1.0}), [1.0, 0.1, 0.01, 0.001 / 8])


@pytest.mark.parametrize("key", ["type", "rope_type"])
def test_su_is_longropes_legacy_name(key):
    legacy = {**PHI3, "rope_scaling": {key: "su", "short_factor": SHORT, "long_factor": LONG}}
    assert_frequencies(legacy, THETA / SHORT, math.sqrt(17 / 12))
    assert_frequencies(legacy, THETA / LONG, math.sqrt(17 / 12), seq_len=4097)
    rope = rope_config(legacy)
    assert rope.rope_type == "longrope" and rope.warnings == (f'rope_scaling.{key} "su" is LongRoPE\'s legacy name '
                                                              "(Hugging Face's Phi-3 config renames it longrope)",)
    both = {**PHI3, "rope_scaling": {"type": "su", "rope_type": "longrope", "short_factor": SHORT, "long_factor": LONG}}
    assert rope_config(both).rope_type == "longrope"  # the two names agree


# -- config forms -------------------------------------------------------------------------------------------


def test_rope_parameters_with_rope_theta_inside_equals_rope_scaling_with_it_at_the_top():
    newer = {"head_dim": 8, "max_position_embeddings": 16384, "rope_parameters": {**YARN, "rope_theta": 10000.0}}
    assert_frequencies(newer, YARN_INV_FREQ, YARN_MSCALE)
    # the inner rope_theta is the one read: 160000^(−i/4) = 20^(−i)
    assert_frequencies({"head_dim": 8, "rope_parameters": {"rope_theta": 160000.0}}, 20.0 ** -np.arange(4))


def test_legacy_type_is_rope_type():
    assert_frequencies(scaled({"type": "linear", "factor": 4.0}), THETA / 4)


def test_missing_rope_theta_is_hf_s_default_theta():
    assert_frequencies({"head_dim": 8}, THETA)


def test_head_dim_takes_precedence_over_hidden_size_over_heads():
    assert_frequencies({**BASE, "hidden_size": 64, "num_attention_heads": 4}, THETA)  # head_dim 8, not 16
    inv_freq, _ = rope_frequencies({"hidden_size": 64, "num_attention_heads": 4, "head_dim": None})
    assert_close(inv_freq, 10000.0 ** -(np.arange(8) / 8), freq_atol(10000.0 ** -(np.arange(8) / 8)))
    # floor division, as HF: 74 // 4 = 18 channels, 9 pairs
    assert rope_config({"hidden_size": 74, "num_attention_heads": 4}).rotary_dim == 18


@pytest.mark.parametrize("where", ["top level", "rope_parameters"])
def test_partial_rotary_factor_is_read_at_the_top_or_in_rope_parameters(where):
    config = {"head_dim": 16, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}
    if where == "top level":
        config["partial_rotary_factor"] = 0.5
    else:
        config["rope_parameters"]["partial_rotary_factor"] = 0.5
    assert_frequencies(config, THETA)  # rotary_dim = int(16 · 0.5) = 8
    assert rope_config(config).head_dim == 16


def test_partial_rotary_dimension_is_truncated_as_hf_does():
    # 96 · 0.3 = 28.799999999999997 in floating point, int() gives 28
    assert rope_config({"head_dim": 96, "partial_rotary_factor": 0.3}).rotary_dim == 28


def test_original_max_position_embeddings_top_level_or_inside_and_equal_values_in_both():
    inside = scaled({**LONGROPE, "original_max_position_embeddings": 4096}, max_position_embeddings=131072)
    assert_frequencies(inside, THETA / LONG, math.sqrt(17 / 12), seq_len=5000)
    both = {**PHI3, "rope_scaling": {**LONGROPE, "original_max_position_embeddings": 4096}}
    assert_frequencies(both, THETA / LONG, math.sqrt(17 / 12), seq_len=5000)


def test_rope_config_reports_the_resolved_settings():
    rope = rope_config(PHI3)
    assert (rope.rope_type, rope.rotary_dim, rope.max_position_embeddings) == ("longrope", 8, 131072)
    assert rope.original_max_position_embeddings == 4096
    assert rope.scaling["factor"] == 32.0 and rope.scaling["long_factor"] == tuple(LONG)
    yarn = rope_config(scaled(YARN))
    assert (yarn.scaling["beta_fast"], yarn.scaling["beta_slow"], yarn.scaling["truncate"]) == (32.0, 1.0, True)
    assert rope_config(BASE).original_max_position_embeddings is None


# -- bands ----------------------------------------------------------------------------------------------------


def test_bands_of_yarn_and_llama3():
    yarn = rope_bands(scaled(YARN))
    assert yarn.band.tolist() == ["extrapolated", "extrapolated", "ramped", "interpolated"]
    assert_close(yarn.interpolation, [0.0, 0.0, 0.5, 1.0], 0.0)
    llama3 = rope_bands(scaled(LLAMA3))
    assert llama3.band.tolist() == ["high", "high", "medium", "low"]
    assert_close(llama3.interpolation, [0.0, 0.0, 1 - LLAMA3_SMOOTH, 1.0], freq_atol(1.0))


def test_bands_of_the_single_band_types():
    assert rope_bands(BASE).band.tolist() == ["unscaled"] * 4
    assert_close(rope_bands(BASE).interpolation, np.zeros(4), 0.0)
    assert_close(rope_bands(scaled({"rope_type": "linear", "factor": 2.0})).interpolation, np.ones(4), 0.0)
    assert rope_bands(scaled({"rope_type": "dynamic", "factor": 2.0})).band.tolist() == ["rebased"] * 4
    assert np.isnan(rope_bands(PHI3).interpolation).all()


# -- refusing bad configs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config, message",
    [
        ("config.json", "config must be a mapping"),
        (scaled({"rope_type": "sue"}),
         "rope_type must be one of default, linear, ntk, dynamic, yarn, llama3, longrope"),
        (scaled({"rope_type": 3}), "rope_type must be one of"),
        (scaled({"rope_type": "linear", "type": "yarn", "factor": 2.0}), "must agree"),
        (scaled([1, 2]), "rope_scaling must be a mapping"),
        ({**BASE, "rope_parameters": {"full_attention": {"rope_type": "default"}}}, "one mapping per layer type"),
        ({**scaled({"rope_type": "linear", "factor": 2.0}), "rope_parameters": {"rope_type": "default"}}, "not both"),
        (scaled({"rope_type": "linear"}), "rope_scaling.factor is required"),
        (scaled({"rope_type": "linear", "factor": float("nan")}), "rope_scaling.factor must be in"),
        (scaled({"rope_type": "linear", "factor": float("inf")}), "rope_scaling.factor must be in"),
        (scaled({"rope_type": "linear", "factor": -2.0}), "rope_scaling.factor must be in"),
        (scaled({"rope_type": "linear", "factor": "4"}), "rope_scaling.factor must be a real number"),
        (scaled({"rope_type": "linear", "factor": True}), "rope_scaling.factor must be a real number"),
        ({**BASE, "rope_theta": 1.0}, "rope_theta must be > 1"),
        ({**BASE, "rope_theta": float("nan")}, "rope_theta must be"),
        ({**BASE, "rope_parameters": {"rope_theta": 500000.0}}, "rope_theta is 10000 at the top level but 500000"),
        ({"hidden_size": 64}, "head_dim, or hidden_size and num_attention_heads, must be given"),
        ({"head_dim": 7},
         "= 7 must be ≥ 1, and 2·ceil(7/2) = 8 channels (a pair per frequency) must fit in head_dim 7"),
        ({"head_dim": 8.5}, "head_dim must be an integer"),
        ({"head_dim": 8, "partial_rotary_factor": 1.5}, "partial_rotary_factor must be > 0 and ≤ 1"),
        ({"head_dim": 8, "partial_rotary_factor": 0.1}, "int(8 × 0.1) = 0 must be ≥ 1"),
        ({"head_dim": 2, "rope_scaling": {"rope_type": "ntk", "factor": 2.0}}, "rotary_dim must be ≥ 3"),
        ({"head_dim": 6, "partial_rotary_factor": 0.5, "rope_scaling": YARN},
         "Hugging Face's YaRN ramp has rotary_dim // 2 = 1 values for its 2 frequencies"),
        (scaled({**LLAMA3, "low_freq_factor": 2048 / (2 * math.pi), "high_freq_factor": 2048 / (2 * math.pi)}),
         "divides by their difference 0"),
        ({"head_dim": 8, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, "max_position_embeddings is required"),
        ({**BASE, "max_position_embeddings": 0}, "max_position_embeddings must be in 1"),
        ({"head_dim": 8, "rope_scaling": {"rope_type": "yarn"}}, "max_position_embeddings (or original"),
        (scaled({**YARN, "truncate": "no"}), "rope_scaling.truncate must be true or false"),
        (scaled({**YARN, "beta_slow": -1.0}), "rope_scaling.beta_slow must be in"),
        (scaled({**YARN, "beta_fast": ""}), "rope_scaling.beta_fast must be a real number"),
        (scaled({**YARN, "mscale": -1.0}), "rope_scaling.mscale must be in 0"),
        (scaled({**YARN, "attention_factor": 0.0}), "rope_scaling.attention_factor must be in"),
        (scaled({**LLAMA3, "low_freq_factor": None}), "rope_scaling.low_freq_factor is required"),
        ({**PHI3, "rope_scaling": {**LONGROPE, "short_factor": SHORT[:3]}}, "short_factor must hold 4 numbers"),
        ({**PHI3, "rope_scaling": {**LONGROPE, "long_factor": LONG * 1000}}, "long_factor: at most 4 numbers"),
        ({**PHI3, "rope_scaling": {**LONGROPE, "long_factor": [1, 2, float("nan"), 4]}}, "long_factor must be"),
        ({**PHI3, "rope_scaling": {**LONGROPE, "long_factor": [1, 2, 0, 4]}}, "long_factor must be in"),
        ({**PHI3, "rope_scaling": {**LONGROPE, "short_factor": "1 1 1 1"}}, "short_factor must be a list of 4"),
        ({**PHI3, "rope_scaling": {**LONGROPE, "original_max_position_embeddings": 2048}}, "must agree"),
        (scaled(LONGROPE, max_position_embeddings=2, original_max_position_embeddings=1), "must be ≥ 2"),
    ],
)
def test_bad_configs_are_refused_naming_the_key(config, message):
    with pytest.raises(ValueError) as raised:
        rope_frequencies(config)
    assert message in str(raised.value)


@pytest.mark.parametrize("seq_len", [0, -1, 2.5, "4096", float("nan")])
def test_bad_seq_len_is_refused(seq_len):
    with pytest.raises(ValueError, match="seq_len must be"):
        rope_frequencies(scaled({"rope_type": "dynamic", "factor": 2.0}), seq_len=seq_len)


# -- the rotation -------------------------------------------------------------------------------------------


def test_rope_pairs_of_each_pairing():
    first, second = rope_pairs(6, "interleaved")
    assert (first.tolist(), second.tolist()) == ([0, 2, 4], [1, 3, 5])
    first, second = rope_pairs(6, "halves")
    assert (first.tolist(), second.tolist()) == ([0, 1, 2], [3, 4, 5])


def test_rope_angles_are_position_times_frequency():
    angles = rope_angles([0, 1, 2.5], [1.0, 0.1])
    assert_close(angles, [[0, 0], [1, 0.1], [2.5, 0.25]], angle_atol([[0, 0], [1, 0.1], [2.5, 0.25]]))


@pytest.mark.parametrize(
    "pairing, expected",
    [
        # pairs (0, 1), (2, 3): (1, 0) by π/2 → (0, 1); (0, 1) by π/3 → (−sin π/3, cos π/3)
        ("interleaved", [0.0, 1.0, -math.sqrt(3) / 2, 0.5]),
        # pairs (0, 2), (1, 3): (x0, x2) = (1, 0) → (0, 1); (x1, x3) = (0, 1) → (−√3/2, ½)
        ("halves", [0.0, -math.sqrt(3) / 2, 1.0, 0.5]),
    ],
)
def test_rotation_turns_each_pair_counterclockwise_by_position_times_theta(pairing, expected):
    rotated = rope_rotate([[1.0, 0.0, 0.0, 1.0]], [1], [math.pi / 2, math.pi / 3], pairing)
    assert_close(rotated, [expected], angle_atol(math.pi / 2))
    assert_close(rope_rotate([[1.0, 0.0, 0.0, 1.0]], [0], [math.pi / 2, math.pi / 3], pairing), [[1, 0, 0, 1]], 0.0)


def interleaved_to_halves(rotary_dim):
    """The channel order that turns an interleaved head into a halves head: (x0, x2, x4, … | x1, x3, x5, …)."""
    return np.concatenate([np.arange(0, rotary_dim, 2), np.arange(1, rotary_dim, 2)])


def test_the_pairings_are_one_model_with_permuted_channels():
    rng = np.random.default_rng(26)
    inv_freq, _ = rope_frequencies({"head_dim": 64, "rope_theta": 10000.0})
    x, positions = rng.standard_normal((50, 64)), rng.integers(0, 10_000, 50)
    permutation = interleaved_to_halves(64)
    halves_of_permuted = rope_rotate(x[:, permutation], positions, inv_freq, "halves")
    unpermuted = np.empty_like(halves_of_permuted)
    unpermuted[:, permutation] = halves_of_permuted
    # the same products of the same numbers, only stored in other channels: equal to the last bit
    np.testing.assert_array_equal(rope_rotate(x, positions, inv_freq, "interleaved"), unpermuted)
    # so the interleaved model's logits are the halves model's with the q/k weight rows permuted
    q_interleaved = rope_rotate(x, positions, inv_freq, "interleaved")
    q_halves = rope_rotate(x[:, permutation], positions, inv_freq, "halves")
    magnitude = np.abs(q_interleaved) @ np.abs(q_interleaved).T
    assert_close(q_halves @ q_halves.T, q_interleaved @ q_interleaved.T, sum_atol(64, magnitude))
    # and the two pairings differ as they stand (the permutation is not the identity)
    assert not np.allclose(rope_rotate(x, positions, inv_freq, "halves"), q_interleaved)


def logit_atol(q_norm, k_norm, max_angle, n_terms):
    """Bound on |q̃·k̃ − q·k| for rotated vectors, one evaluation (derivation in the comments).

    Each entry of the computed rotation is within e_R = FUNCTION_ULPS·eps + |angle|·eps/2 of the exact one (cos or
    sin, plus the rounded product position·θ); a rotated channel x_a·c − x_b·s adds two roundings, so it is off by
    (e_R + eps)·(|x_a| + |x_b|) ≤ (e_R + eps)·√2·‖pair‖. Summed against the other vector's channels over both
    vectors, Cauchy–Schwarz gives 2·2·√2·(e_R + eps)·‖q‖‖k‖ ≤ 6·(e_R + eps)·‖q‖‖k‖; the dot product's own rounding
    is sum_atol. Channels that pass through are exact.
    """
    rotation = FUNCTION_ULPS * EPS + max_angle * EPS / 2
    return 6 * (rotation + EPS) * q_norm * k_norm + sum_atol(n_terms, q_norm * k_norm)


@pytest.mark.parametrize("pairing", ["interleaved", "halves"])
def test_query_key_logit_depends_only_on_the_offset(pairing):
    rng = np.random.default_rng(2021)
    inv_freq, _ = rope_frequencies({"head_dim": 64, "rope_theta": 10000.0})
    head_dim, count = 80, 200  # 64 rotated channels, 16 passing through
    q, k = rng.standard_normal((count, head_dim)), rng.standard_normal((count, head_dim))
    m = rng.integers(0, 5_000, count)
    offset, shift = rng.integers(0, 5_000, count), rng.integers(0, 5_000, count)
    n = m + offset
    logits = np.einsum("ij,ij->i", rope_rotate(q, m, inv_freq, pairing), rope_rotate(k, n, inv_freq, pairing))
    shifted = np.einsum(
        "ij,ij->i", rope_rotate(q, m + shift, inv_freq, pairing), rope_rotate(k, n + shift, inv_freq, pairing)
    )
    # q·R(n − m)k: only the key is turned, by the offset
    relative = np.einsum("ij,ij->i", q, rope_rotate(k, offset, inv_freq, pairing))
    largest = float((n + shift).max() * inv_freq.max())  # the largest angle of either evaluation
    atol = 2 * logit_atol(np.linalg.norm(q, axis=1), np.linalg.norm(k, axis=1), largest, head_dim)
    assert_close(shifted, logits, atol, "shifting both positions")
    assert_close(relative, logits, atol, "rotating the key by the offset alone")


def test_partial_rotary_channels_pass_through_exactly_and_unscaled():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((20, 12))
    rotated = rope_rotate(x, np.arange(20) * 37, THETA, "halves", attention_factor=1.3)
    np.testing.assert_array_equal(rotated[:, 8:], x[:, 8:])
    assert not np.allclose(rotated[:, :8], x[:, :8])


def test_attention_factor_scales_the_rotated_channels_so_logits_scale_by_its_square():
    rng = np.random.default_rng(11)
    x, positions = rng.standard_normal((30, 8)), np.arange(30) * 101
    plain = rope_rotate(x, positions, THETA)
    scaled_rotation = rope_rotate(x, positions, THETA, attention_factor=1.5)
    # (c·a)·x_a − (s·a)·x_b against a·(c·x_a − s·x_b): three roundings on each side, of terms whose magnitudes
    # add up to at most a·(|x_a| + |x_b|) (x_b is channel a's partner: halves pairs (i, i + 4))
    magnitude = 1.5 * (np.abs(x) + np.abs(x[:, [4, 5, 6, 7, 0, 1, 2, 3]]))
    assert_close(scaled_rotation, 1.5 * plain, 3 * EPS * magnitude)
    logits = np.einsum("ij,ij->i", scaled_rotation, scaled_rotation[::-1])
    expected = 2.25 * np.einsum("ij,ij->i", plain, plain[::-1])
    # both factors of each product carry the error above, and each side sums 8 products
    products = np.einsum("ij,ij->i", magnitude, magnitude[::-1])
    assert_close(logits, expected, 2 * 3 * EPS * products + 2 * sum_atol(8, products))


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"pairing": "neox"}, "pairing must be one of interleaved, halves"),
        ({"x": [1.0, 0.0, 0.0, 1.0]}, "x must be a 2-D array"),
        ({"x": [[1.0, 0.0, float("nan"), 1.0]]}, "x must be"),
        ({"x": [[1.0, 0.0]]}, "x must have at least 2·len(inv_freq) = 4 columns"),
        ({"positions": [0, 1]}, "positions must hold one position per row of x (1)"),
        ({"positions": [-1]}, "positions must be in 0"),
        ({"inv_freq": []}, "inv_freq must hold at least one frequency"),
        ({"inv_freq": [1.0, -0.5]}, "inv_freq must be in 0"),
        ({"inv_freq": [1.0, float("inf")]}, "inv_freq must be"),
        ({"attention_factor": 0.0}, "attention_factor must be in"),
    ],
)
def test_bad_rotation_arguments_are_refused(arguments, message):
    call = {"x": [[1.0, 0.0, 0.0, 1.0]], "positions": [3], "inv_freq": [1.0, 0.1], "pairing": "halves", **arguments}
    attention_factor = call.pop("attention_factor", 1.0)
    with pytest.raises(ValueError) as raised:
        rope_rotate(**call, attention_factor=attention_factor)
    assert message in str(raised.value)


@pytest.mark.parametrize("rotary_dim, message", [(5, "rotary_dim must be even"), (0, "rotary_dim must be in 2")])
def test_bad_rotary_dim_is_refused(rotary_dim, message):
    with pytest.raises(ValueError, match=message):
        rope_pairs(rotary_dim)


# -- the decay bound ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("head_dim", [2, 8, 128])
def test_decay_bound_at_zero_is_half_of_pairs_plus_one(head_dim):
    # S_j = j at r = 0, so B(0) = (1/(d/2))·Σ_{j=1}^{d/2} j = (d/2 + 1)/2; cos 0 and sin 0 are within
    # FUNCTION_ULPS of 1 and 0, so |S_j| within j of those plus the partial sum's rounding
    inv_freq, _ = rope_frequencies({"head_dim": head_dim})
    half = head_dim // 2
    atol = half * FUNCTION_ULPS * EPS + sum_atol(half, half)
    assert_close(rope_decay_bound([0.0], inv_freq), [(half + 1) / 2], atol)


def test_decay_bound_of_two_pairs_in_closed_form():
    # d = 4, θ = (1, 0.01): B(r) = (|S_1| + |S_2|)/2 = (1 + |e^{ir} + e^{0.01ir}|)/2 = ½ + |cos(0.495·r)|
    offsets = np.array([0.0, 1.0, math.pi / 0.99, 10.0, 1234.5])
    expected = 0.5 + np.abs(np.cos(0.495 * offsets))
    assert_close(rope_decay_bound(offsets, [1.0, 0.01]), expected, 4 * angle_atol(offsets))


def brute_force_decay_bound(offset, inv_freq):
    """Eq. 37 written as loops: (1/(d/2))·Σ_{j=1}^{d/2} |Σ_{k=0}^{j−1} e^{i·r·θ_k}|."""
    half = len(inv_freq)
    return sum(abs(sum(cmath.exp(1j * offset * inv_freq[k]) for k in range(j))) for j in range(1, half + 1)) / half


def test_decay_bound_matches_the_brute_force_sum_decays_and_is_not_monotone():
    inv_freq, _ = rope_frequencies({"head_dim": 128})
    offsets = np.concatenate([np.arange(0, 300), [-17.0, 1000.5, 65_536.0]])
    bound = rope_decay_bound(offsets, inv_freq)
    expected = np.array([brute_force_decay_bound(r, inv_freq) for r in offsets])
    # each term within angle_atol, a partial sum of ≤ 64 of them within 64 of those plus its rounding
    assert_close(bound, expected, 64 * angle_atol(offsets) + sum_atol(64, 64.0))
    assert bound[1:300].max() < bound[0] and bound[299] < bound[0] / 2  # it decays with the offset
    assert np.any(np.diff(bound[:300]) > 0)  # but not monotonically
    assert_close(rope_decay_bound([-17.0], inv_freq), rope_decay_bound([17.0], inv_freq), 64 * angle_atol(17.0))


def test_decay_bound_is_summed_in_blocks_like_in_one_piece():
    # more offsets than one block holds: the blocked sum must equal the rows computed on their own
    inv_freq, _ = rope_frequencies({"head_dim": 128})
    offsets = np.arange(0, 9000, dtype=np.float64)
    expected = np.array([brute_force_decay_bound(r, inv_freq) for r in offsets[::997]])
    atol = 64 * angle_atol(offsets[::997]) + sum_atol(64, 64.0)
    assert_close(rope_decay_bound(offsets, inv_freq)[::997], expected, atol)


@pytest.mark.parametrize(
    "offsets, inv_freq, message",
    [
        ([float("nan")], [1.0], "offsets must be"),
        ([2e12], [1.0], "offsets must be in"),
        ([1.0], [], "inv_freq must hold at least one frequency"),
    ],
)
def test_bad_decay_bound_arguments_are_refused(offsets, inv_freq, message):
    with pytest.raises(ValueError, match=message):
        rope_decay_bound(offsets, inv_freq)
