"""The layers point one way: no import cycle among ngramtool's modules (imports inside functions
included), the on-disk formats never reach up to the stages that make ids, and reading a stream or
an index does not load the tokenizer machinery."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from ngramtool import NgramHashMapping

PACKAGE = REPO / "ngramtool"
# What the on-disk formats never import: the stages that make ids (and what lies above them).
FORMATS_MAY_NOT_IMPORT = ("tokenizers", "inputs", "model", "run", "analysis", "tools", "api", "cli")


def read_layers() -> tuple[tuple[str, ...], ...]:
    """The layers, bottom up, as docs/architecture.md's layer table names them: a module imports
    only from its own layer or below."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = page.split("<!-- layers: tests/test_layers.py reads this block -->")[1].split("```")[1]
    layers = []
    for line in block.splitlines():
        found = re.match(r"^(\d+)\s+(\w+(?:,\s*\w+)*)", line)
        if found:
            assert int(found.group(1)) == len(layers), line
            layers.append(tuple(name.strip() for name in found.group(2).split(",")))
    return tuple(layers)


LAYERS = read_layers()


def layer_of(module: str) -> int:
    """The layer of a module: the layer of the longest name that is it or its package."""
    name = module.removeprefix("ngramtool.")
    matches = [
        (len(prefix), rank)
        for rank, prefixes in enumerate(LAYERS)
        for prefix in prefixes
        if name == prefix or name.startswith(prefix + ".")
    ]
    assert matches, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return max(matches)[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(dangling: set[str] | None = None) -> dict[str, set[str]]:
    """Each ngramtool module -> the ngramtool modules it imports anywhere in its code (imports of
    ngramtool modules that do not exist are added to ``dangling``)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from pkg import submodule` imports the submodule; anything else comes from pkg
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            edges.update(target for target in targets if target in modules and target != name)
            if dangling is not None:
                dangling.update(t for t in targets if t.split(".")[0] == "ngramtool" and t not in modules)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert (
        "ngramtool.hashing.backends.reference" in graph["ngramtool.tools.benchmarking"]
    )  # imported inside a function
    assert "ngramtool.inputs.text" in graph["ngramtool.inputs"]  # `from . import text`
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_module_imports_itself_back():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_import_names_a_module_of_the_package():
    dangling: set[str] = set()
    import_graph(dangling)
    modules = {module_name(path) for path in PACKAGE.rglob("*.py")}
    for folder in ("tests", "benchmarks", "examples"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                dangling.update(n for n in names if n.split(".")[0] == "ngramtool" and n not in modules)
    assert not dangling, f"imports of modules that do not exist: {sorted(dangling)}"


def test_every_module_imports_only_from_its_layer_or_below():
    for name, edges in import_graph().items():
        if name == "ngramtool":  # the package's names are imported lazily, on first use
            continue
        upward = sorted(edge for edge in edges if layer_of(edge) > layer_of(name))
        assert not upward, f"{name} (layer {layer_of(name)}) imports from above: {upward}"


def test_formats_import_no_stage_that_makes_ids():
    graph = import_graph()
    for name, edges in graph.items():
        if name.startswith("ngramtool.formats"):
            above = sorted(edge for edge in edges if edge.split(".")[1] in FORMATS_MAY_NOT_IMPORT)
            assert not above, f"{name} imports {above}"
    assert "ngramtool.formats.dataset" not in graph["ngramtool.formats.index"]  # a dataset is made of indexes


def test_the_cli_is_the_only_user_of_typer_and_rich():
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        names |= {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        }
        assert not names & {"typer", "rich"}, path


@pytest.mark.parametrize(
    "code",
    [
        "from ngramtool import read_stream\nlist(read_stream(open(sys.argv[1], 'rb')))",
        "import ngramtool\nindex = ngramtool.open_index(sys.argv[2])\nindex.window(0, 3)",
    ],
)
def test_reading_a_stream_or_an_index_loads_no_tokenizer_machinery(tmp_path, code):
    from ngramtool import hash_files

    (tmp_path / "t.txt").write_text("a short text to read back")
    stream = tmp_path / "t.stream"
    result = subprocess.run(
        [sys.executable, "-m", "ngramtool", "hash", str(tmp_path / "t.txt"), "-o", "-", "-t", "bytes"],
        capture_output=True,
        check=True,
    )
    stream.write_bytes(result.stdout)
    hash_files(tmp_path / "t.txt", tmp_path / "t.ngidx", mapping=NgramHashMapping.build("bytes"))
    check = (
        "import sys\n"
        + code
        + "\nloaded = sorted(m for m in ('unicodedata2', 'tiktoken', 'tokenizers', 'ngramtool.tokenizers')"
        " if m in sys.modules)\nassert not loaded, loaded"
    )
    done = subprocess.run(
        [sys.executable, "-c", check, str(stream), str(tmp_path / "t.ngidx")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_no_module_writes_the_environment():
    """Settings travel as values (the mapping's engine, the option groups); the environment is
    read at the edge (a CLI option's envvar), never written: a write would leak into every later
    call of the process and every process it starts."""
    environ = ("os.environ", "environ")
    calls = {f"{name}.{verb}" for name in environ for verb in ("setdefault", "update", "pop", "clear")}
    calls |= {"os.putenv", "os.unsetenv", "putenv", "unsetenv"}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
                targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
                written = any(
                    isinstance(t, ast.Subscript) and ast.unparse(t.value) in environ for t in targets
                )
            else:
                written = isinstance(node, ast.Call) and ast.unparse(node.func) in calls
            assert not written, f"{path.relative_to(REPO)}:{node.lineno} writes the environment"
