"""The app's current choice of encoding, as one frozen, validated value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from . import limits
from ..schemes import SCHEMES, Scheme, columns, encode, find_preset, scheme
from .specs import Options, ParamSpec

#: The sizes every scheme has (the scheme's own parameters are its ``options``).
SEQ_LEN = ParamSpec("seq_len", "int", 128, "positions N", "Number of positions shown, 0 … N − 1.",
                    low=limits.MIN_SEQ_LEN, high=limits.MAX_SEQ_LEN, log=True)
#: The d_model of a rotation scheme (RoPE, xPos), where it is an attention head's dimension: 64–128 in every preset.
HEAD_DIM_DEFAULT = 128
D_MODEL = ParamSpec("d_model", "int", 512, "d_model",
                    "Model dimension: the width of each position's vector; for RoPE and xPos the attention head's "
                    f"dimension, {HEAD_DIM_DEFAULT} unless given.",
                    low=limits.MIN_D_MODEL, high=limits.MAX_D_MODEL, log=True)
SIZE_SPECS = (SEQ_LEN, D_MODEL)
#: The fields every scheme has.
FIELDS = ("scheme", "seq_len", "d_model")


def default_d_model(key: str) -> int:
    """The d_model scheme ``key`` starts with when none is given: :data:`HEAD_DIM_DEFAULT` for a rotation
    (RoPE, xPos; d_model is the head dimension there), else ``D_MODEL.default``."""
    return HEAD_DIM_DEFAULT if scheme(key).family == "rotation" else D_MODEL.default


@dataclass(frozen=True)
class EncodingParams:
    """Scheme, sizes and the scheme's options, shown by every panel.

    ``options`` holds exactly the chosen scheme's user-set parameters
    (:attr:`Scheme.options`), checked by their specs; a parameter tied to a
    field (the normalized scheme's ``length`` is ``seq_len``) is passed from
    that field. Construct through :meth:`validated` (or call :meth:`validate`)
    to get range checks and defaults.
    """

    scheme: str = "sinusoidal"
    seq_len: int = 128
    d_model: int = 512
    options: Mapping[str, Any] = field(default_factory=Options)

    @property
    def info(self) -> Scheme:
        """The chosen :class:`~posenc_gui.model.schemes.Scheme`."""
        return scheme(self.scheme)

    def __post_init__(self) -> None:
        # Unchecked construction still gives a hashable value with the scheme's defaults filled in.
        if isinstance(self.options, Mapping) and isinstance(self.scheme, str) and self.scheme in SCHEMES:
            defaults = {spec.name: spec.default for spec in SCHEMES[self.scheme].options}
            object.__setattr__(self, "options", Options({**defaults, **self.options}))

    def validate(self) -> "EncodingParams":
        """Return a normalized copy (options checked, defaults filled), or raise ValueError naming the bad field."""
        info = scheme(self.scheme)
        seq_len, d_model = SEQ_LEN.check(self.seq_len), D_MODEL.check(self.d_model)
        if not isinstance(self.options, Mapping):
            raise ValueError(f"options must be a mapping of the scheme's parameters, got {limits.shown(self.options)}")
        options = Options(info.check(self.options, info.options))
        if info.sizes is not None:
            positions, width = info.sizes(**options)
            if seq_len > positions:
                raise ValueError(f"seq_len must be at most {positions:,}: the table has {positions:,} positions, "
                                 f"got {seq_len:,}")
            if d_model != width:
                raise ValueError(f"d_model must be {width:,}, the width of the table, got {d_model:,}")
        if info.check_together is not None:
            info.check_together(d_model, **options)
        return replace(self, seq_len=seq_len, d_model=d_model, options=options)

    @classmethod
    def validated(cls, **values: Any) -> "EncodingParams":
        """Build from flat keyword values — ``scheme``, ``seq_len``, ``d_model`` and the scheme's options — and validate.

        Without ``d_model``, the scheme's :func:`default_d_model` (128, the head dimension, for RoPE and xPos).

        Raises
        ------
        ValueError
            For a value out of range, or a name that is no field and no option of the scheme.
        """
        fields = {name: values.pop(name) for name in FIELDS if name in values}
        if "d_model" not in fields and isinstance(fields.get("scheme"), str) and fields["scheme"] in SCHEMES:
            fields["d_model"] = default_d_model(fields["scheme"])
        options = dict(values.pop("options", None) or {})
        options.update(values)
        return cls(**fields, options=Options(options)).validate()

    @classmethod
    def from_preset(cls, name: str) -> "EncodingParams":
        """The validated parameters of the preset called ``name`` (its short name or label, see
        :func:`~posenc_gui.model.find_preset`); the options it does not set at their defaults.

        Raises
        ------
        ValueError
            Naming the presets, for a name that is none of them.
        """
        info, preset = find_preset(name)
        return cls.validated(scheme=info.key, seq_len=preset.seq_len, d_model=preset.d_model, **preset.options)

    def replaced(self, remembered: Mapping[str, Any] | None = None, *, fit_sizes: bool = False,
                 **changes: Any) -> "EncodingParams":
        """A validated copy with ``changes`` (fields or options, flat).

        On a change of scheme, the new scheme's options take the value of
        the same name from these options, then from ``remembered``, then
        their default; a remembered value the new scheme refuses is dropped.
        A d_model not in ``changes`` and at the old scheme's :func:`default_d_model` (one the user has not
        set) becomes the new scheme's: 512 → 128 from sinusoidal to RoPE, and back.
        With ``fit_sizes``, a scheme whose table is finite (:attr:`Scheme.sizes`)
        takes its width as ``d_model`` and at most its positions as ``seq_len``
        unless ``changes`` give them (choosing a model's table in the app).

        Raises
        ------
        ValueError
            Naming the parameter, for a value out of its range or an option the scheme does not take.
        """
        fields = {name: changes.pop(name) for name in FIELDS if name in changes}
        target = scheme(fields.get("scheme", self.scheme))
        if ("d_model" not in fields and target.key != self.scheme and self.scheme in SCHEMES
                and self.d_model == default_d_model(self.scheme)):
            fields["d_model"] = default_d_model(target.key)
        carried = {**self.carried_options(target.key, remembered), **changes}
        if fit_sizes and target.sizes is not None:
            try:
                positions, width = target.sizes(**target.check(carried, target.options))
            except ValueError:
                pass  # validate names what is wrong
            else:
                fields.setdefault("d_model", width)
                fields.setdefault("seq_len", min(fields.get("seq_len", self.seq_len), positions))
        return replace(self, **fields, options=Options(carried)).validate()

    def carried_options(self, key: str, remembered: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The options the scheme ``key`` takes from these options, then from ``remembered`` (those its specs
        accept), as :meth:`replaced` carries them on a change of scheme; the others are left to their defaults."""
        carried = {}
        for spec in scheme(key).options:
            for source in (self.options, remembered or {}):
                if spec.name in source:
                    try:
                        carried[spec.name] = spec.check(source[spec.name])
                        break
                    except ValueError:
                        continue
        return carried

    def as_dict(self) -> dict[str, Any]:
        """Flat ``{scheme, seq_len, d_model, **options}``, as :meth:`validated` takes it (JSON-ready)."""
        return {"scheme": self.scheme, "seq_len": self.seq_len, "d_model": self.d_model, **self.options}

    def scheme_kwargs(self) -> dict[str, Any]:
        """Keyword parameters of this scheme, for :func:`encode`: the options and the tied parameters."""
        tied = {spec.name: getattr(self, spec.tied_to) for spec in self.info.params if spec.tied_to}
        return {**self.options, **tied}

    def positions(self) -> np.ndarray:
        """``0, 1, …, seq_len − 1`` as float64."""
        return np.arange(self.seq_len, dtype=np.float64)

    def encode(self, positions=None, dims=None) -> np.ndarray:
        """``encode`` with these parameters (all positions by default)."""
        pos = self.positions() if positions is None else positions
        return encode(self.scheme, pos, self.d_model, dims=dims, **self.scheme_kwargs())

    def columns(self, dims=None):
        """The :class:`~posenc_gui.model.schemes.Columns` of these parameters (analytic schemes only)."""
        return columns(self.scheme, self.d_model, dims, **self.scheme_kwargs())

    def title(self) -> str:
        """The scheme, sizes and every option, for a figure's title.

        ``"sinusoidal: 128 positions × d_model 512, base 10000, interleaved"``;
        only the options the scheme has ("naive, base 10000" would mislead).
        """
        positions = f"{self.seq_len:,} position" + ("" if self.seq_len == 1 else "s")
        parts = [f"{self.scheme}: {positions} × d_model {self.d_model:,}"]
        parts += [spec.title_part(self.options[spec.name]) for spec in self.info.options_in_use(self.options)]
        return ", ".join(part for part in parts if part)

    def slug(self) -> str:
        """A short file-name-safe description, e.g. ``sinusoidal_n128_d512_b10000``."""
        parts = [self.scheme, f"n{self.seq_len}", f"d{self.d_model}"]
        parts += [spec.slug_part(self.options[spec.name]) for spec in self.info.options_in_use(self.options)]
        return "_".join(part for part in parts if part)


def check_params(params: object) -> EncodingParams:
    """``params`` validated (see :meth:`EncodingParams.validate`); it must be an :class:`EncodingParams`."""
    if not isinstance(params, EncodingParams):
        raise ValueError(f"params must be an EncodingParams, got {limits.shown(params)}")
    return params.validate()

