"""One scheme measured as the walkthrough and the Scorecard's pinned row show it: :func:`measure_scheme`.

Apart from :mod:`.scorecard` so that the walkthrough, which is in the window's
first paint, does not import the Scorecard's analyses (uniqueness, linear
relation, norms: about 5 ms) before its first measurement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.params import EncodingParams
    from .scorecard import SchemeScore


def measure_scheme(params: EncodingParams, unique_work: int | None = None) -> tuple[SchemeScore | None, Any]:
    """One scheme measured as the walkthrough shows it: its Scorecard row and its logit's properties.

    Parameters
    ----------
    params : EncodingParams
        The scheme and its sizes.
    unique_work : int, optional
        The uniqueness check's budget (:func:`~.scorecard.score_scheme`); default the Scorecard's
        :data:`~.scorecard.UNIQUE_WORK`.

    Returns
    -------
    score : SchemeScore or None
        :func:`~.scorecard.score_scheme` for a scheme the Scorecard measures
        (:func:`~.scorecard.scoreable_schemes`); None for one that gives neither a table nor a rotation's
        angles (a bias).
    logit : LogitProperties or str
        :func:`~.logit_properties.logit_properties`, or why they cannot be measured.
    """
    from ..attention.logit_properties import logit_properties
    from ..core.params import check_params
    from .scorecard import UNIQUE_WORK, score_scheme, scoreable_schemes

    params = check_params(params)
    work = UNIQUE_WORK if unique_work is None else unique_work
    score = score_scheme(params, work) if params.scheme in scoreable_schemes() else None
    try:
        logit: Any = logit_properties(params)
    except ValueError as error:
        logit = str(error)
    return score, logit
