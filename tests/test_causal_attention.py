"""The demo head with a causal mask, and the hook for a bias added to the logits (model layer, no Qt)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_gui.model import SCHEMES
from posenc_gui.model.attention import (
    AttentionTrace,
    attention_weights,
    causal_mask,
    compare_orderings,
    logit_split,
    mask_logits,
    permutation_demo,
    rotation_split,
    self_attention,
    softmax_rows,
    token_embeddings,
)

EPS = np.finfo(np.float64).eps
WORDS = st.sampled_from(["dog", "bites", "man", "the", "cat", "sat", "on", "a", "mat", "x"])


def by_hand(tokens, d_model):
    """Q, K, V and the unmasked logits of the demo head, from its seeded parts (not from self_attention)."""
    w = attention_weights(d_model)
    e = token_embeddings(tokens, d_model)
    q, k, v = e @ w.w_q, e @ w.w_k, e @ w.w_v
    return q, k, v, (q @ k.T) / math.sqrt(d_model)


# --------------------------------------------------------------------------- the mask itself


def test_the_causal_mask_is_the_lower_triangle():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    np.testing.assert_array_equal(causal_mask(2, 3), [[1, 0, 0], [1, 1, 0]])
    with pytest.raises(ValueError, match="n_queries"):
        causal_mask(0)


def test_masked_softmax_worked_by_hand():
    # Logits all 0, causal: row i is uniform over keys 0…i → [1, 0, 0], [1/2, 1/2, 0], [1/3, 1/3, 1/3].
    scores, allowed = mask_logits(np.zeros((3, 3)), causal=True)
    np.testing.assert_array_equal(allowed, causal_mask(3))
    assert np.all(scores[~allowed] == -np.inf) and np.all(scores[allowed] == 0.0)
    a = softmax_rows(scores)
    np.testing.assert_array_equal(a[0], [1.0, 0.0, 0.0])  # one key: exp(0)/exp(0), exactly
    np.testing.assert_array_equal(a[1], [0.5, 0.5, 0.0])  # 1/(1 + 1): exact in binary
    np.testing.assert_allclose(a[2], [1 / 3, 1 / 3, 1 / 3], rtol=0, atol=EPS)
    assert np.all(a[~allowed] == 0.0)  # exp(−inf) = 0: not small, zero


def test_a_bias_is_added_before_the_mask_and_the_softmax_worked_by_hand():
    # Logits 0, bias B = [[0, 0, 0], [ln 3, 0, 0], [0, ln 2, 0]], causal:
    #   row 1 sees keys 0, 1: e^{ln 3} : e^0 = 3 : 1 → [3/4, 1/4, 0]
    #   row 2 sees all three: e^0 : e^{ln 2} : e^0 = 1 : 2 : 1 → [1/4, 1/2, 1/4]
    # exp(ln 3) is 3 within an ulp or two, so each weight is within a few ε.
    bias = np.array([[0.0, 0.0, 0.0], [math.log(3.0), 0.0, 0.0], [0.0, math.log(2.0), 0.0]])
    scores, allowed = mask_logits(np.zeros((3, 3)), causal=True, logit_bias=bias)
    np.testing.assert_array_equal(scores[allowed], bias[allowed])
    np.testing.assert_allclose(softmax_rows(scores), [[1, 0, 0], [0.75, 0.25, 0], [0.25, 0.5, 0.25]],
                               rtol=0, atol=4 * EPS)
    # A −∞ in the bias masks its key as well (ALiBi's causal form), without causal=True.
    scores, allowed = mask_logits(np.zeros((2, 2)), logit_bias=[[0.0, -np.inf], [0.0, 0.0]])
    np.testing.assert_array_equal(allowed, [[True, False], [True, True]])
    np.testing.assert_array_equal(softmax_rows(scores), [[1.0, 0.0], [0.5, 0.5]])


@pytest.mark.parametrize("bias, needle", [
    (np.zeros((2, 3)), r"shape \(queries, keys\) = \(3, 3\)"),
    (np.full((3, 3), np.nan), "NaN or \\+inf"),
    (np.full((3, 3), np.inf), "NaN or \\+inf"),
    ("zeros", "logit_bias must be a"),
    (np.array([[-np.inf, 0, 0], [0, 0, 0], [0, 0, 0]]), "masks every key of query 0"),
])
def test_a_bad_bias_names_logit_bias(bias, needle):
    with pytest.raises(ValueError, match=needle):
        self_attention(("dog", "bites", "man"), 4, causal=True, logit_bias=bias)


# --------------------------------------------------------------------------- one sentence, causal


def test_causal_trace_worked_by_hand():
    tokens = ("dog", "bites", "man")
    q, k, v, s = by_hand(tokens, 8)
    trace = self_attention(tokens, 8, causal=True)
    assert trace.causal and trace.masked
    np.testing.assert_array_equal(trace.allowed, causal_mask(3))
    np.testing.assert_array_equal(trace.keys_seen(), [1, 2, 3])
    np.testing.assert_allclose(trace.logits, s, rtol=0, atol=1e-14)  # the unmasked logits, kept
    assert np.all(trace.scores[~trace.allowed] == -np.inf)
    np.testing.assert_array_equal(trace.scores[trace.allowed], trace.logits[trace.allowed])
    a = trace.attention
    # Row 0 sees only itself: exactly [1, 0, 0], so the first word's output is its value vector, bit for bit.
    np.testing.assert_array_equal(a[0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(trace.output[0], trace.v[0])
    # Row 1 sees keys 0, 1: weights σ(s10 − s11) and σ(s11 − s10); key 2 gets exactly 0.
    w10 = 1.0 / (1.0 + math.exp(s[1, 1] - s[1, 0]))
    np.testing.assert_allclose(a[1], [w10, 1.0 - w10, 0.0], rtol=0, atol=1e-14)
    assert a[1, 2] == 0.0
    # Row 2 sees every key: the ordinary softmax.
    np.testing.assert_allclose(a[2], np.exp(s[2]) / np.exp(s[2]).sum(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(trace.output, a @ v, rtol=0, atol=1e-14)


def test_without_causal_the_trace_is_the_unmasked_head():
    trace = self_attention(("dog", "bites", "man"), 8)
    assert not trace.causal and not trace.masked and trace.bias is None
    assert trace.allowed.all()
    np.testing.assert_array_equal(trace.scores, trace.logits)


def test_a_trace_made_elsewhere_without_a_mask_fills_logits_and_allowed():
    # The Addition panel builds traces from its own parts: no logits, no mask given.
    s = np.array([[0.0, 1.0], [2.0, 3.0]])
    trace = AttentionTrace(("a", "b"), np.eye(2), None, np.eye(2), np.eye(2), np.eye(2), np.eye(2), s,
                           softmax_rows(s), softmax_rows(s))
    assert trace.logits is s and trace.allowed.all() and not trace.masked and not trace.causal


def test_a_bias_hook_worked_by_hand():
    tokens = ("dog", "bites", "man")
    _q, _k, v, s = by_hand(tokens, 8)
    # −∞ everywhere but one key per row: row 0 → key 2, row 1 → key 0, row 2 → key 1. Each row's
    # softmax has one entry, weight 1 exactly, so Z = V[[2, 0, 1]] bit for bit.
    pick = np.full((3, 3), -np.inf)
    pick[[0, 1, 2], [2, 0, 1]] = 0.0
    picked = self_attention(tokens, 8, logit_bias=pick)
    np.testing.assert_array_equal(picked.attention, [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(picked.output, picked.v[[2, 0, 1]])
    np.testing.assert_array_equal(picked.bias, pick)
    # A finite bias b at (1, 0) multiplies the odds of key 0 against key 1 in row 1 by e^b:
    # A'[1,0]/A'[1,1] = e^{s10 + ln 3 − s11} = 3·A[1,0]/A[1,1] (rows 0 and 2 unchanged).
    bias = np.zeros((3, 3))
    bias[1, 0] = math.log(3.0)
    plain = self_attention(tokens, 8)
    biased = self_attention(tokens, 8, logit_bias=bias)
    odds = biased.attention[1, 0] / biased.attention[1, 1]
    assert odds == pytest.approx(3.0 * math.exp(s[1, 0] - s[1, 1]), rel=1e-13)
    np.testing.assert_array_equal(biased.attention[[0, 2]], plain.attention[[0, 2]])
    np.testing.assert_array_equal(biased.logits, plain.logits)  # the bias is not part of the head's logits
    # The four-term split counts the bias: e·e + e·p + p·e + p·p + bias = S over the allowed keys.
    split = logit_split(self_attention(tokens, 8, scheme="sinusoidal", causal=True, logit_bias=bias))
    assert split.bias is not None and split.max_abs_residual <= 1e-14
    total = split.ee + split.ep + split.pe + split.pp + split.bias
    np.testing.assert_allclose(total[split.allowed], split.total[split.allowed], rtol=0, atol=1e-14)


def test_the_splits_leave_the_masked_keys_out():
    tokens = ("dog", "bites", "man")
    split = logit_split(self_attention(tokens, 8, scheme="sinusoidal", causal=True))
    np.testing.assert_array_equal(split.allowed, causal_mask(3))
    assert np.all(split.total[~split.allowed] == -np.inf)
    assert split.max_abs_residual <= 1e-14  # would be inf if the masked keys were counted
    assert np.all(np.isfinite(split.pp))  # the terms keep their values; the mask says the head ignores them
    unmasked = logit_split(self_attention(tokens, 8, scheme="sinusoidal"))
    np.testing.assert_array_equal(split.pp, unmasked.pp)
    # Shares over the six allowed entries only.
    sizes = {name: np.abs(t[split.allowed]).sum() for name, t in split.terms().items()}
    assert split.shares()["p·p"] == pytest.approx(sizes["p·p"] / sum(sizes.values()), rel=1e-14)
    rotated = rotation_split(self_attention(tokens, 8, scheme="rope", causal=True))
    np.testing.assert_array_equal(rotated.allowed, causal_mask(3))
    assert np.all(np.isfinite(rotated.rotated)) and rotated.shift_residual <= 1e-13


def test_causal_and_unmasked_traces_are_not_compared():
    with pytest.raises(ValueError, match="causal"):
        compare_orderings(self_attention(("a", "b"), 4, causal=True), self_attention(("b", "a"), 4))
    with pytest.raises(ValueError, match="causal must be True or False"):
        permutation_demo(causal="yes")


# --------------------------------------------------------------------------- NoPE + causal: order is seen


def test_nope_with_the_causal_mask_sees_the_order_of_two_words():
    # a = "dog man", b = "man dog", NoPE (X = E + 0), d_model 8, seed 0. With the mask:
    #   A_a = [[1, 0], [u, 1 − u]]  with u = σ(s_md − s_mm)   (man, second in a, looks at dog)
    #   A_b = [[1, 0], [w, 1 − w]]  with w = σ(s_dm − s_dd)   (dog, second in b, looks at man)
    # P (perm (1, 0)) aligns b to a: P A_a Pᵀ = [[1 − u, u], [0, 1]], so A_b − P A_a Pᵀ = [[u, −u], [w, −w]]
    # and max |A_b − P A_a Pᵀ| = max(u, w). For Z: Z_b[man] = v_man, P Z_a[man] = u·v_dog + (1 − u)·v_man,
    # a difference of u·(v_dog − v_man); Z_b[dog] − Z_a[dog] = w·(v_man − v_dog). So
    #   max |Z_b − P Z_a| = max(u, w) · max |v_dog − v_man|.
    # The head's logits (seeded): s_dd = −0.48608, s_dm = 1.20903, s_md = 0.25550, s_mm = 0.47519, so
    #   u = σ(−0.21968) = 0.44530, w = σ(1.69512) = 0.84490, max |v_dog − v_man| = 1.68336.
    _q, _k, v, s = by_hand(("dog", "man"), 8)
    np.testing.assert_allclose(s, [[-0.48608181, 1.20903287], [0.2555041, 0.47518804]], rtol=0, atol=1e-8)
    u = 1.0 / (1.0 + math.exp(s[1, 1] - s[1, 0]))
    w = 1.0 / (1.0 + math.exp(s[0, 0] - s[0, 1]))
    assert (u, w) == (pytest.approx(0.44529883, abs=1e-8), pytest.approx(0.84489561, abs=1e-8))
    demo = permutation_demo("dog man", "man dog", 8, "nope", causal=True)
    for comparison in (demo.without_pe, demo.with_pe):  # NoPE adds zeros: the same numbers, bit for bit
        assert comparison.max_abs_diff_attention == pytest.approx(max(u, w), rel=1e-14)
        assert comparison.max_abs_diff_output == pytest.approx(max(u, w) * np.max(np.abs(v[0] - v[1])), rel=1e-13)
        assert comparison.max_abs_diff_output == pytest.approx(1.42225370, abs=1e-8)
        assert not comparison.same
        mask = comparison.mask
        assert mask.words == ("dog", "man") and mask.keys_seen_a == (1, 2) and mask.keys_seen_b == (2, 1)
        assert mask.first_words == ("dog", "man") and mask.first_output_minus_value == (0.0, 0.0)
    np.testing.assert_array_equal(demo.with_pe.trace_b.output, demo.without_pe.trace_b.output)
    verdict = demo.with_pe.verdict
    assert verdict.startswith("With position and the causal mask they differ by 1.4 ")
    assert "attention weights by 0.84" in verdict
    assert "no position is added" in verdict and "the causal mask is itself positional" in verdict
    assert "“dog” 1 → 2, “man” 2 → 1" in verdict
    assert "max |Z[0] − V[0]| = 0 (“dog”, a) and 0 (“man”, b)" in verdict


def test_dog_bites_man_with_nope_and_the_causal_mask():
    demo = permutation_demo("dog bites man", "man bites dog", 8, "nope", causal=True)
    assert demo.causal
    mask = demo.with_pe.mask
    # dog: first in a (sees 1 key), last in b (sees 3); bites in the middle of both; man the other way.
    assert mask.keys_seen_a == (1, 2, 3) and mask.keys_seen_b == (3, 2, 1) and mask.changed == 2
    assert demo.with_pe.max_abs_diff_output == pytest.approx(1.40829523, abs=1e-8)
    assert demo.with_pe.max_abs_diff_attention == pytest.approx(0.86339741, abs=1e-8)
    lines = demo.verdict_lines()
    assert lines[0].startswith("Without position but with the causal mask they differ by 1.4")
    assert "“dog” 1 → 3, “bites” 2 → 2, “man” 3 → 1" in lines[0]
    assert lines[1].startswith("With position and the causal mask they differ by 1.4")


def _equivariance_bound(comparison) -> float:
    """How far Z_b may be from P Z_a by rounding alone, from the traces' own upstream differences.

    Z = softmax(S)·V. Reordering the words reorders the sums: the softmax normaliser (n terms) and
    A·V (n terms) each round to at most n·ε relative, and Σ a = 1, so together ≤ 2n·ε·max|V|. The
    projections of a row may round differently at another row index (BLAS kernels): a logit off by
    δS changes the weights by a relative 2·δS at most (e^{±δS} above and below), so Z by 2·δS·max|V|;
    V off by δV changes Z by δV (Σ a = 1). δS and δV are measured.
    """
    ta, tb = comparison.trace_a, comparison.trace_b
    p = np.asarray(comparison.permutation)
    n = len(p)
    delta_v = float(np.max(np.abs(tb.v - ta.v[p])))
    delta_s = float(np.max(np.abs(tb.scores - ta.scores[np.ix_(p, p)])))
    v_max = float(np.max(np.abs(ta.v)))
    return (2 * n + 1) * EPS * v_max + delta_v + 2 * delta_s * v_max


def test_nope_without_the_mask_stays_equivariant_to_rounding():
    demo = permutation_demo("dog bites man", "man bites dog", 8, "nope")
    assert not demo.causal and demo.with_pe.mask is None and demo.without_pe.mask is None
    for comparison in (demo.without_pe, demo.with_pe):
        bound = _equivariance_bound(comparison)
        assert bound < 5e-15  # max|V| = 1.81, n = 3: 7ε·1.81 = 2.8e-15 when the projections permute exactly
        assert comparison.max_abs_diff_output <= bound and comparison.same
    assert "same rows permuted" in demo.with_pe.verdict and "causal" not in demo.with_pe.verdict


@settings(max_examples=50, deadline=None)
@given(words=st.lists(WORDS, min_size=1, max_size=14), order=st.randoms(use_true_random=False),
       d_model=st.integers(2, 32), causal=st.booleans())
def test_equivariance_holds_without_the_mask_and_breaks_with_it(words, order, d_model, causal):
    shuffled = list(words)
    order.shuffle(shuffled)
    demo = permutation_demo(" ".join(words), " ".join(shuffled), d_model, "nope", causal=causal)
    comparison = demo.with_pe
    if not causal:
        assert comparison.max_abs_diff_output <= _equivariance_bound(comparison)
        return
    mask = comparison.mask
    # What the mask measures: word r of a sees r + 1 keys; its occurrence at position j of b sees j + 1.
    assert mask.keys_seen_a == tuple(range(1, len(words) + 1))
    in_b = {index: j for j, index in enumerate(comparison.permutation)}
    assert mask.keys_seen_b == tuple(in_b[r] + 1 for r in range(len(words)))
    assert mask.first_output_minus_value == (0.0, 0.0)
    for trace in (comparison.trace_a, comparison.trace_b):
        np.testing.assert_array_equal(trace.attention[~trace.allowed], 0.0)
        np.testing.assert_allclose(trace.attention.sum(axis=1), 1.0, rtol=0, atol=len(words) * EPS)


def test_sinusoidal_and_rope_with_the_mask_name_both_reasons():
    sinusoidal = permutation_demo("dog bites man", "man bites dog", 8, "sinusoidal", causal=True)
    assert "from the added encoding, and because the causal mask is itself positional" in sinusoidal.with_pe.verdict
    rope = permutation_demo("dog bites man", "man bites dog", 8, "rope", SCHEMES["rope"].check({}), causal=True)
    assert "offset n − m" in rope.with_pe.verdict and "the causal mask is itself positional" in rope.with_pe.verdict
    assert rope.split_b.allowed is not None and not rope.split_b.allowed[0, 1]


def test_the_same_order_with_the_mask_is_the_same():
    demo = permutation_demo("dog bites man", "dog bites man", 8, "nope", causal=True)
    assert demo.with_pe.max_abs_diff_output == 0.0 and demo.with_pe.same
    assert "same order" in demo.without_pe.verdict


def test_repeated_words_under_the_mask_are_told_apart_without_position():
    demo = permutation_demo("dog bites dog", "bites dog dog", 8, "nope", causal=True)
    plain, _positioned = demo.repeated["a"]["dog"]
    assert plain > 0.1  # the first dog sees itself only, the second all three words
    line = next(line for line in demo.verdict_lines() if line.startswith("“dog” occurs"))
    assert f"differ by {plain:.2g}, as the causal mask" in line


def test_json_of_the_causal_demo_says_causal_and_writes_null_for_masked_entries():
    demo = permutation_demo("dog bites man", "man bites dog", 4, "sinusoidal", causal=True)
    data = json.loads(json.dumps(demo.to_dict(), allow_nan=False))
    assert data["causal"] is True
    block = data["with_pe"]
    assert block["scores_a"][0][1] is None and block["scores_a"][1][0] is not None
    assert block["allowed_a"] == [[True, False, False], [True, True, False], [True, True, True]]
    assert block["attention_a"][0] == [1.0, 0.0, 0.0]
    assert block["mask"]["keys_seen_a"] == [1, 2, 3] and block["mask"]["keys_seen_b"] == [3, 2, 1]
    assert data["logit_split"]["a"]["p·p"][0][2] is None and data["logit_split"]["a"]["total"][2][2] is not None
    plain = json.loads(json.dumps(permutation_demo("dog bites man", "man bites dog", 4).to_dict(), allow_nan=False))
    assert plain["causal"] is False and plain["with_pe"]["mask"] is None
    assert all(value is not None for row in plain["with_pe"]["scores_a"] for value in row)


def test_five_hundred_words_with_the_mask():
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in rng.integers(0, 60, 500)]
    shuffled = [words[i] for i in rng.permutation(500)]
    demo = permutation_demo(" ".join(words), " ".join(shuffled), 16, "nope", causal=True)
    assert demo.with_pe.mask.keys_seen_a[-1] == 500 and demo.split_a.max_abs_residual <= 1e-10
    assert "of 500 words see a different number" in demo.with_pe.verdict
