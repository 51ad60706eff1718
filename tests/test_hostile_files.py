"""Files crafted to hang, exhaust or crash the readers: each is refused in one line, in bounded time and memory.

Where a file used to make a reader run for hours, the reading is done in a
child process whose time-out only catches that hang: it is minutes, not
the fraction of a second the reading takes now.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from posenc_gui.model.json_nesting import nesting_depth

#: How long a child may take to read a file before it counts as hung (the reading takes well under a second).
HANG_S = 120


def in_a_child(code: str, *args: str) -> str:
    """What ``code`` prints (stdout and stderr) when run with ``args`` in an isolated child; fails on a hang."""
    try:
        result = subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True,
                                timeout=HANG_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish within {HANG_S} s")
    return result.stdout + result.stderr


# ---------------------------------------------------------------- JSON nesting (#36, 1)
def depth_by_walking(text: str) -> int:
    """How deep ``text`` nests, one character at a time: a quote after an even run of backslashes starts or
    ends a string (as a JSON parser reads a valid text), brackets outside strings count."""
    depth = deepest = backslashes = 0
    in_string = False
    for char in text:
        if char == "\\":
            backslashes += 1
            continue
        if char == '"' and backslashes % 2 == 0:
            in_string = not in_string
        elif not in_string and char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not in_string and char in "]}":
            depth -= 1
        backslashes = 0
    return deepest


@pytest.mark.parametrize("chunk", [3, 7, 2**20])
def test_the_nesting_depth_is_that_of_a_character_walk(monkeypatch, chunk):
    from posenc_gui.model import json_nesting

    monkeypatch.setattr(json_nesting, "CHUNK_BYTES", chunk)  # strings and runs of backslashes across chunks
    rng = random.Random(36)
    alphabet = ['"', "\\", "[", "]", "{", "}", "a", "é", ",", ":"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        assert nesting_depth(text.encode("utf-8")) == depth_by_walking(text), text


@pytest.mark.parametrize("text", ['{"a": "\\\\"}', '["\\"[[", [[]]]', '{"k\\\\\\"[": {"x": [1]}}', '"\\u005b"'])
def test_the_nesting_depth_of_valid_json_is_what_the_parser_builds(text):
    def parsed_depth(value) -> int:
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        return 0 if children is None else 1 + max(map(parsed_depth, children), default=0)

    assert nesting_depth(text.encode("utf-8")) == parsed_depth(json.loads(text))


READ_CONFIG = """
import sys
from posenc_gui.model import ModelFileError, open_model
try:
    open_model(sys.argv[1])
except ModelFileError as error:
    print(error)
"""


def test_a_64_mib_config_of_escaped_quotes_is_judged_without_hanging(tmp_path):
    from safetensors.numpy import save_file

    import numpy as np
    from posenc_gui.model.files import MAX_JSON_BYTES

    folder = tmp_path / "model"
    folder.mkdir()
    save_file({"wpe.weight": np.zeros((4, 4), np.float32)}, folder / "model.safetensors")
    opening = b'{"model_type": "'
    pairs = (MAX_JSON_BYTES - len(opening)) // 2
    (folder / "config.json").write_bytes(opening + b'\\"' * pairs)  # a string never closed
    assert (folder / "config.json").stat().st_size <= MAX_JSON_BYTES
    assert "config.json: it is not valid JSON" in in_a_child(READ_CONFIG, str(folder))


READ_SESSION = """
import sys
from posenc_gui.session import SessionError, parse_session
try:
    parse_session(open(sys.argv[1], "rb").read(), {})
except SessionError as error:
    print(error)
"""


def test_a_1_mib_session_of_escaped_quotes_is_judged_without_hanging(tmp_path):
    from posenc_gui.session import MAX_FILE_BYTES

    opening = b'{"format": "'
    path = tmp_path / "session.json"
    path.write_bytes(opening + b'\\"' * ((MAX_FILE_BYTES - len(opening)) // 2))
    assert "it is not JSON" in in_a_child(READ_SESSION, str(path))
