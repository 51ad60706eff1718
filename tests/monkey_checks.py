"""The monkey's checks that every view on screen shows the current parameters (one check per panel), and the
wait until the window has settled before they run. Used by tests/monkey.py.
"""

from __future__ import annotations

import html
import math
import time
from typing import Any, Callable

from PySide6.QtCore import QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLineEdit,
    QSpinBox,
)

from posenc_gui.model.attention import head_rotation, tokenize
from posenc_gui.views.param_controls import TICKS_PER_OCTAVE
from posenc_gui.views.plotkit.pgcompat import label_shown_text
from posenc_gui.model.panels.table_data import parse_dims


class MonkeyFailure(AssertionError):
    """Something broke: the message holds the seed, the failing action and the ones before it."""


#: The longest the window may stay busy after an action before the run counts as hung.
IDLE_TIMEOUT_S = 120.0


# ----------------------------------------------------------------- settling
def settle(window: Any, timeout: float = IDLE_TIMEOUT_S) -> None:
    """Let every pending parameter change, debounced re-sample and computation finish.

    Raises
    ------
    MonkeyFailure
        When the window is still busy after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        QApplication.processEvents()
        window.state.flush()
        for panel in window.panels.built().values():
            panel.run_debounced()
        if not window.compute.wait_idle(max(0.1, deadline - time.monotonic())):
            raise MonkeyFailure(f"the window was still computing after {timeout:g} s")
        QApplication.processEvents()
        # the panels' own delays (a scorecard's re-measure, a note that follows the curves)
        waiting = {timer: panel_id for panel_id, panel in window.panels.built().items()
                   for timer in panel.findChildren(QTimer) if timer.isActive() and timer.isSingleShot()}
        if window.compute.is_idle() and not waiting:
            return
        if time.monotonic() > deadline:
            timers = ", ".join(f"{panel_id}: {timer.parent().metaObject().className()}'s {timer.interval()} ms timer"
                               for timer, panel_id in waiting.items())
            raise MonkeyFailure(f"the window kept re-sampling for {timeout:g} s (still waiting: "
                                f"{timers or 'no timer'}; computing: {sorted(map(str, window.compute._pending))})")
        QTest.qWait(max(timer.remainingTime() for timer in waiting) + 1 if waiting else 1)


# ----------------------------------------------------------- view checks
def _title(plot: Any) -> str:
    return label_shown_text(plot.titleLabel)


def _message(panel: Any) -> str:
    """The error in the panel's message bar ("" for none; notes and warnings are not errors)."""
    text, level = panel._message
    return text if level == "error" and not panel.message_label.isHidden() else ""


def _check_parameters(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    problems = []
    in_use = {spec.name for spec in p.info.options_in_use(p.options)}
    values = {"seq_len": p.seq_len, "d_model": p.d_model, **{k: v for k, v in p.options.items() if k in in_use}}
    if panel.scheme.currentData() != p.scheme:
        problems.append(f"parameters: the scheme control shows {panel.scheme.currentData()!r}, the parameters hold "
                        f"{p.scheme!r}")
    for name, control in panel.controls.items():
        if control.row.isHidden() != (name not in values):
            problems.append(f"parameters: the {name} control is {'hidden' if control.row.isHidden() else 'shown'} "
                            f"for {p.scheme}")
        if name not in values:
            continue
        value, editor, slider = values[name], control.editor, control.slider
        shown = {QSpinBox: lambda: editor.value(), QComboBox: lambda: editor.currentData()}.get(type(editor))
        # a spin box keeps a number it refused (a d_model the scheme's other options do not take), as a text
        # field keeps refused text: then its reason is shown beside it
        refused = isinstance(editor, QSpinBox) and not control.error.isHidden()
        if shown is not None and shown() != value and not refused:
            problems.append(f"parameters: the {name} control shows {shown()!r}, the parameters hold {value!r}")
        if slider is not None:
            # the slider shows the value in use, or (its reason beside it) the number refused in the field
            held = [value]
            if refused or control.refusal:
                held.append(editor.value() if isinstance(editor, QSpinBox) else control._typed_value())
            ticks = [min(slider.maximum(), max(0.0, math.log2(max(v, slider.low) / slider.low) * TICKS_PER_OCTAVE))
                     for v in held if v is not None]
            # a tick stands for a rounded value; several ticks, for the same small integer
            if slider.to_value(slider.value()) not in held and all(abs(slider.value() - t) > 0.5 + 1e-9 for t in ticks):
                problems.append(f"parameters: the {name} slider is at tick {slider.value()}, "
                                f"{value} is tick {ticks[0]:.2f}")
        if isinstance(editor, QLineEdit):  # a real, or a list of reals (LongRoPE's factors): read as the spec does
            try:
                typed = control.spec.parse(editor.text())
            except ValueError:
                typed = None
            if typed != value and control.error.isHidden():
                problems.append(f"parameters: {name} shows {editor.text()!r} with no error, the parameters hold "
                                f"{control.spec.text(value)}")
    label = window.params_label.text()
    for part in (p.scheme, f"{p.seq_len:,} position", f"d_model {p.d_model:,}"):
        if part not in label:
            problems.append(f"status bar: {label!r} lacks {part!r}")
    return problems


def _check_heatmap(window: Any, panel: Any) -> list[str]:
    p, data = window.state.params, panel.data
    if data is None or data.params != p:
        return [f"heatmap: shows {data and data.params}, the parameters are {p}"]
    problems = []
    shape = (data.positions.count, data.dims.count)
    if data.values.shape != shape or panel.matrix.image.image is None or panel.matrix.image.image.shape != shape:
        problems.append(f"heatmap: values {data.values.shape}, image "
                        f"{None if panel.matrix.image.image is None else panel.matrix.image.image.shape}, samples {shape}")
    if not (0 < data.positions.count <= p.seq_len and 0 < data.dims.count <= p.d_model
            and data.positions.indices().max() < p.seq_len and data.dims.indices().max() < p.d_model):
        problems.append(f"heatmap: samples {data.positions} × {data.dims} outside {p.seq_len} × {p.d_model}")
    title = p.title()
    if not _title(panel.matrix.plot).startswith(title):
        problems.append(f"heatmap: title {_title(panel.matrix.plot)!r}, expected {title!r}…")
    problems += _check_hover(panel)
    if _message(panel):
        problems.append(f"heatmap: an error stays on screen with current data: {_message(panel)!r}")
    return problems


def _check_hover(panel: Any) -> list[str]:
    """A panel's hover line describes its remembered cell from the current data."""
    readout = getattr(panel, "hover", None)
    if readout is None or readout.cell is None:
        return []
    cell, shown = readout.cell, readout._label.text()
    expected = readout._describe(cell) if readout._valid(cell) else readout._prompt
    return [] if shown == expected else [
        f"{panel.panel_id}: hover line {shown!r} for {cell}, the current data say {expected!r}"]


def _check_waveforms(window: Any, panel: Any) -> list[str]:
    p, data = window.state.params, panel.data
    if data is None or data.params != p:
        return [f"waveforms: shows {data and data.params}, the parameters are {p}"]
    problems = []
    try:
        typed = parse_dims(panel.dims_edit.text(), p.d_model)
    except ValueError as error:
        if not _message(panel):
            problems.append(f"waveforms: dims {panel.dims_edit.text()!r} are refused ({error}) with no message")
    else:
        if typed != data.dims:
            problems.append(f"waveforms: the dims field says {typed}, the curves are {data.dims}")
        if _message(panel):
            problems.append(f"waveforms: valid dims, yet the message {_message(panel)!r}")
    if any(d >= p.d_model for d in data.dims):
        problems.append(f"waveforms: dims {data.dims} beyond d_model {p.d_model}")
    title = p.title()
    if _title(panel.plot) != title:
        problems.append(f"waveforms: title {_title(panel.plot)!r}, expected {title!r}")
    return problems


def _check_similarity(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    problems = []
    for part, data in (("matrix", panel.matrix_data), ("profile", panel.profile_data)):
        if data is None or data.params != p or data.metric != panel.metric:
            return [f"similarity: the {part} shows {data and (data.params, data.metric)}, "
                    f"the parameters are {p} with {panel.metric}"]
    reference = panel.reference_box.value()
    if panel.profile_data.reference != reference or not 0 <= reference < p.seq_len:
        problems.append(f"similarity: profile from {panel.profile_data.reference}, the box says {reference}")
    title = p.title()
    if label_shown_text(panel.figure_title) != title:
        problems.append(f"similarity: title {label_shown_text(panel.figure_title)!r}, expected {title!r}")
    if _title(panel.profile_plot) != f"from p = {reference:,} (dashed)":
        problems.append(f"similarity: profile title {_title(panel.profile_plot)!r} for reference {reference}")
    problems += _check_hover(panel)
    if _message(panel):
        problems.append(f"similarity: an error stays on screen with current data: {_message(panel)!r}")
    return problems


def _check_permutation(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    sentences = (panel.sentence_a_edit.text(), panel.sentence_b_edit.text())
    refusals = []
    for name, sentence in zip(("sentence_a", "sentence_b"), sentences):
        try:
            tokenize(sentence, name)
        except ValueError as error:
            refusals.append(str(error))
    if not refusals and p.info.rotation is not None:  # RoPE refuses a demo d_k with odd rotated channels
        try:
            head_rotation(1, panel.d_model_spin.value(), p.scheme, p.scheme_kwargs())
        except ValueError as error:
            refusals.append(str(error))
    if refusals:
        shown = _message(panel)
        if not any(refusal in shown for refusal in refusals):
            return [f"permutation: {refusals} refused, the message bar says {shown!r}"]
        return []
    demo, used = panel.demo, panel._params_used
    problems = []
    if demo is None or used is None:
        return ["permutation: valid sentences, no demo shown"]
    if (demo.tokens_a, demo.tokens_b) != tuple(tokenize(s) for s in sentences):
        problems.append(f"permutation: shows {demo.tokens_a} / {demo.tokens_b} for {sentences}")
    if demo.d_model != panel.d_model_spin.value():
        problems.append(f"permutation: demo d_model {demo.d_model}, the box says {panel.d_model_spin.value()}")
    if (used.scheme, used.scheme_kwargs()) != (p.scheme, p.scheme_kwargs()):
        problems.append(f"permutation: encoded with {used}, the parameters are {p}")
    if _message(panel):
        problems.append(f"permutation: valid input, yet the message {_message(panel)!r}")
    return problems


def _check_scorecard(window: Any, panel: Any) -> list[str]:
    p, data = window.state.params, panel.data
    if data is None or panel.is_stale():
        return [f"scorecard: measured {data and data.params}, the parameters are {p}"]
    return []


def _check_walkthrough(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    if panel.index < 0:
        return []
    text = panel.measured_label.text()
    from posenc_gui.model.analyses.scorecard import scoreable_schemes

    # the Scorecard scores tables and rotations (RoPE's angles); a bias has no row of table criteria
    not_scored = None if p.scheme in scoreable_schemes() else p.info.lacks(frozenset({"table"}))
    if not_scored is not None:
        return [] if html.escape(not_scored) in text else [f"walkthrough: 'measured now' is {text[:120]!r} for "
                                                            f"{p.scheme}, which the scorecard does not measure"]
    if panel.score is None or panel.score.scheme != p.scheme or f"N = {p.seq_len:,}, d = {p.d_model:,}" not in text:
        return [f"walkthrough: 'measured now' is {text[:120]!r} for {panel.score and panel.score.scheme}, "
                f"the parameters are {p}"]
    return []


def _refused_now(window: Any, panel: Any) -> bool:
    """Whether the panel's error is its answer to the current parameters: asked again, it says it again.

    A panel that cannot show some parameters keeps its last good view under
    the message; a message left over from earlier parameters is not that.
    """
    message = _message(panel)
    if not message:
        return False
    panel.request_update()
    settle(window)
    return _message(panel) == message


def _check_data(window: Any, panel: Any) -> list[str]:
    """Panels whose ``data.params`` are what they show."""
    p, data = window.state.params, getattr(panel, "data", None)
    if (data is None or data.params != p) and _refused_now(window, panel):
        return []
    data = getattr(panel, "data", None)
    if data is None or data.params != p:
        return [f"{panel.panel_id}: shows {data and data.params}, the parameters are {p}"
                + (f" (message: {_message(panel)!r})" if _message(panel) else "")]
    if _message(panel):
        return [f"{panel.panel_id}: an error stays on screen with current data: {_message(panel)!r}"]
    return _check_hover(panel)


def _check_periodogram(window: Any, panel: Any) -> list[str]:
    """The table's periodogram, and the chosen dimension's spectrum, of the current parameters."""
    problems = _check_data(window, panel)
    dim = panel.dim_data
    if not problems and (dim is None or dim.params != window.state.params or dim.dim != panel.dim_box.value()):
        problems.append(f"periodogram: the line plot shows {dim and (dim.params, dim.dim)}, the parameters are "
                        f"{window.state.params} and dimension {panel.dim_box.value()}")
    return problems


def _check_decoder(window: Any, panel: Any) -> list[str]:
    """The decoder's trace is of the model and text the panel names (the scheme does not matter to it)."""
    run, wanted = panel.run, (panel.model_path(), panel.text_edit.text())
    if (run is None or (run.path, run.text) != wanted) and _refused_now(window, panel):
        return []
    if run is None or (run.path, run.text) != wanted:
        return [f"decoder: shows {run and (run.path, run.text)}, the panel names {wanted}"]
    return []


CHECKS: dict[str, Callable[[Any, Any], list[str]]] = {
    "decoder": _check_decoder,
    "parameters": _check_parameters,
    "heatmap": _check_heatmap,
    "waveforms": _check_waveforms,
    "similarity": _check_similarity,
    "permutation": _check_permutation,
    "scorecard": _check_scorecard,
    "walkthrough": _check_walkthrough,
    "periodogram": _check_periodogram,
    **{panel_id: _check_data for panel_id in
       ("uniqueness", "magnitude", "linear_relation", "relative", "addition", "spectrum", "frequencies", "precision",
        "context", "logits", "bias", "pca")},
}


def _check(panel_id: str, window: Any, panel: Any) -> list[str]:
    """The panel's check, or, for a panel that does not apply to the scheme, that it says so instead of a plot."""
    message = panel.unavailable_message()
    if message is not None:
        shown = panel.unavailable_label.isVisible() and panel.unavailable_label.text() == message
        return [] if shown else [f"{panel_id}: does not apply to {window.state.params.scheme} and does not say so"]
    return CHECKS[panel_id](window, panel)


def stale_views(window: Any) -> list[str]:
    """What the docks on screen show that differs from the current parameters (call after :func:`settle`)."""
    built = window.panels.built()
    problems = [f"{panel_id}: its dock is on screen without its panel (never built)"
                for panel_id, dock in window.docks.items()
                if panel_id not in built and dock.isVisible() and not dock.visibleRegion().isEmpty()]
    for panel_id, panel in built.items():
        if panel_id not in CHECKS:
            problems.append(f"{panel_id}: the monkey has no check for this panel")
        elif panel.on_screen():
            problems += _check(panel_id, window, panel)
    return problems


def check_every_view(window: Any) -> list[str]:
    """Settle, check the panels on screen, then raise every panel in turn and check it."""
    settle(window)
    problems = stale_views(window)
    for panel_id in window.panels:
        window.raise_panel(panel_id)
        settle(window)
        if panel_id not in window.panels.built():
            problems.append(f"{panel_id}: raised, its dock shows no panel (never built)")
            continue
        panel = window.panels[panel_id]
        if not panel.on_screen():
            problems.append(f"{panel_id}: not on screen after raise_panel")
        elif panel_id in CHECKS:
            problems += [f"{problem} (after raising it)" for problem in _check(panel_id, window, panel)]
    return problems
