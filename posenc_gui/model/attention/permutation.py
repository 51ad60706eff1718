"""The Permutation demo: two sentences through the toy head, with and without position, compared.

:func:`permutation_demo` traces both sentences four times (without and with
the scheme's position, see :mod:`.head`), compares the orderings
(:mod:`.ordering`) and splits the positioned logits (:mod:`.split`);
:func:`permutation_dict` gives its numbers as JSON.

Example
-------
>>> from posenc_gui.model.attention import permutation_demo
>>> demo = permutation_demo("dog bites man", "man bites dog")
>>> demo.without_pe.max_abs_diff_output < 1e-12
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..core import limits
from .embeddings import DEFAULT_DEMO_D_MODEL, DEFAULT_SEED, _check_seed, check_demo_d_model, tokenize
from .head import _check_scheme, _check_scheme_kwargs, self_attention
from .ordering import SAME_TOLERANCE, OrderingComparison, _position_label, compare_both
from .split import ROTATION_SPLIT_NOTE, SPLIT_TERMS, LogitSplit, RotationSplit, split_logits

DEFAULT_SENTENCE_A = "dog bites man"
DEFAULT_SENTENCE_B = "man bites dog"

#: At most this many repeated words get a line in the verdict.
MAX_REPEATED_LINES = 3


@dataclass(frozen=True, eq=False)
class PermutationDemo:
    """Everything the Permutation demo shows, for one pair of sentences.

    Attributes
    ----------
    sentence_a, sentence_b : str
        The sentences as typed.
    tokens_a, tokens_b : tuple of str
    d_model, seed : int
    scheme : str
        The positional-encoding scheme of the ``with_pe`` traces: a table
        added to the embeddings, or a rotation of Q and K (RoPE).
    scheme_kwargs : dict
        Its parameters.
    without_pe, with_pe : OrderingComparison
    split_a, split_b : LogitSplit or RotationSplit
        Each sentence's logits with position: the four-term split of an added
        encoding, or, for a rotation, the logits without and with it
        (:class:`RotationSplit`, whose ``note`` says why).
    message : str
        Empty when b reorders a; otherwise why there is no comparison.
    repeated : dict
        ``{"a": {word: (spread without PE, spread with PE)}, "b": {…}}`` for
        words that occur more than once (see :func:`repeated_word_spread`).
    causal : bool
        Whether the head masks future keys (in both comparisons).
    """

    sentence_a: str
    sentence_b: str
    tokens_a: tuple[str, ...]
    tokens_b: tuple[str, ...]
    d_model: int
    seed: int
    scheme: str
    scheme_kwargs: dict
    without_pe: OrderingComparison
    with_pe: OrderingComparison
    split_a: LogitSplit | RotationSplit
    split_b: LogitSplit | RotationSplit
    message: str
    repeated: dict
    causal: bool = False

    @property
    def rotates(self) -> bool:
        """True if position is a rotation of Q and K (RoPE), not an encoding added to X."""
        return self.with_pe.trace_a.rotation is not None

    @property
    def rotation_name(self) -> str | None:
        """The rotation's name in the texts (``"RoPE"``, ``"xPos"``), None when position is not a rotation."""
        rotation = self.with_pe.trace_a.rotation
        return None if rotation is None else rotation.name

    @property
    def biased(self) -> bool:
        """True if position is a bias added to the logits (ALiBi, T5), not an encoding added to X."""
        return self.with_pe.trace_a.positional is None and self.with_pe.trace_a.bias is not None

    @property
    def masked_split(self) -> bool:
        """True if some key is masked in the split (a causal mask, or a bias of −∞)."""
        return self.with_pe.trace_a.masked or self.with_pe.trace_b.masked

    @property
    def is_permutation(self) -> bool:
        """True if sentence b is a reordering of sentence a."""
        return self.without_pe.is_permutation

    @property
    def permutation(self) -> tuple[int, ...] | None:
        """``perm`` with ``tokens_b[i] == tokens_a[perm[i]]``, or ``None``."""
        return self.without_pe.permutation

    def comparison(self, with_position: bool) -> OrderingComparison:
        """``with_pe`` or ``without_pe``."""
        return self.with_pe if with_position else self.without_pe

    def verdict_lines(self) -> list[str]:
        """The verdicts in plain words: the comparison, or the reason there is none, and repeated words."""
        lines = [self.without_pe.verdict, self.with_pe.verdict] if self.is_permutation else [self.message]
        seen: set[str] = set()
        for key in ("a", "b"):
            for word, (plain, positioned) in self.repeated[key].items():
                if word in seen:
                    continue
                seen.add(word)
                if len(seen) > MAX_REPEATED_LINES:
                    break
                if plain <= SAME_TOLERANCE:
                    plain_text = f"are identical (max difference {plain:.1e})"
                else:  # only under the causal mask: each occurrence sees another number of words
                    plain_text = (f"differ by {plain:.2g}, as the causal mask lets each occurrence see a "
                                  "different number of words")
                lines.append(
                    f"“{word}” occurs more than once in sentence {key}: without position its output rows "
                    f"{plain_text}; {_position_label(self.rotation_name)} they differ by {positioned:.2g}."
                )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The numbers as JSON-able values (lists, floats, ``None``); see :func:`permutation_dict`."""
        return permutation_dict(self)


def _unmasked_list(matrix: np.ndarray, allowed: np.ndarray | None) -> list:
    """``matrix`` as nested lists, ``None`` (JSON null) at the masked entries."""
    if allowed is None or np.all(allowed):
        return matrix.tolist()
    return [[value if keep else None for value, keep in zip(row, keep_row)]
            for row, keep_row in zip(matrix.tolist(), allowed.tolist())]


def _comparison_dict(comparison: OrderingComparison) -> dict[str, Any]:
    mask = comparison.mask
    trace_a, trace_b = comparison.trace_a, comparison.trace_b
    return {
        "attention_a": trace_a.attention.tolist(),
        "attention_b": trace_b.attention.tolist(),
        "output_a": trace_a.output.tolist(),
        "output_b": trace_b.output.tolist(),
        "max_abs_diff_output": comparison.max_abs_diff_output,
        "max_abs_diff_attention": comparison.max_abs_diff_attention,
        "scores_a": _unmasked_list(trace_a.scores, trace_a.allowed),
        "scores_b": _unmasked_list(trace_b.scores, trace_b.allowed),
        "allowed_a": trace_a.allowed.tolist(),
        "allowed_b": trace_b.allowed.tolist(),
        "mask": None if mask is None else {
            "words": list(mask.words),
            "keys_seen_a": list(mask.keys_seen_a),
            "keys_seen_b": list(mask.keys_seen_b),
            "first_words": list(mask.first_words),
            "first_output_minus_value": list(mask.first_output_minus_value),
        },
        "verdict": comparison.verdict,
    }


def permutation_dict(demo: PermutationDemo) -> dict[str, Any]:
    """The demo's numbers as a JSON-able dict (for ``json.dump``).

    Keys: ``tokens_a``, ``tokens_b``, and for each of ``without_pe`` and
    ``with_pe``: ``attention_a``, ``attention_b``, ``output_a``, ``output_b``
    (nested lists, rows = words), ``max_abs_diff_output`` and
    ``max_abs_diff_attention`` (after aligning b to a; ``null`` if b is not a
    reordering of a), plus ``scores_a``/``scores_b`` (``null`` at a masked
    key), ``allowed_a``/``allowed_b`` (which keys each word sees), ``mask``
    (with the causal mask: ``words``, ``keys_seen_a``, ``keys_seen_b``,
    ``first_words``, ``first_output_minus_value`` of :class:`MaskEvidence`;
    else ``null``) and ``verdict``. Also ``causal``,
    ``sentence_a``, ``sentence_b``, ``is_permutation``, ``permutation``,
    ``message``, ``d_model``, ``seed``, ``scheme``, ``scheme_kwargs``,
    ``position`` (``"added"``, ``"bias"`` or ``"rotation"``) and, for an added encoding or a bias,
    ``logit_split`` (``a``/``b``: the four terms, ``bias`` (``null`` without), ``total``, ``sum_of`` (the
    terms that add up to ``total``), ``max_abs_residual`` (max |their sum − total| over the keys the head
    uses), ``shares`` (the bias's too)) with ``rotation`` and ``rotation_split`` ``null``; for a rotation,
    ``logit_split`` ``null``,
    ``rotation`` (``inv_freq``, ``attention_factor``, ``pairing``,
    ``rotary_dim``) and ``rotation_split`` (``a``/``b``:
    ``without_rotation``, ``with_rotation``, ``difference``,
    ``shift_residual``; and ``note``). Split matrices hold ``null`` at the
    masked keys (the head does not use them).
    """
    if not isinstance(demo, PermutationDemo):
        raise ValueError(f"demo must be a PermutationDemo from permutation_demo(), got {limits.shown(demo)}")

    def split(s: LogitSplit) -> dict[str, Any]:
        return {
            **{name: _unmasked_list(term, s.allowed) for name, term in s.terms().items()},
            "bias": None if s.bias is None else _unmasked_list(s.bias, s.allowed),
            "total": _unmasked_list(s.total, s.allowed),
            "sum_of": [*SPLIT_TERMS, *(() if s.bias is None else ("bias",))],
            "max_abs_residual": s.max_abs_residual, "shares": s.shares(),
        }

    def rotated(s: RotationSplit) -> dict[str, Any]:
        return {
            **{name.replace(" ", "_"): _unmasked_list(term, s.allowed) for name, term in s.terms().items()},
            "shift_residual": s.shift_residual,
        }

    rotation = demo.with_pe.trace_a.rotation
    splits = (demo.split_a, demo.split_b)
    return {
        "sentence_a": demo.sentence_a,
        "sentence_b": demo.sentence_b,
        "tokens_a": list(demo.tokens_a),
        "tokens_b": list(demo.tokens_b),
        "is_permutation": demo.is_permutation,
        "permutation": None if demo.permutation is None else list(demo.permutation),
        "message": demo.message,
        "causal": demo.causal,
        "d_model": demo.d_model,
        "seed": demo.seed,
        "scheme": demo.scheme,
        "scheme_kwargs": {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in demo.scheme_kwargs.items()},
        "position": "rotation" if demo.rotates else "bias" if demo.biased else "added",
        "without_pe": _comparison_dict(demo.without_pe),
        "with_pe": _comparison_dict(demo.with_pe),
        "logit_split": None if demo.rotates else dict(zip("ab", map(split, splits))),
        "rotation": None if rotation is None else {
            "inv_freq": rotation.inv_freq.tolist(), "attention_factor": rotation.attention_factor,
            "pairing": rotation.pairing, "rotary_dim": rotation.rotary_dim,
            **({} if rotation.zeta is None else {"zeta": rotation.zeta.tolist(), "scale_base": rotation.scale_base}),
        },
        "rotation_split": None if not demo.rotates else {**dict(zip("ab", map(rotated, splits))),
                                                         "note": ROTATION_SPLIT_NOTE},
    }


def permutation_demo(
    sentence_a: str = DEFAULT_SENTENCE_A,
    sentence_b: str = DEFAULT_SENTENCE_B,
    d_model: int = DEFAULT_DEMO_D_MODEL,
    scheme: str = "sinusoidal",
    scheme_kwargs: Mapping[str, Any] | None = None,
    seed: int = DEFAULT_SEED,
    causal: bool = False,
) -> PermutationDemo:
    """Trace two sentences through the toy head, with and without position, and compare.

    Parameters
    ----------
    sentence_a, sentence_b : str
        The sentences; b is usually a reordering of a ("dog bites man",
        "man bites dog"). If it is not, the result says so in ``message``
        (no exception) and the per-sentence traces are still there.
    d_model : int
        Embedding size of the demo, ``2 … 64`` (default 8).
    scheme : str
        Positional-encoding scheme for the ``with_pe`` traces: a table is
        added to the embeddings; ``rope`` rotates the head's Q and K by
        position instead (see :func:`self_attention`).
    scheme_kwargs : mapping, optional
        Its parameters (``EncodingParams.scheme_kwargs()``).
    seed : int
        Seed of embeddings and weights, ``0 … 2³²−1``.
    causal : bool
        Mask future keys in every trace (a decoder's head): word ``i``
        attends to words ``0 … i`` only. The mask is positional, so the
        outputs then change with the order even without position, and the
        comparisons say why (:class:`MaskEvidence`).

    Returns
    -------
    PermutationDemo

    Raises
    ------
    ValueError
        For an empty sentence or one over :data:`MAX_WORDS` words (naming
        ``sentence_a`` / ``sentence_b``), a ``d_model`` outside ``2 … 64``, or
        a bad scheme or scheme parameter (for RoPE also a ``d_model`` whose
        rotated channels are odd or fewer than 2).
    """
    tokens_a = tokenize(sentence_a, "sentence_a")
    tokens_b = tokenize(sentence_b, "sentence_b")
    d_model = check_demo_d_model(d_model)
    seed = _check_seed(seed)
    scheme = _check_scheme(scheme)
    kwargs = _check_scheme_kwargs(scheme_kwargs)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {limits.shown(causal)}")
    causal = bool(causal)
    plain_a = self_attention(tokens_a, d_model, seed=seed, causal=causal)
    plain_b = self_attention(tokens_b, d_model, seed=seed, causal=causal)
    pos_a = self_attention(tokens_a, d_model, scheme=scheme, scheme_kwargs=kwargs, seed=seed, causal=causal)
    pos_b = self_attention(tokens_b, d_model, scheme=scheme, scheme_kwargs=kwargs, seed=seed, causal=causal)
    without_pe, with_pe, message, repeated = compare_both(plain_a, plain_b, pos_a, pos_b)
    return PermutationDemo(
        sentence_a, sentence_b, tokens_a, tokens_b, d_model, seed, scheme, kwargs,
        without_pe, with_pe, split_logits(pos_a, seed), split_logits(pos_b, seed), message, repeated, causal,
    )
