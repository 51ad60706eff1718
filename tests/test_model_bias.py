"""ALiBi, T5 buckets, xPos and seeded tables: values worked out by hand, the reference code's conventions, bad input."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_gui.model import (
    alibi_bias,
    alibi_slopes,
    learned_table,
    limits,
    t5_bias,
    t5_random_table,
    t5_relative_bucket,
    xpos_centered_positions,
    xpos_scale,
)
from posenc_gui.model.bias import learned_key, learned_values, splitmix64_mix
from tolerances import EPS, FUNCTION_ULPS, assert_close

nan, inf = float("nan"), float("inf")

# ---------------------------------------------------------------- ALiBi slopes

# The slopes' base-2 exponents, by hand. A power of two n: start = 2^(−8/n), slopes start^1 … start^n, so the
# exponents are −8/n·(1 … n). Otherwise c = 2^floor(log2 n), slopes(c) followed by slopes(2c)[0::2][:n − c]:
# every other exponent of 2c heads, −8/(2c)·(1, 3, 5, …), the first n − c of them.
SLOPE_EXPONENTS = {
    1: [-8],  # a power of two: −8/1·1
    2: [-4, -8],  # −8/2·(1, 2)
    # c = 2: slopes(2) = 2^-4, 2^-8; slopes(4) = 2^-2, 2^-4, 2^-6, 2^-8, [0::2] = 2^-2, 2^-6, [:1] = 2^-2
    3: [-4, -8, -2],
    # c = 4: slopes(4) = 2^-2 … 2^-8 (step 2); slopes(8) = 2^-1 … 2^-8, [0::2] = 2^-1, 2^-3, 2^-5, 2^-7, [:1]
    5: [-2, -4, -6, -8, -1],
    6: [-2, -4, -6, -8, -1, -3],  # as for 5, [:2]
    8: [-1, -2, -3, -4, -5, -6, -7, -8],  # −8/8·(1 … 8): 1/2 … 1/256
    # c = 8: slopes(8) = 2^-1 … 2^-8; slopes(16) = 2^-0.5, 2^-1, … 2^-8, [0::2] = 2^-0.5, 2^-1.5, 2^-2.5, …, [:4]
    12: [-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5],
    16: [-0.5 * k for k in range(1, 17)],  # −8/16·(1 … 16)
    32: [-0.25 * k for k in range(1, 33)],  # −8/32·(1 … 32)
}


@pytest.mark.parametrize("n_heads", sorted(SLOPE_EXPONENTS))
def test_alibi_slopes_equal_the_hand_worked_values(n_heads):
    exponents = SLOPE_EXPONENTS[n_heads]
    expected = np.array([2.0**e for e in exponents])  # libm's pow: within 1 ULP, exact for integer exponents
    slopes = alibi_slopes(n_heads)
    integral = np.array([float(e).is_integer() for e in exponents])
    np.testing.assert_array_equal(slopes[integral], expected[integral])  # powers of two are exact
    # The others: np.exp2 of an exact exponent (FUNCTION_ULPS), against pow (1 ULP).
    assert_close(slopes, expected, (FUNCTION_ULPS + 1) * EPS * expected)


def fairseq_get_slopes(n):
    """The authors' ``get_slopes`` (fairseq ``transformer.py``), in Python floats."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + fairseq_get_slopes(2 * closest_power_of_2)[0::2][
        : n - closest_power_of_2
    ]


def bloom_slopes(n_head):
    """Hugging Face BLOOM's ``build_alibi_tensor`` slopes (a base raised to integer powers), in float64."""
    closest_power_of_2 = 2 ** math.floor(math.log2(n_head))
    base = 2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3)))
    slopes = np.power(base, np.arange(1, 1 + closest_power_of_2))
    if closest_power_of_2 != n_head:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3)))
        num_remaining_heads = min(closest_power_of_2, n_head - closest_power_of_2)
        slopes = np.concatenate([slopes, np.power(extra_base, np.arange(1, 1 + 2 * num_remaining_heads, 2))])
    return slopes


@pytest.mark.parametrize("n_heads", [*range(1, 70), 96, 100, 112, 128, 255, 1000, 1024])
def test_alibi_slopes_agree_with_fairseq_and_bloom(n_heads):
    slopes = alibi_slopes(n_heads)
    # The k-th slope of 2^(−8/c) raised to k: the base is within 1 ULP (pow), start·start**i multiplies its
    # error by k and adds two roundings; BLOOM's pow of the base, k ULP and FUNCTION_ULPS. Ours: FUNCTION_ULPS.
    closest = 2 ** math.floor(math.log2(n_heads))
    k = np.concatenate([np.arange(1, closest + 1), np.arange(1, 2 * (n_heads - closest), 2)])
    allowed = (k + 2 + 2 * FUNCTION_ULPS) * EPS * slopes
    assert_close(slopes, fairseq_get_slopes(n_heads), allowed, "fairseq")
    assert_close(slopes, bloom_slopes(n_heads), allowed, "BLOOM")


# ---------------------------------------------------------------- ALiBi bias


def test_alibi_causal_bias_is_minus_slope_times_distance_and_masks_future_keys():
    bias = alibi_bias([0, 1, 2, 3], [0, 1, 2, 3], 0.25)
    expected = [
        [0.0, -inf, -inf, -inf],
        [-0.25, 0.0, -inf, -inf],
        [-0.5, -0.25, 0.0, -inf],
        [-0.75, -0.5, -0.25, 0.0],
    ]
    np.testing.assert_array_equal(bias, expected)
    assert not np.signbit(np.diagonal(bias)).any()  # +0, not −0, where the query meets its own key


def test_alibi_symmetric_bias_is_minus_slope_times_absolute_distance():
    bias = alibi_bias([2, 5], [0, 3, 5, 7], 0.5, causal=False)
    # −0.5·|i − j|: i = 2 → |2 − 0|, |2 − 3|, |2 − 5|, |2 − 7| = 2, 1, 3, 5; i = 5 → 5, 2, 0, 2
    np.testing.assert_array_equal(bias, [[-1.0, -0.5, -1.5, -2.5], [-2.5, -1.0, 0.0, -1.0]])
    np.testing.assert_array_equal(alibi_bias([2, 5], [0, 3, 5, 7], 0.5), [[-1.0, -inf, -inf, -inf],
                                                                        [-2.5, -1.0, 0.0, -inf]])


def test_alibi_paper_bias_and_fairseq_m_times_j_give_the_same_softmax():
    positions = np.arange(6)
    slope = alibi_slopes(8)[2]
    paper = alibi_bias(positions, positions, slope)
    fairseq = np.where(np.isinf(paper), -inf, slope * positions[None, :])  # fairseq's alibi + future mask

    def softmax(logits):
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    # The two differ by −m·i in row i; exp of logits within a few ULP of each other, summed over 6 keys.
    assert_close(softmax(paper), softmax(fairseq), 16 * EPS)


# ---------------------------------------------------------------- T5 buckets

# (bidirectional, num_buckets, max_distance, relative position = key − query, bucket), worked out with the
# float32 formula. Bidirectional halves the buckets: nb = num_buckets/2, and a key after the query adds nb;
# n = |relative|. Causal: nb = num_buckets, n = −min(relative, 0). max_exact = nb/2: n < max_exact is its own
# bucket; else max_exact + trunc(q), q = f32(log(f32(n)/max_exact)) / f32(ln(max_distance/max_exact))
# · (nb − max_exact), capped at nb − 1.
T5_CASES = [
    # 32 buckets, max_distance 128, bidirectional: nb 16, max_exact 8, q = log(n/8)/2.7725887·8 = 2·log2(n/8)
    (True, 32, 128, 0, 0),
    (True, 32, 128, -1, 1),
    (True, 32, 128, 1, 17),  # a later key: 16 + 1
    (True, 32, 128, -7, 7),  # the last exact bucket
    (True, 32, 128, 7, 23),
    (True, 32, 128, -8, 8),  # n = max_exact: log 1 = 0, bucket 8
    (True, 32, 128, 8, 24),
    (True, 32, 128, -11, 8),  # q = 0.31845373/2.7725887·8 = 0.9188632: truncated to 0 (rounding would give 1)
    (True, 32, 128, -12, 9),  # q = 0.4054651/2.7725887·8 = 1.169925
    (True, 32, 128, -16, 10),  # q = f32(ln 2)/f32(4 ln 2)·8 = 2 exactly (f32(4 ln 2) is 4·f32(ln 2))
    (True, 32, 128, -64, 14),  # q = 6
    (True, 32, 128, -90, 14),  # q = 2.4203682/2.7725887·8 = 6.9837065 → 6 (rounding would give 7)
    (True, 32, 128, -91, 15),  # q = 7.0155892
    (True, 32, 128, -128, 15),  # n = max_distance: q = 8, 16 capped at 15
    (True, 32, 128, 128, 31),
    (True, 32, 128, -1000, 15),  # beyond max_distance: the last bucket of the half
    (True, 32, 128, 1000, 31),
    # 32 buckets, 128, causal: nb 32, max_exact 16, q = log(n/16)/2.0794415·16; later keys are bucket 0
    (False, 32, 128, 5, 0),
    (False, 32, 128, 1000, 0),
    (False, 32, 128, -1, 1),
    (False, 32, 128, -15, 15),
    (False, 32, 128, -16, 16),
    (False, 32, 128, -18, 16),  # q = 0.11778303/2.0794415·16 = 0.9062666
    (False, 32, 128, -19, 17),  # q = 1.3222802
    (False, 32, 128, -32, 21),  # q = 16/3 = 5.3333335
    (False, 32, 128, -112, 30),  # q = 14.972559
    (False, 32, 128, -113, 31),  # q = 15.040955
    (False, 32, 128, -128, 31),  # q = 16: 32 capped at 31
    (False, 32, 128, -500, 31),
    # 16 buckets, max_distance 64, bidirectional: nb 8, max_exact 4, q = log(n/4)/f32(ln 16)·4 = log2(n/4),
    # exact at powers of two in float32 (f32(k·ln 2) = k·f32(ln 2) for k = 1 … 4): a float32 log one ULP low
    # would drop each of them a bucket.
    (True, 16, 64, -3, 3),
    (True, 16, 64, -4, 4),
    (True, 16, 64, -7, 4),  # q = 0.8073549
    (True, 16, 64, -8, 5),  # q = 1 exactly
    (True, 16, 64, 8, 13),
    (True, 16, 64, -15, 5),  # q = 1.9068906
    (True, 16, 64, -16, 6),
    (True, 16, 64, -31, 6),
    (True, 16, 64, -32, 7),  # q = 3
    (True, 16, 64, -64, 7),  # q = 4: 8 capped at 7
    (True, 16, 64, 64, 15),
    (True, 16, 64, 10**6, 15),
    # 16, 64, causal: nb 16, max_exact 8, q = log(n/8)/2.0794415·8
    (False, 16, 64, -7, 7),
    (False, 16, 64, -10, 8),  # q = 0.8584749
    (False, 16, 64, -11, 9),  # q = 1.2251509
    (False, 16, 64, -49, 14),  # q = 6.9725595
    (False, 16, 64, -50, 15),  # q = 7.0502834
    (False, 16, 64, -64, 15),  # q = 8: 16 capped at 15
    (False, 16, 64, 3, 0),
    # 20 buckets, max_distance 160, bidirectional: nb 10, max_exact 5, q = log(n/5)/f32(ln 32)·5 = log2(n/5).
    # f32(ln 32) = 5·f32(ln 2), so at n = 10 q = f32(f32(1/5)·5) = 1 exactly, bucket 6; the same formula in
    # float64, ln 2/ln 32·5 = 0.9999999999999999, would give 5.
    (True, 20, 160, -9, 5),  # q = 0.8479969
    (True, 20, 160, -10, 6),
    (True, 20, 160, 10, 16),
    (True, 20, 160, -19, 6),  # q = 1.9259994
    (True, 20, 160, -20, 7),  # q = f32(f32(2/5)·5) = 2 exactly; float64 1.9999999999999998
    (True, 20, 160, -160, 9),  # q = 5: 10 capped at 9
    # 8 buckets, max_distance 20, bidirectional: nb 4, max_exact 2, q = log(n/2)/2.3025851·2
    (True, 8, 20, -1, 1),
    (True, 8, 20, -2, 2),
    (True, 8, 20, -6, 2),  # q = 1.0986123/2.3025851·2 = 0.9542425 (rounding would give 1)
    (True, 8, 20, -7, 3),  # q = 1.0881361
    (True, 8, 20, 7, 7),
    (True, 8, 20, -20, 3),  # q = 2: 4 capped at 3
    (True, 8, 20, 1000, 7),
    # 8, 20, causal: nb 8, max_exact 4, q = log(n/4)/1.609438·4
    (False, 8, 20, -3, 3),
    (False, 8, 20, -5, 4),  # q = 0.5545875 (rounding would give 1)
    (False, 8, 20, -6, 5),  # q = 1.0077184
    (False, 8, 20, -8, 5),  # q = 1.7227062
    (False, 8, 20, -9, 6),  # q = 2.0154369
    (False, 8, 20, -13, 6),  # q = 2.9293582
    (False, 8, 20, -14, 7),  # q = 3.1135414
    (False, 8, 20, -20, 7),  # q = 4: 8 capped at 7
    (False, 8, 20, -10**9, 7),
    (False, 8, 20, 10**9, 0),
]


@pytest.mark.parametrize("bidirectional, num_buckets, max_distance, relative, bucket", T5_CASES)
def test_t5_buckets_equal_the_hand_worked_values(bidirectional, num_buckets, max_distance, relative, bucket):
    got = t5_relative_bucket([relative], bidirectional, num_buckets, max_distance)
    assert got.tolist() == [bucket]


def test_t5_buckets_keep_the_shape_of_an_array():
    relative = np.array([[0, -8, 8], [-200, 200, -16]])
    buckets = t5_relative_bucket(relative)
    assert buckets.dtype == np.int64
    np.testing.assert_array_equal(buckets, [[0, 8, 24], [15, 31, 10]])


SETTINGS = [(True, 32, 128), (False, 32, 128), (True, 16, 64), (False, 16, 64), (True, 8, 20), (False, 8, 20),
            (True, 4, 5), (False, 2, 3), (True, 320, 800), (False, 33, 100), (True, 64, 10**6)]


@settings(max_examples=60, deadline=None)
@given(
    setting=st.sampled_from(SETTINGS),
    distances=st.lists(st.one_of(st.integers(0, 300), st.integers(0, int(limits.MAX_POSITION))), min_size=1,
                       max_size=200),
)
def test_t5_buckets_are_in_range_and_monotone_in_distance(setting, distances):
    bidirectional, num_buckets, max_distance = setting
    distance = np.sort(np.array(distances, dtype=np.int64))
    earlier = t5_relative_bucket(-distance, bidirectional, num_buckets, max_distance)
    later = t5_relative_bucket(distance, bidirectional, num_buckets, max_distance)
    for buckets in (earlier, later):
        assert buckets.min() >= 0 and buckets.max() <= num_buckets - 1
        assert np.all(np.diff(buckets) >= 0), "a farther key never has a nearer bucket"
    if bidirectional:
        half = num_buckets // 2
        assert earlier.max() < half
        np.testing.assert_array_equal(later[distance > 0], earlier[distance > 0] + half)  # the halves mirror
    else:
        np.testing.assert_array_equal(later, 0)  # every later key shares bucket 0
    exact = distance < (num_buckets // 2 if bidirectional else num_buckets) // 2  # below max_exact
    np.testing.assert_array_equal(earlier[exact], distance[exact])  # one bucket per distance


# ---------------------------------------------------------------- T5 bias


def test_t5_bias_looks_up_the_bucket_of_key_minus_query():
    table = np.arange(32 * 3, dtype=float).reshape(32, 3)  # bucket b, head h: 3b + h
    queries, keys = [10, 100], [2, 10, 18, 300]
    bias = t5_bias(queries, keys, table, head=1)
    # key − query: 10 → −8, 0, 8, 290 (buckets 8, 0, 24, 31); 100 → −98, −90, −82, 200 (15, 14, 14, 31)
    np.testing.assert_array_equal(bias, [[3 * 8 + 1, 1, 3 * 24 + 1, 3 * 31 + 1],
                                         [3 * 15 + 1, 3 * 14 + 1, 3 * 14 + 1, 3 * 31 + 1]])
    every_head = t5_bias(queries, keys, table)
    assert every_head.shape == (3, 2, 4)
    for head in range(3):
        np.testing.assert_array_equal(every_head[head], t5_bias(queries, keys, table, head=head))


def test_t5_causal_bias_masks_later_keys():
    table = t5_random_table(32, 2, seed=3)
    bias = t5_bias([0, 1, 2, 5], [0, 1, 2, 5], table, bidirectional=False, head=0)
    # key − query ≤ 0 below the diagonal: distances 1, 2, 5, 4, 3 have buckets 1, 2, 5, 4, 3
    expected = np.full((4, 4), -inf)
    for query, key, bucket in [(0, 0, 0), (1, 1, 0), (2, 2, 0), (5, 5, 0), (1, 0, 1), (2, 0, 2), (2, 1, 1),
                               (5, 0, 5), (5, 1, 4), (5, 2, 3)]:
        expected[[0, 1, 2, 5].index(query), [0, 1, 2, 5].index(key)] = table[bucket, 0]
    np.testing.assert_array_equal(bias, expected)
    np.testing.assert_array_equal(t5_bias([0, 1], [0, 1], table, bidirectional=False)[:, 0, 1], -inf)


# ---------------------------------------------------------------- xPos

# d = 8, γ = 0.4: ζ_i = (2i/8 + 0.4)/1.4 = (0.4, 0.65, 0.9, 1.15)/1.4 = 2/7, 13/28, 9/14, 23/28.
ZETA_D8 = [Fraction(2, 7), Fraction(13, 28), Fraction(9, 14), Fraction(23, 28)]


def xpos_atol(expected, exponent):
    """Tolerance of ζ^e: ζ is within 3 ULP (four roundings, 0.4's representation), which e multiplies; pow adds
    FUNCTION_ULPS and e's own rounding |e·ln ζ|/2 ULP; the reference, from fractions, 1 ULP."""
    log_zeta = max(abs(math.log(z)) for z in ZETA_D8)
    return (FUNCTION_ULPS + 3 * abs(exponent) + abs(exponent) * log_zeta / 2 + 1) * EPS * np.abs(expected)


def interleaved(values):
    """Each pair's value on both of its channels: torchscale's ``duplicate_interleave``."""
    return [v for value in values for v in (value, value)]


@pytest.mark.parametrize(
    "position, downscale, expected",
    [
        (0, False, [1.0] * 4),
        (512, False, [float(z) for z in ZETA_D8]),  # ζ^(512/512)
        (1024, False, [float(z**2) for z in ZETA_D8]),  # 4/49, 169/784, 81/196, 529/784
        (-512, False, [float(1 / z) for z in ZETA_D8]),  # 7/2, 28/13, 14/9, 28/23
        (512, True, [float(1 / z) for z in ZETA_D8]),  # a key: ζ^(−512/512)
        (256, False, [math.sqrt(z) for z in ZETA_D8]),  # ζ^(1/2)
        (-256, True, [math.sqrt(z) for z in ZETA_D8]),
    ],
)
def test_xpos_scale_equals_the_hand_worked_values(position, downscale, expected):
    scale = xpos_scale([position], 8, downscale=downscale)
    wanted = np.array([interleaved(expected)])
    assert_close(scale, wanted, xpos_atol(wanted, position / 512))


def test_xpos_scale_follows_gamma_and_scale_base():
    # d = 4, γ = 1: ζ = (0 + 1)/2, (2/4 + 1)/2 = 1/2, 3/4, exact; position 200 at scale_base 100: ζ²
    scale = xpos_scale([200], 4, gamma=1.0, scale_base=100)
    wanted = np.array([interleaved([0.25, 0.5625])])
    assert_close(scale, wanted, (FUNCTION_ULPS + 1) * EPS * wanted)  # pow of exact values; 200/100 is exact


def test_xpos_query_key_product_depends_only_on_the_offset():
    queries, keys = np.array([0.0, 300.0, 1024.0, 2048.0]), np.array([0.0, 100.0, 1024.0])
    offsets = np.subtract.outer(queries, keys) / 512  # (m − n)/scale_base
    zeta = np.array(interleaved([float(z) for z in ZETA_D8]))
    wanted = zeta[None, None, :] ** offsets[:, :, None]
    for centre in (0.0, -1024.0, 700.0):  # torchscale centres positions: the centre cancels
        product = xpos_scale(queries + centre, 8)[:, None, :] * xpos_scale(keys + centre, 8, downscale=True)[None]
        # two scales of exponents up to 6 (and the centre's 2), their product, the reference's pow
        largest = (abs(queries).max() + abs(centre)) / 512
        assert_close(product, wanted, 2 * xpos_atol(wanted, largest) + 2 * EPS * wanted)


def test_xpos_centred_positions_follow_torchscale():
    # min_pos = −(length + offset) // 2, positions min_pos … max_pos − 1, the last `length` of them
    np.testing.assert_array_equal(xpos_centered_positions(4), [-2, -1, 0, 1])  # −4 // 2 = −2
    np.testing.assert_array_equal(xpos_centered_positions(5), [-3, -2, -1, 0, 1])  # −5 // 2 = −3 (floor)
    np.testing.assert_array_equal(xpos_centered_positions(1, offset=4), [1])  # the 5th of −3 … 1
    np.testing.assert_array_equal(xpos_centered_positions(2, offset=3), [0, 1])


def test_xpos_scale_stays_finite_at_its_farthest_position():
    farthest = 700 * 512 / math.log(1.4 / 0.4)  # ζ_0^(−n/512) = e^700
    scale = xpos_scale([-farthest, farthest], 64, downscale=True)
    assert np.all(np.isfinite(scale)) and np.all(scale > 0)
    with pytest.raises(ValueError, match="positions"):
        xpos_scale([farthest * 1.001], 64)


# ---------------------------------------------------------------- seeded tables


def test_learned_table_is_seeded_normal_with_sigma():
    table = learned_table(4096, 64, sigma=0.02, seed=7)
    assert table.shape == (4096, 64)
    np.testing.assert_array_equal(table, learned_table(4096, 64, sigma=0.02, seed=7))
    assert not np.array_equal(table, learned_table(4096, 64, sigma=0.02, seed=8))
    # 262,144 draws: the sample mean's standard error is σ/512, the standard deviation's σ/√(2·262144) = σ/724;
    # six standard errors either way
    assert abs(table.mean()) < 6 * 0.02 / 512
    assert abs(table.std() - 0.02) < 6 * 0.02 / 724


def test_a_longer_learned_table_extends_a_shorter_one():
    np.testing.assert_array_equal(learned_table(100, 16, seed=1), learned_table(512, 16, seed=1)[:100])


# SplitMix64's first five outputs for the seed 1234567, as published with Vigna's splitmix64.c (Rosetta Code,
# "Pseudo-random numbers/Splitmix64"): the generator the learned table's entries come from.
SPLITMIX_1234567 = [6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431,
                    16408922859458223821]


def test_splitmix64_gives_the_published_outputs():
    outputs = [splitmix64_mix(1234567 + k * 0x9E3779B97F4A7C15) for k in range(1, 6)]
    assert outputs == SPLITMIX_1234567


# Entry (p, j) of a learned table, step by step (Python integers, exact; learned_values' docstring):
#   key = mix(seed·2¹⁶ + 0x1EA2): seed 0 → 0x54f23fb83b01214a, seed 7 → 0xde05453f1790d597;
#   c = p·2¹³ + j; z₁ = mix(key + (2c + 1)·γ), z₂ = mix(key + (2c + 2)·γ) (mod 2⁶⁴);
#   u = ((z >> 12) + ½)·2⁻⁵²; entry = σ·√(−2 ln u₁)·cos(2π u₂).
# seed 0, (5, 3): c = 40963, z₁ = 0xa67113ef26827bc6, z₂ = 0x38faee8dbf0a96ae,
#   u₁ = 0.6501629313338614, u₂ = 0.22257891617395342: √(−2 ln 0.65016…)·cos(2π·0.22258…) = 0.15908586075677378
# seed 0, (0, 0): c = 0, u₁ = 0.8411978781370758, u₂ = 0.022187508160816827: 0.5823903683643765
# seed 0, (1,000,000, 8191): c = 8,192,008,191, u₁ = 0.19940581223913278, u₂ = 0.602694028664215: −1.4347423326857212
# seed 7, (5, 3): u₁ = 0.49464090436676644, u₂ = 0.6472790066435458: −0.7137316689238132
LEARNED_ENTRIES = [
    (0, 5, 3, 0x54f23fb83b01214a, 0xa67113ef26827bc6, 0x38faee8dbf0a96ae, 0.15908586075677378),
    (0, 0, 0, 0x54f23fb83b01214a, 0xd758be801036a908, 0x05ae149dee316fb5, 0.5823903683643765),
    (0, 1_000_000, 8191, 0x54f23fb83b01214a, 0x330c4262330b53e5, 0x9a4a27e69b775216, -1.4347423326857212),
    (7, 5, 3, 0xde05453f1790d597, 0x7ea0c94b84e561b4, 0xa5b413b4ebe09660, -0.7137316689238132),
]


@pytest.mark.parametrize("seed, position, column, key, first, second, value", LEARNED_ENTRIES)
def test_a_learned_entry_equals_the_hand_worked_draw(seed, position, column, key, first, second, value):
    assert learned_key(seed) == key
    counter = position * 2**13 + column
    assert splitmix64_mix(key + (2 * counter + 1) * 0x9E3779B97F4A7C15) == first
    assert splitmix64_mix(key + (2 * counter + 2) * 0x9E3779B97F4A7C15) == second
    u1, u2 = ((first >> 12) + 0.5) * 2.0**-52, ((second >> 12) + 0.5) * 2.0**-52
    radius = math.sqrt(-2 * math.log(u1))
    for sigma in (1.0, 0.02):
        entry = learned_values([float(position)], [column], sigma=sigma, seed=seed)[0, 0]
        # −2 ln u₁ within FUNCTION_ULPS + 1 ULP (relative), its root half that and ½ more; the angle 2π·u₂ ≤ 2π
        # within 1.5 ULP of it, its cosine FUNCTION_ULPS more; σ·(…) one more rounding; the pinned value the same
        atol = 2 * sigma * (radius * ((FUNCTION_ULPS + 1) / 2 + 1.5) + radius * (FUNCTION_ULPS + 1.5 * 2 * math.pi)) * EPS
        assert entry == pytest.approx(sigma * value, abs=atol)


def test_a_learned_entry_is_the_same_whichever_positions_and_columns_ask_for_it():
    far = learned_values([5.0, 1e6, 3.0], [7, 0, 8191], seed=2)
    np.testing.assert_array_equal(far[1], learned_values([1e6], [7, 0, 8191], seed=2)[0])
    np.testing.assert_array_equal(far[:, 0], learned_values([5.0, 1e6, 3.0], [7], seed=2)[:, 0])
    window = learned_values(np.arange(999_990.0, 1_000_010.0), np.arange(8192), seed=2)  # 163,840 entries
    np.testing.assert_array_equal(window[10, [7, 0, 8191]], far[1])
    # a request larger than a block (BLOCK_ELEMENTS = 262,144 entries) equals its rows asked one by one
    rows = np.array([0.0, 17.0, 4096.0, 1e12 - 1, 999_999.0])
    many = learned_values(np.repeat(rows, 20), np.arange(8192), seed=2)
    for index, row in enumerate(rows):
        np.testing.assert_array_equal(many[20 * index], learned_values([row], np.arange(8192), seed=2)[0])
        np.testing.assert_array_equal(many[20 * index + 19], many[20 * index])
    # a position between rows has its row ⌊p⌋; d_model does not enter: a wider table extends a narrower one
    np.testing.assert_array_equal(learned_values([17.9], [3], seed=2), learned_values([17.0], [3], seed=2))
    np.testing.assert_array_equal(learned_table(40, 64, seed=2)[:, :16], learned_table(40, 16, seed=2))
    np.testing.assert_array_equal(learned_table(40, 16, seed=2), learned_values(np.arange(40.0), np.arange(16), seed=2))


def test_learned_entries_are_independent_standard_normals_times_sigma():
    values = learned_values(np.arange(0.0, 2048.0 * 997, 997), np.arange(512), sigma=1.0, seed=9)  # 1,048,576
    n = values.size
    # six standard errors: mean 1/√n, variance √(2/n), the fourth moment's √(96/n) (normal: 3), correlations 1/√n'
    assert abs(values.mean()) < 6 / math.sqrt(n)
    assert abs(values.var() - 1) < 6 * math.sqrt(2 / n)
    assert abs(np.mean(values**4) - 3) < 6 * math.sqrt(96 / n)
    for a, b in ((values[1:], values[:-1]), (values[:, 1:], values[:, :-1])):  # neighbouring rows, columns
        assert abs(np.mean(a * b)) < 6 / math.sqrt(a.size)
    other_seed = learned_values(np.arange(0.0, 2048.0 * 997, 997), np.arange(512), sigma=1.0, seed=10)
    assert abs(np.mean(values * other_seed)) < 6 / math.sqrt(n)
    # the tails: P(|z| > 3) = 0.0026998, its count within six standard errors
    tail = np.count_nonzero(np.abs(values) > 3) / n
    assert abs(tail - 0.0026998) < 6 * math.sqrt(0.0027 / n)


def test_learned_values_never_hold_the_whole_table():
    import tracemalloc

    tracemalloc.start()
    try:
        learned_values([1_048_575.0, 3.0], np.arange(8192), seed=1)  # rows of a 1,048,576 × 8,192 table
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 16,384 entries (128 KiB each array), a few arrays of scratch: about 1 MiB. Drawing the rows before them,
    # even for one column, would take 8 MiB; the table itself 64 GiB
    assert peak < 4 * 2**20


def test_t5_random_table_is_seeded_normal_with_sigma():
    table = t5_random_table(32, 8, seed=5, sigma=0.5)
    assert table.shape == (32, 8)
    np.testing.assert_array_equal(table, t5_random_table(32, 8, seed=5, sigma=0.5))
    big = t5_random_table(4096, 1024, seed=5, sigma=0.5)  # 4,194,304 draws: standard errors σ/2048 and σ/2896
    assert abs(big.mean()) < 6 * 0.5 / 2048
    assert abs(big.std() - 0.5) < 6 * 0.5 / 2896


# ---------------------------------------------------------------- bad input

TABLE = np.zeros((32, 2))
BAD = {
    "n_heads 0": (lambda: alibi_slopes(0), "n_heads", "1…1024"),
    "n_heads too many": (lambda: alibi_slopes(1025), "n_heads", "1…1024"),
    "n_heads fraction": (lambda: alibi_slopes(2.5), "n_heads", "1…1024"),
    "n_heads bool": (lambda: alibi_slopes(True), "n_heads", "1…1024"),
    "slope negative": (lambda: alibi_bias([0], [0], -0.1), "slope", "0…1"),
    "slope NaN": (lambda: alibi_bias([0], [0], nan), "slope", "0…1"),
    "slope text": (lambda: alibi_bias([0], [0], "0.5"), "slope", "0…1"),
    "alibi negative query": (lambda: alibi_bias([-1], [0], 0.5), "query_positions", "0…1e+12"),
    "alibi NaN key": (lambda: alibi_bias([0], [nan], 0.5), "key_positions", "0…1e+12"),
    "alibi 2-D keys": (lambda: alibi_bias([0], [[0, 1]], 0.5), "key_positions", "1-D"),
    "alibi a billion queries": (lambda: alibi_bias(range(10**9), [0], 0.5), "query_positions",
                                "at most 16,777,216"),
    "alibi matrix too large": (lambda: alibi_bias(range(4097), range(4097), 0.5),
                               "query_positions × key_positions", "16,777,216"),
    "alibi causal text": (lambda: alibi_bias([0], [0], 0.5, causal="yes"), "causal", "True or False"),
    "bucket fraction": (lambda: t5_relative_bucket([1.5]), "relative_position", "integers"),
    "bucket too far": (lambda: t5_relative_bucket([2e12]), "relative_position", "-1e+12…1e+12"),
    "bucket text": (lambda: t5_relative_bucket("abc"), "relative_position", "-1e+12…1e+12"),
    "bucket infinity": (lambda: t5_relative_bucket(np.array([inf])), "relative_position", "-1e+12…1e+12"),
    "bucket matrix too large": (lambda: t5_relative_bucket(np.zeros((5000, 5000))), "relative_position",
                                "at most 16,777,216"),
    "num_buckets 3 bidirectional": (lambda: t5_relative_bucket([0], num_buckets=3), "num_buckets", "4…4096"),
    "num_buckets 1 causal": (lambda: t5_relative_bucket([0], False, num_buckets=1), "num_buckets", "2…4096"),
    "max_distance at max_exact": (lambda: t5_relative_bucket([0], max_distance=8), "max_distance", "9…"),
    "max_distance causal": (lambda: t5_relative_bucket([0], False, 32, 16), "max_distance", "17…"),
    "bidirectional None": (lambda: t5_relative_bucket([0], None), "bidirectional", "True or False"),
    "t5 fractional query": (lambda: t5_bias([0.5], [0], TABLE), "query_positions", "integers"),
    "t5 table rows": (lambda: t5_bias([0], [0], np.zeros((16, 2))), "table", "num_buckets (32) rows"),
    "t5 table NaN": (lambda: t5_bias([0], [0], np.full((32, 2), nan)), "table", "finite"),
    "t5 table 1-D": (lambda: t5_bias([0], [0], np.zeros(32)), "table", "2-D"),
    "t5 head": (lambda: t5_bias([0], [0], TABLE, head=2), "head", "0…1"),
    "t5 every head too large": (lambda: t5_bias(range(4096), range(4096), TABLE), "heads × query_positions",
                                "16,777,216"),
    "t5 table buckets": (lambda: t5_random_table(1, 2), "num_buckets", "2…4096"),
    "t5 table heads": (lambda: t5_random_table(32, 0), "n_heads", "1…1024"),
    "t5 table seed": (lambda: t5_random_table(32, 2, seed=-1), "seed", "0…4294967295"),
    "t5 table sigma": (lambda: t5_random_table(32, 2, sigma=0), "sigma", "> 0 and ≤ 1000"),
    "xpos odd rotary_dim": (lambda: xpos_scale([0], 7), "rotary_dim", "even integer in 2…8192"),
    "xpos gamma 0": (lambda: xpos_scale([0], 8, gamma=0), "gamma", "> 0 and ≤ 1000"),
    "xpos scale_base infinite": (lambda: xpos_scale([0], 8, scale_base=inf), "scale_base", "> 0 and ≤ 1e+12"),
    "xpos too far": (lambda: xpos_scale([1e6], 8), "positions", "-286088…286088"),
    "xpos a billion positions": (lambda: xpos_scale(range(10**9), 8), "positions", "at most 4,194,304"),
    "xpos downscale text": (lambda: xpos_scale([0], 8, downscale="no"), "downscale", "True or False"),
    "xpos centred length": (lambda: xpos_centered_positions(0), "length", "1…1048576"),
    "xpos centred offset": (lambda: xpos_centered_positions(4, -1), "offset", "0…1048572"),
    "learned n_positions": (lambda: learned_table(0, 8), "n_positions", "1…1048576"),
    "learned d_model": (lambda: learned_table(8, 1), "d_model", "2…8192"),
    "learned too large": (lambda: learned_table(1_048_576, 8192), "n_positions × d_model", "33,554,432"),
    "learned sigma": (lambda: learned_table(8, 8, sigma=-1), "sigma", "> 0 and ≤ 1000"),
    "learned seed": (lambda: learned_table(8, 8, seed=2**32), "seed", "0…4294967295"),
    "learned values negative position": (lambda: learned_values([-1.0], [0]), "positions", "0…1e+12"),
    "learned values NaN position": (lambda: learned_values([nan], [0]), "positions", "0…1e+12"),
    "learned values column": (lambda: learned_values([0.0], [8192]), "dims", "0…8191"),
    "learned values too many": (lambda: learned_values(np.arange(5000.0), np.arange(8192)), "positions × dims",
                                "33,554,432"),
    "learned values sigma": (lambda: learned_values([0.0], [0], sigma=0.0), "sigma", "> 0 and ≤ 1000"),
    "learned values seed": (lambda: learned_values([0.0], [0], seed=-1), "seed", "0…4294967295"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_names_the_parameter_and_its_range(case):
    call, name, allowed = BAD[case]
    with pytest.raises(ValueError) as raised:
        call()
    message = str(raised.value)
    assert message.startswith(name) and allowed in message, message
