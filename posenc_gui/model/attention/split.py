"""The toy head's logits taken apart: the four terms of an added encoding, or the logits without and with a rotation.

``(e_i + p_i) W_q · ((e_j + p_j) W_k)ᵀ / √d_k`` expands into meaning and
position terms (:class:`LogitSplit`); a rotation (RoPE) adds nothing to the
embeddings, so what applies to it is the logits without and with the
rotation and their difference (:class:`RotationSplit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import limits
from .embeddings import _readonly, attention_weights
from .head import AttentionTrace

#: Names of the four terms of the logit split, in order.
SPLIT_TERMS = ("e·e", "e·p", "p·e", "p·p")
#: Names of the matrices of the rotation split, in order.
ROTATION_TERMS = ("without rotation", "with rotation", "difference")
#: How far the offset check shifts every position (the rotated logits must stay the same).
SHIFT_CHECK = 1000.0
#: Why a rotation has no four-term split, and what the demo shows instead.
ROTATION_SPLIT_NOTE = (
    "The four-term split e·e + e·p + p·e + p·p applies to encodings added to the embeddings only. "
    "A rotation (RoPE, xPos) adds nothing (X = E): it turns each query and key by its position instead, so "
    "what applies is the logits without and with the rotation and their difference, the rotation's contribution."
)


@dataclass(frozen=True, eq=False)
class LogitSplit:
    """The attention logits of ``e + p`` split into meaning and position terms.

    ``(e_i + p_i) W_q · ((e_j + p_j) W_k)ᵀ / √d_k`` expands into four
    ``(n, n)`` matrices, each scaled by ``1 / √d_k`` like the scores:

    - ``ee``: ``e_i W_q · (e_j W_k)ᵀ`` — meaning attends to meaning;
    - ``ep``: ``e_i W_q · (p_j W_k)ᵀ`` — a word attends to a position;
    - ``pe``: ``p_i W_q · (e_j W_k)ᵀ`` — a position attends to a word;
    - ``pp``: ``p_i W_q · (p_j W_k)ᵀ`` — position attends to position.

    ``total`` is the trace's ``scores``; ``max_abs_residual`` is
    ``max |ee + ep + pe + pp (+ bias) − total|`` over the keys each query
    sees (rounding only, ~1e-15). Under a mask (``allowed`` False) a term
    still has its value, but the head never uses it: ``total`` is ``−∞``
    there, and the check and the shares leave those entries out.
    """

    tokens: tuple[str, ...]
    ee: np.ndarray
    ep: np.ndarray
    pe: np.ndarray
    pp: np.ndarray
    total: np.ndarray
    max_abs_residual: float
    #: Which keys each query sees (None: every key).
    allowed: np.ndarray | None = None
    #: The trace's ``logit_bias``, a fifth term of the total (None without).
    bias: np.ndarray | None = None

    def terms(self) -> dict[str, np.ndarray]:
        """The four terms keyed by :data:`SPLIT_TERMS`."""
        return dict(zip(SPLIT_TERMS, (self.ee, self.ep, self.pe, self.pp)))

    def shares(self) -> dict[str, float]:
        """Each term's share of the summed absolute values of all the total's terms over the allowed keys (sums
        to 1): the four of :data:`SPLIT_TERMS`, and ``"bias"`` when the trace has one (a fifth term)."""
        keep = slice(None) if self.allowed is None else self.allowed
        terms = self.terms() if self.bias is None else {**self.terms(), "bias": self.bias}
        sizes = {name: float(np.abs(t[keep]).sum()) for name, t in terms.items()}
        total = sum(sizes.values())
        return {name: (s / total if total > 0 else 0.0) for name, s in sizes.items()}


def logit_split(trace: AttentionTrace, seed: int = 0) -> LogitSplit:
    """Split the scores of a trace made *with* position into its four terms.

    Parameters
    ----------
    trace : AttentionTrace
        From :func:`self_attention` with a ``scheme``.
    seed : int
        The seed the trace was made with (for the weights).

    Raises
    ------
    ValueError
        If the trace has neither a positional encoding nor a bias, or rotates
        Q and K (see :func:`rotation_split`).
    """
    if not isinstance(trace, AttentionTrace):
        raise ValueError(f"trace must be an AttentionTrace from self_attention(), got {limits.shown(trace)}")
    if trace.rotation is not None:
        raise ValueError(f"trace rotates Q and K: {ROTATION_SPLIT_NOTE} Use rotation_split().")
    if trace.positional is None and trace.bias is None:
        raise ValueError("trace has no positional encoding; make it with a scheme to split the logits")
    d_model = trace.embeddings.shape[1]
    weights = attention_weights(d_model, seed)
    scale = 1.0 / math.sqrt(weights.d_k)
    # a bias scheme adds nothing to X: its three position terms are 0 and the bias is the fifth term
    e = trace.embeddings
    p = np.zeros_like(e) if trace.positional is None else trace.positional
    eq, ek = e @ weights.w_q, e @ weights.w_k
    pq, pk = p @ weights.w_q, p @ weights.w_k
    ee, ep, pe, pp = (eq @ ek.T) * scale, (eq @ pk.T) * scale, (pq @ ek.T) * scale, (pq @ pk.T) * scale
    total = ee + ep + pe + pp if trace.bias is None else ee + ep + pe + pp + trace.bias
    allowed = trace.allowed
    residual = float(np.max(np.abs(total[allowed] - trace.scores[allowed])))  # masked keys: −∞, unused
    return LogitSplit(trace.tokens, _readonly(ee), _readonly(ep), _readonly(pe), _readonly(pp), trace.scores,
                      residual, allowed, trace.bias)


@dataclass(frozen=True, eq=False)
class RotationSplit:
    """What the four-term split becomes for a rotation: the logits without and with it.

    Attributes
    ----------
    tokens : tuple of str
    unrotated : ndarray, (n, n)
        ``q_m · k_n / √d_k``: the same head without the rotation (the logits
        without position).
    rotated : ndarray, (n, n)
        ``(R_m q_m)·(R_n k_n) / √d_k``: the trace's ``logits`` (its scores
        before a bias and the mask).
    difference : ndarray, (n, n)
        ``rotated − unrotated``: the rotation's contribution. On the
        diagonal (offset 0) it is ``(attention_factor² − 1)`` times the rotated
        channels' part, so 0 unless YaRN scales cos and sin.
    shift_residual : float
        ``max |S(positions + SHIFT_CHECK) − S(positions)|`` of the rotated
        logits: rounding only (the logits depend on the offsets only).
    note : str
        :data:`ROTATION_SPLIT_NOTE`.
    allowed : ndarray of bool or None
        Which keys each query sees (None: every key); the three matrices are
        defined everywhere, but the head uses only these entries.
    """

    tokens: tuple[str, ...]
    unrotated: np.ndarray
    rotated: np.ndarray
    difference: np.ndarray
    shift_residual: float
    note: str = ROTATION_SPLIT_NOTE
    allowed: np.ndarray | None = None

    def terms(self) -> dict[str, np.ndarray]:
        """The three matrices keyed by :data:`ROTATION_TERMS`."""
        return dict(zip(ROTATION_TERMS, (self.unrotated, self.rotated, self.difference)))


def rotation_split(trace: AttentionTrace) -> RotationSplit:
    """The logits of a trace made with a rotation, without and with it, and their difference.

    Raises
    ------
    ValueError
        If the trace has no rotation (an added encoding has :func:`logit_split`).
    """
    if not isinstance(trace, AttentionTrace):
        raise ValueError(f"trace must be an AttentionTrace from self_attention(), got {limits.shown(trace)}")
    if trace.rotation is None or trace.unrotated_scores is None:
        raise ValueError("trace has no rotation; make it with a rotating scheme (rope), or split an added "
                         "encoding's logits with logit_split()")
    shifted = trace.rotation.logits(trace.q, trace.k, SHIFT_CHECK)
    residual = float(np.max(np.abs(shifted - trace.logits)))
    return RotationSplit(trace.tokens, trace.unrotated_scores, trace.logits,
                         _readonly(trace.logits - trace.unrotated_scores), residual, ROTATION_SPLIT_NOTE,
                         trace.allowed)


def split_logits(trace: AttentionTrace, seed: int = 0) -> LogitSplit | RotationSplit:
    """What applies to the trace: :func:`rotation_split` for a rotation, else :func:`logit_split`."""
    if isinstance(trace, AttentionTrace) and trace.rotation is not None:
        return rotation_split(trace)
    return logit_split(trace, seed)
