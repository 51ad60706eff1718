"""Parameters: scheme, sizes and the options of the chosen scheme; applied while dragging."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QFrame, QLabel, QScrollArea, QWidget

from ..history import UNDO_LIMIT
from ..model import OPTION_SPECS, SCHEMES, EncodingParams, presets
from ..model.core.params import D_MODEL, SEQ_LEN, SIZE_SPECS
from ..model.rope import rope_config
from .base import MESSAGE_STYLES, ControlsPanel
from .plotkit import FOREGROUND
from .model_open import open_model_dialog
from .param_controls import ErrorLabel, ParamControl

#: Width of the exported figure (the parameters and the formula), in logical pixels.
FIGURE_WIDTH = 640


def parameters_html(params: EncodingParams) -> str:
    """The chosen scheme, its parameters (only those it has), its formula and what it does, as a small table."""
    info, kwargs = params.info, params.scheme_kwargs()
    rows = [("scheme", f"{info.label} ({params.scheme})"), (SEQ_LEN.label, f"{params.seq_len:,}"),
            (D_MODEL.label, f"{params.d_model:,}")]
    for spec in (*(s for s in info.params if s.tied_to and s.applies(params.options)),
                 *info.options_in_use(params.options)):
        value = kwargs[spec.name]
        rows.append((spec.label, f"{spec.choice_label(value)}" + (f" ({spec.help})" if spec.tied_to else "")))
    cells = "".join(f'<tr><td style="padding-right:14px"><b>{escape(name)}</b></td><td>{escape(value)}</td></tr>'
                    for name, value in rows)
    return (f'<div style="font-size:11pt"><b>{escape(params.title())}</b></div>'
            f'<table cellspacing="0" cellpadding="2" style="margin-top:6px">{cells}</table>'
            f'<p style="font-family:monospace; margin-top:8px">{escape(info.formula)}</p>'
            f"<p>{escape(info.summary)}</p>")


class ParametersFigure(QLabel):
    """The exported figure of the Parameters panel: the parameters and the formula on white, no controls.

    A screenshot of the controls (sliders, drop-down arrows) is no figure;
    this is made only for an export, from the parameters of that moment.
    """

    PADDING_PX = 12

    def __init__(self, params: EncodingParams) -> None:
        super().__init__()
        self.setObjectName("parameters-figure")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setStyleSheet(f"QLabel#parameters-figure {{ background: white; color: {FOREGROUND}; "
                           f"padding: {self.PADDING_PX}px; }}")
        self.setText(parameters_html(params))
        self.setFixedWidth(FIGURE_WIDTH)
        self.setFixedHeight(self.heightForWidth(FIGURE_WIDTH))


class LazyControls(dict):
    """The Parameters panel's controls by parameter name: a control is built (made from its spec, its rows put
    in the form in the specs' order) the first time it is asked for; iterating gives the built ones.

    Why: a control for every option of every scheme is some thirty rows of
    widgets, at start-up, for the three that the default scheme shows.
    """

    def __init__(self, panel: ParametersPanel, form: QFormLayout) -> None:
        super().__init__()
        self._panel, self._form = panel, form
        self._specs = {spec.name: spec for spec in (*SIZE_SPECS, *OPTION_SPECS.values())}
        self._position = {name: index for index, name in enumerate(self._specs)}
        self._first_row = form.rowCount()

    def __missing__(self, name: str) -> ParamControl:
        spec = self._specs[name]  # KeyError for a name that is no parameter
        panel = self._panel
        control = ParamControl(spec, panel._apply, panel, open_path=lambda: open_model_dialog(panel.state, panel))
        position = self._position[name]
        row = self._first_row + 2 * sum(self._position[built] < position for built in self)
        self._form.insertRow(row, control.label, control.row)
        self._form.insertRow(row + 1, control.error)
        self[name] = control
        return control


class ParametersPanel(ControlsPanel):
    """Controls bound to :class:`AppState`; an invalid value shows the model's message."""

    panel_id = "parameters"
    title = "Parameters"
    help_text = (
        "Choose the encoding scheme and its sizes; every view updates while you drag. "
        "Only the options that the chosen scheme uses are shown. An invalid value is refused with "
        "the reason next to the control, and the views keep showing the last valid choice. "
        "Edit ▸ Undo (Ctrl+Z) and Redo (Ctrl+Shift+Z or Ctrl+Y) step through the changes; a slider drag or a "
        f"number typed into a field is one step. The history is this window's, keeps the last {UNDO_LIMIT} steps, "
        "and is not saved: it starts empty at each launch. A model's learned table (File ▸ Open model…, or Open… "
        "beside the model file) fixes N to at most its length and d_model to its width; its tensor can be changed "
        "to any other 2-D tensor of the file."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("<b>Encoding</b>"))
        self.finish_header()
        # In a scroll area: a scheme with many options (RoPE's scaling types) scrolls instead of squeezing its rows.
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        rows = QWidget(self.scroll)
        form = QFormLayout(rows)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.scroll.setWidget(rows)
        self.body.addWidget(self.scroll, 1)

        self.presets = QComboBox(self)
        # Long preset labels elide rather than widen the panel past its dock (which clipped every row).
        self.presets.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.presets.setMinimumContentsLength(16)
        self.presets.addItem("Choose a preset…", None)
        for _, preset in presets():  # each is checked when chosen (EncodingParams.from_preset)
            self.presets.addItem(preset.label, preset.label)
            if preset.source:
                self.presets.setItemData(self.presets.count() - 1, f"Source: {preset.source}",
                                         Qt.ItemDataRole.ToolTipRole)
        self.presets.activated.connect(self._apply_preset)
        form.addRow("Preset", self.presets)

        self.scheme = QComboBox(self)
        for key, info in SCHEMES.items():
            self.scheme.addItem(info.label, key)
        self.scheme.currentIndexChanged.connect(lambda _: self.state.update(scheme=self.scheme.currentData()))
        form.addRow("Scheme", self.scheme)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.formula = QLabel(self)
        self.formula.setWordWrap(True)
        self.formula.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.formula.setStyleSheet("font-family: monospace;")
        form.addRow(self.summary)
        form.addRow(self.formula)
        #: What Hugging Face accepts but warns about in the rope scheme's options (computed as it computes it),
        #: above the controls, where it is seen without scrolling.
        self.hf_warning = QLabel(self)
        self.hf_warning.setWordWrap(True)
        self.hf_warning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hf_warning.setStyleSheet(MESSAGE_STYLES["warning"])
        self.hf_warning.hide()
        form.addRow(self.hf_warning)

        #: The control of each size and option, by parameter name (built from its spec when first asked for).
        self.controls = LazyControls(self, form)
        #: A note for each parameter the app sets from another (the normalized scheme's length), by name.
        self.tied_notes: dict[str, QLabel] = {}
        for info in SCHEMES.values():
            for spec in info.params:
                if spec.tied_to and spec.name not in self.tied_notes:
                    note = QLabel(f"{spec.label}: {spec.help}", self)
                    note.setWordWrap(True)
                    form.addRow(note)
                    self.tied_notes[spec.name] = note
        #: The model file a ``path`` option names, and its notes (an offset applied, NaN found …).
        self.model_note = QLabel(self)
        self.model_note.setWordWrap(True)
        self.model_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model_note.hide()
        form.addRow(self.model_note)
        #: The names each ``name`` control offers were made for these options (the model file's tensors).
        self._choices_for: dict[str, object] = {}
        self.general_error = ErrorLabel(self)
        self.general_error.setWordWrap(True)
        self.general_error.hide()
        form.addRow(self.general_error)

        state.paramsChanged.connect(self.sync_from_state)
        state.paramError.connect(self._show_error)
        self.sync_from_state(state.params)

    @property
    def errors(self) -> dict[str, QLabel]:
        """The refusal line of each parameter, by name; ``""`` is the line for any other refusal."""
        return {**{name: control.error for name, control in self.controls.items()}, "": self.general_error}

    # ------------------------------------------------------------ behaviour
    def _apply(self, name: str, value: Any) -> str | None:
        with self.state.gesture(self.controls[name].gesture()):
            return self.state.update(**{name: value})

    def _apply_preset(self, index: int) -> None:
        label = self.presets.itemData(index)
        if isinstance(label, str):
            self.state.set_params(EncodingParams.from_preset(label))

    def _show_error(self, name: str, message: str) -> None:
        for label in self.errors.values():
            if not label.isHidden():  # a refusal is shown: every change of a parameter clears them all
                label.hide()
        if message:
            label = self.errors.get(name, self.general_error)
            label.setText(message)
            label.show()
        for control in self.controls.values():  # a text field still holds the text it refused
            if control.refusal and name != control.spec.name:
                control.show_error(control.refusal)
        if message and (name == "scheme" or name in self.controls
                        and self.controls[name].spec.kind in ("choice", "bool", "name")):
            # a drop-down or check box holds no refused text: it goes back to what is in use, the reason stays
            self.sync_from_state(self.state.params)

    def sync_from_state(self, params: EncodingParams) -> None:
        """Show ``params`` in the controls without feeding them back; only the scheme's own options are shown."""
        self.scheme.blockSignals(True)
        self.scheme.setCurrentIndex(self.scheme.findData(params.scheme))
        self.scheme.blockSignals(False)
        info = params.info
        in_use = {spec.name for spec in info.options_in_use(params.options)}
        values = {"seq_len": params.seq_len, "d_model": params.d_model,
                  **{name: value for name, value in params.options.items() if name in in_use}}
        self.controls["seq_len"].set_high(min(SEQ_LEN.high, self._table_positions(params)))
        self.controls["d_model"].set_fixed("d_model is the width of the table read from the file" if info.sizes
                                           else "")
        for spec in info.options_in_use(params.options):
            if spec.kind == "name" and self._choices_for.get(spec.name) != params.options:
                self.controls[spec.name].set_choices(spec.choices_of(params.options))
                self._choices_for[spec.name] = params.options
        shown = {name: self.controls[name] for name in values}  # built as the scheme first shows them
        for name, control in self.controls.items():
            control.set_visible(name in shown)
            if name in shown:
                control.show(values[name])
        paths = [params.options[spec.name] for spec in info.options_in_use(params.options) if spec.kind == "path"]
        note = ""
        if any(paths):
            from ..model.files.model_setup import describe_model  # loaded with a model: the first paint reads none

            note = " ".join(describe_model(path) for path in paths if path)
        self.model_note.setText(note)
        self.model_note.setVisible(bool(self.model_note.text()))
        warnings = self.hf_warnings(params)
        self.hf_warning.setText("Computed as Hugging Face computes it, which accepts it with a warning: "
                                + "; ".join(warnings) + "." if warnings else "")
        self.hf_warning.setVisible(bool(warnings))
        for name, note in self.tied_notes.items():
            spec = info.spec(name)
            note.setVisible(spec is not None and spec.applies(params.options))
        self.summary.setText(info.summary)
        self.formula.setText(info.formula)

    @staticmethod
    def hf_warnings(params: EncodingParams) -> tuple[str, ...]:
        """What Hugging Face warns about in ``params`` (a scheme's Hugging Face RoPE configuration), or nothing."""
        hf_rope = params.info.hf_rope
        return () if hf_rope is None else rope_config(hf_rope(params.d_model, **params.options)).warnings

    @staticmethod
    def _table_positions(params: EncodingParams) -> int:
        """The rows of a table read from a file (N goes no further), else the most positions N takes.

        The file was opened when the parameters were validated; one gone since (an undo back to it) caps nothing.
        """
        if params.info.sizes is None:
            return SEQ_LEN.high
        try:
            return params.info.sizes(**params.options)[0]
        except ValueError:
            return SEQ_LEN.high

    def figure_widget(self) -> QWidget:
        """The parameters and the formula as a small figure (:class:`ParametersFigure`), made for this export."""
        self._figure = ParametersFigure(self.state.params)  # kept until the next export
        return self._figure

    def export_data(self) -> dict[str, Any]:
        return {"arrays": {}, "meta": {"panel": self.panel_id, "params": self.state.params.as_dict(),
                                       "hugging_face_warnings": list(self.hf_warnings(self.state.params))}}
