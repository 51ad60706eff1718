"""The permutation demo with a real decoder: two orderings of one text through a tiny Llama, causally."""

from __future__ import annotations

import json

import numpy as np
import pytest
from decoder_files import reference_attention, tiny_config, tiny_weights
from test_decoder_panel import settle, show_panel, tiny, tokenizer  # noqa: F401 - fixtures

from posenc_gui.cli import export as export_cli
from posenc_gui.model import open_decoder
from posenc_gui.model.decoder.orderings import compare_orderings, token_order, trace_orderings
from posenc_gui.model.decoder.view_data import trace_text
from posenc_gui.views.decoder import VIEW_NAMES

TEXT_A, TEXT_B = "the cat, the mat", "the mat, the cat"
#: float32 trace against the float64 reference (as test_decoder's tolerance for these weights).
REFERENCE_ATOL = 2e-5
#: A vector rotated by RoPE in float32 and rotated back in float64: a few float32 roundings of |x| ~ 1 … 10.
ROUNDING_ATOL = 1e-5


def _softmax_rows(logits: np.ndarray, seen: np.ndarray) -> np.ndarray:
    shifted = np.where(seen, logits, -np.inf)
    weights = np.exp(shifted - shifted.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


@pytest.fixture
def comparison(tiny):  # noqa: F811 - the fixture imported above
    return compare_orderings(trace_text(str(tiny), TEXT_A), trace_text(str(tiny), TEXT_B))


def test_tokens_are_matched_by_their_words_and_a_text_that_is_no_reordering_is_named():
    assert token_order(("the", " cat", ",", " the", " mat"), ("the", " mat", ",", " the", " cat")).tolist() == [
        0, 4, 2, 3, 1]
    assert token_order(("dog", " bites", " man"), ("man", " bites", " dog")).tolist() == [2, 1, 0]
    with pytest.raises(ValueError, match="text_b must hold text_a's tokens in another order"):
        token_order(("dog", " bites"), ("cat", " bites"))


def test_both_attentions_are_each_orderings_own_in_the_first_ones_token_order(tiny, tokenizer,  # noqa: F811
                                                                             comparison):
    decoder = open_decoder(tiny)
    weights = tiny_weights(vocab=tokenizer.get_vocab_size())  # as the fixture wrote them
    config = tiny_config(weights)
    reference_a = reference_attention(weights, config, decoder.tokenize(TEXT_A))
    reference_b = reference_attention(weights, config, decoder.tokenize(TEXT_B))
    order = comparison.order
    assert order.tolist() == [0, 4, 2, 3, 1] and comparison.same_id.all()
    for layer in (0, 1):
        np.testing.assert_allclose(comparison.attention_a[layer], reference_a[layer], atol=REFERENCE_ATOL)
        np.testing.assert_allclose(comparison.attention_b[layer], reference_b[layer][:, order][:, :, order],
                                   atol=REFERENCE_ATOL)
        # the logits are the ones the softmax saw: each ordering's mask over them gives its attention
        np.testing.assert_allclose(_softmax_rows(comparison.logits_a[layer], comparison.seen_a),
                                   comparison.attention_a[layer], atol=1e-5)
        np.testing.assert_allclose(_softmax_rows(comparison.logits_b[layer], comparison.seen_b),
                                   comparison.attention_b[layer], atol=1e-5)
    assert comparison.seen_b.tolist() == (order[:, None] >= order[None, :]).tolist()


def test_the_change_splits_into_position_and_context_as_the_mask_and_rope_say(comparison):
    # Layer 0: a token's vectors before RoPE depend on its id alone, so equal ids move by rounding only
    # and the logit's whole change is RoPE's (B's vectors at A's positions are A's).
    assert comparison.query_change[0].max() < ROUNDING_ATOL and comparison.key_change[0].max() < ROUNDING_ATOL
    assert comparison.largest(comparison.logits_b_at_a - comparison.logits_a, 0) < ROUNDING_ATOL
    assert comparison.largest(comparison.logits_b - comparison.logits_a, 0) > 1e-3  # the comparison can fail
    # Layer 1: tokens read other tokens before them; token 0 reads itself only in both orderings.
    assert comparison.query_change[1][:, 1:].max() > 1e-3
    assert comparison.query_change[1][:, 0].max() < ROUNDING_ATOL
    # A pair at the same offset in both orderings has no position part: RoPE sees only the offset.
    offset_a = np.arange(5)[:, None] - np.arange(5)[None, :]
    offset_b = comparison.order[:, None] - comparison.order[None, :]
    same_offset = comparison.seen_in_both & (offset_a == offset_b)
    moved = comparison.seen_in_both & (offset_a != offset_b)
    assert same_offset.any() and moved.any()
    position = comparison.logits_b - comparison.logits_b_at_a
    assert np.abs(position[..., same_offset]).max() < ROUNDING_ATOL
    assert np.abs(position[..., moved]).max() > 1e-3


def test_trace_orderings_reports_both_traces_layers_and_refuses_a_long_text(tiny, monkeypatch):  # noqa: F811
    reported = []
    result = trace_orderings(str(tiny), TEXT_A, TEXT_B, progress=lambda done, total: reported.append((done, total)))
    assert reported == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert result.run_b.text == TEXT_B
    from posenc_gui.model.decoder import orderings

    monkeypatch.setattr(orderings, "MAX_ORDERING_TOKENS", 3)
    with pytest.raises(ValueError, match="text_a is 5 tokens; at most 3"):
        trace_orderings(str(tiny), TEXT_A, TEXT_B)


def test_the_permutation_view_draws_the_comparison_and_says_it_in_numbers(qtbot, state, compute, tiny):  # noqa: F811
    panel = show_panel(qtbot, state, compute)
    panel.apply_options(decoder=str(tiny), text=TEXT_A, view="permutation", ordering_a=TEXT_A, ordering_b=TEXT_B,
                        layer=1, decoder_head=2)
    settle(panel, compute)
    settle(panel, compute)  # the trace, then the view's own request
    expected = compare_orderings(trace_text(str(tiny), TEXT_A), trace_text(str(tiny), TEXT_B))
    data = panel.export_data()
    np.testing.assert_allclose(data["arrays"]["attention_b_aligned"], expected.attention_b[1, 2], atol=1e-7)
    np.testing.assert_allclose(data["arrays"]["query_change"], expected.query_change[1, 2], atol=1e-9)
    assert data["meta"]["order"] == [0, 4, 2, 3, 1] and data["meta"]["pairs_in_both"] == int(
        expected.seen_in_both.sum())
    title = panel.current_figure().title.text
    assert all(part in title for part in ("tiny", TEXT_A, TEXT_B, "layer 1, head 2"))
    caption = panel.figure_caption()
    assert f"{data['meta']['largest_position_part']:.3g}" in caption and "causal mask" in caption
    panel.apply_options(ordering_b="the cat, the hat")
    settle(panel, compute)
    assert "text_b must hold text_a's tokens" in panel.message_label.text()


def test_the_permutation_view_exports_from_the_command_line(tiny, tmp_path, qtbot):  # noqa: F811
    out = tmp_path / "permutation.json"
    assert export_cli.main(["decoder", "--decoder", str(tiny), "--view", "permutation", "--ordering-a", TEXT_A,
                            "--ordering-b", TEXT_B, "--layer", "0", "--decoder-head", "1", "-o", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert (written["meta"]["text_a"], written["meta"]["layer"], written["meta"]["head"]) == (TEXT_A, 0, 1)
    assert written["arrays"]["attention_a"]["shape"] == [5, 5]
    png = tmp_path / "permutation.png"
    assert export_cli.main(["decoder", "--decoder", str(tiny), "--view", "permutation", "--ordering-a", TEXT_A,
                            "--ordering-b", TEXT_B, "-o", str(png)]) == 0
    assert png.stat().st_size > 1000
    assert VIEW_NAMES["permutation"] == len(VIEW_NAMES) - 1
