"""The panel registry: every panel the window docks and ``posenc-gui export`` writes, in View-menu order.

A panel is one module of :mod:`posenc_gui.views` with one :class:`~posenc_gui.views.base.Panel`
subclass, which declares in class attributes

- ``panel_id``, ``title`` and ``help_text``;
- ``dock``: a :class:`DockPlacement` (its area of the window, and whether it
  is shown at first launch or tabbed behind the first panel shown there);
- ``model_function``: the function of :mod:`posenc_gui.model` whose result
  it shows (NumPy only, so it runs in the worker process); the base class
  requests it with the panel's ``model_arguments()`` and hands the result to
  its ``show_data()`` (see :class:`~posenc_gui.views.base.Panel`);
  ``model_functions``: any others it calls;
- ``export_formats``: the formats it exports (all of ``export.FORMATS`` by default);
- ``cli_options``: :class:`PanelOption` flags of ``posenc-gui export``, which
  reach the panel through its ``apply_options(**values)``, each with an
  ``example`` value the registry's tests apply;
- ``unavailable_reason(params)``: why it does not apply to a parameter set
  (None when it does); the panel then shows that reason instead of its plot,
  and its export refuses with it.

The window's docks and View menu, the export actions and the command line's
panel list and panel flags are all made from :func:`panel_classes`. Adding a
panel is its module plus one line of :data:`BUILT_IN`; :func:`register`
adds one from elsewhere (a plug-in, a test).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

if TYPE_CHECKING:
    from ..model import ParamSpec
    from .base import Panel

#: The built-in panels, ``"module:Class"`` within this package, in View-menu order.
BUILT_IN = (
    "parameters:ParametersPanel",
    "heatmap:HeatmapPanel",
    "waveforms:WaveformsPanel",
    "similarity:SimilarityPanel",
    "permutation:PermutationPanel",
    "uniqueness:UniquenessPanel",
    "magnitude:MagnitudePanel",
    "linear_relation:LinearRelationPanel",
    "relative:RelativePanel",
    "addition:AdditionPanel",
    "spectrum:SpectrumPanel",
    "rope_frequencies:RopeFrequenciesPanel",
    "rope_context:RopeContextPanel",
    "positional_logits:PositionalLogitsPanel",
    "rope_precision:RopePrecisionPanel",
    "attention_bias:AttentionBiasPanel",
    "decoder:DecoderPanel",
    "scorecard:ScorecardPanel",
    "periodogram:PeriodogramPanel",
    "pca:PCAPanel",
    "walkthrough:WalkthroughPanel",
)

#: Panels added with :func:`register`, after the built-in ones.
_registered: list[type[Panel]] = []


@dataclass(frozen=True)
class DockPlacement:
    """Where a panel's dock goes at first launch and after View ▸ Reset layout.

    Attributes
    ----------
    area : {"left", "right"}
        The side of the window. The left column stacks its shown docks from
        top to bottom; on the right, the first shown dock is on top and the
        others side by side below it.
    shown : bool
        Shown at first launch; otherwise tabbed behind the first shown dock of its area.
    """

    area: Literal["left", "right"] = "right"
    shown: bool = False


@dataclass(frozen=True)
class PanelOption:
    """A flag of the window's command line and of ``posenc-gui export`` that sets an option of a panel.

    The value given reaches the panel as ``panel.apply_options(**{dest: value})``,
    which raises ValueError (naming the option and its allowed range) for a bad one.
    Several panels may declare the same flag: it then applies to each of them.
    """

    flag: str
    help: str
    type: Callable[[str], Any] | None = str
    choices: tuple | None = None
    metavar: str | None = None
    #: ``--flag`` / ``--no-flag`` (True / False) instead of a value.
    boolean: bool = False
    #: The option's value in a new panel, as ``current_options()`` gives it, for ``--help``; None when it
    #: depends on the parameters (a test holds it to the panel's).
    default: Any = None
    #: A value the option takes (not its default where it can be another): a test applies every option's example to
    #: a new panel, so a panel's options need no list of values kept elsewhere.
    example: Any = None
    #: The spec the option's value follows, when its range does not depend on the parameters (a shared view
    #: setting's, :data:`~posenc_gui.state.VIEW_SPECS`, as its control's): its parsing (with the spec's range
    #: in the message), metavar, range and default then come from the spec.
    spec: ParamSpec | None = None

    def __post_init__(self) -> None:
        if self.spec is not None:  # the value's Python type, as a session file's check reads it: the spec's
            object.__setattr__(self, "type", {"int": int, "real": float}.get(self.spec.kind, str))

    @property
    def dest(self) -> str:
        """The keyword of ``apply_options``: the flag without dashes, ``-`` replaced by ``_``."""
        return self.flag.lstrip("-").replace("-", "_")

    def default_text(self) -> str:
        """The default for ``--help``: ``dot``, ``1,2``, ``'dog bites man'``, ``--position``, ``--no-causal``;
        ``""`` when none."""
        if self.spec is not None:
            return self.spec.default_text()
        if self.default is None:
            return ""
        if self.boolean:
            return self.flag if self.default else "--no-" + self.flag.lstrip("-")
        text = str(self.default)
        return f"'{text}'" if " " in text else text


def panel_classes() -> list[type[Panel]]:
    """Every panel class, built-in ones first, in View-menu order (imports their modules)."""
    classes = []
    for entry in BUILT_IN:
        module, name = entry.split(":")
        classes.append(getattr(importlib.import_module(f"{__package__}.{module}"), name))
    return classes + list(_registered)


def panel_class(panel_id: str) -> type[Panel]:
    """The registered class of ``panel_id``; KeyError naming the ids when there is none."""
    for cls in panel_classes():
        if cls.panel_id == panel_id:
            return cls
    raise KeyError(f"no panel {panel_id!r}; the panels are {', '.join(c.panel_id for c in panel_classes())}")


def register(cls: type[Panel]) -> type[Panel]:
    """Add ``cls`` after the registered panels (usable as a class decorator); ValueError for a taken id."""
    if not cls.panel_id or any(other.panel_id == cls.panel_id for other in panel_classes()):
        raise ValueError(f"panel_id must be a new, non-empty id, got {cls.panel_id!r}")
    _registered.append(cls)
    return cls


def unregister(panel_id: str) -> None:
    """Remove a panel added with :func:`register` (the built-in ones stay)."""
    _registered[:] = [cls for cls in _registered if cls.panel_id != panel_id]
