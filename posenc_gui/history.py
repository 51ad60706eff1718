"""The undo history of parameter changes: one :class:`ParamChange` per step on a :class:`QUndoStack`.

A step holds the parameters and the remembered options before and after it,
so undoing it restores them exactly (the options of a scheme switched away
from among them). Changes made in one gesture (a slider drag, typing a
number digit by digit) carry the same gesture key and merge into one step.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtGui import QUndoCommand

from .model import OPTION_SPECS, EncodingParams
from .model.core.params import SIZE_SPECS

if TYPE_CHECKING:
    from .state import AppState

#: The most steps a window's history keeps; the oldest go first.
UNDO_LIMIT = 200
#: How many changed parameters a step's text names before it says how many more.
NAMED_CHANGES = 2


class Snapshot(NamedTuple):
    """What one step restores: the parameters and the last value of every option by name."""

    params: EncodingParams
    remembered: dict[str, object]


def _value_text(name: str, value: object) -> str:
    spec = next((s for s in SIZE_SPECS if s.name == name), None) or OPTION_SPECS.get(name)
    return spec.text(value) if spec is not None else str(value)


def change_text(before: EncodingParams, after: EncodingParams) -> str:
    """The step from ``before`` to ``after`` in words: ``"d_model 512 → 256"``, ``"scheme sinusoidal → binary"``.

    The scheme comes first; the options are compared only when the scheme
    stays (another scheme's options are not changed by the step, only not shown).
    """
    parts = [f"scheme {before.scheme} → {after.scheme}"] if before.scheme != after.scheme else []
    for name in ("seq_len", "d_model"):
        old, new = getattr(before, name), getattr(after, name)
        if old != new:
            parts.append(f"{name} {_value_text(name, old)} → {_value_text(name, new)}")
    if before.scheme == after.scheme:
        parts += [f"{name} {_value_text(name, before.options[name])} → {_value_text(name, value)}"
                  for name, value in after.options.items() if before.options.get(name) != value]
    if not parts:
        return "no change"
    more = len(parts) - NAMED_CHANGES
    return ", ".join(parts[:NAMED_CHANGES]) + (f" and {more} more" if more > 0 else "")


class ParamChange(QUndoCommand):
    """One step of the history: from ``before`` to ``after``, applied through ``state``.

    Parameters
    ----------
    state : AppState
        Whose parameters the step sets (:meth:`AppState.restore`, which records nothing).
    before, after : Snapshot
    gesture : hashable or None
        The gesture the change belongs to; a change pushed right after this
        one with an equal key (not None) merges into it (:meth:`mergeWith`).
    """

    #: Every parameter step has this id: QUndoStack offers a step only to the one before it for merging.
    ID = 2901

    def __init__(self, state: AppState, before: Snapshot, after: Snapshot, gesture: Hashable | None) -> None:
        super().__init__(change_text(before.params, after.params))
        self.state, self.before, self.after, self.gesture = state, before, after, gesture

    def id(self) -> int:  # noqa: A003 (Qt override)
        return self.ID

    def redo(self) -> None:
        self.state.restore(self.after)

    def undo(self) -> None:
        self.state.restore(self.before)

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 (Qt override)
        """Take ``other`` into this step when both belong to the same gesture; a gesture back to the start is no step."""
        if self.gesture is None or not isinstance(other, ParamChange) or other.gesture != self.gesture:
            return False
        self.after = other.after
        self.setText(change_text(self.before.params, self.after.params))
        self.setObsolete(self.after.params == self.before.params)
        return True
