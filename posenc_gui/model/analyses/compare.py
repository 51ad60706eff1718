"""A/B comparison of two setups: the difference B − A of a matrix both show, on the cells both have.

Panels show a matrix over sampled row and column indices (positions,
dimensions, query and key positions; see :mod:`~posenc_gui.model.core.sampling`).
Two setups can differ in their sizes (d_model 512 against 256) or in their
sampling; the difference is taken only where both matrices have a value for
the same row index and the same column index, and says how much of each
that is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: The ways panels show a comparison, by the name session files and the command line use.
COMPARE_MODES: dict[str, str] = {
    "side_by_side": "A and B side by side",
    "difference": "A, B and B − A (matrices)",
    "overlay": "A and B side by side, A dashed in B's line plots",
}
DEFAULT_COMPARE_MODE = "side_by_side"


class ShownMatrix(NamedTuple):
    """A matrix as a panel shows it: its values and the index of each row and column.

    Attributes
    ----------
    values : ndarray, shape (len(rows), len(columns))
        ``−inf`` marks a masked cell (a key a causal query does not see).
    rows, columns : ndarray of int64
        Increasing indices of the rows and columns in the panel's own terms.
    row_label, column_label : str
        What the indices are ("position", "dimension", "query position", …).
    """

    values: np.ndarray
    rows: np.ndarray
    columns: np.ndarray
    row_label: str
    column_label: str


@dataclass(frozen=True)
class MatrixDifference:
    """B − A over the rows and columns both matrices show.

    Attributes
    ----------
    values : ndarray, shape (len(rows), len(columns))
        ``b − a`` per common cell; NaN where either cell is masked (or not finite).
    rows, columns : ndarray of int64
        The common row and column indices, increasing.
    regular : bool
        Whether ``rows`` and ``columns`` are each evenly spaced (a view can draw
        them as cells of one width); false when A and B sample differently.
    max_abs : float
        The largest ``|b − a|`` over the finite cells (0 when there are none).
    at : tuple of int or None
        ``(row, column)`` index of that largest difference; None when no cell is finite.
    rms : float
        Root mean square of the finite differences (0 when there are none).
    a_shape, b_shape : tuple of int
        The shapes of the matrices compared, for saying what was left out.
    """

    values: np.ndarray
    rows: np.ndarray
    columns: np.ndarray
    regular: bool
    max_abs: float
    at: tuple[int, int] | None
    rms: float
    a_shape: tuple[int, int]
    b_shape: tuple[int, int]

    @property
    def levels(self) -> tuple[float, float]:
        """A colour scale centred at 0 and symmetric: (−max |B − A|, +max |B − A|), never empty."""
        half = self.max_abs if self.max_abs > 0 else 1.0
        return -half, half

    def describe(self) -> str:
        """One line: the size compared, the largest difference and where, the RMS."""
        size = f"{self.rows.size:,} × {self.columns.size:,} cells both show"
        if self.at is None:
            return f"B − A over {size}: no finite cell in both."
        if self.max_abs == 0:
            return f"B − A over {size}: A and B are equal there."
        return (f"B − A over {size}: max |B − A| = {self.max_abs:.3g} at ({self.at[0]:,}, {self.at[1]:,}), "
                f"RMS {self.rms:.3g}.")


def _evenly_spaced(indices: np.ndarray) -> bool:
    return indices.size < 3 or bool(np.all(np.diff(indices) == indices[1] - indices[0]))


def _checked(name: str, shown: ShownMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values = np.asarray(shown.values, dtype=np.float64)
    rows = np.asarray(shown.rows, dtype=np.int64)
    columns = np.asarray(shown.columns, dtype=np.int64)
    if values.ndim != 2 or values.shape != (rows.size, columns.size):
        raise ValueError(f"{name}: a matrix of {rows.size} rows × {columns.size} columns was expected, "
                         f"got shape {values.shape}")
    for axis, indices in (("rows", rows), ("columns", columns)):
        if indices.size > 1 and not np.all(np.diff(indices) > 0):
            raise ValueError(f"{name}: the {axis}' indices must increase")
    return values, rows, columns


def matrix_difference(a: ShownMatrix, b: ShownMatrix) -> MatrixDifference:
    """B − A on the cells whose row index and column index both matrices show.

    Parameters
    ----------
    a, b : ShownMatrix
        The matrices of setups A and B with their row and column indices.

    Returns
    -------
    MatrixDifference

    Raises
    ------
    ValueError
        When a matrix's shape does not match its indices, the indices do not
        increase, or the two have no row or no column index in common.
    """
    a_values, a_rows, a_columns = _checked("A", a)
    b_values, b_rows, b_columns = _checked("B", b)
    rows, a_r, b_r = np.intersect1d(a_rows, b_rows, assume_unique=True, return_indices=True)
    columns, a_c, b_c = np.intersect1d(a_columns, b_columns, assume_unique=True, return_indices=True)
    if rows.size == 0 or columns.size == 0:
        raise ValueError(f"A and B show no {a.row_label if rows.size == 0 else a.column_label} in common: "
                         "zoom both to the same range")
    a_common = a_values[np.ix_(a_r, a_c)]
    b_common = b_values[np.ix_(b_r, b_c)]
    finite = np.isfinite(a_common) & np.isfinite(b_common)
    with np.errstate(invalid="ignore", over="ignore"):
        values = np.where(finite, b_common - a_common, np.nan)
    finite &= np.isfinite(values)  # two values near the float64 limit can overflow their difference
    if finite.any():
        magnitude = np.where(finite, np.abs(values), -1.0)
        flat = int(np.argmax(magnitude))
        row, column = np.unravel_index(flat, values.shape)
        max_abs = float(magnitude.flat[flat])
        at = (int(rows[row]), int(columns[column]))
        rms = float(np.sqrt(np.mean(np.square(values[finite]))))
    else:
        max_abs, at, rms = 0.0, None, 0.0
    return MatrixDifference(values=values, rows=rows, columns=columns,
                            regular=_evenly_spaced(rows) and _evenly_spaced(columns),
                            max_abs=max_abs, at=at, rms=rms,
                            a_shape=a_values.shape, b_shape=b_values.shape)
