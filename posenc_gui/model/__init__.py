"""The model layer: NumPy only, no Qt. Usable from a notebook::

    from posenc_gui.model import encode, SCHEMES
    pe = encode("sinusoidal", range(128), 512, base=10000)
"""

from . import limits
from .attention import (
    AttentionTrace,
    LogitSplit,
    OrderingComparison,
    PermutationDemo,
    align_permutation,
    logit_split,
    permutation_demo,
    permutation_dict,
    self_attention,
    tokenize,
)
from .params import EncodingParams
from .sampling import AxisSample, aliased, curve_positions, sample_axis, value_range
from .schemes import LAYOUTS, SCHEMES, SchemeInfo, columns, encode, formula_term, wavelengths
from .similarity import METRICS, offset_profile, pairwise, similarity_matrix

__all__ = [
    "AxisSample",
    "aliased",
    "curve_positions",
    "sample_axis",
    "value_range",
    "LAYOUTS",
    "METRICS",
    "SCHEMES",
    "EncodingParams",
    "SchemeInfo",
    "columns",
    "encode",
    "formula_term",
    "limits",
    "offset_profile",
    "pairwise",
    "similarity_matrix",
    "wavelengths",
    "AttentionTrace",
    "LogitSplit",
    "OrderingComparison",
    "PermutationDemo",
    "align_permutation",
    "logit_split",
    "permutation_demo",
    "permutation_dict",
    "self_attention",
    "tokenize",
]
