"""xPos: the scheme, its positional logit against torchscale's code, and the Positional-logits panel showing it.

torchscale's ``XPOS`` (``torchscale/component/xpos_relative_position.py``) is
ported line by line below (:func:`torchscale_xpos`), so the model's closed
form is checked against what the reference code computes, centring included.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from tolerances import EPS, FUNCTION_ULPS, angle_atol, assert_close

from posenc_gui import export
from posenc_gui.model import OPTION_SPECS, SCHEMES, EncodingParams, encode, formula_term
from posenc_gui.model.bias import xpos_centered_positions, xpos_farthest, xpos_zeta
from posenc_gui.model.attention.logits import logit_profile_data, positional_logits
from posenc_gui.views.positional_logits import PositionalLogitsPanel
import helpers_panels
from helpers_panels import settle_params

# d = 8, γ = 0.4: ζ_i = (2i/8 + 0.4)/1.4 = (0.4, 0.65, 0.9, 1.15)/1.4 = 2/7, 13/28, 9/14, 23/28.
ZETA_D8 = [Fraction(2, 7), Fraction(13, 28), Fraction(9, 14), Fraction(23, 28)]


def torchscale_xpos(x: np.ndarray, offset: int = 0, downscale: bool = False, gamma: float = 0.4,
                    scale_base: float = 512.0, theta: float = 10000.0) -> np.ndarray:
    """torchscale's ``XPOS.forward(x, offset, downscale)`` for one head, in NumPy (float64), line by line.

    ``x`` is (length, head_dim): the rows are tokens ``offset … offset + length − 1``.
    torchscale fixes γ = 0.4 and the rotation base 10000; they are parameters here.
    """
    length, head_dim = x.shape
    scale_buffer = (np.arange(0, head_dim, 2) + gamma * head_dim) / ((1 + gamma) * head_dim)
    min_pos = -(length + offset) // 2
    max_pos = length + offset + min_pos
    scale = scale_buffer ** (np.arange(min_pos, max_pos, 1, dtype=np.float64) / scale_base)[:, None]
    # fixed_pos_embedding(scale)
    seq_len, dim = scale.shape
    inv_freq = 1.0 / (theta ** (np.arange(0, dim) / dim))
    sinusoid = np.einsum("i , j -> i j", np.arange(0, seq_len, dtype=np.float64), inv_freq)
    sin, cos = np.sin(sinusoid), np.cos(sinusoid)
    if scale.shape[0] > length:
        scale, sin, cos = scale[-length:], sin[-length:], cos[-length:]
    if downscale:
        scale = 1 / scale
    # apply_rotary_pos_emb: duplicate_interleave(t * scale), then x·cos + rotate_every_two(x)·sin
    sin, cos = (np.repeat(t * scale, 2, axis=1) for t in (sin, cos))
    rotated = np.stack((-x[:, 1::2], x[:, ::2]), axis=-1).reshape(x.shape)
    return x * cos + rotated * sin


def torchscale_logits(query: np.ndarray, key: np.ndarray, length: int, **options) -> np.ndarray:
    """q·k of every query and key position of one self-attention block, as torchscale's MultiheadAttention does:
    ``k = xpos(k, offset=0, downscale=True)``, ``q = xpos(q, offset=0)`` (no 1/√d here)."""
    queries = torchscale_xpos(np.tile(query, (length, 1)), **options)
    keys = torchscale_xpos(np.tile(key, (length, 1)), downscale=True, **options)
    return queries @ keys.T


def pair_terms(query: np.ndarray, key: np.ndarray) -> np.ndarray:
    """(|a| + |b|)(|c| + |d|) per interleaved pair: bounds each pair's cos and sin weights and their rotations."""
    return (np.abs(query[0::2]) + np.abs(query[1::2])) * (np.abs(key[0::2]) + np.abs(key[1::2]))


def xpos_logit_atol(query, key, rows, cols, zeta, inv_freq, scale_base, centre_span):
    """Tolerance between the closed form and torchscale's computation, per (row, column).

    Per pair, of size at most ζ_i^(r/B)·(|a|+|b|)(|c|+|d|): torchscale rotates at angles mθ_i and nθ_i, the
    closed form at rθ_i (sin/cos within :func:`angle_atol`); its two scales have exponents up to
    ``centre_span``/B, each within (FUNCTION_ULPS + 3|x| + |x ln ζ|/2 + 1) ULP (ζ within 3 ULP, which x
    multiplies, and x's own rounding), their quotient one more; the closed form's ζ^(r/B) the same with
    x = r/B. Then the d products and sums of each side: d·eps of the terms' sum.
    """
    distance = np.subtract.outer(rows, cols)[..., None]
    log_zeta = np.abs(np.log(zeta))
    exponent_ts = centre_span / scale_base
    ulps_ts = 2 * (FUNCTION_ULPS + 3 * exponent_ts + exponent_ts * log_zeta / 2 + 1) + 1
    exponent = np.abs(distance) / scale_base
    ulps_closed = FUNCTION_ULPS + 3 * exponent + exponent * log_zeta / 2 + 1
    farthest = np.maximum.outer(rows, cols)[..., None]
    angles = (2 * angle_atol(farthest * inv_freq, evaluations=1)
              + angle_atol(np.abs(distance) * inv_freq, evaluations=1))
    size = zeta ** (distance / scale_base) * pair_terms(query, key)
    d = query.size
    return np.sum(size * (angles + (ulps_ts + ulps_closed + d) * EPS), axis=-1)


def params(**values) -> EncodingParams:
    return EncodingParams.validated(**values)


# ------------------------------------------------------------------ ζ and the scheme


def test_zeta_for_d8_and_gamma_04_is_the_hand_worked_fractions():
    # (2i/d + γ)/(1 + γ): 2i/8 exact, + 0.4 (itself rounded) and / 1.4: within 3 ULP; the fractions' floats 1 more
    zeta = xpos_zeta(8, 0.4)
    wanted = np.array([float(z) for z in ZETA_D8])
    assert_close(zeta, wanted, 4 * EPS * wanted)
    # torchscale's own expression for its buffer, (arange(0, d, 2) + 0.4·d)/(1.4·d), agrees within the same
    assert_close((np.arange(0, 8, 2) + 0.4 * 8) / (1.4 * 8), wanted, 4 * EPS * wanted)
    # γ = 1, d = 4: (0 + 1)/2, (1/2 + 1)/2 = 1/2, 3/4, exact
    np.testing.assert_array_equal(xpos_zeta(4, 1.0), [0.5, 0.75])


def test_the_scheme_shares_ropes_base_and_declares_its_own_scale_options():
    info = SCHEMES["xpos"]
    assert info.family == "rotation" and info.provides == frozenset({"rotation", "angles"})
    assert info.spec("rope_theta") is SCHEMES["rope"].spec("rope_theta") is OPTION_SPECS["rope_theta"]
    assert [spec.name for spec in info.options] == ["rope_theta", "gamma", "scale_base"]
    assert (info.spec("gamma").default, info.spec("scale_base").default) == (0.4, 512.0)
    assert OPTION_SPECS["gamma"] is info.spec("gamma") and OPTION_SPECS["scale_base"] is info.spec("scale_base")
    chosen = params(scheme="xpos", seq_len=1024, d_model=64, gamma=0.5, scale_base=256.0)
    assert chosen.title() == "xpos: 1,024 positions × d_model 64, θ 10000, γ 0.5, scale_base 256"
    assert "not in those columns" in info.summary and "No attention factor" in info.summary


def test_an_odd_d_model_is_refused_by_encode_too():
    with pytest.raises(ValueError, match="^d_model must be even for xPos"):
        encode("xpos", [0.0], 7)


@pytest.mark.parametrize("values, message", [
    ({"d_model": 7}, "d_model must be even for xPos"),
    ({"gamma": 0.0}, "gamma must be"),
    ({"gamma": -1.0}, "gamma must be"),
    ({"scale_base": 0.0}, "scale_base must be"),
    ({"scale_base": math.inf}, "scale_base must be"),
    ({"rope_theta": 1.0}, "rope_theta must be"),
    ({"pairing": "halves"}, "pairing does not apply to scheme 'xpos'"),
])
def test_bad_options_are_refused_naming_the_parameter(values, message):
    with pytest.raises(ValueError, match=message):
        EncodingParams.validated(scheme="xpos", **values)


def test_the_preset_is_torchscales_defaults_and_cites_them():
    (preset,) = SCHEMES["xpos"].presets
    assert (preset.seq_len, preset.d_model) == (1024, 64)
    assert dict(preset.options) == {"rope_theta": 10000.0, "gamma": 0.4, "scale_base": 512.0}
    assert "xpos_relative_position.py" in preset.source and "xpos_scale_base 512" in preset.source
    params(scheme="xpos", seq_len=preset.seq_len, d_model=preset.d_model, **preset.options)


def test_the_columns_are_ropes_interleaved_rotation_without_the_scale():
    positions = np.array([0.0, 1.0, 7.5, 1000.0, 123456.0])
    for d_model, theta in ((8, 10000.0), (64, 500.0)):
        xpos = encode("xpos", positions, d_model, rope_theta=theta, gamma=0.9, scale_base=64.0)
        rope = encode("rope", positions, d_model, rope_theta=theta, pairing="interleaved")
        np.testing.assert_array_equal(xpos, rope)  # the same θ_i, divisors and cos/sin: bit for bit
    # channel 2i: cos(p·θ_i), 2i + 1: sin(p·θ_i); θ = (1, 0.01) for d 4, base 10000
    assert_close(encode("xpos", [3.0], 4)[0], [math.cos(3), math.sin(3), math.cos(0.03), math.sin(0.03)],
                 angle_atol(3.0))
    term = formula_term("xpos", 8, 5)
    assert term.startswith("sin(pos · θ_2)") and "ζ_2 = 0.642857" in term and "not in this value" in term


# ------------------------------------------------------------------ the positional logit


# q = (1, 2, 3, 4), k = (0.5, −1, 2, 1), d 4, θ = (1, 0.01), ζ = (2/7, 9/14), scale_base 512.
# Interleaved pairs: (a, b) = (1, 2), (c, d) = (0.5, −1): ac + bd = −1.5, ad − bc = −2;
#                    (a, b) = (3, 4), (c, d) = (2, 1):    ac + bd = 10,   ad − bc = −5.
# logit(r) = ζ_0^(r/512)·(−1.5 cos r − 2 sin r) + ζ_1^(r/512)·(10 cos 0.01r − 5 sin 0.01r), r = m − n.
# With Python's decimal (60 digits; tests/high_precision.py's sin and cos):
#   r = 0:    −1.5 + 10 = 8.5 (= q·k)
#   r = 512:  (2/7)(−1.5·(−0.99683339084820195) − 2·0.07951849401287635)
#             + (9/14)(10·0.39641720893592235 − 5·(−0.91807047466926703)) = 5.8811123255240164
#   r = −512: (7/2)(−1.5·(−0.99683339084820195) + 2·0.07951849401287635)
#             + (14/9)(10·0.39641720893592235 + 5·(−0.91807047466926703)) = 4.8159465405076877
#   r = 256:  √(2/7)(−1.5·(−0.03979075993115771) − 2·(−0.99920803410706270))
#             + √(9/14)(10·(−0.83558877713140761) − 5·0.54935543642712668) = −7.8018341677447327
QUERY = np.array([1.0, 2.0, 3.0, 4.0])
KEY = np.array([0.5, -1.0, 2.0, 1.0])
HAND_WORKED = {0: 8.5, 512: 5.8811123255240164, -512: 4.8159465405076877, 256: -7.8018341677447327}


def test_the_two_pair_logit_equals_the_hand_worked_values():
    rows = np.array([512.0, 512.0, 0.0, 256.0])
    cols = np.array([512.0, 0.0, 512.0, 0.0])
    logits = positional_logits("xpos", rows, cols, d_model=4, query=QUERY, key=KEY).diagonal()
    wanted = np.array([HAND_WORKED[r] for r in (0, 512, -512, 256)])
    # per pair: sin/cos of r·θ_i within angle_atol, ζ^(r/512) within (FUNCTION_ULPS + 3|x| + |x ln ζ|/2 + 1) ULP
    # (|x| ≤ 1, |ln ζ_0| = 1.25), times weights of size ≤ 12 and scales ≤ 3.5; the 4 products and sums
    zeta, inv_freq = np.array([2 / 7, 9 / 14]), np.array([1.0, 0.01])
    distance = np.array([0.0, 512.0, -512.0, 256.0])[:, None]
    size = zeta ** (distance / 512) * pair_terms(QUERY, KEY)
    ulps = FUNCTION_ULPS + 3 + 1.25 / 2 + 1 + 4
    atol = np.sum(size * (angle_atol(np.abs(distance) * inv_freq, evaluations=1) + ulps * EPS), axis=1)
    assert_close(logits, wanted, atol)
    # the logit is not symmetric in the distance: the key 512 after its query weighs ×(7/2)², ×(14/9)² per pair
    assert abs(logits[1] - logits[2]) > 1.0


def test_the_ones_logit_is_twice_the_scaled_cosine_sum_and_decays_where_ropes_does_not():
    # q = k = 1: 2 Σ ζ_i^(r/B) cos(r θ_i); scale_base 1, d 4: r = 1: (4/7) cos 1 + (9/7) cos 0.01 = 1.5943941753175066,
    # r = 2: (8/49) cos 2 + (81/98) cos 0.02 = 0.75842297097182165 (decimal, 60 digits)
    logits = positional_logits("xpos", [2.0, 2.0, 2.0], [2.0, 1.0, 0.0], d_model=4, scale_base=1.0)[0]
    assert_close(logits, [4.0, 1.5943941753175066, 0.75842297097182165], 30 * EPS * 4)
    rope = positional_logits("rope", [2.0], [0.0], d_model=4, pairing="interleaved")[0, 0]
    assert rope == pytest.approx(2 * math.cos(2) + 2 * math.cos(0.02), abs=1e-14) and rope > 1.0


@pytest.mark.parametrize("d_model, theta, gamma, scale_base, length, seed", [
    (8, 10000.0, 0.4, 512.0, 300, 0),  # torchscale's γ and scale_base
    (16, 10000.0, 0.4, 64.0, 200, 1),  # a short scale_base: strong decay within the block
    (64, 500.0, 1.5, 512.0, 257, 2),  # odd length: ⌈L/2⌉ is not L/2
    (32, 1e6, 0.05, 2048.0, 400, 3),
])
def test_the_closed_form_is_torchscales_computation(d_model, theta, gamma, scale_base, length, seed):
    rng = np.random.default_rng(seed)
    query, key = rng.standard_normal(d_model), rng.standard_normal(d_model)
    options = dict(rope_theta=theta, gamma=gamma, scale_base=scale_base)
    positions = np.arange(length, dtype=np.float64)
    logits = positional_logits("xpos", positions, positions, d_model=d_model, query=query, key=key, **options)
    reference = torchscale_logits(query, key, length, gamma=gamma, scale_base=scale_base, theta=theta)
    zeta = xpos_zeta(d_model, gamma)
    inv_freq = 1.0 / theta ** (np.arange(0, d_model, 2) / d_model)
    atol = xpos_logit_atol(query, key, positions, positions, zeta, inv_freq, scale_base, length / 2 + 1)
    assert_close(logits, reference, atol)
    # formulas a slip away are far outside the tolerance: the scale's exponent of the wrong sign (n − m), the
    # key not downscaled, or halves pairing
    wrong_sign = positional_logits("xpos", positions, positions, d_model=d_model, query=query, key=key,
                                   **options).T
    not_downscaled = torchscale_xpos(np.tile(query, (length, 1)), gamma=gamma, scale_base=scale_base, theta=theta) @ \
        torchscale_xpos(np.tile(key, (length, 1)), gamma=gamma, scale_base=scale_base, theta=theta).T
    permutation = np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])  # interleaved → halves
    halves = positional_logits("xpos", positions, positions, d_model=d_model, query=query[permutation],
                               key=key[permutation], **options)
    for wrong in (wrong_sign, not_downscaled, halves):
        assert np.max(np.abs(wrong - reference) / atol) > 1e3


def test_torchscales_queries_and_keys_share_the_centre_so_it_cancels():
    # The decoder's incremental step scales the new query with offset = src_len − 1 and the keys with offset 0:
    # both at min_pos = −src_len // 2, so the query's scale is the last key's, bit for bit
    for length in (1, 2, 7, 512, 513):
        np.testing.assert_array_equal(xpos_centered_positions(1, offset=length - 1),
                                      xpos_centered_positions(length)[-1:])
        rng = np.random.default_rng(length)
        block = rng.standard_normal((length, 8))
        np.testing.assert_array_equal(torchscale_xpos(block[-1:], offset=length - 1), torchscale_xpos(block)[-1:])


def test_the_logit_depends_on_the_distance_only_up_to_the_centres_rounding():
    rng = np.random.default_rng(11)
    query, key = rng.standard_normal(16), rng.standard_normal(16)
    # the closed form evaluates each distance once: exactly Toeplitz
    positions = np.arange(0.0, 600.0, 7.0)
    logits = positional_logits("xpos", positions, positions, d_model=16, query=query, key=key)
    assert np.all(logits[1:, 1:] == logits[:-1, :-1])
    # torchscale: the same two tokens 500 positions later in a longer block sit at other centred positions
    # (block of 300: centred −150 … 149; of 1,000: −500 … 499, tokens 500 … 799 at 0 … 299); the logits of equal
    # distances agree within the rounding of those scales and angles (the closed form's bound, twice)
    short = torchscale_logits(query, key, 300)
    long = torchscale_logits(query, key, 1000)[500:800, 500:800]
    zeta, inv_freq = xpos_zeta(16, 0.4), 1.0 / 10000.0 ** (np.arange(0, 16, 2) / 16)
    rows = np.arange(300.0)
    atol = (xpos_logit_atol(query, key, rows, rows, zeta, inv_freq, 512.0, 151)
            + xpos_logit_atol(query, key, rows + 500, rows + 500, zeta, inv_freq, 512.0, 501))
    assert_close(long, short, atol)
    assert_close(logits[:, :], torchscale_logits(query, key, 600)[::7, ::7],
                 xpos_logit_atol(query, key, positions, positions, zeta, inv_freq, 512.0, 301))


def test_keys_too_far_after_their_query_are_refused_naming_the_key_positions():
    farthest = xpos_farthest(64, 0.4, 512.0)  # 700·512/ln(3.5) = 286,088
    assert farthest == pytest.approx(700 * 512 / math.log(3.5), rel=1e-15)
    # a key before its query has no limit: the scale falls to 0
    assert positional_logits("xpos", [1_048_575.0], [0.0], d_model=64)[0, 0] == pytest.approx(0.0, abs=1e-9)
    assert np.isfinite(positional_logits("xpos", [0.0], [286_000.0], d_model=64)).all()
    with pytest.raises(ValueError, match=r"^key_positions: with xPos a key more than 286,088 positions after"):
        positional_logits("xpos", [0.0], [300_000.0], d_model=64)


# ------------------------------------------------------------------ the panel's data


def test_the_panels_data_for_xpos_worked_by_hand():
    data = logit_profile_data(params(scheme="xpos", seq_len=3, d_model=4, scale_base=1.0))
    np.testing.assert_array_equal(data.distances, [0, 1, 2])
    assert_close(data.profile, [4.0, 1.5943941753175066, 0.75842297097182165], 30 * EPS * 4)
    scale = data.rotation.xpos
    # the scale alone, 2(ζ_0^r + ζ_1^r): 4, 2(2/7 + 9/14) = 13/7, 2(4/49 + 81/196) = 97/98
    assert_close(scale.envelope, [4.0, 13 / 7, 97 / 98], 20 * EPS * 4)
    # the random pairs' expected spread √(2 Σ ζ_i^(2r)): √4 = 2, √(2(4/49 + 81/196)) = √(97/98)
    assert_close(scale.expected_std, [2.0, math.sqrt(97 / 98), math.sqrt(2 * (16 / 2401 + 6561 / 38416))],
                 20 * EPS * 2)
    # each pair's scale halves at ln 2 / |ln ζ_i| (scale_base 1): 0.5533, 1.5694
    assert_close(scale.half_distances, [math.log(2) / math.log(3.5), math.log(2) / math.log(14 / 9)], 1e-15)
    assert data.rotation.attention_factor == 1.0 and data.rotation.ones_bound is None
    # keys after their query are left out of the matrix; the others are the profile's, by distance
    assert np.isnan(data.matrix[0, 1]) and np.isnan(data.matrix[0, 2]) and np.isnan(data.matrix[1, 2])
    assert_close(data.matrix[2], data.profile[::-1], 30 * EPS * 4)  # the same sums, in other matrix products
    assert (data.half_distance, data.half_after) == (1, 0)  # 1.59 < 4/2


def test_the_logit_scale_for_d8_is_zeta_to_the_distance_over_scale_base():
    # d 8, γ 0.4, scale_base 512: pair i of the logit × ζ_i^(r/512). The scale alone, 2Σ ζ_i^(r/512):
    #   r = 512:  2·(2/7 + 13/28 + 9/14 + 23/28) = 2·(8 + 13 + 18 + 23)/28 = 31/7
    #   r = 1024: 2·(4/49 + 169/784 + 81/196 + 529/784) = 2·(64 + 169 + 324 + 529)/784 = 1086/392 = 543/196
    #   r = 256:  2·(√(2/7) + √(13/28) + √(9/14) + √(23/28))
    data = logit_profile_data(params(scheme="xpos", seq_len=1025, d_model=8))
    scale = data.rotation.xpos
    by_distance = dict(zip(data.distances.tolist(), scale.envelope))
    roots = sum(math.sqrt(z) for z in ZETA_D8)
    wanted = np.array([31 / 7, 543 / 196, 2 * roots])
    # each ζ^x within (FUNCTION_ULPS + 3|x| + |x ln ζ|/2 + 1) ULP (|x| ≤ 2, |ln ζ| ≤ 1.26), four terms summed
    assert_close([by_distance[512], by_distance[1024], by_distance[256]], wanted,
                 (FUNCTION_ULPS + 6 + 1.26 + 1 + 4) * EPS * wanted)
    # the q = k = 1 logit is this scale on each pair's 2 cos(rθ_i): below it, and equal at r = 0 (8)
    assert data.profile[0] == 8.0 and np.all(np.abs(data.profile) <= scale.envelope * (1 + 1e-12))


def test_the_panels_data_at_a_million_positions_stays_finite_and_sampled():
    data = logit_profile_data(params(scheme="xpos", seq_len=1_048_576, d_model=128))
    lower = np.tril(np.ones(data.matrix.shape, dtype=bool))
    assert np.all(np.isfinite(data.matrix[lower])) and np.all(np.isnan(data.matrix[~lower]))
    scale = data.rotation.xpos
    assert np.all(np.abs(data.profile) <= scale.envelope * (1 + 1e-12) + 1e-300)
    assert scale.envelope[-1] < 1e-9 and np.all(np.diff(scale.envelope) <= 0)  # the scale only falls


# ------------------------------------------------------------------ the panel


def show_panel(qtbot, state, compute) -> PositionalLogitsPanel:
    return helpers_panels.show_panel(qtbot, PositionalLogitsPanel(state, compute), (1200, 700), settle=False)


def test_the_panel_shows_xpos_and_follows_its_options(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    assert PositionalLogitsPanel.shows(SCHEMES["xpos"])
    assert state.update(scheme="xpos", seq_len=3, d_model=4, scale_base=1.0) is None
    settle_params(state, compute)
    assert not panel.unavailable_label.isVisible() and panel.message_label.text() == ""
    x, y = panel.ones_curve.getOriginalDataset()
    np.testing.assert_array_equal(x, np.log10([1, 2]))  # the distances 1, 2 on the log axis's scale
    assert_close(y, [1.5943941753175066, 0.75842297097182165], 30 * EPS * 4)
    bx, by = panel.bound_curve.getOriginalDataset()
    assert_close(by, [13 / 7, 97 / 98], 20 * EPS * 4)  # the scale alone, not RoFormer's bound
    assert "scale alone" in panel.size_plot.titleLabel.text and "keys n ≤ m" in panel.matrix.plot.titleLabel.text
    assert np.isnan(panel.matrix.values[0, 2])
    assert panel.matrix.values[2, 0] == pytest.approx(panel.data.profile[2], abs=30 * EPS * 4)
    summary = panel.summary_label.text()
    assert "logit <b>4</b> at distance 0" in summary and "no attention factor" in summary
    assert "ζ₀ = <b>0.2857</b>" in summary and "ζ₁ = <b>0.6429</b>" in summary and "ζᵢ^(r/1)" in summary
    assert "not in the heatmap's columns" in summary
    # a larger γ decays less: ζ = (1/2, 3/4) at γ = 1, so r = 1 gives (2/2) cos 1 + (6/4) cos 0.01 = 2.0402279…
    assert state.update(gamma=1.0) is None
    settle_params(state, compute)
    assert panel.data.params.options["gamma"] == 1.0
    x, y = panel.ones_curve.getOriginalDataset()
    assert y[0] == pytest.approx(math.cos(1) + 1.5 * math.cos(0.01), abs=1e-14)
    assert "ζ₀ = <b>0.5</b>" in panel.summary_label.text()
    exported = json.loads(export.export_bytes(panel, "json"))
    assert exported["meta"]["scale_base"] == 1.0 and exported["meta"]["zeta"] == [0.5, 0.75]
    assert np.asarray(exported["arrays"]["profile"]["data"]).shape == (3, 6)
    assert exported["arrays"]["matrix"]["data"][0][2] is None  # a key after its query: null
    # RoPE again: its eq. 37 bound and summary come back
    assert state.update(scheme="rope") is None
    settle_params(state, compute)
    assert panel.data.rotation.xpos is None and "eq. 37" in panel.size_plot.titleLabel.text
    assert "Attention factor af" in panel.summary_label.text()


def test_the_figure_exports_with_xpos_at_a_million_positions(qtbot, state, compute, tmp_path):
    panel = show_panel(qtbot, state, compute)
    assert state.update(scheme="xpos", seq_len=1_048_576, d_model=64) is None
    settle_params(state, compute)
    assert panel.message_label.text() == "" and panel.data.positions.stride == 4096
    path = tmp_path / "logits.png"
    assert export.export_panel(panel, path, width=900) == path and path.stat().st_size > 0
    caption = panel.figure_caption()
    assert "every 4,096th position in both directions" in caption and "ζ₃₁ = 0.9777" in caption
