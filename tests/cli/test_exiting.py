"""The ``ngramtool`` process ends without Python's teardown once a command has returned
(:func:`ngramtool.cli.exiting.leave`), and still ends as ``sys.exit`` would: the same status,
standard output whole, ``atexit`` handlers run, threads waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run

SCRIPT = """
import atexit, sys, threading, time
from pathlib import Path
from ngramtool.cli.exiting import leave

mode, marks = sys.argv[1], Path(sys.argv[2])

class Torn:
    def __del__(self):
        (marks / "torn down").write_text("")

kept = Torn()  # Python's teardown would call __del__; leave skips it
atexit.register(lambda: (marks / "atexit").write_text(""))
if mode == "lines":
    for i in range(200_000):
        print(i)
    leave(0)
if mode == "late signal":
    import os, signal
    from ngramtool.util import signals
    signals.install()
    # Runs first (last registered), once the command has ended: the signal lands in the sleep.
    atexit.register(lambda: (os.kill(os.getpid(), signal.SIGTERM), time.sleep(0.3)))
    leave(0)
if mode == "full stdout":
    print("more than the device takes")
    leave(3)  # the failed flush overrides it, as in Python's exit
if mode == "thread":
    def late():
        time.sleep(0.3)
        (marks / "thread").write_text("")
    threading.Thread(target=late).start()
    leave(3)
leave({"none": None, "three": 3, "text": "went wrong"}[mode])
"""


def _leave(mode: str, marks: Path, **streams: object) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(marks)],
        **(streams or {"capture_output": True}),  # type: ignore[arg-type]
        text=True,
        timeout=60,
        env=env,
    )


def test_the_status_is_what_sys_exit_gives(tmp_path):
    assert _leave("none", tmp_path).returncode == 0
    assert _leave("three", tmp_path).returncode == 3
    text = _leave("text", tmp_path)
    assert (text.returncode, text.stderr) == (1, "went wrong\n")


def test_standard_output_is_whole_and_atexit_handlers_run_but_nothing_is_torn_down(tmp_path):
    done = _leave("lines", tmp_path)
    assert done.returncode == 0
    assert done.stdout.split() == [str(i) for i in range(200_000)]
    assert (tmp_path / "atexit").exists()
    assert not (tmp_path / "torn down").exists()


def test_a_running_thread_is_waited_for_as_python_would(tmp_path):
    done = _leave("thread", tmp_path)
    assert done.returncode == 3
    assert (tmp_path / "thread").exists() and (tmp_path / "atexit").exists()


def test_the_command_line_keeps_its_statuses_and_output(tmp_path):
    assert run("--version").stdout.decode().startswith("ngramtool ")
    shown = run("spec", "show", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["max_ngram"] == 3
    assert run("hash", tmp_path / "missing.txt", "-o", tmp_path / "x.ngidx").returncode == 2


def test_a_signal_after_the_command_ended_changes_nothing(tmp_path):
    done = _leave("late signal", tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "atexit").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_that_cannot_be_flushed_is_status_120_as_in_python(tmp_path):
    with open("/dev/full", "w") as full:
        done = _leave("full stdout", tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 120


def test_a_profiler_gets_python_s_whole_exit_and_writes_its_results(tmp_path):
    profile = tmp_path / "version.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "ngramtool", "--version"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("ngramtool ")
    assert profile.stat().st_size > 0
