"""The toy attention head of the Permutation demo (model layer, no Qt)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from waiting import TIMEOUT_S

from posenc_gui.model import EncodingParams, SCHEMES, encode
from posenc_gui.model.attention import (
    MAX_WORDS,
    ROTATION_SPLIT_NOTE,
    SHIFT_CHECK,
    HeadRotation,
    align_permutation,
    attention_weights,
    head_rotation,
    logit_split,
    permutation_demo,
    permutation_matrix,
    position_kind,
    rotation_split,
    self_attention,
    softmax_rows,
    token_embeddings,
    tokenize,
    word_embedding,
)

WORDS = st.sampled_from(["dog", "bites", "man", "the", "cat", "sat", "on", "a", "mat", "x"])


@st.composite
def sentence_and_permutation(draw, min_size=1, max_size=12):
    words = draw(st.lists(WORDS, min_size=min_size, max_size=max_size))
    order = draw(st.permutations(range(len(words))))
    return words, [words[i] for i in order]


# --------------------------------------------------------------------------- tokens


def test_tokenize_lowercases_and_strips_punctuation():
    assert tokenize("The Dog, bites   MAN!") == ("the", "dog", "bites", "man")
    assert tokenize("“Man” bites… dog's — tail") == ("man", "bites", "dog's", "tail")


@pytest.mark.parametrize("text", ["", "   ", "!!! ... —"])
def test_empty_sentence_names_the_parameter(text):
    with pytest.raises(ValueError, match="sentence_a"):
        permutation_demo(text, "dog bites man")
    with pytest.raises(ValueError, match="sentence_b"):
        permutation_demo("dog bites man", text)


def test_too_many_words_names_the_limit():
    with pytest.raises(ValueError, match=rf"sentence_b.*{MAX_WORDS}"):
        permutation_demo("dog", " ".join(["dog"] * (MAX_WORDS + 1)))


@pytest.mark.parametrize("d_model", [0, 1, 65, 2.5, "8", None])
def test_bad_d_model_names_the_range(d_model):
    with pytest.raises(ValueError, match=r"d_model.*2…64"):
        permutation_demo(d_model=d_model)


def test_bad_scheme_is_a_value_error():
    with pytest.raises(ValueError, match="scheme"):
        permutation_demo(scheme="no-such-scheme")
    with pytest.raises(ValueError, match="length"):
        permutation_demo(scheme="sinusoidal", scheme_kwargs={"length": 5})


# --------------------------------------------------------------------------- embeddings and weights


def test_same_word_same_vector_in_every_sentence():
    e1 = token_embeddings(("dog", "bites", "man"), 8)
    e2 = token_embeddings(("man", "bites", "dog", "dog"), 8)
    np.testing.assert_array_equal(e1[0], e2[2])
    np.testing.assert_array_equal(e2[2], e2[3])
    np.testing.assert_array_equal(e1[2], e2[0])
    assert not np.allclose(e1[0], e1[2])
    np.testing.assert_array_equal(word_embedding("dog", 8), e1[0])


def test_embeddings_do_not_depend_on_python_hash_seed():
    import subprocess
    import sys

    code = "from posenc_gui.model.attention import word_embedding; print(repr(word_embedding('dog', 4).tolist()))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=TIMEOUT_S,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == word_embedding("dog", 4).tolist()


def test_seed_changes_embeddings_and_weights():
    assert not np.allclose(word_embedding("dog", 8, seed=0), word_embedding("dog", 8, seed=1))
    assert not np.allclose(attention_weights(8, 0).w_q, attention_weights(8, 1).w_q)
    np.testing.assert_array_equal(attention_weights(8, 3).w_v, attention_weights(8, 3).w_v)


def test_weights_are_the_seeded_draw_drawn_once_and_read_only():
    from posenc_gui.model.attention import embeddings as attention

    attention._attention_weights.cache_clear()
    w = attention_weights(8, 3)
    draw = np.random.default_rng([3, 0x5EED, 8]).standard_normal((3, 8, 8)) / math.sqrt(8)
    for got, expected in zip((w.w_q, w.w_k, w.w_v), draw):
        np.testing.assert_array_equal(got, expected)
        with pytest.raises(ValueError):
            got[0, 0] = 1.0  # shared between traces: nobody may change them
    assert attention_weights(8, 3) is w and attention._attention_weights.cache_info().misses == 1


# --------------------------------------------------------------------------- one sentence


def test_trace_follows_the_formula_step_by_step():
    tokens = ("dog", "bites", "man")
    trace = self_attention(tokens, 6, scheme="sinusoidal", scheme_kwargs={"base": 10000.0})
    w = attention_weights(6)
    pe = encode("sinusoidal", [0, 1, 2], 6, base=10000.0)
    x = token_embeddings(tokens, 6) + pe
    np.testing.assert_array_equal(trace.positional, pe)
    np.testing.assert_allclose(trace.x, x, rtol=0, atol=1e-15)
    q, k, v = x @ w.w_q, x @ w.w_k, x @ w.w_v
    scores = np.array([[q[i] @ k[j] for j in range(3)] for i in range(3)]) / math.sqrt(6)
    np.testing.assert_allclose(trace.scores, scores, rtol=0, atol=1e-12)
    by_hand = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(trace.attention, by_hand, rtol=0, atol=1e-12)
    np.testing.assert_allclose(trace.attention.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(trace.output, by_hand @ v, rtol=0, atol=1e-12)
    assert set(trace.steps()) == {"X", "Q", "K", "V", "scores", "A", "Z"}


def test_trace_arrays_are_read_only():
    trace = self_attention(("dog",), 4)
    with pytest.raises(ValueError):
        trace.output[0, 0] = 1.0


def test_softmax_is_stable_for_huge_logits():
    a = softmax_rows(np.array([[1e6, 0.0, -1e6], [3.0, 3.0, 3.0]]))
    np.testing.assert_allclose(a, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], atol=1e-15)


# --------------------------------------------------------------------------- alignment


def test_alignment_matches_repeated_words_in_order():
    a = ("the", "dog", "chased", "another", "dog")
    b = ("dog", "another", "dog", "chased", "the")
    perm = align_permutation(a, b)
    assert perm == (1, 3, 4, 2, 0)
    assert [a[i] for i in perm] == list(b)
    p = permutation_matrix(perm)
    e_a, e_b = token_embeddings(a, 4), token_embeddings(b, 4)
    np.testing.assert_array_equal(p @ e_a, e_b)


@pytest.mark.parametrize(
    "a, b", [(("dog", "bites", "man"), ("dog", "bites")), (("dog", "dog"), ("dog", "man")), (("a",), ("b",))]
)
def test_no_alignment_for_different_words(a, b):
    assert align_permutation(a, b) is None


# --------------------------------------------------------------------------- the property of the notes


@settings(max_examples=60, deadline=None)
@given(pair=sentence_and_permutation(), d_model=st.integers(2, 16), seed=st.integers(0, 2**32 - 1))
def test_without_position_outputs_are_permuted_rows(pair, d_model, seed):
    a, b = pair
    demo = permutation_demo(" ".join(a), " ".join(b), d_model=d_model, seed=seed)
    assert demo.is_permutation and demo.message == ""
    assert demo.without_pe.max_abs_diff_output <= 1e-12
    assert demo.without_pe.max_abs_diff_attention <= 1e-12
    # Independently of the module's own measure: Z_b = P Z_a, A_b = P A_a Pᵀ.
    p = permutation_matrix(demo.permutation)
    za, zb = demo.without_pe.trace_a.output, demo.without_pe.trace_b.output
    aa, ab = demo.without_pe.trace_a.attention, demo.without_pe.trace_b.attention
    np.testing.assert_allclose(zb, p @ za, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ab, p @ aa @ p.T, rtol=0, atol=1e-12)
    assert "same rows permuted" in demo.without_pe.verdict


@settings(max_examples=40, deadline=None)
@given(pair=sentence_and_permutation(min_size=2), d_model=st.integers(4, 32))
def test_with_sinusoidal_position_outputs_differ(pair, d_model):
    a, b = pair
    assume(a != b)  # a real reordering, not the same sentence
    demo = permutation_demo(" ".join(a), " ".join(b), d_model=d_model, scheme="sinusoidal",
                            scheme_kwargs={"base": 10000.0, "layout": "interleaved"})
    assert demo.with_pe.max_abs_diff_output > 1e-6
    p = permutation_matrix(demo.permutation)
    diff = np.max(np.abs(demo.with_pe.trace_b.output - p @ demo.with_pe.trace_a.output))
    assert diff == pytest.approx(demo.with_pe.max_abs_diff_output, abs=1e-14)
    assert f"{demo.with_pe.max_abs_diff_output:.2g}" in demo.with_pe.verdict


def test_dog_bites_man():
    demo = permutation_demo("dog bites man", "man bites dog")
    assert demo.tokens_a == ("dog", "bites", "man") and demo.tokens_b == ("man", "bites", "dog")
    assert demo.permutation == (2, 1, 0)
    assert demo.without_pe.same and not demo.with_pe.same
    assert demo.with_pe.max_abs_diff_output > 0.05


def test_same_order_with_position_is_the_same():
    demo = permutation_demo("dog bites man", "Dog bites man.")
    assert demo.with_pe.max_abs_diff_output == 0.0 and demo.with_pe.same


#: The schemes that give a table, which the demo adds to the embeddings (learned_file's needs a model file:
#: tests/test_model_in_app.py runs the demo on one).
TABLES = sorted(key for key, info in SCHEMES.items() if "table" in info.provides and info.sizes is None)


@pytest.mark.parametrize("scheme", [key for key in TABLES if key != "nope"])
def test_every_scheme_of_the_app_breaks_the_symmetry(scheme):
    kwargs = EncodingParams(scheme=scheme).scheme_kwargs()
    demo = permutation_demo("dog bites man", "man bites dog", scheme=scheme, scheme_kwargs=kwargs)
    assert demo.without_pe.max_abs_diff_output <= 1e-12
    assert demo.with_pe.max_abs_diff_output > 1e-6


def test_nope_leaves_attention_permutation_invariant():
    demo = permutation_demo("dog bites man", "man bites dog", scheme="nope")
    for with_pe, without_pe in ((demo.with_pe.trace_a, demo.without_pe.trace_a),
                                (demo.with_pe.trace_b, demo.without_pe.trace_b)):
        np.testing.assert_array_equal(with_pe.positional, 0.0)
        np.testing.assert_array_equal(with_pe.output, without_pe.output)  # E + 0 is E, bit for bit
    z_a, z_b = demo.with_pe.trace_a.output, demo.with_pe.trace_b.output
    np.testing.assert_allclose(z_b, z_a[list(demo.permutation)], rtol=0, atol=1e-12)
    assert demo.with_pe.same and demo.with_pe.max_abs_diff_output == demo.without_pe.max_abs_diff_output
    assert "same vector" in demo.with_pe.verdict and "cannot see word order" in demo.with_pe.verdict


def test_repeated_words_have_identical_rows_without_position():
    demo = permutation_demo("the dog chased another dog", "dog bites man")
    assert not demo.is_permutation
    z = demo.without_pe.trace_a.output
    np.testing.assert_allclose(z[1], z[4], rtol=0, atol=1e-12)
    zp = demo.with_pe.trace_a.output
    assert np.max(np.abs(zp[1] - zp[4])) > 1e-6
    plain, positioned = demo.repeated["a"]["dog"]
    assert plain <= 1e-12 and positioned > 1e-6
    assert any("“dog”" in line for line in demo.verdict_lines())


# --------------------------------------------------------------------------- four-term split


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(WORDS, min_size=1, max_size=10),
    d_model=st.integers(2, 24),
    scheme=st.sampled_from(TABLES),
)
def test_four_terms_sum_to_the_logits(words, d_model, scheme):
    kwargs = EncodingParams(scheme=scheme, seq_len=16).scheme_kwargs()
    trace = self_attention(words, d_model, scheme=scheme, scheme_kwargs=kwargs)
    split = logit_split(trace)
    total = split.ee + split.ep + split.pe + split.pp
    scale = max(1.0, float(np.max(np.abs(trace.scores))))
    assert np.max(np.abs(total - trace.scores)) <= 1e-12 * scale
    assert split.max_abs_residual <= 1e-12 * scale
    # e·e is exactly the logits of the sentence without position.
    plain = self_attention(words, d_model)
    np.testing.assert_allclose(split.ee, plain.scores, rtol=0, atol=1e-12 * scale)
    shares = split.shares()
    assert sum(shares.values()) == pytest.approx(1.0)


def test_split_needs_position():
    with pytest.raises(ValueError, match="positional"):
        logit_split(self_attention(("dog",), 4))


# --------------------------------------------------------------------------- edge cases and JSON


def test_not_a_permutation_is_a_result_not_an_error():
    demo = permutation_demo("dog bites man", "the cat sat")
    assert not demo.is_permutation
    assert demo.without_pe.max_abs_diff_output is None and demo.with_pe.max_abs_diff_attention is None
    assert "not a reordering" in demo.message and "only in b: cat, sat, the" in demo.message
    assert demo.verdict_lines()[0] == demo.message
    assert demo.without_pe.trace_b.output.shape == (3, 8)


def test_different_lengths_are_not_a_permutation():
    demo = permutation_demo("dog bites man", "man bites")
    assert not demo.is_permutation and "only in a: dog" in demo.message


def test_five_hundred_words_work():
    rng = np.random.default_rng(7)
    vocabulary = [f"w{i}" for i in range(60)]
    words = list(rng.choice(vocabulary, size=500))
    shuffled = list(np.array(words)[rng.permutation(500)])
    demo = permutation_demo(" ".join(words), " ".join(shuffled), d_model=16)
    assert len(demo.tokens_a) == 500
    assert demo.without_pe.max_abs_diff_output <= 1e-12
    assert demo.with_pe.max_abs_diff_output > 1e-6
    assert demo.split_a.max_abs_residual <= 1e-10


def test_naive_positions_on_long_sentences_stay_finite():
    words = " ".join(f"w{i % 37}" for i in range(MAX_WORDS))
    demo = permutation_demo(words, words, d_model=8, scheme="naive")
    assert np.all(np.isfinite(demo.with_pe.trace_a.attention))
    np.testing.assert_allclose(demo.with_pe.trace_a.attention.sum(axis=1), 1.0, atol=1e-12)


def test_json_dict_has_the_issue_keys_and_round_trips():
    demo = permutation_demo("dog bites man", "man bites dog", d_model=4)
    data = json.loads(json.dumps(demo.to_dict(), allow_nan=False))
    assert data["tokens_a"] == ["dog", "bites", "man"] and data["tokens_b"] == ["man", "bites", "dog"]
    for key, comparison in (("without_pe", demo.without_pe), ("with_pe", demo.with_pe)):
        block = data[key]
        for name in ("attention_a", "attention_b", "output_a", "output_b",
                     "max_abs_diff_output", "max_abs_diff_attention"):
            assert name in block
        np.testing.assert_array_equal(np.array(block["attention_b"]), comparison.trace_b.attention)
        np.testing.assert_array_equal(np.array(block["output_a"]), comparison.trace_a.output)
        assert block["max_abs_diff_output"] == comparison.max_abs_diff_output
    split = data["logit_split"]["a"]
    np.testing.assert_array_equal(np.array(split["p·p"]), demo.split_a.pp)


def test_json_of_a_non_permutation_uses_null():
    data = json.loads(json.dumps(permutation_demo("dog", "cat").to_dict(), allow_nan=False))
    assert data["is_permutation"] is False and data["permutation"] is None
    assert data["with_pe"]["max_abs_diff_output"] is None
    assert data["message"]


# --------------------------------------------------------------------------- RoPE: Q and K rotated by position

EPS = np.finfo(np.float64).eps


def rope_kwargs(**options):
    return SCHEMES["rope"].check(options)  # every option, defaults filled in


def test_the_demo_adds_a_table_and_rotates_with_rope():
    assert position_kind("sinusoidal") == "added" and position_kind("nope") == "added"
    assert position_kind("rope") == "rotation"
    with pytest.raises(ValueError, match="scheme"):
        position_kind("no-such-scheme")


def test_a_rotated_logit_worked_by_hand():
    # d_k 2, one pair (channels 0 and 1), θ = 1, positions 0 and 1. rope_rotate turns (a, b) at p into
    # (a·cos p − b·sin p, a·sin p + b·cos p). Both words: q = (1, 0), k = (0, 1).
    #   S[0, 1]: q at 0 stays (1, 0); k at 1 becomes (−sin 1, cos 1): q·k = −sin 1, so S = −sin(1)/√2
    #   S[1, 0]: q at 1 becomes (cos 1, sin 1); k at 0 stays (0, 1): q·k = +sin 1, S = +sin(1)/√2
    #   S[0, 0] = (1, 0)·(0, 1) = 0;  S[1, 1] = (cos 1, sin 1)·(−sin 1, cos 1) = 0
    # That is q·R((n − m)θ)k with R the counter-clockwise rotation: offset +1 gives −sin 1.
    q, k = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, 1.0]])
    rotation = HeadRotation(np.array([0.0, 1.0]), np.array([1.0]), 1.0, "halves")
    s = 0.8414709848078965 / math.sqrt(2)  # sin(1) = 0.8414709848078965
    np.testing.assert_allclose(rotation.logits(q, k), [[0.0, -s], [s, 0.0]], rtol=0, atol=4 * EPS)
    # HF's attention factor multiplies cos and sin of q and of k: the logit by its square.
    scaled = HeadRotation(np.array([0.0, 1.0]), np.array([1.0]), 2.0, "halves")
    np.testing.assert_allclose(scaled.logits(q, k), [[0.0, -4 * s], [4 * s, 0.0]], rtol=0, atol=16 * EPS)
    # A channel past the rotary ones passes through unrotated and unscaled: (0, 0, 1, 0)·(0, 0, 1, 0)/√4 = 1/2.
    wide = np.array([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(scaled.logits(wide, wide), np.full((2, 2), 0.5))


def test_the_trace_rotates_q_and_k_by_position_and_leaves_v_alone():
    # rope_theta 100, d_k 4, halves: θ = 100^(−0/4), 100^(−2/4) = (1, 0.1); pairs (0, 2) and (1, 3).
    tokens = ("dog", "bites", "man")
    kwargs = rope_kwargs(rope_theta=100.0)
    trace = self_attention(tokens, 4, scheme="rope", scheme_kwargs=kwargs)
    plain = self_attention(tokens, 4)
    w = attention_weights(4)
    e = token_embeddings(tokens, 4)
    assert trace.positional is None and trace.with_position
    np.testing.assert_array_equal(trace.x, e)  # RoPE adds nothing to X
    np.testing.assert_array_equal(trace.q, e @ w.w_q)
    np.testing.assert_array_equal(trace.v, plain.v)
    np.testing.assert_array_equal(trace.rotation.inv_freq, [1.0, 0.1])
    np.testing.assert_array_equal(trace.rotation.positions, [0.0, 1.0, 2.0])

    def rotate(x):
        out = x.copy()
        for m in range(3):
            for i, (a, b) in enumerate(((0, 2), (1, 3))):
                angle = m * (1.0, 0.1)[i]
                out[m, a] = x[m, a] * math.cos(angle) - x[m, b] * math.sin(angle)
                out[m, b] = x[m, a] * math.sin(angle) + x[m, b] * math.cos(angle)
        return out

    q, k = rotate(e @ w.w_q), rotate(e @ w.w_k)
    np.testing.assert_allclose(trace.q_rotated, q, rtol=0, atol=1e-15)
    np.testing.assert_allclose(trace.k_rotated, k, rtol=0, atol=1e-15)
    scores = q @ k.T / 2.0  # √d_k = 2
    np.testing.assert_allclose(trace.scores, scores, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(trace.unrotated_scores, plain.scores)  # the same head without the rotation
    by_hand = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(trace.output, by_hand @ plain.v, rtol=0, atol=1e-14)
    assert list(trace.steps()) == ["X", "Q", "K", "Q_rotated", "K_rotated", "V", "scores", "A", "Z"]


@settings(max_examples=30, deadline=None)
@given(pair=sentence_and_permutation(min_size=2, max_size=8), d_model=st.sampled_from([2, 4, 6, 8, 16]))
def test_without_rotation_outputs_permute_and_with_it_they_do_not(pair, d_model):
    a, b = pair
    assume(a != b)  # a reordering that changes the sentence
    assume(len(set(a)) == len(a))  # distinct words: every pair of them changes its offset
    # rope_theta 2: θ_i = 2^(−2i/d) ≥ 1/2 for every pair, so each pair turns ≥ 0.5 rad per position.
    demo = permutation_demo(" ".join(a), " ".join(b), d_model, "rope", rope_kwargs(rope_theta=2.0))
    assert demo.without_pe.max_abs_diff_output <= 1e-12 and demo.without_pe.same
    assert demo.with_pe.max_abs_diff_output > 1e-4 and not demo.with_pe.same
    assert demo.with_pe.verdict.startswith("With RoPE they differ by")
    assert "offset n − m" in demo.with_pe.verdict


def test_dog_bites_man_with_rope_and_every_pair_turning():
    # rope_theta 2, d_k 8: θ = 2^(−i/4) = 1, 0.84, 0.71, 0.59; at offsets 1 and 2 every pair turns by
    # 0.59 … 2 rad, so every off-diagonal logit changes; on the diagonal (offset 0) none does.
    demo = permutation_demo("dog bites man", "man bites dog", 8, "rope", rope_kwargs(rope_theta=2.0))
    np.testing.assert_allclose(demo.with_pe.trace_a.rotation.inv_freq, 2.0 ** (-np.arange(4) / 4), rtol=4 * EPS)
    split = demo.split_a
    off = ~np.eye(3, dtype=bool)
    assert np.all(np.abs(split.difference[off]) > 1e-3)
    scale = float(np.max(np.abs(split.unrotated)))
    np.testing.assert_allclose(np.diag(split.difference), 0.0, rtol=0, atol=16 * EPS * scale)
    np.testing.assert_allclose(split.rotated - split.unrotated, split.difference, rtol=0, atol=0)
    lines = demo.verdict_lines()
    assert lines[0].startswith("Without position the outputs are the same rows permuted")
    assert lines[1].startswith(f"With RoPE they differ by {demo.with_pe.max_abs_diff_output:.2g}")


@settings(max_examples=40, deadline=None)
@given(words=st.lists(WORDS, min_size=1, max_size=10), d_model=st.sampled_from([2, 4, 8, 16, 64]),
       shift=st.floats(0.0, 1e4), theta=st.sampled_from([2.0, 100.0, 10000.0]))
def test_shifting_every_position_leaves_the_rotated_logits_alone(words, d_model, shift, theta):
    trace = self_attention(words, d_model, scheme="rope", scheme_kwargs=rope_kwargs(rope_theta=theta))
    shifted = trace.rotation.logits(trace.q, trace.k, shift)
    # The angles (m + c)θ_i carry rounding of about (m + c)·ε rad; a logit sums d_k products of
    # |q|·|k| at most, over √d_k: the change is bounded by ~(n + c)·ε·d_k·max|q|·max|k|.
    size = float(np.max(np.abs(trace.q)) * np.max(np.abs(trace.k))) * d_model
    bound = 8 * EPS * (len(words) + shift + 1) * size
    assert np.max(np.abs(shifted - trace.scores)) <= bound
    split = rotation_split(trace)
    assert split.shift_residual <= 8 * EPS * (len(words) + SHIFT_CHECK + 1) * size


def test_moving_one_word_changes_the_rotated_logits():
    # The shift check can fail: positions that move by different amounts change the offsets.
    trace = self_attention(("dog", "bites", "man"), 4, scheme="rope", scheme_kwargs=rope_kwargs())
    moved = HeadRotation(np.array([0.0, 1.0, 5.0]), trace.rotation.inv_freq, 1.0, "halves")
    assert np.max(np.abs(moved.logits(trace.q, trace.k) - trace.scores)) > 1e-3


def test_yarn_scales_the_rotated_channels_logits_by_the_attention_factor_squared():
    # YaRN factor 4: attention factor 0.1·ln 4 + 1 = 1.1386294361; at offset 0 the rotation itself
    # changes nothing, so the diagonal is af² = 1.2964767 times the unrotated one (all channels rotate).
    demo = permutation_demo("dog bites man", "man bites dog", 8, "rope", rope_kwargs(rope_type="yarn"))
    rotation = demo.with_pe.trace_a.rotation
    assert rotation.attention_factor == pytest.approx(1.1386294361119891, rel=1e-15)
    split = demo.split_a
    np.testing.assert_allclose(np.diag(split.rotated), 1.1386294361119891 ** 2 * np.diag(split.unrotated),
                               rtol=1e-13)


def test_llama31_rotation_at_the_demo_head_dimension():
    # Llama 3.1: rope_theta 500000, llama3 ×8 from L₀ 8192 (low 1, high 4), at the demo's d_k 8:
    # θ_i = 500000^(−i/4) = 1, 0.0376, 0.00141, 5.32e-5, wavelengths 2π/θ = 6.3, 167, 4443, 118,000.
    # Below L₀/4 = 2048 kept (pairs 0, 1); above L₀ = 8192 divided by 8 (pair 3); pair 2 smoothed with
    # s = (8192/4443.3 − 1)/(4 − 1): θ·((1 − s)/8 + s).
    kwargs = rope_kwargs(rope_theta=500000.0, rope_type="llama3", factor=8.0, original_max_position_embeddings=8192)
    rotation = head_rotation(3, 8, "rope", kwargs)
    theta = 500000.0 ** (-np.arange(4) / 4)
    s = (8192 / (2 * math.pi / theta[2]) - 1) / 3
    expected = [theta[0], theta[1], theta[2] * ((1 - s) / 8 + s), theta[3] / 8]
    np.testing.assert_allclose(rotation.inv_freq, expected, rtol=1e-14)
    assert rotation.attention_factor == 1.0 and rotation.pairing == "halves"


@pytest.mark.parametrize("d_model, options, rotated", [(5, {}, 5), (4, {"partial_rotary_factor": 0.1}, 0)])
def test_a_head_too_narrow_for_its_rotated_pairs_names_the_demo_d_model(d_model, options, rotated):
    # 5 channels: ceil(5/2) = 3 pairs need 6; int(4 × 0.1) = 0: no pair at all
    with pytest.raises(ValueError, match=rf"d_model: the demo head's d_k {d_model} .* = {rotated}; Hugging Face"):
        permutation_demo(d_model=d_model, scheme="rope", scheme_kwargs=rope_kwargs(**options))


def test_an_odd_rotary_dimension_turns_ceil_d_over_2_pairs_as_hugging_face_does():
    # int(4 × 0.25) = 1: HF's arange(0, 1, 2) / 1 = [0], one frequency 10000^0 = 1 turning channels 0 and 1
    rotation = head_rotation(3, 4, "rope", rope_kwargs(partial_rotary_factor=0.25))
    assert rotation.inv_freq.tolist() == [1.0] and rotation.rotary_dim == 2


def test_the_four_term_split_is_refused_for_a_rotation_and_the_rotation_split_for_a_table():
    rotated = self_attention(("dog", "man"), 4, scheme="rope")
    with pytest.raises(ValueError, match="applies to encodings added to the embeddings only"):
        logit_split(rotated)
    with pytest.raises(ValueError, match="no rotation"):
        rotation_split(self_attention(("dog", "man"), 4, scheme="sinusoidal"))
    split = rotation_split(rotated)
    assert split.note == ROTATION_SPLIT_NOTE and "four-term split" in split.note
    assert list(split.terms()) == ["without rotation", "with rotation", "difference"]


def test_json_dict_of_a_rotation_has_its_split_and_frequencies():
    demo = permutation_demo("dog bites man", "man bites dog", 4, "rope", rope_kwargs())
    data = json.loads(json.dumps(demo.to_dict(), allow_nan=False))
    assert data["position"] == "rotation" and data["logit_split"] is None
    assert data["rotation"] == {"inv_freq": [1.0, 0.01], "attention_factor": 1.0, "pairing": "halves",
                                "rotary_dim": 4}  # 10000^(−2/4) = 0.01
    block = data["rotation_split"]["b"]
    np.testing.assert_array_equal(np.array(block["with_rotation"]), demo.with_pe.trace_b.scores)
    np.testing.assert_array_equal(np.array(block["without_rotation"]), demo.without_pe.trace_b.scores)
    assert block["shift_residual"] == demo.split_b.shift_residual
    assert "four-term split" in data["rotation_split"]["note"]
    table = permutation_demo().to_dict()
    assert table["position"] == "added" and table["rotation"] is None and table["rotation_split"] is None


def test_a_repeated_word_with_rope_gets_its_own_rows():
    demo = permutation_demo("the dog saw the cat", "the cat saw the dog", 8, "rope", rope_kwargs())
    plain, rotated = demo.repeated["a"]["the"]
    assert plain <= 1e-12 and rotated > 1e-6
    assert any("with RoPE they differ by" in line for line in demo.verdict_lines())


def test_an_xpos_head_is_named_xpos_not_rope_in_every_verdict():
    """xPos rotates Q and K too, with a scale per pair: the demo's texts name the rotation it applies."""
    params = EncodingParams("xpos", 128, 8)
    demo = permutation_demo("dog bites man dog", "man bites dog dog", 8, "xpos", params.scheme_kwargs())
    assert demo.rotates and demo.with_pe.trace_a.rotation.zeta is not None
    assert demo.rotation_name == "xPos"
    assert demo.with_pe.verdict.startswith("With xPos they differ by")
    lines = demo.verdict_lines()
    assert lines[1].startswith("With xPos") and any("with xPos they differ by" in line for line in lines)
    assert not any("RoPE" in line for line in lines)
    rope = permutation_demo("dog bites man", "man bites dog", 8, "rope", rope_kwargs(rope_theta=2.0))
    assert rope.rotation_name == "RoPE" and rope.with_pe.verdict.startswith("With RoPE")
