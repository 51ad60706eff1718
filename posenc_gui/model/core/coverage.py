"""What a verdict was established over, and the words that say so.

Every ✓ or ✗ the app shows or exports carries its coverage: the positions,
offsets, keys or pairs it was established over, and whether it is proved
(every element evaluated exactly, or rigorously bounded between samples) or
only sampled. A ✓ is shown only for a claim proved over the whole range it
names; a ✗ needs only its witness (one counterexample proves it). Panels,
the Scorecard, the walkthrough and the exports build their phrases here so
that the same fact reads the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Method = Literal["exact", "bounded", "closed form", "sampled"]
METHODS = ("exact", "bounded", "closed form", "sampled")

CHECK = "✓"
CROSS = "✗"
UNSETTLED = "–"


def span(first: int, last: int) -> str:
    """``first…last`` with thousands separators (``"0…1,023"``); one number for a single element."""
    return f"{first:,}" if first == last else f"{first:,}…{last:,}"


@dataclass(frozen=True)
class Coverage:
    """The elements a verdict was established over.

    Parameters
    ----------
    quantity
        Plural noun for the elements, e.g. ``"positions"``, ``"offsets"``,
        ``"keys n ≤ m"``, ``"pairs of positions"``.
    first, last
        The inclusive range of the elements examined.
    method
        ``"exact"``: every element in ``first…last`` evaluated;
        ``"bounded"``: every element covered by a rigorous bound between
        evaluated samples; ``"closed form"``: an identity or inequality that
        holds for every element (e.g. a dot product is symmetric); ``"sampled"``: only ``samples`` elements of the
        range evaluated, so nothing is proved for the others.
    samples
        How many elements were evaluated (required for ``"sampled"``).
    """

    quantity: str
    first: int
    last: int
    method: Method = "exact"
    samples: int | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, not {self.method!r}")
        if self.last < self.first:
            raise ValueError(f"last ({self.last}) must be ≥ first ({self.first})")
        if self.method == "sampled" and (self.samples is None or self.samples < 1):
            raise ValueError("a sampled coverage needs the number of samples (≥ 1)")

    @property
    def proved(self) -> bool:
        """Whether the verdict holds for every element of ``first…last`` (exact, bounded or closed form)."""
        return self.method != "sampled"

    def covers(self, first: int, last: int) -> bool:
        """Whether the verdict is proved over all of ``first…last``."""
        return self.proved and self.first <= first and last <= self.last

    def phrase(self) -> str:
        """In words, e.g. ``"proved over offsets 0…65,535"`` or
        ``"checked on 512 sampled offsets in 0…1,048,575"``."""
        where = f"{self.quantity} {span(self.first, self.last)}"
        if self.method == "exact":
            return f"proved over {where}"
        if self.method == "bounded":
            return f"proved over {where} (bounded between samples)"
        if self.method == "closed form":
            return f"proved over {where} (closed form)"
        return f"checked on {self.samples:,} sampled {self.quantity} in {span(self.first, self.last)}"

    def extent(self) -> str:
        """Where a maximum (or a count) was taken, in words: ``"over positions 0…1,023"``, or
        ``"over 512 sampled positions in 0…1,048,575"`` (the largest of a sample, not of the range)."""
        if self.method == "sampled":
            return f"over {self.samples:,} sampled {self.quantity} in {span(self.first, self.last)}"
        how = {"bounded": " (bounded between samples)", "closed form": " (closed form)"}.get(self.method, "")
        return f"over {self.quantity} {span(self.first, self.last)}{how}"

    def as_dict(self) -> dict:
        """A JSON-ready record for exports."""
        return {"quantity": self.quantity, "first": self.first, "last": self.last, "method": self.method,
                "samples": self.samples, "proved": self.proved, "phrase": self.phrase()}


@dataclass(frozen=True)
class Verdict:
    """A yes/no claim with what it was established over.

    Parameters
    ----------
    holds
        The answer found over ``coverage``.
    coverage
        What was examined.
    claim
        The range the claim is about, ``(first, last)`` inclusive (e.g. 0…N−1).
    witness
        For a claim that fails: the counterexample in words (e.g.
        ``"PE(0) = PE(4,096)"``). A ✗ with a witness is proved whatever the
        coverage, since one counterexample suffices.
    """

    holds: bool
    coverage: Coverage
    claim: tuple[int, int]
    witness: str | None = None

    @property
    def settled(self) -> bool:
        """Whether the answer is proved for the whole claimed range (✓), or refuted by a witness (✗)."""
        if not self.holds:
            return self.witness is not None or self.coverage.proved
        return self.coverage.covers(*self.claim)

    @property
    def mark(self) -> str:
        """``✓`` or ``✗`` when settled, else ``–`` (nothing claimed beyond the range examined)."""
        if not self.settled:
            return UNSETTLED
        return CHECK if self.holds else CROSS

    def cell(self, holds_words: str, fails_words: str) -> str:
        """Text for a table cell or caption, the coverage in the same words.

        ``holds_words`` / ``fails_words`` name the property, e.g. ``"unique"``
        / ``"repeats"``. A settled ✓ names the claimed range it is proved
        over; an unsettled answer names the range actually examined and has
        no ✓.
        """
        if self.holds:
            if self.settled:
                return f"{CHECK} {holds_words}: {self.coverage.phrase()}"
            return f"{UNSETTLED} {holds_words} only as far as {self.coverage.phrase()} (not the whole of {span(*self.claim)})"
        detail = f" ({self.witness})" if self.witness else ""
        if self.settled:
            return f"{CROSS} {fails_words}{detail}"
        return f"{UNSETTLED} {fails_words}{detail}, {self.coverage.phrase()}"

    def as_dict(self) -> dict:
        """A JSON-ready record for exports."""
        return {"holds": self.holds, "settled": self.settled, "mark": self.mark, "claim": list(self.claim),
                "witness": self.witness, "coverage": self.coverage.as_dict()}
