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

import json
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

ROOT = Path(__file__).resolve().parents[3]
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
    tok = Tokenizer(models.BPE(byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(GLM4_PATTERN), behavior="isolated"),
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
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    return tok


def main() -> None:
    """Write tokenizer.json and tokenizer_config.json."""
    OUT.mkdir(exist_ok=True)
    build().save(str(OUT / "tokenizer.json"))
    config = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}
    (OUT / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
