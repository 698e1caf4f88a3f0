"""``ngramtool explain``: show how each token's row numbers are computed."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..model.presets import default_compress, default_tokenizer
from ..spec.hashspec import HashSpec
from ..tools.explain import explain
from ..util.errors import UsageError
from ..util.wording import plural
from .command import Command
from .options import (
    SPEC_OPTIONS,
    TOKENIZER_OPTIONS,
    BackendOpt,
    DeviceOpt,
    JsonOpt,
    PresetOpt,
    SpecialOpt,
    SpecOptions,
    TokenizerOptions,
    VerboseOpt,
    given_options,
    option_groups,
)
from .render import first_only, print_json, print_table, report_table, say_backend, stderr, stdout

HELP = """Show how each row number of a short text is computed.

Per token: raw id -> canonical id -> window (oldest first) -> XOR mix -> mix mod prime
-> + column offset = row. The first --limit tokens are shown (default 64; 0 for all).

[bold]Examples[/]

  ngramtool explain "the horse"
  ngramtool explain "Only Alexander the Great" --tokenizer tokenizer.json --layer 1
  ngramtool explain "hello world" --heads 2 --table 1009 --json
  ngramtool explain "$(head -c 2000 notes.txt)" --layer 1 --limit 0
  ngramtool explain "the horse" --preset tutorial
"""


@option_groups
def explain_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The text to explain (keep it short).")],
    vocab: TokenizerOptions = TOKENIZER_OPTIONS,
    special: SpecialOpt = None,
    preset: PresetOpt = None,
    spec_options: SpecOptions = SPEC_OPTIONS,
    backend: BackendOpt = "auto",
    device: DeviceOpt = None,
    verbose: VerboseOpt = False,
    layer: Annotated[int | None, typer.Option("--layer", help="Show only this Engram layer id.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="Tokens shown (0: all).", min=0)] = 64,
    as_json: JsonOpt = False,
) -> None:
    """Explain the rows of TEXT."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # argv bytes that were not UTF-8 arrive as lone surrogates
        raise UsageError(
            "TEXT is not valid UTF-8 (a cut multi-byte character, or another encoding): "
            "pass UTF-8 text, e.g. convert it with iconv -t UTF-8"
        ) from None
    chosen = spec_options.choose(preset)
    named = "tokenizer" in given_options(ctx)
    mapping = chosen.mapping(
        vocab.tokenizer if named else default_tokenizer(preset),
        special=special,
        compress=not vocab.no_compress and default_compress(preset),
    )
    explained = explain(
        text,
        mapping,
        backend=backend,
        device=device,
        layer=layer,
        limit=limit,
    )
    if verbose:
        say_backend(explained.backend)
    spec, shown, left_out = explained.spec, explained.tokens, explained.left_out
    if as_json:
        print_json(
            {
                "spec": spec.to_dict(),
                "num_tokens": explained.num_tokens,
                "limit": limit,
                "truncated": left_out > 0,
                "tokens": shown,
            }
        )
    else:
        _render(spec, explained.num_tokens, shown)
    if left_out:
        stderr.print(
            f"({plural(left_out, 'token')} of {explained.num_tokens:,} left out after the first "
            f"{len(shown):,}; --limit 0 shows all)",
            markup=False,
        )


def _render(spec: HashSpec, total: int, records: list[dict[str, Any]]) -> None:
    """A header line, then one table per token: every value from raw id to row."""
    stdout.print(
        f"{plural(total, 'token')}; N={spec.max_ngram}, K={plural(spec.heads, 'head')} per order, layers "
        f"{list(spec.layer_ids)}, V'={spec.vocab_size}, canonical pad {spec.pad_id}"
    )
    for record in records:
        title = (
            f"token {record['position']}: {record['text']!r}  raw {record['raw_id']} -> "
            f"canonical {record['canonical_id']} (key {record['key']!r})"
        )
        grid = report_table(title)
        modulus = "prime" if spec.family == "engram" else "modulus"  # other families' sizes are not prime
        for name in (
            "layer",
            "n",
            "window",
            "mix (int64)",
            "head",
            modulus,
            f"mix % {modulus}",
            "+ offset",
            "= row",
        ):
            grid.add_column(name, justify="left" if name == "window" else "right")
        for gram in record["ngrams"]:
            window = " ".join(map(str, gram["window"]))
            shown = str(gram["layer"]), str(gram["order"]), window
            for head in gram["heads"]:
                first = head["head"] == 0
                mix = str(head["mix"]) if gram["mix"] is None or first else ""  # a mix per head
                grid.add_row(
                    *first_only(first, *shown),
                    mix,
                    *(str(head[key]) for key in ("head", "prime", "hash", "offset", "row")),
                )
        print_table(grid)


COMMAND = Command("explain", HELP, explain_command)
