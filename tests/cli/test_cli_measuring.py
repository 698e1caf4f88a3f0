"""What ``collisions`` and ``cache`` share: the files written beside the report (--plot,
--save-types) are checked before any work, said (``wrote FILE``) after the report, and a file that
fails at the end never costs the report. Read-only and full file systems are simulated
(tests/fakedisk.py), so these run as root too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import assert_one_line_error, run

FAKE_DISK = Path(__file__).parents[1] / "fakedisk.py"
SMALL = ("--tokenizer", "bytes", "--heads", "2")
# Each command's side outputs, and a line of its report.
COMMANDS = {
    "collisions": ((("--plot", "x.png"), ("--save-types", "x.ngtypes.npz")), "collision ratio over 2 heads"),
    "cache": ((("--plot", "x.png"),), "all layers, one cache: hit rate by budget"),
}
SIDE_OUTPUTS = [(command, *output) for command, (outputs, _) in COMMANDS.items() for output in outputs]


def on_fake_disk(root: Path, capacity: str, *args: object) -> subprocess.CompletedProcess:
    """``ngramtool ARGS...`` as if ``root`` were a file system of ``capacity`` bytes (``ro``:
    read-only)."""
    argv = [sys.executable, str(FAKE_DISK), str(root), capacity, "ngramtool", *map(str, args)]
    return subprocess.run(argv, capture_output=True, timeout=300)


@pytest.fixture(autouse=True)
def _matplotlib() -> None:
    pytest.importorskip("matplotlib")


@pytest.mark.parametrize(("command", "option", "name"), SIDE_OUTPUTS)
def test_a_read_only_directory_is_refused_before_the_input_is_read(tmp_path, command, option, name):
    bad = tmp_path / "bad.txt"  # reading it fails (exit 1): the refusal must come first
    bad.write_bytes(b"hello world\n" * 100 + b"\xc3\x28\n")
    folder = tmp_path / "ro"
    folder.mkdir()
    result = on_fake_disk(folder, "ro", command, bad, *SMALL, option, folder / name)
    assert_one_line_error(
        result,
        2,
        f"the {option} file {folder / name} cannot be written: its directory {folder} refuses new files "
        "(read-only file system): write to a writable file system",
    )
    assert result.stdout == b"" and list(folder.iterdir()) == []


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_side_outputs_that_fail_at_the_end_keep_the_report(files, tmp_path, command, as_json):
    outputs, report_line = COMMANDS[command]
    folder = tmp_path / "full"
    folder.mkdir()
    paths = [(option, folder / name) for option, name in outputs]
    options = [part for option, path in paths for part in (option, path)]
    result = on_fake_disk(
        folder, "0", command, files["a"], *SMALL, *options, *(["--json"] if as_json else [])
    )
    err = result.stderr.decode()
    for _, path in paths:
        assert_one_line_error(result, 1, f"cannot write {path}: no space left on device")
    assert err.startswith("error: ") and err.count("\n") == 1, err  # one line, no "wrote FILE"
    out = result.stdout.decode()
    if as_json:
        assert json.loads(out)["input"]["tokens"] > 0
    else:
        assert report_line in out
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("command", list(COMMANDS))
def test_written_files_are_said_on_stderr_after_the_report_unless_quiet(files, tmp_path, command):
    outputs, report_line = COMMANDS[command]
    options = [part for option, name in outputs for part in (option, tmp_path / name)]
    result = run(command, files["a"], *SMALL, *options)
    assert result.returncode == 0, result.stderr.decode()
    assert report_line in result.stdout.decode()
    said = result.stderr.decode().splitlines()[-len(outputs) :]
    assert sorted(said) == sorted(f"wrote {tmp_path / name}" for _, name in outputs)
    as_json = run(command, files["a"], *SMALL, *options, "--force", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["input"]["tokens"] > 0
    assert f"wrote {tmp_path / outputs[0][1]}" in as_json.stderr.decode()
    quiet = run(command, files["a"], *SMALL, *options, "--force", "-q")
    assert quiet.returncode == 0 and quiet.stderr == b""
