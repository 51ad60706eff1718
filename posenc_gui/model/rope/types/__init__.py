"""RoPE scaling types, one module each, in the shape of Hugging Face's ``ROPE_INIT_FUNCTIONS``.

A type module defines one :class:`RopeType` named ``ROPE_TYPE``; this
package imports every module of its own (those not starting with ``_``)
and registers it, so adding a type is adding a module (or calling
:func:`register` from a notebook or a test). Everything that depends on
the type asks it: reading a config (:func:`~posenc_gui.model.rope.rope_config`),
the inverse frequencies and bands, the float32 path of the Precision panel,
the ``rope`` scheme's ``rope_type`` choice and parameters, the Context
extension panel's methods, a model file's set-up.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ...core import limits
from ...core.specs import ParamSpec
from ..config import RopeBands, RopeConfig, ScalingSection

#: What a type's trained context L₀ is: none, ``original_max_position_embeddings`` (defaulting to
#: ``max_position_embeddings``, HF's ``standardize_rope_params``), or ``max_position_embeddings`` (dynamic NTK).
CONTEXTS = ("none", "original", "max_position")


def _no_parameters(section: ScalingSection) -> tuple[dict[str, object], float]:
    return {}, 1.0


@dataclass(frozen=True)
class RopeType:
    """A RoPE scaling type: what Hugging Face's ``ROPE_INIT_FUNCTIONS[name]`` computes, and how the app shows it.

    Parameters
    ----------
    name : str
        HF's ``rope_type``.
    summary : str
        A few words for the scaling choice's help, naming the type ("position interpolation (linear)").
    order : int
        Where the app lists it (ascending).
    inv_freq : callable
        ``(rope, unscaled, seq_len) -> ndarray``: θ_i in float64 (``unscaled``
        the default θ_i of ``rope``; ``seq_len`` None or the sequence length).
    bands : callable
        ``(rope, unscaled) -> RopeBands``: how the type treats each pair.
    read : callable, optional
        ``(section) -> (scaling, attention_factor)``: the type's parameters
        under HF's names, defaults filled in and checked (ValueError naming
        ``{source}.{key}``), HF's warnings appended to ``section.warnings``.
        Without it: no parameters, attention factor 1.
    float32_inv_freq : callable, optional
        ``(rope, seq_len) -> ndarray`` of float32: HF's float32 operations in
        order (the Precision panel). None: :attr:`float32_refusal` says why not.
    float32_refusal : str
        Why the Precision panel does not offer the type.
    params : tuple of ParamSpec
        The type's own parameters in the ``rope`` scheme (shown when it is chosen).
    uses_factor : bool
        It scales by ``factor`` (every type but the default).
    context : {"none", "original", "max_position"}
        Its trained context L₀ (:data:`CONTEXTS`).
    uses_sequence_length : bool
        Its frequencies depend on the sequence length (dynamic NTK, LongRoPE).
    check_rotary : callable, optional
        ``(description, rotary_dim) -> None``: ValueError for a rotary dimension
        HF fails on with this type (``description`` names how it was computed).
    divisor_ulps_per_factor : float
        ULPs of 1/θ_i beyond RoPE's default, per unit of ``factor``, where the
        type blends or rebases θ_i (measured against 60-digit references).
    hf_scaling : callable, optional
        ``(options, pairs) -> dict``: the type's own ``rope_scaling`` entries
        from the scheme's options; by default each of :attr:`params` by name.
    scheme_options : callable, optional
        ``(rope) -> dict``: the scheme's options from a config's scaling; by
        default each of :attr:`params` found in ``rope.scaling``.
    gguf_name : str, optional
        llama.cpp's ``{arch}.rope.scaling.type`` for it; None when GGUF has none.
    gguf_keys : Mapping
        llama.cpp's ``{arch}.rope.scaling.KEY`` → (HF's key, True for a count, False for a number).
    """

    name: str
    summary: str
    order: int
    inv_freq: Callable[[RopeConfig, np.ndarray, int | None], np.ndarray]
    bands: Callable[[RopeConfig, np.ndarray], RopeBands]
    read: Callable[[ScalingSection], tuple[dict[str, object], float]] = _no_parameters
    float32_inv_freq: Callable[[RopeConfig, int | None], np.ndarray] | None = None
    float32_refusal: str = ""
    params: tuple[ParamSpec, ...] = ()
    uses_factor: bool = True
    context: str = "none"
    uses_sequence_length: bool = False
    check_rotary: Callable[[str, int], None] | None = None
    divisor_ulps_per_factor: float = 0.0
    hf_scaling: Callable[[Mapping[str, Any], int], dict[str, Any]] | None = None
    scheme_options: Callable[[RopeConfig], dict[str, Any]] | None = None
    gguf_name: str | None = None
    gguf_keys: Mapping[str, tuple[str, bool]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.context not in CONTEXTS:
            raise ValueError(f"{self.name}: context must be one of {', '.join(CONTEXTS)}; got {self.context!r}")
        if (self.float32_inv_freq is None) == (not self.float32_refusal):
            raise ValueError(f"{self.name}: declare its float32 path, or why Precision does not offer it")

    def scaling_entries(self, options: Mapping[str, Any], pairs: int) -> dict[str, Any]:
        """The type's own ``rope_scaling`` entries for the scheme's ``options`` (``pairs`` rotary pairs)."""
        if self.hf_scaling is not None:
            return self.hf_scaling(options, pairs)
        return {spec.name: options[spec.name] for spec in self.params}

    def options_from(self, rope: RopeConfig) -> dict[str, Any]:
        """The scheme's options of the type's own parameters, from a config's ``rope``."""
        if self.scheme_options is not None:
            return self.scheme_options(rope)
        return {spec.name: rope.scaling[spec.name] for spec in self.params if spec.name in rope.scaling}


_REGISTRY: dict[str, RopeType] = {}
_LISTENERS: list[Callable[[], None]] = []
#: The scaling types by name, in the order the app lists them (a live view of the registry).
ROPE_TYPES: Mapping[str, RopeType] = MappingProxyType(_REGISTRY)


def register(new: RopeType) -> None:
    """Add ``new`` to :data:`ROPE_TYPES` (in its ``order``) and tell the listeners (the ``rope`` scheme).

    Raises
    ------
    ValueError
        When the name is taken, or ``new`` is not a RopeType.
    """
    if not isinstance(new, RopeType):
        raise ValueError(f"a RoPE scaling type must be a RopeType, got {limits.shown(new)}")
    if new.name in _REGISTRY:
        raise ValueError(f"a RoPE scaling type named {new.name!r} is registered already")
    ordered = sorted([*_REGISTRY.values(), new], key=lambda t: (t.order, t.name))
    _REGISTRY.clear()
    _REGISTRY.update((t.name, t) for t in ordered)
    _changed()


def unregister(name: str) -> RopeType:
    """Remove and return the type ``name`` and tell the listeners."""
    removed = rope_type(name)
    del _REGISTRY[name]
    _changed()
    return removed


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener()`` after every :func:`register` and :func:`unregister`."""
    _LISTENERS.append(listener)


def _changed() -> None:
    for listener in _LISTENERS:
        listener()


def rope_type(name: object) -> RopeType:
    """The type ``name``; ValueError listing the types for another name."""
    try:
        return ROPE_TYPES[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"rope_type must be one of {', '.join(ROPE_TYPES)}; got {limits.shown(name)}") from None


for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        register(importlib.import_module(f"{__name__}.{_module.name}").ROPE_TYPE)
