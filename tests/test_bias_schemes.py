"""The bias schemes alibi and t5: their specs and presets, their positional logits worked by hand, T5's bucket map."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_gui.model import OPTION_SPECS, SCHEMES, EncodingParams, Scheme, t5_random_table, t5_relative_bucket
from posenc_gui.model.bias.data import bucket_map
from posenc_gui.model.attention.logits import logit_profile_data, positional_logits
from posenc_gui.model.schemes._shared_specs import HEAD, N_HEADS, SEED

EPS = np.finfo(np.float64).eps
INF = np.inf


def params(**values) -> EncodingParams:
    return EncodingParams.validated(**values)


# ------------------------------------------------------------------ declarations


def test_a_bias_scheme_declares_its_bias_and_only_a_bias_scheme_does():
    with pytest.raises(ValueError, match="a bias scheme declares its bias"):
        Scheme(key="b", label="b", summary="", formula="", order=999, family="bias")
    with pytest.raises(ValueError, match="only a bias scheme does"):
        Scheme(key="t", label="t", summary="", formula="", order=999, table=lambda p, d, m: p,
               bias=lambda q, k, d: q)
    assert "bias" in Scheme.__doc__ and "−inf" in Scheme.__doc__  # the callable's contract is documented


def test_the_specs_are_shared_and_their_defaults_are_the_papers():
    alibi, t5 = SCHEMES["alibi"], SCHEMES["t5"]
    assert alibi.family == t5.family == "bias" and alibi.provides == t5.provides == frozenset({"bias"})
    for name, spec in (("n_heads", N_HEADS), ("head", HEAD)):
        assert alibi.spec(name) is spec and t5.spec(name) is spec and OPTION_SPECS[name] is spec
    assert t5.spec("seed") is SEED and OPTION_SPECS["seed"] is SEED
    assert params(scheme="alibi").options == {"n_heads": 8, "head": 0, "symmetric": False}
    assert params(scheme="t5").options == {"num_buckets": 32, "max_distance": 128, "bidirectional": True,
                                           "n_heads": 8, "head": 0, "seed": 0}
    assert (N_HEADS.low, N_HEADS.high, HEAD.low, HEAD.high) == (1, 1024, 0, 1023)
    assert params(scheme="alibi", n_heads=12, head=3).title() == (
        "alibi: 128 positions × d_model 512, 12 heads, head 3, causal")
    assert params(scheme="t5", bidirectional=False).slug() == "t5_n128_d512_b32_md128_causal_8heads_head0_s0"


@pytest.mark.parametrize(("values", "message"), [
    (dict(scheme="alibi", n_heads=8, head=8), r"head must be 0…7 \(one of the n_heads = 8 heads\), got 8"),
    (dict(scheme="t5", n_heads=12, head=12), r"head must be 0…11"),
    # bidirectional: 16 buckets a side, max_exact 8: max_distance must exceed it
    (dict(scheme="t5", max_distance=8), r"max_distance must be in 9…"),
    (dict(scheme="t5", num_buckets=3), r"num_buckets must be in 4…4096, got 3"),
    (dict(scheme="t5", n_heads=0), r"n_heads must be in 1…1024"),
    (dict(scheme="alibi", symmetric="yes"), r"symmetric must be true or false"),
])
def test_values_valid_alone_but_not_together_are_refused_naming_the_parameter(values, message):
    with pytest.raises(ValueError, match=message):
        params(**values)


def test_a_causal_t5_takes_two_buckets_and_a_max_distance_above_one():
    # causal: all the buckets on one side, max_exact = 3 // 2 = 1
    assert params(scheme="t5", num_buckets=3, max_distance=2, bidirectional=False).options["num_buckets"] == 3


def test_the_presets_are_the_configs_they_cite():
    presets = {preset.label.split(" (")[0]: preset for preset in SCHEMES["alibi"].presets + SCHEMES["t5"].presets}
    expected = {  # (seq_len, d_model, n_heads, words of the source)
        "BLOOM-176B": (2048, 128, 112, ("bigscience/bloom config.json", "n_head 112", "hidden_size 14336")),
        "BLOOM-560m": (2048, 64, 16, ("bigscience/bloom-560m config.json", "n_head 16", "hidden_size 1024")),
        "MPT-7B": (2048, 128, 32, ("mosaicml/mpt-7b config.json", "n_heads 32", "alibi_bias_max 8")),
        "t5-small encoder": (512, 512, 8, ("t5-small config.json", "num_heads 8", "relative_attention_num_buckets 32")),
        "t5-small decoder": (512, 512, 8, ("t5-small config.json", "causal")),
        "t5-base encoder": (512, 768, 12, ("t5-base config.json", "d_model 768", "num_heads 12")),
    }
    assert set(presets) == set(expected)
    for name, (seq_len, d_model, n_heads, words) in expected.items():
        preset = presets[name]
        assert (preset.seq_len, preset.d_model, preset.options["n_heads"]) == (seq_len, d_model, n_heads), name
        assert all(word in preset.source for word in words), (name, preset.source)
    assert [presets[f"t5-{name}"].options["bidirectional"] for name in ("small encoder", "small decoder",
                                                                         "base encoder")] == [True, False, True]
    assert all(presets[name].options["symmetric"] is False for name in ("BLOOM-176B", "BLOOM-560m", "MPT-7B"))


def test_the_slopes_of_the_presets_heads_worked_by_hand():
    def slope(preset_name: str, head: int) -> float:
        preset = next(p for p in SCHEMES["alibi"].presets if p.label.startswith(preset_name))
        values = params(scheme="alibi", seq_len=2, d_model=preset.d_model, **{**preset.options, "head": head})
        return -positional_logits("alibi", [1], [0], d_model=values.d_model, **values.options)[0, 0]

    # MPT-7B, 32 heads: 2^(−8k/32) = 2^(−k/4), k = 1 … 32
    assert slope("MPT-7B", 0) == pytest.approx(2 ** -0.25, rel=4 * EPS) and slope("MPT-7B", 31) == 2.0 ** -8
    # BLOOM-560m, 16 heads: 2^(−k/2)
    assert slope("BLOOM-560m", 0) == pytest.approx(2 ** -0.5, rel=4 * EPS) and slope("BLOOM-560m", 1) == 0.5
    # BLOOM-176B, 112 heads: c = 64; heads 0…63 have 2^(−8k/64) = 2^(−k/8), heads 64…111 2^(−8k/128) for the odd
    # k = 1, 3, … 95: head 64 has 2^(−1/16), the largest, head 63 2^(−8), head 111 2^(−95/16)
    assert slope("BLOOM-176B", 0) == pytest.approx(2 ** -0.125, rel=4 * EPS)
    assert slope("BLOOM-176B", 63) == 2.0 ** -8
    assert slope("BLOOM-176B", 64) == pytest.approx(2 ** -0.0625, rel=4 * EPS)
    assert slope("BLOOM-176B", 111) == pytest.approx(2 ** (-95 / 16), rel=4 * EPS)


# ------------------------------------------------------------------ positional logits, by hand


def test_alibis_logit_is_minus_half_the_distance_for_head_0_of_8_and_masks_the_keys_after_the_query():
    # 8 heads: slope of head 0 = 2^(−8/8) = 1/2; row m (query), column n (key): −(m − n)/2 for n ≤ m, −inf above
    logits = positional_logits("alibi", range(4), range(4), d_model=4)
    np.testing.assert_array_equal(logits, [[0.0, -INF, -INF, -INF],
                                           [-0.5, 0.0, -INF, -INF],
                                           [-1.0, -0.5, 0.0, -INF],
                                           [-1.5, -1.0, -0.5, 0.0]])
    assert np.all(np.isneginf(logits[np.triu_indices(4, 1)]))  # orientation: the upper triangle is the future
    # head 3: 2^(−32/8) = 1/16, so the query 3 and the key 0 get −3/16; positions need not be integers
    assert positional_logits("alibi", [3.0, 2.5], [0.0, 1.0], d_model=4, head=3).tolist() == [
        [-0.1875, -0.125], [-2.5 / 16, -1.5 / 16]]


def test_alibis_symmetric_bias_and_a_head_count_that_is_no_power_of_two():
    logits = positional_logits("alibi", range(4), range(4), d_model=4, symmetric=True)
    np.testing.assert_array_equal(logits, logits.T)
    assert logits[0].tolist() == [0.0, -0.5, -1.0, -1.5]
    # 12 heads: c = 8, so heads 8 … 11 take 16 heads' slopes 2^(−8k/16), k = 1, 3, 5, 7: head 8's is 2^(−1/2)
    (value,), = positional_logits("alibi", [2], [0], d_model=4, n_heads=12, head=8)
    assert value == pytest.approx(-2 * 2 ** -0.5, rel=4 * EPS)


def test_t5s_logit_is_the_tables_entry_of_the_hand_worked_bucket():
    # bidirectional, 32 buckets: 16 a side, max_exact 8; bucket = 16·[rel > 0] + n for n = |rel| < 8, else
    # 8 + int(ln(n/8)/ln(128/8)·8) (at most 15). relative = key − query, query 100:
    #   rel 0 → 0;  −3 → 3;  +3 → 16 + 3 = 19;  −8 → 8 + int(0) = 8;
    #   −20 → 8 + int(ln 2.5/ln 16·8 = 0.91629/2.77259·8 = 2.644) = 10;  +12 → 16 + 8 + int(1.170) = 25;
    #   −100 → 8 + int(ln 12.5/ln 16·8 = 7.288) = 15;  +128 → 16 + min(15, 8 + 8) = 31
    keys = [100, 97, 103, 92, 80, 112, 0, 228]
    table = t5_random_table(32, 4, seed=3, sigma=64 ** -0.5)  # d_model 64: Hugging Face's σ = 64^−0.5 = 1/8
    logits = positional_logits("t5", [100], keys, d_model=64, n_heads=4, head=2, seed=3)
    np.testing.assert_array_equal(logits[0], table[[0, 3, 19, 8, 10, 25, 15, 31], 2])
    # causal, 32 buckets on one side, max_exact 16: n = −min(rel, 0); n ≥ 16 → 16 + int(ln(n/16)/ln(8)·16):
    #   −20 → 16 + int(ln 1.25/ln 8·16 = 1.717) = 17;  −100 → 16 + int(ln 6.25/ln 8·16 = 14.10) = 30;  +3: masked
    keys = [100, 97, 103, 92, 80, 0]
    logits = positional_logits("t5", [100], keys, d_model=64, n_heads=4, head=2, seed=3, bidirectional=False)
    expected = table[[0, 3, 0, 8, 17, 30], 2]
    expected[2] = -INF
    np.testing.assert_array_equal(logits[0], expected)


def test_t5s_table_is_drawn_with_hugging_faces_sigma_and_the_seed():
    # σ = d_model^−0.5: over 32 buckets × 1024 heads the sample's spread is within a few percent of 1/16
    logits = positional_logits("t5", [0], [0], d_model=256, n_heads=1024, head=5, seed=9)
    table = t5_random_table(32, 1024, seed=9, sigma=1 / 16)
    assert logits[0, 0] == table[0, 5]
    assert table.std() == pytest.approx(1 / 16, rel=0.03)
    other = positional_logits("t5", [0], [0], d_model=256, n_heads=1024, head=5, seed=10)
    assert other[0, 0] != logits[0, 0]


def test_a_bias_refuses_vectors_and_t5_positions_that_are_not_integers():
    with pytest.raises(ValueError, match="query and key vectors apply to rotation schemes; 'alibi' adds a bias"):
        positional_logits("alibi", [0], [0], d_model=4, query=np.ones(4))
    with pytest.raises(ValueError, match="query_positions must be integers"):
        positional_logits("t5", [0.5], [0], d_model=4)
    with pytest.raises(ValueError, match="head must be 0…7"):
        positional_logits("alibi", [0], [0], d_model=4, head=8)


def test_the_panels_profile_of_a_bias_worked_by_hand():
    data = logit_profile_data(params(scheme="alibi", seq_len=8, d_model=4))
    assert data.query_position == 7 and data.rotation is None and data.half_distance is None
    np.testing.assert_array_equal(data.profile, -0.5 * np.arange(8))  # −r/2 for the key r before the query 7
    assert data.bias.after is None  # causal: every key after the query is masked
    assert data.bias.masked == 28  # 8·7/2 cells above the diagonal
    np.testing.assert_array_equal(data.matrix, positional_logits("alibi", range(8), range(8), d_model=4))
    symmetric = logit_profile_data(params(scheme="alibi", seq_len=8, d_model=4, symmetric=True))
    np.testing.assert_array_equal(symmetric.bias.after, symmetric.profile)
    assert symmetric.bias.masked == 0
    t5 = logit_profile_data(params(scheme="t5", seq_len=20, d_model=64, n_heads=2, head=1))
    table = t5_random_table(32, 2, 0, sigma=1 / 8)
    r = np.arange(20)
    np.testing.assert_array_equal(t5.profile, table[t5_relative_bucket(-r), 1])
    np.testing.assert_array_equal(t5.bias.after, table[t5_relative_bucket(r), 1])
    assert t5_relative_bucket(r)[1] == 17  # after the query: the upper half (16 + 1)


def test_a_million_positions_of_a_bias_are_sampled_within_bounds():
    data = logit_profile_data(params(scheme="alibi", seq_len=1_048_576))
    assert data.matrix.shape == (256, 256) and data.positions.stride == 4096
    assert data.profile[-1] == -0.5 * 1_048_575 and data.bias.masked == 256 * 255 // 2


# ------------------------------------------------------------------ T5's bucket map


@pytest.mark.parametrize("options", [{}, {"bidirectional": False}, {"num_buckets": 64, "max_distance": 20},
                                     {"num_buckets": 5, "max_distance": 2}, {"num_buckets": 4096,
                                                                             "max_distance": 1030}])
@pytest.mark.parametrize("seq_len", [1, 2, 300, 3000])
def test_the_bucket_map_is_the_bucket_of_every_relative_position(options, seq_len):
    values = params(scheme="t5", seq_len=seq_len, **options)
    runs = bucket_map(values)
    relative = np.arange(-(seq_len - 1), seq_len)
    options = values.options
    every = t5_relative_bucket(relative, options["bidirectional"], options["num_buckets"], options["max_distance"])
    run = np.searchsorted(runs.starts, relative, side="right") - 1
    np.testing.assert_array_equal(runs.buckets[run], every)
    assert runs.starts[0] == -(seq_len - 1) and np.all(runs.buckets[1:] != runs.buckets[:-1])
    far = runs.farthest
    assert np.all(every[relative < -far] == every[0]) and np.all(every[relative > far] == every[-1])
    if far:
        assert every[relative == -far] != every[relative == -far + 1] or every[relative == far] != every[
            relative == far - 1]


def test_the_last_buckets_start_where_the_formula_says():
    # bidirectional: the last bucket of a side, 15, from the first n with 8·16^(7/8) ≤ n: 90.51 → 91;
    # causal: bucket 31 from 16·8^(15/16) = 112.2 → 113
    assert bucket_map(params(scheme="t5", seq_len=1_048_576)).farthest == 91
    causal = bucket_map(params(scheme="t5", seq_len=1_048_576, bidirectional=False))
    assert causal.farthest == 113 and causal.max_exact == 16 and causal.side_buckets == 32
    assert causal.buckets[-1] == 0 and causal.starts[-1] == 0  # the keys after share bucket 0 with the query's own
    with pytest.raises(ValueError, match=r"buckets of the relative position \(t5\), got 'alibi'"):
        bucket_map(params(scheme="alibi"))
