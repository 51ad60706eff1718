"""Hover lines show only correct digits: checked against 50-digit references near position 10⁶."""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from posenc_gui.model import encode
from posenc_gui.views.heatmap import HeatmapPanel
from posenc_gui.views.linear_relation import LinearRelationPanel
from posenc_gui.views.similarity import SimilarityPanel
from helpers_panels import change_params, show_panel
from test_digits import _exact_rows, _exact_similarity, exact_entry, sample_near_a_million, shown_digits_are_exact


def settled(panel_class, state, compute, qtbot, **params):
    """``panel_class`` shown and up to date at ``params``."""
    panel = show_panel(qtbot, panel_class(state, compute))
    change_params(state, compute, **params)
    return panel


def test_heatmap_hover_digits_are_right_near_a_million(state, compute, qtbot):
    # "pos 1,000,000, dim 0: 0.8(…) = sin(…)" with 10 digits had the 10th wrong in about one value of six.
    panel = None
    for scheme, layout, d_model in (("sinusoidal", "interleaved", 512), ("sinusoidal", "halves", 513),
                                    ("all_sine", "interleaved", 64)):
        cases = [case for case in sample_near_a_million() if case[:3] == (scheme, layout, d_model)]
        options = {"layout": layout} if scheme == "sinusoidal" else {}
        if panel is None:
            panel = settled(HeatmapPanel, state, compute, qtbot, scheme=scheme, d_model=d_model, seq_len=1_048_576,
                            **options)
        else:
            change_params(state, compute, scheme=scheme, d_model=d_model, **options)
        for *_, position, dim in cases:
            text = panel.describe_cell(int(position), dim)
            shown = text.split(": ", 1)[1].rsplit(" = ", 1)[0]
            assert shown_digits_are_exact(shown, exact_entry(scheme, position, dim, d_model, layout)), text


def test_similarity_hover_digits_are_right_near_a_million(state, compute, qtbot):
    # Values near 0 (nearly orthogonal encodings) have few correct digits at 10⁶: a fixed 10 showed wrong ones.
    d_model = 16
    panel = settled(SimilarityPanel, state, compute, qtbot, d_model=d_model, seq_len=1_048_576)
    p = 1_000_000
    others = np.arange(p + 1, p + 4000, dtype=np.float64)
    dots = encode("sinusoidal", others, d_model) @ encode("sinusoidal", [float(p)], d_model)[0]
    nearly_orthogonal = others[np.argsort(np.abs(dots))[:4]]
    for metric in ("dot", "cosine", "distance"):
        panel.set_options(metric=metric)
        assert compute.wait_idle()
        for q in nearly_orthogonal:
            text = panel.describe_pair(p, int(q))
            exact = _exact_similarity(*_exact_rows([float(p), float(q)], d_model), metric)
            assert shown_digits_are_exact(text.rsplit("= ", 1)[1], exact), (text, exact)


def test_t_k_hover_digits_are_right_at_a_large_offset(state, compute, qtbot):
    # cos and sin of k·ω_i at k = 999,999: the angle carries the divisor's rounding, times k.
    panel = settled(LinearRelationPanel, state, compute, qtbot, d_model=64)
    panel.set_k(999_999)
    assert compute.wait_idle()
    rel = panel.data.relation
    for pair in range(rel.pairs):
        text = panel.describe_pair(pair)
        cosine = text.split("cos(k·ω) = ")[1].split(",")[0]
        sine = text.split("sin(k·ω) = ")[1]
        exact_sin = exact_entry("sinusoidal", 999_999.0, 2 * pair, 64)
        exact_cos = exact_entry("sinusoidal", 999_999.0, 2 * pair + 1, 64)
        assert shown_digits_are_exact(cosine, exact_cos) and shown_digits_are_exact(sine, exact_sin), text
        entry = panel.data.relation.entry(2 * pair, 2 * pair + 1)
        assert Decimal(entry[0]) - exact_sin <= Decimal(entry[1])
