"""A panel that does not apply names the panels that show the scheme, with a button to bring each forward."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton


def test_the_notice_of_a_table_panel_brings_the_bias_panels_forward(make_window):
    from posenc_gui.model import EncodingParams

    window = make_window(params=EncodingParams.validated(scheme="alibi", seq_len=256), restore=False)
    window.state.flush()
    assert window.compute.wait_idle()
    window.docks["heatmap"].raise_()  # the user picks its tab: the biases layout has the bias in front
    heatmap = window.panels["heatmap"]
    assert window.compute.wait_idle()
    assert heatmap.unavailable_label.isVisible() and heatmap.shown_by_bar.isVisible()
    buttons = {button.text(): button for button in heatmap.shown_by_bar.findChildren(QPushButton)}
    assert set(buttons) == {"Permutation demo", "Positional logits", "Attention bias"}
    bias_dock = window.docks["bias"]
    assert bias_dock.visibleRegion().isEmpty()  # behind the heatmap's tab
    buttons["Attention bias"].click()
    assert not bias_dock.visibleRegion().isEmpty()
    # a table scheme: every table panel applies, and the bar goes
    window.docks["heatmap"].raise_()
    assert window.state.update(scheme="sinusoidal") is None
    window.state.flush()
    assert window.compute.wait_idle()
    assert not heatmap.unavailable_label.isVisible() and not heatmap.shown_by_bar.isVisible()
