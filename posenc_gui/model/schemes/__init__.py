"""Positional-encoding schemes, one module each, and :func:`encode`.

Every scheme maps a 1-D array of non-negative positions (integers or not) to
a ``(len(positions), d_model)`` float64 array. A scheme module defines one
:class:`Scheme` named ``SCHEME``; the registry imports every module of this
package (those not starting with ``_``), so adding a scheme is adding a
module. An analytic scheme describes each output dimension by a
:class:`Columns` entry (sin, cos or linear of ``pos / divisor``): the same
description gives the value, the formula shown on hover and the wavelength,
so the three can never disagree. Any other scheme gives its table.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from ..core import limits
from ..core.specs import ParamSpec
from ._core import FAMILIES, Buckets, Columns, Preset, Rotation, Scheme


_REGISTRY: dict[str, Scheme] = {}
_OPTION_SPECS: dict[str, ParamSpec] = {}

#: The schemes by key, in the order the app lists them (a live view of the registry).
SCHEMES: Mapping[str, Scheme] = MappingProxyType(_REGISTRY)
#: Every user-set parameter of any scheme, by name: a name means the same in every scheme that has it.
OPTION_SPECS: Mapping[str, ParamSpec] = MappingProxyType(_OPTION_SPECS)


def register(new: Scheme) -> None:
    """Add ``new`` to :data:`SCHEMES` (in its ``order``) and its options to :data:`OPTION_SPECS`.

    Every module of this package registers its ``SCHEME`` on import; a
    notebook or a plug-in may register more. Widgets, flags and menus built
    afterwards include it.

    Raises
    ------
    ValueError
        When the key is taken, or an option's name is declared differently by another scheme.
    """
    if not isinstance(new, Scheme):
        raise ValueError(f"a scheme must be a Scheme, got {limits.shown(new)}")
    if new.key in _REGISTRY:
        raise ValueError(f"a scheme named {new.key!r} is registered already")
    for spec in new.options:
        if _OPTION_SPECS.get(spec.name, spec) != spec:
            raise ValueError(f"{new.key}: the parameter {spec.name!r} differs from another scheme's of that name")
    ordered = sorted([*_REGISTRY.values(), new], key=lambda s: (s.order, s.key))
    _REGISTRY.clear()
    _REGISTRY.update((s.key, s) for s in ordered)
    _collect_options()


def _collect_options() -> None:
    """Rebuild :data:`OPTION_SPECS` in the schemes' order, each scheme's parameters in its own order."""
    _OPTION_SPECS.clear()
    for listed in _REGISTRY.values():
        for spec in listed.options:
            _OPTION_SPECS.setdefault(spec.name, spec)


def unregister(key: str) -> Scheme:
    """Remove and return the scheme ``key`` (and the options no other scheme has)."""
    removed = scheme(key)
    del _REGISTRY[key]
    _collect_options()
    return removed


for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        register(importlib.import_module(f"{__name__}.{_module.name}").SCHEME)


def scheme(key: object) -> Scheme:
    """The scheme ``key``.

    Raises
    ------
    ValueError
        Listing the schemes, for an unknown key.
    """
    try:
        return SCHEMES[key]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}; got {limits.shown(key)}") from None


def last_position(key: str, **params) -> float:
    """The last position the scheme ``key`` encodes with ``params``: ``limits.MAX_POSITION``, or the last row
    of a finite table (:attr:`Scheme.sizes`: a table read from a model file); ValueError as :func:`encode`."""
    info = scheme(key)
    if info.sizes is None:
        return limits.MAX_POSITION
    names = {spec.name for spec in info.options}
    options = info.check({name: value for name, value in params.items() if name in names}, info.options)
    return float(info.sizes(**options)[0] - 1)


def presets() -> list[tuple[Scheme, Preset]]:
    """Every scheme's presets, in the schemes' order."""
    return [(info, preset) for info in SCHEMES.values() for preset in info.presets]


def find_preset(name: str) -> tuple[Scheme, Preset]:
    """The preset called ``name`` (its :attr:`Preset.name` or its full label, case ignored) and its scheme.

    Raises
    ------
    ValueError
        Naming the presets, for a name that is none of them.
    """
    wanted = " ".join(str(name).split()).casefold()
    for info, preset in presets():
        if wanted in (preset.name.casefold(), preset.label.casefold()):
            return info, preset
    names = ", ".join(repr(preset.name) for _, preset in presets())
    raise ValueError(f"preset must be one of {names}; got {limits.shown(name)}")


def _checked(key: str, d_model: int, dims: Any, params: dict) -> tuple[Scheme, int, np.ndarray, dict]:
    info = scheme(key)
    options = info.check(params)
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    dims = np.arange(d_model) if dims is None else limits.check_dims(dims, d_model)
    return info, d_model, dims, options


def columns(scheme: str, d_model: int, dims: np.ndarray | None = None, **params) -> Columns:
    """Describe the requested output dimensions of ``scheme``.

    Parameters
    ----------
    scheme : str
        A key of :data:`SCHEMES`.
    d_model : int
        Model dimension, in ``MIN_D_MODEL … MAX_D_MODEL``.
    dims : array of int, optional
        Dimensions to describe; all of ``range(d_model)`` by default.
    **params
        The scheme's parameters (its ``params`` specs).

    Returns
    -------
    Columns
    """
    info, d_model, dims, options = _checked(scheme, d_model, dims, params)
    if info.columns is None:
        raise ValueError(f"scheme {info.key!r} is a table without analytic columns (sin, cos, linear terms)")
    return info.columns(dims, d_model, **options)


def encode(scheme: str, positions, d_model: int, *, dims=None, **params) -> np.ndarray:
    """Positional encodings of ``positions`` under ``scheme``.

    Parameters
    ----------
    scheme : str
        A key of :data:`SCHEMES`.
    positions : array_like
        1-D, finite, non-negative positions; need not be integers or sorted,
        so a view can evaluate only the positions it shows.
    d_model : int
        Model dimension.
    dims : array_like of int, optional
        Evaluate only these dimensions (columns); all by default.
    **params
        The scheme's parameters (its ``params`` specs; defaults where
        omitted), e.g. ``base`` and ``layout`` for ``sinusoidal``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(positions), len(dims))``.

    Raises
    ------
    ValueError
        For an unknown scheme or parameter, or a value out of its range; the
        message names the parameter and the allowed range.
    """
    info, d_model, dims, options = _checked(scheme, d_model, dims, params)
    if info.columns is None and info.table is None:
        raise ValueError(f"scheme {info.key!r} gives a {info.family}, not a table of positions × dimensions")
    width = max(dims.size, 1)
    pos = limits.check_positions(
        positions, limit=limits.MAX_ENCODE_ELEMENTS // width,
        why=f" × {width:,} dimensions (encode's limit is {limits.MAX_ENCODE_ELEMENTS:,} values; sample them)",
    )
    if info.columns is None:
        return info.table(pos, dims, d_model, **options)
    return _evaluate(info.columns(dims, d_model, **options), pos)


def _evaluate(cols: Columns, pos: np.ndarray) -> np.ndarray:
    out = np.empty((pos.size, cols.kind.size), dtype=np.float64)
    previous_divisor, angle = None, None
    for kind, func in (("sin", np.sin), ("cos", np.cos), ("linear", None)):
        index = np.flatnonzero(cols.kind == kind)
        if index.size == 0:
            continue
        divisor = cols.divisor[index]
        # The sin and cos columns of the sinusoidal scheme share their
        # divisors: the same quotient serves both (bit for bit).
        if previous_divisor is None or not np.array_equal(divisor, previous_divisor):
            angle = pos[:, None] / divisor[None, :]
            previous_divisor = divisor
        values = angle if func is None else func(angle)
        if index.size == cols.kind.size:
            out[...] = values
        else:
            out[:, _as_slice(index)] = values
    return out


def _as_slice(index: np.ndarray) -> slice | np.ndarray:
    """``index`` as a slice when it is evenly spaced (strided copies beat fancy indexing)."""
    if index.size == 1:
        return slice(int(index[0]), int(index[0]) + 1)
    step = int(index[1] - index[0])
    if step > 0 and np.all(np.diff(index) == step):
        return slice(int(index[0]), int(index[-1]) + 1, step)
    return index


def wavelengths(scheme: str, d_model: int, dims=None, **params) -> np.ndarray:
    """Wavelength (period in positions) of each dimension; ``inf`` if not periodic."""
    info, d_model, dims, options = _checked(scheme, d_model, dims, params)
    if info.columns is not None:
        cols = info.columns(dims, d_model, **options)
        return np.where(cols.kind == "linear", np.inf, 2.0 * math.pi * cols.divisor)
    if info.periods is None:
        return np.full(dims.size, np.inf)
    return info.periods(dims, d_model, **options)


def formula_term(scheme: str, d_model: int, dim: int, **params) -> str:
    """The formula of dimension ``dim``, e.g. ``"sin(pos / 10000^(2·3/512))"``."""
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    dim = limits.check_int("dim", dim, 0, d_model - 1)
    return formula_terms(scheme, d_model, np.array([dim]), **params)[0]


def formula_terms(scheme: str, d_model: int, dims, **params) -> tuple[str, ...]:
    """:func:`formula_term` of each of ``dims``, the scheme's columns described once for all of them.

    (The waveforms label their five curves at every step: one call for each
    described the columns and checked the options five times.)
    """
    info, d_model, dims, options = _checked(scheme, d_model, dims, params)
    if info.columns is not None:
        described = info.columns(dims, d_model, **options)
        return tuple(described.label(j) for j in range(dims.size))
    return tuple(info.formula if info.term is None else info.term(int(dim), d_model, **options) for dim in dims)
