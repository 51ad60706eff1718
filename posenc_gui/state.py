"""Shared application state: the current parameters, one signal per batched change."""

from __future__ import annotations

import contextlib
from typing import Callable, ContextManager

from PySide6.QtCore import QObject, QTimer, Signal

from .model import EncodingParams


class AppState(QObject):
    """Holds the current :class:`EncodingParams` and announces changes.

    Several setters called in one event-loop turn (a preset, a walkthrough
    step, a slider drag delivering many values) produce one
    ``paramsChanged`` emission with the final value, so each panel redraws
    once per turn, not once per setter.

    Signals
    -------
    paramsChanged(EncodingParams)
        The new, validated parameters.
    paramError(str, str)
        ``(field, message)`` when a requested change was refused; the
        parameters stay as they were. ``field`` is ``""`` once the error clears.
    message(str)
        A status message for the user (warnings, export results).
    """

    paramsChanged = Signal(object)
    paramError = Signal(str, str)
    message = Signal(str)

    def __init__(self, params: EncodingParams | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._params = (params or EncodingParams()).validate()
        self._emitted = self._params
        #: The last value of every option a user set, by name: switching to a
        #: scheme without ``base`` and back keeps the base.
        self.remembered: dict[str, object] = dict(self._params.options)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._flush)
        #: Entered around each ``paramsChanged`` emission; the main window sets
        #: its compute service's ``workers_first``.
        self.emission_scope: Callable[[], ContextManager[None]] = contextlib.nullcontext

    @property
    def params(self) -> EncodingParams:
        """The current, validated parameters."""
        return self._params

    def update(self, **changes) -> str | None:
        """Apply ``changes`` (fields or the scheme's options, by name) if valid.

        On a change of scheme, the new scheme's options keep the values last
        set under the same names (see :meth:`EncodingParams.replaced`).

        Returns
        -------
        str or None
            ``None`` on success; otherwise the model's message, which is also
            emitted as ``paramError(field, message)``.
        """
        try:
            candidate = self._params.replaced(self.remembered, **changes)
        except (ValueError, TypeError) as error:
            field = next(iter(changes), "")
            self.paramError.emit(field, str(error))
            return str(error)
        self.paramError.emit("", "")
        self.remembered.update(candidate.options)
        if candidate != self._params:
            self._params = candidate
            self._timer.start()
        return None

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
            with self.emission_scope():
                self.paramsChanged.emit(self._params)
