"""NumPy's BLAS with one thread: set from the environment before NumPy loads, or limited once it has.

The window's worker threads already use both cores of a small machine; a
multi-threaded BLAS on top of them spin-waits between calls (OpenBLAS
busy-polls) and takes the CPU from the GUI thread. No Qt here: the entry
point calls :func:`start_blas_with_one_thread` before anything imports Qt
or NumPy.
"""

from __future__ import annotations

import os
import sys

#: The thread-count variables of the BLAS libraries NumPy is built with (OpenBLAS, MKL, BLIS).
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
#: Whether :func:`start_blas_with_one_thread` set them before NumPy loaded.
_started_with_one_thread = False


def start_blas_with_one_thread() -> None:
    """Have NumPy's BLAS start with one thread, when NumPy is not loaded yet and the user set no other count.

    The window's entry point calls it first: :func:`limit_blas_threads` then
    has nothing to do (threadpoolctl's import and library scan cost ~4 ms of
    start-up). The worker process inherits the variables.
    """
    global _started_with_one_thread
    if "numpy" in sys.modules or any(os.environ.get(name, "1") != "1" for name in BLAS_THREAD_VARIABLES):
        return
    os.environ.update(dict.fromkeys(BLAS_THREAD_VARIABLES, "1"))
    _started_with_one_thread = True


def limit_blas_threads() -> None:
    """One BLAS thread per worker (already so when :func:`start_blas_with_one_thread` ran before NumPy loaded)."""
    if _started_with_one_thread:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
