"""Permutation demo with a real head: the head chooser, the model's layer 0 drawn, its export."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bert_folders import PANICS, hand_folder, write_folder, bert_config, hand_tensors, write_panicking_tokenizer
from posenc_gui import compute as compute_module
from posenc_gui.model.attention.bert_head import RealHeadDemo, bert_permutation_demo
from posenc_gui.views import model_open
from posenc_gui.views.permutation import TOY_HEAD, PermutationPanel
from waiting import TIMEOUT_S


def _settle(panel) -> None:
    panel.state.flush()
    assert panel.compute.wait_idle()


@pytest.fixture
def folder(tmp_path):
    return hand_folder(tmp_path / "tiny-bert", special=True)


@pytest.fixture
def panel(qtbot, state, compute):
    widget = PermutationPanel(state, compute)
    qtbot.addWidget(widget)
    _settle(widget)
    return widget


def test_without_a_model_only_the_toy_head_is_offered(panel):
    assert panel.head_combo.count() == 1 and panel.chosen_head() == TOY_HEAD
    with pytest.raises(ValueError, match="real_head: the demo has only the toy head: no model folder is open"):
        panel.set_head(0)
    assert panel.chosen_head() == TOY_HEAD


def test_opening_a_bert_folder_offers_its_heads_and_runs_one(panel, folder):
    assert model_open.open_model_path(panel.state, str(folder), ask=False) is None
    _settle(panel)
    assert [panel.head_combo.itemText(i) for i in range(panel.head_combo.count())] == [
        "toy head", "tiny-bert: layer 0, head 0", "tiny-bert: layer 0, head 1"]
    assert not isinstance(panel.demo, RealHeadDemo)  # the toy head stays until a head is chosen
    panel.set_head(1)
    _settle(panel)
    demo = panel.demo
    assert isinstance(demo, RealHeadDemo) and demo.head == 1 and demo.model_name == "tiny-bert"
    expected = bert_permutation_demo(str(folder), "dog bites man", "man bites dog", 1)
    np.testing.assert_array_equal(panel.figure.matrices["A_a"].values, expected.with_pe.trace_a.attention)
    assert panel.figure.matrices["A_a"].row_words == ("[CLS]", "dog", "bites", "man", "[SEP]")
    np.testing.assert_array_equal(panel.figure.matrices["PE_b"].values, expected.with_pe.trace_b.positional)
    np.testing.assert_array_equal(panel.figure.matrices["split_a_table contribution"].values, expected.split_a.difference)
    assert panel.figure.split_strips["model_a"].isVisible() and not panel.figure.split_strips["table_a"].isVisible()
    assert "tiny-bert, layer 0, head 1 of 2" in panel.figure.title_label.text
    assert panel.scheme_label.text() == "Model: tiny-bert, layer 0, head 1 of 2"
    assert panel.pe_check.text() == "Add the model's position table"
    assert not panel.causal_check.isEnabled() and not panel.d_model_spin.isEnabled()
    assert "same rows permuted" in panel.verdict_label.text()
    assert f"they differ by {expected.with_pe.max_abs_diff_output:.2g}" in panel.verdict_label.text()


def test_without_the_table_the_rows_are_permuted(panel, folder):
    model_open.open_model_path(panel.state, str(folder), ask=False)
    panel.apply_options(real_head=0, position=False)
    _settle(panel)
    demo = panel.demo
    assert isinstance(demo, RealHeadDemo)
    assert not panel.figure.matrices["PE_a"].isVisible()
    np.testing.assert_array_equal(panel.figure.matrices["X_a"].values, demo.without_pe.trace_a.x)
    z_a, z_b = panel.figure.matrices["Z_a"].values, panel.figure.matrices["Z_b"].values
    np.testing.assert_allclose(z_b, z_a[list(demo.permutation)], rtol=0, atol=1e-12)


def test_changing_the_sentence_reruns_the_real_head(panel, folder):
    model_open.open_model_path(panel.state, str(folder), ask=False)
    panel.set_head(1)
    panel.set_sentences(sentence_a="man dog", sentence_b="dog man")
    _settle(panel)
    assert panel.demo.tokens_a == ("[CLS]", "man", "dog", "[SEP]")
    panel.set_sentences(sentence_a="")
    _settle(panel)
    assert "sentence_a is empty" in panel.message_label.text()
    assert panel.demo.tokens_a == ("[CLS]", "man", "dog", "[SEP]")  # the last good view stays


def test_back_to_the_toy_head(panel, folder):
    model_open.open_model_path(panel.state, str(folder), ask=False)
    panel.set_head(0)
    _settle(panel)
    panel.set_demo_d_model(4)  # the toy head adds the tiny model's table, 4 wide
    panel.set_head(TOY_HEAD)
    _settle(panel)
    assert not isinstance(panel.demo, RealHeadDemo) and panel.demo.d_model == 4
    assert panel.causal_check.isEnabled() and panel.figure.split_strips["table_a"].isVisible()


def test_a_head_out_of_range_changes_nothing(panel, folder):
    model_open.open_model_path(panel.state, str(folder), ask=False)
    with pytest.raises(ValueError, match="real_head must be -1 .* or 0 … 1, got 2"):
        panel.set_head(2)
    assert panel.chosen_head() == TOY_HEAD


def test_picking_a_folder_runs_its_head_0(panel, folder, monkeypatch):
    monkeypatch.setattr(model_open, "ask_model_folder", lambda parent, start: str(folder))
    panel.folder_button.click()
    _settle(panel)
    assert isinstance(panel.demo, RealHeadDemo) and panel.demo.head == 0
    assert panel.state.params.scheme != "learned_file"  # the app's parameters are left alone
    assert panel.current_options()["real_head"] == -1  # a session names no picked folder: it keeps the toy head
    other = hand_folder(folder.parent / "other-bert", special=True)
    model_open.open_model_path(panel.state, str(other), ask=False)  # a model opened later takes over
    _settle(panel)
    assert panel.real_folder() == str(other) and panel.head_combo.itemText(1) == "other-bert: layer 0, head 0"


def test_picking_a_folder_that_is_not_bert_family_says_why(panel, tmp_path, monkeypatch):
    tensors = hand_tensors()
    del tensors["encoder.layer.0.attention.self.key.bias"]
    bad = write_folder(tmp_path / "bad", tensors, bert_config())
    monkeypatch.setattr(model_open, "ask_model_folder", lambda parent, start: str(bad))
    panel.folder_button.click()
    _settle(panel)
    assert "lacks tensor encoder.layer.0.attention.self.key.bias" in panel.message_label.text()
    assert panel.head_combo.count() == 1 and not isinstance(panel.demo, RealHeadDemo)


@pytest.mark.parametrize("where", ["worker process", "threads"])
@pytest.mark.parametrize("panic", PANICS)
def test_a_tokenizer_that_makes_the_package_panic_is_named_in_the_panel(panel, folder, panic, where, monkeypatch):
    # PanicException is a BaseException: it used to end the worker process, then the thread that
    # re-ran the request, and the panel waited for a result for ever.
    monkeypatch.setenv(compute_module.WORKER_PROCESS_ENV, "1" if where == "worker process" else "0")
    model_open.open_model_path(panel.state, str(folder), ask=False)
    panel.set_head(0)
    _settle(panel)
    shown = panel.demo
    assert isinstance(shown, RealHeadDemo)
    path = write_panicking_tokenizer(folder, panic)
    panel.set_head(1)
    panel.state.flush()
    assert panel.compute.wait_idle(4 * TIMEOUT_S), "the panel is still computing"
    message = panel.message_label.text()
    assert str(path) in message and "the tokenizers package failed on it" in message
    assert panel.message_label.isVisibleTo(panel) and panel.demo is shown  # the last good view stays


def test_the_export_carries_the_model_head_and_numbers(panel, folder):
    model_open.open_model_path(panel.state, str(folder), ask=False)
    panel.set_head(1)
    _settle(panel)
    data = panel.export_data()
    demo = panel.demo
    assert data["meta"]["head"] == "tiny-bert, layer 0, head 1 of 2"
    np.testing.assert_array_equal(data["arrays"]["with_pe_A_a"], demo.with_pe.trace_a.attention)
    np.testing.assert_array_equal(data["arrays"]["without_pe_Z_b"], demo.without_pe.trace_b.output)
    np.testing.assert_array_equal(data["arrays"]["split_a_table_contribution"], demo.split_a.difference)
    permutation = json.loads(json.dumps(data["meta"]["permutation"]))
    assert permutation["model"]["name"] == "tiny-bert" and permutation["ids_a"] == [1, 3, 4, 5, 2]
    assert panel.current_options()["real_head"] == 1


def test_a_session_reopens_the_real_head(make_window, folder, tmp_path):
    window = make_window()
    assert model_open.open_model_path(window.state, str(folder), ask=False) is None
    window.panels["permutation"].set_head(1)
    # the tiny model has 8 positions: a saved reference of 64 (the default) would be refused on opening
    window.state.set_view(reference=3)
    path = tmp_path / "real.json"
    assert window.save_session(str(path)) is None
    other = make_window(restore=False)
    assert other.open_session(str(path)) is None
    assert other.panels["permutation"].chosen_head() == 1
    assert other.panels["permutation"].head_combo.currentText() == "tiny-bert: layer 0, head 1"
