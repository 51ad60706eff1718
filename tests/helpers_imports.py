"""What importing a module loads: checked in a fresh interpreter, whose ``sys.modules`` holds only what it imported."""

from __future__ import annotations

import subprocess
import sys

from waiting import TIMEOUT_S

#: The Qt bindings and the plotting library on top of them: the model layer and the worker load none of them.
QT_PACKAGES = ("PySide6", "shiboken6", "PyQt5", "PyQt6", "pyqtgraph")


def assert_loads_none_of(statements: str, packages: tuple[str, ...] = QT_PACKAGES, *, isolated: bool = False,
                         env: dict[str, str] | None = None) -> None:
    """Run ``statements`` (Python, ``;``-separated) in a new interpreter: they succeed and load no module of
    ``packages`` (top-level names).

    Parameters
    ----------
    statements
        What to run, e.g. ``"import posenc_gui.model"``.
    packages
        Top-level package names none of whose modules may be loaded.
    isolated
        Run the interpreter isolated (``-I``: no environment variables, user site or current directory).
    env
        The interpreter's environment (``None``: this process's).
    """
    code = (f"import sys; {statements};"
            f"bad = [k for k in sys.modules if k.split('.')[0] in {tuple(packages)!r}];"
            "print(bad); sys.exit(1 if bad else 0)")
    command = [sys.executable, *(["-I"] if isolated else []), "-c", code]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stdout + result.stderr
