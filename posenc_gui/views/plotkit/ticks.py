"""Round numbers for axes and colour scales: ranges, steps and tick labels (no Qt, no pyqtgraph)."""

from __future__ import annotations

import math

import numpy as np

#: Every linear axis and colour bar labels at least this many ticks where its length holds them.
MIN_LABELS = 3
#: Log-axis ranges snap outwards to multiples of this many decades (see :func:`snap_log_span`).
LOG_SPAN_STEP = 0.25
#: A colour bar labels at most this many values, and gives each label at least this many pixels.
MAX_COLORBAR_LABELS = 9
COLORBAR_LABEL_PX = 26
#: Mantissas of the colour bar's label steps; the unlabelled ticks between labels divide a step by …
_COLORBAR_STEPS = {1: 5, 2: 4, 5: 5}


def nice_bounds(low: float, high: float) -> tuple[float, float]:
    """``[low, high]`` widened to multiples of a round step (a tenth of the span's decade).

    Axis and colour-scale ranges snap to these, so a small change of the
    data (another base, d_model ± 2) keeps the same ticks and labels.
    """
    span = high - low
    if not np.isfinite(span) or span <= 0:
        magnitude = max(abs(low), abs(high)) or 1.0  # all zeros: a unit range, not one of 1e-300
        return low - 0.5 * magnitude, high + 0.5 * magnitude
    step = 10.0 ** np.floor(np.log10(span)) / 10
    # %.12g drops the last-bit noise of n·step (17 · 0.05 = 0.8500000000000001)
    return float(f"{np.floor(low / step) * step:.12g}"), float(f"{np.ceil(high / step) * step:.12g}")


def snap_log_span(low: float, high: float) -> tuple[float, float]:
    """A log10 axis range ``[low, high]`` widened to multiples of :data:`LOG_SPAN_STEP` decades.

    As :func:`nice_bounds` for linear axes: a parameter step that moves the
    data a little keeps the range and its labels.
    """
    return math.floor(low / LOG_SPAN_STEP) * LOG_SPAN_STEP, math.ceil(high / LOG_SPAN_STEP) * LOG_SPAN_STEP


def compact_tick_strings(values, spacing: float, extent: float = 0.0) -> list[str]:
    """Tick labels that stay readable for a million positions: ``200k``, ``1.5M``, ``1,000,010``.

    Parameters
    ----------
    values : sequence of float
        The ticks.
    spacing : float
        The step between them; it sets the decimals.
    extent : float
        The largest |value| on the axis: every level of ticks of one axis
        takes the same unit ("100k, 0.2M, 300k" mixed them).

    Values under 10,000 (or steps under 1) are written as pyqtgraph writes
    them; large round values in k or M with as few decimals as show the step
    exactly (0.25M, not 0.2M); fine steps among large values as exact
    integers with separators.
    """
    if not len(values):
        return []
    largest = max(max(abs(v) for v in values), abs(extent))
    if largest < 10_000 or spacing < 1:
        places = max(0, math.ceil(-math.log10(spacing))) if spacing > 0 else 0
        return ["%g" % v if abs(v) < .001 or abs(v) >= 10_000 else f"{v:.{places}f}" for v in values]
    if spacing < 1_000:  # zoomed in on large positions: exact integers
        return [f"{round(v):,}" for v in values]
    unit, suffix = (1e6, "M") if largest >= 1e6 else (1e3, "k")
    relative = spacing / unit
    decimals = next((d for d in range(7) if abs(round(relative, d) - relative) <= 1e-9 * relative), 6)
    strings = []
    for v in values:
        text = f"{v / unit:.{decimals}f}"
        if decimals:
            text = text.rstrip("0").rstrip(".")
        strings.append("0" if text in ("0", "-0") else text + suffix)
    return strings


def ticks_within(low: float, high: float, step: float) -> int:
    """How many multiples of ``step`` lie in ``[low, high]``."""
    low, high = sorted((low, high))
    return max(0, math.floor(high / step + 1e-9) - math.ceil(low / step - 1e-9) + 1)


def previous_round_step(step: float) -> float:
    """The step in 1, 2, 5, 10, 20, 50, … below ``step``."""
    exponent = math.floor(math.log10(step))
    mantissa = step / 10.0**exponent
    for factor in (5, 2, 1):
        if factor < mantissa * (1 - 1e-9):
            return factor * 10.0**exponent
    return 5 * 10.0 ** (exponent - 1)


def next_round_step(step: float) -> float:
    """The next step in 1, 2, 5, 10, 20, 50, … above ``step``."""
    exponent = math.floor(math.log10(step))
    for factor in (2, 5, 10):
        candidate = factor * 10.0**exponent
        if candidate > step * (1 + 1e-9):
            return candidate
    return 20 * 10.0**exponent


def colorbar_ticks(low: float, high: float, length_px: float) -> list[list[tuple[float, str]]]:
    """Ticks of a colour bar over ``[low, high]`` that is ``length_px`` long: labelled ones, then unlabelled.

    The labels are multiples of one round step (1, 2 or 5 × 10^k), so 0
    is labelled whenever it is in range, at most :data:`MAX_COLORBAR_LABELS`
    of them and no closer than :data:`COLORBAR_LABEL_PX` (at least 3); they
    read as the axes' labels do (:func:`compact_tick_strings`).
    """
    span = high - low
    if not (math.isfinite(span) and span > 0):
        return [[(low, compact_tick_strings([low], 1.0)[0])], []]
    wanted = max(3, min(MAX_COLORBAR_LABELS, int(length_px // COLORBAR_LABEL_PX)))
    exponent = math.floor(math.log10(span / wanted))
    mantissa, step = next((m, m * 10.0**e) for e in range(exponent, exponent + 3) for m in _COLORBAR_STEPS
                          if ticks_within(low, high, m * 10.0**e) <= wanted)
    extent = max(abs(low), abs(high))
    if ticks_within(low, high, step) < MIN_LABELS:  # no round step gives three: the limits and the middle
        middle = 0.0 if low < 0 < high else (low + high) / 2
        values = [low, middle, high]
        return [list(zip(values, compact_tick_strings(values, span / 2, extent))), []]
    first = math.ceil(low / step - 1e-9)
    values = [float(f"{(first + i) * step:.12g}") for i in range(ticks_within(low, high, step))]
    minor_step = step / _COLORBAR_STEPS[mantissa]
    minor_first = math.ceil(low / minor_step - 1e-9)
    minor = [float(f"{(minor_first + i) * minor_step:.12g}") for i in range(ticks_within(low, high, minor_step))]
    labelled = set(values)
    return [list(zip(values, compact_tick_strings(values, step, extent))),
            [(value, "") for value in minor if value not in labelled]]


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


#: A log axis labels at most this many decades (a short plot spanning ten decades
#: would otherwise stack its labels on top of each other).
MAX_DECADE_LABELS = 5
#: The 2…9 ticks inside each decade only while the axis spans at most this many decades: each
#: tick is also a grid line, and 8 per decade over many decades make every repaint slow.
MAX_MINOR_DECADES = 3
#: Label every 1st, 2nd, 3rd, 5th or 10th decade …
_DECADE_STEPS = (1, 2, 3, 5, 10, 20, 50, 100)


def decade_label(k: int) -> str:
    """The label of 10^k: ``0.01`` … ``1000`` written out, ``10⁴``, ``10⁻³`` beyond."""
    return f"{10.0 ** k:g}" if -2 <= k <= 3 else f"10{str(k).translate(_SUPERSCRIPT)}"


def decade_step(decades: int, max_labels: int) -> int:
    """Label every ``step``-th of ``decades`` decades (1, 2, 3, 5, 10, …) so that at most ``max_labels`` get one."""
    return next((s for s in _DECADE_STEPS if decades <= s * max(int(max_labels), 1)), _DECADE_STEPS[-1])


def decade_ticks(low: float, high: float, max_labels: int = MAX_DECADE_LABELS) -> list[list[tuple[float, str]]]:
    """Ticks for a log10 axis over ``[low, high]``: labelled decades, unlabelled ones, 2…9 in between.

    When more than ``max_labels`` decades fall in the range, only every 2nd,
    3rd, 5th, … decade (multiples of the step, so 1 stays labelled) gets a
    label; the others keep an unlabelled tick. The 2…9 ticks appear only on
    short axes (at most :data:`MAX_MINOR_DECADES` decades).
    """
    decades = [k for k in range(math.floor(low), math.ceil(high) + 1) if low <= k <= high]
    step = decade_step(len(decades), max_labels)
    major, minor = [], []
    for k in range(math.floor(low), math.ceil(high) + 1):
        if low <= k <= high:
            if k % step == 0:
                major.append((float(k), decade_label(k)))
            else:
                minor.append((float(k), ""))
        if len(decades) <= MAX_MINOR_DECADES:
            for m in range(2, 10):
                value = k + math.log10(m)
                if low <= value <= high:
                    minor.append((value, ""))
    return [major, minor]


#: Up to this many integer indices on an axis, ticks are put on integers (auto ticks would
#: label 0.5, 1.5, … between a handful of components or dimensions).
MAX_INTEGER_AXIS = 50


def integer_ticks(first: int, last: int, max_labels: int = 12) -> list[list[tuple[float, str]]] | None:
    """Ticks on the integers ``first … last`` (every 1st, 2nd, 5th, … so at most ``max_labels``).

    Returns None (let the axis choose) when the range holds more than
    :data:`MAX_INTEGER_AXIS` integers.
    """
    count = last - first + 1
    if count > MAX_INTEGER_AXIS:
        return None
    step = next(s for s in (1, 2, 5, 10, 20, 50) if count <= s * max(int(max_labels), 1))
    start = -(-first // step) * step
    return [[(float(i), f"{i:,}") for i in range(start, last + 1, step)], []]
