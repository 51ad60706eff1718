"""Start-up imports only what the first paint needs (issue #40 item 2).

The window is built and painted in a fresh, isolated interpreter (``-I``:
no user site, no PYTHONPATH) and its ``sys.modules`` read after the first
paint. Libraries for model files, tokenizers and number formats are imported
where they are used; any of them at start-up costs every launch its import
(``ml_dtypes`` alone once took 0.8 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from waiting import TIMEOUT_S

#: Imported by no part of the first paint (top-level package names).
NOT_AT_START_UP = ("tokenizers", "safetensors", "gguf", "ml_dtypes", "scipy", "matplotlib", "PIL", "torch",
                   "transformers")

#: The project's model-file readers, the model search and what a model sets up: loaded when a model is opened.
OWN_READERS = tuple(f"posenc_gui.model.files.{name}"
                    for name in ("model_file", "gguf_file", "config_rope", "locations", "model_setup", "model_tables"))

#: Builds the window as ``posenc-gui --quit-after-first-paint`` does, then prints the modules it imported.
FIRST_PAINT_MODULES = """
import json, sys
from posenc_gui.__main__ import main
code = main(["--no-restore", "--quit-after-first-paint"])
print(json.dumps({"exit": code, "modules": sorted(sys.modules), "started": list(sys.modules)}))
"""


def first_paint_modules(tmp_path, before: str = "") -> tuple[int, set[str], str]:
    """The exit status and the top-level packages imported by a fresh process up to its first paint."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-I", "-c", before + FIRST_PAINT_MODULES], capture_output=True,
                          text=True, env=env, timeout=TIMEOUT_S)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["exit"], {name.split(".")[0] for name in report["modules"]}, done.stdout


def test_the_first_paint_imports_no_file_reader_tokenizer_or_number_format(tmp_path):
    exit_code, packages, output = first_paint_modules(tmp_path)
    assert exit_code == 0 and output.startswith("first paint"), output
    assert "posenc_gui" in packages and "pyqtgraph" in packages  # it did build the window
    assert sorted(packages.intersection(NOT_AT_START_UP)) == []
    modules = set(json.loads(output.strip().splitlines()[-1])["modules"])
    assert "posenc_gui.model.files.json_nesting" in modules  # the session's bounded JSON reading is there
    assert sorted(modules.intersection(OWN_READERS)) == []  # the project's own readers are not



def test_numpy_and_the_model_layer_load_before_qt(tmp_path):
    """PySide6's import hook reads the source of each module imported after it (for its ``__feature__``
    imports): NumPy and the model layer load before it, and are not read (sys.modules keeps the order in which
    imports started)."""
    from posenc_gui.cli import LOADED_BEFORE_QT

    exit_code, _, output = first_paint_modules(tmp_path)
    assert exit_code == 0, output
    order = json.loads(output.strip().splitlines()[-1])["started"]
    qt = order.index("PySide6")
    assert all(order.index(name) < qt for name in LOADED_BEFORE_QT), [order.index(n) for n in LOADED_BEFORE_QT]
    model = [name for name in order if name.startswith("posenc_gui.model.")]
    assert len(model) > 30 and sum(order.index(name) < qt for name in model) > 0.9 * len(model)


#: The window's start, then the source files that were read (``inspect.getsource`` fills ``linecache``).
SOURCES_READ = """
import json, linecache, sys
from posenc_gui.__main__ import main
code = main(["--no-restore", "--quit-after-first-paint"])
print(json.dumps({"exit": code, "read": sorted(linecache.cache)}))
"""


def test_the_window_s_start_reads_no_module_s_source(tmp_path):
    """PySide6's import hook read the source of each module imported after it (pyqtgraph's, the views',
    ~30 ms of start-up); the window's start tells it every module has the default API (see
    ``posenc_gui.cli.skip_pyside_source_scan``)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-I", "-c", SOURCES_READ], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["exit"] == 0, done.stdout + done.stderr
    assert [path for path in report["read"] if "pyqtgraph" in path or "posenc_gui" in path] == []


#: Imports a module, stops the scan, imports another; prints which of the two files PySide6's hook read.
SCAN_STOPPED = """
import json, linecache, sys
sys.path.insert(0, sys.argv[1])
import PySide6.QtCore
import before_the_stop
from posenc_gui.cli import skip_pyside_source_scan
stopped = skip_pyside_source_scan()
import after_the_stop
print(json.dumps({"stopped": stopped, "read": sorted(name.rsplit("/", 1)[-1] for name in linecache.cache)}))
"""


def test_pyside_reads_the_source_of_a_module_imported_before_the_stop_and_not_after(tmp_path):
    """The first half fails when a PySide6 release no longer reads sources: the stop is then unneeded."""
    for name in ("before_the_stop", "after_the_stop"):
        (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
    done = subprocess.run([sys.executable, "-I", "-c", SCAN_STOPPED, str(tmp_path)], capture_output=True,
                          text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=TIMEOUT_S)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["stopped"] is True
    assert "before_the_stop.py" in report["read"]
    assert "after_the_stop.py" not in report["read"]


def test_the_first_paint_imports_the_modules_of_the_shown_panels_only(tmp_path):
    """A panel's module is imported when its panel is built: at start-up, the five of the first layout."""
    from posenc_gui.views.registry import BUILT_IN
    from posenc_gui.window.layouts import layouts

    tables = layouts()["tables"]  # the layout of the default (sinusoidal) scheme
    shown = {*tables.left, *tables.top, *tables.row}
    module = {declared.panel_id: "posenc_gui.views." + declared.location.split(":")[0] for declared in BUILT_IN}
    exit_code, _, output = first_paint_modules(tmp_path)
    modules = set(json.loads(output.strip().splitlines()[-1])["modules"])
    assert exit_code == 0
    assert {module[panel_id] for panel_id in shown} <= modules
    hidden = sorted(name for panel_id, name in module.items() if panel_id not in shown)
    assert len(hidden) == len(module) - len(shown) >= 15 and sorted(modules.intersection(hidden)) == []
    # the walkthrough's measurements import the logit properties and the Scorecard's analyses with their first
    # result; File ▸ Export handout… its dialog when chosen
    assert sorted(modules.intersection({"posenc_gui.model.attention.logit_properties",
                                        "posenc_gui.views.handout_ui"})) == []
    # the default layout's data functions import no analysis (about 30 ms of imports), nor the attention demos
    analyses = {name for name in modules if name.startswith(("posenc_gui.model.analyses.", "posenc_gui.model.attention",
                                                             "posenc_gui.model.panels.panel_data"))}
    assert "posenc_gui.model.panels.table_data" in modules
    assert sorted(analyses - {"posenc_gui.model.analyses.similarity", "posenc_gui.model.analyses.compare",
                              "posenc_gui.model.analyses.measured"}) == []


def parsed(parser, argv: list[str]) -> dict | str:
    """What ``parser`` reads of ``argv``: its values, or its one-line error."""
    from posenc_gui.cli.parameters import UsageError

    try:
        return vars(parser.parse_args(argv))
    except UsageError as error:
        return str(error)


@pytest.mark.parametrize("argv", [
    [], ["--no-restore"], ["--seq-len", "-3"], ["--scheme", "rope", "--d-model=64"],
    ["session.json", "--theme", "dark"], ["--seq-len", "8", "extra.json", "more.json"],
])
def test_a_command_line_without_panel_flags_is_read_as_with_every_panel_s_flags(argv):
    """Start-up reads such a command line without importing the panels' modules for their flags: the same
    values (or error) as the full parser's, whose panel flags are all unset."""
    from posenc_gui.cli.parameters import needs_panel_flags
    from posenc_gui.cli.window import build_parser
    from posenc_gui.views.registry import panel_classes

    without = build_parser(classes=())
    assert not needs_panel_flags(without, argv)
    fast, full = parsed(without, argv), parsed(build_parser(panel_classes()), argv)
    if isinstance(full, str):
        assert fast == full
    else:
        assert fast == {dest: value for dest, value in full.items() if dest in fast}
        assert len(full) > len(fast) + 20 and all(full[dest] is None for dest in full.keys() - fast.keys())


#: The project's model-file readers, the model search and what a model sets up: loaded when a model is opened.
OWN_READERS = tuple(f"posenc_gui.model.files.{name}"
                    for name in ("model_file", "gguf_file", "config_rope", "locations", "model_setup", "model_tables"))

#: Builds the window as ``posenc-gui --quit-after-first-paint`` does, then prints the panels built by then.
FIRST_PAINT_PANELS = """
import json
import posenc_gui.cli.window as window
report = window._report_first_paint
def listed(win, app):
    print(json.dumps(sorted(win.panels.built())))
    report(win, app)
window._report_first_paint = listed
from posenc_gui.cli import main
main(["--no-restore", "--quit-after-first-paint"])
"""


@pytest.mark.parametrize("height, second_row_built", [(720, False), (800, False), (1080, True)])
def test_a_short_screen_s_tabbed_second_row_is_not_built_for_the_first_paint(tmp_path, height, second_row_built):
    """On a screen under 800 px the right area's rows are tabbed into one before the window shows: the
    panels of the second row (waveforms, similarity) are built when their tab is chosen, not for a first
    paint they are not in. On a taller screen they are in it."""
    from posenc_gui.window.layouts import layouts

    tables = layouts()["tables"]
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": 1920, "height": height}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
           "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-I", "-c", FIRST_PAINT_PANELS], capture_output=True, text=True,
                          env=env, timeout=TIMEOUT_S)
    assert "first paint" in done.stdout, done.stdout + done.stderr
    built = set(json.loads(done.stdout.splitlines()[0]))
    assert {*tables.left, *tables.top} <= built
    assert set(tables.row) <= built if second_row_built else not set(tables.row) & built


#: Runs the window to its first paint, then prints the BLAS libraries' thread counts.
BLAS_THREADS = """
import json
from posenc_gui.cli import main
from posenc_gui import blas
main(["--no-restore", "--quit-after-first-paint"])
import threadpoolctl
print(json.dumps({"threads": [info["num_threads"] for info in threadpoolctl.threadpool_info()
                              if info["user_api"] == "blas"], "at load": blas._started_with_one_thread}))
"""


@pytest.mark.parametrize("user_setting, at_load", [(None, True), ("2", False)])
def test_the_window_s_blas_has_one_thread_set_at_load_unless_the_user_set_a_count(tmp_path, user_setting, at_load):
    """NumPy's BLAS starts with one thread (no threadpoolctl scan at start-up); a count the user set is limited
    to one later, as before."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        env.pop(name, None)
    if user_setting is not None:
        env["OPENBLAS_NUM_THREADS"] = user_setting
    done = subprocess.run([sys.executable, "-I", "-c", BLAS_THREADS], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["threads"] and set(report["threads"]) == {1}, done.stdout + done.stderr
    assert report["at load"] is at_load


@pytest.mark.parametrize("argv", [["--dims", "0,1"], ["--metric=cosine"], ["--no-rest"], ["-h"], ["--help"],
                                  ["--causal"], ["--seq-len", "8", "--step", "2"]])
def test_a_panel_flag_an_abbreviation_or_the_help_gets_every_panel_s_flags(argv):
    from posenc_gui.cli.parameters import needs_panel_flags
    from posenc_gui.cli.window import build_parser

    assert needs_panel_flags(build_parser(classes=()), argv)


#: The project's model-file readers, the model search and what a model sets up: loaded when a model is opened.
OWN_READERS = tuple(f"posenc_gui.model.files.{name}"
                    for name in ("model_file", "gguf_file", "config_rope", "locations", "model_setup", "model_tables"))

#: Builds the window as FIRST_PAINT_MODULES does, counting Python's cyclic collections until the first paint.
COLLECTIONS = """
import gc, json
import posenc_gui.cli.window as window
collections = []
gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(info["generation"]))
report = window._report_first_paint
def counted(win, app):
    print(json.dumps({"before first paint": len(collections), "automatic": gc.isenabled()}))
    report(win, app)
window._report_first_paint = counted
from posenc_gui.cli import main
refused = main(["--no-such-flag"])
print(json.dumps({"refused": refused, "automatic after refusal": gc.isenabled()}))
collections.clear()
main(["--no-restore", "--quit-after-first-paint"])
"""


def test_start_up_runs_no_garbage_collection_and_a_refused_command_line_turns_it_back_on(tmp_path):
    """Start-up makes objects that live as long as the window: Python's ~150 automatic collections over them
    before the first paint freed nothing. The window's garbage collector takes over (automatic collection
    stays off, as it always has with a window); without a window it is back on."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-I", "-c", COLLECTIONS], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines == [{"refused": 2, "automatic after refusal": True},
                     {"before first paint": 0, "automatic": False}], done.stdout + done.stderr


def test_the_plotting_kit_s_plots_build_no_context_menu(qapp, monkeypatch):
    """Every plot of the window has its context menu off; pyqtgraph's view box menu (some thirty widgets) is not
    built for it at all, the colour bar's included (pyqtgraph's makes one and then turns it off)."""
    import importlib

    import pyqtgraph as pg

    from posenc_gui.views.plotkit import MatrixPlot, add_plot

    view_box_module = importlib.import_module("pyqtgraph.graphicsItems.ViewBox.ViewBox")  # the class's module
    built = []

    class CountedMenu(view_box_module.ViewBoxMenu):
        def __init__(self, view):
            built.append(view)
            super().__init__(view)

    monkeypatch.setattr(view_box_module, "ViewBoxMenu", CountedMenu)
    canvas = pg.GraphicsLayoutWidget()
    plot = add_plot(canvas.ci, "x", "y")
    matrix = MatrixPlot(canvas.ci, "column", "row")
    assert not plot.menuEnabled() and not matrix.plot.menuEnabled()
    assert built == []  # before: [matrix.colorbar.getViewBox()]


def test_no_panel_builds_a_view_box_menu(qapp, state, compute, monkeypatch):
    """Each panel's plots are built with their menus off (``enableMenu=False``, the kit's colour bar): a menu built
    and then turned off cost some thirty widgets a plot (RoPE context's seven plots: seven menus)."""
    import importlib

    from posenc_gui.views.registry import panel_classes

    view_box_module = importlib.import_module("pyqtgraph.graphicsItems.ViewBox.ViewBox")
    built: dict[str, int] = {}
    building: list[str] = []

    class CountedMenu(view_box_module.ViewBoxMenu):
        def __init__(self, view):
            built[building[-1]] = built.get(building[-1], 0) + 1
            super().__init__(view)

    monkeypatch.setattr(view_box_module, "ViewBoxMenu", CountedMenu)
    panels = []
    for cls in panel_classes():
        building.append(cls.panel_id)
        panels.append(cls(state, compute))
    assert len(panels) > 20 and built == {}, repr(built)  # before: ten panels built 28 menus
    for panel in panels:
        panel.deleteLater()


def test_the_parameters_hidden_error_lines_get_their_style_sheet_when_first_shown(qtbot, state, compute):
    """A style sheet re-polishes its widget: the error lines of the Parameters panel (one per built control and
    a general one), hidden at start-up, get theirs (the refusal's red) when a refusal first shows, on either of
    the panel's paths."""
    from posenc_gui.views.parameters import ParametersPanel

    panel = ParametersPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    lines = list(panel.errors.values())
    assert len(lines) == len(panel.controls) + 1 >= 5 and [line for line in lines if line.styleSheet()] == []
    assert panel._apply("base", 0.5) is not None  # refused: the panel shows why
    panel.controls["d_model"].show_error("d_model: a refusal shown by its control")
    shown = [line for line in lines if line.isVisible()]
    assert {panel.errors["base"], panel.errors["d_model"]} <= set(shown)
    assert all("#b00020" in line.styleSheet() for line in shown)
    assert all(not line.styleSheet() for line in lines if line not in shown)


#: ``posenc-gui export`` of the panels in argv[1:], then the panel modules it imported.
EXPORT_MODULES = """
import json, sys
from posenc_gui.cli import main
code = main(["export", *sys.argv[1:]])
print(json.dumps({"exit": code, "panels": sorted(name for name in sys.modules
                                               if name.startswith("posenc_gui.views.") and name.count(".") == 2)}))
"""


@pytest.mark.parametrize("argv, imported", [
    (["heatmap"], {"heatmap"}),
    (["waveforms", "--dims", "0,1"], "every"),  # a panel's option: every panel's flags are made
    (["magnitude", "similarity", "--d-model", "32,64"], {"magnitude", "similarity"}),
])
def test_an_export_imports_the_named_panels_modules_only(tmp_path, argv, imported):
    """The twenty other panel modules cost an export ~75 ms of imports; their flags are made only when an
    argument may be one of them."""
    from posenc_gui.views.registry import BUILT_IN

    modules = {"posenc_gui.views." + declared.location.split(":")[0] for declared in BUILT_IN}
    output = tmp_path / "out.png" if len(argv) == 1 else tmp_path / "batch"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-I", "-c", EXPORT_MODULES, *argv, "-o", f"{output}{os.sep * (len(argv) > 1)}"],
                          capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["exit"] == 0, done.stdout + done.stderr
    loaded = modules.intersection(report["panels"])
    if imported == "every":
        assert loaded == modules
    else:
        assert loaded == {"posenc_gui.views." + declared.location.split(":")[0] for declared in BUILT_IN
                          if declared.panel_id in imported}
