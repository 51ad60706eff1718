"""T5's relative position bias (Raffel et al. 2020): a learned number per head and bucket of the offset.

The logit of a query at m and a key at n gets ``table[bucket(n − m), head]``
added, with Hugging Face's ``_relative_position_bucket``
(:func:`~posenc_gui.model.bias.t5_relative_bucket`): distances below
``max_exact`` (a quarter of the buckets when bidirectional, half when
causal) have a bucket each, larger ones share log-spaced buckets up to
``max_distance``, beyond which all share the last. The encoder is
bidirectional (keys after the query have buckets of their own); the
decoder is causal (keys after the query are masked).

The bucket map is exact. The table is not a trained model's: it is drawn as
Hugging Face initialises ``relative_attention_bias`` before training,
N(0, σ²) with σ = d_model^−0.5 (:func:`~posenc_gui.model.bias.t5_random_table`),
seeded; a trained table comes with a model's checkpoint.
"""

from __future__ import annotations

import numpy as np

from ..bias.t5 import MAX_BUCKETS, t5_bias, t5_bucket_map, t5_random_table, t5_relative_bucket
from ..core.specs import ParamSpec
from ._core import Buckets, Preset, Scheme
from ._shared_specs import HEAD, N_HEADS, SEED, check_head

#: Farthest max_distance offered (2^30: a spin box holds 32-bit integers; T5 uses 128).
MAX_DISTANCE = 2**30

PARAMS = (
    ParamSpec("num_buckets", "int", 32, "buckets",
              f"Buckets of the relative position (T5's relative_attention_num_buckets), 2…{MAX_BUCKETS}, at least 4 "
              "when bidirectional: half for keys before the query, half for keys after.",
              low=2, high=MAX_BUCKETS, log=True, title=lambda value: f"{value:,} buckets",
              slug=lambda value: f"b{value}"),
    ParamSpec("max_distance", "int", 128, "max_distance",
              "Distance from which every key shares the last bucket of its side (T5's "
              "relative_attention_max_distance); it must exceed max_exact, the distances with a bucket each.",
              low=2, high=MAX_DISTANCE, log=True, title=lambda value: f"max_distance {value:,}",
              slug=lambda value: f"md{value}"),
    ParamSpec("bidirectional", "bool", True, "bidirectional (encoder)",
              "On: the encoder's buckets, keys before and after the query in halves of their own. Off: the "
              "decoder's, causal: keys after the query are masked.",
              title=lambda value: "bidirectional" if value else "causal",
              slug=lambda value: "" if value else "causal"),
    N_HEADS,
    HEAD,
    SEED,
)


def table_sigma(d_model: int) -> float:
    """The standard deviation of the drawn table: Hugging Face's ``d_model ** -0.5`` (initializer_factor 1)."""
    return d_model ** -0.5


def random_table(d_model: int, num_buckets: int, n_heads: int, seed: int) -> np.ndarray:
    """The scheme's bias table (buckets × heads): Hugging Face's initialisation N(0, :func:`table_sigma`²), seeded."""
    return t5_random_table(num_buckets, n_heads, seed, sigma=table_sigma(d_model))


def _bias(query_positions: np.ndarray, key_positions: np.ndarray, d_model: int, *, num_buckets: int,
          max_distance: int, bidirectional: bool, n_heads: int, head: int, seed: int) -> np.ndarray:
    table = random_table(d_model, num_buckets, n_heads, seed)
    return t5_bias(query_positions, key_positions, table, bidirectional, num_buckets, max_distance, head)


def _buckets(d_model: int, *, num_buckets: int, max_distance: int, bidirectional: bool, n_heads: int, head: int,
             seed: int, **_: object) -> Buckets:
    """The drawn table and Hugging Face's buckets of these settings."""
    return Buckets(random_table(d_model, num_buckets, n_heads, seed), table_sigma(d_model),
                   lambda relative: t5_relative_bucket(relative, bidirectional, num_buckets, max_distance),
                   lambda seq_len: t5_bucket_map(seq_len, bidirectional, num_buckets, max_distance))


def _check_together(d_model: int, *, num_buckets: int, max_distance: int, bidirectional: bool, n_heads: int,
                    head: int, seed: int) -> None:
    check_head(n_heads, head)
    # the bucket function refuses the settings it has no exact and log-spaced buckets for, naming the parameter
    t5_relative_bucket([0], bidirectional, num_buckets, max_distance)


SCHEME = Scheme(
    key="t5", label="T5 relative buckets (Raffel et al.)", order=130, family="bias",
    summary="Adds a learned number per head and bucket of the offset n − m to the logit of a query at m and a key "
    "at n. Distances below max_exact (num_buckets/4 when bidirectional: 8 of T5's 32) have a bucket each; larger "
    "ones share log-spaced buckets up to max_distance (128), beyond which all share the last. Bidirectional (the "
    "encoder): keys before and after the query have halves of their own; causal (the decoder): keys after it are "
    "masked. The bucket map is exact (Hugging Face's _relative_position_bucket); the biases are an untrained draw, "
    "N(0, 1/d_model) as Hugging Face initialises them, not a trained model's, whose table is in its checkpoint.",
    formula="logit(m, n) += table[bucket(n − m), head],  bucket: exact below max_exact, log-spaced to max_distance",
    params=PARAMS, check_together=_check_together, bias=_bias, buckets=_buckets,
    presets=(
        Preset("t5-small encoder (8 heads, bidirectional)", 512, 512,
               {"num_buckets": 32, "max_distance": 128, "bidirectional": True, "n_heads": 8, "head": 0},
               "t5-small config.json: d_model 512, num_heads 8, relative_attention_num_buckets 32, n_positions 512; "
               "relative_attention_max_distance 128 (T5Config's default); the encoder's buckets are bidirectional"),
        Preset("t5-small decoder (8 heads, causal)", 512, 512,
               {"num_buckets": 32, "max_distance": 128, "bidirectional": False, "n_heads": 8, "head": 0},
               "t5-small config.json as for the encoder; the decoder's self-attention buckets are causal "
               "(bidirectional=not is_decoder)"),
        Preset("t5-base encoder (12 heads, bidirectional)", 512, 768,
               {"num_buckets": 32, "max_distance": 128, "bidirectional": True, "n_heads": 12, "head": 0},
               "t5-base config.json: d_model 768, num_heads 12, relative_attention_num_buckets 32, n_positions 512; "
               "relative_attention_max_distance 128 (T5Config's default)"),
    ),
)
