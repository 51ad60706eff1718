"""Themes (light, dark, print), the colour-map choice, and the window's keyboard shortcuts."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QKeySequence
from PySide6.QtWidgets import QGraphicsView

from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.views import matrix_items
from posenc_gui.views.plotkit import pgcompat, theme
from posenc_gui.views.registry import panel_classes
from helpers_panels import settle_panel
from helpers_export import decode_png, make_panel, pixels

PANEL_IDS = [cls.panel_id for cls in panel_classes()]


@pytest.fixture(autouse=True)
def light_again():
    """Every test starts and ends in the light theme with the default colour maps (the theme is app-wide)."""

    def reset() -> None:
        theme.set_theme("light")
        for kind, names in theme.COLORMAP_CHOICES.items():
            theme.set_colormap(kind, names[0])

    reset()
    yield
    reset()


def luminance(colour: str) -> float:
    """WCAG 2 relative luminance of an sRGB colour."""
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    q = QColor(colour)
    return 0.2126 * linear(q.red()) + 0.7152 * linear(q.green()) + 0.0722 * linear(q.blue())


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio (1 … 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# ------------------------------------------------------------------- the themes
def test_contrast_pins_by_hand():
    # white on black: (1 + 0.05) / (0 + 0.05) = 21; a colour with itself: 1
    assert contrast("#ffffff", "#000000") == pytest.approx(21.0)
    assert contrast("#777777", "#777777") == pytest.approx(1.0)


@pytest.mark.parametrize("name", theme.THEME_NAMES)
def test_every_text_colour_is_readable_on_its_background(name):
    # WCAG AA: 4.5 : 1 for text. The foreground and greys are text on the canvas; each message text on its bar.
    t = theme.THEMES[name]
    assert contrast(t.foreground, t.background) >= 7.0
    for grey in t.greys[:-1]:  # secondary text
        assert contrast(grey, t.background) >= 4.5, (name, grey)
    assert contrast(t.greys[-1], t.background) >= 3.0  # the periodogram's reference line: graphics, 3 : 1
    for level, (background, _border, text) in t.message_colours().items():
        assert contrast(text, background) >= 4.5, (name, level)
    for surface in t.surfaces[2:]:  # scorecard cells, with the foreground on them
        assert contrast(t.foreground, surface) >= 4.5, (name, surface)
    # the series colours are lines on the canvas: 3 : 1 for graphics, except the light themes' yellow
    for colour in t.palette[:-1] if t.background == "#ffffff" else t.palette:
        assert contrast(colour, t.background) >= 2.0, (name, colour)
    if t.dark:  # thin curves on a dark canvas read as poorly as text: every one at 4.5 : 1
        assert min(contrast(colour, t.background) for colour in t.palette) >= 4.5


def test_the_themes_have_the_same_roles_and_translating_twice_changes_nothing():
    # A panel is built in light colours plus the kit's current ones; translating light → theme must not touch
    # the current ones: no colour of a theme is a light colour of another role.
    lengths = {len(t.roles()) for t in theme.THEMES.values()}
    assert lengths == {len(theme.LIGHT.roles())}
    for t in theme.THEMES.values():
        table = theme.translation(theme.LIGHT, t)
        assert not set(table) & {QColor(c).name() for c in t.roles()}, t.name


def test_translate_text_replaces_colours_of_the_table_only():
    table = theme.translation(theme.LIGHT, theme.DARK)
    text = "QLabel { background: white; color: #222222; border: 1px solid #c0392b; }"
    assert theme.translate_text(text, table) == (
        f"QLabel {{ background: {theme.DARK.background}; color: {theme.DARK.foreground}; border: 1px solid #c0392b; }}")
    assert theme.translate_text('<span style="color:#0072B2">x</span>', table) == (
        f'<span style="color:{theme.DARK.palette[0]}">x</span>')  # the series blue, by its role
    # the word in prose stays (the periodogram compares with white noise)
    assert theme.translate_text("white noise; QWidget { background:white }", table) == (
        f"white noise; QWidget {{ background:{theme.DARK.background} }}")


def test_unknown_theme_and_colour_map_are_refused_naming_the_choices():
    with pytest.raises(ValueError, match="theme must be one of light, dark, print"):
        theme.set_theme("sepia")
    with pytest.raises(ValueError, match="diverging colour map must be one of RdBu, PuOr"):
        theme.set_colormap("diverging", "viridis")
    assert theme.current() is theme.LIGHT and theme.colormap_for("diverging") == "RdBu"


# ------------------------------------------------------------------- every panel
def _canvases(panel) -> list[pg.GraphicsView]:
    known = set(theme.canvases())
    return [view for view in panel.findChildren(QGraphicsView) if view in known]


def _axes(canvas) -> list[pg.AxisItem]:
    return [item for item in canvas.scene().items() if isinstance(item, pg.AxisItem) and item.isVisible()]


@pytest.mark.parametrize("panel_id", PANEL_IDS)
def test_switching_theme_restyles_every_canvas_and_axis_of_every_panel(qtbot, state, compute, panel_id):
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    panel = make_panel(qtbot, cls, state, compute, size=(700, 500))
    canvases = _canvases(panel)
    if cls.model_functions and panel_id not in ("scorecard", "walkthrough"):
        assert canvases, f"{panel_id} draws on no kit canvas"
    for name in ("dark", "print", "light"):
        theme.set_theme(name)
        theme.restyle(panel)
        t = theme.current()
        for canvas in canvases:
            assert canvas.backgroundBrush().color().name() == QColor(t.background).name(), (panel_id, name)
            for axis in _axes(canvas):
                assert axis.pen().color().name() == QColor(t.foreground).name(), (panel_id, name, axis.orientation)
                assert axis.textPen().color().name() == QColor(t.foreground).name(), (panel_id, name)
    # after an update (titles, keys and maps are set again) the colours stay the light ones
    state.update(seq_len=96)
    settle_panel(qtbot, panel)
    for canvas in canvases:
        assert canvas.backgroundBrush().color().name() == "#ffffff"


def _corner_and_text(png: bytes, foreground: str) -> tuple[tuple[int, int, int], int]:
    """The top-left pixel (R, G, B) and how many pixels are close to ``foreground`` (the text's colour)."""
    values = pixels(decode_png(png))[..., :3].astype(int)[..., ::-1]  # BGR → RGB
    target = QColor(foreground)
    near = (abs(values - (target.red(), target.green(), target.blue())).sum(axis=2) < 60).sum()
    return tuple(int(v) for v in values[1, 1]), int(near)


@pytest.mark.parametrize("panel_id", PANEL_IDS)
def test_every_panel_exports_on_the_dark_background_with_light_text(qtbot, state, compute, panel_id, tmp_path):
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    panel = make_panel(qtbot, cls, state, compute, size=(700, 500))
    if panel_id == "decoder":  # it shows a model file's attention: a tiny decoder opened first
        from test_decoder_panel import TEXT, _tokenizer, tiny_decoder

        panel.apply_options(decoder=str(tiny_decoder(tmp_path / "tiny", _tokenizer())), text=TEXT)
        assert compute.wait_idle() and panel.run is not None
    png = export.export_bytes(panel, "png", scale=1.0, theme="dark")
    corner, light_text = _corner_and_text(png, theme.DARK.foreground)
    dark = QColor(theme.DARK.background)
    assert max(abs(a - b) for a, b in zip(corner, (dark.red(), dark.green(), dark.blue()))) <= 2, (panel_id, corner)
    # titles, tick labels and words are drawn in the dark theme's light foreground (the light theme's
    # #222222 is as dark as the background: text left in it would not be seen, and this count would be 0)
    assert light_text > 50, f"{panel_id}: no text in the dark theme's foreground"
    # the window's theme is untouched: the panel is light again
    for canvas in _canvases(panel):
        assert canvas.backgroundBrush().color().name() == "#ffffff"
    corner, _ = _corner_and_text(export.export_bytes(panel, "png", width=700), theme.LIGHT.foreground)
    assert corner == (255, 255, 255), panel_id


def test_svg_and_pdf_are_drawn_on_the_theme_background(qtbot, state, compute):
    cls = next(c for c in panel_classes() if c.panel_id == "heatmap")
    panel = make_panel(qtbot, cls, state, compute, size=(700, 500))
    svg = export.export_bytes(panel, "svg", theme="dark").decode()
    assert f'fill="{theme.DARK.background}"' in svg
    assert f'fill="{theme.DARK.background}"' not in export.export_bytes(panel, "svg").decode()
    pdf = export.export_bytes(panel, "pdf", theme="print")
    assert pdf.startswith(b"%PDF")
    with pytest.raises(export.ExportError, match="theme must be one of light, dark, print, got 'sepia'"):
        export.export_bytes(panel, "png", theme="sepia")


def test_print_export_draws_heavier_lines(qtbot, state, compute):
    cls = next(c for c in panel_classes() if c.panel_id == "magnitude")
    panel = make_panel(qtbot, cls, state, compute, size=(700, 500))

    def inked(name: str) -> int:  # pixels that are not (near) the white background
        values = pixels(decode_png(export.export_bytes(panel, "png", width=700, theme=name)))[..., :3].astype(int)
        return int((values.sum(axis=2) < 600).sum())

    # the same figure in black instead of #222222, with every line 1.5 × as wide: clearly more ink
    assert inked("print") > 1.2 * inked("light")


# ------------------------------------------------------------------- colour maps
def _shown_maps(panel) -> list[str]:
    names = []
    for canvas in _canvases(panel):
        for item in canvas.scene().items():
            if isinstance(item, pg.ColorBarItem):
                names.append(item.colorMap().name)
            elif isinstance(item, (matrix_items.MatrixItem, matrix_items.ColorBar)) and item.isVisible():
                names.append(item.colormap)
    return names


@pytest.mark.parametrize("panel_id", PANEL_IDS)
def test_the_colour_map_choice_reaches_every_matrix_of_every_panel(qtbot, state, compute, panel_id):
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    panel = make_panel(qtbot, cls, state, compute, size=(700, 500))
    before = _shown_maps(panel)
    assert set(before) <= {"RdBu", "viridis"}, (panel_id, before)
    theme.set_colormap("diverging", "PuOr")
    theme.set_colormap("sequential", "cividis")
    theme.restyle(panel)
    swapped = {"RdBu": "PuOr", "viridis": "cividis"}
    assert _shown_maps(panel) == [swapped[name] for name in before], panel_id
    state.update(seq_len=96)  # a new matrix: drawn with the chosen maps too
    settle_panel(qtbot, panel)
    assert set(_shown_maps(panel)) <= {"PuOr", "cividis"}, panel_id


def test_matrix_panels_show_a_colour_map():
    # the test above must not pass vacuously: these panels draw matrices with a colour bar
    shown = {"heatmap", "similarity", "linear_relation", "permutation", "precision", "bias", "periodogram", "pca"}
    assert shown <= set(PANEL_IDS)


@pytest.mark.parametrize("panel_id", ["heatmap", "similarity", "permutation", "bias", "pca"])
def test_matrix_panels_really_have_colour_bars(qtbot, state, compute, panel_id):
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    panel = make_panel(qtbot, cls, state, compute, size=(700, 500))
    assert _shown_maps(panel), panel_id


# ------------------------------------------------------------------- command line
def test_export_command_line_honours_theme(tmp_path, qapp):
    path = tmp_path / "dark.png"
    assert export_cli.main(["heatmap", "-o", str(path), "--theme", "dark", "--width", "400"]) == 0
    assert theme.current() is theme.LIGHT  # in-process, the caller's theme is left as it was
    corner, _ = _corner_and_text(path.read_bytes(), theme.DARK.foreground)
    dark = QColor(theme.DARK.background)
    assert max(abs(a - b) for a, b in zip(corner, (dark.red(), dark.green(), dark.blue()))) <= 2


def test_bad_theme_on_the_command_line_is_one_line_and_status_2(tmp_path, capsys, qapp):
    path = tmp_path / "x.png"
    assert export_cli.main(["heatmap", "-o", str(path), "--theme", "sepia"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--theme" in err and "sepia" in err
    assert not path.exists()
    from posenc_gui.cli.window import build_parser
    from posenc_gui.cli.parameters import UsageError

    with pytest.raises(UsageError, match="--theme.*sepia"):
        build_parser().parse_args(["--theme", "sepia"])


# ------------------------------------------------------------------- the window
def test_window_theme_menu_restyles_built_panels_and_is_saved(make_window, settings_path, qtbot):
    window = make_window()
    heatmap = window.panels["heatmap"]
    canvas = _canvases(heatmap)[0]
    window.themes.theme_actions["dark"].trigger()
    assert theme.current() is theme.DARK
    assert canvas.backgroundBrush().color().name() == theme.DARK.background
    qtbot.waitUntil(lambda: window.palette().window().color().lightness() < 80)  # the Qt palette of the window too
    window.themes.colormap_actions[("diverging", "PuOr")].trigger()
    assert "PuOr" in _shown_maps(heatmap)
    window.close()
    text = settings_path.read_text()
    assert "theme=dark" in text and "PuOr" in text
    theme.set_theme("light")
    again = make_window()  # the saved theme comes back
    assert theme.current() is theme.DARK and theme.colormap_for("diverging") == "PuOr"
    assert _canvases(again.panels["heatmap"])[0].backgroundBrush().color().name() == theme.DARK.background
    assert again.themes.theme_actions["dark"].isChecked()


def test_a_bad_saved_theme_is_ignored_and_named(make_window, settings_path):
    window = make_window()
    window.close()
    text = settings_path.read_text().replace("theme=light", "theme=sepia")
    text = text.replace("colormaps=", "colormaps_old=") + '\n'
    settings_path.write_text(text.replace("[General]", '[General]\ncolormaps="{\\"diverging\\": \\"jet\\"}"'))
    window = make_window()
    assert theme.current() is theme.LIGHT and theme.colormap_for("diverging") == "RdBu"
    warning = window.saved_settings.warning()
    assert "theme ignored (not one of light, dark, print)" in warning
    assert "colour map 'diverging' ignored" in warning


def test_command_line_theme_wins_over_the_saved_one(make_window):
    window = make_window(theme_name="print")
    assert theme.current() is theme.PRINT
    assert window.themes.theme_actions["print"].isChecked()


def test_every_action_with_a_shortcut_is_listed_once_and_no_two_share_keys(make_window):
    window = make_window()
    rows = window.shortcuts.rows()
    listed = {(keys, name) for keys, name, _ in rows}
    from PySide6.QtGui import QAction

    from posenc_gui.window.shortcuts import SHORTCUTS, _action_text, _keys_text

    with_keys = [a for a in window.findChildren(QAction) if a.shortcuts()]
    assert len(with_keys) >= 10
    for action in with_keys:
        assert (_keys_text(action), _action_text(action)) in listed, action.text()
    assert len(rows) == len(with_keys)
    every_key = [key.toString() for action in with_keys for key in action.shortcuts()]
    assert len(every_key) == len(set(every_key)), sorted(every_key)
    # the table's entries whose actions exist have the table's keys; one without an action is not listed
    for entry in SHORTCUTS:
        action = window.shortcuts.action(entry.name)
        if action is None:
            assert entry.name == "pin_a"  # made by the A/B comparison, when it is there
            assert not any(entry.what == what for _, _, what in rows)
        else:
            assert action.shortcut() == QKeySequence(entry.keys), entry.name
            assert any(what == entry.what for _, _, what in rows)
    assert len({entry.name for entry in SHORTCUTS}) == len(SHORTCUTS)
    assert len({QKeySequence(entry.keys).toString() for entry in SHORTCUTS}) == len(SHORTCUTS)


def test_help_lists_the_shortcuts_in_a_table(make_window, qtbot):
    window = make_window()
    window.shortcuts.keyboard_shortcuts_action.trigger()
    from PySide6.QtWidgets import QDialog, QTableWidget

    dialog = next(w for w in window.findChildren(QDialog) if w.windowTitle() == "Keyboard shortcuts")
    table = dialog.findChild(QTableWidget, "shortcuts-table")
    cells = {table.item(row, 1).text() for row in range(table.rowCount())}
    assert {"Undo", "Export…", "Reset zoom", "Next tab", "Walkthrough: next step"} <= cells


def test_shortcut_actions_step_the_walkthrough_switch_tabs_and_reset_zoom(make_window, qtbot):
    window = make_window(size=(1500, 950))
    walkthrough = window.panels["walkthrough"]
    assert walkthrough.index == -1  # the introduction
    window.shortcuts.walkthrough_next_action.trigger()
    window.shortcuts.walkthrough_next_action.trigger()
    assert walkthrough.index == 1
    window.shortcuts.walkthrough_back_action.trigger()
    assert walkthrough.index == 0
    window.shortcuts.walkthrough_back_action.trigger()
    window.shortcuts.walkthrough_back_action.trigger()  # nothing before the introduction
    assert walkthrough.index == -1
    # tabs: the heatmap's dock is tabbed with others; the next tab is another panel, and back returns
    window.raise_panel("heatmap")
    qtbot.waitUntil(lambda: window.panels["heatmap"].on_screen())
    window.use_tracker.last = "heatmap"
    shown = window.switch_tab(+1)
    assert shown is not None and shown != "heatmap"
    assert window.switch_tab(-1) == "heatmap"
    # zoom: zoom the heatmap in, reset: the whole matrix again
    window.raise_panel("heatmap")
    heatmap = window.panels["heatmap"]
    view_box = heatmap.matrix.view_box
    full = view_box.viewRange()
    assert full[0] == pytest.approx([-0.5, 511.5]) and full[1] == pytest.approx([-0.5, 127.5])  # 512 × 128 cells
    view_box.setRange(xRange=(10, 20), yRange=(10, 20), padding=0)
    assert view_box.viewRange()[0] == pytest.approx([10, 20])
    assert window.reset_zoom() == "heatmap"
    assert view_box.viewRange()[0] == pytest.approx(full[0]) and view_box.viewRange()[1] == pytest.approx(full[1])


#: Light-theme text and line colours that would be (nearly) invisible on the dark theme's background.
LIGHT_ONLY = {QColor(c).name() for c in (theme.LIGHT.foreground, *theme.LIGHT.greys[:4])}


def _light_colours_left(panel) -> list[str]:
    """What in ``panel`` still shows a light-theme text or line colour (HTML, style sheets, pens, text items)."""
    import re

    from PySide6.QtWidgets import QLabel

    found = []

    def check(where: str, text: str) -> None:
        for colour in re.findall(r"#[0-9a-fA-F]{6}\b", text or ""):
            if QColor(colour).name() in LIGHT_ONLY:
                found.append(f"{where}: {colour}")

    for label in panel.findChildren(QLabel):
        if label.isVisibleTo(panel):
            check(f"QLabel {label.objectName()} text", label.text())
            check(f"QLabel {label.objectName()} style", label.styleSheet())
    for canvas in _canvases(panel):
        for item in canvas.scene().items():
            if not item.isVisible():
                continue
            if isinstance(item, pg.LabelItem):
                check("LabelItem", item.text)
                check("LabelItem colour", str(pgcompat.item_option(item, "color")))
            elif isinstance(item, pg.TextItem):
                check("TextItem", item.color.name())
            elif isinstance(item, matrix_items.RichText):
                check("RichText", item._document.toHtml())
            for pen in pgcompat.kept_pens(item, symbol_pens=False):
                check(f"pen of {type(item).__name__}", pen.color().name())
    return found


@pytest.mark.parametrize("panel_id", PANEL_IDS)
def test_nothing_stays_in_light_text_colours_in_the_dark_theme_after_updates(qtbot, state, compute, panel_id):
    cls = next(c for c in panel_classes() if c.panel_id == panel_id)
    panel = make_panel(qtbot, cls, state, compute, size=(700, 500))
    theme.set_theme("dark")
    theme.restyle(panel)
    assert _light_colours_left(panel) == [], panel_id
    # what a panel sets on every update (titles, keys, notes, messages) comes in the dark theme's colours
    state.update(seq_len=100, d_model=64)
    settle_panel(qtbot, panel)
    assert _light_colours_left(panel) == [], panel_id
