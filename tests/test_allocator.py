"""Large blocks given back when freed (ngramtool.util.allocator): set on glibc, left to the user
where the environment tunes malloc already. Each case runs in a child process, since the setting
lasts for the process."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only"
)
PROBE = "from ngramtool.util.allocator import unpool_large_blocks; print(unpool_large_blocks())"


def _clean_env() -> dict[str, str]:
    """This environment without malloc's own settings."""
    clean = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    clean.pop("GLIBC_TUNABLES", None)
    return clean


def _probe(**env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env={**_clean_env(), **env}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_large_blocks_are_unpooled_on_glibc():
    assert _probe() == "True"


FREED = """
import sys
import numpy as np
from ngramtool.util.allocator import unpool_large_blocks

def rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096

if sys.argv[1] == "unpooled":
    assert unpool_large_blocks()
first = np.ones(3 << 20)  # 24 MB, mmapped and freed: glibc raises its threshold to 24 MB
del first
block = np.ones(2 << 20)  # 16 MB
before = rss()
del block
print(before - rss())
"""


def test_a_freed_block_is_given_back_only_when_unpooled():
    """The memory of a freed 16 MB array goes back to the system with the setting; without it,
    glibc keeps it in its heap (the retention that held 55-80 MB of collisions' peak)."""
    given_back = {}
    for mode in ("unpooled", "default"):
        done = subprocess.run(
            [sys.executable, "-c", FREED, mode], capture_output=True, text=True, check=True, env=_clean_env()
        )
        given_back[mode] = int(done.stdout)
    assert given_back["unpooled"] >= 15 << 20
    assert given_back["default"] < 1 << 20


@pytest.mark.parametrize(
    "env",
    [
        {"MALLOC_MMAP_THRESHOLD_": "4194304"},
        {"MALLOC_ARENA_MAX": "2"},
        {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"},
    ],
)
def test_a_user_tuned_malloc_is_left_alone(env):
    assert _probe(**env) == "False"
