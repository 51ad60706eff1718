"""The Decoder panel: a tiny Llama decoder (tests/decoder_files.py) traced in the worker and shown in six views."""

from __future__ import annotations

import json

import numpy as np
import pytest
import helpers_panels
from decoder_files import gguf_tensors, tiny_config, tiny_weights, write_folder, write_gguf

from posenc_gui.cli import export as export_cli
from posenc_gui.model import open_decoder
from posenc_gui.model.decoder.view_data import POSITIONAL_SHARE, gap_positions, head_summary, summarise, trace_text
from posenc_gui.views import model_open
from posenc_gui.views.decoder import NO_MODEL, VIEW_NAMES, DecoderPanel
from posenc_gui.views.registry import panel_classes

TEXT = "the cat, the mat, the hat: 42 and 7"
#: A trace of a tiny model takes milliseconds; this bounds a hang on a machine 4× busier than any seen.
TRACE_TIMEOUT_S = 120
#: float32 attention shown as float64: the same numbers.
SHOWN_ATOL = 1e-7


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator([TEXT, "Hello world", "The 2 cats sat on 123 mats."] * 5, trainer)
    return tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return _tokenizer()


def tiny_decoder(folder, tokenizer, seed=0):
    """A tiny Llama folder (2 layers × 4 heads) with a byte-level BPE tokenizer.json."""
    vocab = tokenizer.get_vocab_size()
    weights = tiny_weights(seed=seed, vocab=vocab)
    write_folder(folder, weights, tiny_config(weights))
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture
def tiny(tmp_path, tokenizer):
    return tiny_decoder(tmp_path / "tiny", tokenizer)


def show_panel(qtbot, state, compute):
    return helpers_panels.show_panel(qtbot, DecoderPanel(state, compute), (1100, 700), settle=False)


def settle(panel, compute):
    assert compute.wait_idle(TRACE_TIMEOUT_S)


def traced_panel(qtbot, state, compute, path, **options):
    panel = show_panel(qtbot, state, compute)
    panel.apply_options(decoder=str(path), text=TEXT, **options)
    settle(panel, compute)
    assert panel.run is not None, panel.message_label.text()
    return panel


# ---------------------------------------------------------------- the model layer's summaries
def test_the_summary_of_a_known_attention_follows_its_definitions():
    """Head 0 attends to the previous token (token 0 for query 0), head 1 to token 0: by hand."""
    count = 6
    attention = np.zeros((2, count, count))
    attention[0, 0, 0] = 1
    for i in range(1, count):
        attention[0, i, i - 1] = 1
        attention[1, i, 0] = 1
    attention[1, 0, 0] = 1
    by_offset, by_key, positional, sink = head_summary(attention)
    np.testing.assert_allclose(by_offset[0], [1 / 6, 1, 0, 0, 0, 0])  # offset 0: query 0 only of 6
    np.testing.assert_allclose(by_key[1], [1, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(sink, [1 / 5, 1])  # queries 1…5: query 1's previous token is token 0
    assert positional[0, 1] == 1  # queries 2…5, each on its previous token (≥ 1)
    assert np.all(positional[1, :count - 1] == 0)

    class Trace:
        layers = (0,)

        def attention(self, layer):
            return attention

    summary = summarise(Trace())
    assert summary.positional_offset[0].tolist()[0] == 1 and summary.is_positional[0].tolist() == [True, False]
    assert summary.is_sink[0].tolist() == [False, True] and POSITIONAL_SHARE <= 1


def test_gap_positions_move_the_tokens_after_the_gap_and_name_a_bad_gap():
    assert gap_positions(5, (2, 100)).tolist() == [0, 1, 102, 103, 104]
    assert gap_positions(5, None) is None
    with pytest.raises(ValueError, match="gap token"):
        gap_positions(5, (9, 1))


def test_trace_text_reports_each_layer_and_stops_when_progress_says_so(tiny):
    reported = []
    run = trace_text(str(tiny), TEXT, progress=lambda done, total: reported.append((done, total)))
    assert reported == [(1, 2), (2, 2)]
    assert run.summary.by_offset.shape == (2, 4, len(run.token_texts))
    from posenc_gui.model.decoder import TraceCancelled

    reported.clear()
    with pytest.raises(TraceCancelled):
        trace_text(str(tiny), TEXT, progress=lambda done, total: reported.append((done, total)) or False)
    assert reported == [(1, 2)]  # stopped after the first layer


# ---------------------------------------------------------------- the panel
def test_registered_for_every_scheme_and_says_what_to_open_without_a_model(qtbot, state, compute):
    assert "decoder" in [cls.panel_id for cls in panel_classes()]
    panel = show_panel(qtbot, state, compute)
    assert panel.unavailable_message() == NO_MODEL
    assert "Open a Llama-family model" in panel.unavailable_label.text() or panel.unavailable_label.isHidden()


def test_the_head_view_shows_the_traced_attention_and_follows_layer_and_head(qtbot, state, compute, tiny):
    panel = traced_panel(qtbot, state, compute, tiny, layer=1, decoder_head=2)
    expected = open_decoder(tiny).trace(open_decoder(tiny).tokenize(TEXT))
    figure = panel.figures[VIEW_NAMES["head"]]
    shown = figure.shown_attention()
    lower = np.isfinite(shown)
    np.testing.assert_allclose(shown[lower], expected.attention(1)[2][lower], rtol=0, atol=SHOWN_ATOL)
    assert np.all(np.isneginf(shown[np.triu_indices(shown.shape[0], 1)]))  # the causal mask, drawn grey
    panel.head_spin.setValue(3)
    np.testing.assert_allclose(figure.shown_attention()[lower], expected.attention(1)[3][lower], atol=SHOWN_ATOL)
    panel.layer_spin.setValue(0)
    np.testing.assert_allclose(figure.shown_attention()[lower], expected.attention(0)[3][lower], atol=SHOWN_ATOL)
    assert "layer 0, head 3" in figure.title.text and "tiny" in figure.title.text
    data = panel.export_data()
    np.testing.assert_allclose(data["arrays"]["attention"], expected.attention(0)[3], atol=SHOWN_ATOL)


def test_a_bad_file_gives_one_message_and_keeps_the_last_view(qtbot, state, compute, tiny, tmp_path):
    panel = traced_panel(qtbot, state, compute, tiny)
    before = panel.figures[0].shown_attention().copy()
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\xff" * 40)
    panel.apply_options(decoder=str(bad))
    settle(panel, compute)
    message = panel.message_label.text()
    assert message.startswith("Decoder not traced:") and "bad.gguf" in message and "\n" not in message
    np.testing.assert_array_equal(panel.figures[0].shown_attention(), before)


def test_a_model_opened_in_the_window_is_traced(qtbot, state, compute, tiny, monkeypatch):
    panel = show_panel(qtbot, state, compute)
    monkeypatch.setattr(model_open, "ask_setup", lambda parent, opened: opened.setups[0])
    assert model_open.open_model_path(state, str(tiny)) is None
    settle(panel, compute)
    assert panel.run is not None and panel.run.path == str(tiny)


def test_the_offset_and_model_views_draw_the_summary(qtbot, state, compute, tiny):
    panel = traced_panel(qtbot, state, compute, tiny, view="offset", layer=1, decoder_head=1)
    run = panel.run
    data = panel.export_data()
    np.testing.assert_array_equal(data["arrays"]["by_offset"], run.summary.by_offset[1, 1])
    np.testing.assert_array_equal(data["arrays"]["sink_share"], run.summary.sink_share[1])
    x, y = panel.figures[VIEW_NAMES["offset"]].offset_curve.getData()
    np.testing.assert_array_equal(y, run.summary.by_offset[1, 1])
    panel.apply_options(view="model")
    data = panel.export_data()
    assert data["arrays"]["by_offset"].shape == (2, 4, len(run.token_texts))
    assert "Positional" in panel.figure_caption() and f"{POSITIONAL_SHARE:g}" in panel.figure_caption()


def test_frequency_use_and_what_if_come_from_the_worker(qtbot, state, compute, tiny):
    panel = traced_panel(qtbot, state, compute, tiny, view="frequency", layer=1, decoder_head=0)
    settle(panel, compute)
    from posenc_gui.model.decoder import pair_contributions

    pairs = pair_contributions(panel.run.trace, 1, 0)
    np.testing.assert_allclose(panel.export_data()["arrays"]["share"], pairs.share, rtol=1e-12)
    panel.apply_options(view="what-if", gap_token=3, gap_size=500)
    settle(panel, compute)
    data = panel.export_data()
    decoder = open_decoder(tiny)
    ids = decoder.tokenize(TEXT)
    moved = decoder.trace(ids, layers=[1], positions=gap_positions(len(ids), (3, 500)))
    expected = moved.attention(1)[0].astype(np.float64) - panel.run.trace.attention(1)[0]
    np.testing.assert_allclose(data["arrays"]["attention_change"], expected, atol=1e-6)
    assert np.abs(expected).max() > 1e-3  # the gap changes this head: the comparison can fail
    assert "+500 positions" in data["meta"]["what_if"] or "positions +500" in data["meta"]["what_if"]


def test_export_writes_the_head_view_and_its_data(qtbot, tiny, tmp_path):
    out = tmp_path / "head.png"
    code = export_cli.main(["decoder", "--decoder", str(tiny), "--text", TEXT, "--layer", "1",
                            "--decoder-head", "2", "-o", str(out)])
    assert code == 0 and out.stat().st_size > 1000
    data = tmp_path / "head.json"
    assert export_cli.main(["decoder", "--decoder", str(tiny), "--text", TEXT, "--layer", "1", "--decoder-head",
                            "2", "-o", str(data)]) == 0
    written = json.loads(data.read_text(encoding="utf-8"))
    assert (written["meta"]["layer"], written["meta"]["head"]) == (1, 2) and "attention" in written["arrays"]


def test_a_gguf_decoder_traces_in_the_panel_as_the_folder(qtbot, state, compute, tiny, tmp_path, tokenizer):
    weights = tiny_weights(vocab=tokenizer.get_vocab_size())
    model = json.loads(tokenizer.to_str())["model"]
    tokens = sorted(model["vocab"], key=model["vocab"].get)
    merges = [" ".join(merge) if isinstance(merge, list) else merge for merge in model["merges"]]
    path = write_gguf(tmp_path / "tiny.gguf", gguf_tensors(weights, 4, 2), tiny_config(weights),
                      vocabulary=(tokens, merges, "gpt-2"))
    panel = traced_panel(qtbot, state, compute, path, layer=1, decoder_head=1)
    folder = open_decoder(tiny)
    expected = folder.trace(folder.tokenize(TEXT)).attention(1)[1]
    shown = panel.figures[0].shown_attention()
    lower = np.isfinite(shown)
    np.testing.assert_allclose(shown[lower], expected[lower], atol=3e-5)  # GGUF's permuted rows: float32 sums


def test_a_newer_text_supersedes_the_running_trace_and_wins(qtbot, state, compute, tiny):
    panel = show_panel(qtbot, state, compute)
    panel.apply_options(decoder=str(tiny), text="Hello world")
    assert panel.progress.isVisible()  # shown from the request on, its layers as the worker reports them
    panel.apply_options(text=TEXT)
    settle(panel, compute)
    assert panel.run.text == TEXT and not panel.progress.isVisible()
    assert panel.message_label.isHidden()  # a cancelled trace's TraceCancelled is no message


def test_a_bad_option_names_its_range(qtbot, state, compute, tiny):
    panel = traced_panel(qtbot, state, compute, tiny)
    with pytest.raises(ValueError, match=r"layer must be in 0…1"):
        panel.apply_options(layer=5)
    with pytest.raises(ValueError, match="view must be one of"):
        panel.apply_options(view="nope")
    with pytest.raises(TypeError):
        panel.apply_options(colour="red")


def test_a_panel_built_after_the_model_was_opened_traces_it(qtbot, state, compute, tiny):
    """The window builds a dock's panel when it is first needed: the model may be open already."""
    state.note_model_opened(str(tiny))
    panel = show_panel(qtbot, state, compute)
    settle(panel, compute)
    assert panel.run is not None and panel.run.path == str(tiny)


def test_before_a_model_the_export_says_why_it_has_no_numbers(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    data = panel.export_data()
    assert data["arrays"] == {} and data["meta"]["message"] == NO_MODEL


def test_a_text_too_long_for_every_layer_is_refused_with_the_most_tokens(tiny, monkeypatch):
    from posenc_gui.model.decoder import view_data

    monkeypatch.setattr(view_data, "MAX_VIEW_VALUES", 2 * 4 * 5 ** 2)  # 2 layers × 4 heads: at most 5 tokens
    with pytest.raises(ValueError, match=r"at most 5 tokens"):
        trace_text(str(tiny), TEXT)
    assert len(trace_text(str(tiny), "the cat").token_texts) <= 5


@pytest.mark.parametrize("config", [{"model_type": "bert", "hidden_size": 16}, {"model_type": "llama"}])
def test_a_model_that_is_no_readable_decoder_gives_one_message(qtbot, state, compute, tiny, tmp_path, config):
    panel = traced_panel(qtbot, state, compute, tiny)
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    panel.apply_options(decoder=str(folder))
    settle(panel, compute)
    message = panel.message_label.text()
    assert message.startswith("Decoder not traced:") and "other" in message and "\n" not in message
    assert message.endswith("The last trace stays on screen.") and panel.run.path == str(tiny)


def test_one_layer_of_a_trace_pickles_that_layer_only(tiny):
    import pickle

    from posenc_gui.model.decoder.view_data import one_layer

    trace = trace_text(str(tiny), TEXT).trace
    sliced = pickle.loads(pickle.dumps(one_layer(trace, 1)))
    assert sliced.layers == (1,)
    np.testing.assert_array_equal(sliced.queries(1), trace.queries(1))
    np.testing.assert_array_equal(sliced.keys(1), trace.keys(1))
    with pytest.raises(ValueError, match="layer must be one of the layers traced"):
        sliced.attention(0)


def test_frequency_use_gives_each_pair_its_scaling_band(tmp_path):
    """llama3 keeps the fast pairs, smooths the middle ones and divides the slow ones (its bands)."""
    weights = tiny_weights(head_dim=16, hidden=32, heads=2, kv_heads=1)
    config = tiny_config(weights, heads=2, kv_heads=1, head_dim=16, rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 64})
    decoder = open_decoder(write_folder(tmp_path / "llama3", weights, config))
    from posenc_gui.model.decoder.view_data import frequency_use

    use = frequency_use(decoder.trace(list(range(10))), 1, 0)
    wavelength = 2 * np.pi / use.pairs.inv_freq
    # llama3: wavelength < 64/4 kept ("high"), > 64/1 divided ("low"), between smoothed ("medium");
    # the scaled wavelengths of the divided pairs are 8 × their unscaled ones, so compare on the unscaled side
    unscaled = np.where(use.band == "low", wavelength / 8.0, wavelength)
    assert set(use.band.tolist()) == {"high", "medium", "low"}
    assert np.all(unscaled[use.band == "high"] < 16) and np.all(unscaled[use.band == "low"] > 64)


def test_the_progress_bar_shows_each_layer_the_worker_reports(qtbot, state, compute, tiny):
    """Through the worker process's progress frames: every layer reaches the bar, in order, then it hides."""
    panel = show_panel(qtbot, state, compute)
    shown = []
    reported = panel._progressed

    def record(kind, done, total):
        reported(kind, done, total)
        shown.append((kind, panel.progress_shown()))

    panel._progressed = record
    panel.apply_options(decoder=str(tiny), text=TEXT)
    settle(panel, compute)
    assert panel.run is not None and shown == [("trace", (1, 2)), ("trace", (2, 2))]
    assert panel.progress.isHidden() and panel.progress_shown() is None


def test_export_s_model_flag_reaches_the_decoder_panel(qtbot, tiny, tmp_path):
    data = tmp_path / "model.json"
    assert export_cli.main(["decoder", "--model", str(tiny), "--text", TEXT, "--layer", "1", "-o", str(data)]) == 0
    written = json.loads(data.read_text(encoding="utf-8"))
    assert written["meta"]["model_path"] == str(tiny) and written["meta"]["layer"] == 1
    expected = open_decoder(tiny).trace(open_decoder(tiny).tokenize(TEXT)).attention(1)[0]
    np.testing.assert_allclose(written["arrays"]["attention"]["data"], expected, atol=SHOWN_ATOL)


def test_the_window_opened_with_a_decoder_as_model_shows_the_decoder_panel_traced(settings_path, qtbot, tiny,
                                                                                  tmp_path):
    from posenc_gui.cli.window import build_window, prepare_launch

    def launched(*argv):
        window = build_window(prepare_launch(["--no-restore", *argv]))
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        assert window.compute.wait_idle(TRACE_TIMEOUT_S)
        return window

    other = tmp_path / "rope-only"
    other.mkdir()
    (other / "config.json").write_text((tiny / "config.json").read_text(encoding="utf-8"), encoding="utf-8")
    plain = launched("--model", str(other))  # a bare config: its RoPE set-up, no decoder to trace
    decoder = plain.panels.built().get("decoder")
    assert decoder is None or not decoder.on_screen()
    plain.close()
    window = launched("--model", str(tiny))
    panel = window.panels["decoder"]
    assert panel.on_screen()  # in front of its tab group
    qtbot.waitUntil(lambda: panel.run is not None, timeout=TRACE_TIMEOUT_S * 1000)
    assert panel.run.path == str(tiny) and panel.figures[0].shown_attention() is not None
    by_flag = launched("--decoder", str(tiny), "--view", "offset")
    assert by_flag.panels["decoder"].on_screen()
    qtbot.waitUntil(lambda: by_flag.panels["decoder"].run is not None, timeout=TRACE_TIMEOUT_S * 1000)


def test_a_decoder_opened_in_the_window_brings_the_decoder_panel_forward(make_window, qtbot, tiny, tmp_path):
    # File ▸ Open model… and a drop (open_chosen_path) do what --model does; a model that is no decoder does not.
    from PySide6.QtWidgets import QApplication

    window = make_window(restore=False)
    other = tmp_path / "rope-only"
    other.mkdir()
    (other / "config.json").write_text((tiny / "config.json").read_text(encoding="utf-8"), encoding="utf-8")
    assert model_open.open_chosen_path(window.state, str(other), window) is None
    QApplication.processEvents()  # a raise would be posted to the event loop
    assert window.compute.wait_idle(TRACE_TIMEOUT_S)
    decoder = window.panels.built().get("decoder")
    assert decoder is None or not decoder.on_screen()
    assert model_open.open_chosen_path(window.state, str(tiny), window) is None
    qtbot.waitUntil(lambda: "decoder" in window.panels.built() and window.panels["decoder"].on_screen(),
                    timeout=TRACE_TIMEOUT_S * 1000)
    panel = window.panels["decoder"]
    qtbot.waitUntil(lambda: panel.run is not None, timeout=TRACE_TIMEOUT_S * 1000)
    assert panel.run.path == str(tiny)
