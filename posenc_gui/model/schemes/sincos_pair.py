"""[sin(pos), cos(pos)] tiled over d_model."""

from ._core import Preset, Scheme, tiled_columns

SCHEME = Scheme(
    key="sincos_pair", label="Sin/cos pair", order=40,
    summary="[sin i, cos i] tiled over d_model: a point on the unit circle, repeats every 2π.",
    formula="PE(pos, 2m) = sin(pos), PE(pos, 2m+1) = cos(pos)",
    columns=tiled_columns((("sin", 1.0), ("cos", 1.0))),
    presets=(Preset("Sin/cos pair (near-repeats)", 128, 64),),
)
