"""A scheme declared once (one :class:`Scheme` with its specs) appears everywhere a scheme's parameters do.

The scheme ``tilt`` below is defined only in this file. Registered, it must
be validated, listed, given widgets, CLI flags, titles and file names from
its specs alone; nothing else in the package names it.
"""

import argparse

import numpy as np
import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from posenc_gui.cli.parameters import params_from_args
from posenc_gui.cli.window import build_parser
from posenc_gui.cli.parameters import UsageError
from posenc_gui.model import OPTION_SPECS, SCHEMES, Columns, EncodingParams, ParamSpec, Scheme, encode, register
from posenc_gui.model import unregister
from posenc_gui.model.analyses.scorecard import scorecard_key, scorecard_setups
from posenc_gui.views.parameters import ParametersPanel, parameters_html

GAIN = ParamSpec("gain", "real", 1.0, "gain", "Slope of every dimension.", low=0.01, high=100.0, log=True)
ORDER = ParamSpec("order", "int", 1, "order", "Divisor offset of dimension j: j + order.", low=1, high=64)
SIGN = ParamSpec("sign", "choice", "plus", "sign", "plus or minus.", choices=(("plus", "+"), ("minus", "−")))
CLIPPED = ParamSpec("clipped", "bool", False, "clipped", "Listed only: shows a check box.")


def _tilt_columns(dims, d_model, gain, order, sign, clipped):
    divisor = (dims + order) / gain * (1.0 if sign == "plus" else -1.0)
    return Columns(np.full(dims.size, "linear"), divisor.astype(np.float64), lambda j: f"pos / {divisor[j]:g}")


TILT = Scheme(key="tilt", label="Tilt (test)", summary="A test scheme.", formula="PE(pos, j) = ±gain·pos / (j + order)",
              order=15, params=(GAIN, ORDER, SIGN, CLIPPED), columns=_tilt_columns)


@pytest.fixture
def tilt():
    register(TILT)
    yield TILT
    unregister("tilt")


def test_a_registered_scheme_is_listed_in_order_with_its_options(tilt):
    assert list(SCHEMES).index("tilt") == list(SCHEMES).index("naive") + 1  # order 15: after naive (10)
    assert all(OPTION_SPECS[spec.name] is spec for spec in TILT.params)


def test_unregistering_removes_the_scheme_and_the_options_only_it_had(tilt):
    unregister("tilt")
    try:
        assert "tilt" not in SCHEMES and "gain" not in OPTION_SPECS and "base" in OPTION_SPECS
    finally:
        register(TILT)


def test_a_name_means_one_parameter_in_every_scheme(tilt):
    other_base = ParamSpec("base", "real", 2.0, "base", "Another base.", low=1.0, high=10.0)
    clash = Scheme(key="clash", label="Clash", summary="", formula="", order=99, params=(other_base,),
                   columns=_tilt_columns)
    with pytest.raises(ValueError, match="base"):
        register(clash)
    with pytest.raises(ValueError, match="tilt"):
        register(TILT)
    assert "clash" not in SCHEMES


def test_its_specs_validate_fill_defaults_and_name_the_range(tilt):
    params = EncodingParams.validated(scheme="tilt", gain=2.5)
    assert dict(params.options) == {"gain": 2.5, "order": 1, "sign": "plus", "clipped": False}
    with pytest.raises(ValueError, match=r"gain must be in 0.01…100, got 1000"):
        EncodingParams.validated(scheme="tilt", gain=1000.0)
    with pytest.raises(ValueError, match=r"order must be in 1…64"):
        EncodingParams.validated(scheme="tilt", order=0)
    with pytest.raises(ValueError, match=r"sign must be plus or minus"):
        EncodingParams.validated(scheme="tilt", sign="up")
    with pytest.raises(ValueError, match=r"base does not apply to scheme 'tilt' \(it takes gain, order, sign, clipped\)"):
        EncodingParams.validated(scheme="tilt", base=10.0)
    expected = -2.5 * np.arange(4.0)[:, None] / (np.arange(3) + 2)[None, :]
    np.testing.assert_array_equal(encode("tilt", np.arange(4.0), 3, gain=2.5, order=2, sign="minus"), expected)


def test_its_title_file_name_and_figure_table_come_from_the_specs(tilt):
    params = EncodingParams.validated(scheme="tilt", seq_len=64, d_model=8, gain=2.5, order=3, sign="minus")
    assert params.title() == "tilt: 64 positions × d_model 8, gain 2.5, order 3, sign minus, clipped no"
    assert params.slug() == "tilt_n64_d8_g2.5_o3_sminus_cFalse"
    html = parameters_html(params)
    assert all(part in html for part in ("Tilt (test)", "<b>gain</b>", "2.5", "<b>sign</b>", "−"))


def test_its_flags_are_on_the_command_line(tilt):
    parser = build_parser()
    text = parser.format_help()
    for flag in ("--gain", "--order", "--sign", "--clipped"):
        assert flag in text
    args = parser.parse_args(["--scheme", "tilt", "--gain", "0.5", "--order", "7", "--sign", "minus", "--clipped",
                              "true"])
    params = params_from_args(args)
    assert dict(params.options) == {"gain": 0.5, "order": 7, "sign": "minus", "clipped": True}
    with pytest.raises(UsageError, match="--gain: gain must be"):
        parser.parse_args(["--scheme", "tilt", "--gain", "0"])
    refused = argparse.Namespace(scheme="sinusoidal", gain=0.5)
    with pytest.raises(ValueError, match="gain does not apply to scheme 'sinusoidal'"):
        params_from_args(refused)


def test_the_parameters_panel_builds_a_control_of_each_kind(qtbot, tilt, state, compute):
    panel = ParametersPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    kinds = {name: type(panel.controls[name].editor) for name in ("gain", "order", "sign", "clipped")}
    assert kinds == {"gain": QLineEdit, "order": QSpinBox, "sign": QComboBox, "clipped": QCheckBox}
    assert panel.controls["gain"].slider is not None and panel.controls["order"].slider is None  # log: a slider
    assert not panel.controls["gain"].row.isVisible()  # sinusoidal has no gain
    panel.scheme.setCurrentIndex(panel.scheme.findData("tilt"))
    state.flush()
    assert state.params.scheme == "tilt" and panel.controls["gain"].row.isVisible()
    assert not panel.controls["base"].row.isVisible()
    gain = panel.controls["gain"].editor
    gain.setFocus()
    gain.selectAll()
    qtbot.keyClicks(gain, "900")  # applied as typed: 9, 90, then 900 is refused …
    assert state.params.options["gain"] == 90.0
    assert "gain must be" in panel.errors["gain"].text() and not panel.errors["gain"].isHidden()  # … and said
    gain.selectAll()
    qtbot.keyClicks(gain, "4")
    state.flush()
    assert state.params.options["gain"] == 4.0 and panel.errors["gain"].isHidden()
    panel.controls["sign"].editor.setCurrentIndex(1)
    panel.controls["clipped"].editor.setChecked(True)
    panel.controls["order"].editor.setValue(5)
    state.flush()
    assert dict(state.params.options) == {"gain": 4.0, "order": 5, "sign": "minus", "clipped": True}


def test_the_scorecard_measures_it_with_its_options_and_keys_on_them(tilt):
    params = EncodingParams.validated(scheme="sinusoidal", seq_len=32, d_model=8)
    params = params.replaced(base=20.0)
    setups = {setup.scheme: setup for setup in scorecard_setups(params, options={"gain": 3.0, "base": 50.0})}
    assert setups["tilt"].options["gain"] == 3.0
    assert setups["all_sine"].options["base"] == 20.0  # the current base before a remembered one
    assert setups["naive"].options == {}
    tables = {key for key, info in SCHEMES.items() if info.provides & {"table", "angles"}}  # not spin
    assert set(setups) == tables - {"learned_file"}  # no model file is open: its table does not exist
    assert scorecard_key(params, options={"gain": 3.0}) != scorecard_key(params, options={"gain": 2.0})


SPIN = Scheme(key="spin", label="Spin (test rotation)", summary="Rotates queries and keys.", formula="q·R(n − m)·k",
              order=95, family="rotation")


@pytest.fixture
def spin():
    register(SPIN)
    yield SPIN
    unregister("spin")


def test_a_panel_says_what_a_scheme_of_another_family_lacks(qtbot, spin, state, compute):
    from posenc_gui import export
    from posenc_gui.views.heatmap import HeatmapPanel

    heatmap, parameters = HeatmapPanel(state, compute), ParametersPanel(state, compute)
    for panel in (heatmap, parameters):
        qtbot.addWidget(panel)
        panel.show()
    assert compute.wait_idle()
    before = heatmap.data
    assert state.update(scheme="spin") is None
    state.flush()
    assert compute.wait_idle()
    message = heatmap.unavailable_label.text()
    assert message == ("The Heatmap panel does not apply here: Spin (test rotation) gives a rotation of the queries "
                       "and keys, and this panel needs a table of positions × dimensions added to the token "
                       "embeddings.")
    assert heatmap.unavailable_label.isVisible() and heatmap.data is before  # nothing computed
    assert not parameters.unavailable_label.isVisible()  # the Parameters panel applies to every scheme
    from posenc_gui.views.rope_context import RopeContextPanel
    from posenc_gui.views.rope_frequencies import RopeFrequenciesPanel

    for cls, subject in ((RopeFrequenciesPanel, "Hugging Face frequencies"),
                         (RopeContextPanel, "scaling methods against the trained context")):
        rope_only = cls(state, compute)  # a rotation, but not RoPE's options
        qtbot.addWidget(rope_only)
        assert rope_only.unavailable_reason(state.params) == (
            f"Spin (test rotation) is not the rope scheme, whose {subject} this panel shows.")
    with pytest.raises(export.ExportError, match="gives a rotation of the queries and keys"):
        export.export_bytes(heatmap, "png")
    with pytest.raises(ValueError, match="gives a rotation, not a table"):
        encode("spin", [0.0], 4)
    assert "spin" not in {setup.scheme for setup in scorecard_setups(state.params)}  # the Scorecard scores tables
    assert state.update(scheme="sinusoidal") is None  # before the scheme is unregistered with the panels alive
    state.flush()
    assert compute.wait_idle() and not heatmap.unavailable_label.isVisible()


def test_a_panel_help_names_the_scheme_chosen_when_it_opens(qtbot, state, compute):
    from posenc_gui.views.heatmap import HeatmapPanel

    panel = HeatmapPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    assert state.update(scheme="binary") is None
    state.flush()
    panel.help_button.click()
    text = panel._help_label.text()
    assert panel.help_text.split(".")[0] in text and SCHEMES["binary"].label in text
    assert "square wave of period 2^(k+1)" in text  # the scheme's own summary, not the sinusoidal one's
    panel.help_button.click()  # closed
    assert state.update(scheme="nope") is None
    state.flush()
    panel.help_button.click()
    assert SCHEMES["nope"].label in panel._help_label.text()
