"""How deep a JSON text nests, found in linear time, before ``json.loads`` (which recurses) sees it.

A regular expression that skips JSON strings backtracks on an unclosed
string full of ``\\"`` pairs (each quote may end the string or not), so
the scan here works with plain byte replacements instead: every ``\\\\``
pair is dropped, then every ``\\"`` (an escaped quote), after which each
quote left opens or closes a string; the brackets outside strings are then
counted with NumPy, :data:`CHUNK_BYTES` at a time. The text is scanned as
its UTF-8 bytes, whose quotes, backslashes and brackets are single bytes
never part of a longer character. Time and memory are linear in the length
whatever the content.
"""

from __future__ import annotations

import numpy as np

#: Quotes and brackets counted at a time: the arrays of one chunk take a few times this.
CHUNK_BYTES = 2**20
_OTHER_BYTES = bytes(byte for byte in range(256) if byte not in b'"[]{}')
_QUOTE = ord('"')
#: Each byte's step in depth: 1 for an opening bracket, -1 for a closing one, 0 for a quote.
_STEPS = np.zeros(256, np.int8)
_STEPS[list(b"[{")], _STEPS[list(b"]}")] = 1, -1


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in the JSON ``data`` (UTF-8 bytes); brackets in strings do not count.

    For a text that is not valid JSON the result is the depth a parser
    reaches before it stops, or more; never less.
    """
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")  # a run of k backslashes leaves k mod 2
    marks = np.frombuffer(unescaped.translate(None, _OTHER_BYTES), np.uint8)  # quotes and brackets
    depth = deepest = in_string = 0
    for start in range(0, marks.size, CHUNK_BYTES):
        chunk = marks[start:start + CHUNK_BYTES]
        steps = _STEPS[chunk]
        quotes = chunk == _QUOTE
        if in_string or quotes.any():
            inside = ((np.cumsum(quotes, dtype=np.int32) + in_string) & 1).astype(bool)  # from a string's
            # opening quote to its closing one
            steps[inside] = 0
            in_string = int(inside[-1])
        levels = np.cumsum(steps, dtype=np.int32)
        deepest = max(deepest, depth + int(levels.max()))
        depth += int(levels[-1])
    return deepest
