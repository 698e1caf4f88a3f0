"""Engine constant files: write :class:`EngineConstants` as JSON, npz, safetensors or GGUF, and read
back what any of them holds (:class:`DeployedConstants`, for ``spec check``).

- **JSON**: :meth:`EngineConstants.to_json_dict` (``"format": "ngramtool.engram-constants"``).
- **npz**: one array per field of that JSON (``token_map`` int32 [V], ``multipliers`` int64
  [L, N], ``primes``/``offsets`` int64 [L, (N-1)K], ``rows``/``layer_ids`` int64 [L], scalars as
  0-d int64, ``token_map_sha256`` a 0-d string); a field that is unknown (``raw_pad_id``,
  ``key_length``, ``token_map_padded_from`` of a map not padded) or absent (``token_map``) has no
  array. It loads without pickle.
- **safetensors**: the tensors ``engram.token_map`` I32 [V], ``engram.multipliers`` I64 [L, N],
  ``engram.primes`` and ``engram.offsets`` I64 [L, (N-1)K]; the other fields in the header's
  metadata, each as JSON text (``"layer_ids": "[1, 14]"``, ``"pad_id": "2"``), but
  ``format`` and ``token_map_sha256``, plain text.
- **GGUF**: KV keys, see :mod:`ngramtool.tools.engine_gguf`.

Every file is written under a temporary name and renamed into place when complete.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..util.atomic import Staged, check_output_file
from ..util.errors import NgramToolError, UsageError
from .engine_constants import (
    FORMAT,
    DeployedConstants,
    EngineConstants,
    Found,
    require_engine_package,
)
from .engine_gguf import DEFAULT_PREFIX, ENGRAM_TENSORS, copy_into, read_gguf, read_head, write_gguf

FORMATS = {".json": "json", ".npz": "npz", ".safetensors": "safetensors", ".gguf": "gguf"}
"""The file formats, by the suffix that names each."""
_ARRAYS = ("layer_ids", "rows", "multipliers", "primes", "offsets", "token_map")
_SCALARS = ("max_ngram", "heads", "compressed_vocab_size", "pad_id", "raw_pad_id", "key_length")
_SCALARS += ("token_map_padded_from",)  # where a map padded to the model's vocabulary starts its padding
_TENSOR_OF = {name: tensor for tensor, name in ENGRAM_TENSORS.items()}


def format_of(path: str | Path, file_format: str | None = None) -> str:
    """``file_format`` checked, or the format the suffix of ``path`` names."""
    known = ", ".join(FORMATS.values())
    if file_format is not None:
        if file_format not in FORMATS.values():
            raise UsageError(f"`file_format` must be one of {known} (got {file_format!r})")
        return file_format
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"cannot tell the format of {path} from its suffix: give `file_format` ({known})")
    return FORMATS[suffix]


def export_constants(
    constants: EngineConstants,
    output: str | Path,
    *,
    file_format: str | None = None,
    force: bool = False,
    gguf_prefix: str = DEFAULT_PREFIX,
    into: str | Path | None = None,
) -> dict[str, Any]:
    """Write ``constants`` to ``output`` and return a summary of what was written.

    Args:
        constants: what to write.
        output: the file (replaced only with ``force``).
        file_format: ``json``, ``npz``, ``safetensors`` or ``gguf``; None: from the suffix.
        force: replace an existing ``output``.
        gguf_prefix: the prefix of the GGUF keys.
        into: a GGUF model: ``output`` is a copy of it with the keys added or replaced
            (:func:`ngramtool.tools.engine_gguf.copy_into`).

    Examples:
        >>> from ngramtool import HashSpec
        >>> from ngramtool.tools.engine_constants import EngineConstants
        >>> constants = EngineConstants.from_spec(HashSpec(heads=2, layer_ids=(1,), table_sizes=(1000, 1000)))
        >>> export_constants(constants, "constants.npz", force=True)["arrays"]
        ['compressed_vocab_size', 'heads', 'layer_ids', 'max_ngram', 'multipliers', 'offsets', 'pad_id',
         'primes', 'rows']
    """
    chosen = format_of(output, file_format) if into is None else "gguf"
    if into is not None and file_format not in (None, "gguf"):
        raise UsageError(f"`into` writes a GGUF model: drop `file_format={file_format}`")
    if into is not None and FORMATS.get(Path(output).suffix.lower(), "gguf") != "gguf":
        raise UsageError(f"`into` writes a GGUF model: name the output *.gguf, not {output}")
    summary: dict[str, Any] = {
        "output": str(output),
        "format": chosen,
        "token_map_sha256": constants.token_map_sha256,
    }
    if into is not None:
        entries = copy_into(into, output, constants, prefix=gguf_prefix, force=force)
        return {**summary, "into": str(into), "keys": _key_types(entries)}
    check_output_file(output, force)
    try:
        with Staged(output) as staged:
            written = _WRITERS[chosen](constants, staged.path, gguf_prefix)
            staged.publish()
    except OSError as exc:
        raise NgramToolError(f"cannot write {output}: {exc.strerror}") from None
    return {**summary, **written}


def _key_types(entries: dict[str, tuple[Any, ...]]) -> dict[str, str]:
    """GGUF key -> its type as a summary shows it (``UINT64 array``)."""
    return {
        key: f"{item.name} array" if item is not None else vtype.name
        for key, (_, vtype, item) in entries.items()
    }


def _write_json(constants: EngineConstants, path: Path, _prefix: str) -> dict[str, Any]:
    with path.open("w", encoding="utf-8") as handle:
        json.dump(constants.to_json_dict(), handle)
        handle.write("\n")
    return {}


def _npz_arrays(constants: EngineConstants) -> dict[str, np.ndarray]:
    """The arrays of an npz file (see the module)."""
    arrays = {name: getattr(constants, name) for name in _ARRAYS if getattr(constants, name) is not None}
    arrays.update(
        {
            name: np.int64(getattr(constants, name))
            for name in _SCALARS
            if getattr(constants, name) is not None
        }
    )
    if constants.token_map_sha256 is not None:
        arrays["token_map_sha256"] = np.array(constants.token_map_sha256)
    return arrays


def _write_npz(constants: EngineConstants, path: Path, _prefix: str) -> dict[str, Any]:
    arrays = _npz_arrays(constants)
    with path.open("wb") as handle:
        np.savez(handle, **arrays)
    return {"arrays": sorted(arrays)}


def _safetensors_parts(constants: EngineConstants) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The tensors and the metadata of a safetensors file (see the module)."""
    tensors = {
        _TENSOR_OF[name]: np.ascontiguousarray(getattr(constants, name))
        for name in ("token_map", "multipliers", "primes", "offsets")
        if getattr(constants, name) is not None
    }
    record = constants.to_json_dict()
    metadata = {
        name: json.dumps(record[name])
        for name in ("layer_ids", "rows", *_SCALARS)
        if record[name] is not None
    }
    if constants.token_map_sha256 is not None:
        metadata["token_map_sha256"] = constants.token_map_sha256
    return tensors, {"format": FORMAT, **metadata}


def _write_safetensors(constants: EngineConstants, path: Path, _prefix: str) -> dict[str, Any]:
    tensors, metadata = _safetensors_parts(constants)
    # save() gives the bytes: the staged file keeps its permissions (save_file makes a private one)
    path.write_bytes(require_engine_package("safetensors.numpy").save(tensors, metadata=metadata))
    return {"tensors": {name: [str(t.dtype), list(t.shape)] for name, t in tensors.items()}}


def _write_gguf(constants: EngineConstants, path: Path, prefix: str) -> dict[str, Any]:
    return {"keys": _key_types(write_gguf(constants, path, prefix))}


_WRITERS = {"json": _write_json, "npz": _write_npz, "safetensors": _write_safetensors, "gguf": _write_gguf}


# ----------------------------------------------------------------------------------- reading
def read_deployed(path: str | Path, *, gguf_prefix: str | None = None) -> DeployedConstants:
    """The constants a deployment file holds: a GGUF model (keys under ``gguf_prefix``, None: the
    one ``<arch>.engram.`` prefix it uses, or the ``engram.*`` tensors), a safetensors file, or an
    exported JSON or npz file; the kind is told by the suffix (``.gguf``, ``.safetensors``,
    ``.json``, ``.npz``), else by the first bytes.

    Raises NgramToolError (one line) for a file of none of these kinds, or one that holds none of
    the constants.
    """
    path = Path(path)
    head = read_head(path, 16)
    kind = FORMATS.get(path.suffix.lower()) or _sniffed(head)
    if kind is None:
        raise NgramToolError(f"{path} is neither a GGUF, a safetensors, an exported JSON nor an npz file")
    if kind == "gguf":
        return read_gguf(path, gguf_prefix)
    return _READERS[kind](path)


def _sniffed(head: bytes) -> str | None:
    """The format that a file's first 16 bytes show (a safetensors header's JSON follows its
    8-byte length)."""
    if head.startswith(b"GGUF"):
        return "gguf"
    if head.startswith(b"PK"):
        return "npz"
    if head[8:9] == b"{":
        return "safetensors"
    return "json" if head.lstrip()[:1] == b"{" else None


def _integers(value: Any, source: str, path: Path) -> Found:
    """A value of a file as a Found of integers, or one clear error."""
    try:
        values = np.asarray(value).reshape(-1)
    except (ValueError, TypeError):
        values = np.asarray([None])
    if values.dtype.kind not in "iu" or values.size == 0:
        raise NgramToolError(f"{path}: {source} is not a list of integers")
    return Found(values, source)


def _read_json(path: Path) -> DeployedConstants:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NgramToolError(f"{path} is not a JSON file of engine constants: {exc}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise NgramToolError(
            f"{path} is not an engine constants file (ngramtool spec export --format json): "
            f'it lacks "format": "{FORMAT}"'
        )
    found = {
        name: (_integers(record[name], f"JSON {name}", path),)
        for name in (*_ARRAYS, *_SCALARS)
        if record.get(name) is not None
    }
    return DeployedConstants(str(path), "JSON", found, record.get("token_map_sha256"))


def _read_npz(path: Path) -> DeployedConstants:
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise NgramToolError(f"{path} is not an npz file of engine constants: {exc}") from None
    found = {
        name: (_integers(arrays[name], f"npz {name}", path),)
        for name in (*_ARRAYS, *_SCALARS)
        if name in arrays
    }
    if "multipliers" not in found and "primes" not in found:
        raise NgramToolError(f"{path} holds no engine constants: it has no multipliers and no primes arrays")
    sha = arrays.get("token_map_sha256")
    return DeployedConstants(str(path), "npz", found, None if sha is None else str(sha))


def _read_safetensors(path: Path) -> DeployedConstants:
    safetensors = require_engine_package("safetensors")
    try:
        with safetensors.safe_open(str(path), framework="numpy") as handle:
            metadata = handle.metadata() or {}
            tensors = {name: handle.get_tensor(name) for name in ENGRAM_TENSORS if name in handle.keys()}  # noqa: SIM118
    except (OSError, safetensors.SafetensorError) as exc:
        raise NgramToolError(f"{path} is not a safetensors file: {exc}") from None
    if "engram.multipliers" not in tensors and "engram.primes" not in tensors:
        raise NgramToolError(
            f"{path} holds none of the tensors {', '.join(ENGRAM_TENSORS)}: "
            "it is not an engine constants file"
        )
    found = {
        ENGRAM_TENSORS[name]: (_integers(t, f"tensor {name} ({t.dtype} {list(t.shape)})", path),)
        for name, t in tensors.items()
    }
    for name in ("layer_ids", "rows", *_SCALARS):
        if name in metadata:
            try:
                value = json.loads(metadata[name])
            except json.JSONDecodeError:
                raise NgramToolError(f"{path}: metadata {name} is not JSON: {metadata[name]!r}") from None
            found[name] = (_integers(value, f"metadata {name}", path),)
    return DeployedConstants(str(path), "safetensors", found, metadata.get("token_map_sha256"))


_READERS = {"json": _read_json, "npz": _read_npz, "safetensors": _read_safetensors}
