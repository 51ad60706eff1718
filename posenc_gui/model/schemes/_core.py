"""What a scheme module declares: :class:`Scheme`, its analytic :class:`Columns` and its :class:`Preset`\\ s."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..core.specs import ParamSpec

#: The kinds of positional information a scheme gives a transformer.
FAMILIES = ("table", "rotation", "bias")
#: What a panel can ask of a scheme (:attr:`Scheme.provides`), in words for the panel that lacks it.
CAPABILITIES = {
    "table": "a table of positions × dimensions added to the token embeddings",
    "columns": "analytic sin, cos and linear terms of the position in each dimension",
    "rotation": "a rotation of the queries and keys",
    "angles": "the cos and sin of a rotation's angle at each position (the rotation as a table)",
    "bias": "a bias added to the attention logits",
}


@dataclass(frozen=True)
class Columns:
    """What each requested output dimension of an analytic scheme holds.

    ``kind[j]`` is ``"sin"``, ``"cos"`` or ``"linear"``; the value is
    ``sin(pos / divisor[j])``, ``cos(pos / divisor[j])`` or ``pos / divisor[j]``.
    ``label(j)`` is the human-readable formula term (built on demand: a view
    needs one label at a time, ``encode`` needs none). Knowing the columns,
    the analyses are exact (wavelengths, value bands between samples, T_k,
    uniqueness over the whole range); a scheme without them is a plain table.
    """

    kind: np.ndarray  # dtype '<U6'
    divisor: np.ndarray  # float64
    label: Callable[[int], str]
    #: ULPs of the divisor's relative error beyond one ``pow`` (RoPE's 1/θ_i after its scaling's operations).
    divisor_extra_ulps: float = 0.0


@dataclass(frozen=True, eq=False)
class Rotation:
    """How a rotation scheme turns a head's queries and keys (what :attr:`Scheme.rotation` returns).

    Pair i (channels :func:`~posenc_gui.model.rope.rope_pairs` of ``pairing``) of
    a query at m and a key at n turns by ``m·θ_i`` and ``n·θ_i``, so pair i of
    their logit is ``attention_factor² · ζ_i^((m − n)/scale_base) · [q·R((n − m)θ_i)·k]_i``;
    the channels past ``2·len(inv_freq)`` pass unrotated and unscaled.

    Attributes
    ----------
    inv_freq : ndarray
        θ_i, one per rotary pair.
    attention_factor : float
        Multiplies cos and sin (Hugging Face's ``attention_scaling``): the logit scales by its square.
    pairing : {"halves", "interleaved"}
    zeta : ndarray or None
        A scale per pair (xPos's ζ_i): the query at m is multiplied by
        ζ_i^(m/scale_base), the key at n by ζ_i^(−n/scale_base); None without one.
    scale_base : float
        The distance over which pair i's scale changes by ζ_i.
    farthest_after : float
        The largest distance of a key after its query whose scale float64 holds (inf without a scale).
    """

    inv_freq: np.ndarray
    attention_factor: float = 1.0
    pairing: str = "halves"
    zeta: np.ndarray | None = None
    scale_base: float = 1.0
    farthest_after: float = math.inf

    @property
    def rotary_dim(self) -> int:
        """The rotated channels: two per frequency."""
        return 2 * self.inv_freq.size

    @property
    def causal(self) -> bool:
        """A scale per pair grows without bound for keys after the query: its models are causal (xPos's decoders),
        and only keys at or before the query are measured."""
        return self.zeta is not None

    def decay(self, distances: np.ndarray) -> np.ndarray | None:
        """ζ_i^(r/scale_base) for each distance r = m − n (rows) and pair i (columns); None without a scale."""
        if self.zeta is None:
            return None
        return np.power(self.zeta[None, :], (distances / self.scale_base)[:, None])


@dataclass(frozen=True)
class Buckets:
    """A bias read from a table by the bucket of the relative position key − query (what :attr:`Scheme.buckets`
    returns: T5).

    Attributes
    ----------
    table : ndarray, shape (buckets, heads)
        The bias of every bucket (row) and head (column).
    table_sigma : float or None
        The standard deviation the table was drawn with (an untrained draw), or None for a trained table.
    bucket : callable
        ``(relative) -> ndarray of int``: the bucket of each relative position (integers).
    bucket_map : callable
        ``(seq_len) -> BucketMap``: the bucket of every relative position −(N − 1) … N − 1, as runs.
    """

    table: np.ndarray
    table_sigma: float | None
    bucket: Callable[[np.ndarray], np.ndarray]
    bucket_map: Callable[[int], Any]


@dataclass(frozen=True)
class Preset:
    """A named setup of a scheme, listed in the Parameters panel's preset box and chosen by ``--preset NAME``.

    ``source`` says where its numbers come from (a paper, a model's config).
    """

    label: str
    seq_len: int
    d_model: int
    options: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def name(self) -> str:
        """The label without its parenthesised details (``"Llama 3.1"``): what ``--preset`` takes."""
        return self.label.split(" (")[0].strip()


@dataclass(frozen=True)
class Scheme:
    """A positional-encoding scheme, declared in one module of this package.

    Parameters
    ----------
    key, label, summary, formula : str
        Its identifier (CLI, files), display name, one-paragraph description
        and formula.
    order : int
        Where the app lists it (ascending).
    params : tuple of ParamSpec
        Its parameters: every check, widget, flag and title comes from these.
    family : {"table", "rotation", "bias"}
        ``"table"``: a positions × dimensions table added to the token
        embeddings; ``"rotation"``: queries and keys rotated by position;
        ``"bias"``: a number added to the attention logit of each query
        and key position (ALiBi, T5), which needs :attr:`bias`.
    columns : callable, optional
        ``(dims, d_model, **options) -> Columns`` for a table made of sin, cos
        and linear terms of the position. For a rotation: its cos and sin per
        channel, which the panels that draw a table's values (heatmap,
        waveforms) show; it is not added to anything.
    table : callable, optional
        ``(positions, dims, d_model, **options) -> ndarray`` of shape
        ``(len(positions), len(dims))``, for a table that has no columns.
        ``positions`` are finite and non-negative (float64), ``dims`` valid indices.
    periods : callable, optional
        ``(dims, d_model, **options) -> ndarray``: each dimension's period in
        positions (``inf``: none), for a ``table`` scheme; without it, ``inf``.
    term : callable, optional
        ``(dim, d_model, **options) -> str``: dimension ``dim``'s formula, for a
        ``table`` scheme; without it, :attr:`formula`.
    exact : bool
        For a ``table`` scheme: every value it gives is exactly the value of
        its formula (small integers: bits, zeros), so a value, a distance
        or a dot product of them carries no rounding of the encoding.
        Without it, the error of a table's values is unknown.
    extremes : callable, optional
        ``(low, high, dims, d_model, **options) -> (minimum, maximum)``, for a
        ``table`` scheme: the exact minimum and maximum of each of ``dims``
        over each position interval ``[low[i], high[i]]`` (arrays of shape
        ``(len(low), len(dims))``); without it, the values between samples
        are not known (a sampled view cannot draw their band).
    presets : tuple of Preset
    sizes : callable, optional
        ``(**options) -> (positions, width)`` for a ``table`` scheme whose
        table is finite (read from a model file): it has rows for positions
        ``0 … positions − 1`` only, and exactly ``width`` dimensions. The
        parameters refuse a larger ``seq_len`` and another ``d_model``
        (naming both), the Parameters panel caps N there, and the analyses
        that look past N (the scorecard) stop at the last row. ValueError
        naming the option when the options name no readable table.
    check_together : callable, optional
        ``(d_model, **options) -> None``, raising ValueError (naming the
        parameter) for values each valid alone but not together.
    bias : callable, optional
        ``(query_positions, key_positions, d_model, **options) -> ndarray``,
        required for a ``bias`` scheme and only for one: the bias added to
        the logit of each query (row) and key (column), float64 of shape
        ``(len(query_positions), len(key_positions))``, ``−inf`` where the
        key is masked (a causal bias's keys after the query). The positions
        are 1-D float64 arrays in ``0 … limits.MAX_POSITION`` whose product
        of sizes is at most ``limits.MAX_SIMILARITY_ELEMENTS``; the options
        are checked, :attr:`check_together` included. ValueError naming the
        parameter for positions it cannot take (T5's must be integers).
    rotation : callable, optional
        ``(d_model, seq_len, **options) -> Rotation``, for a ``rotation``
        scheme: how it turns a head of ``d_model`` channels at sequence
        length ``seq_len`` (what dynamic NTK scales for). The positional
        logits, their properties and the permutation demo compute from it;
        ValueError naming ``d_model`` when the head is too narrow for it.
    hf_rope : callable, optional
        ``(d_model, **options) -> dict``: the options as a Hugging Face RoPE
        config (``rope_theta``, ``head_dim``, ``rope_scaling`` …), for a
        rotation whose frequencies are Hugging Face's; the RoPE panels
        (Frequencies, Context extension, Precision) show it.
    slopes : callable, optional
        ``(d_model, **options) -> ndarray``, for a ``bias`` scheme linear in
        the distance: every head's slope m (the bias is −m·distance). Its
        logits are drawn against a linear distance axis, its slopes beside them.
    buckets : callable, optional
        ``(d_model, **options) -> Buckets``, for a ``bias`` scheme read from a
        table by bucket of the relative position (T5).
    """

    key: str
    label: str
    summary: str
    formula: str
    order: int
    params: tuple[ParamSpec, ...] = ()
    family: str = "table"
    columns: Callable[..., Columns] | None = None
    table: Callable[..., np.ndarray] | None = None
    periods: Callable[..., np.ndarray] | None = None
    term: Callable[..., str] | None = None
    exact: bool = False
    extremes: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    presets: tuple[Preset, ...] = ()
    sizes: Callable[..., tuple[int, int]] | None = None
    check_together: Callable[..., None] | None = None
    bias: Callable[..., np.ndarray] | None = None
    rotation: Callable[..., Rotation] | None = None
    hf_rope: Callable[..., dict] | None = None
    slopes: Callable[..., np.ndarray] | None = None
    buckets: Callable[..., Buckets] | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"{self.key}: family must be one of {', '.join(FAMILIES)}; got {self.family!r}")
        if self.family == "table" and (self.columns is None) == (self.table is None):
            raise ValueError(f"{self.key}: a table scheme declares exactly one of columns and table")
        if (self.family == "bias") != (self.bias is not None):
            raise ValueError(f"{self.key}: a bias scheme declares its bias, and only a bias scheme does")
        if self.columns is not None and (self.exact or self.extremes is not None):
            raise ValueError(f"{self.key}: exact and extremes describe a table; columns give both already")
        if (self.rotation is not None or self.hf_rope is not None) and self.family != "rotation":
            raise ValueError(f"{self.key}: rotation and hf_rope describe a rotation scheme")
        if (self.slopes is not None or self.buckets is not None) and self.family != "bias":
            raise ValueError(f"{self.key}: slopes and buckets describe a bias scheme")
        if self.sizes is not None and self.table is None:
            raise ValueError(f"{self.key}: sizes describe a table read from a file; declare its table")
        names = [spec.name for spec in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.key}: a parameter is declared twice in {names}")

    @property
    def provides(self) -> frozenset[str]:
        """What a panel can ask of it: ``"table"`` (values), ``"columns"`` (analytic sin/cos/linear terms),
        ``"rotation"``, ``"angles"`` (a rotation's cos and sin as columns), ``"bias"``."""
        if self.family == "rotation" and self.columns is not None:
            return frozenset({"rotation", "angles"})
        if self.family != "table":
            return frozenset({self.family})
        return frozenset({"table", "columns"}) if self.columns else frozenset({"table"})

    def lacks(self, needs: frozenset[str]) -> str | None:
        """Why this scheme cannot serve a panel that ``needs`` these capabilities, or None when it can."""
        missing = sorted(needs - self.provides)
        if not missing:
            return None
        return (f"{self.label} gives {CAPABILITIES[self.family]}, and this panel needs "
                f"{' and '.join(CAPABILITIES[capability] for capability in missing)}.")

    @property
    def options(self) -> tuple[ParamSpec, ...]:
        """The parameters a user sets (not those tied to a field of the parameters, like ``length``)."""
        return tuple(spec for spec in self.params if spec.tied_to is None)

    def options_in_use(self, options: Mapping[str, Any]) -> tuple[ParamSpec, ...]:
        """The user-set parameters that apply with these options (a scaling type's own, only for that type)."""
        return tuple(spec for spec in self.options if spec.applies(options))

    def spec(self, name: str) -> ParamSpec | None:
        """The spec named ``name``, or None."""
        return next((spec for spec in self.params if spec.name == name), None)

    def check(self, values: Mapping[str, Any], specs: tuple[ParamSpec, ...] | None = None) -> dict[str, Any]:
        """``values`` checked against ``specs`` (all parameters by default), defaults filled in.

        Raises
        ------
        ValueError
            For a name the scheme does not take (naming what it takes), or a
            value out of its spec's range.
        """
        specs = self.params if specs is None else specs
        unknown = set(values) - {spec.name for spec in specs}
        if unknown:
            takes = ", ".join(spec.name for spec in specs) or "no parameters"
            raise ValueError(f"{sorted(unknown)[0]} does not apply to scheme {self.key!r} (it takes {takes})")
        return {spec.name: spec.check(values[spec.name]) if spec.name in values else spec.default for spec in specs}


def number_text(x: float) -> str:
    """``x`` as a formula shows it (``"10000"``, ``"127"``)."""
    return f"{x:g}"


def tiled_columns(pattern: tuple[tuple[str, float], ...]) -> Callable[[np.ndarray, int], Columns]:
    """Columns that repeat ``pattern`` ((kind, divisor) per dimension) over d_model.

    Labelled ``sin(pos / 2)``, ``cos(pos)``, and ``pos`` or ``pos / 2`` for a linear term.
    """
    kinds = np.array([k for k, _ in pattern])
    divisors = np.array([d for _, d in pattern], dtype=np.float64)
    labels = tuple(("pos" if d == 1 else f"pos / {number_text(d)}") if k == "linear"
                   else f"{k}(pos)" if d == 1 else f"{k}(pos / {number_text(d)})" for k, d in pattern)

    def columns(dims: np.ndarray, d_model: int) -> Columns:
        slot = dims % len(pattern)
        return Columns(kinds[slot], divisors[slot], lambda j: labels[slot[j]])

    return columns
