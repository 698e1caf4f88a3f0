"""The engine constants in GGUF files, through llama.cpp's own ``gguf`` package.

Written as KV keys under a prefix (``deepseek41.engram.`` unless given), with explicit types:

====================================  ==========================================================
key (after the prefix)                type and value
====================================  ==========================================================
``layer_ids``                         UINT32 array [L]
``rows``                              UINT32 array [L] (UINT64 when a layer has 2^32 rows or more)
``primes``                            UINT32 array [L*(N-1)*K], layer-major, then column
                                      ``(n-2)*K + head`` (UINT64 when a prime needs it)
``multipliers``                       UINT64 array [L*N], layer-major, then lag 0..N-1
``token_map``                         INT32 array [V] (``-1``: a raw id without a token)
``pad_id``                            UINT32, the *compressed* pad
``compressed_vocab_size``             UINT32, V'
``head_count``                        UINT32, K (heads per order)
``key_length``                        UINT32, values per row and head (only when known)
``max_ngram_size``                    UINT32, N
``token_map_padded_from``             UINT32, the tokenizer's raw id count, when the token map
                                      is padded to the model's vocabulary (the compressed pad)
====================================  ==========================================================

Offsets are not written (engines derive them from the primes). Reading accepts the other
dialects too: ``pad_token_id`` for the pad, any integer type for any key, and the tensors
``engram.token_map``, ``engram.multipliers``, ``engram.primes``, ``engram.offsets``.

:func:`copy_into` writes a copy of a model with the keys added or replaced: tensor infos and data
are copied unchanged, the data in bounded chunks, and the copy is read back and verified (keys,
tensor names, types, shapes and the sha256 of every tensor's bytes) before it replaces anything.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..util.atomic import Staged, check_output_file
from ..util.errors import NgramToolError, UsageError
from .engine_constants import DeployedConstants, EngineConstants, Found, require_engine_package

DEFAULT_PREFIX = "deepseek41.engram."
ENGRAM_TENSORS = {
    "engram.token_map": "token_map",
    "engram.multipliers": "multipliers",
    "engram.primes": "primes",
    "engram.offsets": "offsets",
}
"""The tensor names other writers use, by the constant each holds."""
KEY_CONSTANTS = {
    "layer_ids": "layer_ids",
    "rows": "rows",
    "token_map": "token_map",
    "primes": "primes",
    "multipliers": "multipliers",
    "offsets": "offsets",
    "pad_id": "pad_id",
    "pad_token_id": "pad_id",
    "compressed_vocab_size": "compressed_vocab_size",
    "head_count": "heads",
    "key_length": "key_length",
    "max_ngram_size": "max_ngram",
    "token_map_padded_from": "token_map_padded_from",
}
"""The keys read after the prefix, by the constant each holds (``pad_token_id``: another writer's
name for the compressed pad)."""
_ARCHITECTURE = "general.architecture"
TOKENS_KEY = "tokenizer.ggml.tokens"
"""The GGUF key of a model's token list: its length is llama.cpp's ``n_vocab``."""
_COPY_CHUNK = 16 << 20  # bytes of tensor data copied at a time
_UINT32_MAX = 2**32 - 1


def normalized_prefix(prefix: str) -> str:
    """``prefix`` ending with one dot (``deepseek41.engram`` -> ``deepseek41.engram.``)."""
    stripped = prefix.strip().rstrip(".")
    if not stripped or any(part == "" for part in stripped.split(".")):
        raise UsageError(f"`gguf_prefix` {prefix!r} is not a key prefix such as {DEFAULT_PREFIX!r}")
    return stripped + "."


def gguf_entries(constants: EngineConstants, prefix: str = DEFAULT_PREFIX) -> dict[str, tuple[Any, ...]]:
    """The KV entries of ``constants``: key -> (value, GGUFValueType, array item type or None)."""
    types = require_engine_package("gguf").GGUFValueType
    prefix = normalized_prefix(prefix)

    def array(values: np.ndarray, item: Any) -> tuple[Any, ...]:
        return ([int(v) for v in values.reshape(-1).tolist()], types.ARRAY, item)

    def unsigned(values: np.ndarray) -> Any:
        return types.UINT32 if int(values.max()) <= _UINT32_MAX else types.UINT64

    entries: dict[str, tuple[Any, ...]] = {
        "layer_ids": array(constants.layer_ids, types.UINT32),
        "rows": array(constants.rows, unsigned(constants.rows)),
        "primes": array(constants.primes, unsigned(constants.primes)),
        "multipliers": array(constants.multipliers, types.UINT64),
    }
    if constants.token_map is not None:
        entries["token_map"] = array(constants.token_map, types.INT32)
    scalars = {
        "pad_id": constants.pad_id,
        "compressed_vocab_size": constants.compressed_vocab_size,
        "head_count": constants.heads,
        "key_length": constants.key_length,
        "max_ngram_size": constants.max_ngram,
        "token_map_padded_from": constants.token_map_padded_from,
    }
    entries.update(
        {name: (value, types.UINT32, None) for name, value in scalars.items() if value is not None}
    )
    return {prefix + name: entry for name, entry in entries.items()}


def write_gguf(
    constants: EngineConstants, staged: Path, prefix: str = DEFAULT_PREFIX
) -> dict[str, tuple[Any, ...]]:
    """Write a GGUF file with the KV entries alone (``general.architecture`` is the prefix's first
    part) to the temporary file ``staged`` and verify it by reading it back; returns the entries."""
    gguf = require_engine_package("gguf")
    entries = gguf_entries(constants, prefix)
    writer = gguf.GGUFWriter(None, _architecture(prefix))  # it adds general.architecture
    for key, entry in entries.items():
        writer.add_key_value(key, *entry)
    _write_header(writer, staged)
    _verify_entries(_open_reader(staged), entries, staged)
    return entries


def copy_into(
    source: str | Path,
    output: str | Path,
    constants: EngineConstants,
    *,
    prefix: str = DEFAULT_PREFIX,
    force: bool = False,
) -> dict[str, tuple[Any, ...]]:
    """Write ``output``: a copy of the GGUF model ``source`` with the constants' KV entries added
    (or replacing keys of the same names), every other key and every tensor unchanged. Keys under
    the prefix that these entries do not write (another dialect's ``pad_token_id``, ``offsets``)
    are left out, so no stale constant stays beside the new ones; a model that holds the constants
    as ``engram.*`` tensors is refused (an engine may read those instead). Returns the entries
    written.

    The copy is written under a temporary name; its tensors' bytes are copied in chunks of
    16 MiB, then the copy is read back: every key, tensor name, type, shape and the sha256 of
    every tensor's data must match, or nothing is published (an existing ``output`` is kept).
    """
    source, output = Path(source), Path(output)
    check_output_file(output, force, [str(source)])
    gguf = require_engine_package("gguf")
    reader = _open_reader(source)
    entries = gguf_entries(constants, prefix)
    tensors = sorted(tensor.name for tensor in reader.tensors if tensor.name in ENGRAM_TENSORS)
    if tensors:
        raise NgramToolError(
            f"{source} holds the engram constants as tensors ({', '.join(tensors)}), which an engine "
            "may read instead of the keys: check them with spec check, or write the keys into a "
            "model without them"
        )
    stale = normalized_prefix(prefix)
    architecture = reader.fields.get(_ARCHITECTURE)
    arch = architecture.contents() if architecture is not None else _architecture(prefix)
    writer = gguf.GGUFWriter(None, arch, endianess=reader.endianess)  # it adds general.architecture
    writer.data_alignment = reader.alignment
    kept = [
        field
        for field in reader.fields.values()
        if not field.name.startswith("GGUF.")
        and not (field.name.startswith(stale) and field.name not in entries)
    ]
    for field in kept:
        if field.name == _ARCHITECTURE:
            continue
        if field.name in entries:
            writer.add_key_value(field.name, *entries[field.name])
        else:
            writer.add_key_value(field.name, *_field_value(field, source))
    for key, entry in entries.items():
        if key not in reader.fields:
            writer.add_key_value(key, *entry)
    for tensor in reader.tensors:
        writer.add_tensor_info(
            tensor.name,
            tensor.data.shape,
            tensor.data.dtype,
            tensor.data.nbytes,
            raw_dtype=tensor.tensor_type,
        )
    try:
        with Staged(output) as staged:
            _write_header(writer, staged.path)
            digests = _copy_tensor_data(reader, source, staged.path)
            copy = _open_reader(staged.path)
            _verify_entries(copy, entries, output)
            _verify_kept(reader, copy, [f for f in kept if f.name not in entries], output)
            _verify_tensors(reader, copy, digests, output)
            staged.publish()
    except OSError as exc:
        raise NgramToolError(f"cannot write {output}: {exc.strerror}") from None
    return entries


def read_gguf(path: str | Path, prefix: str | None = None) -> DeployedConstants:
    """The engine constants a GGUF file holds: KV keys under ``prefix`` (None: the one prefix
    ``<arch>.engram.`` the file uses) and the ``engram.*`` tensors (see the module).

    Raises NgramToolError when the file is not a GGUF or holds neither multipliers nor primes.
    """
    path = Path(path)
    reader = _open_reader(path)
    prefix = normalized_prefix(prefix) if prefix is not None else _found_prefix(reader, path)
    found: dict[str, list[Found]] = {}
    for suffix, name in KEY_CONSTANTS.items():
        field = reader.fields.get(prefix + suffix)
        if field is not None:
            place = _key_values(field, path)
            if name == "token_map" and place.values.dtype == np.uint32:
                # A u32 map (FAMILIES.md allows it) writes "no token" as 0xFFFFFFFF: read it as -1.
                place = Found(place.values.view(np.int32), place.source)
            found.setdefault(name, []).append(place)
    for tensor in reader.tensors:
        if tensor.name in ENGRAM_TENSORS:
            kind = tensor.tensor_type.name
            if kind not in ("I8", "I16", "I32", "I64"):
                raise NgramToolError(f"{path}: tensor {tensor.name} is {kind}, not an integer tensor")
            values = np.asarray(tensor.data).reshape(-1)
            source = f"tensor {tensor.name} ({kind} {list(tensor.data.shape)})"
            found.setdefault(ENGRAM_TENSORS[tensor.name], []).append(Found(values, source))
    if "multipliers" not in found and "primes" not in found:
        raise NgramToolError(
            f"{path} holds no engram constants: looked for the keys {prefix}{{{', '.join(KEY_CONSTANTS)}}} "
            f"and the tensors {', '.join(ENGRAM_TENSORS)}; pass --gguf-prefix if its keys use another"
        )
    tokens = reader.fields.get(TOKENS_KEY)
    found_constants = {name: tuple(places) for name, places in found.items()}
    return DeployedConstants(
        str(path), "GGUF", found_constants, token_count=None if tokens is None else len(tokens.data)
    )


def padded_for_model(constants: EngineConstants, model: str | Path) -> EngineConstants:
    """``constants`` with the token map padded to the GGUF ``model``'s token count (llama.cpp's
    ``n_vocab``: it requires one map entry per token) when that is larger and no model vocabulary
    padded it already; as they are otherwise."""
    if constants.token_map is None or constants.token_map_padded_from is not None:
        return constants
    tokens = _open_reader(Path(model)).fields.get(TOKENS_KEY)
    if tokens is None or len(tokens.data) <= len(constants.token_map):
        return constants
    return constants.padded_to(len(tokens.data))


def _architecture(prefix: str) -> str:
    """The architecture a prefix names: its first part (``deepseek41``)."""
    return normalized_prefix(prefix).split(".")[0]


# --------------------------------------------------------------------------------- reading
def read_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path``: a missing file is a usage error, an unreadable one a
    runtime error, each one line."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except FileNotFoundError:
        raise UsageError(f"file not found: {path}") from None
    except OSError as exc:
        raise NgramToolError(f"cannot read {path}: {exc.strerror}") from None


def _open_reader(path: Path) -> Any:
    """The GGUFReader of ``path``; one clear error when it is not a GGUF file or is damaged."""
    gguf = require_engine_package("gguf")
    if read_head(path, 4) != b"GGUF":
        raise NgramToolError(f"{path} is not a GGUF file (it does not begin with the bytes 'GGUF')")
    try:
        return gguf.GGUFReader(path)
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise NgramToolError(f"{path} is a damaged GGUF file: {exc}") from None


def _found_prefix(reader: Any, path: Path) -> str:
    """The one ``<arch>.engram.`` prefix of the file's keys (the default when it has none)."""
    prefixes = sorted(
        {
            name.rsplit(".", 1)[0] + "."
            for name in reader.fields
            if name.rsplit(".", 1)[-1] in KEY_CONSTANTS and name.rsplit(".", 2)[-2:-1] == ["engram"]
        }
    )
    if len(prefixes) > 1:
        raise NgramToolError(
            f"{path} holds engram keys under several prefixes ({', '.join(prefixes)}): "
            "pass --gguf-prefix to choose one"
        )
    return prefixes[0] if prefixes else DEFAULT_PREFIX


def _key_values(field: Any, path: Path) -> Found:
    """The integers of an integer key (a scalar or an array), flattened."""
    gguf = require_engine_package("gguf")
    item = field.types[-1]
    if field.types[0] == gguf.GGUFValueType.ARRAY and len(field.types) != 2:
        raise NgramToolError(f"{path}: key {field.name} is a nested array, not integers")
    if item.name not in ("UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64", "INT64"):
        raise NgramToolError(f"{path}: key {field.name} holds {item.name}, not integers")
    is_array = field.types[0] == gguf.GGUFValueType.ARRAY
    if is_array and not field.data:
        raise NgramToolError(f"{path}: key {field.name} is an empty array")
    parts = [field.parts[i] for i in field.data] if is_array else [field.parts[-1]]
    values = np.concatenate(parts).astype(parts[0].dtype.newbyteorder("="))
    return Found(values, f"KV {field.name} ({item.name}{' array' if is_array else ''})")


def _field_value(field: Any, path: Path) -> tuple[Any, ...]:
    """A key's value as GGUFWriter.add_key_value takes it: (value, type, array item type)."""
    gguf = require_engine_package("gguf")
    if field.types[0] != gguf.GGUFValueType.ARRAY:
        return field.contents(), field.types[0], None
    if len(field.types) != 2:
        raise NgramToolError(f"{path}: key {field.name} is a nested array, which this copy does not handle")
    try:
        return field.contents(), field.types[0], field.types[1]
    except UnicodeDecodeError:
        raise NgramToolError(f"{path}: key {field.name} holds a string that is not UTF-8") from None


# --------------------------------------------------------------------------------- writing
def _write_header(writer: Any, path: Path) -> None:
    """The header, the KV data and the tensor infos of ``writer``, written to ``path``."""
    writer.write_header_to_file(path=path)
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()


def _copy_tensor_data(reader: Any, source: Path, path: Path) -> dict[str, str]:
    """Append each tensor's bytes (aligned as the header says) to ``path``, read from ``source``
    in chunks; returns the sha256 of each tensor's bytes."""
    digests = {}
    alignment = int(reader.alignment)
    with source.open("rb") as src, path.open("r+b") as out:
        out.seek(0, os.SEEK_END)
        for tensor in reader.tensors:
            out.write(b"\0" * (-out.tell() % alignment))
            src.seek(tensor.data_offset)
            digest, left = hashlib.sha256(), int(tensor.n_bytes)
            while left:
                chunk = src.read(min(left, _COPY_CHUNK))
                if not chunk:
                    raise NgramToolError(
                        f"{source} ends inside the data of tensor {tensor.name}: it is truncated"
                    )
                digest.update(chunk)
                out.write(chunk)
                left -= len(chunk)
            out.write(b"\0" * (-tensor.n_bytes % alignment))
            digests[tensor.name] = digest.hexdigest()
        out.flush()
        os.fsync(out.fileno())
    return digests


# -------------------------------------------------------------------------------- verifying
def _verify_entries(copy: Any, entries: dict[str, tuple[Any, ...]], output: Path) -> None:
    """Every entry reads back with its type and value."""
    for key, (value, vtype, item) in entries.items():
        field = copy.fields.get(key)
        expected_types = [vtype] if item is None else [vtype, item]
        if field is None or field.types != expected_types or field.contents() != value:
            raise NgramToolError(f"{output}: key {key} did not read back as written; nothing was written")


def _verify_kept(reader: Any, copy: Any, kept: list[Any], output: Path) -> None:
    """Every key copied from the source has the same type and bytes in the copy."""
    for field in kept:
        other = copy.fields.get(field.name)
        if other is None or other.types != field.types or _value_bytes(other) != _value_bytes(field):
            raise NgramToolError(
                f"{output}: key {field.name} differs from the source's after copying; nothing was written"
            )


def _value_bytes(field: Any) -> bytes:
    """The bytes of a key's value as stored (after the key's name)."""
    return b"".join(part.tobytes() for part in field.parts[2:])


def _verify_tensors(reader: Any, copy: Any, digests: dict[str, str], output: Path) -> None:
    """The copy has the source's tensors in order, each with its type, shape and bytes."""
    ours = [(t.name, t.tensor_type, t.shape.tolist()) for t in reader.tensors]
    theirs = [(t.name, t.tensor_type, t.shape.tolist()) for t in copy.tensors]
    if ours != theirs:
        raise NgramToolError(
            f"{output}: the copy's tensor infos differ from the source's; nothing was written"
        )
    for tensor in copy.tensors:
        digest = hashlib.sha256()
        data = copy.data[tensor.data_offset : tensor.data_offset + tensor.n_bytes]
        for start in range(0, len(data), _COPY_CHUNK):
            digest.update(data[start : start + _COPY_CHUNK].tobytes())
        if digest.hexdigest() != digests[tensor.name]:
            raise NgramToolError(
                f"{output}: the data of tensor {tensor.name} differs from the source's after copying; "
                "nothing was written"
            )
