"""The Positional-logits panel's properties table: one row per setup, one column per property of its logit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QSizePolicy, QTableWidget, QWidget

from ..model.attention.logit_properties import PROPERTY_HELP, PROPERTY_NAMES

#: The properties table's column titles.
PROPERTY_LABELS = {"offset only": "offset only", "decays": "decays", "symmetric": "symmetric", "bounded": "bounded",
                   "defined past N": "past N", "tells positions apart": "tells apart"}


class PropertiesTable(QTableWidget):
    """A few lines under the plots, as tall as its rows (never scrolled); each title's tooltip defines its property.

    Cells wrap: an unsettled verdict names the samples it was checked on.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(1, len(PROPERTY_NAMES), parent)
        self.setHorizontalHeaderLabels([PROPERTY_LABELS[name] for name in PROPERTY_NAMES])
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for column, name in enumerate(PROPERTY_NAMES):
            self.horizontalHeaderItem(column).setToolTip(PROPERTY_HELP[name])
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.fit_height()

    def fit_height(self) -> None:
        """The table as tall as its rows: no scrolling, no empty space."""
        height = self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
        height += sum(self.verticalHeader().sectionSize(row) or self.verticalHeader().defaultSectionSize()
                      for row in range(self.rowCount()))
        self.setFixedHeight(height)
