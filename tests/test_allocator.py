"""Large arrays reuse memory the allocator kept (see ``tune_memory_allocator``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from waiting import TIMEOUT_S

# A worker thread allocates, touches and frees arrays of 12-24 MiB, as the
# similarity matrix's worker does at d_model 8192, and prints the page
# faults of the rounds after the first.
REUSE_LARGE_ARRAYS = """
import resource, sys, threading
import numpy as np
import posenc_gui
if sys.argv[1] == "tuned":
    assert posenc_gui.tune_memory_allocator()
sizes_mib = [12, 16, 20, 24]
def work(out):
    for mib in sizes_mib:
        block = np.ones(mib * 2**17)
        del block
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        for mib in sizes_mib:
            block = np.ones(mib * 2**17)
            del block
    out.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
out = []
worker = threading.Thread(target=work, args=(out,))
worker.start()
worker.join()
print(out[0])
"""


def page_faults(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", REUSE_LARGE_ARRAYS, mode], capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tunes glibc's malloc (Linux)")
def test_large_arrays_reuse_kept_memory_once_the_allocator_is_tuned():
    # The control: by default each block is mapped afresh and faulted in page by page.
    assert page_faults("default") > 1000
    assert page_faults("tuned") < 50
