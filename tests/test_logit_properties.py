"""The positional logit's properties measured on one footing (model/attention/logit_properties.py) and in the panel."""

from __future__ import annotations

import json

import numpy as np
import pytest

from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams, Scheme, register, unregister
from posenc_gui.model.attention.logit_properties import (
    MAX_COMPARED, ONE_PERCENT_DROP, compared_profiles, decay_profile, logit_properties, properties_table,
)
from posenc_gui.model.attention.logits import positional_logits
from posenc_gui.views.positional_logits import COMPARED_COLOURS, PositionalLogitsPanel
import helpers_panels
from helpers_panels import settle_debounced
from waiting import TIMEOUT_S


def params(**values) -> EncodingParams:
    return EncodingParams.validated(**values)


@pytest.fixture
def linear_scheme():
    """A table PE(p) = (p, p, …): L(m, n) = d·m·n, not a function of m − n, growing without bound."""
    register(Scheme(key="test_linear", label="Linear test", order=990, summary="p", formula="p",
                    table=lambda positions, dims, d_model: np.repeat(positions[:, None], dims.size, axis=1)))
    try:
        yield "test_linear"
    finally:
        unregister("test_linear")


def test_one_sinusoid_pair_is_cos_of_the_offset_and_never_decays_to_one_percent():
    # d_model 2, sinusoidal: PE(p) = (sin p, cos p), so L(m, n) = sin m sin n + cos m cos n = cos(m − n):
    # offset only, symmetric, |L| ≤ 1 at any range; (p(0) − p(r))/√2 = (1 − cos r)/√2 ≤ √2 < ln 100: never 1 %.
    measured = logit_properties(params(scheme="sinusoidal", seq_len=100, d_model=2))
    assert measured.offset_only and measured.symmetric and not measured.masked
    assert measured.decay_distance is None and not measured.decays
    assert measured.bounded and measured.max_within == pytest.approx(1.0, abs=1e-15)
    assert measured.defined_past and measured.tells_apart
    distances, profile = decay_profile(params(scheme="sinusoidal", seq_len=100, d_model=2))
    np.testing.assert_array_equal(distances, np.arange(100))
    # a sin and a cos of an angle ≤ 99 within 4 ULP·max(1, angle) each (tests/tolerances.py's bound)
    np.testing.assert_allclose(profile, np.cos(distances), rtol=0, atol=2 * 8 * 2.3e-16 * 99)
    # the farther half of every offset 0 … 99: r ≥ 49.5, in units of the softmax (÷ √d_head)
    far = np.arange(50, 100)
    assert measured.far_drop == pytest.approx((1 - np.cos(far).mean()) / np.sqrt(2), abs=1e-12)


def test_nope_sees_no_position_at_all():
    measured = logit_properties(params(scheme="nope", seq_len=64, d_model=8))
    assert measured.scale == 0 and measured.offset_only and measured.symmetric and measured.bounded
    assert not measured.decays and measured.far_drop == 0
    assert not measured.tells_apart and measured.row_difference == 0
    # the table is 0 everywhere (exact extremes): every pair of rows is equal, proved, not sampled
    assert measured.verdicts()["tells positions apart"] == "✗ no" and measured.zero


def test_a_table_of_the_position_itself_fails_offset_only_and_boundedness(linear_scheme):
    # d = 2: L(m, n) = 2·m·n: along the diagonal of offset 0 it runs from 0 to 2·127² (stride 1 at N = 128), so
    # the spread is the whole scale; the largest |L| at 16N = 2048 positions (stride 8: 2·2040²) over that at N
    # (2·127²) is ≫ 1.5.
    measured = logit_properties(params(scheme=linear_scheme, seq_len=128, d_model=2))
    assert measured.stride == 1 and measured.scale == 2 * 127 ** 2
    assert measured.offset_spread == 1.0 and not measured.offset_only
    assert measured.symmetric
    assert measured.max_within == 2 * 127 ** 2 and measured.max_longer == 2 * 2040 ** 2
    assert not measured.bounded and measured.growth == pytest.approx(2040 ** 2 / 127 ** 2)
    assert measured.verdicts()["bounded"].startswith(f"✗ no (×{2040 ** 2 / 127 ** 2:.3g} over ×16 range)")
    # p(r) = 2·127·(127 − r)/√2: p(0) − p(r) = 254·r/√2 ≥ ln 100 from r = 1 on, and it only falls further
    assert measured.decay_distance == 1


def test_the_decay_distance_is_the_definitions_for_rope():
    setup = params(scheme="rope", seq_len=512, d_model=64, rope_theta=10000.0)
    measured = logit_properties(setup)
    # the definition, directly: the first r from which every key at r or farther is ln 100 below distance 0, in the
    # softmax's units (logit / √d_head, d_head = 64)
    profile = positional_logits("rope", [511.0], 511.0 - np.arange(512), d_model=64, seq_len=512)[0] / 8
    expected = next(r for r in range(512) if np.all(profile[r:] <= profile[0] - ONE_PERCENT_DROP))
    assert measured.decay_distance == expected and measured.offset_only and measured.bounded
    # a shorter head keeps more weight far away (its logit at 0 is √d_head): it must decay later, or not at all
    later = logit_properties(params(scheme="rope", seq_len=512, d_model=16, rope_theta=10000.0))
    assert later.decay_distance is None or later.decay_distance > measured.decay_distance


def test_at_a_million_positions_the_matrices_stay_small_and_the_verdicts_hold():
    measured = logit_properties(params(scheme="sinusoidal", seq_len=1_048_576, d_model=64))
    assert measured.stride == 4096 and measured.offset_only and measured.symmetric and measured.bounded
    assert measured.bound_lengths == (65_536, 1_048_576)  # 16N would pass the largest length


def test_the_table_names_what_it_cannot_measure():
    table = properties_table(params(scheme="rope", seq_len=32, d_model=8), ("sinusoidal", "normalized"))
    assert [key for key, _ in table] == ["rope", "sinusoidal", "normalized"]
    assert all(not isinstance(result, str) for _, result in table)
    # rope takes an even head only: at d_model 7 it is named, with why, beside the table it can measure
    odd = properties_table(params(scheme="sinusoidal", seq_len=32, d_model=7), ("rope",))
    assert not isinstance(odd[0][1], str) and "d_model" in odd[1][1]
    for bad, message in ((("rope",) * 4, "at most 3"), (("nowhere",), "unknown scheme"), ("rope", "list")):
        with pytest.raises(ValueError, match=message):
            compared_profiles(params(), bad)


# ------------------------------------------------------------------ the panel


def show_panel(qtbot, state, compute) -> PositionalLogitsPanel:
    return helpers_panels.show_panel(qtbot, PositionalLogitsPanel(state, compute), (1200, 800), settle=False)


def recorded(panel, method: str, record) -> list:
    """Replace ``panel``'s ``method`` by one that runs it, then appends ``record(*its arguments)`` to the list
    returned."""
    records = []
    real = getattr(panel, method)

    def run_and_record(*args):
        real(*args)
        records.append(record(*args))

    setattr(panel, method, run_and_record)
    return records


def test_the_panel_compares_profiles_and_measures_every_setup(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    assert state.update(scheme="rope", seq_len=200, d_model=16) is None
    panel.apply_options(compare="sinusoidal, nope")
    settle_debounced(panel)  # the properties wait for a pause in the changes
    assert panel.compare == ("sinusoidal", "nope") and panel.compare_button.text() == "Compare (2)"
    for curve, key in zip(panel.compared_curves, ("sinusoidal", "nope")):
        assert curve.isVisible()
        x, y = curve.getOriginalDataset()
        distances, profile = decay_profile(params(scheme=key, seq_len=200, d_model=16))
        np.testing.assert_array_equal(x, np.log10(distances[1:]))  # on the log distance axis's scale
        np.testing.assert_array_equal(y, profile[1:])
        assert curve.opts["pen"].color().name() == COMPARED_COLOURS[panel.compare.index(key)].lower()
    assert not panel.compared_curves[2].isVisible()
    assert "━ sinusoidal" in panel.logit_plot.titleLabel.text and "━ nope" in panel.logit_plot.titleLabel.text
    # the table: one column per setup, the verdicts of the model
    assert panel.properties.rowCount() == 3
    assert panel.properties.verticalHeaderItem(0).text() == "RoPE (rotary, Su et al.) (this setup)"
    nope = logit_properties(params(scheme="nope", seq_len=200, d_model=16)).verdicts()
    assert panel.properties.item(2, 5).text() == nope["tells positions apart"] == "✗ no"
    # sinusoidal: offset only, by the identity sin a sin b + cos a cos b = cos(a − b): a ✓ over all of 0…N−1 (the
    # cell's tooltip says how it is proved); a sampled verdict says its samples in the cell
    assert panel.properties.item(1, 0).text() == "✓ yes"
    assert "proved over query and key positions 0…199 (closed form)" in panel.properties.item(1, 0).toolTip()
    assert "Measured properties" in panel.figure_caption()
    exported = json.loads(export.export_bytes(panel, "json"))
    assert exported["meta"]["properties"]["nope"]["cells"] == nope
    coverage = exported["meta"]["properties"]["rope"]["verdicts"]["decays"]["coverage"]
    assert coverage["method"] == "exact" and (coverage["first"], coverage["last"]) == (0, 199)
    assert np.asarray(exported["arrays"]["compared_sinusoidal"]["data"]).shape == (200, 2)
    # a new N: the table says it is measuring until the new one is in (checked before the event loop runs: the
    # measurement starts after a pause, which a slow machine reaches while the new profile is computed)
    assert state.update(seq_len=300) is None
    state.flush()
    assert panel.properties.verticalHeaderItem(0).text().endswith("(measuring…)")
    assert "Measured properties" not in panel.figure_caption()
    assert compute.wait_idle(TIMEOUT_S)
    panel.run_debounced()
    assert compute.wait_idle(TIMEOUT_S)
    assert panel.measured[0][1].params.seq_len == 300
    # none again: the curves go, the table has the setup alone
    panel.apply_options(compare="")
    settle_debounced(panel)  # the properties wait for a pause in the changes
    assert not any(curve.isVisible() for curve in panel.compared_curves) and panel.properties.rowCount() == 1


def test_a_bad_comparison_is_refused_and_the_last_good_one_stays(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    panel.apply_options(compare="sinusoidal")
    for bad, message in (("sinusoidal,nowhere", "compare: 'nowhere'"),
                         (",".join(["nope", "binary", "naive", "sine"]), f"at most {MAX_COMPARED}")):
        with pytest.raises(ValueError, match=message):
            panel.apply_options(compare=bad)
    assert panel.compare == ("sinusoidal",)


def test_the_menu_offers_the_schemes_it_shows_and_stops_at_three(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    panel._fill_compare_menu()
    names = [action.text() for action in panel.compare_menu.actions()]
    assert "Sinusoidal (Vaswani et al.)" in names and len(names) == len(panel.comparable_schemes())
    for action in panel.compare_menu.actions()[:3]:
        action.setChecked(True)
    assert len(panel.compare) == 3
    panel._fill_compare_menu()
    enabled = [action.isEnabled() for action in panel.compare_menu.actions()]
    assert enabled[:3] == [True] * 3 and not any(enabled[3:])


def test_the_command_line_compares(qapp, tmp_path, capsys):
    out = tmp_path / "logits.json"
    args = ["logits", "-o", str(out), "--scheme", "rope", "--seq-len", "64", "--d-model", "8",
            "--compare", "sinusoidal"]
    assert export_cli.main(args) == 0, capsys.readouterr().err
    meta = json.loads(out.read_text())["meta"]
    assert set(meta["properties"]) == {"rope", "sinusoidal"} and meta["compared"]["sinusoidal"]["d_model"] == 8
    assert export_cli.main([*args[:-1], "nowhere"]) == export_cli.EXIT_USAGE
    assert "compare: 'nowhere'" in capsys.readouterr().err


def test_a_causal_bias_tells_positions_apart_by_its_values_not_only_its_mask():
    # ALiBi causal: rows m and m + 1 differ in their mask (key m + 1) and in every value they share
    # (−(m − n)/2 against −(m + 1 − n)/2: 1/2 apart at every key n ≤ m)
    alibi = logit_properties(params(scheme="alibi", seq_len=64, d_model=8, n_heads=8, head=0))
    assert alibi.masked and alibi.tells_apart and not alibi.rows_by_mask
    # N = 64: every row and every key compared, so the verdict is proved
    assert alibi.verdicts()["tells positions apart"] == "✓ yes: proved over neighbour rows (m, m + 1) at m 0…62"
    assert alibi.verdicts()["symmetric"].startswith("✗ no (causal mask)")
    assert not alibi.bounded and alibi.offset_only
    assert alibi.decay_distance == 10  # −r/2 ≤ −ln 100 from r = 9.21…


def test_a_mask_without_values_tells_positions_apart_by_the_mask_alone():
    # NoPE in a causal decoder: 0 for keys n ≤ m, −inf after — the mask is the only positional signal
    def causal_zero(queries, keys, d_model):
        return np.where(np.subtract.outer(queries, keys) >= 0, 0.0, -np.inf)

    register(Scheme(key="test_causal_nope", label="Causal NoPE test", order=991, summary="mask", formula="0 / −inf",
                    family="bias", bias=causal_zero))
    try:
        measured = logit_properties(params(scheme="test_causal_nope", seq_len=32, d_model=8))
    finally:
        unregister("test_causal_nope")
    assert measured.rows_by_mask and measured.tells_apart
    assert measured.verdicts()["tells positions apart"].startswith("✓ by the mask alone: proved over")
    assert measured.offset_only and not measured.decays and measured.far_drop == 0


def test_a_table_read_from_a_file_is_measured_within_its_rows(tmp_path):
    # Rows PE(p) = (p, 0): the logit PE(m)·PE(n) = m·n. The table has N = 64 rows, so nothing is measured
    # past row 63: "bounded" compares 0…3 (max 3·3 = 9) with 0…63 (max 63·63 = 3969), ×441 over ×16.
    table = np.zeros((64, 2))
    table[:, 0] = np.arange(64.0)
    path = tmp_path / "table.npy"
    np.save(path, table)
    params = EncodingParams().replaced(fit_sizes=True, scheme="learned_file", model_path=str(path))
    assert (params.seq_len, params.d_model) == (64, 2)
    measured = logit_properties(params)
    assert measured.bound_lengths == (4, 64)
    assert measured.max_within == 9.0 and measured.max_longer == 3969.0 and not measured.bounded
    assert not measured.defined_past and "63" in measured.past_error  # the file's last row, named
    # 0…63 is every position: the largest |L| there is exact, so 3969 > 1.5 × 9 proves it
    assert measured.verdicts()["bounded"].startswith("✗ no (×441 over ×16 range)")


def test_the_scan_over_a_million_offsets_runs_in_steps_and_shows_its_progress(qtbot, state, compute):
    # RoPE, 2²⁰ positions, head 2048: 2²⁰ offsets × 1,024 frequencies, four steps of SCAN_WORK each. The decay
    # cell says how far the scan is until it ends; then every verdict names what it was established over.
    panel = show_panel(qtbot, state, compute)
    decay_cells = recorded(panel, "_show_properties", lambda key, measured: panel.properties.item(0, 1).text())
    assert state.update(scheme="rope", seq_len=1_048_576, d_model=2048) is None
    settle_debounced(panel)  # the properties wait for a pause in the changes
    qtbot.waitUntil(lambda: panel.measured and not panel.measured[0][1].pending, timeout=240_000)
    assert any(text.startswith("… ") and "% of offsets scanned" in text for text in decay_cells[:-1])
    assert not decay_cells[-1].startswith("…")
    caption = panel.figure_caption()
    assert "q = k = the all-ones vector" in caption and "proved over offsets 0…1,048,575" in caption


def test_a_pinned_setup_a_is_scanned_in_steps_too(qtbot, state, compute):
    # A at 2²⁰ positions, head 2048: its scan takes four steps, each its own request, as the setup's own does
    panel = show_panel(qtbot, state, compute)
    arrived = recorded(panel, "_pinned_arrived", lambda pinned, result: result if result is None else result[1])
    pinned = params(scheme="rope", seq_len=1_048_576, d_model=2048)
    panel.set_pinned(pinned)
    qtbot.waitUntil(lambda: panel.pinned_result is not None and not panel.pinned_result[1].pending, timeout=240_000)
    assert any(result.pending for result in arrived[:-1]) and arrived[-1].scan.complete
    assert panel.pinned_result[1].verdict_records()["decays"].coverage.covers(0, 1_048_575)
