"""What an Engram memory costs, from its spec alone: tables, rows, parameters, bytes, traffic.

Every count uses the real prime table sizes of the spec (docs/engram-spec.md §3.2), so it matches what
``ngramtool hash`` indexes and what a trainer allocates; bytes are counted per row encoding
(:class:`Encoding`), and a tensor-parallel split by column gives each rank's row ranges. See
docs/analysis.md for each figure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..model.presets import preset, resolve_spec
from ..spec.hashspec import INT64_MAX, HashSpec
from ..util.errors import UsageError
from ..util.wording import plural

FP32_SCALE_BYTES = 4  # the "fp8" encoding: one fp32 scale per block of a row
ADAMW_STATE_BYTES = 8  # two fp32 moments per parameter
# Usable bandwidth of one direction of a x16 link: GT/s x 16 lanes x 128b/130b encoding / 8 bits.
PCIE_X16 = {
    "PCIe 4.0 x16": 16e9 * 16 * 128 / 130 / 8,
    "PCIe 5.0 x16": 32e9 * 16 * 128 / 130 / 8,
}


@dataclass(frozen=True)
class Encoding:
    """How a row is stored: blocks of ``block`` values, each block ``value_bytes`` of values,
    ``scale_bytes`` of scales and ``bias_bytes`` of biases; ``tensor_bytes`` once per tensor (a
    global scale: one per Engram layer's table, not per row).

    With ``partial`` (values of whole bytes) a row whose width is not a multiple of ``block`` ends
    in a partial block: its values, one scale and one bias. Without it (GGUF structs, MLX,
    NVFP4) a row must be whole blocks, else the encoding does not apply. A GGUF block is one
    struct whose scales sit among its values: all of it counts as values (one region of a row).
    """

    name: str
    block: int
    value_bytes: int
    scale_bytes: int = 0
    bias_bytes: int = 0
    tensor_bytes: int = 0
    partial: bool = False
    description: str = ""

    @property
    def block_bytes(self) -> int:
        """Bytes of one whole block: values, scales and biases."""
        return self.value_bytes + self.scale_bytes + self.bias_bytes

    def row_parts(self, dim: int) -> tuple[int, int, int] | None:
        """(value, scale, bias) bytes of one row of ``dim`` values; None where the encoding does
        not apply to ``dim``."""
        blocks, rest = divmod(dim, self.block)
        if rest and not self.partial:
            return None
        started = blocks + (1 if rest else 0)
        values = blocks * self.value_bytes + rest * self.value_bytes // self.block
        return values, started * self.scale_bytes, started * self.bias_bytes

    def row_bytes(self, dim: int) -> int | None:
        """Bytes of one row of ``dim`` values; None where the encoding does not apply to ``dim``."""
        parts = self.row_parts(dim)
        return None if parts is None else sum(parts)

    def to_dict(self, dim: int) -> dict[str, Any]:
        """The encoding and its bytes per row of ``dim`` values as plain JSON types."""
        parts = self.row_parts(dim)
        return {
            "values_per_block": self.block,
            "bytes_per_block": self.block_bytes,
            "row_bytes": None if parts is None else sum(parts),
            "row_parts": None
            if parts is None
            else dict(zip(("values", "scales", "biases"), parts, strict=True)),
            "tensor_bytes": self.tensor_bytes,
            "description": self.description,
        }


def int8_groups(group: int) -> Encoding:
    """int8 values with one fp32 scale per ``group`` values along a row (``int8-g128``)."""
    return Encoding(
        f"int8-g{group}", group, group, 4, partial=True, description=f"int8, fp32 scale per {group}"
    )


def mlx_affine(bits: int, group: int) -> Encoding:
    """MLX's affine quantization: ``bits``-bit values packed in uint32, an fp16 scale and an fp16
    bias per ``group`` values (``mlx.core.quantize(w, group, bits)``; rows of whole groups)."""
    return Encoding(
        f"mlx{bits}-g{group}",
        group,
        group * bits // 8,
        2,
        2,
        description=f"MLX {bits}-bit, fp16 scale+bias per {group}",
    )


def encodings(fp8_block: int = 128) -> tuple[Encoding, ...]:
    """The row encodings sized, ``fp8`` with one fp32 scale per ``fp8_block`` values (the layouts
    and their sources: docs/analysis.md, "The encodings").

    >>> from ngramtool.analysis.sizing import encodings
    >>> {encoding.name: encoding.row_bytes(160) for encoding in encodings()}  # doctest: +NORMALIZE_WHITESPACE
    {'fp32': 640, 'bf16': 320, 'fp8': 168, 'fp8-e8m0': 165, 'fp8-tensor': 160, 'int8-g128': 168,
     'NVFP4': 90, 'mlx8-g32': 180, 'mlx8-g64': None, 'mlx4-g32': 100, 'mlx4-g64': None, 'Q8_0': 170,
     'Q4_K': None, 'Q3_K': None, 'IQ4_NL': 90, 'IQ4_XS': None}
    """
    return (
        Encoding("fp32", 1, 4, description="4 B a value"),
        Encoding("bf16", 1, 2, description="2 B a value"),
        Encoding(
            "fp8",
            fp8_block,
            fp8_block,
            FP32_SCALE_BYTES,
            partial=True,
            description=f"e4m3, fp32 scale per {fp8_block}",
        ),
        Encoding("fp8-e8m0", 32, 32, 1, partial=True, description="e4m3, e8m0 scale per 32"),
        Encoding("fp8-tensor", 1, 1, tensor_bytes=4, description="e4m3, fp32 scale per tensor"),
        int8_groups(128),
        Encoding("NVFP4", 16, 8, 1, tensor_bytes=4, description="e2m1, e4m3 per 16, fp32 per tensor"),
        mlx_affine(8, 32),
        mlx_affine(8, 64),
        mlx_affine(4, 32),
        mlx_affine(4, 64),
        Encoding("Q8_0", 32, 34, description="GGUF: 34 B per 32"),
        Encoding("Q4_K", 256, 144, description="GGUF: 144 B per 256"),
        Encoding("Q3_K", 256, 110, description="GGUF: 110 B per 256"),
        Encoding("IQ4_NL", 32, 18, description="GGUF: 18 B per 32"),
        Encoding("IQ4_XS", 256, 136, description="GGUF: 136 B per 256"),
    )


DEFAULT_ENCODING = "bf16"
DEFAULT_DIM = 64  # values per row: the engram-demo preset's
_INT8_GROUPS = re.compile(r"^int8-g(\d+)$")


def encoding_named(name: str | None) -> Encoding:
    """The encoding called ``name`` (any case; None: :data:`DEFAULT_ENCODING`); ``int8-gG`` for
    any group G. A usage error lists the known names.

    >>> from ngramtool.analysis.sizing import encoding_named
    >>> encoding_named("nvfp4").row_bytes(160), encoding_named("int8-g32").row_bytes(160)
    (90, 180)
    """
    wanted = (name or DEFAULT_ENCODING).lower()
    for found in encodings():
        if found.name.lower() == wanted:
            return found
    groups = _INT8_GROUPS.match(wanted)
    if groups is not None and int(groups.group(1)) >= 1:
        return int8_groups(int(groups.group(1)))
    known = ", ".join(e.name for e in encodings())
    raise UsageError(f"unknown `encoding` {name!r}; known: {known} (int8-gG: any group G)")


def row_parts(row_bytes: int | None, encoding: str | None, dim: int | None) -> tuple[int, int, int]:
    """(value, scale, bias) bytes of a row: ``row_bytes`` (all values) as given, or ``encoding``'s
    row of ``dim`` values (default: :data:`DEFAULT_ENCODING` of :data:`DEFAULT_DIM`).

    >>> from ngramtool.analysis.sizing import row_parts
    >>> row_parts(None, "mlx4-g32", 256), row_parts(None, "fp8-e8m0", 256), row_parts(160, None, None)
    ((128, 16, 16), (256, 8, 0), (160, 0, 0))
    """
    if row_bytes is not None:
        if encoding is not None or dim is not None:
            raise UsageError("give `row_bytes` or `encoding` and `dim`, not both")
        if row_bytes < 1:
            raise UsageError(f"`row_bytes` must be at least 1 (got {row_bytes})")
        return row_bytes, 0, 0
    chosen = encoding_named(encoding)
    width = DEFAULT_DIM if dim is None else dim
    if width < 1:
        raise UsageError(f"`dim` must be at least 1 (got {width})")
    parts = chosen.row_parts(width)
    if parts is None:
        raise UsageError(f"the {chosen.name} encoding needs rows of whole blocks of {chosen.block} values")
    return parts


def bytes_per_row(row_bytes: int | None, encoding: str | None, dim: int | None) -> tuple[int, str | None]:
    """(bytes per row, encoding name or None): ``row_bytes`` as given, or ``encoding``'s bytes per
    row of ``dim`` values (default: :data:`DEFAULT_ENCODING` of :data:`DEFAULT_DIM`).

    >>> from ngramtool.analysis.sizing import bytes_per_row
    >>> bytes_per_row(None, "q8_0", 256), bytes_per_row(160, None, None), bytes_per_row(None, "nvfp4", 160)
    ((272, 'Q8_0'), (160, None), (90, 'NVFP4'))
    """
    size = sum(row_parts(row_bytes, encoding, dim))
    return size, None if row_bytes is not None else encoding_named(encoding).name


@dataclass(frozen=True)
class TableBytes:
    """The bytes of a spec's tables in one row encoding (``spec show --encoding``)."""

    encoding: str | None  # None: rows of ``row_bytes`` as given
    dim: int | None
    row_bytes: int
    layer_bytes: tuple[int, ...]  # per Engram layer: its rows, plus a per-tensor scale if any

    @property
    def total_bytes(self) -> int:
        """All layers' tables together."""
        return sum(self.layer_bytes)

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        return {
            "encoding": self.encoding,
            "dim": self.dim,
            "row_bytes": self.row_bytes,
            "layer_bytes": list(self.layer_bytes),
            "total_bytes": self.total_bytes,
        }


def table_bytes(spec: HashSpec, row_bytes: int | None, encoding: str | None, dim: int | None) -> TableBytes:
    """The bytes of ``spec``'s tables: every layer's rows at :func:`bytes_per_row`, plus the
    encoding's per-tensor bytes once per layer's table.

    >>> from ngramtool import HashSpec
    >>> from ngramtool.analysis.sizing import table_bytes
    >>> spec = HashSpec(heads=1, max_ngram=2, layer_ids=(1,), table_sizes=(1000,), vocab_size=50)
    >>> table_bytes(spec, None, "nvfp4", 160).layer_bytes  # 1009 rows x 90 B, one fp32 scale
    (90814,)
    """
    size, name = bytes_per_row(row_bytes, encoding, dim)
    per_tensor = 0 if name is None else encoding_named(name).tensor_bytes
    layers = tuple(int(rows) * size + per_tensor for rows in spec.rows_per_layer.tolist())
    shown_dim = None if row_bytes is not None else (DEFAULT_DIM if dim is None else dim)
    return TableBytes(name, shown_dim, size, layers)


@dataclass(frozen=True)
class RankShard:
    """What one tensor-parallel rank holds when each layer's table is split by column.

    Attributes:
        rank: the rank, 0..R-1.
        columns: [first, end) of the columns (order-head sub-tables) of each layer it holds.
        row_ranges: [start, end) of each layer's table, one pair per layer (contiguous: whole columns).
        rows: its rows over all layers.
        table_bytes: bytes of its rows per encoding (None where the encoding does not apply).
    """

    rank: int
    columns: tuple[int, int]
    row_ranges: tuple[tuple[int, int], ...]
    rows: int
    table_bytes: dict[str, int | None]

    def to_dict(self) -> dict[str, Any]:
        """Every figure as plain JSON types."""
        return {
            "rank": self.rank,
            "columns": list(self.columns),
            "row_ranges": [list(pair) for pair in self.row_ranges],
            "rows": self.rows,
            "table_bytes": self.table_bytes,
        }


@dataclass(frozen=True)
class SizeReport:
    """The sizes and costs of one memory. Byte figures are keyed by encoding (:func:`encodings`):
    fp32, bf16, fp8 (one fp32 scale per block of ``fp8_block`` values of a row), fp8-e8m0, and the
    GGUF formats Q8_0, Q4_K and Q3_K (None where ``dim`` is not whole blocks of the format).

    ``declared_rows`` are the rows per layer a released checkpoint declares, when the spec is
    meant to reproduce its tables; the report says whether the derived rows equal them.
    ``row_multiple``: each layer's table padded up to a multiple of it (Qwen3.8's
    ``make_ngram_vocab_size_divisible_by``; 1: no padding): the padding rows count in every
    byte figure, though no n-gram reads them.
    """

    spec: HashSpec
    dim: int
    fp8_block: int
    declared_rows: tuple[int, ...] | None = None
    row_multiple: int = 1

    @property
    def orders(self) -> int:
        """N-1 hashed orders."""
        return self.spec.max_ngram - 1

    @property
    def tables_per_layer(self) -> int:
        """(N-1) x K tables, one per order and head."""
        return self.orders * self.spec.heads

    @property
    def tables(self) -> int:
        """All tables of all layers."""
        return self.tables_per_layer * self.spec.num_layers

    @property
    def tables_in_words(self) -> str:
        """E.g. '2 orders x 8 heads = 16 tables per layer, x 2 layers = 32 tables'."""
        text = f"{self.orders} orders x {self.spec.heads} heads = {self.tables_per_layer} tables"
        if self.spec.num_layers == 1:
            return text + " (1 layer)"
        return f"{text} per layer, x {self.spec.num_layers} layers = {self.tables} tables"

    @property
    def rows_per_layer(self) -> list[int]:
        """Each layer's table height: the sum of its real primes, padded up to ``row_multiple``."""
        step = self.row_multiple
        return [-(-int(rows) // step) * step for rows in self.spec.rows_per_layer]

    @property
    def rows(self) -> int:
        """Rows of all tables (the sum of the real primes, and the padding)."""
        return sum(self.rows_per_layer)

    @property
    def nominal_params(self) -> int:
        """Parameters if every table had exactly its base size (before prime rounding)."""
        return sum(self.spec.table_sizes) * self.spec.heads * self.spec.num_layers * self.dim

    @property
    def params(self) -> int:
        """Parameters: rows x dim."""
        return self.rows * self.dim

    @property
    def declared_rows_match(self) -> bool | None:
        """Whether the derived rows per layer equal the declared ones (None: none declared)."""
        if self.declared_rows is None:
            return None
        return self.rows_per_layer == list(self.declared_rows)

    @property
    def encodings(self) -> tuple[Encoding, ...]:
        """The row encodings sized, fp8 with this report's ``fp8_block``."""
        return encodings(self.fp8_block)

    @property
    def row_bytes(self) -> dict[str, int | None]:
        """Bytes of one row per encoding (None where the encoding does not apply to ``dim``)."""
        return {encoding.name: encoding.row_bytes(self.dim) for encoding in self.encodings}

    def _times_row_bytes(self, rows: int) -> dict[str, int | None]:
        return {name: None if size is None else rows * size for name, size in self.row_bytes.items()}

    @property
    def table_bytes(self) -> dict[str, int | None]:
        """Bytes of all tables per encoding (with each layer's tensor-wide scale, where it has one)."""
        tensors = {encoding.name: encoding.tensor_bytes * self.spec.num_layers for encoding in self.encodings}
        return {
            name: None if size is None else size + tensors[name]
            for name, size in self._times_row_bytes(self.rows).items()
        }

    @property
    def adamw_bytes(self) -> int:
        """AdamW state: two fp32 moments per parameter."""
        return self.params * ADAMW_STATE_BYTES

    @property
    def rows_per_token(self) -> int:
        """Rows one token reads: one per table."""
        return self.tables

    @property
    def values_per_token(self) -> int:
        """Values one token reads."""
        return self.rows_per_token * self.dim

    @property
    def bytes_per_token(self) -> dict[str, int | None]:
        """Bytes one token reads per encoding (and must move when the tables live in host memory)."""
        return self._times_row_bytes(self.rows_per_token)

    @property
    def touched_fraction(self) -> float:
        """Share of all rows one token reads."""
        return self.rows_per_token / self.rows

    @property
    def memory_width(self) -> int:
        """Width of the memory vector e_t of one layer: (N-1) x K x dim."""
        return self.tables_per_layer * self.dim

    def offload(self, tokens_per_second: float) -> dict[str, Any]:
        """Read bandwidth at ``tokens_per_second`` (a decode rate) per encoding: bytes per token x
        rate, the host-to-device traffic when the tables live in host memory, and each link's share
        of it (None for an encoding that does not apply).

        An upper bound: rows shared by tokens of one batch, or cached on the device, move once.
        """
        out: dict[str, Any] = {"tokens_per_second": tokens_per_second, "links": dict(PCIE_X16)}
        for name, per_token in self.bytes_per_token.items():
            if per_token is None:
                out[name] = None
                continue
            need = per_token * tokens_per_second
            out[name] = {
                "bytes_per_second": need,
                "link_share": {link: need / rate for link, rate in PCIE_X16.items()},
            }
        return out

    def split_columns(self, ranks: int) -> tuple[RankShard, ...]:
        """Each layer's table split by column over ``ranks`` tensor-parallel ranks: rank r holds
        columns [r C/R, (r+1) C/R) of every layer (C = (N-1) x K), a contiguous row range of each.

        A usage error when ``ranks`` does not divide C; it lists the rank counts that do.
        """
        columns = self.tables_per_layer
        if ranks < 1:
            raise UsageError(f"`tp` must be at least 1 (got {ranks})")
        if columns % ranks:
            divisors = ", ".join(str(d) for d in range(1, columns + 1) if columns % d == 0)
            raise UsageError(
                f"`tp` {ranks} does not divide the {columns} columns of each layer's table "
                f"((N-1) x K = {self.orders} x {self.spec.heads}); use one of {divisors}"
            )
        width = columns // ranks
        ends = self.spec.offsets + self.spec.primes.reshape(self.spec.num_layers, -1)
        shards = []
        for rank in range(ranks):
            first, end = rank * width, (rank + 1) * width
            row_ranges = tuple(
                (int(starts[first]), int(stops[end - 1]))
                for starts, stops in zip(self.spec.offsets, ends, strict=True)
            )
            rows = sum(stop - start for start, stop in row_ranges)
            shards.append(RankShard(rank, (first, end), row_ranges, rows, self._times_row_bytes(rows)))
        return tuple(shards)

    def split_tables(self, ranks: int) -> list[dict[str, Any]]:
        """Every table (layer, order, head) split by rows over ``ranks`` expert-parallel ranks as
        Megatron-LM shards its Engram tables: rank r holds the contiguous rows
        [start(r), start(r+1)) with ``start(r) = r (R_t // EP) + min(r, R_t mod EP)`` of a table of
        R_t rows (the first ``R_t mod EP`` ranks one row more). Each table's ``ranges`` are its own
        rows; ``layer_ranges`` the same rows of its layer's table (offset added).

        >>> from ngramtool import HashSpec
        >>> report = size_memory(HashSpec(heads=1, layer_ids=(1,), table_sizes=(10, 10), pad_id=0), 8)
        >>> report.split_tables(3)[0]["ranges"]
        [[0, 4], [4, 8], [8, 11]]
        """
        if ranks < 1:
            raise UsageError(f"`ep` must be at least 1 (got {ranks})")
        spec, tables = self.spec, []
        for li, layer in enumerate(spec.layer_ids):
            for column, size in enumerate(spec.primes[li].reshape(-1).tolist()):
                base, extra = divmod(size, ranks)
                starts = [r * base + min(r, extra) for r in range(ranks + 1)]
                ranges = [[starts[r], starts[r + 1]] for r in range(ranks)]
                offset = int(spec.offsets[li, column])
                tables.append(
                    {
                        "layer": layer,
                        "order": column // spec.heads + 2,
                        "head": column % spec.heads,
                        "rows": size,
                        "ranges": ranges,
                        "layer_ranges": [[offset + lo, offset + hi] for lo, hi in ranges],
                    }
                )
        return tables

    def expert_parallel(self, ranks: int) -> dict[str, Any]:
        """:meth:`split_tables` as plain JSON types, with each rank's rows and bytes (every table
        is split, so each rank reads its share of every table's rows)."""
        tables = self.split_tables(ranks)
        rows = [sum(hi - lo for lo, hi in (t["ranges"][r] for t in tables)) for r in range(ranks)]
        return {
            "ranks": ranks,
            "tables": tables,
            "rank_rows": rows,
            "rank_table_bytes": [self._times_row_bytes(count) for count in rows],
        }

    def tensor_parallel(self, ranks: int) -> dict[str, Any]:
        """:meth:`split_columns` as plain JSON types, with what each rank reads per token."""
        shards = self.split_columns(ranks)
        return {
            "ranks": ranks,
            "columns_per_rank": self.tables_per_layer // ranks,
            "rows_read_per_token_per_rank": self.rows_per_token // ranks,
            "shards": [shard.to_dict() for shard in shards],
        }

    def backbone(self, backbone_params: float) -> dict[str, float]:
        """Table/backbone ratio and the table's share of all parameters."""
        return {
            "backbone_params": backbone_params,
            "table_to_backbone": self.params / backbone_params,
            "table_share": self.params / (self.params + backbone_params),
        }

    def to_dict(self) -> dict[str, Any]:
        """Every figure as plain JSON types."""
        spec = self.spec
        return {
            "spec": spec.to_dict(),
            "dim": self.dim,
            "fp8_block": self.fp8_block,
            "layers": spec.num_layers,
            "orders": self.orders,
            "heads_per_order": spec.heads,
            "tables_per_layer": self.tables_per_layer,
            "tables": self.tables,
            "tables_in_words": self.tables_in_words,
            "primes": spec.primes.tolist(),
            "rows_per_layer": self.rows_per_layer,
            "row_multiple": self.row_multiple,
            "declared_rows_per_layer": None if self.declared_rows is None else list(self.declared_rows),
            "declared_rows_match": self.declared_rows_match,
            "rows": self.rows,
            "nominal_params": self.nominal_params,
            "params": self.params,
            "encodings": {encoding.name: encoding.to_dict(self.dim) for encoding in self.encodings},
            "table_bytes": self.table_bytes,
            "adamw_bytes": self.adamw_bytes,
            "rows_per_token": self.rows_per_token,
            "values_per_token": self.values_per_token,
            "bytes_per_token": self.bytes_per_token,
            "touched_fraction": self.touched_fraction,
            "memory_width": self.memory_width,
        }


def size_memory(
    spec: HashSpec,
    dim: int,
    *,
    fp8_block: int = 128,
    declared_rows: Sequence[int] | None = None,
    row_multiple: int = 1,
) -> SizeReport:
    """The size report of ``spec`` with ``dim`` values per row (per head); ``declared_rows``, one
    count per layer, are the rows a checkpoint declares for its tables; each layer's table is
    padded up to a multiple of ``row_multiple`` rows."""
    if row_multiple < 1:
        raise UsageError(f"`row_multiple` must be at least 1 (got {row_multiple})")
    if dim < 1:
        raise UsageError(f"`dim` must be at least 1 (got {dim})")
    if fp8_block < 1:
        raise UsageError(f"`fp8_block` must be at least 1 (got {fp8_block})")
    if declared_rows is not None and len(declared_rows) != spec.num_layers:
        raise UsageError(
            f"`declared_rows` gives {plural(len(declared_rows), 'count')} for "
            f"{plural(spec.num_layers, 'layer')}: give one per layer"
        )
    declared = None if declared_rows is None else tuple(declared_rows)
    return SizeReport(spec, dim, fp8_block, declared, row_multiple)


def with_table(spec: HashSpec, table: int) -> HashSpec:
    """``spec`` with every order's base table size set to ``table``."""
    return replace(spec, table_sizes=(table,) * (spec.max_ngram - 1))


def fit_table(spec: HashSpec, row_cost: int, budget: float, unit: str = "parameters") -> int:
    """The largest base table size per head (same for every order) whose rows, at ``row_cost``
    ``unit`` each (``dim`` parameters, or a row encoding's bytes), fit ``budget``.

    The cost grows with the base size (each head's prime is the next unused one above it), so a
    binary search over the base finds it; the real primes are used at every step.
    """
    if row_cost < 1:
        raise UsageError(f"`dim` must be at least 1 (got {row_cost})")

    def cost(table: int) -> int:
        return int(with_table(spec, table).rows_per_layer.sum()) * row_cost

    tables = (spec.max_ngram - 1) * spec.heads * spec.num_layers
    lo, hi = 2, max(2, int(budget // (row_cost * tables)))
    if cost(lo) > budget:
        raise UsageError(
            f"`budget` {budget:.4g} is below the smallest memory of this layout ({cost(lo):,} {unit} "
            f"with 2-row tables); raise it or use fewer heads, orders, layers or a smaller `dim`"
        )
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class MemorySizing:
    """What :func:`size_engram` found: the size report and the figures asked for besides it."""

    report: SizeReport
    preset: str
    budget: dict[str, Any] | None  # {"budget", "unit", "table", ...}: the largest base table that fits
    offload: dict[str, Any] | None
    backbone: dict[str, float] | None
    tensor_parallel: dict[str, Any] | None  # each rank's share when the tables are split by column
    expert_parallel: dict[str, Any] | None = None  # each rank's rows of every table (Megatron's split)

    def to_dict(self) -> dict[str, Any]:
        """Every figure as plain JSON types."""
        return {
            **self.report.to_dict(),
            "preset": self.preset,
            "budget": self.budget,
            "offload": self.offload,
            "backbone": self.backbone,
            "tensor_parallel": self.tensor_parallel,
            "expert_parallel": self.expert_parallel,
        }


def size_engram(
    preset_name: str = "engram-demo",
    *,
    max_ngram: int | None = None,
    heads: int | None = None,
    layer_ids: Sequence[int] | None = None,
    table_sizes: int | Sequence[int] | None = None,
    dim: int | None = None,
    budget: float | None = None,
    budget_bytes: float | None = None,
    encoding: str | None = None,
    row_bytes: int | None = None,
    tokens_per_second: float | None = None,
    backbone_params: float | None = None,
    fp8_block: int = 128,
    tp: int | None = None,
    ep: int | None = None,
) -> MemorySizing:
    """Size an Engram memory from its layout alone: a preset, the fields given overriding it.

    ``budget`` (parameters), or ``budget_bytes`` (bytes of rows in ``encoding``, default bf16,
    or of ``row_bytes`` bytes each) chooses the largest base table that fits instead of
    ``table_sizes``;
    ``tokens_per_second`` (a decode rate) adds the read bandwidth and the host-offload link shares,
    ``backbone_params`` the table's share of the model, ``tp`` each tensor-parallel rank's rows
    when every layer's table is split by column over ``tp`` ranks, ``ep`` each expert-parallel
    rank's rows of every table as Megatron-LM splits them (:meth:`SizeReport.split_tables`).
    ``dim`` defaults to the preset's. A preset that declares its checkpoint's rows (and its
    padding), sized with its own layout, carries them into the report, which says whether the
    derived rows equal them.

    >>> from ngramtool.analysis.sizing import size_engram
    >>> sized = size_engram("engram-27b", budget=5.7e9)
    >>> sized.budget["table"], sized.report.params <= 5.7e9
    (2226373, True)
    >>> fitted = size_engram("engram-27b", budget_bytes=10e9, encoding="fp8-e8m0")
    >>> fitted.budget["table"], fitted.report.table_bytes["fp8-e8m0"] <= 10e9
    (3764791, True)
    """
    chosen = preset(preset_name)
    for name, value in (
        ("budget", budget),
        ("budget_bytes", budget_bytes),
        ("tokens_per_second", tokens_per_second),
        ("backbone_params", backbone_params),
    ):
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise UsageError(f"`{name}` must be a positive number (got {value:g})")
    spec = resolve_spec(
        preset=chosen.spec if chosen.sizes_only else preset_name,  # its layout, not its hash
        max_ngram=max_ngram,
        heads=heads,
        layer_ids=layer_ids,
        table_sizes=table_sizes,
    )
    dim = dim if dim is not None else chosen.dim
    fitted = None
    if budget is not None or budget_bytes is not None:
        fitted = _budget_fit(spec, dim, budget, budget_bytes, encoding, row_bytes, table_sizes)
        spec = with_table(spec, fitted["table"])
    elif encoding is not None or row_bytes is not None:
        raise UsageError(
            "`encoding` and `row_bytes` size a budget of bytes (`budget_bytes`): give one, or drop them"
        )
    own = _layout(spec) == _layout(chosen.spec)
    report = size_memory(
        spec,
        dim,
        fp8_block=fp8_block,
        declared_rows=chosen.declared_rows if own else None,
        row_multiple=chosen.row_multiple if own else 1,
    )
    return MemorySizing(
        report=report,
        preset=preset_name,
        budget=fitted,
        offload=report.offload(tokens_per_second) if tokens_per_second else None,
        backbone=report.backbone(backbone_params) if backbone_params else None,
        tensor_parallel=None if tp is None else report.tensor_parallel(tp),
        expert_parallel=None if ep is None else report.expert_parallel(ep),
    )


def _layout(spec: HashSpec) -> tuple[Any, ...]:
    """What a spec's rows depend on: N, K, the layers and the base table sizes."""
    return spec.max_ngram, spec.heads, spec.layer_ids, spec.table_sizes


def _budget_fit(
    spec: HashSpec,
    dim: int,
    budget: float | None,
    budget_bytes: float | None,
    encoding: str | None,
    row_bytes: int | None,
    table_sizes: Any,
) -> dict[str, Any]:
    """The largest base table that fits a budget of parameters or of bytes, and what it was fitted to."""
    if table_sizes is not None:
        raise UsageError("`budget` chooses the table size: drop `table_sizes`")
    if budget is not None and budget_bytes is not None:
        raise UsageError("give a `budget` of parameters or of bytes, not both")
    if budget is not None:
        if encoding is not None or row_bytes is not None:
            raise UsageError(
                "`encoding` and `row_bytes` size a budget of bytes: give the budget with a byte unit "
                "(10GB), or drop them"
            )
        _refuse_budget_beyond_int64(spec, dim, budget)
        return {"budget": budget, "unit": "parameters", "table": fit_table(spec, dim, budget)}
    assert budget_bytes is not None
    size, name = bytes_per_row(row_bytes, encoding, None if row_bytes is not None else dim)
    _refuse_budget_beyond_int64(spec, size, budget_bytes)
    table = fit_table(spec, size, budget_bytes, "bytes")
    return {"budget": budget_bytes, "unit": "bytes", "encoding": name, "row_bytes": size, "table": table}


def _refuse_budget_beyond_int64(spec: HashSpec, row_cost: int, budget: float) -> None:
    """Refuse a budget whose tables would number their rows past int64 (the spec's limit)."""
    orders_heads = (spec.max_ngram - 1) * spec.heads
    largest = (INT64_MAX - 1) // (orders_heads * 2)  # the largest base table a spec accepts
    tables = orders_heads * spec.num_layers
    if int(budget // (row_cost * tables)) > largest:  # fit_table searches bases up to this quotient
        raise UsageError(
            f"`budget` {budget:.4g} asks for tables of more than {largest:,} rows each; row numbers "
            f"must fit int64: give a `budget` of at most about {largest * row_cost * tables:.3g} "
            "for this layout and `dim`"
        )
