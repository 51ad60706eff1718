"""Main window: docks, View menu, layout reset and settings that survive a restart."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from posenc_gui.model import EncodingParams, encode
from waiting import TIMEOUT_MS, TIMEOUT_S, finish_pending

CORE_PANELS = ("parameters", "heatmap", "waveforms", "similarity")


def test_every_panel_has_a_dock_listed_in_the_view_menu(make_window):
    window = make_window(restore=False)
    view_actions = {a.text() for a in window.view_menu.actions()}
    for panel_id in CORE_PANELS:
        dock = window.docks[panel_id]
        assert isinstance(dock, QDockWidget)
        assert dock.toggleViewAction().text() in view_actions
        features = dock.features()
        assert features & QDockWidget.DockWidgetFeature.DockWidgetMovable
        assert features & QDockWidget.DockWidgetFeature.DockWidgetFloatable
        assert features & QDockWidget.DockWidgetFeature.DockWidgetClosable
    assert "&Reset layout" in view_actions


def test_one_parameter_change_updates_all_core_views(make_window):
    window = make_window(restore=False)
    window.panels["parameters"].controls["d_model"].editor.setValue(64)
    window.state.flush()
    assert window.compute.wait_idle()
    expected = encode("sinusoidal", np.arange(128.0), 64)
    np.testing.assert_array_equal(window.panels["heatmap"].data.values, expected)
    assert window.panels["waveforms"].data.params.d_model == 64
    assert window.panels["similarity"].matrix_data.params.d_model == 64
    assert window.panels["similarity"].profile_data.params.d_model == 64


def test_reset_layout_brings_closed_docks_back(make_window):
    window = make_window(restore=False)
    window.docks["heatmap"].close()
    window.docks["similarity"].setFloating(True)
    assert not window.docks["heatmap"].isVisible()
    window.reset_layout()
    assert window.docks["heatmap"].isVisible()
    assert not window.docks["similarity"].isFloating()


def test_parameters_and_layout_are_restored_at_next_launch(make_window):
    first = make_window()
    first.state.update(scheme="four_vector", seq_len=300, d_model=20)
    first.state.flush()
    first.docks["waveforms"].close()
    first.close()
    second = make_window()
    assert second.state.params == EncodingParams("four_vector", 300, 20)
    assert not second.docks["waveforms"].isVisible()
    assert second.docks["heatmap"].isVisible()


def test_options_of_other_schemes_and_the_view_settings_are_restored(make_window, settings_path):
    first = make_window()
    first.state.update(base=640.0, layout="halves")
    first.state.update(scheme="binary", bit_values="unsigned")
    first.state.flush()
    first.state.set_view(embedding_scale=2.5, demo_d_model=16, reference=10)
    first.close()
    second = make_window()
    assert second.state.params == EncodingParams.validated(scheme="binary", bit_values="unsigned")
    assert dict(second.state.view) == {"embedding_scale": 2.5, "demo_d_model": 16, "reference": 10}
    second.state.update(scheme="sinusoidal")
    second.state.flush()
    assert dict(second.state.params.options) == {"base": 640.0, "layout": "halves"}  # remembered across launches
    second.close()
    text = settings_path.read_text(encoding="utf-8")
    settings_path.write_text(text.replace('"demo_d_model\\": 16', '"demo_d_model\\": 6400'), encoding="utf-8")
    third = make_window()
    assert third.state.view["demo_d_model"] == 8 and third.state.view["embedding_scale"] == 2.5
    assert "demo_d_model must be in 2…64, got 6400" in third.statusBar().currentMessage()


def test_command_line_flags_override_restored_parameters(make_window):
    first = make_window()
    first.state.update(scheme="harmonic", d_model=30)
    first.state.flush()
    first.close()
    second = make_window(overrides={"seq_len": 77})
    assert second.state.params == EncodingParams("harmonic", 77, 30)


def test_corrupt_settings_fall_back_to_defaults_with_a_warning(make_window, settings_path):
    settings_path.write_text(
        "[General]\nparams=\"{not json\"\nwindowState=@ByteArray(garbage)\ngeometry=12\n", encoding="utf-8"
    )
    window = make_window()
    assert window.state.params == EncodingParams()
    assert "ignored" in window.statusBar().currentMessage() or "unreadable" in window.statusBar().currentMessage()
    assert all(window.docks[p].isVisible() for p in CORE_PANELS)


def test_settings_with_out_of_range_values_fall_back(make_window, settings_path):
    settings_path.write_text('[General]\nparams="{\\"d_model\\": 0}"\n', encoding="utf-8")
    window = make_window()
    assert window.state.params == EncodingParams()
    assert "d_model" in window.statusBar().currentMessage()


def test_busy_indicator_is_in_the_status_bar(make_window):
    window = make_window(restore=False)
    assert window.busy_indicator.isHidden()
    assert window.statusBar().isAncestorOf(window.busy_indicator)
    assert window.docks["parameters"].isAreaAllowed(Qt.DockWidgetArea.LeftDockWidgetArea)


def build_ahead_quickly(monkeypatch, idle_ms: int) -> None:
    """Start building hidden panels 10 ms after the window shows, one per 10 ms, after ``idle_ms`` of quiet."""
    from posenc_gui.window import panels

    monkeypatch.setattr(panels, "PREBUILD_DELAY_MS", 10)
    monkeypatch.setattr(panels, "PREBUILD_STEP_MS", 10)
    monkeypatch.setattr(panels, "IDLE_MS", idle_ms)


@pytest.mark.prebuild
def test_hidden_panels_are_built_ahead_while_the_user_is_idle(make_window, qtbot, monkeypatch):
    build_ahead_quickly(monkeypatch, idle_ms=50)
    window = make_window(restore=False)
    shown_first = set(window.panels.built())
    assert "addition" not in shown_first and len(shown_first) < len(window.panels)
    qtbot.waitUntil(lambda: len(window.panels.built()) == len(window.panels), timeout=TIMEOUT_MS)
    addition = window.panels["addition"]
    assert not addition.on_screen() and addition.data is None  # built behind a tab: not computed
    window.raise_panel("addition")
    assert window.compute.wait_idle(TIMEOUT_S)
    assert addition.data is not None


class ManualClock:
    """Elapsed-time timers (``QElapsedTimer``'s start, restart, elapsed) on a clock that moves only when told to."""

    def __init__(self) -> None:
        self.now_ms = 0

    def timer(self) -> "ManualClock.Timer":
        return ManualClock.Timer(self)

    class Timer:
        def __init__(self, clock: "ManualClock") -> None:
            self._clock = clock
            self._started = clock.now_ms

        def start(self) -> None:
            self._started = self._clock.now_ms

        restart = start

        def elapsed(self) -> int:
            return self._clock.now_ms - self._started


def idle_on_a_manual_clock(monkeypatch, window) -> ManualClock:
    """Let ``window``'s building ahead measure quiet time on a :class:`ManualClock`.

    The last parameter change and the last request are then as long ago as
    the test says, however loaded the machine: a drag whose steps come
    100 ms apart cannot look like a pause because a step came late.
    """
    clock = ManualClock()
    monkeypatch.setattr(window.compute, "_since_request", clock.timer())
    monkeypatch.setattr(window._prebuilder, "_since_change", clock.timer())
    return clock


def assert_building_ahead_waits_while(window, clock, activity) -> None:
    """``activity(step)`` 12 times 100 ms apart (three times an IDLE_MS of 400) builds no panel ahead; the first
    step of the builder after a pause of 400 ms builds one."""
    before = set(window.panels.built())
    for step in range(12):
        activity(step)
        assert window.compute.wait_idle()
        clock.now_ms += 100
        window._prebuilder._step()
        assert set(window.panels.built()) == before
    clock.now_ms += 400  # the pause
    window._prebuilder._step()
    assert len(window.panels.built()) == len(before) + 1


@pytest.mark.prebuild
def test_building_ahead_waits_while_parameters_are_changing(make_window, monkeypatch):
    build_ahead_quickly(monkeypatch, idle_ms=400)
    window = make_window(restore=False)
    clock = idle_on_a_manual_clock(monkeypatch, window)

    def drag(step):  # a new value every 100 ms
        window.state.update(d_model=64 + 2 * step)
        window.state.flush()

    assert_building_ahead_waits_while(window, clock, drag)


@pytest.mark.prebuild
def test_building_ahead_waits_while_the_user_zooms(make_window, qtbot, monkeypatch):
    # A zoom changes no parameter; its re-sampling requests count as activity.
    build_ahead_quickly(monkeypatch, idle_ms=400)
    window = make_window(restore=False)
    clock = idle_on_a_manual_clock(monkeypatch, window)
    heatmap = window.panels["heatmap"]
    view_box = heatmap.matrix.view_box

    def wheel(step):  # wheel steps 100 ms apart, without a parameter change
        view_box.setRange(yRange=(step, 100), padding=0)
        view_box.sigRangeChangedManually.emit([False, True])
        finish_pending(qtbot, heatmap)  # the re-sample, asked for after a pause of its own

    assert_building_ahead_waits_while(window, clock, wheel)


def test_a_panel_behind_a_tab_recomputes_only_when_its_tab_is_selected(make_window, qtbot):
    # Qt keeps unselected tabbed docks "visible" (moved off screen): the panel
    # must not compute on every step there, and must catch up when selected.
    from PySide6.QtWidgets import QApplication

    window = make_window(restore=False)
    window.raise_panel("magnitude")
    qtbot.waitUntil(lambda: window.panels["magnitude"].data is not None, timeout=TIMEOUT_MS)
    magnitude = window.panels["magnitude"]
    window.raise_panel("heatmap")
    QApplication.processEvents()
    assert not magnitude.on_screen() and window.panels["heatmap"].on_screen()
    window.state.update(d_model=64)
    window.state.flush()
    assert window.compute.wait_idle()
    assert window.panels["heatmap"].data.params.d_model == 64
    assert magnitude.data.params.d_model == 512  # untouched behind its tab
    window.raise_panel("magnitude")
    qtbot.waitUntil(lambda: magnitude.data.params.d_model == 64, timeout=TIMEOUT_MS)


def test_a_panel_with_no_room_catches_up_once_it_gets_some(qtbot, state, compute):
    # A dock collapsed to nothing has an empty visible region, like one behind a tab.
    from PySide6.QtWidgets import QWidget

    from posenc_gui.views.magnitude import MagnitudePanel

    host = QWidget()
    qtbot.addWidget(host)
    host.resize(600, 400)
    panel = MagnitudePanel(state, compute, host)
    panel.setGeometry(0, 0, 600, 400)
    host.show()
    qtbot.waitExposed(host)
    qtbot.waitUntil(lambda: panel.data is not None, timeout=TIMEOUT_MS)
    panel.setGeometry(0, 0, 0, 0)
    state.update(d_model=64)
    state.flush()
    assert compute.wait_idle()
    assert panel.data.params.d_model == 512 and not panel.on_screen()
    panel.setGeometry(0, 0, 600, 400)
    qtbot.waitUntil(lambda: panel.data.params.d_model == 64, timeout=TIMEOUT_MS)


def test_a_dock_floated_from_behind_a_tab_builds_its_panel(make_window, qtbot, monkeypatch):
    from posenc_gui.window import panels

    monkeypatch.setattr(panels, "PREBUILD_DELAY_MS", 10**9)  # only showing the dock may build it
    window = make_window(restore=False)
    assert "addition" not in window.panels.built()  # tabbed behind the heatmap, never shown
    dock = window.docks["addition"]
    dock.setFloating(True)
    dock.show()
    qtbot.waitUntil(lambda: dock.widget() is window.panels.built().get("addition"), timeout=TIMEOUT_MS)
    assert dock.widget().isVisible()


# ------------------------------------------------------------ the command line
def launched(qtbot, *argv):
    """The window ``posenc-gui ARGV`` opens (built as the command does, then shown and settled)."""
    from posenc_gui.cli.window import build_window, prepare_launch

    window = build_window(prepare_launch(list(argv)))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.compute.wait_idle()
    return window


def test_a_preset_flag_sets_the_model_s_setup_and_the_other_options_to_their_defaults(make_window, qtbot):
    first = make_window()
    first.state.update(scheme="rope", rope_type="yarn", factor=4.0, beta_fast=16.0)
    first.state.flush()
    first.close()
    window = launched(qtbot, "--preset", "Llama 3.1", "--seq-len", "4096")
    params = window.state.params
    # Llama-3.1-8B's config.json: rope_theta 500000, llama3 scaling (factor 8, low 1, high 4, original 8192),
    # head dimension 4096 / 32 = 128; the flag given overrides the preset's 131,072 positions.
    assert (params.scheme, params.seq_len, params.d_model) == ("rope", 4096, 128)
    assert params.options["rope_theta"] == 500000.0 and params.options["rope_type"] == "llama3"
    assert (params.options["factor"], params.options["low_freq_factor"], params.options["high_freq_factor"],
            params.options["original_max_position_embeddings"]) == (8.0, 1.0, 4.0, 8192)
    assert params.options["beta_fast"] == 32.0  # the restored 16 is not the preset's: its default


def test_causal_sets_the_permutation_demo_s_causal_mask_and_shows_its_dock(settings_path, qtbot):
    window = launched(qtbot, "--no-restore", "--scheme", "nope", "--causal")
    permutation = window.panels["permutation"]
    assert permutation.causal_check.isChecked() and permutation.current_options()["causal"] is True
    assert window.panel_shown("permutation")
    plain = launched(qtbot, "--no-restore", "--scheme", "nope")
    assert not plain.panels["permutation"].causal_check.isChecked()


def test_compare_sets_the_schemes_the_positional_logits_compare(settings_path, qtbot):
    window = launched(qtbot, "--no-restore", "--scheme", "rope", "--compare", "alibi,t5", "--seeds", "4")
    options = window.panels["logits"].current_options()
    assert options["compare"] == "alibi,t5" and options["seeds"] == 4


def test_a_panel_flag_overrides_the_session_s_option(settings_path, qtbot, tmp_path):
    from posenc_gui.session import Session, write_session

    path = write_session(tmp_path / "lesson.json", Session(EncodingParams("sinusoidal", 64, 32), view={"reference": 5},
                                                           panels={"similarity": {"metric": "cosine"}}))
    window = launched(qtbot, "--no-restore", str(path), "--reference", "9", "--metric", "distance")
    assert window.panels["similarity"].current_options() == {"metric": "distance"}
    assert window.state.view["reference"] == 9
    kept = launched(qtbot, "--no-restore", str(path))
    assert kept.panels["similarity"].current_options() == {"metric": "cosine"} and kept.state.view["reference"] == 5


def test_real_head_runs_the_head_of_the_model_opened_with_model(settings_path, qtbot, tmp_path):
    from bert_folders import random_folder

    folder = random_folder(tmp_path / "bert", hidden=8, heads=4)
    window = launched(qtbot, "--no-restore", "--model", str(folder), "--real-head", "2")
    assert window.state.params.scheme == "learned_file"
    assert window.panels["permutation"].chosen_head() == 2
