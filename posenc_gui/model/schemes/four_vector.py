"""[sin(pos), cos(pos), sin(pos/2), cos(pos/2)] tiled over d_model."""

from ._core import Scheme, tiled_columns

SCHEME = Scheme(
    key="four_vector", label="Four vectors", order=50,
    summary="[sin i, cos i, sin i/2, cos i/2] tiled over d_model: two frequencies, fewer near-repeats.",
    formula="PE(pos, 4m..4m+3) = [sin(pos), cos(pos), sin(pos/2), cos(pos/2)]",
    columns=tiled_columns((("sin", 1.0), ("cos", 1.0), ("sin", 2.0), ("cos", 2.0))),
)
