"""The permutation demo with a bias scheme: the bias added to the head's logits (ALiBi, T5)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers_panels import show_panel
from posenc_gui.model.attention import permutation_demo, self_attention
from posenc_gui.model.bias import alibi_bias
from posenc_gui.model.core.params import EncodingParams
from posenc_gui.views.permutation import PermutationPanel

ALIBI = {"n_heads": 8, "head": 0, "symmetric": False}


def test_alibis_bias_is_added_to_the_plain_logits():
    # head 0 of 8: slope 2^(−8/8) = 1/2, the paper's causal bias −(i − j)/2 for keys j ≤ i, −∞ after
    trace = self_attention(["dog", "bites", "man"], 8, scheme="alibi", scheme_kwargs=ALIBI)
    expected = np.array([[0.0, -np.inf, -np.inf], [-0.5, 0.0, -np.inf], [-1.0, -0.5, 0.0]])
    np.testing.assert_array_equal(trace.bias, expected)
    plain = self_attention(["dog", "bites", "man"], 8)
    seen = np.isfinite(expected)
    # the bias is exact (halves); one addition rounds: within an ULP of the larger
    np.testing.assert_allclose(trace.scores[seen], (plain.scores + expected)[seen], rtol=0, atol=4.5e-16)
    assert np.all(trace.attention[~seen] == 0) and trace.with_position and trace.positional is None
    np.testing.assert_array_equal(trace.bias, alibi_bias([0, 1, 2], [0, 1, 2], 0.5))


def test_the_demo_says_a_bias_sees_order_and_when_it_cannot():
    demo = permutation_demo("dog bites man", "man bites dog", scheme="alibi", scheme_kwargs=ALIBI)
    assert demo.biased and not demo.rotates and not demo.with_pe.same and demo.without_pe.same
    assert demo.verdict_lines()[1].startswith("With the bias they differ")
    assert demo.split_a.max_abs_residual < 1e-15  # QKᵀ/√d_k + B = S over the keys each word sees
    # a reversal keeps every |i − j|: a symmetric bias cannot tell the two sentences apart
    symmetric = permutation_demo("dog bites man", "man bites dog", scheme="alibi",
                                 scheme_kwargs={**ALIBI, "symmetric": True})
    assert symmetric.with_pe.same and "gives every pair of words the bias it had" in symmetric.verdict_lines()[1]
    # another order changes the distances: then it sees order
    moved = permutation_demo("the dog bites man", "dog the bites man", scheme="alibi",
                             scheme_kwargs={**ALIBI, "symmetric": True})
    assert not moved.with_pe.same


@pytest.mark.parametrize(("scheme", "kwargs"), [("alibi", ALIBI),
                                               ("t5", EncodingParams.validated(scheme="t5").scheme_kwargs())])
def test_the_exported_split_holds_the_bias_and_its_terms_add_up_to_the_total(scheme, kwargs):
    demo = permutation_demo("dog bites man", "man bites dog", scheme=scheme, scheme_kwargs=kwargs)
    data = json.loads(json.dumps(demo.to_dict(), allow_nan=False))
    assert data["position"] == "bias"
    for key, split in (("a", demo.split_a), ("b", demo.split_b)):
        block = data["logit_split"][key]
        assert block["sum_of"] == ["e·e", "e·p", "p·e", "p·p", "bias"]
        used = split.allowed
        def matrix(name):  # null (a masked key) as NaN
            return np.array([[np.nan if v is None else v for v in row] for row in block[name]])

        terms, total = [matrix(name) for name in block["sum_of"]], matrix("total")
        # the four terms alone miss the bias, which is not small (ALiBi: 1/2 per word of distance)
        assert np.max(np.abs(sum(terms[:4])[used] - total[used])) > 0.1
        # with it they give the total: one addition per term, each within an ULP of |total| + |bias| ≲ 10
        np.testing.assert_allclose(sum(terms)[used], total[used], rtol=0, atol=1e-14)
        assert block["max_abs_residual"] <= 1e-14
        np.testing.assert_array_equal(terms[4][used], split.bias[used])
        # the bias is a share of the total's size; the three position terms of X are zero
        bias_size = np.abs(split.bias[used]).sum()
        sizes = bias_size + np.abs(split.ee[used]).sum()
        assert block["shares"]["bias"] == pytest.approx(bias_size / sizes, rel=1e-12)
        assert block["shares"]["e·p"] == block["shares"]["p·p"] == 0.0
        assert sum(block["shares"].values()) == pytest.approx(1.0, rel=1e-12)


@pytest.fixture
def panel(qtbot, state, compute):
    return show_panel(qtbot, PermutationPanel(state, compute), (1200, 900))


def test_the_panel_shows_the_bias_row_and_its_split(panel):
    assert panel.state.update(scheme="alibi", **ALIBI) is None
    panel.state.flush()
    assert panel.compute.wait_idle()
    assert not panel.unavailable_label.isVisible()
    bias = panel.figure.matrices["B_a"]
    assert bias.isVisible() and panel.figure.step_labels["B"].isVisible()
    np.testing.assert_array_equal(bias.values, panel.demo.with_pe.trace_a.bias)
    assert bias.masked is not None and bias.masked[0, 1] and not bias.masked[1, 0]  # upper triangle masked
    assert not panel.figure.matrices["PE_a"].isVisible()  # nothing is added to X
    assert panel.figure.split_strips["bias_a"].isVisible() and not panel.figure.split_strips["table_a"].isVisible()
    np.testing.assert_array_equal(panel.figure.matrices["split_a_bias B"].values, panel.demo.split_a.bias)
    assert "With the bias" in panel.figure.title_label.text
    np.testing.assert_array_equal(panel.export_data()["arrays"]["split_a_bias"], panel.demo.split_a.bias)
    # back to an added table: the B row and the bias strip go
    assert panel.state.update(scheme="sinusoidal") is None
    panel.state.flush()
    assert panel.compute.wait_idle()
    assert not panel.figure.matrices["B_a"].isVisible() and panel.figure.split_strips["table_a"].isVisible()


@pytest.fixture
def spin():
    from posenc_gui.model import Scheme, register, unregister

    register(Scheme(key="spin", label="Spin (test rotation)", summary="", formula="", order=95, family="rotation"))
    yield
    unregister("spin")


def test_a_panel_built_with_a_scheme_it_cannot_show_gives_its_notice(qtbot, state, compute, spin):
    # built while a rotation that declares no rotation hook is chosen: the notice, not the model's refusal
    assert state.update(scheme="spin", d_model=64) is None
    state.flush()
    widget = show_panel(qtbot, PermutationPanel(state, compute), None)
    assert widget.unavailable_label.isVisible() and "does not apply" in widget.unavailable_label.text()
    assert not widget.message_label.isVisible() and widget.demo is None
    assert state.update(scheme="sinusoidal") is None  # before the scheme is unregistered with the panel alive
    state.flush()
    assert compute.wait_idle()
