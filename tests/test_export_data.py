"""Export of data and to files: exact CSV, NPY and JSON, atomic writing that never loses a file, every panel in every
format, and the window's export actions and dialog (figures themselves: test_export.py)."""

import errno
import json
import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu

from posenc_gui import export
from posenc_gui.export import ExportError
from posenc_gui.model import encode, limits, pairwise
from posenc_gui.views import panel_classes
from helpers_export import SVG, assert_not_blank, decode_png, make_panel
from helpers_panels import settle_panel
from waiting import TIMEOUT_S, finish_pending

PANEL_IDS = [cls.panel_id for cls in panel_classes()]


def refused_keeping_the_old_file(panel, target, match: str, **options) -> ExportError:
    """Export ``panel`` over an existing ``target``: refused with an ``ExportError`` matching ``match``, the old
    file's bytes unchanged. Returns the error."""
    old = b"old " + target.name.encode()
    target.write_bytes(old)
    with pytest.raises(ExportError, match=match) as refused:
        export.export_panel(panel, target, **options)
    assert target.read_bytes() == old
    return refused.value


# ------------------------------------------------------------------- data
def test_csv_round_trips_exactly():
    values = np.array([[0.1, -2.5e-300, 1e300], [np.pi, -0.0, 123456789.123456789]])
    text = export.csv_bytes({"arrays": {"m": values, "other": np.zeros(3)},
                             "meta": {"rows": "position", "columns": ["a", "b", "c"]}}, name="t")
    path_values = np.loadtxt(text.decode().splitlines(), delimiter=",")
    np.testing.assert_array_equal(path_values, values)
    assert text.decode().startswith("# posenc_gui")
    vector = export.csv_bytes({"arrays": {"v": np.array([1.5, np.nan, 3.0])}}, name="t")
    np.testing.assert_array_equal(np.loadtxt(vector.decode().splitlines(), delimiter=","),
                                  np.array([1.5, np.nan, 3.0]))


def test_csv_refuses_three_dimensional_arrays():
    with pytest.raises(ExportError, match="2"):
        export.csv_bytes({"arrays": {"cube": np.zeros((2, 2, 2))}}, name="t")


def test_npy_is_the_main_array_bit_for_bit():
    import io

    values = np.random.default_rng(1).standard_normal((7, 5))
    data = export.npy_bytes({"arrays": {"main": values, "second": np.ones(2)}}, name="t")
    loaded = np.load(io.BytesIO(data), allow_pickle=False)
    assert loaded.dtype == values.dtype
    np.testing.assert_array_equal(loaded, values)


def test_json_holds_every_array_and_nan_as_null():
    data = export.json_bytes({"arrays": {"a": np.array([[1.0, np.nan]]), "b": np.arange(3)},
                              "meta": {"metric": "cosine", "params": {"scheme": "sine"}}},
                             name="t", panel_id="x")
    doc = json.loads(data)
    assert doc["arrays"]["a"]["data"] == [[1.0, None]] and doc["arrays"]["b"]["data"] == [0, 1, 2]
    assert doc["meta"]["metric"] == "cosine" and doc["params"] == {"scheme": "sine"} and doc["panel"] == "x"


def test_json_of_the_permutation_demo_is_its_dict():
    record = {"sentence_a": "dog bites man", "difference": 0.25, "nested": {"x": [1, 2]}}
    doc = json.loads(export.json_bytes({"arrays": {"z": np.eye(2)}, "meta": {"permutation": record}}, name="t"))
    assert doc == record


def test_text_formats_refuse_huge_data(monkeypatch, tmp_path):
    monkeypatch.setattr(export.data, "MAX_TEXT_VALUES", 10)
    for writer in (export.csv_bytes, export.json_bytes):
        with pytest.raises(ExportError, match="npy"):
            writer({"arrays": {"m": np.zeros((4, 4))}}, name="big")


# ------------------------------------------------------- atomic writing
def test_atomic_write_replaces_and_keeps_the_file_mode(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    export.atomic_write(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert oct(os.stat(target).st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temp file left


def test_full_disk_leaves_the_old_file_intact(monkeypatch, tmp_path):
    target = tmp_path / "figure.png"
    target.write_bytes(b"precious old figure")

    def full(stream, data):
        stream.write(data[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(export.files, "_write_all", full)
    with pytest.raises(ExportError, match="disk is full") as info:
        export.atomic_write(target, b"x" * 1000)
    assert "\n" not in str(info.value)
    assert target.read_bytes() == b"precious old figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.png"]


def test_unwritable_folder_gives_a_clear_message(monkeypatch, tmp_path):
    target = tmp_path / "figure.svg"
    target.write_bytes(b"old")

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(export.files.tempfile, "mkstemp", denied)
    with pytest.raises(ExportError, match="permission denied"):
        export.atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    with pytest.raises(ExportError, match="does not exist"):
        export.atomic_write(tmp_path / "missing" / "f.png", b"new")
    with pytest.raises(ExportError, match="is a folder"):
        export.atomic_write(tmp_path, b"new")


def test_failed_rename_removes_the_temp_file(monkeypatch, tmp_path):
    target = tmp_path / "data.npy"
    target.write_bytes(b"old")

    def cross_device(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(export.files.os, "replace", cross_device)
    with pytest.raises(ExportError, match="unchanged"):
        export.atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npy"]


# ----------------------------------------------------- every panel × format
def check_image(fmt: str, data: bytes, width: int) -> None:
    if fmt == "png":
        image = decode_png(data)
        assert image.width() == width
        assert_not_blank(image)
    elif fmt == "svg":
        root = ET.fromstring(data)
        drawn = [e for tag in ("path", "polyline", "polygon", "text", "image", "rect") for e in root.iter(f"{SVG}{tag}")]
        assert len(drawn) > 5
        assert any(True for _ in root.iter(f"{SVG}text")), "no text in the SVG"
    else:
        assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
        assert b"/DCTDecode" not in data


def check_data(fmt: str, path, expected: dict) -> None:
    arrays = expected.get("arrays") or {}
    if not arrays:
        assert fmt == "json"
        json.loads(path.read_text())
        return
    main = np.asarray(next(iter(arrays.values())))
    if fmt == "npy":
        loaded = np.load(path, allow_pickle=False)
        assert loaded.dtype == main.dtype and loaded.shape == main.shape
        np.testing.assert_array_equal(loaded, main)
    elif fmt == "csv":
        loaded = np.loadtxt(path, delimiter=",", ndmin=2)
        np.testing.assert_array_equal(loaded, main.reshape(main.shape[0], -1) if main.ndim else main.reshape(1, 1))
    else:
        doc = json.loads(path.read_text())
        assert isinstance(doc, dict) and doc


@pytest.mark.parametrize("panel_id", PANEL_IDS)
def test_every_panel_exports_every_format(qtbot, state, compute, tmp_path, panel_id):
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    base = panel_base()
    assert cls.export_data is not base.export_data or cls.data_export is not base.data_export, \
        f"{panel_id} has no export_data"
    panel = make_panel(qtbot, cls, state, compute)
    expected = panel.export_data()
    if panel.unavailable_message() is not None:  # needs a file opened (the Decoder's model): refused with its notice
        for fmt in export.FORMATS:
            with pytest.raises(ExportError, match="Open a"):
                export.export_panel(panel, tmp_path / f"{panel_id}.{fmt}")
        assert not list(tmp_path.iterdir())
        return
    for fmt in export.FORMATS:
        path = tmp_path / f"{panel_id}.{fmt}"
        if fmt in ("csv", "npy") and not expected.get("arrays"):
            with pytest.raises(ExportError, match="json"):
                export.export_panel(panel, path)
            assert not path.exists()
            continue
        written = export.export_panel(panel, path, width=700 if fmt == "png" else None)
        assert written == path and path.stat().st_size > 0, (panel_id, fmt)
        if fmt in export.IMAGE_FORMATS:
            check_image(fmt, path.read_bytes(), 700)
        else:
            check_data(fmt, path, expected)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == sorted(
        f".{f}" for f in export.FORMATS if expected.get("arrays") or f not in ("csv", "npy"))


def panel_base():
    from posenc_gui.views.base import Panel

    return Panel


def test_heatmap_npy_is_the_full_encoding_even_when_the_view_is_sampled(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    state.update(scheme="harmonic", seq_len=3000, d_model=1024)
    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(700, 500))
    shown = panel.data
    assert shown.positions.count < 3000 or shown.dims.count < 1024, "the view is not sampled; test is moot"
    export.export_panel(panel, tmp_path / "pe.npy")
    full = encode("harmonic", np.arange(3000.0), 1024, **state.params.scheme_kwargs())
    loaded = np.load(tmp_path / "pe.npy")
    assert loaded.shape == (3000, 1024)
    np.testing.assert_array_equal(loaded, full)


def test_heatmap_past_the_limit_refuses_npy_and_keeps_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    state.update(seq_len=limits.MAX_SEQ_LEN, d_model=64)
    assert limits.MAX_SEQ_LEN * 64 > limits.MAX_ENCODE_ELEMENTS
    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(700, 500))
    refused_keeping_the_old_file(panel, tmp_path / "pe.npy", "limit")
    written = export.export_panel(panel, tmp_path / "pe.json")  # JSON says which samples it holds
    doc = json.loads(written.read_text())
    assert doc["meta"]["sampled"] is True and "positions" in doc["arrays"]


def test_similarity_export_matches_the_model(qtbot, state, compute, tmp_path):
    from posenc_gui.views.similarity import SimilarityPanel

    state.update(seq_len=40, d_model=16)
    panel = make_panel(qtbot, SimilarityPanel, state, compute)
    panel.set_options(metric="cosine", reference=7)
    settle_panel(qtbot, panel)
    export.export_panel(panel, tmp_path / "s.npy")
    pe = encode("sinusoidal", np.arange(40.0), 16, base=10000.0, layout="interleaved")
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), pairwise(pe, pe, "cosine"))


def test_panel_refusal_is_an_export_error_and_keeps_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.similarity import SimilarityPanel

    state.update(seq_len=5000, d_model=8)
    assert 5000 * 5000 > limits.MAX_SIMILARITY_ELEMENTS
    panel = make_panel(qtbot, SimilarityPanel, state, compute, size=(700, 500))
    error = refused_keeping_the_old_file(panel, tmp_path / "sim.csv", "Similarity")
    assert "\n" not in str(error)


def test_unknown_extension_and_bad_width_keep_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(600, 400))
    refused_keeping_the_old_file(panel, tmp_path / "fig.tiff", "Unknown export format")
    refused_keeping_the_old_file(panel, tmp_path / "fig.png", "width", width=3)


def test_a_png_past_the_memory_budget_is_refused_and_keeps_the_old_file(qtbot, state, compute, tmp_path):
    from posenc_gui.views.heatmap import HeatmapPanel

    panel = make_panel(qtbot, HeatmapPanel, state, compute, size=(600, 400))
    figure = panel.figure_widget()
    height = round(figure.height() * 16000 / figure.width())
    assert height <= export.MAX_PNG_SIDE and 16000 * height > export.MAX_PNG_PIXELS
    # each side is within 16,384 pixels; the image as a whole (over 100 million pixels, 400 MiB) is not
    refused_keeping_the_old_file(panel, tmp_path / "fig.png", f"past the limit of {export.MAX_PNG_PIXELS:,} .*memory",
                                 width=16000)


# ------------------------------------------------------------ the window
@pytest.fixture
def window(make_window, monkeypatch):
    from posenc_gui.views import export_ui

    errors = []
    monkeypatch.setattr(export_ui, "show_error", lambda parent, message: errors.append(message))
    win = make_window(restore=False)
    win.errors = errors
    return win


def test_window_has_export_actions_and_a_button_on_every_dock(window, monkeypatch):
    texts = [a.text().replace("&", "") for a in window.file_menu.actions()]
    assert "Export…" in texts and "Export window as PNG…" in texts and "Copy figure to clipboard" in texts
    from posenc_gui.views.export_ui import dock_export_menu

    for panel_id, dock in window.docks.items():  # right-click menu on every dock, built or not
        assert dock.contextMenuPolicy() == Qt.ContextMenuPolicy.CustomContextMenu
        menu = dock_export_menu(window, panel_id, dock)
        assert dock_export_menu(window, panel_id, dock) is menu  # made once
        names = {a.objectName() for a in menu.actions()}
        assert f"export-{panel_id}-png" in names and f"copy-{panel_id}" in names
    shown = []
    monkeypatch.setattr(QMenu, "popup", lambda menu, position, *_: shown.append((menu, position)))
    dock = window.docks["heatmap"]
    dock.customContextMenuRequested.emit(QPoint(5, 5))  # a right-click opens it where it was
    assert shown == [(dock_export_menu(window, "heatmap", dock), dock.mapToGlobal(QPoint(5, 5)))]
    assert set(window.export_buttons) == set(window.panels.built())
    for panel_id in window.panels:  # panels are built lazily; each gets its button when built
        window.panels[panel_id]
    assert set(window.export_buttons) == set(window.panels)
    for panel_id, button in window.export_buttons.items():
        names = {a.objectName() for a in button.menu().actions()}
        assert {f"export-{panel_id}-{fmt}" for fmt in export.FORMATS} <= names
        assert f"copy-{panel_id}" in names
        assert button.parent() is window.panels[panel_id]


def test_dock_export_proposes_a_descriptive_name_in_the_last_folder(window, tmp_path, monkeypatch):
    from posenc_gui.views import export_ui

    asked = []
    folder = tmp_path / "figures"
    folder.mkdir()

    def answer(parent, title, proposed, fmt):
        asked.append(proposed)
        return str(folder / f"answer{len(asked)}.{fmt}")

    monkeypatch.setattr(export_ui, "ask_save_path", answer)
    window.state.update(scheme="harmonic", seq_len=96, d_model=32)
    window.state.flush()
    action = next(a for a in window.export_buttons["heatmap"].menu().actions()
                  if a.objectName() == "export-heatmap-png")
    action.trigger()
    assert (folder / "answer1.png").exists()
    assert_not_blank(decode_png((folder / "answer1.png").read_bytes()))
    export_ui.export_panel_interactive(window, "waveforms", "csv")
    assert asked[1] == str(folder / "harmonic_n96_d32_waveforms.csv")  # remembered folder + descriptive name
    data = np.loadtxt(folder / "answer2.csv", delimiter=",")
    np.testing.assert_array_equal(data, window.panels["waveforms"].export_data()["arrays"]["waveforms"])
    assert window.errors == []


def test_window_export_error_is_shown_and_the_old_file_kept(window, tmp_path, monkeypatch):
    from posenc_gui.views import export_ui

    target = tmp_path / "fig.svg"
    target.write_bytes(b"old svg")
    monkeypatch.setattr(export.files, "_write_all", lambda stream, data: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device")))
    assert export_ui.export_panel_to(window, "heatmap", str(target)) is None
    assert len(window.errors) == 1 and "disk is full" in window.errors[0]
    assert target.read_bytes() == b"old svg"


def test_export_dialog_writes_the_chosen_panel_format_and_width(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog

    dialog = ExportDialog(window, "similarity")
    qtbot.addWidget(dialog)
    assert dialog.path_edit.text().endswith(f"{window.state.params.slug()}_similarity.png")
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("svg"))
    assert dialog.path_edit.text().endswith("_similarity.svg")
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("png"))
    dialog.width_radio.setChecked(True)
    dialog.width_spin.setValue(900)
    assert dialog.size_label.text().startswith("900 ×")
    dialog.path_edit.setText(str(tmp_path / "dialog.png"))
    dialog.export_button.click()
    image = decode_png((tmp_path / "dialog.png").read_bytes())
    assert image.width() == 900
    assert dialog.result() == dialog.DialogCode.Accepted
    assert window.settings.value("export/last_folder") == str(tmp_path)


def test_export_dialog_stays_open_on_failure(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog

    dialog = ExportDialog(window, "heatmap")
    qtbot.addWidget(dialog)
    dialog.path_edit.setText(str(tmp_path / "no" / "such" / "folder" / "x.png"))
    dialog.export_button.click()
    assert dialog.written is None and dialog.result() != dialog.DialogCode.Accepted
    assert window.errors and "does not exist" in window.errors[-1]


def test_export_dialog_refuses_a_png_past_the_memory_budget_where_the_size_is_chosen(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog, export_panel_to

    dialog = ExportDialog(window, "heatmap")
    qtbot.addWidget(dialog)
    target = tmp_path / "big.png"
    target.write_bytes(b"old png")
    dialog.path_edit.setText(str(target))
    figure = window.panels["heatmap"].exported().figure_widget()
    assert figure.height() <= figure.width()  # so 16,000 wide stays within 16,384 a side
    dialog.width_radio.setChecked(True)
    dialog.width_spin.setValue(16000)
    assert f"past the limit of {export.MAX_PNG_PIXELS:,}" in dialog.size_label.text()
    assert not dialog.export_button.isEnabled()
    dialog.export_button.click()
    assert dialog.written is None and target.read_bytes() == b"old png"
    # the same width given to the export itself (as the dock's button or a script would): refused, file kept
    assert export_panel_to(window, "heatmap", str(target), width=16000) is None
    assert f"past the limit of {export.MAX_PNG_PIXELS:,}" in window.errors[-1]
    assert target.read_bytes() == b"old png"
    dialog.width_spin.setValue(1200)  # back within the budget: the size is announced and the button enabled
    assert dialog.size_label.text().startswith("1,200 × ") and dialog.export_button.isEnabled()


def test_whole_window_png_and_clipboard(window, tmp_path):
    from posenc_gui.views import export_ui

    written = export_ui.export_window_png(window, str(tmp_path / "window.png"), scale=1.5)
    image = decode_png(written.read_bytes())
    assert image.width() == round(window.width() * 1.5)
    assert_not_blank(image)
    assert export_ui.copy_panel_figure(window, "similarity")
    copied = QGuiApplication.clipboard().image()
    assert not copied.isNull() and copied.width() >= window.panels["similarity"].figure_widget().width()


def test_a_panel_in_a_hidden_tab_is_raised_and_exported(window, tmp_path):
    from posenc_gui.views import export_ui

    # (Parameters and Walkthrough make their figures for the export, outside their docks.)
    in_dock = [pid for pid, panel in window.panels.items()
               if panel.isAncestorOf(panel.figure_widget()) and panel.unavailable_message() is None]
    hidden = [pid for pid in in_dock if not window.docks[pid].isVisible() or
              not window.panels[pid].figure_widget().isVisible()]
    if not hidden:  # every dock visible: tab one behind another to make the case
        window.tabifyDockWidget(window.docks["heatmap"], window.docks["similarity"])
        window.docks["heatmap"].raise_()
        export.process_events()
        hidden = ["similarity"]
    panel_id = hidden[0]
    written = export_ui.export_panel_to(window, panel_id, str(tmp_path / "hidden.png"))
    assert written is not None, window.errors
    assert_not_blank(decode_png(written.read_bytes()))
    assert window.panels[panel_id].figure_widget().isVisible()

def test_export_dialog_announces_the_size_with_the_caption(window, tmp_path, qtbot):
    from posenc_gui.views.export_ui import ExportDialog

    window.state.update(seq_len=1_048_576, d_model=8192)
    window.state.flush()
    assert window.compute.wait_idle(TIMEOUT_S)
    finish_pending(qtbot, window.panels["heatmap"])  # the heatmap's re-sample after the new extent
    assert window.compute.wait_idle(TIMEOUT_S)
    assert window.panels["heatmap"].figure_caption()
    dialog = ExportDialog(window, "heatmap")
    qtbot.addWidget(dialog)
    dialog.width_radio.setChecked(True)
    dialog.width_spin.setValue(900)
    announced = re.match(r"900 × ([\d,]+) pixels \(figure on screen: \d+ × \d+, and a caption under it\)",
                         dialog.size_label.text())
    assert announced, dialog.size_label.text()
    dialog.path_edit.setText(str(tmp_path / "sampled.png"))
    dialog.export_button.click()
    image = decode_png((tmp_path / "sampled.png").read_bytes())
    assert (image.width(), image.height()) == (900, int(announced.group(1).replace(",", "")))
