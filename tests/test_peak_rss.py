"""A process's peak memory is its own (ngramtool.util.profiling.peak_rss_bytes): a child started
by a large parent does not report the parent's peak, as getrusage's ru_maxrss does on Linux."""

from __future__ import annotations

import subprocess
import sys

import pytest

PARENT = """
import subprocess, sys
import numpy as np
big = np.ones(300 * 2**20 // 8)  # 300 MiB touched, then freed before the child starts
del big
child = "from ngramtool.util.profiling import peak_rss_bytes; print(peak_rss_bytes())"
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: VmHWM")
def test_a_child_of_a_large_parent_reports_its_own_peak():
    done = subprocess.run([sys.executable, "-c", PARENT], capture_output=True, text=True, check=True)
    assert int(done.stdout) < 200 * 2**20  # the child holds about 30 MiB; the parent held 330


TOUCHES = """
import numpy as np
from ngramtool.util.profiling import peak_rss_bytes
block = np.ones(max(peak_rss_bytes(), 64 * 2**20) // 8 + 2**20)  # more than the peak so far, touched
print(peak_rss_bytes() >= block.nbytes)
"""


def test_the_peak_follows_what_this_process_touches():
    """In a fresh process: in this one the peak so far depends on the tests that ran before."""
    done = subprocess.run([sys.executable, "-c", TOUCHES], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


RENAMED = """
import ctypes
from ngramtool.util.profiling import peak_rss_bytes
ctypes.CDLL(None).prctl(15, b"\\xc3\\xb1gram\\xff", 0, 0, 0)  # PR_SET_NAME: not ASCII, not UTF-8
assert open("/proc/self/status", "rb").read().startswith(b"Name:\\t\\xc3\\xb1gram\\xff")
print(peak_rss_bytes())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: prctl")
def test_a_process_named_in_any_bytes_reads_its_peak():
    done = subprocess.run([sys.executable, "-c", RENAMED], capture_output=True, text=True, check=True)
    assert int(done.stdout) > 0
