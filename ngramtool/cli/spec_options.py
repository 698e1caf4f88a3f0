"""The options of the spec commands: the vocabulary's (a tokenizer, or --vocab-size), --preset and
the spec's fields, and :func:`build_spec`, which turns them into a HashSpec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from ..formats.artifacts import Kind, detect
from ..model.mapping import NgramHashMapping
from ..model.presets import default_compress, default_tokenizer
from ..spec.hashspec import HashSpec
from ..util.errors import UsageError
from .options import (
    CorpusVocabularyOptions,
    MaskingOptions,
    OptionGroup,
    PresetOpt,
    SpecChoice,
    SpecOptions,
    TokenizerOptions,
    given_options,
    refuse_idle_options,
)


@dataclass(frozen=True)
class VocabularyOptions(TokenizerOptions):
    """The tokenizer options, and V' without a tokenizer (--vocab-size)."""

    vocab_size: Annotated[
        int | None,
        typer.Option("--vocab-size", help="V' without a tokenizer (canonical ids are below it).", min=1),
    ] = None


@dataclass(frozen=True)
class _PresetOption(OptionGroup):
    preset_name: PresetOpt = None


@dataclass(frozen=True)
class SpecCommandOptions(SpecOptions, VocabularyOptions, _PresetOption):
    """The options of the spec commands that make a spec: --preset, the vocabulary's, the spec's
    (--family among them; a dataclass takes the fields of its bases from the last one up)."""

    def resolve(self, ctx: typer.Context) -> HashSpec:
        """The spec of the options (:func:`build_spec`)."""
        if self.family == "stored":
            raise UsageError(
                "--family stored takes its constants from a checkpoint: "
                "ngramtool spec from-config config.json SPEC --constants model.safetensors"
            )
        return build_spec(ctx, self, self.choose(self.preset_name))


VOCABULARY_OPTIONS = VocabularyOptions.placeholder()
SPEC_COMMAND_OPTIONS = SpecCommandOptions.placeholder()


def build_spec(ctx: typer.Context, vocab: VocabularyOptions, chosen: SpecChoice) -> HashSpec:
    """The spec of the options (:func:`ngramtool.resolve_spec`). The tokenizer is loaded when it is
    named, or (the default one) when neither --preset, --vocab-size nor --spec gives V'."""
    given = given_options(ctx)
    if vocab.vocab_size is not None:
        refuse_idle_options(ctx, ["no_compress"], "with a tokenizer, and --vocab-size replaces it")
    if chosen.spec_file is not None and "tokenizer" not in given:
        refuse_idle_options(ctx, ["no_compress"], "with --tokenizer (to check --spec against)")
    default_gives_size = (
        vocab.vocab_size is None
        and chosen.spec_file is None
        and (chosen.preset is None or "no_compress" in given)
    )
    return chosen.resolve(
        tokenizer=vocab.tokenizer if "tokenizer" in given or default_gives_size else None,
        no_compress=vocab.no_compress,
        vocab_size=vocab.vocab_size,
    )


def preset_mapping(
    inputs: list[str] | None,
    chosen: SpecChoice,
    vocab: CorpusVocabularyOptions,
    special: str | None,
    masking: MaskingOptions | None = None,
) -> NgramHashMapping:
    """The mapping of a corpus command (collisions, cache) given --preset (or DEAD tokens): the
    preset's tokenizer and vocabulary unless named (the tutorial: gpt2, raw ids). An index
    carries its own spec and masking, so they are refused with one."""
    if len(inputs or ()) == 1 and detect(inputs[0]) in (Kind.INDEX, Kind.DATASET):
        drop = "--preset, --mask-token and --masked" if masking is not None else "--preset"
        raise UsageError(f"{inputs[0]} is an index: it carries its own spec; drop {drop}")
    return chosen.mapping(
        vocab.tokenizer or default_tokenizer(chosen.preset) if vocab.vocab_size is None else None,
        special=special,
        compress=not vocab.no_compress and default_compress(chosen.preset),
        vocab_size=vocab.vocab_size,
        masking=masking,
    )
