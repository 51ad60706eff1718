"""One sine of the position in every dimension."""

from ._core import Preset, Scheme, tiled_columns

SCHEME = Scheme(
    key="sine", label="Single sine", order=30,
    summary="sin(i) in every dimension: bounded in 0…N−1 and past N, but periodic, so sin(x) = sin(y) collides.",
    formula="PE(pos, j) = sin(pos)",
    columns=tiled_columns((("sin", 1.0),)),
    presets=(Preset("Single sine (collisions)", 128, 64),),
)
