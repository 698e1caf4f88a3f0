"""What the command line does with the terminal: a reader that goes away, a closed standard output,
and control characters in the text it shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, NGRAMTOOL

READER_GONE = 141


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A text of ~40 KB and its index. Its byte ids, printed (~140 KB), and anything longer fill a
    pipe's buffer (64 KB), so that a reader that stops early always stops the writer."""
    folder = tmp_path_factory.mktemp("terminal")
    (folder / "t.txt").write_text(CORPUS.read_text(encoding="utf-8")[:40000], encoding="utf-8")
    made = subprocess.run(
        [*NGRAMTOOL, "hash", "t.txt", "-o", "t.ngidx", "-q", "--tokenizer", "bytes"], cwd=folder, timeout=120
    )
    assert made.returncode == 0
    return folder


def run_into_closed_pipe(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run with standard output a pipe whose reader has already gone: the first write fails."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [*NGRAMTOOL, *args], stdout=writer, stderr=subprocess.PIPE, cwd=cwd, timeout=120
        )
    finally:
        os.close(writer)


def run_piped(command: str, reader: str, cwd: Path) -> tuple[int, bytes]:
    """``ngramtool COMMAND | READER`` in bash: ngramtool's exit status and its stderr."""
    script = (
        f"{sys.executable} -m ngramtool {command} 2>err.txt | {reader} >/dev/null; echo ${{PIPESTATUS[0]}}"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, cwd=cwd, timeout=120, check=True)
    return int(done.stdout), (cwd / "err.txt").read_bytes()


@pytest.mark.parametrize(
    "args",
    [
        ["hash", "t.txt", "-o", "-", "--tokenizer", "bytes"],
        ["hash", "t.txt", "-o", "out.ngidx", "--tokenizer", "bytes", "--json", "--force"],
        ["tokenize", "t.txt", "--tokenizer", "bytes"],
        ["tokenize", "t.txt", "--show", "--tokenizer", "bytes"],
        ["tokenize", "t.txt", "--json", "--tokenizer", "bytes"],
        ["explain", "the horse", "--tokenizer", "bytes"],
        ["explain", "the horse", "--tokenizer", "bytes", "--json"],
        ["vocab", "--tokenizer", "bytes"],
        ["vocab", "--tokenizer", "bytes", "--json"],
        ["inspect", "t.ngidx"],
        ["collisions", "t.ngidx", "--json"],
        ["collisions", "t.ngidx"],
        ["size"],
    ],
    ids=" ".join,
)
def test_a_reader_that_went_away_ends_every_command_quietly_with_141(folder, args):
    result = run_into_closed_pipe(args, folder)
    assert result.returncode == READER_GONE, result.stderr.decode()
    assert result.stderr == b""  # no message, no traceback, no "Exception ignored" at exit


@pytest.mark.parametrize(
    "command, reader",
    [
        ("hash t.txt -o - --tokenizer bytes", "head -c 100"),
        ("tokenize t.txt --tokenizer bytes", "head -c 100"),
        ("tokenize t.txt --doc-sep . --tokenizer bytes", "head -1"),  # one line per document
        ("tokenize t.txt --show --limit 20000 --tokenizer bytes", "head -1"),
        ('explain "$(head -c 3000 t.txt)" --limit 0 --heads 1 --tokenizer bytes', "head -1"),
    ],
)
def test_head_stops_reading_and_the_command_exits_quietly(folder, command, reader):
    status, err = run_piped(command, reader, folder)
    assert status == READER_GONE, err.decode()
    assert err == b""


def test_a_stream_cut_short_by_its_reader_leaves_no_partial_outputs(folder, tmp_path):
    (tmp_path / "t.txt").write_bytes((folder / "t.txt").read_bytes())
    command = "hash t.txt -o - --tokenizer bytes --save-tokens saved.npy"
    status, err = run_piped(command, "head -c 100", tmp_path)
    assert status == READER_GONE and err == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["err.txt", "t.txt"]  # no saved.npy, no .partial


@pytest.mark.parametrize(
    "command",
    ["hash t.txt -o - --tokenizer bytes", "tokenize t.txt --tokenizer bytes", "vocab --tokenizer bytes"],
)
def test_a_closed_stdout_is_a_one_line_error_before_any_work(folder, tmp_path, command):
    (tmp_path / "t.txt").write_bytes((folder / "t.txt").read_bytes())
    done = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m ngramtool {command} >&-"], capture_output=True, cwd=tmp_path
    )
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert err.startswith("error: standard output is closed (>&-)") and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


HOSTILE = "red \x1b[31mALERT\x1b[0m\x1b]0;title\x07 back\rX del\x7f c1\x9b bidi\u202eevil\u202c end\n"


def test_tokenize_show_escapes_control_characters(tmp_path):
    (tmp_path / "h.txt").write_text(HOSTILE, encoding="utf-8")
    result = subprocess.run(
        [*NGRAMTOOL, "tokenize", "h.txt", "--show", "--tokenizer", "bytes"], capture_output=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr.decode()
    shown = result.stdout.decode()
    for raw in ("\x1b", "\x07", "\r", "\x7f", "\x9b", "\u202e", "\u202c"):
        assert raw not in shown
    first_line = shown.splitlines()[0]
    assert "|\\x1b|[|3|1|m|A|L|E|R|T|" in first_line and "|\\r|X|" in first_line and "|\\x7f|" in first_line


def test_json_output_escapes_what_json_leaves_raw(folder, tmp_path):
    name = "out del\x7f c1\x9b bidi\u202elive\u202c.ngidx"  # -o echoes it in the JSON summary
    result = subprocess.run(
        [*NGRAMTOOL, "hash", str(folder / "t.txt"), "-o", name, "--json", "--tokenizer", "bytes"],
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert not any(ch in out for ch in "\x7f\x9b\u202e\u202c")
    assert "del\\u007f c1\\u009b bidi\\u202elive\\u202c" in out
    assert json.loads(out)["output"] == name  # the same JSON


def test_error_messages_escape_control_characters_from_the_input(tmp_path):
    result = subprocess.run(
        [*NGRAMTOOL, "tokenize", "missing\x1b[2Jname.txt"], capture_output=True, cwd=tmp_path, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.decode().strip() == "error: input file not found: missing\\x1b[2Jname.txt"


def test_a_binary_stream_is_refused_on_a_terminal(tmp_path):
    """``hash -o -`` with standard output on a terminal would write the binary stream over the
    screen (and the progress bar): refused, as gzip and zstd refuse it, before any work."""
    import pty

    (tmp_path / "x.txt").write_text("some text")
    main, terminal = pty.openpty()
    try:
        result = subprocess.run(
            [*NGRAMTOOL, "hash", "x.txt", "-o", "-"], stdout=terminal, stderr=subprocess.PIPE, cwd=tmp_path
        )
    finally:
        os.close(terminal)
        os.close(main)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert "error: -o - writes a binary stream to standard output, which is a terminal" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
