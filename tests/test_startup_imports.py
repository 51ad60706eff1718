"""Start-up imports only what the first paint needs (issue #40 item 2).

The window is built and painted in a fresh, isolated interpreter (``-I``:
no user site, no PYTHONPATH) and its ``sys.modules`` read after the first
paint. Libraries for model files, tokenizers and number formats are imported
where they are used; any of them at start-up costs every launch its import
(``ml_dtypes`` alone once took 0.8 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from waiting import TIMEOUT_S

#: Imported by no part of the first paint (top-level package names).
NOT_AT_START_UP = ("tokenizers", "safetensors", "gguf", "ml_dtypes", "scipy", "matplotlib", "PIL", "torch",
                   "transformers")

#: Builds the window as ``posenc-gui --quit-after-first-paint`` does, then prints the modules it imported.
FIRST_PAINT_MODULES = """
import json, sys
from posenc_gui.__main__ import main
code = main(["--no-restore", "--quit-after-first-paint"])
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""


def first_paint_modules(tmp_path, before: str = "") -> tuple[int, set[str], str]:
    """The exit status and the top-level packages imported by a fresh process up to its first paint."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-I", "-c", before + FIRST_PAINT_MODULES], capture_output=True,
                          text=True, env=env, timeout=TIMEOUT_S)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["exit"], {name.split(".")[0] for name in report["modules"]}, done.stdout


def test_the_first_paint_imports_no_file_reader_tokenizer_or_number_format(tmp_path):
    exit_code, packages, output = first_paint_modules(tmp_path)
    assert exit_code == 0 and output.startswith("first paint"), output
    assert "posenc_gui" in packages and "pyqtgraph" in packages  # it did build the window
    assert sorted(packages.intersection(NOT_AT_START_UP)) == []

