"""The sinusoidal encoding of Vaswani et al. (2017), in the paper's interleaved layout or in halves.

At odd ``d_model`` the last sine has no cosine partner: interleaved gives
``ceil(d/2)`` sines and ``floor(d/2)`` cosines, and halves puts the
``ceil(d/2)`` sines first.
"""

import numpy as np

from ..core import limits
from ..core.specs import ParamSpec
from ._core import Columns, Preset, Scheme, number_text

BASE = ParamSpec(
    "base", "real", 10000.0, "base",
    "Wavelength base: the wavelengths run from 2π to 2π·base^((d−2)/d) at even d (2π·base^((d−1)/d) at odd d), "
    "just under 2π·base for a large d. Must be > 1.",
    low=limits.MIN_BASE_EXCLUSIVE, high=limits.MAX_BASE, low_open=True, log=True, slider=(2.0, 1e8),
)
LAYOUT = ParamSpec(
    "layout", "choice", "interleaved", "layout",
    "Channel order: interleaved (sin, cos, sin, cos …, the paper) or halves ([sin … | cos …], the TensorFlow "
    "tutorial). The same pairs, in another order.",
    choices=(("interleaved", "interleaved — sin, cos, sin, cos … (paper)"),
             ("halves", "halves — [sin … | cos …] (TensorFlow tutorial)")),
    title=str, slug=lambda value: "" if value == "interleaved" else value,
)


def _columns(dims: np.ndarray, d_model: int, base: float, layout: str) -> Columns:
    if layout == "interleaved":
        pair = dims // 2
        kinds = np.where(dims % 2 == 0, "sin", "cos")
    else:  # halves: [sin of every pair | cos of every pair]
        n_sin = (d_model + 1) // 2
        is_sin = dims < n_sin
        pair = np.where(is_sin, dims, dims - n_sin)
        kinds = np.where(is_sin, "sin", "cos")
    # The paper's formula divides by base^(2i/d), and so does this (rather than
    # multiplying by base^(-2i/d)). pow's last bit depends on the maths library
    # NumPy dispatches to (SIMD routines on some CPUs, libm on others).
    divisor = np.power(base, 2.0 * pair / d_model)

    def label(j: int) -> str:
        return f"{kinds[j]}(pos / {number_text(base)}^(2·{pair[j]}/{d_model}))"

    return Columns(kinds, divisor, label)


SCHEME = Scheme(
    key="sinusoidal", label="Sinusoidal (Vaswani et al.)", order=70,
    summary="Geometric wavelengths from 2π to 2π·base^((d−2)/d) (even d; 2π·base^((d−1)/d) for the unpaired "
    "last sine at odd d); each (sin, cos) pair rotates with position, so PE(p+k) = T_k·PE(p) on the "
    "paired dimensions.",
    formula="PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(pos / base^(2i/d))",
    params=(BASE, LAYOUT), columns=_columns,
    presets=(
        Preset("Small and readable (d_model 16)", 32, 16),
        Preset("TensorFlow tutorial ([sin | cos] halves)", 128, 512, {"layout": "halves"},
               "tensorflow.org/text/tutorials/transformer (positional_encoding concatenates sines and cosines)"),
        Preset("Vaswani et al. 2017 (paper)", 128, 512, {}, "Vaswani et al. (2017), §3.5"),
    ),
)
