"""What the app shows of a model file: its learned table as ``learned_file``, its RoPE set-up as ``rope``.

:func:`model_setups` opens a model (:func:`~posenc_gui.model.files.open_model`)
and returns the parameters that show it:

- a learned position table: the ``learned_file`` scheme on that tensor,
  N its length (at most ``limits.MAX_SEQ_LEN``) and d_model its width;
- a RoPE set-up (``rope_config`` in Hugging Face keys, and the pairing of
  the model's code): the ``rope`` scheme with the same options, d_model the
  head dimension and N ``max_position_embeddings`` (at most
  ``limits.MAX_SEQ_LEN``); the trained context L₀ is the config's
  ``original_max_position_embeddings``, or for a type without one (default,
  linear, ntk) ``max_position_embeddings``. The mapping is checked: the scheme's frequencies
  and attention factor (:func:`~posenc_gui.model.rope.rope_frequencies` of
  :func:`~posenc_gui.model.schemes.rope.hf_config`) must equal those of the
  file's config, bit for bit; what the scheme does not model (llama.cpp's
  ``rope_freqs`` divisors, an ``attention_factor`` it would not derive, keys
  Hugging Face does not read) is listed in the setup's notes.

A model with neither has no setup; :meth:`OpenedModel.setup` then names its
2-D tensors, one of which :func:`table_setup` makes the table.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import limits
from .model_file import ModelFile, ModelFileError, TensorInfo
from .model_tables import cached_model, model_table, table_shape, table_tensors
from ..core.params import EncodingParams
from ..rope import RopeConfig, rope_config, rope_frequencies, rope_type

#: Tensors a message names before "and N more".
LISTED_TENSORS = 12
#: N of a RoPE model whose config gives no context length (the rope scheme's default sequence length).
DEFAULT_ROPE_POSITIONS = 4096
#: The keys of a rope_scaling / rope_parameters section that Hugging Face reads for some rope_type.
_SECTION_KEYS = frozenset({
    "rope_type", "type", "factor", "original_max_position_embeddings", "rope_theta", "partial_rotary_factor",
    "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate", "low_freq_factor", "high_freq_factor",
    "short_factor", "long_factor", "attention_factor",
})


@dataclass(frozen=True)
class ModelSetup:
    """One way to show a model: validated parameters, what they show in words, and what they leave out."""

    #: ``"learned table wpe.weight (1,024 × 768)"`` or ``"RoPE (θ 500000, llama3 ×8, head 64, halves)"``.
    label: str
    params: EncodingParams
    #: What of the model these parameters do not reproduce, or assumed (one sentence each).
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpenedModel:
    """A model file and the setups that show it (see the module docstring)."""

    model: ModelFile
    #: The learned table's setup first, then RoPE's; empty for a model with neither.
    setups: tuple[ModelSetup, ...]
    #: Why a setup the model seemed to have could not be made (a table wider than d_model allows …).
    problems: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def tables(self) -> tuple[TensorInfo, ...]:
        """The tensors a user can choose as the table (2-D, of floats)."""
        return table_tensors(self.model)

    def tables_text(self) -> str:
        """The tables as ``"a (64 × 48 F32), b (…) and 3 more"``, or ``"none"``."""
        tables = self.tables
        if not tables:
            return "none"
        shown = [f"{tensor.name} ({' × '.join(f'{n:,}' for n in tensor.shape)} {tensor.dtype})"
                 for tensor in tables[:LISTED_TENSORS]]
        more = len(tables) - len(shown)
        return ", ".join(shown) + (f" and {more:,} more" if more else "")

    def setup(self, scheme: str | None = None, tensor: str | None = None) -> ModelSetup:
        """The setup of ``scheme`` (``learned_file`` or ``rope``), of ``tensor`` as the table, or the first.

        Raises
        ------
        ValueError
            One line: the model has no such setup, or none at all (naming its 2-D tensors).
        """
        if tensor is not None:
            return table_setup(self.model, tensor)
        if not self.setups:
            problems = f" ({'; '.join(self.problems)})" if self.problems else ""
            raise ValueError(f"{self.name} has no learned position table and no RoPE set-up{problems}; choose one "
                             f"of its 2-D tensors as the table (--tensor NAME): {self.tables_text()}")
        if scheme is None:
            return self.setups[0]
        for setup in self.setups:
            if setup.params.scheme == scheme:
                return setup
        has = " and ".join(setup.params.scheme for setup in self.setups)
        raise ValueError(f"{self.name} is shown as {has}, not as {scheme}; --tensor NAME makes one of its 2-D "
                         f"tensors the table ({self.tables_text()})")

    def notes(self, setup: ModelSetup | None = None) -> tuple[str, ...]:
        """The model's notes (an offset applied, NaN found …), the problems, and ``setup``'s own notes."""
        return (*self.model.notes, *self.problems, *(setup.notes if setup else ()))

    def summary(self, setup: ModelSetup) -> str:
        """One paragraph: the model opened, what it is shown as, the other setup, and every note."""
        others = [other for other in self.setups if other is not setup]
        text = f"Opened {self.name} ({self.model.kind}) as {setup.label}."
        for other in others:
            text += (f" It also has {other.label}: open it again to choose it (--scheme {other.params.scheme} on "
                     "the command line).")
        notes = self.notes(setup)
        if notes:
            text += " Notes: " + "; ".join(notes) + "."
        return text


def model_setups(path: str | os.PathLike[str]) -> OpenedModel:
    """Open the model at ``path`` and make its setups (see the module docstring).

    Raises
    ------
    ModelFileError
        As :func:`~posenc_gui.model.files.open_model`: naming the file and what is wrong with it.
    """
    model = cached_model(path)
    setups, problems = [], []
    if model.position_table_name is not None:
        try:
            setups.append(table_setup(model, model.position_table_name))
        except ValueError as error:
            problems.append(f"its position table is not shown: {error}")
    if model.rope_config is not None:
        try:
            setups.append(rope_setup(model))
        except ValueError as error:
            problems.append(f"its RoPE set-up is not shown: {error}")
    return OpenedModel(model, tuple(setups), tuple(problems))


def table_setup(model: ModelFile, tensor: str) -> ModelSetup:
    """The ``learned_file`` parameters of ``model``'s tensor ``tensor``: N its length (at most
    ``limits.MAX_SEQ_LEN``), d_model its width; ValueError naming what does not fit."""
    try:
        positions, width = table_shape(model, tensor)
        if tensor == model.position_table_name:
            model_table(model, tensor)  # read on opening: refused here when it holds NaN or infinity
    except ModelFileError as error:
        raise ValueError(f"tensor: {error}") from None
    params = EncodingParams.validated(scheme="learned_file", model_path=os.fspath(model.path), tensor=tensor,
                                      seq_len=min(positions, limits.MAX_SEQ_LEN), d_model=width)
    notes = []
    if positions > limits.MAX_SEQ_LEN:
        notes.append(f"N is {limits.MAX_SEQ_LEN:,}, the most the app shows, of the table's {positions:,} positions")
    return ModelSetup(f"learned table {tensor} ({positions:,} × {width:,})", params, tuple(notes))


# ----------------------------------------------------------------- RoPE
def _section(config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``config`` with one rope_parameters / rope_scaling section: a per-layer-type one (Gemma 3) gives
    its ``full_attention`` entry, or its first; notes say which."""
    config, notes = dict(config), []
    for key in ("rope_parameters", "rope_scaling"):
        section = config.get(key)
        if isinstance(section, Mapping) and section and all(isinstance(v, Mapping) for v in section.values()):
            chosen = "full_attention" if "full_attention" in section else next(iter(section))
            config[key] = dict(section[chosen])
            others = [name for name in section if name != chosen]
            notes.append(f"{key} has one set-up per layer type: {chosen}'s is shown"
                         + (f" ({', '.join(others)} not)" if others else ""))
    return config, notes


def _rotary_share(rope: RopeConfig) -> float:
    """The partial_rotary_factor that gives ``rope.rotary_dim`` under Hugging Face's int(head_dim · factor)."""
    factor = rope.rotary_dim / rope.head_dim
    if int(rope.head_dim * factor) < rope.rotary_dim:
        factor = math.nextafter(factor, math.inf)
    return factor


def rope_options(config: Mapping[str, Any], pairing: str) -> tuple[dict[str, Any], RopeConfig]:
    """The ``rope`` scheme's options that compute what the Hugging Face ``config`` computes, and its RopeConfig.

    Raises
    ------
    ValueError
        As :func:`~posenc_gui.model.rope.rope_config`, naming the config key.
    """
    rope = rope_config(config)
    options: dict[str, Any] = {"rope_theta": rope.rope_theta, "partial_rotary_factor": _rotary_share(rope),
                               "pairing": pairing, "rope_type": rope.rope_type}
    scaling = rope.scaling
    if "factor" in scaling:
        options["factor"] = scaling["factor"]
    from ..schemes.rope import MAX_CONTEXT

    kind = rope_type(rope.rope_type)
    if kind.context == "max_position":  # the scheme's L₀ is dynamic NTK's max_position_embeddings (hf_config)
        options["original_max_position_embeddings"] = rope.max_position_embeddings
    elif rope.original_max_position_embeddings is not None:
        options["original_max_position_embeddings"] = rope.original_max_position_embeddings
    elif rope.max_position_embeddings is not None and 2 <= rope.max_position_embeddings <= MAX_CONTEXT:
        # default, linear and ntk have no L₀ of their own: the context the config declares (a GGUF's
        # {arch}.context_length) is the trained context the Context extension panel measures against
        options["original_max_position_embeddings"] = rope.max_position_embeddings
    options.update(kind.options_from(rope))
    return options, rope


def rope_setup(model: ModelFile) -> ModelSetup:
    """The ``rope`` parameters of ``model``'s RoPE set-up (see the module docstring); ValueError when the
    set-up is one the scheme cannot take, naming the config key."""
    from ..schemes.rope import hf_config

    config, notes = _section(model.rope_config)
    pairing = model.pairing
    if pairing is None:
        pairing = "halves"
        notes.append("how this architecture pairs RoPE dimensions is not known: halves (Hugging Face's "
                     "rotate_half) is assumed")
    options, rope = rope_options(config, pairing)
    notes += rope.warnings  # what Hugging Face accepts with a warning, computed as it computes it
    if rope.max_position_embeddings is not None:
        positions = rope.max_position_embeddings
    elif rope.original_max_position_embeddings is not None:
        positions = rope.original_max_position_embeddings
    else:
        positions = DEFAULT_ROPE_POSITIONS
        notes.append(f"the config gives no max_position_embeddings: N is {DEFAULT_ROPE_POSITIONS:,}")
    if positions > limits.MAX_SEQ_LEN:
        notes.append(f"N is {limits.MAX_SEQ_LEN:,}, the most the app shows, of its {positions:,} positions")
    params = EncodingParams.validated(scheme="rope", seq_len=min(positions, limits.MAX_SEQ_LEN),
                                      d_model=rope.head_dim, **options)
    notes += _not_modelled(config, model.rope_config, params, hf_config)
    scaling = f", {rope.rope_type} ×{rope.scaling['factor']:g}" if "factor" in rope.scaling else ""
    label = f"RoPE (θ {rope.rope_theta:g}{scaling}, head {rope.head_dim}, {pairing})"
    return ModelSetup(label, params, tuple(notes))


def _not_modelled(config: Mapping[str, Any], original: Mapping[str, Any], params: EncodingParams,
                  hf_config) -> list[str]:
    """What of ``config`` the rope scheme at ``params`` does not compute as the model does."""
    notes = []
    if original.get("freq_factors") is not None:  # GGUF's rope_freqs tensor (ModelFile.rope_config)
        notes.append("the file's rope_freqs divisors (llama.cpp's freq_factors, one per pair) are not applied "
                     "by the rope scheme: its frequencies are those of the config keys alone")
    for key in ("rope_parameters", "rope_scaling"):
        section = config.get(key)
        unknown = sorted(set(section) - _SECTION_KEYS) if isinstance(section, Mapping) else []
        if unknown:
            notes.append(f"{key} keys not used (Hugging Face does not read them either): {', '.join(unknown)}")
    ours = rope_frequencies(hf_config(params.d_model, **params.options), seq_len=params.seq_len)
    theirs = rope_frequencies(config, seq_len=params.seq_len)
    if not np.array_equal(ours[0], theirs[0]):
        notes.append("the rope scheme's frequencies differ from the config's (largest relative difference "
                     f"{float(np.max(np.abs(ours[0] / theirs[0] - 1))):.3g})")
    if ours[1] != theirs[1]:
        notes.append(f"the config's attention_factor {theirs[1]:.12g} is not the rope scheme's {ours[1]:.12g}: "
                     "the rotation is shown without it")
    return notes


def describe_model(path: str) -> str:
    """The model at ``path`` in a sentence: its name, kind, tensor count and notes (or why it does not open)."""
    try:
        model = cached_model(path)
    except ModelFileError as error:
        return one_line(error)
    text = f"{model.name} ({model.kind}, {len(model.tensors):,} tensor{'s' if len(model.tensors) != 1 else ''})"
    return text + (": " + "; ".join(model.notes) + "." if model.notes else ".")


def one_line(error: BaseException) -> str:
    """``error``'s message on one line; indented code lines (how to convert a pickle) joined by ``; ``."""
    head, *code = str(error).split("\n")
    lines = [line.strip() for line in code if line.strip()]
    return " ".join(head.split()) + (" " + "; ".join(lines) if lines else "")
