"""Declared parameters: one :class:`ParamSpec` drives validation, widgets, CLI flags, titles and file names.

A scheme lists its parameters as specs (:mod:`posenc_gui.model.schemes`);
everything that shows, parses or checks a parameter reads the spec, so a
parameter is written down once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable

from . import limits

KINDS = ("int", "real", "choice", "bool", "reals", "path", "name")
#: Most numbers a ``reals`` parameter holds (one per rotary pair of the widest head).
MAX_REALS = limits.MAX_D_MODEL // 2
#: Longest text of a ``path`` parameter (Linux's PATH_MAX).
MAX_PATH_CHARS = 4096
#: Longest text of a ``name`` parameter (a tensor's name in a checkpoint).
MAX_NAME_CHARS = 1024
#: The kinds whose value is text.
TEXT_KINDS = ("path", "name")
#: What a value of each kind is typed as, in a command line's help (``--seq-len N``); a choice's values are
#: listed by :meth:`ParamSpec.range_text`.
METAVARS = {"int": "N", "real": "X", "choice": "NAME", "bool": "BOOL", "reals": "X,X,…", "path": "PATH",
            "name": "NAME"}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a scheme.

    Parameters
    ----------
    name : str
        The keyword of :func:`~posenc_gui.model.encode` (``"base"``); the CLI
        flag is ``--`` plus the name with ``_`` as ``-``.
    kind : {"int", "real", "choice", "bool", "reals", "path", "name"}
        ``"reals"``: a tuple of at most :data:`MAX_REALS` numbers, each in
        ``low … high`` (LongRoPE's factor per pair). ``"path"``: a file or
        folder on disk, as text of at most :data:`MAX_PATH_CHARS` characters
        without NUL (``""``: none); whether it exists is known only by opening
        it, which the scheme does. ``"name"``: text of at most
        :data:`MAX_NAME_CHARS` characters without NUL, one of the names
        ``choices_of`` offers for the other options (a tensor of the model
        file named by a ``path``; ``""``: the scheme's default).
    default : object
        A valid value.
    label : str
        What the Parameters panel and figure tables call it.
    help : str
        One or two sentences: what it does and its range; tooltip and ``--help``.
    low, high : float, optional
        The allowed range of an ``int`` or ``real`` (inclusive; ``low`` is
        excluded when ``low_open``).
    choices : tuple of (value, label), optional
        The values of a ``choice`` and how each reads.
    log : bool
        Whether a slider for it runs on a log scale.
    slider : (low, high), optional
        The slider's range when it is narrower than the allowed range (a
        base up to 1e12 is typed; the slider covers 2 … 1e8).
    tied_to : str, optional
        A field of :class:`~posenc_gui.model.EncodingParams` whose value the
        app passes for it (the normalized scheme's ``length`` is the number of
        positions): no widget, no flag, the ``help`` is shown instead.
    title : callable, optional
        ``value -> str`` for figure titles, ``""`` to leave it out; by
        default ``"label value"``.
    slug : callable, optional
        ``value -> str`` for file names, ``""`` to leave it out; by default
        the first letter of the name and the value.
    shown_when : (name, values), optional
        The parameter applies only while the scheme's option ``name`` is one
        of ``values`` (a scaling type's own parameters): otherwise it keeps
        its value but has no control, title part or file-name part.
    choices_of : callable, optional
        For a ``name``: ``options -> ((value, label), ...)``, the names a
        control offers given the scheme's other options (the 2-D tensors of
        the model file); ``()`` when there are none. It may open files; it
        does not raise. The value is not checked against them here: the
        scheme refuses a name the file lacks when it is validated.
    """

    name: str
    kind: str
    default: Any
    label: str
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple[tuple[Any, str], ...] = ()
    log: bool = False
    slider: tuple[float, float] | None = None
    tied_to: str | None = None
    title: Callable[[Any], str] | None = None
    slug: Callable[[Any], str] | None = None
    shown_when: tuple[str, tuple[Any, ...]] | None = None
    choices_of: Callable[[Mapping[str, Any]], tuple[tuple[Any, str], ...]] | None = None

    def applies(self, options: Mapping[str, Any]) -> bool:
        """Whether the parameter is in use with these options (see ``shown_when``)."""
        if self.shown_when is None:
            return True
        name, values = self.shown_when
        return options.get(name) in values

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"the choice parameter {self.name!r} needs choices")
        if (self.kind == "name") != (self.choices_of is not None):
            raise ValueError(f"{self.name!r}: a name parameter needs choices_of, and only a name parameter has it")
        self.check(self.default)  # a spec whose default it refuses is a bug in the scheme module

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``--scale-base``."""
        return "--" + self.name.replace("_", "-")

    @property
    def metavar(self) -> str:
        """What the flag takes, for ``--help``: ``N``, ``X``, ``NAME``, ``BOOL``, ``X,X,…`` or ``PATH``."""
        return METAVARS[self.kind]

    def default_text(self) -> str:
        """The default in words, as :meth:`parse` reads it back: ``4,096``, ``10000``, ``halves``, ``true``;
        ``none`` for empty text or an empty list (given as ``""``)."""
        if self.kind == "bool":
            return "true" if self.default else "false"
        return self.text(self.default) or "none"

    def range_text(self) -> str:
        """The allowed values in words: ``"> 1 and ≤ 1e+12"``, ``"interleaved or halves"``."""
        if self.kind == "choice":
            values = [str(value) for value, _ in self.choices]
            return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]
        if self.kind == "bool":
            return "true or false"
        if self.kind in TEXT_KINDS:
            longest = MAX_PATH_CHARS if self.kind == "path" else MAX_NAME_CHARS
            return f"text of at most {longest:,} characters, without NUL"
        low, high = _bound(self.low, -math.inf), _bound(self.high, math.inf)
        if self.kind == "reals":
            each = f"> {low:g} and ≤ {high:g}" if self.low_open else f"{low:g}…{high:g}"
            return f"a list of at most {MAX_REALS:,} numbers, each {each}"
        if self.kind == "int":
            return f"{int(low)}…{int(high)}"
        return f"> {low:g} and ≤ {high:g}" if self.low_open else f"{low:g}…{high:g}"

    def check(self, value: object) -> Any:
        """``value`` normalized (an int, a float, a choice, a bool).

        Raises
        ------
        ValueError
            Starting with the parameter's name and stating its range.
        """
        if self.kind == "int":
            return limits.check_int(self.name, value, int(_bound(self.low, -2**63)), int(_bound(self.high, 2**63)))
        if self.kind == "real":
            return limits.check_real(self.name, value, _bound(self.low, -math.inf), _bound(self.high, math.inf),
                                     low_open=self.low_open)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise ValueError(f"{self.name} must be true or false, got {limits.shown(value)}")
        if self.kind == "reals":
            if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
                raise ValueError(f"{self.name} must be {self.range_text()}; got {limits.shown(value)}")
            if len(value) > MAX_REALS:
                raise ValueError(f"{self.name} must be {self.range_text()}; got {len(value):,} numbers")
            return tuple(limits.check_real(f"{self.name}[{index}]", item, _bound(self.low, -math.inf),
                                           _bound(self.high, math.inf), low_open=self.low_open)
                         for index, item in enumerate(value))
        if self.kind in TEXT_KINDS:
            longest = MAX_PATH_CHARS if self.kind == "path" else MAX_NAME_CHARS
            if not isinstance(value, str):
                raise ValueError(f"{self.name} must be {self.range_text()}; got {limits.shown(value)}")
            if len(value) > longest:
                raise ValueError(f"{self.name} must be {self.range_text()}; got {len(value):,} characters")
            if "\0" in value:
                raise ValueError(f"{self.name} must be {self.range_text()}; it holds a NUL character")
            return str(value)
        for choice, _ in self.choices:
            if type(value) is type(choice) and value == choice:
                return choice
        raise ValueError(f"{self.name} must be {self.range_text()}; got {limits.shown(value)}")

    def parse(self, text: str) -> Any:
        """A value typed by a user (a CLI flag, a text field), checked.

        Raises
        ------
        ValueError
            Naming the parameter and its range, for text that is no such value.
        """
        if not isinstance(text, str):
            raise ValueError(f"{self.name} must be given as text, got {limits.shown(text)}")
        if self.kind in TEXT_KINDS:  # a path or a name is the text as given: spaces may be part of it
            return self.check(text)
        stripped = text.strip()
        try:
            if self.kind == "int":
                value: Any = int(stripped.replace(",", "").replace("_", ""))
            elif self.kind == "real":
                value = float(stripped)
            elif self.kind == "reals":
                if len(stripped) > 32 * MAX_REALS:
                    raise ValueError
                value = tuple(float(item) for item in stripped.replace(",", " ").split())
            elif self.kind == "bool":
                value = {"true": True, "yes": True, "1": True, "on": True,
                         "false": False, "no": False, "0": False, "off": False}[stripped.lower()]
            else:
                value = next(choice for choice, _ in self.choices if str(choice) == stripped)
        except (ValueError, KeyError, StopIteration):
            noun = {"int": "an integer", "real": "a number", "bool": "true or false", "choice": "one of",
                    "reals": "numbers separated by commas:"}[self.kind]
            range_text = "" if self.kind == "bool" else f" {self.range_text()}"
            raise ValueError(f"{self.name} must be {noun}{range_text}, got {text!r}") from None
        return self.check(value)

    def text(self, value: Any) -> str:
        """``value`` as a figure shows it: ``"10000"``, ``"interleaved"``, ``"1,024"``."""
        if self.kind == "int":
            return f"{value:,}"
        if self.kind == "real":
            return f"{value:g}"
        if self.kind == "bool":
            return "yes" if value else "no"
        if self.kind == "reals":  # every digit: the text reads back as the same numbers
            return ", ".join(repr(item).removesuffix(".0") for item in map(float, value))
        return str(value)  # a choice, a path, a name

    def choice_label(self, value: Any) -> str:
        """How a choice reads in full (its label), or :meth:`text` for other kinds."""
        return next((label for choice, label in self.choices if choice == value), self.text(value))

    def title_part(self, value: Any) -> str:
        """The part of a figure title for ``value`` (``""``: none)."""
        return self.title(value) if self.title else f"{self.label} {self.text(value)}"

    def slug_part(self, value: Any) -> str:
        """The part of a file name for ``value`` (``""``: none); letters, digits, ``.`` and ``-`` only."""
        if self.slug:
            return self.slug(value)
        text = f"{value:g}" if isinstance(value, float) else str(value)
        return self.name[0] + "".join(c if c.isalnum() or c in ".-" else "-" for c in text)


def _bound(value: float | None, fallback: float) -> float:
    return fallback if value is None else value


class Options(Mapping):
    """An immutable, hashable mapping of parameter names to values (a scheme's options).

    Hashable so that parameters can key caches; ordered by name so that two
    equal option sets compare and hash equal however they were built.
    """

    __slots__ = ("_items",)

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._items: tuple[tuple[str, Any], ...] = tuple(sorted((values or {}).items()))

    def __getitem__(self, name: str) -> Any:
        for key, value in self._items:
            if key == name:
                return value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Options):
            return self._items == other._items
        return isinstance(other, Mapping) and dict(self._items) == dict(other)

    def __repr__(self) -> str:
        return f"Options({dict(self._items)!r})"
