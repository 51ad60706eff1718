"""The permutation demo's words: the figure's title, with how the head sees position and the verdict."""

from __future__ import annotations

import html

from ..model import EncodingParams
from ..model.attention import MAX_LISTED_WORDS, PermutationDemo, word_difference
from ..model.attention.bert_head import RealHeadDemo
from .matrix_items import shorten
from .plotkit import FOREGROUND


def pe_description(params: EncodingParams) -> str:
    """The scheme and the options it uses, as the demo names them ("RoPE, rope_theta 10000, …")."""
    kwargs = params.scheme_kwargs()
    parts = [params.info.label, *(spec.title_part(kwargs[spec.name]) for spec in params.info.params
                                  if spec.applies(kwargs))]  # RoPE's factor only with a scaling type
    return ", ".join(part for part in parts if part)


def figure_title(demo: PermutationDemo, with_position: bool, description: str, d_model: int) -> str:
    """The figure's title: both sentences, how the head sees position, the causal mask, and the verdict."""
    real = isinstance(demo, RealHeadDemo)
    return (
        f"<span style='color:{FOREGROUND}; font-size:10pt'>"
        f"<b>a:</b> {html.escape(shorten(' '.join(demo.tokens_a), 60))} &nbsp; "
        f"<b>b:</b> {html.escape(shorten(' '.join(demo.tokens_b), 60))}<br>"
        f"Shown: {_shown_position(demo, with_position, description, d_model)}{'' if real else f', seed {demo.seed}'}"
        f"<br>{_shown_mask(demo)}"
        f"{figure_verdict(demo, with_position)}</span>"
    )


def figure_verdict(demo: PermutationDemo, with_position: bool) -> str:
    """The comparison in two short lines for the figure (the long form is above the canvas); the line of the
    mode shown (``with_position``) in bold."""
    if not demo.is_permutation:
        return (f"<b>b is not a reordering of a</b> "
                f"({html.escape(word_difference(demo.tokens_a, demo.tokens_b))}): no permutation to compare")
    lines = []
    for shown in (False, True):
        c = demo.comparison(shown)
        label = ((f"With {demo.rotation_name}" if demo.rotates else "With the bias" if demo.biased
                  else "With the position table" if isinstance(demo, RealHeadDemo) else "With position")
                 if shown else "Without position")
        result = "the same rows, permuted" if c.same else "different: the head sees word order"
        text = (f"{label}: max |Z<sub>b</sub> − P Z<sub>a</sub>| = {c.max_abs_diff_output:.2g}, "
                f"max |A<sub>b</sub> − P A<sub>a</sub> P<sup>T</sup>| = {c.max_abs_diff_attention:.2g} → {result}")
        lines.append(f"<b>{text}</b>" if shown == with_position else text)
    mask = demo.without_pe.mask
    if mask is not None:
        seen = ", ".join(f"{html.escape(word)} {a}→{b}" for word, a, b in
                         zip(mask.words[:MAX_LISTED_WORDS], mask.keys_seen_a, mask.keys_seen_b))
        more = " …" if len(mask.words) > MAX_LISTED_WORDS else ""
        first_a, first_b = (html.escape(word) for word in mask.first_words)
        res_a, res_b = mask.first_output_minus_value
        lines.append(
            f"Causal mask, itself positional: keys seen a→b: {seen}{more}; the first word's output is its "
            f"value vector, max |Z[0] − V[0]| = {res_a:.1g} ({first_a}, a), {res_b:.1g} ({first_b}, b)")
    return "<br>".join(lines)


def _last_positions(demo: PermutationDemo) -> str:
    last_a, last_b = len(demo.tokens_a) - 1, len(demo.tokens_b) - 1
    return f"{last_a:,}" if last_a == last_b else f"{last_a:,} (a), {last_b:,} (b)"


def _shown_position(demo: PermutationDemo, with_position: bool, description: str, d_model: int) -> str:
    """The title's line on how the head sees position in the mode shown (``description`` names the scheme,
    ``d_model`` is the window's)."""
    if isinstance(demo, RealHeadDemo):
        table = (f"X = LayerNorm(E + P), P: the position rows {demo.position_offset:,} … "
                 f"{demo.position_offset + max(len(demo.tokens_a), len(demo.tokens_b)) - 1:,}"
                 if with_position else "X = LayerNorm(E), no position table")
        return (f"<b>{html.escape(demo.label())}</b> ({demo.family}; hidden {demo.d_model:,}, "
                f"d<sub>head</sub> = {demo.d_head}, LayerNorm eps {demo.layer_norm_eps:g}); {table}; "
                f"tokens from its tokenizer.json")
    if not with_position:
        return f"X = E, no position; d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}"
    description = html.escape(description)
    if demo.biased:
        return (f"X = E, the logits + the bias of {description} at positions 0 … {_last_positions(demo)}; "
                f"d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}")
    if not demo.rotates:
        return f"X = E + PE, PE: {description}; d<sub>model</sub> = d<sub>k</sub> = {demo.d_model}"
    rotation = demo.with_pe.trace_a.rotation
    assert rotation is not None
    partial = (f", {rotation.rotary_dim} of {demo.d_model} channels turn"
               if rotation.rotary_dim < demo.d_model else "")
    factor = (f", cos and sin × attention factor {rotation.attention_factor:.4g}"
              if rotation.attention_factor != 1.0 else "")
    return (f"X = E, Q and K rotated by {description} at the demo's d<sub>k</sub> = {demo.d_model} (not "
            f"d<sub>model</sub> {d_model:,}){partial}: θ<sub>i</sub> = {rotation.inv_freq[0]:.3g} … "
            f"{rotation.inv_freq[-1]:.3g}{factor}; positions 0 … {_last_positions(demo)}")


def _shown_mask(demo: PermutationDemo) -> str:
    """The title's line on the causal mask ("" without it)."""
    if not demo.causal:
        return ""
    return "<b>Causal mask</b>: word i attends to words 0…i only (grey cells: masked)<br>"
