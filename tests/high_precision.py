"""Reference values of sin and cos of the encodings' angles, to 50 digits, with Python's ``decimal``.

The angle is ``p / base^(e)`` with the exponent ``e`` an exact fraction
(``2i/d``): ``base^e`` comes from ``Decimal.ln``/``exp`` (correctly rounded
to the context's precision), the angle is reduced modulo 2π (π from the
series of the ``decimal`` documentation's recipe) and sin/cos are summed
from their Taylor series. At 60 digits of working precision the results
are good to far more than the 17 digits a float64 can show.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

PRECISION = 60


def _pi() -> Decimal:
    """π to the current precision (the ``decimal`` documentation's recipe)."""
    with localcontext() as ctx:
        ctx.prec += 2
        three = Decimal(3)
        lasts, t, s, n, na, d, da = 0, three, 3, 1, 0, 0, 24
        while s != lasts:
            lasts = s
            n, na = n + na, na + 8
            d, da = d + da, da + 32
            t = (t * n) / d
            s += t
    return +s


def _sin_cos(x: Decimal) -> tuple[Decimal, Decimal]:
    """(sin x, cos x) for |x| ≤ π, from their Taylor series."""
    sin_sum, cos_sum = Decimal(0), Decimal(0)
    term = Decimal(1)  # x^n / n!
    n = 0
    tiny = Decimal(10) ** -(PRECISION + 5)
    while True:
        if n % 4 == 0:
            cos_sum += term
        elif n % 4 == 1:
            sin_sum += term
        elif n % 4 == 2:
            cos_sum -= term
        else:
            sin_sum -= term
        n += 1
        term = term * x / n
        if abs(term) < tiny and n > 2:
            return sin_sum, cos_sum


def angle(position: float, base: float, exponent: Fraction) -> Decimal:
    """``position / base^exponent`` to :data:`PRECISION` digits (position and base are the floats given)."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        divisor = (Decimal(float(base)).ln() * (Decimal(int(exponent.numerator)) / Decimal(int(exponent.denominator)))).exp()
        return Decimal(float(position)) / divisor


def sin_cos(x: Decimal) -> tuple[Decimal, Decimal]:
    """(sin x, cos x) to about :data:`PRECISION` − 10 digits, for any |x| up to 10¹²."""
    with localcontext() as ctx:
        ctx.prec = PRECISION + 15  # room for the reduction of large angles
        two_pi = 2 * _pi()
        reduced = x - two_pi * (x / two_pi).to_integral_value()
        sin_value, cos_value = _sin_cos(reduced)
    with localcontext() as ctx:
        ctx.prec = PRECISION
        return +sin_value, +cos_value


def rounded(exact: Decimal, digits: int) -> Decimal:
    """``exact`` rounded (half to even) to ``digits`` significant digits."""
    with localcontext() as ctx:
        ctx.prec = digits
        return +exact


def _power(base: Decimal, exponent: Decimal) -> Decimal:
    return (base.ln() * exponent).exp()


def rope_inv_freq(rope_theta: float, rotary_dim: int, rope_type: str = "default", seq_len: int | None = None,
                  **scaling: float) -> list[Decimal]:
    """Hugging Face's θ_i of ``rope_type`` to :data:`PRECISION` digits, from its formulas (the floats given exact).

    ``scaling`` holds the type's parameters under Hugging Face's names (``factor``,
    ``original_max_position_embeddings``, ``max_position_embeddings`` for dynamic,
    ``beta_fast`` / ``beta_slow`` / ``truncate`` for yarn, ``low_freq_factor`` /
    ``high_freq_factor`` for llama3). Band decisions (YaRN's floor and ceil,
    llama3's wavelength tests) are made in high precision too.
    """
    with localcontext() as ctx:
        ctx.prec = PRECISION
        d = Decimal(rotary_dim)
        theta = Decimal(float(rope_theta))
        factor = Decimal(float(scaling.get("factor", 1.0)))
        if rope_type in ("ntk", "dynamic"):
            if rope_type == "dynamic":
                maximum = Decimal(scaling["max_position_embeddings"])
                length = maximum if seq_len is None else max(Decimal(seq_len), maximum)
                factor = factor * length / maximum - (factor - 1)
            theta = theta * _power(factor, d / (d - 2))
        unscaled = [1 / _power(theta, Decimal(2 * i) / d) for i in range(rotary_dim // 2)]
        if rope_type in ("default", "ntk", "dynamic"):
            return unscaled
        if rope_type == "linear":
            return [value / factor for value in unscaled]
        original = Decimal(scaling["original_max_position_embeddings"])
        pi = _pi()
        if rope_type == "yarn":
            def correction_dim(rotations: float) -> Decimal:
                return d * (original / (Decimal(float(rotations)) * 2 * pi)).ln() / (2 * theta.ln())

            low = correction_dim(scaling.get("beta_fast", 32.0))
            high = correction_dim(scaling.get("beta_slow", 1.0))
            if scaling.get("truncate", True):
                low, high = low.to_integral_value(rounding="ROUND_FLOOR"), high.to_integral_value(rounding="ROUND_CEILING")
            low, high = max(low, Decimal(0)), min(high, d - 1)
            if low == high:
                high += Decimal("0.001")
            weights = [min(max((Decimal(i) - low) / (high - low), Decimal(0)), Decimal(1))
                       for i in range(rotary_dim // 2)]
        else:  # llama3
            low_factor = Decimal(float(scaling.get("low_freq_factor", 1.0)))
            high_factor = Decimal(float(scaling.get("high_freq_factor", 4.0)))
            weights = []
            for value in unscaled:
                wavelength = 2 * pi / value
                if wavelength > original / low_factor:
                    weights.append(Decimal(1))
                elif wavelength < original / high_factor:
                    weights.append(Decimal(0))
                else:
                    weights.append(1 - (original / wavelength - low_factor) / (high_factor - low_factor))
        return [value * (1 - weight) + value / factor * weight for value, weight in zip(unscaled, weights)]
