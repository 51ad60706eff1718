"""``python -m posenc_gui`` and the ``posenc-gui`` script: the command line of :mod:`posenc_gui.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
