"""A bias scheme declared in this one module, as a contributor would add one to ``model/schemes/``.

KERPLE's logarithmic variant (Chi et al. 2022): the logit of a query at i
and a key at j ≤ i gets −r1·ln(1 + r2·(i − j)); keys after the query are
masked (a decoder).
"""

from __future__ import annotations

import numpy as np

from posenc_gui.model.schemes import Scheme
from posenc_gui.model.core.specs import ParamSpec

R1 = ParamSpec("kerple_r1", "real", 1.0, "r1", "The bias's scale.", low=0.0, high=100.0, low_open=True,
               title=lambda value: f"r1 {value:g}")
R2 = ParamSpec("kerple_r2", "real", 2.0, "r2", "The distance's scale inside the logarithm.", low=0.0, high=100.0,
               low_open=True, title=lambda value: f"r2 {value:g}")


def _bias(query_positions: np.ndarray, key_positions: np.ndarray, d_model: int, *, kerple_r1: float,
          kerple_r2: float) -> np.ndarray:
    distance = np.subtract.outer(query_positions, key_positions)
    return np.where(distance >= 0, -kerple_r1 * np.log1p(kerple_r2 * np.maximum(distance, 0.0)), -np.inf)


SCHEME = Scheme(key="kerple", label="KERPLE log (test bias)", order=135, family="bias",
                summary="A logarithmic penalty on the distance back to the key.",
                formula="logit(i, j) += −r1·ln(1 + r2·(i − j)) for j ≤ i", params=(R1, R2), bias=_bias)
