"""The status bar's message, drawn in its own place: elided with "…", a rule between it and the cursor readout.

QStatusBar draws a temporary message (``showMessage``) itself, cut off at
the first permanent widget: on a 1,280 px screen "Opened tinybert (hf-folder)
as learned table bert.emb" ran straight into the cursor readout's "Cursor:
hover a plot…", as if two messages were drawn over each other. The
:class:`MessageLine` shows the same message (``currentMessage()`` stays Qt's,
so ``showMessage`` and its time-out work as before) as the bar's first
permanent widget: Qt's own drawing has no room left, and the text is
elided, its whole in the tooltip.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QStatusBar

from ..views.labels import StatusText


#: A typical message: the width the line asks for, sharing a narrow bar with the cursor readout.
SAMPLE = "Opened tinybert (hf-folder) as learned table bert.embeddings"


class MessageLine(StatusText):
    """The status bar's current message, one line elided at the right (the full text in its tooltip).

    Parameters
    ----------
    status_bar
        The bar whose messages it shows; it becomes the bar's first permanent widget, taking the spare width,
        followed by a vertical rule.
    """

    def __init__(self, status_bar: QStatusBar) -> None:
        super().__init__(SAMPLE, status_bar, expanding=False)
        self.setObjectName("status-message")
        self.rule = QFrame(status_bar)
        self.rule.setFrameShape(QFrame.Shape.VLine)
        self.rule.setFrameShadow(QFrame.Shadow.Sunken)
        status_bar.insertPermanentWidget(0, self, 1)
        status_bar.insertPermanentWidget(1, self.rule)
        status_bar.messageChanged.connect(self.setText)
        self.setText(status_bar.currentMessage())
