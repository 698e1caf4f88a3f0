"""Released models' ``config.json``: the n-gram fields a spec is made of, and what the config declares.

Two layouts are read (docs/deepseek-v4.1.md, docs/commands.md#spec-from-config):

* ``deepseek-v4.1``: DeepSeek-V4.1's ``engram_*`` keys, nested under ``text_config`` (or
  ``language_config``) in the released ``config.json``, at the top level of the flat
  ``inference/config.json``. Every key that changes rows must be there (a missing one is an error
  naming it, never a default); the config also declares each layer's rows
  (``engram_num_embeddings``) and V' (``engram_compressed_vocab_size``), which
  :func:`check_declared` holds the derived spec to.
* ``longcat``: LongCat-Flash's n-gram embedding (family ``longcat``): ``emb_neighbor_num`` (or
  ``oe_neighbor_num``) is N, ``emb_split_num`` (``oe_split_num``) K, and the tables are
  ``int(ngram_vocab_size_ratio * vocab_size)``; raw ids (no compression), pad 0, ignored tokens as
  barriers. ``vocab_size`` is declared: the weights are powers of it, so the vocabulary must have it.
* ``qwen3.8``: Qwen3.8-Flash-Next's ``ple`` table (family ``stored``): ``ngram_size``,
  ``heads_per_ngram``, ``ple_layer_ids``; the constants are in the checkpoint (``constants``), rows
  padded to ``make_ngram_vocab_size_divisible_by``, raw ids, and lookbacks before a segment start
  hold ``eos_token_id`` (``eos_fill``). ``ngram_vocab_size_base`` is declared: no stored table may
  be smaller. ``ple_layer_ids`` are 1-based (``[2]`` is the module ``layers.1.ple``) while the
  model seeds each layer's multipliers and tables with the id's *position* in the list: the spec
  records both numbers, and constants whose multipliers were seeded by another reading (the module
  index, or the config's own number) are refused naming the mix-up (:func:`check_layer_numbers`).
* ``engram``: the Engram demo's ``max_ngram_size``, ``n_head_per_ngram``, ``engram_vocab_size``,
  ``layer_ids``, ``pad_id``, ``seed``; fields it lacks keep their defaults (listed by the caller).

Every layout records the config's ``vocab_size`` as the spec's ``model_vocab_size`` (the model's
embedding rows, padded past the tokenizer's ids): engine token maps are padded to it.

The object holding the fields is found depth first; the first layout it matches is taken.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..spec.families.stored import (
    READING_WORDS,
    StoredConstants,
    layer_readings,
    read_stored_constants,
    seeding_reading,
)
from ..spec.hashspec import HashSpec
from ..util.errors import NgramToolError, UsageError


@dataclass(frozen=True)
class ConfigLayout:
    """How one family of configs names the spec's fields.

    Attributes:
        name: the layout's name (``deepseek-v4.1``, ``engram``).
        fields: for each :func:`ngramtool.resolve_spec` parameter, the keys that give it (the first
            present wins).
        marks: keys whose presence marks an object of this layout.
        required: parameters a config of this layout must give (they change every row).
        fixed: parameters the layout fixes without a key (V4.1's multiplier seed is 0).
        declared: what the config declares about the result, by name (``rows``,
            ``compressed_vocab_size``, ``dim``), and the keys that give it.
        negative_ids: how the layout's reference hashes masked (DEAD) tokens.
        compress: whether the model hashes compressed ids (Engram) or raw ones (LongCat, Qwen3.8).
    """

    name: str
    fields: dict[str, tuple[str, ...]]
    marks: tuple[str, ...]
    required: tuple[str, ...] = ()
    fixed: dict[str, Any] = field(default_factory=dict)
    declared: dict[str, tuple[str, ...]] = field(default_factory=dict)
    negative_ids: str = "mask"
    compress: bool = True


MASK_TOKEN_KEYS = ("image_token_id", "image_token_index", "video_token_id", "video_token_index")
"""Keys of multimodal configs whose raw ids are placeholders for an image or a video: DEAD tokens,
read from the object holding the n-gram fields or the config's top level."""

DEEPSEEK_V41 = ConfigLayout(
    "deepseek-v4.1",
    fields={
        "max_ngram": ("engram_max_ngram_size",),
        "heads": ("engram_n_heads",),
        "table_sizes": ("engram_vocab_size",),
        "layer_ids": ("engram_layer_ids",),
        "pad_id": ("engram_pad_token_id", "engram_pad_id"),
    },
    marks=(
        "engram_max_ngram_size",
        "engram_n_heads",
        "engram_layer_ids",
        "engram_num_embeddings",
        "engram_compressed_vocab_size",
        "engram_pad_token_id",
        "engram_pad_id",
        "engram_head_dim",
    ),
    required=("max_ngram", "heads", "table_sizes", "layer_ids", "pad_id"),
    fixed={"seed": 0},
    declared={
        "rows": ("engram_num_embeddings",),
        "compressed_vocab_size": ("engram_compressed_vocab_size",),
        "dim": ("engram_head_dim",),
        "model_vocab_size": ("vocab_size",),
    },
    negative_ids="barrier",
)
LONGCAT = ConfigLayout(
    "longcat",
    fields={"max_ngram": ("emb_neighbor_num", "oe_neighbor_num"), "heads": ("emb_split_num", "oe_split_num")},
    marks=("emb_neighbor_num", "oe_neighbor_num", "emb_split_num", "oe_split_num", "ngram_vocab_size_ratio"),
    required=("max_ngram", "heads"),
    fixed={"family": "longcat", "layer_ids": (0,)},
    declared={
        "vocab_size": ("vocab_size",),
        "table_ratio": ("ngram_vocab_size_ratio",),
        "model_vocab_size": ("vocab_size",),
    },
    negative_ids="barrier",
    compress=False,
)
QWEN38 = ConfigLayout(
    "qwen3.8",
    fields={
        "max_ngram": ("ngram_size",),
        "heads": ("heads_per_ngram",),
        "layer_ids": ("ple_layer_ids", "layer_ids"),
        "pad_id": ("eos_token_id",),
    },
    marks=("ngram_size", "heads_per_ngram", "ngram_vocab_size_base", "make_ngram_vocab_size_divisible_by"),
    required=("max_ngram", "heads", "layer_ids", "pad_id"),
    fixed={"family": "stored"},
    declared={
        "table_base": ("ngram_vocab_size_base",),
        "row_multiple": ("make_ngram_vocab_size_divisible_by",),
        "dim": ("ple_embed_dim",),
        "model_vocab_size": ("vocab_size",),
        "seed": ("seed",),
    },
    compress=False,
)
ENGRAM = ConfigLayout(
    "engram",
    fields={
        "max_ngram": ("max_ngram_size",),
        "heads": ("n_head_per_ngram",),
        "table_sizes": ("engram_vocab_size",),
        "layer_ids": ("layer_ids", "engram_layer_ids", "ngram_layer_ids"),
        "seed": ("seed",),
        "pad_id": ("pad_id",),
    },
    marks=("max_ngram_size", "n_head_per_ngram", "engram_vocab_size"),
    declared={"model_vocab_size": ("vocab_size",)},
)
LAYOUTS = (DEEPSEEK_V41, LONGCAT, QWEN38, ENGRAM)
"""The layouts in the order an object is matched against them (the more specific keys first)."""


@dataclass(frozen=True)
class ConfigFields:
    """The spec fields read from a model config, and what it declares.

    Attributes:
        layout: the layout read (``deepseek-v4.1``, ``engram``).
        fields: :func:`ngramtool.resolve_spec` parameters (``max_ngram``, ``heads``, ``table_sizes``, ...).
        read: for each parameter, the config key it came from (``text_config.engram_n_heads``), or
            what fixed it.
        declared: what the config declares (``rows``: a tuple per layer; ``compressed_vocab_size``;
            ``dim``), by name.
        declared_read: for each declared value, the key it came from.
        tokenizer: the tokenizer the config names (``tokenizer_name_or_path``), if any.
        mask_tokens: raw ids of the config's image and video placeholders (DEAD tokens), by the
            key they came from.
        negative_ids: how the layout's reference hashes DEAD tokens (``barrier`` for V4.1).
        compress: whether the model hashes compressed ids (False: raw ids, LongCat and Qwen3.8).
    """

    layout: str
    fields: dict[str, Any]
    read: dict[str, str]
    declared: dict[str, Any]
    declared_read: dict[str, str]
    tokenizer: str | None
    mask_tokens: dict[str, int] = field(default_factory=dict)
    negative_ids: str = "mask"
    compress: bool = True


def config_fields(path: str | Path) -> ConfigFields:
    """The n-gram fields of a model's ``config.json`` (see the module docstring), found at its top
    level or in a nested object. A config without them, or of the ``deepseek-v4.1`` layout without
    a key that changes rows, is an error naming what was looked for.

    Examples:
        >>> import json
        >>> from ngramtool.model.configs import config_fields
        >>> config = {"model_type": "demo", "engram_config": {"max_ngram_size": 3, "n_head_per_ngram": 4,
        ...           "engram_vocab_size": 262144, "layer_ids": [2, 15]}}
        >>> _ = open("config.json", "w").write(json.dumps(config))
        >>> found = config_fields("config.json")
        >>> found.layout, found.fields
        ('engram', {'max_ngram': 3, 'heads': 4, 'table_sizes': 262144, 'layer_ids': (2, 15)})
        >>> found.read["max_ngram"]
        'engram_config.max_ngram_size'
    """
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the model config {path}: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise NgramToolError(f"{path}: not a JSON config ({exc})") from None
    found = _ngram_object(config, "")
    if found is None:
        looked = ", ".join(dict.fromkeys(key for layout in LAYOUTS for key in layout.marks))
        raise NgramToolError(
            f"{path} holds no n-gram fields: looked for {looked} at its top level and in nested objects; "
            "give the spec's fields as options instead (`spec save`)"
        )
    layout, where, holder = found
    fields: dict[str, Any] = {}
    read: dict[str, str] = {}
    for parameter, names in layout.fields.items():
        found_key = _key_in(names, holder, where, config)
        if found_key is not None:
            key, value = found_key
            fields[parameter] = _config_value(parameter, value, f"{path}: {key}")
            read[parameter] = key
    missing = [layout.fields[parameter] for parameter in layout.required if parameter not in fields]
    if missing:
        keys = " or ".join(f"{where}{name}" for name in missing[0])
        raise NgramToolError(
            f"{path}: a {layout.name} config without {keys}, which changes every row; "
            "add it to the config (from the model's released config.json)"
        )
    for parameter, value in layout.fixed.items():
        fields[parameter] = value
        read[parameter] = f"(fixed by the {layout.name} layout)"
    declared, declared_read = _declared(layout, holder, where, path, config)
    if layout is LONGCAT:
        _longcat_tables(fields, read, declared, declared_read, path)
    tokenizer = holder.get("tokenizer_name_or_path", config.get("tokenizer_name_or_path"))
    return ConfigFields(
        layout.name,
        fields,
        read,
        declared,
        declared_read,
        tokenizer if isinstance(tokenizer, str) else None,
        _mask_tokens(config, holder, where),
        layout.negative_ids,
        layout.compress,
    )


QWEN_SEEDS = (1234, 0)
"""The seeds Qwen3.8's generator defaults to in the implementations read (transformers' and
sglang's configs 1234, others 0), tried when a config gives no ``seed``."""


def spec_fields(
    found: ConfigFields,
    constants: str | Path | StoredConstants | None,
    source: str | Path,
    *,
    model_vocab_size: int | None = None,
) -> dict[str, Any]:
    """:func:`ngramtool.resolve_spec` parameters of a config: its fields and the model's
    vocabulary (``model_vocab_size``, else the config's ``vocab_size``), plus, for a family
    ``stored`` config, the constants read from ``constants`` (the checkpoint; rows padded to the
    declared multiple; each layer's module index and seed index recorded, and held to how the
    model seeds them: :func:`check_layer_numbers`) and its EOS segments. ``constants`` is required
    for such a config and refused for any other."""
    fields = dict(found.fields)
    model = model_vocab_size if model_vocab_size is not None else found.declared.get("model_vocab_size")
    if model is not None:
        fields["model_vocab_size"] = model
    stored = fields.get("family") == "stored"
    if stored != (constants is not None):
        raise UsageError(
            f"{source}: a {found.layout} config keeps its multipliers and table sizes in the "
            "checkpoint: give the .safetensors file with ple_embedding.* (--constants)"
            if stored
            else f"{source}: a {found.layout} config derives its constants: drop --constants"
        )
    if stored:
        row_multiple = int(found.declared.get("row_multiple", 1))
        stored = (
            constants
            if isinstance(constants, StoredConstants)
            else read_stored_constants(constants, row_multiple=row_multiple)
        )
        fields["stored"] = check_layer_numbers(found, stored, source)
        fields["eos_fill"] = True
    return fields


def check_layer_numbers(found: ConfigFields, stored: StoredConstants, source: str | Path) -> StoredConstants:
    """``stored`` with each layer's module index (``ple_layer_ids`` are 1-based: ``[2]`` is
    ``layers.1.ple``) and seed index (the id's position in the list, which Qwen3.8's model seeds its
    multipliers and tables with) recorded; constants whose multipliers Qwen3.8's generator makes
    with another reading of the ids (the module index, or the config's own number) are an error
    naming the mix-up. Constants the generator does not make for the config's vocabulary and seed
    (``seed``, else :data:`QWEN_SEEDS`) are taken as stored."""
    ids = tuple(found.fields.get("layer_ids", ()))
    readings = {reading.name: reading.indices for reading in layer_readings(ids)}
    numbered = stored.numbered(readings["module"], readings["position"])
    vocab = found.declared.get("model_vocab_size")
    if vocab is None or len(ids) != len(stored.rows):
        return numbered
    seed = found.declared.get("seed")
    matched = seeding_reading(stored, ids, vocab, QWEN_SEEDS if seed is None else (seed,))
    if matched is None or matched[0] == "position":
        return numbered
    reading, used = matched
    key = found.read.get("layer_ids", "ple_layer_ids")
    raise NgramToolError(
        f"{source}: the stored multipliers were seeded by {READING_WORDS[reading]}, "
        f"{list(readings[reading])}, not by {READING_WORDS['position']}, {list(readings['position'])} "
        f"({key} = {list(ids)} are 1-based: module layers.{readings['module'][0]}.ple; seed {used}): "
        "the checkpoint's constants were made with the layer numbers mixed up; regenerate them seeded "
        "by the position, or give the checkpoint that the model was trained with"
    )


def _key_in(
    names: tuple[str, ...], holder: dict[str, Any], where: str, config: dict[str, Any]
) -> tuple[str, Any] | None:
    """(the key as messages name it, its value) of the first of ``names`` in the object holding the
    n-gram fields, else at the config's top level; None when neither has one."""
    for source, prefix in ((holder, where), (config, "")):
        for name in names:
            if name in source:
                return f"{prefix}{name}", source[name]
    return None


def _longcat_tables(
    fields: dict[str, Any],
    read: dict[str, str],
    declared: dict[str, Any],
    declared_read: dict[str, str],
    path: str | Path,
) -> None:
    """LongCat's table size m = int(ngram_vocab_size_ratio x vocab_size), for every order."""
    missing = [name for name in ("table_ratio", "vocab_size") if name not in declared]
    if missing:
        keys = {"table_ratio": "ngram_vocab_size_ratio", "vocab_size": "vocab_size"}
        raise NgramToolError(
            f"{path}: a longcat config without {keys[missing[0]]}, which sizes every table; "
            "add it to the config (from the model's released config.json)"
        )
    fields["table_sizes"] = int(declared["table_ratio"] * declared["vocab_size"])
    read["table_sizes"] = f"int({declared_read['table_ratio']} x {declared_read['vocab_size']})"


def _mask_tokens(config: dict[str, Any], holder: dict[str, Any], where: str) -> dict[str, int]:
    """The image and video placeholder ids of the config (:data:`MASK_TOKEN_KEYS`), by key."""
    found = {}
    for prefix, source in ((where, holder), ("", config)):
        for key in MASK_TOKEN_KEYS:
            value = source.get(key)
            if _is_int(value) and value >= 0 and value not in found.values():
                found[f"{prefix}{key}"] = value
    return found


def check_declared(found: ConfigFields, spec: HashSpec, source: str | Path) -> None:
    """Hold ``spec`` (made from ``found``) to what its config declares: each layer's rows, and V'.

    Raises NgramToolError naming the layer, the derived and the declared value (or both V'), so
    a spec that would index other rows than the checkpoint's is never written.
    """
    _check_family_declared(found, spec, source)
    rows = found.declared.get("rows")
    if rows is not None:
        key = found.declared_read["rows"]
        if len(rows) != spec.num_layers:
            raise NgramToolError(
                f"{source}: {key} declares {len(rows)} layers' rows but the spec has "
                f"{spec.num_layers} layers {list(spec.layer_ids)}: the config is inconsistent"
            )
        differing = spec.rows_differing(rows)
        if differing:
            layer, derived, declared = differing[0]
            raise NgramToolError(
                f"{source}: layer {layer} derives {derived:,} rows but {key} declares {declared:,}: "
                "the table sizes, heads or layers read differ from the checkpoint's"
            )
    size = found.declared.get("compressed_vocab_size")
    if size is not None and size != spec.vocab_size:
        key = found.declared_read["compressed_vocab_size"]
        raise NgramToolError(
            f"{source}: the vocabulary has V'={spec.vocab_size:,} but {key} declares {size:,}: "
            "use the model's own tokenizer (--tokenizer tokenizer.json); another map rehashes every row"
        )


def _check_family_declared(found: ConfigFields, spec: HashSpec, source: str | Path) -> None:
    """LongCat's V (its weights are powers of it) and Qwen3.8's table base (no stored table is
    smaller), as the config declares them."""
    vocab = found.declared.get("vocab_size")
    if vocab is not None and spec.family == "longcat" and vocab != spec.vocab_size:
        raise NgramToolError(
            f"{source}: the vocabulary has V={spec.vocab_size:,} but {found.declared_read['vocab_size']} "
            f"declares {vocab:,}, and LongCat's weights are powers of V: use the model's own tokenizer"
        )
    base = found.declared.get("table_base")
    if base is not None and spec.family == "stored" and int(spec.primes.min()) < base:
        raise NgramToolError(
            f"{source}: a stored table has {int(spec.primes.min()):,} rows, fewer than "
            f"{found.declared_read['table_base']} = {base:,}: the constants are another model's"
        )


def _ngram_object(value: Any, where: str) -> tuple[ConfigLayout, str, dict[str, Any]] | None:
    """(layout, key prefix, object) of the first object, depth first, that a layout marks."""
    if not isinstance(value, dict):
        return None
    for layout in LAYOUTS:
        if any(key in value for key in layout.marks):
            return layout, where, value
    for key, item in value.items():
        found = _ngram_object(item, f"{where}{key}.")
        if found is not None:
            return found
    return None


def _declared(
    layout: ConfigLayout, holder: dict[str, Any], where: str, path: str | Path, config: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """What the object (or the config's top level) declares (rows per layer, V', the row width, a
    ratio), and the keys read."""
    declared: dict[str, Any] = {}
    read: dict[str, str] = {}
    for name, keys in layout.declared.items():
        found = _key_in(keys, holder, where, config)
        if found is None:
            continue
        key, value = found
        wanted_list = name == "rows"
        ok = (
            isinstance(value, list) and bool(value) and all(_is_int(x) and x > 0 for x in value)
            if wanted_list
            else (_is_int(value) or (name == "table_ratio" and isinstance(value, float)))
            and (value > 0 or (name == "seed" and value == 0))
        )
        if not ok:
            wanted = "a list of positive integers" if wanted_list else "a positive number"
            wanted = "an integer >= 0" if name == "seed" else wanted
            raise NgramToolError(f"{path}: {key} must be {wanted} (got {json.dumps(value)})")
        declared[name] = tuple(value) if wanted_list else value
        read[name] = key
    return declared, read


def _config_value(parameter: str, value: Any, where: str) -> Any:
    """A config value as the :func:`resolve_spec` parameter wants it (tables: an int or a tuple)."""
    many = parameter in ("table_sizes", "layer_ids")
    if many and isinstance(value, list) and value and all(_is_int(item) for item in value):
        return tuple(value)
    if _is_int(value) and parameter != "layer_ids":
        return value
    wanted = (
        "an integer or a list of integers"
        if parameter == "table_sizes"
        else ("a list of integers" if many else "an integer")
    )
    raise NgramToolError(f"{where} must be {wanted} (got {json.dumps(value)})")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
