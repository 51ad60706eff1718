"""What the export tests share: pixels of an image, a decoded PNG, a panel laid out off screen for export."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QByteArray
from PySide6.QtGui import QImage

from posenc_gui.model import SCHEMES
from helpers_panels import settle_panel, show_panel

#: The SVG namespace, as ElementTree spells it in tag names.
SVG = "{http://www.w3.org/2000/svg}"


def pixels(image: QImage) -> np.ndarray:
    """(h, w, 4) uint8 array of an image (B, G, R, A on little-endian)."""
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    h, w, stride = image.height(), image.width(), image.bytesPerLine()
    return np.frombuffer(image.constBits(), np.uint8, count=stride * h).reshape(h, stride)[:, : w * 4] \
        .reshape(h, w, 4).copy()


def decode_png(data: bytes) -> QImage:
    image = QImage.fromData(QByteArray(data), "PNG")
    assert not image.isNull(), "not a PNG"
    return image


def assert_not_blank(image: QImage) -> None:
    values = pixels(image)[..., :3].astype(float)
    assert values.std() > 5, "the image is (nearly) a single colour"


def make_panel(qtbot, cls, state, compute, size=(960, 720)):
    """A ``cls`` panel on ``state``, laid out off screen at ``size`` and settled (for a panel of another family
    the state first switches to the first scheme it applies to)."""
    if cls.requires - state.params.info.provides:  # a panel for another family: the first scheme it applies to
        state.update(scheme=next(key for key, info in SCHEMES.items() if cls.requires <= info.provides))
        state.flush()
    panel = show_panel(qtbot, cls(state, compute), size, settle=False, on_screen=False)
    settle_panel(qtbot, panel)
    return panel
