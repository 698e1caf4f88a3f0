"""The documentation site (mkdocs.yml): it builds offline with no warning, and its API reference
(docs/api.md, generated from the docstrings) covers the public names and their parameters."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import griffe
import pytest
import yaml

import ngramtool

REPO = Path(__file__).resolve().parent.parent
API_PAGE = REPO / "docs" / "api.md"
DIRECTIVE = re.compile(r"^::: ([\w.]+)$", re.M)
# Plugins and theme plugins that fetch from the network when the site is built.
FETCHING_PLUGINS = {"privacy", "social", "material/privacy", "material/social"}
# The parameters of these are documented in their docstrings, one by one.
DOCUMENTED_PARAMETERS = (
    "api.hash_files",
    "api.hash_texts",
    "formats.artifacts.open_index",
    "formats.dataset.merge_shards",
    "formats.stream.read_stream",
    "formats.tokenfiles.open_token_file",
    "hashing.hasher.hash_ngrams",
    "hashing.hasher.NgramHasher",
    "spec.hashspec.HashSpec",
    "model.presets.resolve_spec",
    "tokenizers.load_tokenizer",
    "tokenizers.vocab.build_vocab",
    "torch.IndexDataset",
    "torch.StreamDataset",
    "torch.engram.EngramMemory",
    "torch.engram.EngramGate",
    "torch.engram.ShortConv",
)
# Whose parameters a docstring may leave to another's ("the other parameters are hash_files'").
PARAMETERS_FROM = {"api.hash_texts": "api.hash_files"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with ``mkdocs build --strict`` into a temporary directory."""
    directory = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(directory)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    warnings = [line for line in result.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode == 0 and not warnings, "\n".join(warnings) or result.stderr
    return directory


def documented_names() -> list[str]:
    """The objects docs/api.md renders, by their path below ``ngramtool.``."""
    return [path.removeprefix("ngramtool.") for path in DIRECTIVE.findall(API_PAGE.read_text("utf-8"))]


@pytest.fixture(scope="module")
def package() -> griffe.Module:
    """The package as mkdocstrings reads it (statically, Google-style docstrings)."""
    return griffe.load("ngramtool", search_paths=[str(REPO)], docstring_parser="google")


def test_the_site_builds_offline_with_no_warning(site: Path) -> None:
    config = yaml.load((REPO / "mkdocs.yml").read_text("utf-8"), Loader=yaml.Loader)
    plugins = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    assert not plugins & FETCHING_PLUGINS, f"plugins that fetch: {sorted(plugins & FETCHING_PLUGINS)}"
    assert config["theme"].get("font") is False, "the theme loads Google Fonts unless font: false"
    for page in site.rglob("*.html"):
        html = page.read_text("utf-8")
        loaded = re.findall(r'<(?:script|link|img)\b[^>]*(?:src|href)="(https?:)?//[^"]*"', html)
        assert not loaded, f"{page.relative_to(site)} loads from the network: {loaded}"


def test_every_page_is_in_the_site(site: Path) -> None:
    for page in (REPO / "docs").glob("*.md"):
        name = "index.html" if page.stem == "index" else f"{page.stem}/index.html"
        assert (site / name).is_file(), f"docs/{page.name} is not in the site"


def test_the_reference_renders_every_public_name(site: Path) -> None:
    html = (site / "api" / "index.html").read_text("utf-8")
    anchors = set(re.findall(r'id="ngramtool\.([\w.]+)"', html))
    rendered = {anchor.rsplit(".", 1)[-1] for anchor in anchors}
    public = {name for name in ngramtool.__all__ if not name.startswith("_")}
    assert public <= rendered, f"public names missing from docs/api.md: {sorted(public - rendered)}"
    for name in ("IndexDataset", "StreamDataset", "EngramMemory", "StreamChunk", "IndexLike"):
        assert name in rendered


def test_docstring_examples_render_as_code(site: Path) -> None:
    """A doctest outside an ``Examples:`` section renders as nested quotes, not code."""
    html = (site / "api" / "index.html").read_text("utf-8")
    assert "<blockquote>" not in html, "put the docstring's >>> examples under an 'Examples:' section"
    assert html.count('class="language-pycon') or html.count("&gt;&gt;&gt;"), "no example rendered"


@pytest.mark.parametrize("name", DOCUMENTED_PARAMETERS)
def test_every_parameter_is_documented(name: str, package: griffe.Module) -> None:
    assert name in documented_names(), f"docs/api.md does not render ngramtool.{name}"
    documented = _documented_parameters(package[name])
    if name in PARAMETERS_FROM:
        documented |= _documented_parameters(package[PARAMETERS_FROM[name]])
    missing = [parameter for parameter in _parameters(package[name]) if parameter not in documented]
    assert not missing, f"ngramtool.{name}: parameters without a description: {missing}"


def test_stream_reader_documents_what_it_yields(package: griffe.Module) -> None:
    """read_stream's reader names what iterating it yields, and each field of a chunk."""
    reader = package["formats.stream.StreamReader"].docstring.value
    assert "StreamChunk" in reader
    assert {"tokens", "rows", "doc_starts"} <= _documented_attributes(package["formats.stream.StreamChunk"])
    assert {"kind", "path", "spec", "tokens", "rows", "doc_offsets", "lut", "shards"} <= (
        _documented_attributes(package["formats.artifacts.IndexLike"])
    )


def _parameters(obj: griffe.Object) -> list[str]:
    function = obj.members["__init__"] if obj.is_class else obj
    return [p.name for p in function.parameters if p.name not in ("self", "cls")]


def _sections(obj: griffe.Object, kind: griffe.DocstringSectionKind) -> set[str]:
    sections = obj.docstring.parsed if obj.docstring else []
    return {item.name for section in sections if section.kind is kind for item in section.value}


def _documented_parameters(obj: griffe.Object) -> set[str]:
    return _sections(obj, griffe.DocstringSectionKind.parameters)


def _documented_attributes(obj: griffe.Object) -> set[str]:
    return _sections(obj, griffe.DocstringSectionKind.attributes)
