"""Whether two requests to the compute service compute the same (:func:`same_request`).

The service does not run a request again while an equal one is under way
for its key, and a panel that keeps its results (``Panel.keeps_results``)
shows a kept one for an equal request.
"""

from __future__ import annotations

import functools
from typing import Any


def same_request(one: Any, other: Any) -> bool:
    """Whether two submitted functions compute the same: :class:`~.compute.ModelJob` s (or argument-less
    partials of one) of one function on equal arguments. Arrays are equal only as the same object (comparing
    them would cost what the dedup saves)."""
    one, other = (job.func if isinstance(job, functools.partial) and not job.args and not job.keywords else job
                  for job in (one, other))
    from .compute import ModelJob  # the module that imports this one

    if not (isinstance(one, ModelJob) and isinstance(other, ModelJob)) or one.function is not other.function:
        return False
    if len(one.args) != len(other.args):
        return False
    try:
        return all(a is b or (type(a) is type(b) and not hasattr(a, "__array__") and bool(a == b))
                   for a, b in zip(one.args, other.args))
    except (TypeError, ValueError):  # arguments that do not compare as a whole
        return False
