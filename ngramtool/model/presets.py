"""Named Engram configurations, spec files, and :func:`resolve_spec`: the one way a spec is built.

Every command that needs a spec (hash, collisions, spec, explain, size, bench) and the Python API
build it with :func:`resolve_spec`: a spec file gives the whole spec; otherwise a preset (or any
HashSpec given as the base) fills what the caller did not give, and V' and the canonical pad come
from the vocabulary (the tokenizer's pad or end-of-text id, mapped through it) or ``vocab_size``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..spec.families import check_family
from ..spec.families.stored import StoredConstants
from ..spec.hashspec import FAMILY_SEEDS, HashSpec
from ..tokenizers import DEFAULT_TOKENIZER, Tokenizer, load_tokenizer
from ..tokenizers.vocab import CompressedVocab, build_vocab
from ..util.atomic import staged_file
from ..util.errors import NgramToolError, UsageError


@dataclass(frozen=True)
class Preset:
    """A named Engram configuration: the hash spec, the width of each head's rows, and its source.

    ``hidden_size`` is the backbone width the memory vector is projected into, where known;
    ``declared_rows`` the rows per layer a released checkpoint declares (its tables' heights),
    which the derived rows must equal; ``released_vocab_size`` the V' of the tokenizer it was
    trained with, for a released model (its multipliers follow V'); ``raw_pad_id`` the raw id
    its pad is (mapped through a tokenizer's vocabulary, in place of the tokenizer's own pad
    token); ``negative_ids`` how its
    reference hashes masked (DEAD) tokens (``mask``: rows -1, TileKernels; ``barrier``:
    DeepSeek-V4.1); ``tokenizer`` the tokenizer commands use when none is named, and
    ``compress`` whether its vocabulary is compressed (the tutorial hashes raw GPT-2 ids);
    ``row_multiple`` the multiple each layer's table is padded up to (Qwen3.8: 128);
    ``sizes_only`` why the preset gives the tables' layout but not their hash (constants stored
    in the checkpoint): ``size`` reads it, :func:`resolve_spec` refuses it with that reason.
    """

    spec: HashSpec
    dim: int
    hidden_size: int | None
    source: str
    declared_rows: tuple[int, ...] | None = None
    released_vocab_size: int | None = None
    raw_pad_id: int | None = None
    negative_ids: str = "mask"
    tokenizer: str | None = None
    compress: bool = True
    row_multiple: int = 1
    sizes_only: str | None = None

    def rows_differing(self, spec: HashSpec) -> list[tuple[int, int, int]]:
        """(layer, derived rows, declared rows) of each layer whose rows in ``spec`` differ from
        what the checkpoint declares (all of them when the layer counts differ); [] when they
        agree or nothing is declared.

        Examples:
            >>> chosen = preset("deepseek-v4.1-flash")
            >>> chosen.rows_differing(chosen.spec)
            []
        """
        return [] if self.declared_rows is None else spec.rows_differing(self.declared_rows)


# LongCat-Flash-Lite's config: N=4, K=4, tables of m = 78 x V rows (sub-table i: m + 2i + 1), V = 131,072.
LONGCAT_FLASH_LITE = HashSpec(family="longcat", max_ngram=4, heads=4, layer_ids=(0,), pad_id=0,
                              table_sizes=(78 * 131072,) * 3, vocab_size=131072)  # fmt: skip

PRESETS: dict[str, Preset] = {
    "engram-demo": Preset(
        HashSpec(),
        dim=64,
        hidden_size=1024,
        source="DeepSeek engram_demo_v1.py: layers 1 and 15, N=3, 8 heads per order, bases 5 x 129,280, "
        "n_embed_per_ngram 512 = 8 heads x 64, backbone hidden 1024; V'=98,627 (DeepSeek-V3)",
    ),
    "engram-27b": Preset(
        HashSpec(layer_ids=(2, 15), table_sizes=(2262400, 2262400)),
        dim=80,
        hidden_size=None,
        source="Engram paper (arXiv 2601.07372), Engram-27B: layers 2 and 15, N=3, 8 heads per order, "
        "d_mem 1280 = 16 heads x 80, ~2,262,400 rows per head: 5.79B (the paper rounds to 5.7B)",
    ),
    "engram-40b": Preset(
        HashSpec(layer_ids=(2, 15), table_sizes=(7226341, 7226341)),
        dim=80,
        hidden_size=None,
        source="Engram paper, Engram-40B: 18.5B Engram parameters. ASSUMPTION: the paper does not give "
        "the layout here; we keep Engram-27B's (layers 2 and 15, N=3, 8 heads, 80 dims) and take the "
        "largest per-head base table that fits 18.5e9 parameters",
    ),
    "deepseek-v4.1-flash": Preset(
        HashSpec(max_ngram=4, layer_ids=(1, 14), table_sizes=(16000000,) * 3, vocab_size=99092),
        dim=256,
        hidden_size=5120,
        source="DeepSeek-V4.1-Flash config.json (engram_*): layers 1 and 14, N=4, 8 heads per order, "
        "engram_vocab_size 16,000,000 for every order, 256-dim fp8 rows, hidden 5120, "
        "V'=99,092, raw pad 2; declared rows 384,006,168 and 384,016,682",
        declared_rows=(384006168, 384016682),
        released_vocab_size=99092,
        raw_pad_id=2,
        negative_ids="barrier",
    ),
    "tutorial": Preset(
        HashSpec(
            family="tutorial",
            max_ngram=3,
            heads=4,
            layer_ids=(1,),
            table_sizes=(262144, 262144),
            seed=2026,
            pad_id=0,
            vocab_size=50257,
        ),
        dim=16,
        hidden_size=None,
        source="The tutorial chapter's own hash (13_engram.py): orders 2-3, 4 heads each, one table of "
        "262,144 rows per head (not prime), 16 dims: 33,554,432 parameters; multipliers per head from "
        "torch's generator seeded 2026, the oldest token first; raw GPT-2 ids, windows padded with 0",
        raw_pad_id=0,
        tokenizer="gpt2",
        compress=False,
    ),
    "qwen3.8-flash-next": Preset(
        HashSpec(max_ngram=3, heads=8, layer_ids=(2,), table_sizes=(20000000, 20000000), vocab_size=248320),
        dim=160,
        hidden_size=None,
        source="Qwen3.8-Flash-Next config.json: ngram_size 3, heads_per_ngram 8, ngram_vocab_size_base "
        "20,000,000 (the 16 consecutive primes from it, 320,001,446 rows), "
        "make_ngram_vocab_size_divisible_by 128 (one table of 320,001,536 rows), ple_embed_dim 2560 "
        "= 16 x 160, ple_layer_ids [2], raw vocabulary 248,320; multipliers stored in the checkpoint",
        declared_rows=(320001536,),
        released_vocab_size=248320,
        compress=False,
        row_multiple=128,
        sizes_only="its multipliers are stored in the checkpoint, not derived: read them with "
        "`spec from-config config.json q.json --constants model.safetensors` and give `--spec q.json`",
    ),
    "speedrun": Preset(
        HashSpec(
            family="speedrun", max_ngram=2, heads=1, layer_ids=(0,), table_sizes=(251520,), vocab_size=50257
        ),
        dim=768,
        hidden_size=768,
        source="modded-nanogpt's bigram hash embedding (its PR #201, train_gpt.py get_bigram_hash): "
        "(36313 x[t] XOR 27191 x[t-1]) mod (5V - 1) in int32 into a table of 5V = 251,520 rows "
        "(V = 50,304, GPT-2's vocabulary padded), row 5V - 1 reserved for position 0, which position 1 "
        "also reads; raw GPT-2 ids, 768-dim rows",
        tokenizer="gpt2",
        compress=False,
    ),
    "longcat-flash": Preset(
        LONGCAT_FLASH_LITE,
        dim=256,
        hidden_size=3072,
        source="LongCat-Flash-Lite config.json: emb_neighbor_num 4, emb_split_num 4, "
        "ngram_vocab_size_ratio 78 x vocab_size 131,072 = m 10,223,616 (sub-table i: m + 2i + 1 rows), "
        "hidden 3072 = 12 sub-tables x 256; raw ids, ignored tokens as barriers",
        released_vocab_size=131072,
        negative_ids="barrier",
        compress=False,
    ),
}


def preset(name: str) -> Preset:
    """The preset called ``name``; a usage error lists the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise UsageError(f"unknown `preset` {name!r}; known presets: {', '.join(PRESETS)}") from None


def check_released_vocabulary(
    name: str | None, vocab_size: int, *, allow: bool = False, vocabulary: str = "this vocabulary"
) -> dict[str, Any] | None:
    """A released model's preset (``name``) with a vocabulary of another V' than the model's gives
    other rows than the model (its multipliers and pad follow V'): a usage error naming both V',
    unless ``allow`` (hashing with another tokenizer on purpose), when the mismatch is returned
    for the manifest to record. None when they agree or the preset is no released model's.

    Examples:
        >>> check_released_vocabulary("deepseek-v4.1-flash", 99092)
        >>> check_released_vocabulary("engram-demo", 62330)  # not a released checkpoint's constants
        >>> check_released_vocabulary("deepseek-v4.1-flash", 62330, allow=True)
        {'preset': 'deepseek-v4.1-flash', 'model_vocab_size': 99092, 'vocab_size': 62330}
    """
    released = PRESETS[name].released_vocab_size if name in PRESETS else None
    if released is None or vocab_size == released:
        return None
    if not allow:
        raise UsageError(
            f"`preset` {name} is the released model, whose tokenizer has V'={released:,}, but "
            f"{vocabulary} has V'={vocab_size:,}: the rows would not be the model's (its multipliers "
            "and pad follow V'); give the model's own tokenizer (its tokenizer.json), or pass "
            "`allow_vocab_mismatch` to hash with this one on purpose"
        )
    return {"preset": name, "model_vocab_size": released, "vocab_size": vocab_size}


def load_spec_file(path: str | Path) -> HashSpec:
    """A HashSpec from a JSON file (:func:`save_spec_file`, ``ngramtool spec save``)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read `spec_file` {path}: {exc.strerror}") from None
    return HashSpec.from_json(text)


def save_spec_file(spec: HashSpec, path: str | Path, *, force: bool = False) -> None:
    """Write ``spec`` as JSON (sorted keys) for :func:`load_spec_file`; an existing file is
    replaced only with ``force``."""
    path = Path(path)
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass `force=True` to replace it")
    try:
        with staged_file(path) as tmp:
            tmp.write_text(json.dumps(spec.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    except OSError as exc:
        raise NgramToolError(f"cannot write {path}: {exc.strerror}") from None


# The fields a caller may give, in the order messages list them.
_FIELDS = ("max_ngram", "heads", "layer_ids", "table_sizes", "seed", "pad_id", "family", "stored", "eos_fill",
           "stop_token", "first_token", "model_vocab_size")  # fmt: skip
# What each family reads from elsewhere than the options: giving it is refused, with the reason.
_FIXED_BY_FAMILY = {
    "stored": {
        "table_sizes": "the table sizes and offsets are the checkpoint's (--constants)",
        "seed": "the multipliers are the checkpoint's (--constants)",
    },
    "longcat": {"seed": "LongCat's weights are powers of V, with no seed"},
    "speedrun": {
        "seed": "its multipliers are fixed (36313, 27191, 18731)",
        "pad_id": "a sequence start is marked by V, one past the last id, and hashed as the reserved row",
    },
}


def default_tokenizer(name: str | None) -> str:
    """The tokenizer a command uses when none is named: the preset's (the tutorial: gpt2), else
    :data:`~ngramtool.tokenizers.DEFAULT_TOKENIZER`."""
    chosen = PRESETS.get(name) if name is not None else None
    return chosen.tokenizer if chosen is not None and chosen.tokenizer is not None else DEFAULT_TOKENIZER


def default_compress(name: str | None) -> bool:
    """Whether a preset's vocabulary is compressed when the caller does not say (the tutorial's is not)."""
    return PRESETS[name].compress if name in PRESETS else True


def resolve_spec(
    *,
    preset: str | HashSpec | None = None,
    spec_file: str | Path | None = None,
    tokenizer: str | Tokenizer | None = None,
    special: str | None = None,
    no_compress: bool = False,
    vocab: CompressedVocab | None = None,
    vocab_size: int | None = None,
    max_ngram: int | None = None,
    heads: int | None = None,
    layer_ids: Sequence[int] | None = None,
    table_sizes: int | Sequence[int] | None = None,
    seed: int | None = None,
    pad_id: int | None = None,
    family: str | None = None,
    stored: StoredConstants | None = None,
    eos_fill: bool | None = None,
    stop_token: int | None = None,
    first_token: str | None = None,
    model_vocab_size: int | None = None,
    allow_vocab_mismatch: bool = False,
) -> HashSpec:
    """The HashSpec of the given parameters (None means not given).

    Args:
        preset: a preset name (``engram-demo``, ``engram-27b``, ``engram-40b``, ``tutorial``) or a
            HashSpec whose fields fill every field not given (and V' and the pad, unless a
            tokenizer or vocabulary supplies them).
        spec_file: a spec saved as JSON: the whole spec (giving fields too is an error); its V'
            must equal the vocabulary's.
        tokenizer: a tokenizer name or path (read with ``special``) or a loaded tokenizer: its
            compressed vocabulary (``no_compress``: the identity map) gives V', its pad or
            end-of-text id the pad.
        special: how the tokenizer reads special-token strings (``none``, ``all``, names).
        no_compress: the identity vocabulary instead of the compressed one.
        vocab: the vocabulary, when the caller has it already (it gives V' and maps the pad).
        vocab_size: V' without a tokenizer (the pad id is then canonical already).
        max_ngram: N, the largest n-gram order (HashSpec's default otherwise).
        heads: K, hash heads per order (likewise).
        layer_ids: the Engram layers (likewise).
        seed: the global seed of the multipliers (likewise).
        table_sizes: one base size per order 2..N, or one size (an int, or a sequence of one)
            for every order.
        pad_id: a RAW id of the tokenizer, mapped through the vocabulary; without a vocabulary,
            the canonical pad id. Default: the tokenizer's pad, else 0 (LongCat: always 0).
        family: the hash family (docs/families.md); default the base's, else ``engram``.
        stored: the constants of family ``stored`` (read with
            :func:`ngramtool.spec.families.stored.read_stored_constants`).
        eos_fill: segments start after each EOS, which is the pad (Qwen3.8); default the base's.
        stop_token: LongCat's walk stops at this id as sglang serves it (a raw id; default the
            base's, else none).
        first_token: the speedrun family's reading of a sequence's first token (``reserved`` or
            ``kept``; default ``reserved``).
        model_vocab_size: the model's embedding rows (engine token maps are padded to them).
        allow_vocab_mismatch: a released model's preset with a vocabulary of another V' than the
            model's is an error (:func:`check_released_vocabulary`) unless this is True.

    Examples:
        >>> from ngramtool import resolve_spec
        >>> spec = resolve_spec(tokenizer="cl100k_base", heads=4, table_sizes=262144)
        >>> spec.vocab_size, spec.pad_id, spec.table_sizes
        (62330, 62325, (262144, 262144))
        >>> resolve_spec(preset="engram-27b", vocab_size=1000).layer_ids
        (2, 15)
    """
    named = PRESETS.get(preset) if isinstance(preset, str) and spec_file is None else None
    if named is not None and named.sizes_only:
        raise UsageError(f"`preset` {preset} gives the tables' sizes only (`size`): {named.sizes_only}")
    if pad_id is None and named is not None:
        pad_id = named.raw_pad_id  # a released model's pad, whatever the tokenizer calls its pad
    values = (max_ngram, heads, layer_ids, table_sizes, seed, pad_id, family, stored, eos_fill, stop_token,
              first_token, model_vocab_size)  # fmt: skip
    given = {name: value for name, value in zip(_FIELDS, values, strict=True) if value is not None}
    if vocab_size is not None and tokenizer is not None:
        raise UsageError("`vocab_size` replaces the tokenizer's V': give one of `vocab_size` and `tokenizer`")
    if vocab is None and tokenizer is not None:
        tokenizer = load_tokenizer(tokenizer, special) if isinstance(tokenizer, str) else tokenizer
        vocab = build_vocab(tokenizer, compress=not no_compress)
    tok = tokenizer if not isinstance(tokenizer, str) else None
    if spec_file is not None:
        named = [f"`{name}`" for name in given] + (["`preset`"] if preset is not None else [])
        if named:
            raise UsageError(f"`spec_file` gives the whole hash spec: drop {', '.join(named)}")
        return _checked_spec_file(spec_file, vocab.size if vocab is not None else vocab_size)
    base = _base(preset)
    if isinstance(preset, str) and (vocab is not None or vocab_size is not None):
        size = vocab.size if vocab is not None else vocab_size
        described = f"tokenizer {tok.name}" if tok is not None else "`vocab_size`"
        check_released_vocabulary(preset, size, allow=allow_vocab_mismatch, vocabulary=described)
    chosen_family = check_family(given.get("family", base.family if base else "engram"))
    for name, reason in _FIXED_BY_FAMILY.get(chosen_family, {}).items():
        if name in given:
            raise UsageError(f"family {chosen_family!r} takes no `{name}`: {reason}")
    n = given.get("max_ngram", base.max_ngram if base else HashSpec.max_ngram)
    tables = given.get("table_sizes", _base_tables(base))
    tables = [tables] if isinstance(tables, int) else list(tables)
    if len(tables) == 1:
        tables = tables * max(n - 1, 1)
    defaults = base or HashSpec()
    same_family = base is not None and chosen_family == base.family
    return HashSpec(
        max_ngram=n,
        heads=given.get("heads", defaults.heads),
        layer_ids=tuple(given.get("layer_ids", defaults.layer_ids)),
        table_sizes=tuple(tables),
        seed=given.get("seed", defaults.seed if same_family else FAMILY_SEEDS.get(chosen_family, 0)),
        pad_id=_family_pad(chosen_family, pad_id, vocab, tok, base),
        vocab_size=_vocab_size(vocab, vocab_size, base),
        family=chosen_family,
        stored=given.get("stored", defaults.stored if same_family else None),
        eos_fill=given.get("eos_fill", defaults.eos_fill),
        stop_token=_stop_token(given.get("stop_token"), vocab, defaults.stop_token if same_family else None),
        first_token=given.get("first_token", defaults.first_token if same_family else None),
        model_vocab_size=given.get("model_vocab_size", defaults.model_vocab_size),
    )


def _base(chosen: str | HashSpec | None) -> HashSpec | None:
    """The spec a preset name (or a HashSpec) stands for."""
    return preset(chosen).spec if isinstance(chosen, str) else chosen


def _base_tables(base: HashSpec | None) -> list[int]:
    """The base's table sizes; one size when every order has the same (it then fits any N)."""
    sizes = (base or HashSpec()).table_sizes
    return [sizes[0]] if len(set(sizes)) == 1 else list(sizes)


def _vocab_size(vocab: CompressedVocab | None, vocab_size: int | None, base: HashSpec | None) -> int:
    """V': the vocabulary's, else ``vocab_size``, else the base's."""
    if vocab is not None:
        return vocab.size
    if vocab_size is not None:
        return vocab_size
    if base is not None:
        return base.vocab_size
    raise UsageError("the vocabulary size is unknown: give `tokenizer` or `vocab_size`")


def _stop_token(raw: int | None, vocab: CompressedVocab | None, base: int | None) -> int | None:
    """The canonical stop token: ``raw`` mapped through the vocabulary (as the pad), else the base's."""
    if raw is None:
        return base
    if vocab is None:
        return raw
    if not 0 <= raw < vocab.raw_size or int(vocab.lut[raw]) < 0:
        raise UsageError(f"`stop_token` {raw} is not a token id of this tokenizer")
    return int(vocab.lut[raw])


def _family_pad(
    family: str,
    raw: int | None,
    vocab: CompressedVocab | None,
    tokenizer: Tokenizer | None,
    base: HashSpec | None,
) -> int | None:
    """The canonical pad of ``family``: LongCat's 0, the speedrun family's start marker (None: V),
    else :func:`_pad`."""
    if family in ("longcat", "speedrun") and raw is None:
        return 0 if family == "longcat" else None
    return _pad(raw, vocab, tokenizer, base)


def _pad(
    raw: int | None, vocab: CompressedVocab | None, tokenizer: Tokenizer | None, base: HashSpec | None
) -> int:
    """The canonical pad: ``raw`` (else the tokenizer's pad) mapped through the vocabulary; without
    a vocabulary ``raw`` is canonical already (else the base's pad, else 0)."""
    if vocab is None:
        return raw if raw is not None else base.pad_id if base is not None else 0
    if raw is None and tokenizer is not None:
        raw = tokenizer.pad_token_id
    if raw is None:
        return 0
    if not 0 <= raw < vocab.raw_size or int(vocab.lut[raw]) < 0:
        raise UsageError(f"`pad_id` {raw} is not a token id of this tokenizer")
    return int(vocab.lut[raw])


def _checked_spec_file(path: str | Path, size: int | None) -> HashSpec:
    """The spec of a file, whose V' must be ``size`` when that is known."""
    spec = load_spec_file(path)
    if size is not None and spec.vocab_size != size:
        raise UsageError(
            f"`spec_file` {path} was made for V'={spec.vocab_size} but this vocabulary has "
            f"V'={size}; use the tokenizer it was made for"
        )
    return spec


def pad_defaulted(spec_file: str | Path | None, pad_id: int | None, tokenizer: Tokenizer | None) -> bool:
    """Whether nothing chose the pad (no spec file, no ``pad_id``, no tokenizer pad): it is 0."""
    return spec_file is None and pad_id is None and (tokenizer is None or tokenizer.pad_token_id is None)
