"""Check a deployment: compare the constants a file holds with the derived ones, and apply the rules
engines validate to the file's constants on their own (``ngramtool spec check``).

Per constant the report says ``ok``, ``differs`` (the first differing index, where it lies, and
both values), ``absent`` (the file lacks it: not an error, dialects store different subsets) or
``not derived`` (nothing to compare with: the token map without a tokenizer, ``key_length``
without a head dim, a raw pad that is not known). A token map shorter than the tokenizer's raw id
count is an error of its own: it was made for another tokenizer.

A model's vocabulary is padded past its tokenizer's ids, and a GGUF's token count (llama.cpp's
``n_vocab``) is the padded size: llama.cpp requires one token map entry per token. The derived map
is padded to the model's size (``--model-vocab``, the spec's ``model_vocab_size``, else the GGUF's
token count, else the file's own map when it is longer) with the compressed pad, and the rules
check that the file's map has one entry per GGUF token and that every entry past the tokenizer's
ids is the compressed pad, naming the first raw id that is not.

A token map entry of ``-1`` marks a raw id without a token (cl100k_base has 16); it is compared
like any value, and the rule on entries allows it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..spec.hashspec import INT64_MAX
from ..util.errors import NgramToolError
from ..util.primes import is_prime
from .engine_constants import DeployedConstants, EngineConstants, Found, token_map_sha256

COMPARED = (
    "layer_ids",
    "max_ngram",
    "heads",
    "compressed_vocab_size",
    "pad_id",
    "raw_pad_id",
    "key_length",
    "rows",
    "multipliers",
    "primes",
    "offsets",
    "token_map",
    "token_map_padded_from",
)
"""The constants compared, in the order the report lists them."""


@dataclass(frozen=True)
class ConstantCheck:
    """One constant (as one place in the file holds it) against the derived one.

    Attributes:
        name: the constant (an :class:`EngineConstants` field, or ``token_map_sha256``).
        status: ``ok``, ``differs``, ``absent`` or ``not derived``.
        source: where the file holds it (None when absent).
        index: the first differing index of the flattened values (``differs``).
        where: what that index is (``layer 14, order 3, head 5``).
        expected: the derived value there (None past the end of the derived values).
        found: the file's value there (None past the end of the file's values).
        detail: more, e.g. differing lengths.
    """

    name: str
    status: str
    source: str | None = None
    index: int | None = None
    where: str | None = None
    expected: int | str | None = None
    found: int | str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class RuleCheck:
    """One rule that engines validate, applied to the file's own constants.

    Attributes:
        rule: what the rule says.
        status: ``ok``, ``failed`` or ``not checked`` (the file lacks what it needs).
        index: the first offending index of the flattened values (``failed``).
        value: the offending value.
        detail: where it lies, or why the rule was not checked.
    """

    rule: str
    status: str
    index: int | None = None
    value: int | str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class CheckReport:
    """What :func:`check_deployment` found; ``ok`` when nothing differs and no rule failed."""

    target: str
    kind: str
    constants: tuple[ConstantCheck, ...]
    rules: tuple[RuleCheck, ...]

    @property
    def ok(self) -> bool:
        """No constant differs and no rule failed."""
        return all(c.status != "differs" for c in self.constants) and all(
            r.status != "failed" for r in self.rules
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON types."""
        return {
            "target": self.target,
            "kind": self.kind,
            "ok": self.ok,
            "constants": [asdict(c) for c in self.constants],
            "rules": [asdict(r) for r in self.rules],
        }


def check_deployment(deployed: DeployedConstants, derived: EngineConstants) -> CheckReport:
    """Compare ``deployed`` with ``derived`` and apply the engines' rules to ``deployed``.

    Raises NgramToolError when the file's token map is shorter than the tokenizer's raw ids.
    """
    derived = _padded_as_deployed(deployed, derived)
    layout = _Layout(derived)
    checks: list[ConstantCheck] = []
    for name in COMPARED:
        expected = _derived_values(derived, name)
        places = deployed.found.get(name, ())
        if name == "token_map" and derived.token_map is not None:
            _refuse_other_length(deployed, places, _tokenizer_ids(derived))
        if name == "token_map_padded_from" and not places and expected is None:
            continue  # a map not padded, nor said to be: nothing to report
        if not places:
            checks.append(ConstantCheck(name, "absent" if expected is not None else "not derived"))
        for place in places:
            checks.append(_compare(name, place, expected, layout, derived))
    checks.append(_compare_digest(deployed, derived))
    return CheckReport(deployed.path, deployed.kind, tuple(checks), tuple(_rules(deployed, derived)))


# --------------------------------------------------------------------------------- comparing
class _Layout:
    """What a flat index of each constant is, in the derived layout."""

    def __init__(self, derived: EngineConstants) -> None:
        self.layers = derived.layer_ids.tolist()
        self.n, self.k = derived.max_ngram, derived.heads

    def where(self, name: str, index: int) -> str | None:
        if name == "token_map":
            return f"raw id {index}"
        if name in ("layer_ids", "rows"):
            return f"layer {self.layers[index]}" if index < len(self.layers) else None
        width = self.n if name == "multipliers" else (self.n - 1) * self.k
        if name not in ("multipliers", "primes", "offsets") or index >= width * len(self.layers):
            return None
        layer, column = divmod(index, width)
        if name == "multipliers":
            return f"layer {self.layers[layer]}, lag {column}"
        order, head = divmod(column, self.k)
        return f"layer {self.layers[layer]}, order {order + 2}, head {head}"


def _derived_values(derived: EngineConstants, name: str) -> np.ndarray | None:
    value = getattr(derived, name)
    return None if value is None else np.asarray(value, dtype=np.int64).reshape(-1)


def _tokenizer_ids(derived: EngineConstants) -> int:
    """The tokenizer's raw id count: where the derived token map's padding starts, else its length."""
    assert derived.token_map is not None
    padded = derived.token_map_padded_from
    return len(derived.token_map) if padded is None else padded


def _padded_as_deployed(deployed: DeployedConstants, derived: EngineConstants) -> EngineConstants:
    """``derived`` with its token map padded to the model's vocabulary as the file has it, when no
    size was given: a GGUF's token count, else the file's own map where it is longer than the
    tokenizer's (its padding is then held to the compressed pad by the rules)."""
    if derived.token_map is None or derived.token_map_padded_from is not None:
        return derived
    target = deployed.token_count
    place = deployed.first("token_map")
    if target is None and place is not None:
        target = len(place.values)
    if target is None or target <= len(derived.token_map):
        return derived
    return derived.padded_to(target)


def _refuse_other_length(deployed: DeployedConstants, places: tuple[Found, ...], raw_ids: int) -> None:
    for place in places:
        if len(place.values) < raw_ids:
            raise NgramToolError(
                f"{deployed.path}: the token map ({place.source}) has {len(place.values):,} entries but the "
                f"tokenizer has {raw_ids:,} raw ids (one entry per raw id): it was made for another tokenizer"
            )


def _first_difference(expected: np.ndarray, found: np.ndarray) -> int | None:
    """The first index below both lengths where the values differ (exact for uint64 values)."""
    n = min(len(expected), len(found))
    a, b = expected[:n], found[:n]
    if b.dtype.kind == "u" and n and int(b.max()) > INT64_MAX:
        a, b = a.astype(object), b.astype(object)
    else:
        b = b.astype(np.int64)
    differing = np.flatnonzero(a != b)
    return int(differing[0]) if differing.size else None


def _compare(
    name: str, place: Found, expected: np.ndarray | None, layout: _Layout, derived: EngineConstants
) -> ConstantCheck:
    if expected is None:
        return ConstantCheck(name, "not derived", place.source)
    found = place.values
    index = _first_difference(expected, found)
    lengths = None if len(found) == len(expected) else f"holds {len(found)} values, expected {len(expected)}"
    if index is None and lengths is None:
        return ConstantCheck(name, "ok", place.source)
    if index is None:
        index = min(len(found), len(expected))
    detail = lengths
    if name == "pad_id" and derived.raw_pad_id is not None and _at(found, index) == derived.raw_pad_id:
        detail = "that is the raw pad: engines put the compressed pad before a sequence start"
    where = layout.where(name, index)
    return ConstantCheck(
        name, "differs", place.source, index, where, _at(expected, index), _at(found, index), detail
    )


def _at(values: np.ndarray, index: int) -> int | None:
    """``values[index]`` as an int; None past the end."""
    return int(values[index]) if index < len(values) else None


def _compare_digest(deployed: DeployedConstants, derived: EngineConstants) -> ConstantCheck:
    recorded, expected = deployed.token_map_sha256, derived.token_map_sha256
    if recorded is None:
        return ConstantCheck("token_map_sha256", "absent" if expected is not None else "not derived")
    source = f"{deployed.kind} token_map_sha256"
    if expected is None:
        return ConstantCheck("token_map_sha256", "not derived", source)
    if recorded == expected:
        return ConstantCheck("token_map_sha256", "ok", source)
    return ConstantCheck("token_map_sha256", "differs", source, expected=expected, found=recorded)


# ------------------------------------------------------------------------------------- rules
def _rules(deployed: DeployedConstants, derived: EngineConstants) -> list[RuleCheck]:
    """The engines' rules on the file's own constants (its V', N and K where it holds them)."""

    def own(name: str) -> np.ndarray | None:
        place = deployed.first(name)
        return None if place is None else place.values

    def scalar(name: str, default: int) -> int:
        values = own(name)
        return default if values is None else int(values[0])

    vocab = scalar("compressed_vocab_size", derived.compressed_vocab_size)
    n, k = scalar("max_ngram", derived.max_ngram), scalar("heads", derived.heads)
    layer_ids = own("layer_ids")
    layers = len(layer_ids) if layer_ids is not None else derived.num_layers
    multipliers, primes, token_map = own("multipliers"), own("primes"), own("token_map")
    bound = INT64_MAX // vocab if vocab >= 1 else 0  # a V' below 1 leaves no multiplier valid
    return [
        _each("multipliers are odd", "multipliers", multipliers, lambda m: m % 2 == 1),
        _each(
            f"multipliers lie in [1, INT64_MAX // V' = {bound}]",
            "multipliers",
            multipliers,
            lambda m: 1 <= m <= bound,
        ),
        _each("primes are prime", "primes", primes, is_prime),
        _distinct(primes),
        _ascending(primes, layers, n - 1, k),
        _sums(primes, own("rows"), layers),
        _offsets(primes, own("offsets"), layers),
        _each(
            f"token map entries lie below V' = {vocab} (or are -1: no token)",
            "token map",
            token_map,
            lambda c: -1 <= c < vocab,
        ),
        _each(f"the pad lies below V' = {vocab}", "pad", own("pad_id"), lambda p: 0 <= p < vocab),
        _one_per_raw_id(token_map, derived),
        *([_one_per_gguf_token(token_map, deployed.token_count)] if deployed.kind == "GGUF" else []),
        *_padding(token_map, derived, scalar("pad_id", derived.pad_id)),
        _digest_rule(deployed, token_map),
    ]


def _missing(rule: str, what: str) -> RuleCheck:
    return RuleCheck(rule, "not checked", detail=f"the file holds no {what}")


def _each(rule: str, what: str, values: np.ndarray | None, holds: Any) -> RuleCheck:
    """``rule`` holds for each of the values (``what``, None: absent); the first that fails it is
    reported."""
    if values is None:
        return _missing(rule, what)
    for index, value in enumerate(values.tolist()):
        if not holds(value):
            return RuleCheck(rule, "failed", index, value)
    return RuleCheck(rule, "ok")


def _distinct(primes: np.ndarray | None) -> RuleCheck:
    rule = "primes are distinct"
    if primes is None:
        return _missing(rule, "primes")
    seen: dict[int, int] = {}
    for index, value in enumerate(primes.tolist()):
        if value in seen:
            return RuleCheck(rule, "failed", index, value, f"equal to index {seen[value]}")
        seen[value] = index
    return RuleCheck(rule, "ok")


def _unfit(rule: str, primes: np.ndarray, layers: int, width: int | None = None) -> RuleCheck | None:
    """None when the primes fill ``layers`` rows (of ``width``, when given); else the rule, not
    checked."""
    fits = len(primes) == layers * width if width is not None else layers > 0 and len(primes) % layers == 0
    if fits:
        return None
    shape = f"{layers} layers" + (f" of {width}" if width is not None else "")
    return RuleCheck(rule, "not checked", detail=f"{len(primes)} primes do not fill {shape}")


def _ascending(primes: np.ndarray | None, layers: int, orders: int, heads: int) -> RuleCheck:
    rule = "primes ascend per order, over layers then heads"
    if primes is None:
        return _missing(rule, "primes")
    if (unfit := _unfit(rule, primes, layers, orders * heads)) is not None:
        return unfit
    grid = primes.astype(object).reshape(layers, orders, heads)
    for order in range(orders):
        chain = grid[:, order, :].reshape(-1)
        for step in range(1, len(chain)):
            if chain[step] <= chain[step - 1]:
                layer, head = divmod(step, heads)
                index = (layer * orders + order) * heads + head
                return RuleCheck(rule, "failed", index, int(chain[step]), f"after {chain[step - 1]}")
    return RuleCheck(rule, "ok")


def _sums(primes: np.ndarray | None, rows: np.ndarray | None, layers: int) -> RuleCheck:
    rule = "each layer's primes sum to its rows"
    if primes is None or rows is None:
        return _missing(rule, "primes" if primes is None else "rows")
    if len(rows) != layers:
        return RuleCheck(rule, "not checked", detail=f"{len(rows)} rows for {layers} layers")
    if (unfit := _unfit(rule, primes, layers)) is not None:
        return unfit
    sums = primes.astype(object).reshape(layers, -1).sum(axis=1)
    for layer in range(layers):
        if sums[layer] != int(rows[layer]):
            detail = f"that layer's primes sum to {sums[layer]}"
            return RuleCheck(rule, "failed", layer, int(rows[layer]), detail)
    return RuleCheck(rule, "ok")


def _offsets(primes: np.ndarray | None, offsets: np.ndarray | None, layers: int) -> RuleCheck:
    rule = "offsets are each layer's exclusive prefix sums of its primes"
    if primes is None or offsets is None:
        return _missing(rule, "primes" if primes is None else "offsets")
    if len(offsets) != len(primes):
        return RuleCheck(rule, "not checked", detail=f"{len(offsets)} offsets for {len(primes)} primes")
    if (unfit := _unfit(rule, primes, layers)) is not None:
        return unfit
    grid = primes.astype(object).reshape(layers, -1)
    sums = np.zeros_like(grid)
    sums[:, 1:] = np.cumsum(grid, axis=1)[:, :-1]
    index = _first_difference(sums.reshape(-1).astype(np.int64), offsets)
    if index is None:
        return RuleCheck(rule, "ok")
    return RuleCheck(
        rule, "failed", index, int(offsets[index]), f"the prefix sum is {sums.reshape(-1)[index]}"
    )


def _one_per_raw_id(token_map: np.ndarray | None, derived: EngineConstants) -> RuleCheck:
    rule = "one token map entry per raw id"
    if token_map is None:
        return _missing(rule, "token map")
    if derived.token_map is None:
        return RuleCheck(rule, "not checked", detail="no tokenizer to count raw ids: give one")
    wanted, padded = len(derived.token_map), derived.token_map_padded_from
    if padded is not None:
        rule += f" of the model ({padded:,} of the tokenizer, padded to {wanted:,})"
    if len(token_map) == wanted:
        return RuleCheck(rule, "ok")
    return RuleCheck(rule, "failed", value=len(token_map), detail=f"expected {wanted:,} entries")


def _one_per_gguf_token(token_map: np.ndarray | None, token_count: int | None) -> RuleCheck:
    rule = "one token map entry per GGUF token (llama.cpp: |token_map| == n_vocab)"
    if token_map is None:
        return _missing(rule, "token map")
    if token_count is None:
        return _missing(rule, "token list (tokenizer.ggml.tokens)")
    if len(token_map) == token_count:
        return RuleCheck(rule, "ok")
    return RuleCheck(rule, "failed", value=len(token_map), detail=f"the GGUF has {token_count:,} tokens")


def _padding(token_map: np.ndarray | None, derived: EngineConstants, pad: int) -> list[RuleCheck]:
    """The rule on a map padded to the model's vocabulary; none where nothing is padded."""
    if token_map is None or derived.token_map is None:
        return []
    start = _tokenizer_ids(derived)
    if len(token_map) <= start and derived.token_map_padded_from is None:
        return []
    rule = f"token map entries past the tokenizer's {start:,} ids are the compressed pad {pad}"
    if len(token_map) <= start:
        stops = "the map stops at the tokenizer's ids: it is not padded"
        return [RuleCheck(rule, "failed", value=len(token_map), detail=stops)]
    wrong = np.flatnonzero(token_map[start:] != pad)
    if not wrong.size:
        return [RuleCheck(rule, "ok")]
    first = start + int(wrong[0])
    return [RuleCheck(rule, "failed", first, int(token_map[first]), f"raw id {first}")]


def _digest_rule(deployed: DeployedConstants, token_map: np.ndarray | None) -> RuleCheck:
    rule = "the recorded token map sha256 is the map's"
    if deployed.token_map_sha256 is None or token_map is None:
        return _missing(rule, "token map sha256" if token_map is not None else "token map")
    actual = token_map_sha256(token_map)
    if actual == deployed.token_map_sha256:
        return RuleCheck(rule, "ok")
    return RuleCheck(rule, "failed", value=deployed.token_map_sha256, detail=f"the map's is {actual}")
