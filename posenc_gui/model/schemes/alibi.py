"""ALiBi, attention with linear biases (Press et al. 2022): a penalty on the logit, linear in the distance.

Nothing is added to the token embeddings and nothing rotates: the logit of
a query at position i and a key at position j gets ``−m·(i − j)`` added, m
the head's slope (:func:`~posenc_gui.model.bias.alibi_slopes`, the authors'
fairseq rule, BLOOM's ``build_alibi_tensor`` alike), and keys after the
query are masked, as in the paper's decoder. ``symmetric`` gives the
bidirectional use, ``−m·|i − j|`` over every key. d_model does not change
the bias.
"""

from __future__ import annotations

import numpy as np

from ..bias.alibi import alibi_bias, alibi_slopes
from ..core.specs import ParamSpec
from ._core import Preset, Scheme
from ._shared_specs import HEAD, N_HEADS, check_head

PARAMS = (
    N_HEADS,
    HEAD,
    ParamSpec("symmetric", "bool", False, "symmetric −m·|i − j|",
              "Off: the paper's causal bias −m·(i − j) for keys j ≤ i, keys after the query masked (a decoder). "
              "On: −m·|i − j| over every key (bidirectional use).",
              title=lambda value: "symmetric" if value else "causal", slug=lambda value: "sym" if value else ""),
)


def _bias(query_positions: np.ndarray, key_positions: np.ndarray, d_model: int, *, n_heads: int, head: int,
          symmetric: bool) -> np.ndarray:
    return alibi_bias(query_positions, key_positions, alibi_slopes(n_heads)[head], causal=not symmetric)


def _slopes(d_model: int, *, n_heads: int, **_: object) -> np.ndarray:
    return alibi_slopes(n_heads)


def _check_together(d_model: int, *, n_heads: int, head: int, symmetric: bool) -> None:
    check_head(n_heads, head)


SCHEME = Scheme(
    key="alibi", label="ALiBi (linear biases, Press et al.)", order=120, family="bias",
    summary="Adds −m·(i − j) to the logit of a query at i and a key at j ≤ i, and masks the keys after the query "
    "(the paper's decoder): a penalty growing linearly with the distance, with nothing added to the embeddings "
    "(d_model does not change it). Each head has its own slope m: 2^(−8/n), 2^(−16/n), … 2^(−8) for n heads a "
    "power of two (8 heads: 1/2 … 1/256); for any other n, those of the power of two c below n, then every other "
    "slope of 2c heads (Press et al.'s rule), so head c has the largest. Symmetric: −m·|i − j| over every key.",
    formula="logit(i, j) += −m_head·(i − j) for j ≤ i (masked for j > i),  m_h = 2^(−8(h+1)/n) for n heads a power of two",
    params=PARAMS, check_together=_check_together, bias=_bias, slopes=_slopes,
    presets=(
        Preset("BLOOM-176B (ALiBi, 112 heads)", 2048, 128, {"n_heads": 112, "head": 0, "symmetric": False},
               "bigscience/bloom config.json: n_head 112, hidden_size 14336 (head dimension 128), trained on 2,048 "
               "tokens; slopes of Hugging Face's build_alibi_tensor: 112 is not a power of two, so 64 heads' "
               "slopes, then every other slope of 128 heads'"),
        Preset("BLOOM-560m (ALiBi, 16 heads)", 2048, 64, {"n_heads": 16, "head": 0, "symmetric": False},
               "bigscience/bloom-560m config.json: n_head 16, hidden_size 1024 (head dimension 64), trained on "
               "2,048 tokens"),
        Preset("MPT-7B (ALiBi, 32 heads)", 2048, 128, {"n_heads": 32, "head": 0, "symmetric": False},
               "mosaicml/mpt-7b config.json: n_heads 32, d_model 4096 (head dimension 128), max_seq_len 2048, "
               "attn_config alibi true with alibi_bias_max 8: the paper's slopes 2^(−8k/32)"),
    ),
)
