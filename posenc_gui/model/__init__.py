"""The model layer: NumPy only, no Qt. Usable from a notebook::

    from posenc_gui.model import encode, SCHEMES
    pe = encode("sinusoidal", range(128), 512, base=10000)
"""

from .core import cache, limits
from .bias import (
    alibi_bias,
    alibi_slopes,
    learned_table,
    learned_values,
    t5_bias,
    t5_random_table,
    t5_relative_bucket,
    xpos_centered_positions,
    xpos_scale,
    xpos_zeta,
)
from .core.params import EncodingParams, default_d_model
from .rope import (
    RopeBands,
    RopeConfig,
    rope_angles,
    rope_bands,
    rope_config,
    rope_decay_bound,
    rope_frequencies,
    rope_pairs,
    rope_rotate,
)
from .core.sampling import AxisSample, aliased, curve_positions, sample_axis, value_range
from .schemes import OPTION_SPECS, SCHEMES, Columns, Preset, Scheme, columns, encode, find_preset, formula_term, presets, register, scheme, unregister, wavelengths
from .core.specs import Options, ParamSpec
from .analyses.similarity import METRICS, offset_profile, pairwise, similarity_matrix


#: Names of the subpackages imported on first use, by subpackage: the app starts without them.
_LAZY_NAMES = {
    "attention": ("AttentionTrace", "LogitSplit", "OrderingComparison", "PermutationDemo", "align_permutation",
                  "logit_split", "permutation_demo", "permutation_dict", "self_attention", "tokenize"),
    "decoder": ("Decoder", "DecoderTrace", "PairContributions", "TraceCancelled", "open_decoder",
                "pair_contributions"),
    "files": ("ModelFile", "ModelFileError", "open_model"),  # the readers: the first paint opens no file
}
_LAZY_MODULE = {name: module for module, names in _LAZY_NAMES.items() for name in names}


def __getattr__(name: str) -> object:
    if name in _LAZY_MODULE:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY_MODULE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def clear_caches() -> None:
    """Forget every result the model keeps for parameters seen before (encoded grids, analysis samples).

    Results are kept so that going back to a value is fast; clearing them
    frees their memory, and lets a benchmark time the computation itself.
    """
    from .analyses import addition
    from .attention import embeddings
    from .panels import panel_data  # the analyses load with their panels

    cache.clear()
    addition.clear_caches()
    panel_data.clear_caches()
    embeddings._attention_weights.cache_clear()


__all__ = [
    "AxisSample",
    "aliased",
    "curve_positions",
    "sample_axis",
    "value_range",
    "OPTION_SPECS",
    "Columns",
    "Options",
    "ParamSpec",
    "Preset",
    "Scheme",
    "presets",
    "find_preset",
    "register",
    "unregister",
    "scheme",
    "METRICS",
    "SCHEMES",
    "EncodingParams",
    "clear_caches",
    "columns",
    "default_d_model",
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
    "RopeBands",
    "RopeConfig",
    "rope_angles",
    "rope_bands",
    "rope_config",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_pairs",
    "rope_rotate",
    "alibi_bias",
    "alibi_slopes",
    "learned_table",
    "learned_values",
    "t5_bias",
    "t5_random_table",
    "t5_relative_bucket",
    "xpos_centered_positions",
    "xpos_scale",
    "xpos_zeta",
    "ModelFile",
    "ModelFileError",
    "open_model",
    "Decoder",
    "DecoderTrace",
    "PairContributions",
    "TraceCancelled",
    "open_decoder",
    "pair_contributions",
]
