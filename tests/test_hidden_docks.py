"""Docks behind a tab do nothing on a parameter change or a scheme switch until they are shown (issue #40).

Counted, not timed: which panels lay out their notice or their table during
a switch, and that a panel brought forward afterwards shows what applies.
"""

from __future__ import annotations

from posenc_gui.views.base import Panel
from posenc_gui.views.scorecard import ScorecardPanel


def switch_counting(window, monkeypatch, scheme: str) -> dict[str, int]:
    """Switch ``window`` to ``scheme`` and count, per panel id, the calls that lay out its notice."""
    ids = {id(panel): panel_id for panel_id, panel in window.panels.built().items()}
    calls: dict[str, int] = {}
    show = Panel._show_availability

    def counted(self) -> bool:
        calls[ids.get(id(self), "?")] = calls.get(ids.get(id(self), "?"), 0) + 1
        return show(self)

    monkeypatch.setattr(Panel, "_show_availability", counted)
    assert window.state.update(scheme=scheme) is None
    window.state.flush()
    assert window.compute.wait_idle()
    monkeypatch.setattr(Panel, "_show_availability", show)
    return calls


def test_a_scheme_switch_lays_out_no_hidden_panel_and_a_shown_one_says_why(make_window, monkeypatch):
    window = make_window(restore=False)
    for panel_id in window.docks:
        window.panels[panel_id]  # every panel built, most of them behind tabs
    # the first visit of a family lays its docks out afresh (each shown for a moment); later ones restore it
    switch_counting(window, monkeypatch, "rope")
    switch_counting(window, monkeypatch, "sinusoidal")
    calls = switch_counting(window, monkeypatch, "rope")
    on_screen = {panel_id for panel_id, panel in window.panels.built().items() if panel.on_screen()}
    hidden = set(window.panels.built()) - on_screen
    assert on_screen and hidden
    assert set(calls) <= on_screen  # before: every built panel, 21 of them, laid out its notice
    # a table panel behind a tab still shows its table's body; brought forward it says why it does not apply
    magnitude = window.panels["magnitude"]
    assert "magnitude" in hidden and magnitude.unavailable_message() is not None
    window.raise_panel("magnitude")
    assert window.compute.wait_idle()
    assert magnitude.on_screen() and magnitude.unavailable_label.isVisible()
    assert magnitude.unavailable_label.text() == magnitude.unavailable_message()
    # and back to a table scheme: the same panel, hidden again, shows its plot when next brought forward
    window.raise_panel("heatmap")
    switch_counting(window, monkeypatch, "sinusoidal")
    window.raise_panel("magnitude")
    assert window.compute.wait_idle()
    assert not magnitude.unavailable_label.isVisible() and magnitude.data.params.scheme == "sinusoidal"


def test_a_hidden_scorecard_fills_its_table_when_shown_not_on_each_switch(make_window, monkeypatch):
    window = make_window(restore=False)
    window.raise_panel("scorecard")
    assert window.compute.wait_idle()
    scorecard = window.panels["scorecard"]
    assert scorecard.data is not None
    window.raise_panel("heatmap")  # the Scorecard shares the heatmap's tabs
    assert not scorecard.on_screen()
    fills = []
    fill = ScorecardPanel._fill
    monkeypatch.setattr(ScorecardPanel, "_fill", lambda self, data: (fills.append(data), fill(self, data)))
    for scheme in ("binary", "sinusoidal", "binary"):  # tables: the measured sizes stay, the highlight moves
        assert window.state.update(scheme=scheme) is None
        window.state.flush()
        assert window.compute.wait_idle()
    assert fills == []
    window.raise_panel("scorecard")
    assert window.compute.wait_idle()
    assert len(fills) == 1
