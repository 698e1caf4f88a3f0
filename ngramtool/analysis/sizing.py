"""What an Engram memory costs, from its spec alone: tables, rows, parameters, bytes, traffic.

Every count uses the real prime table sizes of the spec (docs/engram-spec.md §3.2), so it matches what
``ngramtool hash`` indexes and what a trainer allocates. See docs/analysis.md for each figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import UsageError
from ..presets import preset, resolve_spec
from ..spec import INT64_MAX, HashSpec

BYTES_PER_VALUE = {"fp32": 4, "bf16": 2, "fp8": 1}
FP8_SCALE_BYTES = 4  # one fp32 scale per block of a row
ADAMW_STATE_BYTES = 8  # two fp32 moments per parameter
# Usable bandwidth of one direction of a x16 link: GT/s x 16 lanes x 128b/130b encoding / 8 bits.
PCIE_X16 = {
    "PCIe 4.0 x16": 16e9 * 16 * 128 / 130 / 8,
    "PCIe 5.0 x16": 32e9 * 16 * 128 / 130 / 8,
}


@dataclass(frozen=True)
class SizeReport:
    """The sizes and costs of one memory. Byte figures are keyed by storage type fp32/bf16/fp8.

    fp8 bytes include one fp32 scale per block of ``fp8_block`` values of a row.
    """

    spec: HashSpec
    dim: int
    fp8_block: int

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
    def rows(self) -> int:
        """Rows of all tables (the sum of the real primes)."""
        return int(self.spec.rows_per_layer.sum())

    @property
    def nominal_params(self) -> int:
        """Parameters if every table had exactly its base size (before prime rounding)."""
        return sum(self.spec.table_sizes) * self.spec.heads * self.spec.num_layers * self.dim

    @property
    def params(self) -> int:
        """Parameters: rows x dim."""
        return self.rows * self.dim

    def _row_bytes(self, dtype: str) -> int:
        scales = -(-self.dim // self.fp8_block) * FP8_SCALE_BYTES if dtype == "fp8" else 0
        return self.dim * BYTES_PER_VALUE[dtype] + scales

    @property
    def table_bytes(self) -> dict[str, int]:
        """Bytes of all tables per storage type."""
        return {dtype: self.rows * self._row_bytes(dtype) for dtype in BYTES_PER_VALUE}

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
    def bytes_per_token(self) -> dict[str, int]:
        """Bytes one token reads (and must move when the tables live in host memory)."""
        return {dtype: self.rows_per_token * self._row_bytes(dtype) for dtype in BYTES_PER_VALUE}

    @property
    def touched_fraction(self) -> float:
        """Share of all rows one token reads."""
        return self.rows_per_token / self.rows

    @property
    def memory_width(self) -> int:
        """Width of the memory vector e_t of one layer: (N-1) x K x dim."""
        return self.tables_per_layer * self.dim

    def offload(self, tokens_per_second: float) -> dict[str, Any]:
        """Host-to-device bandwidth at ``tokens_per_second`` per storage type, and each link's share.

        An upper bound: rows shared by tokens of one batch, or cached on the device, move once.
        """
        out: dict[str, Any] = {"tokens_per_second": tokens_per_second, "links": dict(PCIE_X16)}
        for dtype, per_token in self.bytes_per_token.items():
            need = per_token * tokens_per_second
            out[dtype] = {
                "bytes_per_second": need,
                "link_share": {link: need / rate for link, rate in PCIE_X16.items()},
            }
        return out

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
            "rows_per_layer": spec.rows_per_layer.tolist(),
            "rows": self.rows,
            "nominal_params": self.nominal_params,
            "params": self.params,
            "table_bytes": self.table_bytes,
            "adamw_bytes": self.adamw_bytes,
            "rows_per_token": self.rows_per_token,
            "values_per_token": self.values_per_token,
            "bytes_per_token": self.bytes_per_token,
            "touched_fraction": self.touched_fraction,
            "memory_width": self.memory_width,
        }


def size_memory(spec: HashSpec, dim: int, *, fp8_block: int = 128) -> SizeReport:
    """The size report of ``spec`` with ``dim`` values per row (per head)."""
    if dim < 1:
        raise UsageError(f"`dim` must be at least 1 (got {dim})")
    if fp8_block < 1:
        raise UsageError(f"`fp8_block` must be at least 1 (got {fp8_block})")
    return SizeReport(spec, dim, fp8_block)


def with_table(spec: HashSpec, table: int) -> HashSpec:
    """``spec`` with every order's base table size set to ``table``."""
    return replace(spec, table_sizes=(table,) * (spec.max_ngram - 1))


def fit_table(spec: HashSpec, dim: int, budget: float) -> int:
    """The largest base table size per head (same for every order) whose parameters fit ``budget``.

    Parameters grow with the base size (each head's prime is the next unused one above it), so
    a binary search over the base finds it; the real primes are used at every step.
    """
    if dim < 1:
        raise UsageError(f"`dim` must be at least 1 (got {dim})")

    def params(table: int) -> int:
        return int(with_table(spec, table).rows_per_layer.sum()) * dim

    tables = (spec.max_ngram - 1) * spec.heads * spec.num_layers
    lo, hi = 2, max(2, int(budget // (dim * tables)))
    if params(lo) > budget:
        raise UsageError(
            f"`budget` {budget:.4g} is below the smallest memory of this layout ({params(lo):,} parameters "
            f"with 2-row tables); raise it or use fewer heads, orders, layers or a smaller `dim`"
        )
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if params(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class MemorySizing:
    """What :func:`size_engram` found: the size report and the figures asked for besides it."""

    report: SizeReport
    preset: str
    budget: dict[str, float] | None  # {"budget", "table"}: the largest base table that fits
    offload: dict[str, Any] | None
    backbone: dict[str, float] | None

    def to_dict(self) -> dict[str, Any]:
        """Every figure as plain JSON types."""
        return {
            **self.report.to_dict(),
            "preset": self.preset,
            "budget": self.budget,
            "offload": self.offload,
            "backbone": self.backbone,
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
    tokens_per_second: float | None = None,
    backbone_params: float | None = None,
    fp8_block: int = 128,
) -> MemorySizing:
    """Size an Engram memory from its layout alone: a preset, the fields given overriding it.

    ``budget`` (parameters) chooses the largest base table that fits instead of ``table_sizes``;
    ``tokens_per_second`` adds the host-offload bandwidth, ``backbone_params`` the table's share
    of the model. ``dim`` defaults to the preset's.

    >>> from ngramtool.analysis.sizing import size_engram
    >>> sized = size_engram("engram-27b", budget=5.7e9)
    >>> sized.budget["table"], sized.report.params <= 5.7e9
    (2226373, True)
    """
    chosen = preset(preset_name)
    for name, value in (
        ("budget", budget),
        ("tokens_per_second", tokens_per_second),
        ("backbone_params", backbone_params),
    ):
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise UsageError(f"`{name}` must be a positive number (got {value:g})")
    spec = resolve_spec(
        preset=preset_name, max_ngram=max_ngram, heads=heads, layer_ids=layer_ids, table_sizes=table_sizes
    )
    dim = dim if dim is not None else chosen.dim
    fitted = None
    if budget is not None:
        if table_sizes is not None:
            raise UsageError("`budget` chooses the table size: drop `table_sizes`")
        _refuse_budget_beyond_int64(spec, dim, budget)
        spec = with_table(spec, fit_table(spec, dim, budget))
        fitted = {"budget": budget, "table": spec.table_sizes[0]}
    report = size_memory(spec, dim, fp8_block=fp8_block)
    return MemorySizing(
        report=report,
        preset=preset_name,
        budget=fitted,
        offload=report.offload(tokens_per_second) if tokens_per_second else None,
        backbone=report.backbone(backbone_params) if backbone_params else None,
    )


def _refuse_budget_beyond_int64(spec: HashSpec, dim: int, budget: float) -> None:
    """Refuse a budget whose tables would number their rows past int64 (the spec's limit)."""
    orders_heads = (spec.max_ngram - 1) * spec.heads
    largest = (INT64_MAX - 1) // (orders_heads * 2)  # the largest base table a spec accepts
    tables = orders_heads * spec.num_layers
    if int(budget // (dim * tables)) > largest:  # fit_table searches bases up to this quotient
        raise UsageError(
            f"`budget` {budget:.4g} asks for tables of more than {largest:,} rows each; row numbers "
            f"must fit int64: give a `budget` of at most about {largest * dim * tables:.3g} "
            "for this layout and `dim`"
        )
