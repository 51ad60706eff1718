"""Table-only schemes (binary, nope): every model function the panels use, and every panel of the window.

The values are hand-worked from the definitions: binary's dimension k is
bit k of ⌊pos⌋ (±1, or 0/1 unsigned), so two positions differ in Hamming(p, q)
dimensions, each by 2 (or 1); nope's vectors are all zero.
"""

from __future__ import annotations

import numpy as np
import pytest

from posenc_gui.model import EncodingParams, encode, permutation_demo
from posenc_gui.model.analyses.analysis import offset_spread, pe_norms
from posenc_gui.model.analyses.closest import range_uniqueness
from posenc_gui.model.core.digits import encoding_error, entry_with_error, pair_similarity, shown_number
from posenc_gui.model.analyses.linear_relation import linear_relation, unpaired_dimensions
from posenc_gui.model.panels.panel_data import linear_relation_data, relative_data, uniqueness_data
from posenc_gui.model.analyses.scorecard import score_scheme
from posenc_gui.model.analyses.similarity import similarity_matrix
from posenc_gui.model.analyses.spectrum import spectrum

SIGNED = {"scheme": "binary"}
UNSIGNED = {"scheme": "binary", "bit_values": "unsigned"}
NOPE = {"scheme": "nope"}
TABLES = [SIGNED, UNSIGNED, NOPE]


def params_of(options: dict, seq_len: int = 64, d_model: int = 16) -> EncodingParams:
    return EncodingParams.validated(seq_len=seq_len, d_model=d_model, **options)


def hamming(p: int, q: int, bits: int) -> int:
    return bin((p ^ q) & ((1 << bits) - 1)).count("1")


# --------------------------------------------------------------------------- values and their errors


@pytest.mark.parametrize("options", TABLES, ids=["signed", "unsigned", "nope"])
def test_table_values_are_exact_so_every_digit_is_shown(options):
    params = params_of(options)
    positions = np.arange(64.0)
    errors = encoding_error(params.scheme, positions, 16, **params.scheme_kwargs())
    np.testing.assert_array_equal(errors, 0.0)
    value, error = entry_with_error(params, 6, 1)  # 6 = 0b110: bit 1 is set
    assert error == 0.0
    expected = {"binary": 1.0, "nope": 0.0}[params.scheme]
    assert value == expected and shown_number(value, error) == f"{expected:g}"


def test_binary_cosine_is_one_minus_twice_the_hamming_share():
    d = 8
    positions = np.arange(40.0)
    cosine = similarity_matrix("binary", positions, d, "cosine")
    expected = np.array([[1 - 2 * hamming(p, q, d) / d for q in range(40)] for p in range(40)])
    np.testing.assert_array_equal(cosine, expected)  # ±1 entries: dot products and norms √8·√8 = 8 are exact
    assert cosine[7, 8] == 0.0 and cosine[0, 255 % 40] == 1 - 2 * hamming(0, 15, d) / d
    value, error = pair_similarity(params_of(SIGNED, d_model=d), 7, 8, "cosine")
    assert value == 0.0 and error < 1e-15  # 7 and 8 differ in four of eight bits


def test_unsigned_binary_distance_is_the_root_of_the_hamming_distance():
    distance = similarity_matrix("binary", np.arange(32.0), 8, "distance", bit_values="unsigned")
    expected = np.sqrt([[hamming(p, q, 8) for q in range(32)] for p in range(32)])
    np.testing.assert_array_equal(distance, expected)
    value, error = pair_similarity(params_of(UNSIGNED, d_model=8), 7, 8, "distance")
    assert value == 2.0 and shown_number(value, error) == "2"  # √4, within the rounding of the norm alone


# --------------------------------------------------------------------------- uniqueness


def test_binary_positions_below_two_to_the_d_are_unique_one_bit_apart():
    found = range_uniqueness("binary", 16, 4)
    assert found.method == "all pairs" and found.whole_range and found.notes == ()
    assert found.closest_pair == (0.0, 1.0, 2.0)  # one bit of ±1: distance 2
    np.testing.assert_array_equal(found.curve.nearest_distance, 2.0)
    # One bit away, ties to the earliest: clear the highest set bit (0's is 1).
    np.testing.assert_array_equal(found.curve.nearest_position, [1] + [p - (1 << (p.bit_length() - 1))
                                                                     for p in range(1, 16)])
    assert found.step_ratio == 1.0  # the median step flips one bit too
    unsigned = range_uniqueness("binary", 16, 4, bit_values="unsigned")
    assert unsigned.closest_pair == (0.0, 1.0, 1.0)


def test_binary_past_two_to_the_d_collides_exactly():
    found = range_uniqueness("binary", 20, 4, distinct_offsets=True)
    assert found.closest_pair == (0.0, 16.0, 0.0)  # 16 = 0b10000: its low four bits are those of 0
    assert found.step_ratio == 0.0
    assert [pair[1] - pair[0] for pair in found.near_repeats[:1]] == [16.0]


def test_binary_beyond_the_pair_budget_is_settled_in_closed_form():
    # Bit k has period 2^(k+1): below 2^16 every position has its own bits, one bit apart at least.
    found = range_uniqueness("binary", 4096, 16, pair_work=2**16)
    assert found.method == "closed form" and found.whole_range and found.pairs_range == 4096
    assert found.closest_pair == (0.0, 1.0, 2.0)  # the earliest pair one bit apart (±1: a difference of 2)
    assert found.coverage() == ("proved over pairs of positions 0…4,095 (closed form: bit k has period "
                                "2^(k+1))")


def test_a_table_beyond_every_budget_says_the_whole_range_is_not_established():
    found = range_uniqueness("learned", 4096, 16, pair_work=2**16, sweep_work=1)
    assert found.method == "leading positions" and not found.whole_range and found.pairs_range == 64
    assert any("not established" in note and "64…4,095" in note for note in found.notes)


def test_nope_says_every_position_has_the_same_encoding():
    data = uniqueness_data(params_of(NOPE), top=5, distinct_offsets=False)
    found = data.found
    assert found.closest_pair == (0.0, 1.0, 0.0) and found.neighbour_step == 0.0
    assert found.step_ratio == 0.0  # a collision, not "1× the step"
    assert any("same encoding" in note for note in found.notes)


# --------------------------------------------------------------------------- T_k


def test_binary_t_k_is_a_measured_least_squares_fit():
    assert unpaired_dimensions("binary", 16).tolist() == list(range(16))
    relation = linear_relation_data(params_of(SIGNED), 1).relation
    assert relation.method == "least-squares" and not relation.exact and relation.pairs == 0
    assert np.isfinite(relation.max_residual) and relation.relative_residual > 0.1  # adding 1 carries: not linear
    assert "table without (sin, cos) pairs" in relation.note


def test_unsigned_binary_t_k_cannot_map_the_zero_vector_of_position_zero():
    relation = linear_relation("binary", np.arange(8.0), 4, 1.0, bit_values="unsigned")
    # PE(0) = 0, so T·PE(0) = 0 for every T, while PE(1) = e_0: a residual of exactly 1 at p = 0.
    assert relation.max_residual >= 1.0
    np.testing.assert_array_equal(relation.apply(encode("binary", [0.0], 4, bit_values="unsigned")), 0.0)


def test_nope_t_k_is_not_determined_and_says_so():
    relation = linear_relation_data(params_of(NOPE), 1).relation
    assert relation.max_residual == 0.0 and relation.relative_residual == 0.0
    np.testing.assert_array_equal(relation.matrix(), 0.0)
    assert "holds for every matrix T" in relation.note and "not determined" in relation.note


# --------------------------------------------------------------------------- value bands, spectrum, relative


def test_binary_bands_are_the_bits_taken_over_each_interval():
    from posenc_gui.model.core.sampling import value_bands

    low, high = value_bands("binary", 8, np.arange(4), [0.0, 3.5, 4.0, 0.0], [0.9, 3.9, 7.9, 10.0])
    np.testing.assert_array_equal(low, [[-1, -1, -1, -1], [1, 1, -1, -1], [-1, -1, 1, -1], [-1, -1, -1, -1]])
    np.testing.assert_array_equal(high, [[-1, -1, -1, -1], [1, 1, -1, -1], [1, 1, 1, -1], [1, 1, 1, 1]])


@pytest.mark.parametrize("options", TABLES, ids=["signed", "unsigned", "nope"])
def test_bands_match_the_values_at_every_integer_of_each_interval(options):
    from posenc_gui.model.core.sampling import value_bands

    kwargs = {k: v for k, v in options.items() if k != "scheme"}
    rng = np.random.default_rng(3)
    low = rng.uniform(0, 200, 300)
    high = low + rng.exponential(8, 300)
    minimum, maximum = value_bands(options["scheme"], 10, None, low, high, **kwargs)
    for i in range(low.size):
        values = encode(options["scheme"], np.arange(np.floor(low[i]), np.floor(high[i]) + 1), 10, **kwargs)
        np.testing.assert_array_equal(minimum[i], values.min(axis=0))
        np.testing.assert_array_equal(maximum[i], values.max(axis=0))


def test_binary_spectrum_has_the_periods_of_the_bits():
    data = spectrum(params_of(SIGNED))
    np.testing.assert_array_equal(data.wavelength, 2.0 ** np.arange(1, 17))
    assert data.step_chord[0] == 2.0 and data.step_chord[1] == 62 / 63  # bit 1 flips 31 times in 63 steps, by 2
    assert data.category.tolist() == ["fine"] * 4 + ["coarse"] * 2 + ["static"] * 10  # bits 6+ are −1 on 0…63
    assert int(data.wraps.sum()) == 5  # periods 2 … 32 repeat within 0…63
    assert "do not change over 64 positions" in data.summary() and "pos / c" not in data.summary()


def test_nope_spectrum_is_one_constant_component():
    data = spectrum(params_of(NOPE))
    assert data.n_components == 1 and not data.periodic and data.category.tolist() == ["static"]
    assert "takes one value" in data.summary() and "pos / c" not in data.no_wavelength_reason()


@pytest.mark.parametrize(("options", "squared_norms"), [
    (SIGNED, [16] * 64), (UNSIGNED, [bin(p).count("1") for p in range(64)]), (NOPE, [0] * 64),
], ids=["signed", "unsigned", "nope"])
def test_relative_and_magnitude_of_a_table_are_exact(options, squared_norms):
    params = params_of(options)
    data = relative_data(params, 20, 4)
    assert np.all(np.isfinite(data.spread.spread)) and np.all(np.isfinite(data.profiles))
    norms = pe_norms(params.scheme, np.arange(64.0), 16, **params.scheme_kwargs())
    np.testing.assert_array_equal(norms, np.sqrt(squared_norms))  # √ of an integer: correctly rounded
    same_position = offset_spread(params.scheme, np.arange(64.0), 16, [0.0], **params.scheme_kwargs())
    assert same_position.spread[0] == max(squared_norms) - min(squared_norms)  # PE(p)·PE(p) over p


# --------------------------------------------------------------------------- scorecard and permutation


def test_binary_scorecard_verdicts():
    score = score_scheme(params_of(SIGNED))
    assert score.bounded_within and score.bounded_past and score.deterministic and score.generalizes
    assert score.unique and score.min_distance == 2.0 and score.unique_ratio == 1.0
    assert not score.tk_exact and score.tk_method == "least-squares" and score.tk_residual > 0.1
    assert score.tk_unpaired == 16
    short = score_scheme(params_of(SIGNED, d_model=4))  # 64 positions, 4 bits: 0 and 16 collide
    assert not short.unique and short.closest_pair == (0.0, 16.0) and short.unique_ratio == 0.0


def test_nope_scorecard_verdicts_say_why():
    score = score_scheme(params_of(NOPE))
    assert score.bounded_within and score.bounded_past and score.deterministic
    assert not score.unique and score.unique_ratio == 0.0
    assert not score.tk_exact and score.tk_method == "any" and score.tk_residual == 0.0
    assert any("same encoding" in note for note in score.notes)
    assert any("every matrix T" in note for note in score.notes)


def test_scorecard_cells_for_tables_name_the_reason():
    from posenc_gui.views.scorecard import cell_texts

    nope = cell_texts(score_scheme(params_of(NOPE)))["exact_tk"]
    assert nope[0] == "✗ not determined" and "every matrix T" in nope[1]
    binary = cell_texts(score_scheme(params_of(SIGNED)))["exact_tk"]
    assert "table without (sin, cos) pairs" in binary[1] and "a sine without" not in binary[1]


def test_binary_breaks_the_symmetry_and_nope_keeps_it():
    binary = permutation_demo("dog bites man", "man bites dog", scheme="binary", scheme_kwargs={"bit_values": "signed"})
    assert not binary.with_pe.same and "same vector" not in binary.with_pe.verdict
    nope = permutation_demo("dog bites man", "man bites dog", scheme="nope")
    assert nope.with_pe.same and "permutation invariant" in nope.with_pe.verdict


# --------------------------------------------------------------------------- the window


def _error_shown(panel) -> str:
    from posenc_gui.views.base import MESSAGE_STYLES

    label = panel.message_label
    return label.text() if label.isVisibleTo(panel) and label.styleSheet() == MESSAGE_STYLES["error"] else ""


@pytest.mark.parametrize("options", [SIGNED, NOPE], ids=["binary", "nope"])
def test_every_panel_of_the_window_shows_a_table_scheme_and_exports_it(make_window, tmp_path, options):
    from posenc_gui import export

    window = make_window(restore=False)
    assert window.state.update(seq_len=64, d_model=16, **options) is None
    window.state.flush()
    assert window.compute.wait_idle()
    for panel_id in window.panels:
        panel = window.panels[panel_id]
        window.raise_panel(panel_id)
        assert window.compute.wait_idle()
        assert _error_shown(panel) == "", panel_id
        if panel.unavailable_reason(window.state.params) is None and panel.unavailable_message() is not None:
            assert "Open a" in panel.unavailable_label.text(), panel_id  # the Decoder asks for a model file
            continue
        if not panel.requires <= {"table", "columns"}:  # a panel of another family says why, and exports nothing
            assert panel.unavailable_label.isVisible() and "this panel needs a" in panel.unavailable_label.text()
            with pytest.raises(export.ExportError, match="does not apply"):
                export.export_panel(panel, tmp_path / f"{panel_id}.png")
            continue
        data = panel.export_data()
        assert data.get("arrays") or data.get("meta"), panel_id
        numbers = [np.asarray(a, dtype=np.float64) for a in (data.get("arrays") or {}).values()]
        assert all(np.isfinite(a).any() or a.size == 0 for a in numbers), panel_id
        for fmt in ("png", "json"):
            path = tmp_path / f"{panel_id}.{fmt}"
            assert export.export_panel(panel, path, width=600 if fmt == "png" else None) == path
            assert path.stat().st_size > 0
        assert _error_shown(panel) == "", panel_id


# --------------------------------------------------------------------------- a table that declares nothing


@pytest.fixture
def plain_table(monkeypatch):
    """A table scheme with neither ``exact`` nor ``extremes``: dimension j is (⌊pos⌋ + j) mod 3."""
    from types import MappingProxyType

    from posenc_gui.model.core import params as params_module
    from posenc_gui.model import schemes
    from posenc_gui.model.schemes import Scheme

    def table(positions, dims, d_model):
        return np.mod(np.floor(positions)[:, None] + dims[None, :], 3.0)

    plain = Scheme(key="plain", label="Plain table", summary="", formula="(⌊pos⌋ + j) mod 3", order=999,
                   table=table,
                   periods=lambda dims, d_model: np.full(dims.size, 3.0))
    registry = MappingProxyType({**schemes.SCHEMES, "plain": plain})
    monkeypatch.setattr(schemes, "SCHEMES", registry)
    monkeypatch.setattr(params_module, "SCHEMES", registry)
    return EncodingParams.validated(scheme="plain", seq_len=600, d_model=4)


def test_a_table_without_bounds_says_its_error_and_band_are_not_known(plain_table):
    from posenc_gui.model.core.sampling import value_bands
    from posenc_gui.views.waveforms import compute_waveforms, sampling_notice

    assert np.all(np.isinf(encoding_error("plain", np.arange(4.0), 4)))
    assert shown_number(*entry_with_error(plain_table, 5, 1)).endswith("(no digit certain)")
    assert value_bands("plain", 4, None, [0.0], [10.0]) is None
    data = compute_waveforms(plain_table, (0, 1), 0.0, 599.0, 100)  # 6 positions per pixel, period 3
    assert data.aliased.all() and not data.bands_known
    text, level = sampling_notice(data, [0, 1], dots_hidden=True)
    assert level == "warning" and "does not bound its values between samples" in text and "exact" not in text


def test_an_all_zero_range_is_a_unit_range():
    from posenc_gui.views.plotkit import nice_bounds

    assert nice_bounds(0.0, 0.0) == (-0.5, 0.5)
    assert nice_bounds(2.0, 2.0) == (1.0, 3.0)


def test_binary_periods_at_the_largest_d_model_warn_of_nothing():
    # Bit 1023 and up have periods 2^1024 and more: no float64, so infinite, without an overflow warning
    # (the monkey, with warnings as errors, found the heatmap of binary at d_model 8192 left stale by one).
    import warnings

    from posenc_gui.model import limits, wavelengths

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        periods = wavelengths("binary", limits.MAX_D_MODEL)
    k = np.arange(1023)
    assert np.array_equal(periods[:1023], np.ldexp(1.0, k + 1)) and np.all(np.isinf(periods[1023:]))


def test_nopes_cosine_profile_of_nothing_but_nan_is_drawn_without_error(qtbot, state, compute):
    # Cosine of two zero vectors is undefined: every point of the profile is NaN. pyqtgraph 0.14's
    # PlotCurveItem with connect="all" raised drawing such a thick curve (the monkey found it).
    from posenc_gui.views.similarity import SimilarityPanel

    panel = SimilarityPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    assert compute.wait_idle()
    panel.profile_curve._getLineSegments()  # drawn once with finite values (its segments are kept) …
    assert state.update(scheme="nope", seq_len=32, d_model=8) is None
    panel.set_options(metric="cosine")
    state.flush()
    assert compute.wait_idle()
    _, y = panel.profile_curve.getData()
    assert y.size > 1 and np.isnan(y).all()
    panel.profile_curve._getLineSegments()  # … then all NaN: raised ValueError with connect="all"
    panel.grab()
