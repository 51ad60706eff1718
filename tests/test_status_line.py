"""The status bar's message is elided before the cursor readout, never run into it (#39)."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage

from waiting import TIMEOUT_MS


def ink_columns(image: QImage, top: int, bottom: int) -> np.ndarray:
    """Per pixel column of ``image``, whether rows ``top … bottom − 1`` hold anything but the background
    (the most common colour), as drawn text does."""
    image = image.convertToFormat(QImage.Format.Format_Grayscale8)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    grey = rows[top:bottom, :image.width()].astype(int)
    background = np.bincount(grey.ravel()).argmax()
    return (np.abs(grey - background) > 60).any(axis=0)


def test_a_long_message_is_elided_before_the_cursor_readout_with_room_between(make_window, qtbot):
    window = make_window(restore=False, size=(1280, 700))
    message = "Opened " + "M" * 400  # dense letters: any cut of the text leaves ink at the cut
    window.show_status(message)
    status, cursor = window.statusBar(), window.cursor_label
    qtbot.waitUntil(lambda: window.message_line.text() == message, timeout=TIMEOUT_MS)
    assert window.message_line.toolTip() == message and status.currentMessage() == message
    image = status.grab().toImage()
    scale = image.width() / status.width()
    left = int(cursor.x() * scale)
    ink = ink_columns(image, int(cursor.y() * scale), int((cursor.y() + cursor.height()) * scale))
    assert ink[left:].any(), "the cursor readout's text is drawn"
    assert not ink[left - int(4 * scale):left].any(), "the message runs into the cursor readout"
    line = window.message_line
    text_ink = ink[int(line.x() * scale):int((line.x() + line.width()) * scale)]
    assert text_ink.any(), "the message is drawn in its own line"
    status.clearMessage()
    qtbot.waitUntil(lambda: window.message_line.text() == "", timeout=TIMEOUT_MS)
