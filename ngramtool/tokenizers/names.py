"""What a tokenizer name that is neither a file nor an encoding stands for: a tiktoken model name
(``gpt-4`` is ``cl100k_base``), an HF Hub id whose tokenizer.json is in the local HF cache, or a
mistyped name (a did-you-mean). Nothing here downloads."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from ..util.errors import UsageError

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def encoding_of_model(name: str) -> str | None:
    """The tiktoken encoding a model name uses (``gpt-4`` -> ``cl100k_base``), else None."""
    import tiktoken.model

    try:
        return tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        return None


def hub_cache_tokenizer(repo_id: str) -> Path | None:
    """The tokenizer.json of ``repo_id`` (``org/name``) in the local HF cache, if one was downloaded
    there: the snapshot ``refs/main`` names, else the newest one. None when there is none."""
    if not _HUB_ID.match(repo_id):
        return None
    folder = hub_cache() / f"models--{repo_id.replace('/', '--')}"
    snapshots = folder / "snapshots"
    main = folder / "refs" / "main"
    if main.is_file():
        chosen = snapshots / main.read_text(encoding="utf-8").strip() / "tokenizer.json"
        if chosen.is_file():
            return chosen
    found = sorted(snapshots.glob("*/tokenizer.json"), key=lambda path: path.stat().st_mtime)
    return found[-1] if found else None


def hub_cache() -> Path:
    """Where the HF hub keeps downloads: ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
    ``~/.cache/huggingface/hub`` (as huggingface_hub resolves it)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home) / "hub"


def unknown_tokenizer(spec: str, known: list[str]) -> UsageError:
    """The usage error for a tokenizer name nothing resolves: a Hub id is told that ngramtool never
    downloads, a near miss of a ``known`` name gets a did-you-mean."""
    if _HUB_ID.match(spec):
        return UsageError(
            f"`tokenizer={spec}` looks like an HF Hub id, and ngramtool never downloads: pass the path of "
            f"its tokenizer.json (fetched with `huggingface-cli download {spec} tokenizer.json` where "
            f"there is a network; a copy in the local HF cache, {hub_cache()}, is used when present)"
        )
    lowered = {name.lower(): name for name in known}
    close = difflib.get_close_matches(spec.lower(), list(lowered), n=1, cutoff=0.75)
    hint = f"did you mean '{lowered[close[0]]}'? " if close else ""
    return UsageError(
        f"unknown tokenizer '{spec}': {hint}use a tiktoken encoding name (cl100k_base works offline) "
        "or an OpenAI model name (gpt-4), a path to a *.tiktoken ranks file, a path to an HF "
        "tokenizer.json, or 'bytes'"
    )


def refuse_config_file(path: Path) -> None:
    """A usage error for a ``tokenizer_config.json`` given as the tokenizer: it holds settings, not
    the vocabulary, which is in the tokenizer.json beside it."""
    if path.name.removesuffix(".gz").endswith("tokenizer_config.json"):
        beside = path.with_name("tokenizer.json")
        where = f" ({beside} is there)" if beside.is_file() else ""
        raise UsageError(
            f"`tokenizer={path}` is the tokenizer's settings, not its vocabulary: pass the "
            f"tokenizer.json beside it{where}; its tokenizer_config.json is read from there"
        )
