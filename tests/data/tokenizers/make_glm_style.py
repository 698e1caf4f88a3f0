"""Build tests/data/tokenizers/glm-style/: a small offline tokenizer made the way GLM-4's is.

Byte-level BPE trained on the bundled corpus (1,000 ids) with GLM-4's split pattern, no
normalizer and a ByteLevel post-processor that adds no token, then GLM-4's fourteen added tokens
in GLM-4's order, every one special and not normalized, none stripping spaces. Its
tokenizer_config.json names ``eos_token`` and ``pad_token`` ``<|endoftext|>``. Followed:

- the split pattern (``pat_str``) and the special tokens, in order, of ``ChatGLM4Tokenizer`` in
  THUDM/glm-4-9b-chat's ``tokenization_chatglm.py`` (a tiktoken encoding of that pattern);
- the flags of those tokens (ids 151329-151342: ``special`` true, ``normalized``, ``lstrip``,
  ``rstrip`` and ``single_word`` false) and ``eos_token``/``pad_token`` ``<|endoftext|>`` in the
  ``added_tokens_decoder`` of THUDM/glm-4-9b-chat's and GLM-4-9B-0414's ``tokenizer_config.json``
  (GLM-4.1V's tokenizer lists the same);
- no template around a text: GLM-4's chat templates write ``[gMASK]<sop>`` themselves.

Run from the repository root:

    python tests/data/tokenizers/make_glm_style.py
"""

from __future__ import annotations

from pathlib import Path

from make_qwen_style import byte_level_bpe, write  # the same training, beside this script
from tokenizers import AddedToken, Tokenizer

OUT = Path(__file__).resolve().parent / "glm-style"
GLM4_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIAL = [
    "<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
    "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>",
    "<|begin_of_video|>", "<|end_of_video|>",
]  # fmt: skip


def build() -> Tokenizer:
    """Train the model and add the tokens."""
    tok = byte_level_bpe(GLM4_PATTERN)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    return tok


def main() -> None:
    """Write tokenizer.json and tokenizer_config.json."""
    write(build(), OUT, {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"})


if __name__ == "__main__":
    main()
