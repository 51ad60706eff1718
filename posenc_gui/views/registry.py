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
panel list and panel flags are all made from these declarations. Adding a
panel is its module plus one line of :data:`BUILT_IN`; :func:`register`
adds one from elsewhere (a plug-in, a test).

What the window needs of every panel before the first paint (its id, title
and dock, for the docks, the View menu and the docks' export menus) is in
:data:`BUILT_IN` too, as a :class:`PanelDeclaration`, so that a panel's
module is imported only when its panel is built or its class is asked for
(:func:`panel_class`): start-up imports the five shown panels' modules, not
all 21 (``tests/test_startup_imports.py``). Those fields are the class's;
``tests/test_panel_registry.py`` fails when a declaration and its class disagree.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

if TYPE_CHECKING:
    from ..model import ParamSpec
    from .base import Panel

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


@dataclass(frozen=True)
class PanelDeclaration:
    """What the window and the command line need of a panel before its module is imported.

    Attributes
    ----------
    panel_id, title, dock
        The class's :attr:`~posenc_gui.views.base.Panel.panel_id`, ``title`` and ``dock``.
    location : str
        ``"module:Class"`` within :mod:`posenc_gui.views` (a built-in panel), else "".
    export_formats : tuple of str or None
        The class's ``export_formats``; None for every format (``export.FORMATS``, the default).
    registered : type or None
        The class of a panel added with :func:`register` (its module is already imported).
    """

    panel_id: str
    title: str
    location: str = ""
    dock: DockPlacement = DockPlacement()
    export_formats: tuple[str, ...] | None = None
    registered: type | None = None

    @classmethod
    def of(cls, panel_class: type[Panel]) -> PanelDeclaration:
        """The declaration of a registered class, read from its attributes."""
        return cls(panel_class.panel_id, panel_class.title, dock=panel_class.dock,
                   export_formats=panel_class.export_formats, registered=panel_class)

    def load(self) -> type[Panel]:
        """The panel's class (importing its module the first time)."""
        if self.registered is not None:
            return self.registered
        module, name = self.location.split(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)


#: The built-in panels, in View-menu order: each one's module and class within this package, and the class's
#: title and dock (held to the class by ``tests/test_panel_registry.py``).
BUILT_IN = (
    PanelDeclaration("parameters", "Parameters", "parameters:ParametersPanel", DockPlacement("left", shown=True)),
    PanelDeclaration("heatmap", "Heatmap", "heatmap:HeatmapPanel", DockPlacement("right", shown=True)),
    PanelDeclaration("waveforms", "Waveforms", "waveforms:WaveformsPanel", DockPlacement("right", shown=True)),
    PanelDeclaration("similarity", "Similarity", "similarity:SimilarityPanel", DockPlacement("right", shown=True)),
    PanelDeclaration("permutation", "Permutation demo", "permutation:PermutationPanel"),
    PanelDeclaration("uniqueness", "Uniqueness", "uniqueness:UniquenessPanel"),
    PanelDeclaration("magnitude", "Magnitude", "magnitude:MagnitudePanel"),
    PanelDeclaration("linear_relation", "Linear relation T_k", "linear_relation:LinearRelationPanel"),
    PanelDeclaration("relative", "Relative vs absolute", "relative:RelativePanel"),
    PanelDeclaration("addition", "Addition vs concatenation", "addition:AdditionPanel"),
    PanelDeclaration("spectrum", "Spectrum", "spectrum:SpectrumPanel"),
    PanelDeclaration("frequencies", "RoPE frequencies", "rope_frequencies:RopeFrequenciesPanel"),
    PanelDeclaration("context", "RoPE context extension", "rope_context:RopeContextPanel"),
    PanelDeclaration("logits", "Positional logits", "positional_logits:PositionalLogitsPanel"),
    PanelDeclaration("precision", "RoPE precision", "rope_precision:RopePrecisionPanel"),
    PanelDeclaration("bias", "Attention bias", "attention_bias:AttentionBiasPanel"),
    PanelDeclaration("decoder", "Decoder", "decoder:DecoderPanel"),
    PanelDeclaration("scorecard", "Scorecard", "scorecard:ScorecardPanel"),
    PanelDeclaration("periodogram", "Periodogram", "periodogram:PeriodogramPanel"),
    PanelDeclaration("pca", "Positions (PCA)", "pca:PCAPanel"),
    PanelDeclaration("walkthrough", "Walkthrough", "walkthrough:WalkthroughPanel", DockPlacement("left", shown=True)),
)

#: Panels added with :func:`register`, after the built-in ones.
_registered: list[type[Panel]] = []


def declarations() -> list[PanelDeclaration]:
    """Every panel's declaration, built-in ones first, in View-menu order (imports no panel's module)."""
    return [*BUILT_IN, *(PanelDeclaration.of(cls) for cls in _registered)]


def declaration(panel_id: str) -> PanelDeclaration:
    """The declaration of ``panel_id``; KeyError naming the ids when there is none."""
    every = declarations()
    for declared in every:
        if declared.panel_id == panel_id:
            return declared
    raise KeyError(f"no panel {panel_id!r}; the panels are {', '.join(d.panel_id for d in every)}")


def panel_classes() -> list[type[Panel]]:
    """Every panel class, built-in ones first, in View-menu order (imports their modules)."""
    return [declared.load() for declared in declarations()]


def panel_class(panel_id: str) -> type[Panel]:
    """The registered class of ``panel_id`` (importing its module only); KeyError naming the ids when there is
    none."""
    return declaration(panel_id).load()


def register(cls: type[Panel]) -> type[Panel]:
    """Add ``cls`` after the registered panels (usable as a class decorator); ValueError for a taken id."""
    if not cls.panel_id or any(other.panel_id == cls.panel_id for other in declarations()):
        raise ValueError(f"panel_id must be a new, non-empty id, got {cls.panel_id!r}")
    _registered.append(cls)
    return cls


def unregister(panel_id: str) -> None:
    """Remove a panel added with :func:`register` (the built-in ones stay)."""
    _registered[:] = [cls for cls in _registered if cls.panel_id != panel_id]
