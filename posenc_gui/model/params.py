"""The app's current choice of encoding, as one frozen, validated value."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from . import limits
from .schemes import LAYOUTS, SCHEMES, columns, encode


@dataclass(frozen=True)
class EncodingParams:
    """Scheme and sizes shown by every panel.

    ``seq_len`` is also the ``N`` of the normalized scheme. Construct through
    :meth:`validated` (or call :meth:`validate`) to get range checks.
    """

    scheme: str = "sinusoidal"
    seq_len: int = 128
    d_model: int = 512
    base: float = 10000.0
    layout: str = "interleaved"

    def validate(self) -> "EncodingParams":
        """Return a normalized copy, or raise ValueError naming the bad field."""
        if not isinstance(self.scheme, str) or self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}; got {limits.shown(self.scheme)}")
        seq_len = limits.check_int("seq_len", self.seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
        d_model = limits.check_int("d_model", self.d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
        base = limits.check_base(self.base)
        if not isinstance(self.layout, str) or self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {limits.shown(self.layout)}")
        return replace(self, seq_len=seq_len, d_model=d_model, base=base)

    @classmethod
    def validated(cls, **values) -> "EncodingParams":
        """Build from keyword values (unknown keys are an error) and validate."""
        names = {f.name for f in fields(cls)}
        unknown = set(values) - names
        if unknown:
            raise ValueError(f"unknown parameter {sorted(unknown)[0]!r}; known: {', '.join(sorted(names))}")
        return cls(**values).validate()

    def scheme_kwargs(self) -> dict:
        """Keyword parameters that apply to this scheme, for :func:`encode`."""
        available = {"base": self.base, "layout": self.layout, "length": self.seq_len}
        return {name: available[name] for name in SCHEMES[self.scheme].parameters}

    def positions(self) -> np.ndarray:
        """``0, 1, …, seq_len − 1`` as float64."""
        return np.arange(self.seq_len, dtype=np.float64)

    def encode(self, positions=None, dims=None) -> np.ndarray:
        """``encode`` with these parameters (all positions by default)."""
        pos = self.positions() if positions is None else positions
        return encode(self.scheme, pos, self.d_model, dims=dims, **self.scheme_kwargs())

    def columns(self, dims=None):
        """The :class:`~posenc_gui.model.schemes.Columns` of these parameters."""
        return columns(self.scheme, self.d_model, dims, **self.scheme_kwargs())

    def slug(self) -> str:
        """A short file-name-safe description, e.g. ``sinusoidal_n128_d512_b10000``."""
        parts = [self.scheme, f"n{self.seq_len}", f"d{self.d_model}"]
        if "base" in SCHEMES[self.scheme].parameters:
            parts.append(f"b{self.base:g}")
        if "layout" in SCHEMES[self.scheme].parameters and self.layout != "interleaved":
            parts.append(self.layout)
        return "_".join(parts)


def check_params(params: object) -> EncodingParams:
    """``params`` validated (see :meth:`EncodingParams.validate`); it must be an :class:`EncodingParams`."""
    if not isinstance(params, EncodingParams):
        raise ValueError(f"params must be an EncodingParams, got {limits.shown(params)}")
    return params.validate()
