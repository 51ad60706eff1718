"""The panel registry: what a panel declares makes its dock, View menu entry, export actions and command line."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from helpers_imports import assert_loads_none_of
from helpers_panels import show_panel
from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.cli.plan import build_parser, plan
from posenc_gui.model import EncodingParams
from posenc_gui.state import AppState
from posenc_gui.views import registry
from posenc_gui.views.base import Panel
from posenc_gui.views.export_ui import dock_export_menu
from posenc_gui.views.host import ExportHost, PanelHost
from posenc_gui.views.registry import DockPlacement, PanelOption, panel_class, panel_classes
from posenc_gui.views.walkthrough import STEPS
from waiting import TIMEOUT_MS

#: The scheme the test panel does not apply to, and why.
REFUSED_SCHEME = "naive"
REASON = "it needs a bounded encoding, and the naive index grows without bound."


@dataclass(frozen=True)
class TinyData:
    """What the tiny panel's model function gives: ‖PE(p)‖ per position at a scale."""

    params: EncodingParams
    scale: float
    norms: np.ndarray


def tiny_norms(params: EncodingParams, scale: float) -> TinyData:
    """The tiny panel's model function (NumPy only): σ·‖PE(p)‖ for every position; ValueError for σ ≤ 0."""
    if not scale > 0:
        raise ValueError(f"tiny_scale must be > 0, got {scale}")
    return TinyData(params, scale, scale * np.linalg.norm(params.encode(), axis=1))


class TinyPanel(Panel):
    """A panel that exists only in these tests, made from the template: its model function and arguments,
    how it draws and exports a result; the base class requests, keeps the result, says errors, and gives the
    figure widget, the caption and the empty state."""

    panel_id = "tiny"
    title = "Tiny test"
    help_text = "test"
    dock = DockPlacement("left", shown=True)
    model_function = tiny_norms
    export_formats = ("png", "svg", "json")
    cli_options = (PanelOption("--tiny-scale", "σ of the tiny panel", type=float, metavar="S", default=1.0,
                               example=2.5),)

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.scale = 1.0
        self.requests = 0
        self.summary_label = self.add_summary_label()
        self.canvas = QLabel("nothing yet", self)
        self.canvas.setMinimumSize(200, 150)
        self.body.addWidget(self.canvas, 1)
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def unavailable_reason(self, params):
        return REASON if params.scheme == REFUSED_SCHEME else None

    def apply_options(self, tiny_scale: float | None = None) -> None:
        if tiny_scale is not None:
            if not 0 < tiny_scale <= 10:
                raise ValueError(f"tiny_scale must be in (0, 10], got {tiny_scale}")
            self.scale = tiny_scale
            self.schedule_update()

    def current_options(self) -> dict:
        return {"tiny_scale": self.scale}

    def model_arguments(self) -> tuple:
        self.requests += 1
        return self.state.params, self.scale

    def show_data(self, data: TinyData) -> None:
        self.canvas.setText(f"‖p‖ up to {np.max(data.norms):.4g}, σ = {data.scale:g}")
        self.summary_label.setText(f"Tiny: the largest σ·‖p‖ is <b>{np.max(data.norms):.4g}</b>.")

    def data_export(self, data: TinyData):
        return {"norms": data.norms}, {"scale": data.scale}


@pytest.fixture
def tiny():
    registry.register(TinyPanel)
    yield TinyPanel
    registry.unregister(TinyPanel.panel_id)


def view_menu_titles(window) -> list[str]:
    return [action.text() for action in window.view_menu.actions() if action.text()]


# --------------------------------------------------------------------------- one declaration, every place


def test_a_registered_panel_gets_a_dock_where_it_says_and_a_view_menu_entry(tiny, make_window):
    window = make_window(restore=False)
    dock = window.docks["tiny"]
    assert "Tiny test" in view_menu_titles(window)
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()  # shown at first launch, not behind a tab
    panel = window.panels["tiny"]
    assert panel.host is window
    assert window.compute.wait_idle()
    assert panel.data is not None and panel.data.params == window.state.params
    names = {action.objectName() for action in dock_export_menu(window, "tiny", dock).actions()}
    assert {"export-tiny-png", "export-tiny-svg", "export-tiny-json"} <= names
    assert not names & {"export-tiny-csv", "export-tiny-npy", "export-tiny-pdf"}  # only what it declares


def test_a_panel_of_the_template_is_reached_by_name_and_saved_and_restored_with_a_session(tiny, make_window,
                                                                                           tmp_path):
    window = make_window(restore=False)
    window.raise_panel("parameters")
    assert window.go_to_panel("tiny te") == "tiny"  # View ▸ Go to panel… by a part of its title
    dock = window.docks["tiny"]
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    panel = window.panels["tiny"]
    panel.apply_options(tiny_scale=3.0)
    assert window.compute.wait_idle() and panel.data.scale == 3.0
    path = tmp_path / "tiny.json"
    assert window.save_session(str(path)) is None
    assert json.loads(path.read_text())["panels"]["tiny"] == {"tiny_scale": 3.0}

    other = make_window(restore=False)
    assert other.open_session(str(path)) is None
    restored = other.panels["tiny"]
    assert restored.scale == 3.0
    assert other.compute.wait_idle() and restored.data.scale == 3.0
    np.testing.assert_allclose(restored.data.norms, panel.data.norms, rtol=1e-15)


def test_a_panel_of_the_template_exports_its_figure_caption_and_numbers_and_joins_a_handout(qapp, tiny, tmp_path):
    out = tmp_path / "tiny.json"
    assert export_cli.main(["tiny", "-o", str(out), "--tiny-scale", "2.5", "--seq-len", "16",
                            "--d-model", "8"]) == export_cli.EXIT_OK
    written = json.loads(out.read_text())
    assert written["meta"]["panel"] == "tiny" and written["meta"]["scale"] == 2.5  # the base's keys, the panel's
    assert (written["params"]["seq_len"], written["params"]["d_model"]) == (16, 8)
    # sinusoidal at even d: ‖PE(p)‖² = d/2 at every position, so σ·‖PE(p)‖ = 2.5·2
    norms = np.array(written["arrays"]["norms"]["data"])
    assert norms.shape == (16,)
    np.testing.assert_allclose(norms, 2.5 * 2.0, rtol=1e-12)
    png = tmp_path / "tiny.png"
    assert export_cli.main(["tiny", "-o", str(png), "--seq-len", "16", "--d-model", "8"]) == export_cli.EXIT_OK
    assert png.read_bytes().startswith(b"\x89PNG")
    folder = tmp_path / "handout"
    assert export_cli.main(["handout", "-o", f"{folder}/", "tiny", "magnitude", "--tiny-scale", "2.5",
                            "--seq-len", "16", "--d-model", "8"]) == export_cli.EXIT_OK
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert "1. Tiny test" in index and (folder / "01_tiny.png").is_file()
    assert "the largest σ·‖p‖ is 5" in index  # the headline, from the panel's summary line


def test_the_template_keeps_the_result_says_errors_and_has_an_empty_state(qtbot, state, compute):
    panel = TinyPanel(state, compute)
    qtbot.addWidget(panel)
    panel.resize(500, 400)
    assert panel.data is None and panel.figure_caption() == ""
    with pytest.raises(ValueError, match="tiny: nothing computed yet"):
        panel.export_data()
    assert panel.figure_widget() is panel.canvas
    panel.show()
    qtbot.waitExposed(panel)
    assert compute.wait_idle() and panel.data is not None
    good = panel.data
    assert panel.figure_caption() == f"Tiny: the largest σ·‖p‖ is {np.max(good.norms):.4g}."
    panel.scale = -1.0  # past apply_options' check: the model function refuses
    panel.request_update()
    assert compute.wait_idle()
    assert panel.message_label.text() == "tiny_scale must be > 0, got -1.0" and not panel.message_label.isHidden()
    assert panel.data is good  # the last good view stays
    panel.apply_options(tiny_scale=2.0)
    assert compute.wait_idle() and panel.data.scale == 2.0
    assert panel.message_label.isHidden()  # a result clears the message


def test_a_model_function_is_listed_once_among_the_panel_s_model_functions():
    assert TinyPanel.model_functions == (tiny_norms,)
    from posenc_gui.views.uniqueness import UniquenessPanel

    assert UniquenessPanel.model_functions[0] is UniquenessPanel.model_function
    assert len(set(UniquenessPanel.model_functions)) == len(UniquenessPanel.model_functions) == 2


def test_each_built_in_declaration_is_its_class_s_and_a_registered_panel_is_declared_by_its_class(tiny):
    """The window's docks and menus are made from the declarations before the panels' modules load: the id,
    title, dock and export formats of :data:`registry.BUILT_IN` are those its class declares."""
    assert len({declared.panel_id for declared in registry.declarations()}) == len(registry.declarations())
    for declared in registry.BUILT_IN:
        cls = declared.load()
        module, name = declared.location.split(":")
        assert (cls.__module__, cls.__name__) == (f"posenc_gui.views.{module}", name)
        assert (declared.panel_id, declared.title, declared.dock) == (cls.panel_id, cls.title, cls.dock)
        assert (declared.export_formats or export.FORMATS) == cls.export_formats, declared.panel_id
    tiny_declared = registry.declaration("tiny")
    assert (tiny_declared.title, tiny_declared.dock, tiny_declared.export_formats, tiny_declared.load()) == (
        TinyPanel.title, TinyPanel.dock, TinyPanel.export_formats, TinyPanel)
    assert [cls.panel_id for cls in panel_classes()] == [d.panel_id for d in registry.declarations()]
    with pytest.raises(KeyError, match="no panel 'nosuch'"):
        panel_class("nosuch")


def test_a_tabbed_panel_is_tabbed_behind_the_first_dock_shown_in_its_area(make_window):
    window = make_window(restore=False)
    areas = {"left": Qt.DockWidgetArea.LeftDockWidgetArea, "right": Qt.DockWidgetArea.RightDockWidgetArea}
    front = {area: next(window.docks[c.panel_id] for c in panel_classes() if c.dock.area == area and c.dock.shown)
             for area in areas}
    for cls in panel_classes():
        dock = window.docks[cls.panel_id]
        assert window.dockWidgetArea(dock) == areas[cls.dock.area], cls.panel_id
        behind_front = dock in window.tabifiedDockWidgets(front[cls.dock.area])
        assert behind_front != cls.dock.shown, cls.panel_id
    assert view_menu_titles(window)[:len(panel_classes())] == [cls.title for cls in panel_classes()]


def test_the_command_line_lists_a_registered_panel_and_takes_its_options(qapp, tiny, capsys, tmp_path):
    assert export_cli.main(["--list"]) == export_cli.EXIT_OK
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == [cls.panel_id for cls in panel_classes()] and listed[-1] == "tiny"
    classes = panel_classes()
    args = build_parser(classes).parse_args(["tiny", "-o", str(tmp_path / "t.json"), "--tiny-scale", "2.5"])
    checked = plan(args, classes)
    assert [(option.flag, value) for option, value in checked.options["tiny"]] == [("--tiny-scale", 2.5)]
    assert export_cli.main(["tiny", "-o", str(tmp_path / "t.json"), "--tiny-scale", "2.5",
                            "--seq-len", "16", "--d-model", "8"]) == export_cli.EXIT_OK
    assert '"scale": 2.5' in (tmp_path / "t.json").read_text()
    assert export_cli.main(["tiny", "-o", str(tmp_path / "t.csv")]) == export_cli.EXIT_USAGE  # not declared
    assert "exports png, svg, json, not csv" in capsys.readouterr().err
    assert not (tmp_path / "t.csv").exists()
    assert export_cli.main(["heatmap", "-o", str(tmp_path / "h.png"), "--tiny-scale", "2"]) == export_cli.EXIT_USAGE
    assert "--tiny-scale is an option of the tiny panel" in capsys.readouterr().err


def test_every_panel_option_reaches_its_panel(qtbot, state, compute):
    """Each declared flag is a keyword the panel's apply_options takes (a typo would be a TypeError)."""
    for cls in panel_classes():
        panel = cls(state, compute)
        qtbot.addWidget(panel)
        for option in cls.cli_options:
            assert option.example is not None, option.flag  # every option says a value it takes
            panel.apply_options(**{option.dest: option.example})
        with pytest.raises(TypeError, match="unknown_option"):
            panel.apply_options(unknown_option=1)


def test_a_panel_option_s_default_in_the_help_is_the_new_panel_s(qtbot, compute):
    """The default ``--help`` shows is what a new panel has: its declared default or its spec's, against the
    panel's own options or, for a shared view setting, the state's."""
    checked = []
    for cls in panel_classes():
        state = AppState()
        panel = cls(state, compute)
        qtbot.addWidget(panel)
        for option in cls.cli_options:
            if option.spec is not None:
                shown = state.view if option.dest in state.view else panel.current_options()
                assert shown[option.dest] == option.spec.default, option.flag
                checked.append(option.flag)
            elif option.default is not None:
                assert panel.current_options()[option.dest] == option.default, option.flag
                checked.append(option.flag)
    assert {"--metric", "--causal", "--position", "--reference", "--demo-d-model", "--seeds", "--step"} \
        <= set(checked)
    help_text = " ".join(build_parser(panel_classes()).format_help().split())
    for flag in checked:
        option = next(option for cls in panel_classes() for option in cls.cli_options if option.flag == flag)
        assert f"Default: {option.default_text()}." in help_text, flag


# --------------------------------------------------------------------------- model layer


def test_every_panels_model_functions_are_in_the_model_layer_which_loads_no_qt():
    modules = set()
    for cls in panel_classes():
        for function in cls.model_functions:
            assert function.__module__.startswith("posenc_gui.model."), (cls.panel_id, function)
            modules.add(function.__module__)
    for panel_id in ("heatmap", "waveforms", "similarity"):  # the first paint's: no analysis imported for them
        assert all(f.__module__ == "posenc_gui.model.panels.table_data" for f in panel_class(panel_id).model_functions)
    assert all(f.__module__ == "posenc_gui.model.panels.panel_data" for f in panel_class("magnitude").model_functions)
    assert_loads_none_of(f"import importlib; [importlib.import_module(m) for m in {sorted(modules)!r}]", isolated=True)


# --------------------------------------------------------------------------- a panel that does not apply


def test_a_panel_that_does_not_apply_says_why_instead_of_its_plot(qtbot, state, compute):
    panel = show_panel(qtbot, TinyPanel(state, compute), (500, 400))
    assert panel.canvas.isVisible() and not panel.unavailable_label.isVisible()
    requests = panel.requests
    assert state.update(scheme=REFUSED_SCHEME) is None
    state.flush()
    assert panel.unavailable_label.isVisible() and not panel.canvas.isVisible()
    assert panel.unavailable_label.text() == f"The Tiny test panel does not apply here: {REASON}"
    assert panel.requests == requests  # nothing computed for parameters it does not apply to
    for fmt in ("png", "json"):
        with pytest.raises(export.ExportError, match="naive index grows without bound"):
            export.export_bytes(panel, fmt)
    assert state.update(scheme="sinusoidal") is None
    state.flush()
    assert compute.wait_idle()
    assert panel.canvas.isVisible() and not panel.unavailable_label.isVisible()
    assert panel.requests == requests + 1 and panel.data.params.scheme == "sinusoidal"
    assert export.export_bytes(panel, "json").startswith(b"{")


def test_the_command_line_says_why_a_panel_does_not_apply(qapp, tiny, capsys, tmp_path):
    out = tmp_path / "tiny.png"
    assert export_cli.main(["tiny", "-o", str(out), "--scheme", REFUSED_SCHEME]) == export_cli.EXIT_USAGE
    assert REASON in capsys.readouterr().err and not out.exists()
    folder = tmp_path / "batch"
    status = export_cli.main(["tiny", "heatmap", "-o", f"{folder}/", "--scheme", REFUSED_SCHEME,
                              "--seq-len", "16", "--d-model", "8"])
    streams = capsys.readouterr()
    assert status == export_cli.EXIT_FAILED and REASON in streams.err
    assert [path.name for path in folder.iterdir()] == ["naive_n16_d8_heatmap.png"]  # the other panel still written


# --------------------------------------------------------------------------- the walkthrough's interface


def test_each_walkthrough_step_sets_only_options_its_panels_declare():
    for step in STEPS:
        for panel_id, values in step.options.items():
            declared = {option.dest for option in panel_class(panel_id).cli_options}
            assert set(values) <= declared, (step.title, panel_id, values)
    assert any(step.options for step in STEPS)


def test_the_walkthrough_sets_the_real_panels_options_and_stays_in_view(qtbot, make_window):
    window = make_window(restore=False)
    assert isinstance(window, ExportHost)  # every member the export actions and the walkthrough use
    walk = window.panels["walkthrough"]
    window.tabifyDockWidget(window.docks["linear_relation"], window.docks["walkthrough"])  # where a user put it
    window.raise_panel("walkthrough")
    relation = window.panels["linear_relation"]
    relation.set_k(1)
    walk.go_to(next(i for i, step in enumerate(STEPS) if step.panel_id == "linear_relation"))
    window.state.flush()
    assert relation.k_box.value() == 5
    # moved out of the tab group it shared with the dock it raised
    qtbot.waitUntil(lambda: walk.on_screen() and relation.on_screen(), timeout=TIMEOUT_MS)
    assert window.docks["walkthrough"] not in window.tabifiedDockWidgets(window.docks["linear_relation"])


def test_a_panel_without_a_window_has_no_host_and_a_walkthrough_step_still_applies(qtbot):
    from posenc_gui.compute import ComputeService
    from posenc_gui.views.walkthrough import WalkthroughPanel

    state = AppState()
    service = ComputeService(processes=False)
    try:
        walk = WalkthroughPanel(state, service)
        qtbot.addWidget(walk)
        assert walk.host is None and not isinstance(walk.window(), PanelHost)
        walk.go_to(0)
        state.flush()
        assert state.params.scheme == STEPS[0].params["scheme"] and walk.raised == []
    finally:
        service.shutdown()
