"""Context extension: which rotary pairs meet, at the target length, angles that training never showed.

RoPE turns rotary pair i at position p by the angle ``p · θ_i``. In training,
at the trained context L₀ (``original_max_position_embeddings``), the model saw
the positions 0 … L₀ − 1 with the unscaled frequencies θ_i: pair i took the
angles 0, θ_i, 2θ_i, …, (L₀ − 1)·θ_i, steps of θ_i spanning the *trained
range* [0, L₀·θ_i). That is Chen et al.'s (2023, position interpolation §2.2)
index range [0, L) written as angles: interpolation maps the positions
0 … L′ − 1 of a context L′ = factor · L₀ onto [0, L₀), and so the angles of
linear scaling at N = L′ stay below L₀·θ_i.

- If ``L₀ · θ_i ≥ 2π`` (the wavelength 2π/θ_i is at most L₀: YaRN's
  r = L/λ ≥ 1, Peng et al. 2023 §3.2) the steps went once round the circle
  and left no gap wider than one step θ_i: every direction of the pair, mod
  2π, was seen, so a larger angle at a longer context is a direction the
  model knows (if at a position it never saw).
- Otherwise the pair never completed a turn: the directions beyond
  ``L₀ · θ_i`` were never shown.

At the target length N (the app's ``seq_len``), with the frequencies θ′_i of a
scaling method, pair i uses the angles up to ``(N − 1) · θ′_i``. It **meets
angles training never showed** when it did not complete a turn in training
and ``(N − 1) · θ′_i ≥ L₀ · θ_i`` (the angle L₀·θ_i itself is that of position
L₀, one past training's last). The ratio ``(N − 1) · θ′_i / (L₀ · θ_i)`` says
by how much the used range overshoots (> 1) or stays inside (< 1) the trained
one: YaRN's "out-of-bound" values of NTK-aware scaling (§3.2) are its
slowest pairs with a ratio above 1.

The comparisons are float64 products as written; at an exact tie (the ratio 1
in exact arithmetic, e.g. linear scaling at N = factor · L₀ + 1) rounding may
give either verdict.

Every method is computed with the same L₀, factor, rope_theta and head
dimension: L₀ is the option ``original_max_position_embeddings`` for every
method, including default, linear and ntk, which have no trained context of
their own in a Hugging Face config (and whose Parameters panel hides the
option); each method's own parameters (beta_fast, low_freq_factor …) are the
options, whose defaults are Hugging Face's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.params import EncodingParams, check_params
from . import ROPE_TYPES, rope_frequencies


def context_methods() -> tuple[str, ...]:
    """The methods compared, in the order shown: the scaling types registered now (no scaling first)."""
    return tuple(ROPE_TYPES)


@dataclass(frozen=True)
class MethodContext:
    """One scaling method's angles at the target length N.

    Attributes
    ----------
    method : str
        One of :func:`context_methods`.
    error : str or None
        Why the method cannot be computed with these options (Hugging Face
        refuses them, e.g. llama3's low_freq_factor ≥ high_freq_factor, or
        ntk with fewer than 4 rotated channels); then the arrays are empty.
    inv_freq : ndarray, float64
        θ′_i of the method (at N for dynamic NTK).
    used_max : ndarray, float64
        ``(N − 1) · θ′_i``: the largest angle pair i takes at N (radians).
    ratio : ndarray, float64
        ``used_max / (L₀ · θ_i)``.
    unseen : ndarray of bool
        The pair did not complete a turn in training and ``used_max ≥ L₀ · θ_i``.
    attention_factor : float
        The factor Hugging Face multiplies cos and sin by (YaRN's mscale; else 1).
    """

    method: str
    error: str | None
    inv_freq: np.ndarray
    used_max: np.ndarray
    ratio: np.ndarray
    unseen: np.ndarray
    attention_factor: float

    @property
    def unseen_count(self) -> int:
        """How many pairs meet angles training never showed (0 for a method that could not be computed)."""
        return int(np.count_nonzero(self.unseen))

    @property
    def available(self) -> bool:
        """Whether the method could be computed with these options."""
        return self.error is None


@dataclass(frozen=True)
class ContextExtensionData:
    """Per rotary pair, the angle range of training against the range each scaling method uses at N.

    Attributes
    ----------
    params : EncodingParams
        The parameters computed for (scheme ``rope``).
    trained_context : int
        L₀, the option ``original_max_position_embeddings``.
    target_length : int
        N, ``params.seq_len``: the positions 0 … N − 1.
    factor : float
        The option ``factor``, shared by every method that takes one.
    unscaled : ndarray, float64
        θ_i without scaling: the frequencies of training.
    trained_max : ndarray, float64
        ``L₀ · θ_i``: the end of the trained range [0, L₀·θ_i) (radians).
    turned : ndarray of bool
        ``L₀ · θ_i ≥ 2π``: the pair completed a turn in training.
    methods : tuple of MethodContext
        One per :func:`context_methods`, in that order.
    chosen : str
        The scaling type of ``params`` (``rope_type``).
    """

    params: EncodingParams
    trained_context: int
    target_length: int
    factor: float
    unscaled: np.ndarray
    trained_max: np.ndarray
    turned: np.ndarray
    methods: tuple[MethodContext, ...]
    chosen: str

    @property
    def pairs(self) -> int:
        """The number of rotary pairs, rotary_dim / 2."""
        return int(self.unscaled.size)

    @property
    def turned_count(self) -> int:
        """Pairs that completed at least one turn in training (wavelength ≤ L₀)."""
        return int(np.count_nonzero(self.turned))

    def method(self, name: str) -> MethodContext:
        """The :class:`MethodContext` of ``name``; ValueError for a name not in :func:`context_methods`."""
        for entry in self.methods:
            if entry.method == name:
                return entry
        raise ValueError(f"method must be one of {', '.join(entry.method for entry in self.methods)}, got {name!r}")


def _method_context(method: str, params: EncodingParams, trained_max: np.ndarray, turned: np.ndarray
                    ) -> MethodContext:
    """``method``'s angles at N = ``params.seq_len``, or why Hugging Face refuses it with ``params``' options."""
    target_length = params.seq_len
    try:
        config = params.info.hf_rope(params.d_model, **{**params.options, "rope_type": method})
        inv_freq, attention_factor = rope_frequencies(config, seq_len=target_length)
    except ValueError as error:
        empty = np.empty(0)
        return MethodContext(method, str(error), empty, empty, empty, np.zeros(0, dtype=bool), math.nan)
    used_max = (target_length - 1) * inv_freq
    unseen = ~turned & (used_max >= trained_max)
    return MethodContext(method, None, inv_freq, used_max, used_max / trained_max, unseen, float(attention_factor))


def context_extension_data(params: EncodingParams) -> ContextExtensionData:
    """The Context extension panel's data for ``params`` (scheme ``rope``).

    Every method of :func:`context_methods` is computed with the options of
    ``params`` but its own ``rope_type``, with L₀ =
    ``original_max_position_embeddings`` and N = ``seq_len`` (see the module
    docstring for what counts as an angle training never showed). The work
    is O(rotary_dim) whatever N is.

    Raises
    ------
    ValueError
        For parameters of another scheme, or parameters that do not validate.
        A method Hugging Face refuses with these options is not an error: its
        :attr:`MethodContext.error` says why.
    """
    params = check_params(params)
    if params.info.hf_rope is None:
        raise ValueError(f"params must be of the rope scheme (or another with a Hugging Face RoPE configuration), "
                         f"got {params.scheme!r}")
    options = dict(params.options)
    trained_context = int(options["original_max_position_embeddings"])
    unscaled, _ = rope_frequencies(params.info.hf_rope(params.d_model, **{**options, "rope_type": "default"}))
    trained_max = trained_context * unscaled
    turned = trained_max >= 2.0 * math.pi
    methods = tuple(_method_context(method, params, trained_max, turned)
                    for method in context_methods())
    return ContextExtensionData(params, trained_context, params.seq_len, float(options["factor"]), unscaled,
                                trained_max, turned, methods, options["rope_type"])
