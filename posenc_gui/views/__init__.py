"""Qt views: one module per panel. The main window makes a dock for each (see :mod:`.registry`)."""

from __future__ import annotations

from .registry import panel_classes

__all__ = ["panel_classes"]
