"""Title parts of the scaling types' parameters: a figure's title names what differs from Hugging Face's default."""

from __future__ import annotations

from collections.abc import Callable


def unless(default: float, label: str) -> Callable[[float], str]:
    """A title part that leaves out Hugging Face's default."""
    return lambda value: "" if value == default else f"{label} {value:g}"


def factors_title(name: str) -> Callable[[tuple[float, ...]], str]:
    """A title part for a list of per-pair factors: their range (the list itself is in the exported JSON)."""
    return lambda value: "" if not value else f"{name} {min(value):g}…{max(value):g}"
