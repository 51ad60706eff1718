"""Layouts by family: the docks in front follow the scheme's family, apply to it, and the user's moves stay."""

from __future__ import annotations

import pytest

from posenc_gui.window.layouts import layout_key, layouts
from posenc_gui.model import EncodingParams, presets
from posenc_gui.views.registry import panel_classes
from waiting import TIMEOUT_MS, TIMEOUT_S


def llama31() -> EncodingParams:
    preset = next(p for info, p in presets() if info.key == "rope" and p.label.startswith("Llama 3.1"))
    return EncodingParams("rope", preset.seq_len, preset.d_model, dict(preset.options))


def in_front(window) -> set[str]:
    """The panels whose docks are shown and not behind another dock's tab."""
    return {pid for pid, dock in window.docks.items() if dock.isVisible() and not dock.visibleRegion().isEmpty()}


FAMILIES = {
    "tables": lambda: EncodingParams(),
    "rotations": llama31,
    "biases": lambda: EncodingParams("alibi"),
    "biases-t5": lambda: EncodingParams("t5"),
    "rotations-xpos": lambda: EncodingParams("xpos"),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_the_window_opens_on_its_family_s_layout_and_no_panel_in_front_says_it_does_not_apply(make_window, family):
    params = FAMILIES[family]()
    window = make_window(params=params, restore=False)
    layout = layouts()[layout_key(params)]
    classes = {cls.panel_id: cls for cls in panel_classes()}
    front = in_front(window)
    applying = {pid for pid in (*layout.left, *layout.top, *layout.row) if classes[pid].shows(params.info)}
    assert applying <= front, f"{family}: {sorted(applying - front)} not in front"
    for pid in front:
        assert window.panels[pid].unavailable_reason(window.state.params) is None, f"{family}: {pid} does not apply"
    assert family.split("-")[0] == layout.key


def test_the_rotation_layout_brings_ropes_own_panels_forward(make_window):
    window = make_window(params=llama31(), restore=False)
    assert {"heatmap", "frequencies", "context", "logits"} <= in_front(window)
    assert "waveforms" not in in_front(window)


def test_switching_family_rearranges_and_coming_back_restores_the_users_layout(make_window, qtbot):
    window = make_window(restore=False)
    window.docks["similarity"].close()  # the user's own change to the tables layout
    window.state.set_params(EncodingParams("alibi"))
    qtbot.waitUntil(lambda: "bias" in in_front(window), timeout=TIMEOUT_MS)
    assert {"bias", "logits"} <= in_front(window)
    window.state.set_params(EncodingParams())
    qtbot.waitUntil(lambda: "heatmap" in in_front(window), timeout=TIMEOUT_MS)
    assert not window.docks["similarity"].isVisible(), "the user's closed dock came back"
    assert "waveforms" in in_front(window)


def test_a_dock_the_user_floated_stays_floating_when_the_family_changes(make_window, qtbot):
    window = make_window(restore=False)
    window.docks["scorecard"].setFloating(True)
    window.docks["scorecard"].show()
    window.state.set_params(llama31())
    qtbot.waitUntil(lambda: "frequencies" in in_front(window), timeout=TIMEOUT_MS)
    assert window.docks["scorecard"].isFloating()


def test_view_layout_names_every_layout_and_arranges_the_chosen_one(make_window, qtbot):
    window = make_window(restore=False)
    menu = next(a.menu() for a in window.view_menu.actions() if a.menu() and a.text() == "&Layout")
    titles = [a.text() for a in menu.actions() if a.text()]
    for layout in layouts().values():
        assert layout.title in titles
    window.state.set_params(EncodingParams("t5"))
    window.docks["bias"].close()
    next(a for a in menu.actions() if a.text() == layouts()["biases"].title).trigger()
    qtbot.waitUntil(lambda: "bias" in in_front(window), timeout=TIMEOUT_MS)


def test_the_users_layout_per_family_survives_a_restart(make_window, qtbot):
    first = make_window()
    first.state.set_params(EncodingParams("alibi"))
    qtbot.waitUntil(lambda: "bias" in in_front(first), timeout=TIMEOUT_MS)
    first.docks["logits"].close()
    first.state.set_params(EncodingParams())
    qtbot.waitUntil(lambda: "heatmap" in in_front(first), timeout=TIMEOUT_MS)
    first.close()
    second = make_window()
    assert "heatmap" in in_front(second)
    second.state.set_params(EncodingParams("alibi"))
    qtbot.waitUntil(lambda: "bias" in in_front(second), timeout=TIMEOUT_MS)
    assert not second.docks["logits"].isVisible(), "the biases layout the user had did not come back"


@pytest.mark.parametrize("text", ['{"states": 3}', "not json", '{"states": {"tables": "***"}}',
                                  '{"states": {"nonsense": "AAAA"}}', "[" * 100_000])
def test_bad_layouts_in_the_settings_are_named_and_left(make_window, text):
    window = make_window(restore=False)
    _, problems = window.dock_layouts.load_text(text)
    assert problems and all("layout" in problem for problem in problems)


#: Opens a window with the scheme of argv[1] on the offscreen screen of QT_QPA_PLATFORM, builds every panel
#: (as the idle-time prebuilder does, at once), and reports its frame, the screen and the docks in front.
FIT_SCRIPT = """
import json, sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from posenc_gui.mainwindow import MainWindow
from posenc_gui.model import EncodingParams, presets
scheme = sys.argv[1]
if scheme == "model":  # as `posenc-gui --model FOLDER` opens it
    from posenc_gui.cli.window import prepare_launch
    window = MainWindow(overrides=prepare_launch(["--model", sys.argv[2]]).overrides, restore=False)
else:
    if scheme == "llama3.1":
        preset = next(p for info, p in presets() if info.key == "rope" and p.label.startswith("Llama 3.1"))
        params = EncodingParams("rope", preset.seq_len, preset.d_model, dict(preset.options))
    else:
        params = EncodingParams(scheme)
    window = MainWindow(params=params, restore=False)
window.show()
app.processEvents()
for panel_id in window.docks:
    window.panels[panel_id]

def shown() -> tuple:
    return window.frameGeometry().getRect(), {pid: dock.height() for pid, dock in window.docks.items()
                                              if dock.isVisible() and not dock.visibleRegion().isEmpty()}


# settled: every request answered, and two passes of the event loop in a row that move nothing
# (a busy machine delivers the panels' results and their layout passes late)
before, still = None, 0
while still < 2:
    if not window.compute.wait_idle(float(sys.argv[3])):
        sys.exit("the window's requests were not answered")
    app.processEvents()
    now = shown()
    still = still + 1 if now == before else 0
    before = now
front = before[1]
from PySide6.QtWidgets import QTabBar
layouts = window.dock_layouts
_, top, row = layouts.placed(layouts.current, window.state.params)
print(json.dumps({"frame": window.frameGeometry().getRect(), "available": window.screen().availableGeometry().getRect(),
                  "front": front, "layout": layouts.current, "rows": [window.docks[pid].windowTitle() for pid in top + row],
                  "tabs": [[bar.tabText(i) for i in range(bar.count())] for bar in window.findChildren(QTabBar)
                           if bar.parent() is window and bar.isVisible()],
                  "not_applying": [pid for pid in front
                                   if window.panels[pid].unavailable_reason(window.state.params) is not None],
                  "logit_plots": [plot.getViewBox().height() for plot in (window.panels["logits"].logit_plot,
                                                                          window.panels["logits"].size_plot)]
                                 if "logits" in front else []}))
window.close()
# Torn down as posenc-gui does at exit: the canvases emptied first (see plotkit.close_canvases), then the window.
from posenc_gui.views.plotkit import close_canvases
close_canvases(window)
import shiboken6
shiboken6.delete(window)
"""


@pytest.mark.parametrize("screen", [(1280, 720), (1920, 1080)])
@pytest.mark.parametrize("scheme", ["sinusoidal", "llama3.1", "t5", "model"])
def test_every_family_fits_the_screen_with_every_panel_built_and_readable_docks(tmp_path, screen, scheme):
    import json
    import os
    import subprocess
    import sys

    from bert_folders import random_folder

    folder = random_folder(tmp_path / "bert") if scheme == "model" else ""
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "virtual", "x": 0, "y": 0,
                                               "width": screen[0], "height": screen[1]}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
           "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-c", FIT_SCRIPT, scheme, str(folder), str(TIMEOUT_S / 2)],
                          capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    placed = json.loads(done.stdout.strip().splitlines()[-1])
    x, y, w, h = placed["frame"]
    ax, ay, aw, ah = placed["available"]
    assert ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah, placed
    right = {pid: height for pid, height in placed["front"].items() if pid not in ("parameters", "walkthrough")}
    assert right and min(right.values()) >= 250, placed["front"]
    assert not placed["not_applying"], placed["front"]
    # the two stacked logit profiles keep a readable height: a short dock scrolls rather than squeeze them
    assert all(height >= 150 for height in placed["logit_plots"]), placed["logit_plots"]
    assert placed["layout"] == {"sinusoidal": "tables", "llama3.1": "rotations", "t5": "biases",
                                "model": "model_table"}[scheme]
    # the right area's tab bar begins with the layout's own panels, in its order (on a short screen all of
    # them are tabs of one row; Qt appended those tabbed last after a dozen others)
    bar = next(tabs for tabs in placed["tabs"] if placed["rows"][0] in tabs)
    if screen[1] < 800:
        assert bar[:len(placed["rows"])] == placed["rows"], bar
    else:
        assert bar[0] == placed["rows"][0], bar


def test_go_to_panel_finds_a_panel_by_part_of_its_name_and_brings_it_forward(make_window, monkeypatch):
    from posenc_gui.window import navigation as panel_navigation

    window = make_window(restore=False)
    assert window.docks["uniqueness"].visibleRegion().isEmpty()
    monkeypatch.setattr(panel_navigation, "ask_panel_name", lambda parent, titles: "uniq")
    window.shortcuts.go_to_panel_action.trigger()
    assert not window.docks["uniqueness"].visibleRegion().isEmpty()
    assert window.go_to_panel("RoPE frequencies") == "frequencies"
    assert window.go_to_panel("a") is None  # many titles contain it: none chosen, the status bar says so
    assert "No single panel" in window.statusBar().currentMessage()


def test_a_panel_name_matches_its_title_or_id_then_a_unique_prefix_then_a_unique_part():
    from posenc_gui.window.navigation import find_panel

    titles = {"heatmap": "Heatmap", "logits": "Positional logits", "permutation": "Permutation demo",
              "pca": "Positions (PCA)"}
    assert find_panel("heatmap", titles) == "heatmap"
    assert find_panel("LOGITS", titles) == "logits"
    assert find_panel("perm", titles) == "permutation"
    assert find_panel("Pos", titles) is None  # two titles start with it
    assert find_panel("pca)", titles) == "pca"
    assert find_panel("  ", titles) is None and find_panel("zebra", titles) is None


def test_with_a_model_folder_open_every_panel_is_reached_by_its_name(make_window, qtbot, tmp_path):
    from bert_folders import random_folder

    from posenc_gui.cli.window import prepare_launch

    window = make_window(overrides=prepare_launch(["--model", str(random_folder(tmp_path / "bert"))]).overrides,
                         restore=False)
    assert window.dock_layouts.current == "model_table"
    for panel_id, dock in window.docks.items():
        assert window.go_to_panel(dock.windowTitle().upper()) == panel_id
        qtbot.waitUntil(lambda d=dock: not d.visibleRegion().isEmpty(), timeout=TIMEOUT_MS)
