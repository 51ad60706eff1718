"""Naive integer positions: the position itself in every dimension."""

from ._core import Preset, Scheme, tiled_columns

SCHEME = Scheme(
    key="naive", label="Naive integer", order=10,
    summary="p_i = i in every dimension: unbounded in 0…N−1 and past N; it swamps the embedding as i grows.",
    formula="PE(pos, j) = pos",
    columns=tiled_columns((("linear", 1.0),)),
    presets=(Preset("Naive integer positions", 128, 64),),
)
