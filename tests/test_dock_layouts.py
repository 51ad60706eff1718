"""Layouts by family: the docks in front follow the scheme's family, apply to it, and the user's moves stay."""

from __future__ import annotations

import pytest

from posenc_gui.dock_layouts import layout_key, layouts
from posenc_gui.model import EncodingParams, presets
from posenc_gui.views.registry import panel_classes


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
    qtbot.waitUntil(lambda: "bias" in in_front(window), timeout=120_000)
    assert {"bias", "logits"} <= in_front(window)
    window.state.set_params(EncodingParams())
    qtbot.waitUntil(lambda: "heatmap" in in_front(window), timeout=120_000)
    assert not window.docks["similarity"].isVisible(), "the user's closed dock came back"
    assert "waveforms" in in_front(window)


def test_a_dock_the_user_floated_stays_floating_when_the_family_changes(make_window, qtbot):
    window = make_window(restore=False)
    window.docks["scorecard"].setFloating(True)
    window.docks["scorecard"].show()
    window.state.set_params(llama31())
    qtbot.waitUntil(lambda: "frequencies" in in_front(window), timeout=120_000)
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
    qtbot.waitUntil(lambda: "bias" in in_front(window), timeout=120_000)


def test_the_users_layout_per_family_survives_a_restart(make_window, qtbot):
    first = make_window()
    first.state.set_params(EncodingParams("alibi"))
    qtbot.waitUntil(lambda: "bias" in in_front(first), timeout=120_000)
    first.docks["logits"].close()
    first.state.set_params(EncodingParams())
    qtbot.waitUntil(lambda: "heatmap" in in_front(first), timeout=120_000)
    first.close()
    second = make_window()
    assert "heatmap" in in_front(second)
    second.state.set_params(EncodingParams("alibi"))
    qtbot.waitUntil(lambda: "bias" in in_front(second), timeout=120_000)
    assert not second.docks["logits"].isVisible(), "the biases layout the user had did not come back"


@pytest.mark.parametrize("text", ['{"states": 3}', "not json", '{"states": {"tables": "***"}}',
                                  '{"states": {"nonsense": "AAAA"}}', "[" * 100_000])
def test_bad_layouts_in_the_settings_are_named_and_left(make_window, text):
    window = make_window(restore=False)
    _, problems = window.dock_layouts.load_text(text)
    assert problems and all("layout" in problem for problem in problems)
