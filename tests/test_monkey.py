"""Hundreds of random user actions on the real window: no exception, and every view shows the current parameters.

The long run (2,000 actions, the full parameter ranges) is a script:
``python tests/monkey.py --actions 2000 --seed 1``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

MONKEY = Path(__file__).parent / "monkey.py"


@pytest.fixture(scope="module")
def monkey():
    spec = importlib.util.spec_from_file_location("posenc_monkey", MONKEY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


# A right-click on a colour bar opens pyqtgraph's colormap menu, whose keyboard grab the offscreen platform lacks.
@pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")
@pytest.mark.prebuild  # hidden panels built in idle time between the actions, as for a user
def test_three_hundred_random_actions_break_nothing(make_window, monkey, tmp_path):
    window = make_window(size=(1400, 900), restore=False)
    run = monkey.run(window, actions=300, seed=20261201, folder=tmp_path)
    assert len(run.log) == 301  # every action, then the final check
    assert set(run.counts) == {name for _, name, _ in run.actions}
