"""Shared application state: the current parameters (one signal per batched change) and the view settings
the panels share (the embedding scale σ, the permutation demo's d_model, the reference position, the linked
cursor)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack

from .history import UNDO_LIMIT, ParamChange, Snapshot
from .linked_cursor import LinkedCursor
from .model import EncodingParams, Options, ParamSpec, limits
from .model.core.limits import (DEFAULT_DEMO_D_MODEL, MAX_ADDITION_SCALE, MAX_DEMO_D_MODEL, MAX_EMBEDDING_SCALE,
                                MIN_DEMO_D_MODEL)

#: Settings of the views that are not encoding parameters: one value each, shared by every panel that shows it.
VIEW_SPECS: dict[str, ParamSpec] = {spec.name: spec for spec in (
    ParamSpec("embedding_scale", "real", 1.0, "Embedding scale σ",
              "Standard deviation of each token-embedding entry, e ~ N(0, σ²·I); shared by the Magnitude and "
              "Addition panels.", low=0.001, high=min(1000.0, MAX_ADDITION_SCALE, MAX_EMBEDDING_SCALE), log=True),
    ParamSpec("demo_d_model", "int", DEFAULT_DEMO_D_MODEL, "demo d_model",
              "Width of the permutation demo's toy attention head (its own, small d_model).",
              low=MIN_DEMO_D_MODEL, high=MAX_DEMO_D_MODEL),
    ParamSpec("reference", "int", 64, "reference position",
              "The position whose similarity to every other the Similarity panel's profile shows.",
              low=0, high=limits.MAX_SEQ_LEN - 1),
)}


class AppState(QObject):
    """Holds the current :class:`EncodingParams` and announces changes.

    Several setters called in one event-loop turn (a preset, a walkthrough
    step, a slider drag delivering many values) produce one
    ``paramsChanged`` emission with the final value, so each panel redraws
    once per turn, not once per setter.

    Every accepted change of the parameters is a step of :attr:`history`
    (undo and redo); changes made within one :meth:`gesture` are one step.
    The view settings are not recorded: they follow clicks on the plots and
    the length of the sequence, and undoing them would undo looking, not the
    setup.

    Signals
    -------
    paramsChanged(EncodingParams)
        The new, validated parameters.
    paramError(str, str)
        ``(field, message)`` when a requested change was refused; the
        parameters stay as they were. ``field`` is ``""`` once the error clears.
    message(str)
        A status message for the user (warnings, export results).
    viewChanged(str, object)
        ``(name, value)`` of a view setting (:data:`VIEW_SPECS`) that changed.

    The linked cursor is :attr:`cursor` (a :class:`LinkedCursor`, with its own ``changed`` signal).
    """

    paramsChanged = Signal(object)
    viewChanged = Signal(str, object)
    paramError = Signal(str, str)
    message = Signal(str)
    #: A model file or folder was opened in the window (File ▸ Open model…, a drop): its path (the Decoder panel).
    modelOpened = Signal(str)

    def __init__(self, params: EncodingParams | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._params = (params or EncodingParams()).validate()
        self._emitted = self._params
        #: The last value of every option a user set, by name: switching to a
        #: scheme without ``base`` and back keeps the base.
        self.remembered: dict[str, object] = dict(self._params.options)
        self._view = Options({name: spec.default for name, spec in VIEW_SPECS.items()})
        if self._view["reference"] >= self._params.seq_len:
            self._view = Options({**self._view, "reference": self._params.seq_len // 2})
        #: The position (and dimension) marked in every panel; not recorded in the history, like the view settings.
        self.cursor = LinkedCursor(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._flush)
        #: The undo history of the parameters (:class:`~posenc_gui.history.ParamChange` steps), this state's only.
        self.history = QUndoStack(self)
        self.history.setUndoLimit(UNDO_LIMIT)
        self._gesture: Hashable | None = None
        #: The model last opened in the window (:meth:`note_model_opened`), None before any.
        self.opened_model: str | None = None

    def note_model_opened(self, path: str) -> None:
        """Remember ``path`` as the model last opened in the window and emit :attr:`modelOpened`."""
        self.opened_model = path
        self.modelOpened.emit(path)

    @property
    def params(self) -> EncodingParams:
        """The current, validated parameters."""
        return self._params

    @property
    def view(self) -> Options:
        """The view settings, by name (:data:`VIEW_SPECS`)."""
        return self._view

    def set_view(self, **changes: object) -> None:
        """Change view settings; each change is announced as ``viewChanged(name, value)``.

        Raises
        ------
        ValueError
            Naming the setting and its range (nothing is changed).
        """
        unknown = set(changes) - set(VIEW_SPECS)
        if unknown:
            raise ValueError(f"{sorted(unknown)[0]} is no view setting; they are {', '.join(VIEW_SPECS)}")
        checked = {name: VIEW_SPECS[name].check(value) for name, value in changes.items()}
        changed = {name: value for name, value in checked.items() if self._view[name] != value}
        self._view = Options({**self._view, **changed})
        for name, value in changed.items():
            self.viewChanged.emit(name, value)

    def update(self, **changes) -> str | None:
        """Apply ``changes`` (fields or the scheme's options, by name) if valid.

        On a change of scheme, the new scheme's options keep the values last
        set under the same names, and a table read from a file brings its
        sizes unless ``changes`` give them (see :meth:`EncodingParams.replaced`).

        Returns
        -------
        str or None
            ``None`` on success; otherwise the model's message, which is also
            emitted as ``paramError(field, message)``.
        """
        try:
            candidate = self._params.replaced(self.remembered, fit_sizes=True, **changes)
        except (ValueError, TypeError) as error:
            field = next(iter(changes), "")
            self.paramError.emit(field, str(error))
            return str(error)
        remembered = {**self.remembered, **candidate.options}
        if candidate == self._params:
            self.paramError.emit("", "")
            self.remembered.update(remembered)
        else:  # the step's redo (restore) clears the refusals: once, not twice a step
            self.history.push(ParamChange(self, Snapshot(self._params, dict(self.remembered)),
                                          Snapshot(candidate, remembered), self._gesture))
        return None

    @contextmanager
    def gesture(self, key: Hashable) -> Iterator[None]:
        """Make the changes inside part of gesture ``key``: consecutive changes with the same key are one undo step.

        A slider drag uses one key from press to release, a text field one
        per editing (until Return or the focus leaves), so each is one step.
        """
        outer, self._gesture = self._gesture, key
        try:
            yield
        finally:
            self._gesture = outer

    def restore(self, snapshot: Snapshot) -> None:
        """Set the parameters and remembered options of ``snapshot`` as they are, recording no step (undo, redo)."""
        self.remembered.clear()
        self.remembered.update(snapshot.remembered)
        self.paramError.emit("", "")
        if snapshot.params != self._params:
            self._params = snapshot.params
            self._timer.start()

    def set_params(self, params: EncodingParams) -> str | None:
        """Replace all parameters at once (presets, restored sessions)."""
        return self.update(**params.as_dict())

    def flush(self) -> None:
        """Emit a pending change now (tests, benchmarks)."""
        if self._timer.isActive():
            self._timer.stop()
            self._flush()

    def _flush(self) -> None:
        if self._params != self._emitted:
            self._emitted = self._params
            self._keep_reference()
            self.paramsChanged.emit(self._params)

    def _keep_reference(self) -> None:
        """Keep the reference position a position of the sequence (the middle when it is not): a session saves
        it, and a session file's reference is checked against its length."""
        if self._view["reference"] >= self._params.seq_len:
            self.set_view(reference=self._params.seq_len // 2)
