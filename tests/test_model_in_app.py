"""A model file opened in the app: File ▸ Open model…, a drop on the window, the Parameters panel, sessions,
settings and the command line (``--model`` for the window and for export). Bad files change nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication
from safetensors.numpy import save_file
from test_model_files import LLAMA, bert_folder, marker_pickle, raw_safetensors, table, write_json
from waiting import TIMEOUT_S, finish_pending

from posenc_gui.cli import window as cli
from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams, rope_frequencies
from posenc_gui.model.schemes.rope import hf_config
from posenc_gui.session import Session, SessionError, read_session, write_session
from posenc_gui.views import model_open

LLAMA3 = {"rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                   "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}


@pytest.fixture
def gpt2(tmp_path):
    """A GPT-2-shaped checkpoint, 40 positions × 24: ``wpe`` and a token table of the same width."""
    positions = table(40, 24)
    save_file({"transformer.wpe.weight": positions, "transformer.wte.weight": table(90, 24)},
              tmp_path / "gpt2.safetensors")
    return tmp_path / "gpt2.safetensors", positions


def llama_folder(path, config=LLAMA | LLAMA3, tensors=None):
    path.mkdir()
    write_json(path / "config.json", config)
    save_file(tensors or {"model.layers.0.self_attn.q_proj.weight": table(8, 8)}, path / "model.safetensors")
    return path


@pytest.fixture
def dialogs(monkeypatch):
    """The model dialogs, answered by the test: set ``answers[name]``; ``asked`` lists the problems shown."""
    answers, shown = {}, []
    for name in ("ask_model_file", "ask_model_folder", "ask_setup", "ask_table"):
        monkeypatch.setattr(model_open, name, lambda *args, _name=name: answers[_name](*args))
    monkeypatch.setattr(model_open, "show_model_problem", lambda parent, message: shown.append(message))
    return answers, shown


def settled(window, qtbot) -> None:
    window.state.flush()
    assert window.compute.wait_idle()
    finish_pending(qtbot, window)
    assert window.compute.wait_idle()


def status(window) -> str:
    return window.statusBar().currentMessage()


def shown_messages(window) -> list[str]:
    """Every message the window's status bar shows from now on (each stays for seconds only)."""
    messages: list[str] = []
    window.statusBar().messageChanged.connect(lambda text: text and messages.append(text))
    return messages


# ---------------------------------------------------------------- opening in the window
def test_a_gpt2_table_opened_from_the_menu_fills_the_heatmap_position_down(make_window, qtbot, gpt2, dialogs):
    path, positions = gpt2
    answers, shown = dialogs
    answers["ask_model_file"] = lambda parent, folder: str(path)
    window = make_window()
    messages = shown_messages(window)
    window.open_model_action.trigger()
    settled(window, qtbot)
    params = window.state.params
    assert (params.scheme, params.seq_len, params.d_model) == ("learned_file", 40, 24)
    assert params.options == {"model_path": str(path), "tensor": "transformer.wpe.weight"}
    heatmap = window.panels["heatmap"]
    assert heatmap.data.params == params
    np.testing.assert_array_equal(heatmap.data.values, positions)  # every position and dimension: exact
    item = heatmap.matrix.image
    item.render()
    assert (item.qimage.width(), item.qimage.height()) == (24, 40)  # dimensions across, positions down
    np.testing.assert_array_equal(item.image, positions)
    assert heatmap.matrix.plot.getViewBox().yInverted()  # position 0 at the top
    assert "model gpt2" in heatmap.matrix.plot.titleLabel.text
    assert messages == ["Opened gpt2 (safetensors) as learned table transformer.wpe.weight (40 × 24)."]
    assert not shown


def test_every_table_panel_shows_the_file_table_without_an_error(make_window, qtbot, gpt2):
    window = make_window()
    assert window.open_model(str(gpt2[0])) is None
    for panel_id in ("heatmap", "waveforms", "similarity", "uniqueness", "magnitude", "linear_relation",
                     "relative", "addition", "spectrum", "logits", "scorecard", "permutation"):
        panel = window.panels[panel_id]
        window.raise_panel(panel_id)
        settled(window, qtbot)
        text, level = panel._message
        assert not text or level != "error", (panel_id, text)
        assert panel.unavailable_message() is None, panel_id
    row = window.panels["scorecard"].data.score("learned_file")
    assert row.table_rows == 40 and not row.generalizes


def test_the_parameters_cap_n_at_the_table_and_offer_its_tensors(make_window, qtbot, gpt2):
    window = make_window()
    window.open_model(str(gpt2[0]))
    settled(window, qtbot)
    panel = window.panels["parameters"]
    n, tensor = panel.controls["seq_len"], panel.controls["tensor"]
    assert n.editor.maximum() == 40 and n.slider.high == 40
    assert [tensor.editor.itemText(i) for i in range(tensor.editor.count())] == [
        "transformer.wpe.weight (40 × 24 F32) — the position table", "transformer.wte.weight (90 × 24 F32)"]
    assert panel.controls["model_path"].editor.text() == str(gpt2[0])
    assert panel.controls["model_path"].editor.isReadOnly() and panel.controls["model_path"].open_button.isVisible()
    assert panel.model_note.text() == "gpt2 (safetensors, 2 tensors)."
    tensor.editor.setCurrentIndex(1)  # the token table: its 90 rows, N stays 40
    settled(window, qtbot)
    assert (window.state.params.options["tensor"], window.state.params.seq_len) == ("transformer.wte.weight", 40)
    assert n.editor.maximum() == 90
    assert not panel.controls["d_model"].editor.isEnabled()  # the table's width; a value set anyway is refused
    panel.controls["d_model"].editor.setValue(16)
    assert panel.controls["d_model"].error.text() == "d_model must be 24, the width of the table, got 16"
    assert window.state.params.d_model == 24
    panel.scheme.setCurrentIndex(panel.scheme.findData("sinusoidal"))  # leaving the table lifts the cap
    settled(window, qtbot)
    assert n.editor.maximum() == 1_048_576 and not panel.model_note.isVisible()
    assert panel.controls["d_model"].editor.isEnabled()


def test_undoing_back_to_a_model_file_that_is_gone_shows_the_views_error(make_window, qtbot, gpt2):
    window = make_window()
    window.open_model(str(gpt2[0]))
    settled(window, qtbot)
    window.state.update(scheme="sinusoidal", seq_len=40, d_model=24)
    settled(window, qtbot)
    os.remove(gpt2[0])
    window.undo_action.trigger()  # the history holds the parameters as they were: no file is opened to restore
    settled(window, qtbot)
    assert window.state.params.scheme == "learned_file"
    assert window.panels["parameters"].controls["seq_len"].editor.maximum() == 1_048_576
    text, level = window.panels["heatmap"]._message
    assert level == "error" and "gpt2.safetensors: no such file or folder" in text


def test_a_bert_folder_opened_from_the_folder_dialog(make_window, qtbot, tmp_path, dialogs):
    answers, _ = dialogs
    positions = table(64, 48)
    bert_folder(tmp_path / "tiny-bert", {"model_type": "bert", "hidden_size": 48, "max_position_embeddings": 64},
                positions)
    answers["ask_model_folder"] = lambda parent, folder: str(tmp_path / "tiny-bert")
    window = make_window()
    window.open_model_folder_action.trigger()
    settled(window, qtbot)
    params = window.state.params
    assert (params.scheme, params.seq_len, params.d_model, params.options["tensor"]) == (
        "learned_file", 64, 48, "embeddings.position_embeddings.weight")
    np.testing.assert_array_equal(window.panels["heatmap"].data.values, positions)


def drop(window, path) -> None:
    """Drop ``path`` on the heatmap's plot, as a file manager would: the window takes what its children do not."""
    target = window.panels["heatmap"].canvas.viewport()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(target, QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime,
                                              Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))


def test_a_llama_config_dropped_on_the_window_sets_up_rope_as_the_config_computes_it(make_window, qtbot, tmp_path):
    folder = llama_folder(tmp_path / "llama")
    window = make_window()
    messages = shown_messages(window)
    drop(window, folder / "config.json")  # a config.json stands for its folder
    settled(window, qtbot)
    params = window.state.params
    assert (params.scheme, params.seq_len, params.d_model) == ("rope", 131072, 64)
    assert {name: params.options[name] for name in ("rope_theta", "rope_type", "factor", "low_freq_factor",
                                                    "high_freq_factor", "original_max_position_embeddings",
                                                    "pairing")} == {
        "rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "pairing": "halves"}
    ours = rope_frequencies(hf_config(params.d_model, **params.options), seq_len=params.seq_len)
    np.testing.assert_array_equal(ours[0], rope_frequencies(LLAMA | LLAMA3)[0])
    assert messages == ["Opened llama (hf-folder) as RoPE (θ 500000, llama3 ×8, head 64, halves)."]


def test_a_model_with_both_asks_which_and_a_cancel_changes_nothing(make_window, qtbot, tmp_path, dialogs):
    answers, _ = dialogs
    folder = llama_folder(tmp_path / "both", tensors={"wpe.weight": table(64, 48)})
    window = make_window()
    messages = shown_messages(window)
    before = window.state.params
    answers["ask_setup"] = lambda parent, opened: None
    assert window.open_model(str(folder)) is None
    settled(window, qtbot)
    assert window.state.params == before and messages == ["Model both not opened: nothing was chosen"]
    answers["ask_setup"] = lambda parent, opened: opened.setups[1]
    window.open_model(str(folder))
    settled(window, qtbot)
    assert window.state.params.scheme == "rope"
    assert ("It also has learned table wpe.weight (64 × 48): open it again to choose it (--scheme learned_file on "
            "the command line).") in messages[-1]


def test_a_model_with_neither_lets_the_user_pick_a_tensor(make_window, qtbot, tmp_path, dialogs):
    answers, _ = dialogs
    folder = llama_folder(tmp_path / "plain", {"model_type": "mystery"},
                          {"a.weight": table(8, 4), "b.weight": table(30, 6)})
    offered = []
    answers["ask_table"] = lambda parent, opened: offered.append([t.name for t in opened.tables]) or "b.weight"
    window = make_window()
    window.open_model(str(folder))
    settled(window, qtbot)
    assert offered == [["a.weight", "b.weight"]]
    params = window.state.params
    assert (params.scheme, params.options["tensor"], params.seq_len, params.d_model) == (
        "learned_file", "b.weight", 30, 6)


@pytest.mark.parametrize("kind", ["missing", "pickle", "huge header", "folder of nothing"])
def test_a_bad_model_file_says_why_and_changes_nothing(make_window, qtbot, tmp_path, dialogs, kind):
    answers, shown = dialogs
    marker = tmp_path / "ran"
    path = {"missing": tmp_path / "none.safetensors", "pickle": tmp_path / "model.pt",
            "huge header": tmp_path / "huge.safetensors", "folder of nothing": tmp_path / "empty"}[kind]
    if kind == "pickle":
        path.write_bytes(marker_pickle(marker))
    elif kind == "huge header":
        raw_safetensors(path, {}, claimed_length=2**62)
    elif kind == "folder of nothing":
        path.mkdir()
    answers["ask_model_file"] = lambda parent, folder: str(path)
    window = make_window()
    messages = shown_messages(window)
    before = (window.state.params, dict(window.state.remembered), window.state.view, window.state.history.count())
    window.open_model_action.trigger()
    settled(window, qtbot)
    after = (window.state.params, dict(window.state.remembered), window.state.view, window.state.history.count())
    assert after == before and not marker.exists()
    assert len(shown) == 1 and messages == shown and "\n" not in shown[0]
    assert shown[0].startswith(f"Model not opened: {path}: ")


def test_the_window_opens_a_model_given_on_its_command_line(qtbot, settings_path, gpt2):
    from posenc_gui.mainwindow import MainWindow

    args = cli.build_parser().parse_args(["--model", str(gpt2[0]), "--seq-len", "16", "--no-restore"])
    overrides, notice = cli.launch_overrides(args)
    assert overrides == {"scheme": "learned_file", "seq_len": 16, "d_model": 24, "model_path": str(gpt2[0]),
                         "tensor": "transformer.wpe.weight"}
    window = MainWindow(overrides=overrides, restore=False, notice=notice)
    qtbot.addWidget(window)
    assert status(window) == notice == "Opened gpt2 (safetensors) as learned table transformer.wpe.weight (40 × 24)."
    window.show()
    settled(window, qtbot)
    assert (window.state.params.scheme, window.state.params.seq_len) == ("learned_file", 16)


# ---------------------------------------------------------------- sessions and settings
def test_a_session_with_a_model_reads_back_and_one_whose_file_is_gone_is_refused(make_window, qtbot, gpt2,
                                                                               tmp_path):
    window = make_window()
    window.open_model(str(gpt2[0]))
    settled(window, qtbot)
    session = window.current_session()
    write_session(tmp_path / "s.json", session)
    saved = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert saved["params"]["model_path"] == str(gpt2[0]) and saved["params"]["tensor"] == "transformer.wpe.weight"
    assert read_session(tmp_path / "s.json").params == session.params
    remembered = Session(EncodingParams(), {"model_path": str(gpt2[0]), "tensor": "transformer.wte.weight"})
    write_session(tmp_path / "r.json", remembered)
    assert read_session(tmp_path / "r.json").remembered == remembered.remembered
    for bad, problem in ((str(tmp_path / "gone.safetensors"), "gone.safetensors: no such file or folder"),
                         (7, r"params\.model_path must be text \(a path\), got an integer 7"),
                         ("x" * 5000, "params.model_path: model_path must be text of at most 4,096 characters")):
        saved["params"]["model_path"] = bad
        (tmp_path / "bad.json").write_text(json.dumps(saved), encoding="utf-8")
        with pytest.raises(SessionError, match=problem):
            read_session(tmp_path / "bad.json")


def test_the_settings_bring_the_model_back_and_forget_a_model_that_is_gone(make_window, qtbot, gpt2):
    from posenc_gui.mainwindow import MainWindow

    window = make_window()
    window.open_model(str(gpt2[0]))
    settled(window, qtbot)
    window.close()
    again = make_window()
    assert again.state.params == window.state.params
    again.close()
    os.remove(gpt2[0])
    third = MainWindow()  # the warning is read at once: the status bar shows it for seconds only
    qtbot.addWidget(third)
    assert third.state.params == EncodingParams()
    assert "parameters ignored (model_path: " in status(third) and "no such file or folder" in status(third)


# ---------------------------------------------------------------- command line
def run(*args, cwd=None):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "posenc_gui", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=env, cwd=cwd)


def test_export_with_a_model_writes_a_figure_titled_with_its_name(qapp, gpt2, tmp_path):
    out = tmp_path / "heatmap.svg"
    assert export_cli.main(["heatmap", "--model", str(gpt2[0]), "-o", str(out)]) == 0
    texts = [" ".join(text.itertext()) for text in ET.parse(out).getroot().iter("{http://www.w3.org/2000/svg}text")]
    assert "learned_file: 40 positions × d_model 24, model gpt2, tensor transformer.wpe.weight" in " ".join(
        " ".join(texts).split())  # the title's words, each placed in a <tspan> of its run
    data = tmp_path / "heatmap.npy"
    assert export_cli.main(["heatmap", "--model", str(gpt2[0]), "--tensor", "transformer.wte.weight",
                            "--seq-len", "90", "-o", str(data)]) == 0
    values = np.load(data)
    assert values.shape == (90, 24)
    np.testing.assert_array_equal(values, save_and_read(gpt2[0], "transformer.wte.weight"))


def save_and_read(path, name):
    from safetensors.numpy import load_file

    return load_file(path)[name].astype(np.float64)


def test_export_of_a_llama_config_exports_its_rope_frequencies(qapp, tmp_path):
    folder = llama_folder(tmp_path / "llama")
    out = tmp_path / "frequencies.json"
    assert export_cli.main(["frequencies", "--model", str(folder), "-o", str(out)]) == 0
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert exported["params"]["rope_type"] == "llama3" and exported["params"]["d_model"] == 64
    np.testing.assert_array_equal(exported["arrays"]["inv_freq"]["data"], rope_frequencies(LLAMA | LLAMA3)[0])


@pytest.mark.parametrize("command", [[], ["export", "heatmap", "-o", "out.png"]])
@pytest.mark.parametrize("kind", ["missing", "pickle"])
def test_a_bad_model_on_the_command_line_is_one_line_and_exit_2(tmp_path, command, kind):
    marker = tmp_path / "ran"
    path = tmp_path / ("none.gguf" if kind == "missing" else "model.bin")
    if kind == "pickle":
        path.write_bytes(marker_pickle(marker))
    result = run(*command, "--model", str(path), "--no-restore" if not command else "--width", *(
        [] if not command else ["960"]), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"error: --model {path}: {path}: " in lines[0]
    assert not marker.exists() and not (tmp_path / "out.png").exists()
