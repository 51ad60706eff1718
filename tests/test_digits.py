"""Only correct digits: the error bound of an encoding entry and of a similarity, against 50-digit references."""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import high_precision as hp
from posenc_gui.model import encode
from posenc_gui.model.core.digits import correct_digits, encoding_error, shown_number, similarity_with_error
from posenc_gui.model.schemes import columns

BASE = 10000.0


def exponent_of(scheme: str, dim: int, d_model: int, layout: str = "interleaved") -> Fraction:
    """The exact exponent e of dimension ``dim``'s divisor base^e (the formula, not its float)."""
    if scheme == "all_sine":
        return Fraction(dim, d_model)
    if layout == "interleaved":
        pair = dim // 2
    else:
        half = (d_model + 1) // 2
        pair = dim if dim < half else dim - half
    return Fraction(2 * pair, d_model)


def exact_entry(scheme: str, position: float, dim: int, d_model: int, layout: str = "interleaved") -> Decimal:
    """PE(position, dim) to 50 digits."""
    kind = str(columns(scheme, d_model, np.array([dim]), **_params(scheme, layout)).kind[0])
    sine, cosine = hp.sin_cos(hp.angle(position, BASE, exponent_of(scheme, dim, d_model, layout)))
    return sine if kind == "sin" else cosine


def _params(scheme: str, layout: str) -> dict:
    return {"base": BASE, "layout": layout} if scheme == "sinusoidal" else {"base": BASE}


def sample_near_a_million() -> list[tuple[str, str, int, float, int]]:
    """288 (scheme, layout, d_model, position, dim): positions near 10⁶, fast and slow dimensions, odd d too."""
    rng = np.random.default_rng(24)
    positions = np.concatenate([[999_999.0, 1_000_000.0, 1_048_575.0], rng.integers(900_000, 1_048_576, 5)])
    cases = []
    for scheme, layout, d_model in (("sinusoidal", "interleaved", 512), ("sinusoidal", "halves", 513),
                                    ("all_sine", "interleaved", 64)):
        dims = np.unique(np.concatenate([[0, 1, 2, 3, d_model - 1], rng.integers(0, d_model, 7)]))[:12]
        cases += [(scheme, layout, d_model, float(p), int(j)) for p in positions for j in dims]
    return cases


def shown_digits_are_exact(text: str, exact: Decimal) -> bool:
    """``text`` (as :func:`shown_number` writes it) equals ``exact`` rounded to the digits it shows."""
    if "±" in text:
        value, reach = (Decimal(part) for part in text.split("±"))
        return value == 0 and abs(exact) <= reach
    shown = Decimal(text)
    digits = len(shown.as_tuple().digits)  # %g drops trailing zeros: fewer digits checked, never more
    return hp.rounded(exact, digits) == shown


def test_encoding_bound_holds_and_every_shown_digit_is_right_near_a_million():
    cases = sample_near_a_million()
    assert len(cases) == 288
    wrong_at_ten, digits = 0, []
    for scheme, layout, d_model, position, dim in cases:
        params = _params(scheme, layout)
        value = float(encode(scheme, [position], d_model, dims=[dim], **params)[0, 0])
        error = float(encoding_error(scheme, [position], d_model, dims=[dim], **params)[0, 0])
        exact = exact_entry(scheme, position, dim, d_model, layout)
        assert abs(Decimal(value) - exact) <= Decimal(error), (scheme, d_model, position, dim)
        text = shown_number(value, error)
        assert shown_digits_are_exact(text, exact), (scheme, d_model, position, dim, text, exact)
        digits.append(correct_digits(value, error))
        wrong_at_ten += Decimal(f"{value:.9e}") != hp.rounded(exact, 10)
    assert wrong_at_ten > 10  # what a fixed 10-digit format showed
    assert np.mean(digits) >= 7 and min(digits) >= 3  # the bound is not so loose that nothing is left


def test_bound_is_tight_enough_for_many_digits_at_small_positions():
    positions = np.arange(128.0)
    values = encode("sinusoidal", positions, 512)
    errors = encoding_error("sinusoidal", positions, 512, values=values)
    digits = [correct_digits(v, e) for v, e in zip(values.ravel()[::97], errors.ravel()[::97])]
    assert np.median(digits) >= 12


@pytest.mark.parametrize(("value", "error", "text"), [
    (123.456, 0.0004, "123.456"),   # 123.4556 … 123.4564: six digits agree
    (123.456, 0.001, "123.5"),      # 123.455 … 123.457 holds the boundary 123.455 of the fifth digit
    (1.0, 0.0, "1"),                # exact: trailing zeros dropped
    (-0.25, 1e-20, "-0.25"),
    (0.5, 0.3, "0 ± 0.8"),          # 0.2 … 0.8: not even the first digit is certain
    (3e-17, 2e-16, "0 ± 3e-16"),    # rounding of 0
])
def test_shown_number_by_hand(value, error, text):
    assert shown_number(value, error) == text


def test_shown_number_without_a_finite_bound_or_value():
    assert shown_number(float("nan"), 1.0) == "undefined"
    assert shown_number(0.5, float("inf")) == "0.5 (no digit certain)"


def _exact_rows(positions, d_model):
    return [[exact_entry("sinusoidal", p, j, d_model) for j in range(d_model)] for p in positions]


def _exact_similarity(a, b, metric):
    with localcontext() as ctx:
        ctx.prec = 50
        if metric == "distance":
            return sum((x - y) ** 2 for x, y in zip(a, b)).sqrt()
        dot = sum(x * y for x, y in zip(a, b))
        if metric == "dot":
            return dot
        return dot / (sum(x * x for x in a).sqrt() * sum(y * y for y in b).sqrt())


@pytest.mark.parametrize("metric", ["dot", "cosine", "distance"])
def test_similarity_bound_holds_near_a_million(metric):
    d_model = 48
    pairs = [(1_000_000.0, 1_000_003.0), (1_048_575.0, 17.0), (999_999.0, 1_000_000.0), (5.0, 9.0)]
    for p, q in pairs:
        a, b = encode("sinusoidal", [p, q], d_model)
        error_a, error_b = encoding_error("sinusoidal", [p, q], d_model)
        value, bound = similarity_with_error(a, b, error_a, error_b, metric)
        exact = _exact_similarity(*_exact_rows([p, q], d_model), metric)
        assert abs(Decimal(value) - exact) <= Decimal(bound)
        assert shown_digits_are_exact(shown_number(value, bound), exact)
        assert correct_digits(value, bound) >= (12 if q < 10 else 7)


def test_similarity_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="metric"):
        similarity_with_error(np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2), "angle")
    with pytest.raises(ValueError, match="1-D"):
        similarity_with_error(np.zeros(2), np.zeros(3), np.zeros(2), np.zeros(3), "dot")
