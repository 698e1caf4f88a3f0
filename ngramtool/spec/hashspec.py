"""HashSpec: the user's hash configuration and the constants derived from it exactly as Engram does.

See docs/hash-spec.md. Derivation follows docs/engram-spec.md §3:
multipliers from numpy's PCG64 (3.1), globally distinct primes (3.2), per-layer offsets (3.3).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np

from ..util.errors import UsageError
from ..util.primes import next_prime
from .families import Family, Mix, check_family, longcat, mix_of, speedrun, tutorial
from .families.stored import StoredConstants

Boundary = Literal["none", "reset"]
BOUNDARIES: tuple[Boundary, ...] = ("none", "reset")
"""Where windows are padded: ``none`` only at the stream start (Engram), ``reset`` at every document."""


def check_boundary_policy(boundary: str) -> Boundary:
    """``boundary`` when it is a policy (:data:`BOUNDARIES`); else a usage error naming `boundary`."""
    if boundary not in BOUNDARIES:
        raise UsageError(f"`boundary` must be 'none' or 'reset' (got {boundary!r})")
    return boundary  # type: ignore[return-value]


FAMILY_SEEDS = {"tutorial": 2026}
DESCRIPTIVE = ("model_vocab_size",)
"""Spec fields that describe the model and change no row: the spec file and every manifest record
them, the fingerprint leaves them out (equal rows, equal fingerprints)."""
"""A family's seed when none is given (the tutorial chapter seeds torch's generator with 2026)."""

# Bump when the meaning of a spec changes (the fingerprint covers it).
HASH_VERSION = 1
INT32_LIMIT = 2**31
INT64_MAX = 2**63 - 1
# docs/engram-spec.md §3.1: each layer's generator is seeded with seed + LAYER_SEED_STRIDE * layer_id.
LAYER_SEED_STRIDE = 10007


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _smallest_per_order(stored: StoredConstants, heads: int) -> tuple[int, ...]:
    """A stored spec's ``table_sizes``: each order's smallest stored table (they are not derived
    from it; the field only describes them)."""
    sizes = np.array(stored.table_sizes, dtype=np.int64)
    if sizes.shape[1] % heads:
        return tuple(int(x) for x in sizes.min(axis=0))  # refused by the shape check
    return tuple(int(x) for x in sizes.reshape(sizes.shape[0], -1, heads).min(axis=(0, 2)))


@dataclass(frozen=True)
class HashSpec:
    """An Engram n-gram hash configuration, and the constants derived from it.

    Examples:
        >>> from ngramtool import HashSpec
        >>> spec = HashSpec(heads=2, layer_ids=(1,), table_sizes=(1000, 2000), vocab_size=5000, pad_id=0)
        >>> spec.primes.tolist(), spec.num_columns, spec.row_dtype
        ([[[1009, 1013], [2003, 2011]]], 4, dtype('int32'))
        >>> HashSpec.from_json(spec.to_json()) == spec
        True

    Args:
        max_ngram: N, the largest n-gram order; orders 2..N are hashed.
        heads: K, hash heads per order (Engram's ``n_head_per_ngram``).
        layer_ids: the transformer layers that carry an Engram memory, in order.
        table_sizes: the base table size per order 2..N (Engram's ``engram_vocab_size``);
            each head's real size is the next unused prime above it (tutorial: the size itself;
            LongCat: ``m``; stored: each order's smallest stored size, whatever is given).
        seed: the global seed of the multiplier generator (default 0; the tutorial's: 2026).
        pad_id: the canonical id used for window positions before a stream or document start
            (default 2, the Engram demo's; 0 for the other families).
        vocab_size: V', the number of canonical ids; every input id must be below it.
        family: how constants are derived and windows mixed (:mod:`ngramtool.spec.families`,
            docs/families.md): ``engram`` (the default), ``tutorial`` (``seed`` seeds torch's
            generator, ``table_sizes`` are the tables, not prime), ``longcat`` (polynomial ids;
            pad 0, no seed) or ``stored`` (the constants given in ``stored``).
        stored: the constants of family ``stored`` (:class:`~ngramtool.spec.families.stored.StoredConstants`).
        eos_fill: Qwen3.8's segments: a segment starts after each EOS, which is ``pad_id``, and the
            lookbacks before a segment start hold the EOS id (with ``boundary="reset"``, so do
            those before a document start). The EOS itself hashes as any token.
        stop_token: LongCat as sglang serves it (``compute_n_gram_ids(..., eos_token_id)``): the
            walk back stops at this id at lookback j > 0, as at an ignored token, while its own
            n-grams still include it (a segment starts after it). None: the reference's walk,
            which does not stop there.
        first_token: the speedrun family's reading of a sequence's first token in later windows:
            ``reserved`` (modded-nanogpt: the reserved id, the default) or ``kept``
            (parameter-golf: the token itself).
        model_vocab_size: the model's embedding rows (``vocab_size`` of its config, padded past
            the tokenizer's ids): engine token maps are padded to it with the compressed pad. It
            changes no row (the fingerprint leaves it out).
    """

    max_ngram: int = 3
    heads: int = 8
    layer_ids: tuple[int, ...] = (1, 15)
    table_sizes: tuple[int, ...] = (646400, 646400)
    seed: int = None  # type: ignore[assignment]  # None: the family's (see __post_init__)
    pad_id: int = None  # type: ignore[assignment]
    vocab_size: int = 98627
    family: Family = "engram"
    stored: StoredConstants | None = None
    eos_fill: bool = False
    stop_token: int | None = None
    first_token: str | None = None
    model_vocab_size: int | None = None

    def __repr__(self) -> str:
        """The fields that make the rows, then only the optional ones that are set (one short line)."""
        always = ("max_ngram", "heads", "layer_ids", "table_sizes", "seed", "pad_id", "vocab_size", "family")
        optional = ("stored", "eos_fill", "stop_token", "first_token", "model_vocab_size")
        named = [name for name in optional if getattr(self, name) not in (None, False)]
        shown = [f"{name}={getattr(self, name)!r}" for name in always + tuple(named)]
        return f"HashSpec({', '.join(shown)})"

    def __post_init__(self) -> None:
        # Not given: the family's own (Engram's pad 2, the tutorial chapter's seed 2026, else 0;
        # the speedrun family's start marker V, one past the last raw id).
        if self.seed is None:
            object.__setattr__(self, "seed", FAMILY_SEEDS.get(self.family, 0))
        if self.pad_id is None:
            pads = {"engram": 2, "speedrun": self.vocab_size}
            object.__setattr__(self, "pad_id", pads.get(self.family, 0))
        if self.family == "speedrun" and self.first_token is None:
            object.__setattr__(self, "first_token", "reserved")
        object.__setattr__(self, "layer_ids", tuple(int(x) for x in self.layer_ids))
        object.__setattr__(self, "table_sizes", tuple(int(x) for x in self.table_sizes))
        if isinstance(self.stored, dict):
            object.__setattr__(self, "stored", StoredConstants.from_dict(self.stored))
        if self.family == "stored" and self.stored is not None:
            object.__setattr__(self, "table_sizes", _smallest_per_order(self.stored, self.heads))
        self._validate()
        self._validate_family()

    def _validate(self) -> None:
        if self.max_ngram < 2:
            raise UsageError(
                f"`max_ngram` must be at least 2 (got {self.max_ngram}): Engram hashes orders 2..N"
            )
        if self.heads < 1:
            raise UsageError(f"`heads` must be at least 1 (got {self.heads})")
        if not self.layer_ids:
            raise UsageError("`layer_ids` is empty: give at least one layer, e.g. `layer_ids=1,15`")
        if min(self.layer_ids) < 0:
            raise UsageError(f"`layer_ids` must be >= 0 (got {list(self.layer_ids)})")
        if len(set(self.layer_ids)) != len(self.layer_ids):
            raise UsageError(f"`layer_ids` must be distinct (got {list(self.layer_ids)})")
        if len(self.table_sizes) != self.max_ngram - 1:
            raise UsageError(
                f"`table_sizes` needs one base size per order 2..{self.max_ngram} "
                f"({self.max_ngram - 1} values), got {len(self.table_sizes)}: {list(self.table_sizes)}",
            )
        if max(self.table_sizes) * (self.max_ngram - 1) * self.heads * 2 >= INT64_MAX:
            raise UsageError(
                f"`table_sizes` up to {max(self.table_sizes)} give a layer more than 2^63 rows; "
                "row numbers must fit int64: use smaller tables or fewer heads",
            )
        if min(self.table_sizes) < 2:
            raise UsageError(f"every size in `table_sizes` must be at least 2 (got {list(self.table_sizes)})")
        if self.vocab_size < 1:
            raise UsageError(f"`vocab_size` must be at least 1 (got {self.vocab_size})")
        if self.model_vocab_size is not None and self.model_vocab_size < 1:
            raise UsageError(f"`model_vocab_size` must be at least 1 (got {self.model_vocab_size})")
        if self.family != "speedrun" and not 0 <= self.pad_id < self.vocab_size:
            raise UsageError(
                f"`pad_id` {self.pad_id} is not a canonical id: it must lie in [0, {self.vocab_size}) "
                "(a tokenizer's raw pad id is mapped through the vocabulary first)"
            )
        if self.seed < 0:
            raise UsageError(f"`seed` must be >= 0 (got {self.seed})")

    def _validate_family(self) -> None:
        """What each family (docs/families.md) requires of the other fields."""
        family = check_family(self.family)
        if (self.stored is not None) != (family == "stored"):
            raise UsageError(
                "`stored` constants go with family 'stored' (and it needs them): "
                f"got family {family!r} {'with' if self.stored is not None else 'without'} constants"
            )
        if family == "longcat":
            if self.pad_id != 0 or self.seed != 0:
                raise UsageError(
                    "family 'longcat' drops the terms before a sequence start (a pad of 0) and its weights "
                    f"are powers of V (no seed): give pad_id=0 and seed=0 (got {self.pad_id}, {self.seed})"
                )
            longcat.check_exact(self.vocab_size, self.table_sizes, self.heads)
        if family == "tutorial" and (self.vocab_size - 1) * 2 * tutorial.MULTIPLIER_HIGH >= 2**63:
            raise UsageError(f"family 'tutorial' with V={self.vocab_size:,}: products would pass 2^63")
        if family == "stored":
            if self.seed != 0:
                raise UsageError("family 'stored' reads its multipliers from the checkpoint: give seed=0")
            self._validate_stored(self.stored)
        if self.stop_token is not None:
            if family != "longcat":
                raise UsageError(
                    f"`stop_token` is LongCat's walk as sglang serves it, not family {family!r}'s: drop it"
                )
            if not 0 <= self.stop_token < self.vocab_size:
                raise UsageError(
                    f"`stop_token` {self.stop_token} is not an id of the vocabulary: it must lie in "
                    f"[0, {self.vocab_size})"
                )
        if (self.first_token is not None) != (family == "speedrun"):
            raise UsageError(f"`first_token` is the speedrun family's, not family {family!r}'s: drop it")
        if family == "speedrun":
            speedrun.check(self.max_ngram, self.heads, self.first_token)
            if self.pad_id != self.vocab_size or self.seed != 0:
                raise UsageError(
                    "family 'speedrun' has fixed multipliers (no seed) and marks a sequence start with "
                    f"V = {self.vocab_size:,}, one past the last id: give seed=0 and no pad_id "
                    f"(got {self.seed}, {self.pad_id})"
                )

    def _validate_stored(self, stored: StoredConstants) -> None:
        """The stored constants' shapes agree with L, N and C; tables fit their layer's rows."""
        shapes = {
            "multipliers": (len(stored.multipliers), {len(r) for r in stored.multipliers}, self.max_ngram),
            "table_sizes": (len(stored.table_sizes), {len(r) for r in stored.table_sizes}, self.num_columns),
            "offsets": (len(stored.offsets), {len(r) for r in stored.offsets}, self.num_columns),
        }
        for name, (layers, widths, wanted) in shapes.items():
            if layers != self.num_layers or widths != {wanted}:
                raise UsageError(
                    f"stored `{name}` must be [{self.num_layers} layers][{wanted}] for N={self.max_ngram}, "
                    f"K={self.heads} and layers {list(self.layer_ids)}; got {layers} rows of {sorted(widths)}"
                )
        multipliers = np.array(stored.multipliers, dtype=object)
        if (multipliers < 0).any() or int(multipliers.max()) * (self.vocab_size - 1) > INT64_MAX:
            raise UsageError(
                f"stored multipliers must be >= 0 and below (2^63-1)/(V-1) for V={self.vocab_size:,}, "
                "so that no product wraps: these constants are not for this vocabulary"
            )
        sizes, offsets = np.array(stored.table_sizes), np.array(stored.offsets)
        if sizes.min() < 2 or offsets.min() < 0:
            raise UsageError("stored table sizes must be at least 2 and offsets at least 0")
        if len(stored.rows) != self.num_layers or ((sizes + offsets).max(axis=1) > stored.rows).any():
            raise UsageError(f"stored rows {list(stored.rows)} must hold every layer's offsets + sizes")

    # ------------------------------------------------------------------ shape
    @property
    def num_layers(self) -> int:
        """L, the number of Engram layers."""
        return len(self.layer_ids)

    @property
    def num_columns(self) -> int:
        """C = (N-1)*K, the row indices per token and layer."""
        return (self.max_ngram - 1) * self.heads

    def column(self, order: int, head: int) -> int:
        """The column of (order n, head h) in a layer's rows: (n-2)*K + h."""
        return (order - 2) * self.heads + head

    # ------------------------------------------------------------ derivation
    @property
    def mix(self) -> Mix:
        """How a window's terms combine: ``xor`` (multiply-XOR) or ``sum`` (LongCat's polynomial)."""
        return mix_of(self.family)

    @property
    def layer_mix(self) -> bool:
        """Whether every column of a layer mixes with the layer's multipliers by lag (engram,
        stored), so order n's mix extends order n-1's; else each column has its own
        (:attr:`column_multipliers`)."""
        return self.family in ("engram", "stored")

    @cached_property
    def half_bound(self) -> int:
        """max(1, floor(floor((2^63-1)/V') / 2)): multipliers are 2*r+1 with r below this."""
        return max(1, (INT64_MAX // self.vocab_size) // 2)

    @cached_property
    def multipliers(self) -> np.ndarray:
        """int64 [L, N]: multipliers per layer and lag (engram: docs/engram-spec.md §3.1; stored:
        as given). The tutorial's and LongCat's are per column: :attr:`column_multipliers`."""
        if self.family == "stored":
            return _frozen(np.array(self.stored.multipliers, dtype=np.int64))
        if self.family != "engram":
            raise UsageError(
                f"family {self.family!r} has a multiplier list per column, not per layer: "
                "use `column_multipliers`"
            )
        rows = []
        for layer_id in self.layer_ids:
            rng = np.random.default_rng(self.seed + LAYER_SEED_STRIDE * layer_id)
            r = rng.integers(0, self.half_bound, size=self.max_ngram, dtype=np.int64)
            rows.append(r * 2 + 1)
        return _frozen(np.array(rows, dtype=np.int64))

    @property
    def family_multipliers(self) -> np.ndarray:
        """The multipliers as the family has them: :attr:`multipliers` [L, N] where a layer's
        columns share them (engram, stored), else :attr:`column_multipliers` [L, C, N]."""
        return self.multipliers if self.layer_mix else self.column_multipliers

    @cached_property
    def column_multipliers(self) -> np.ndarray:
        """int64 [L, C, N]: column c's multiplier (``sum``: weight) for the id at lag k (k=0 the
        current token); 0 for lags beyond the column's order. Every family has it."""
        c, n = self.num_columns, self.max_ngram
        if self.family == "tutorial":
            per_column = tutorial.column_multipliers(self.seed, n, self.heads)
        elif self.family == "speedrun":
            per_column = speedrun.column_multipliers(n)
        elif self.family == "longcat":
            per_column = longcat.column_weights(self.vocab_size, self.table_sizes, self.heads)
        else:
            orders = np.repeat(np.arange(2, n + 1), self.heads)
            reaches = np.arange(n)[None, :] < orders[:, None]  # [C, N]
            return _frozen(np.where(reaches[None], self.multipliers[:, None, :], 0).astype(np.int64))
        return _frozen(np.broadcast_to(per_column, (self.num_layers, c, n)).copy())

    @cached_property
    def primes(self) -> np.ndarray:
        """int64 [L, N-1, K]: each head's table size (its modulus): distinct primes for engram (3.2),
        the order's table size for the tutorial, ``m + 2i + 1`` for LongCat, as given when stored;
        the speedrun family's table of ``T`` rows, hashed modulo ``T - 1`` (its last row reserved)."""
        shape = (self.num_layers, self.max_ngram - 1, self.heads)
        if self.family in ("tutorial", "speedrun"):
            sizes = np.asarray(self.table_sizes, dtype=np.int64)[:, None]
            return _frozen(np.broadcast_to(sizes, shape).copy())
        if self.family == "longcat":
            return _frozen(np.broadcast_to(longcat.moduli(self.table_sizes, self.heads), shape).copy())
        if self.family == "stored":
            return _frozen(np.array(self.stored.table_sizes, dtype=np.int64).reshape(shape))
        seen: set[int] = set()
        out = np.zeros(shape, dtype=np.int64)
        for li in range(self.num_layers):
            for oi, base in enumerate(self.table_sizes):
                current = base - 1
                for h in range(self.heads):
                    current = next_prime(current, seen)
                    seen.add(current)
                    out[li, oi, h] = current
        return _frozen(out)

    @cached_property
    def offsets(self) -> np.ndarray:
        """int64 [L, (N-1)K]: where each column's sub-table starts in its layer's table: the
        exclusive prefix sums of the sizes (3.3), or as given when stored."""
        if self.family == "stored":
            return _frozen(np.array(self.stored.offsets, dtype=np.int64))
        flat = self.primes.reshape(self.num_layers, -1)
        out = np.zeros_like(flat)
        out[:, 1:] = np.cumsum(flat, axis=1)[:, :-1]
        return _frozen(out)

    @cached_property
    def rows_per_layer(self) -> np.ndarray:
        """int64 [L]: rows in each layer's single table (the sum of its sizes; stored: as stored)."""
        if self.family == "stored":
            return _frozen(np.array(self.stored.rows, dtype=np.int64))
        return _frozen(self.primes.reshape(self.num_layers, -1).sum(axis=1))

    def rows_differing(self, declared: Sequence[int]) -> list[tuple[int, int, int]]:
        """(layer id, derived rows, declared rows) of each layer whose rows differ from
        ``declared`` (a released checkpoint's table heights, one per layer); every layer when the
        counts differ; [] when they agree.

        Examples:
            >>> HashSpec(heads=2, layer_ids=(1,), table_sizes=(1000, 2000)).rows_differing([6036])
            []
        """
        derived = self.rows_per_layer.tolist()
        pairs = list(zip(self.layer_ids, derived, declared, strict=False))
        if len(derived) != len(declared):
            return pairs
        return [(layer, got, wanted) for layer, got, wanted in pairs if got != wanted]

    @property
    def segment_stop(self) -> int | None:
        """The id after which a new segment starts (lookbacks at and before it are the pad):
        Qwen3.8's EOS (:attr:`eos_fill`, the pad id itself) or LongCat's :attr:`stop_token`;
        None when the spec has neither."""
        return self.pad_id if self.eos_fill else self.stop_token

    @property
    def reserved_first(self) -> bool:
        """Whether each sequence's first token reads as the pad (the speedrun family's reserved id)
        in later windows, and gets the reserved row (``first_token="reserved"``)."""
        return self.first_token == "reserved"

    @property
    def id_bound(self) -> int:
        """What bounds the ids a window holds: V, or V + 1 where the pad is the start marker V
        (the speedrun family)."""
        return self.vocab_size + (self.family == "speedrun")

    @property
    def row_dtype(self) -> np.dtype:
        """int32 when every layer's table has fewer than 2^31 rows, else int64."""
        return np.dtype(np.int32 if int(self.rows_per_layer.max()) < INT32_LIMIT else np.int64)

    # ------------------------------------------------------------ identity
    def to_dict(self) -> dict[str, Any]:
        """The user-facing fields as plain JSON types."""
        d = asdict(self)
        d["layer_ids"] = list(self.layer_ids)
        d["table_sizes"] = list(self.table_sizes)
        # An Engram spec reads as it did before families: its fingerprint is unchanged.
        if self.family == "engram":
            del d["family"]
        if not self.eos_fill:
            del d["eos_fill"]
        for name in ("stop_token", "first_token", *DESCRIPTIVE):
            if d[name] is None:
                del d[name]
        if self.stored is None:
            del d["stored"]
        else:
            d["stored"] = self.stored.to_dict()
        return d

    def to_json(self) -> str:
        """Canonical JSON of :meth:`to_dict` (sorted keys)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HashSpec:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        known = {"max_ngram", "heads", "layer_ids", "table_sizes", "seed", "pad_id", "vocab_size"}
        optional = {"family", "stored", "eos_fill", "stop_token", "first_token", *DESCRIPTIVE}
        unknown = set(data) - known - optional
        if unknown:
            raise UsageError(
                f"unknown HashSpec field(s): {sorted(unknown)}; known: {sorted(known | optional)}"
            )
        extra = {name: data[name] for name in optional if name in data}
        if not isinstance(extra.get("family", ""), str):
            raise UsageError(f"HashSpec field 'family' must be a string, got {extra['family']!r}")
        if not isinstance(extra.get("eos_fill", False), bool):
            raise UsageError(f"HashSpec field 'eos_fill' must be true or false, got {extra['eos_fill']!r}")
        if not isinstance(extra.get("first_token", ""), str):
            raise UsageError(f"HashSpec field 'first_token' must be a string, got {extra['first_token']!r}")
        for name in ("stop_token", *DESCRIPTIVE):
            value = extra.get(name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise UsageError(f"HashSpec field {name!r} must be an integer, got {value!r}")
        data = {name: value for name, value in data.items() if name in known}
        for name, value in data.items():
            items = value if name in ("layer_ids", "table_sizes") else [value]
            if not isinstance(items, list | tuple) or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in items
            ):
                kind = "a list of integers" if name in ("layer_ids", "table_sizes") else "an integer"
                raise UsageError(f"HashSpec field {name!r} must be {kind}, got {value!r}")
        return cls(**data, **extra)

    @classmethod
    def from_json(cls, text: str) -> HashSpec:
        """Inverse of :meth:`to_json`."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"a HashSpec must be a JSON object: {exc}") from None
        if not isinstance(data, dict):
            raise UsageError("a HashSpec must be a JSON object")
        return cls.from_dict(data)

    @cached_property
    def fingerprint(self) -> str:
        """sha256 of the hash version and the canonical JSON of the fields that change rows (not
        :data:`DESCRIPTIVE` ones, nor the layer numbers recorded beside stored constants): equal
        fingerprints, equal rows."""
        hashed = {name: value for name, value in self.to_dict().items() if name not in DESCRIPTIVE}
        if self.stored is not None:
            hashed["stored"] = self.stored.to_dict(numbering=False)
        payload = f"ngramtool-hashspec-v{HASH_VERSION}:{json.dumps(hashed, sort_keys=True)}"
        return hashlib.sha256(payload.encode()).hexdigest()
