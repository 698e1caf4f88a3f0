"""Build tests/data/tokenizers/qwen-style/: a small offline tokenizer made the way Qwen2.5's is.

Byte-level BPE with Qwen2's split pattern, NFC normalizer and ByteLevel post-processor, trained
on the bundled corpus (1,000 ids), then Qwen2.5's added tokens with Qwen2.5's flags: the chat
and vision markers are special, ``<tool_call>`` and the FIM/repository markers are not (the HF
library matches those in text whatever ``encode_special_tokens`` says). Its
tokenizer_config.json names ``eos_token`` ``<|im_end|>`` and ``pad_token`` ``<|endoftext|>``, as
Qwen2.5's instruct models do. Run from the repository root:

    python tests/data/tokenizers/make_qwen_style.py
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(__file__).resolve().parent / "qwen-style"
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIAL = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
]  # fmt: skip
NOT_SPECIAL = [
    "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
    "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
]  # fmt: skip


def byte_level_bpe(pattern: str, normalizer: normalizers.Normalizer | None = None) -> Tokenizer:
    """A byte-level BPE of 1,000 ids trained on the bundled corpus, split by ``pattern`` (the
    ByteLevel post-processor adds no token)."""
    tok = Tokenizer(models.BPE(byte_fallback=False))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    lines = (ROOT / "examples" / "corpus.txt").read_text(encoding="utf-8").splitlines()
    trainer = trainers.BpeTrainer(
        vocab_size=1000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(lines, trainer)
    return tok


def write(tok: Tokenizer, out: Path, config: dict) -> None:
    """Write ``out``/tokenizer.json and ``out``/tokenizer_config.json (``config``)."""
    out.mkdir(exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def build() -> Tokenizer:
    """Train the model and add the tokens."""
    tok = byte_level_bpe(QWEN2_PATTERN, normalizers.NFC())
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in NOT_SPECIAL])
    return tok


def main() -> None:
    """Write tokenizer.json and tokenizer_config.json."""
    write(build(), OUT, {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})


if __name__ == "__main__":
    main()
