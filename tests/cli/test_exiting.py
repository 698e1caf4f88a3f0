"""The ``ngramtool`` process ends without Python's teardown once a command has returned
(:func:`ngramtool.cli.exiting.leave`), and still ends as ``sys.exit`` would: the same status,
standard output whole, ``atexit`` handlers run, threads waited for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
if mode == "thread":
    def late():
        time.sleep(0.3)
        (marks / "thread").write_text("")
    threading.Thread(target=late).start()
    leave(3)
leave({"none": None, "three": 3, "text": "went wrong"}[mode])
"""


def _leave(mode: str, marks: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(marks)], capture_output=True, text=True, timeout=60
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
