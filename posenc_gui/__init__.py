"""posenc_gui: a desktop lab for transformer positional encodings."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"


def resources_path(*parts: str) -> Path:
    """Path of a file under the installed ``resources/`` folder.

    After ``pip install`` the folder is the subpackage ``posenc_gui.resources``;
    in a source checkout run without installing, it is the repository's
    top-level ``resources/``.
    """
    installed = Path(__file__).resolve().parent / "resources"
    base = installed if installed.is_dir() else Path(__file__).resolve().parent.parent / "resources"
    return base.joinpath(*parts)
