"""Train a tiny language model with an Engram memory on the bundled corpus, on the CPU.

The model: token embedding -> + Engram memory (table on the CPU, gate, causal ShortConv) -> one
causal self-attention layer -> MLP -> an adaptive softmax over the corpus's own token set (the
exact likelihood of every token, at a fraction of a full softmax's cost on a CPU). It prints the
loss (mean cross-entropy, nats) every ``--log-every`` steps and finally ``loss: first A -> last B
(falling: True)``, where A and B average the first and last few steps (up to 10); it exits with 1
when the loss did not fall.

Where the rows come from (``--rows``):

- ``forward`` (default): the model hashes the token ids of each batch in its ``forward`` with
  ``ngramtool.torch.NgramRows``, as the Engram reference does (each window padded at its start);
  the data are token windows, read nanoGPT's way (random offsets into the token array).
- ``stored``: an ``IndexDataset`` reads each window's rows from the index (the rows of the
  stream), through a DataLoader.

Without ``--index`` it first hashes ``examples/corpus.txt`` with ``ngramtool.hash_files`` and small
tables (2 heads, base size 4099, one Engram layer) into a temporary directory: a tokens-only index
(``rows="lazy"``, no rows on disk) for ``forward``, an index with its rows for ``stored``.

Run from anywhere::

    python examples/train_tiny.py                 # 300 steps, rows hashed in forward
    python examples/train_tiny.py --rows stored --steps 30 --num-workers 2
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader

import ngramtool
from ngramtool import HashSpec
from ngramtool.torch import IndexDataset, NgramRows
from ngramtool.torch.engram import EngramMemory, RMSNorm

CORPUS = Path(__file__).resolve().parent / "corpus.txt"
# Small tables: what `ngramtool hash ... --heads 2 --table 4099 --layers 0` makes.
HASH_OPTIONS = {"heads": 2, "table_sizes": 4099, "layer_ids": [0]}
# Adaptive softmax clusters: the 1024 most frequent classes, the next 3072, then the rest.
ADAPTIVE_CUTOFFS = (1024, 4096)


class TinyEngramLM(nn.Module):
    """Embedding, one Engram memory, one causal attention layer and an MLP (pre-norm residual).

    ``forward(input_ids [B, S], rows [B, S, C] | None) -> log-probabilities [B, S, vocab_size]``;
    ``rows`` are the table rows of the model's one Engram layer (``batch["rows"][:, :, layer]``),
    or None: the model hashes ``input_ids`` itself with ``ngram_rows``. Every part is causal, so
    the output at position t depends only on input_ids[..t] and rows[..t].

    Args:
        vocab_size: the number of token classes (input and output), numbered by falling
            frequency (the adaptive softmax puts the first ones in its head).
        spec: the index's HashSpec (table size of its first layer, columns, N).
        classes: raw id -> class (LongTensor); None: the ids are the classes.
        ngram_rows: hashes the raw ids of a batch in ``forward`` when no rows are given.
        dim: the model width D.
        dim_per_head: the width d of one Engram table row.
        heads: attention heads.
        engram: False leaves the Engram memory out (an ablation; ``rows`` are then ignored).
    """

    def __init__(
        self,
        vocab_size: int,
        spec: HashSpec,
        *,
        classes: torch.Tensor | None = None,
        ngram_rows: NgramRows | None = None,
        dim: int = 64,
        dim_per_head: int = 16,
        heads: int = 4,
        engram: bool = True,
    ) -> None:
        super().__init__()
        self.heads = heads
        self.register_buffer("classes", classes, persistent=False)
        self.ngram_rows = ngram_rows
        self.embed = nn.Embedding(vocab_size, dim)
        self.engram = (
            EngramMemory(
                int(spec.rows_per_layer[0]), spec.num_columns, dim_per_head, dim, max_ngram=spec.max_ngram
            )
            if engram
            else None
        )
        self.attn_norm = RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.attn_out = nn.Linear(dim, dim, bias=False)
        self.mlp_norm = RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.out_norm = RMSNorm(dim)
        cutoffs = [c for c in ADAPTIVE_CUTOFFS if c < vocab_size] or [vocab_size // 2]
        self.output = nn.AdaptiveLogSoftmaxWithLoss(dim, vocab_size, cutoffs, div_value=4.0)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """Causal multi-head self-attention of ``x [B, S, D]``."""
        batch, length, dim = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.attn_out(mixed.transpose(1, 2).reshape(batch, length, dim))

    def to_classes(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The classes of raw ids."""
        return input_ids if self.classes is None else self.classes[input_ids]

    def features(self, input_ids: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """The final hidden states [B, S, D]."""
        hidden = self.embed(self.to_classes(input_ids))
        if self.engram is not None:
            if rows is None:  # hashed here, as the Engram reference does: [B, S, L, C] -> layer 0
                assert self.ngram_rows is not None, "give rows, or build the model with ngram_rows"
                rows = self.ngram_rows(input_ids)[:, :, 0]
            hidden = hidden + self.engram(hidden, rows)
        hidden = hidden + self.attention(self.attn_norm(hidden))
        hidden = hidden + self.mlp(self.mlp_norm(hidden))
        return self.out_norm(hidden)

    def forward(self, input_ids: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Next-token log-probabilities [B, S, vocab_size]."""
        features = self.features(input_ids, rows).flatten(0, 1)
        return self.output.log_prob(features).unflatten(0, input_ids.shape)

    def loss(
        self, input_ids: torch.Tensor, targets: torch.Tensor, rows: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean cross-entropy (nats) of the raw ids ``targets [B, S]`` given ``input_ids`` (and ``rows``)."""
        features = self.features(input_ids, rows).flatten(0, 1)
        return self.output(features, self.to_classes(targets).flatten()).loss


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="optimizer steps (default 300)")
    parser.add_argument("--seq-len", type=int, default=64, help="positions per window (default 64)")
    parser.add_argument("--batch", type=int, default=16, help="windows per step (default 16)")
    parser.add_argument(
        "--rows",
        choices=("forward", "stored"),
        default="forward",
        help="'forward': the model hashes each batch (NgramRows; default); 'stored': read from the index",
    )
    parser.add_argument("--index", type=Path, help="an index directory (default: hash examples/corpus.txt)")
    parser.add_argument(
        "--num-workers", type=int, default=0, help="DataLoader worker processes of --rows stored (default 0)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (default 1: too small a model to gain)"
    )
    parser.add_argument("--no-engram", action="store_true", help="leave the Engram memory out (an ablation)")
    parser.add_argument("--lr", type=float, default=3e-3, help="AdamW learning rate (default 3e-3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and the windows (default 0)")
    parser.add_argument("--log-every", type=int, default=25, help="print the loss every N steps (default 25)")
    args = parser.parse_args(argv)
    if min(args.steps, args.seq_len, args.batch, args.log_every, args.threads) < 1:
        parser.error("--steps, --seq-len, --batch, --log-every and --threads must be at least 1")
    return args


def build_index(dest: Path, rows: str) -> Path:
    """Hash the bundled corpus with small tables into ``dest`` (tokens only for ``rows="lazy"``)."""
    shown = ", ".join(f"{name}={value!r}" for name, value in HASH_OPTIONS.items())
    print(
        f"ngramtool.hash_files(['examples/corpus.txt'], '$TMP/{dest.name}', "
        f"mapping=NgramHashMapping.build({shown}), outputs=OutputOptions(rows={rows!r}))"
    )
    mapping = ngramtool.NgramHashMapping.build("cl100k_base", **HASH_OPTIONS)
    ngramtool.hash_files(
        [str(CORPUS)], str(dest), mapping=mapping, outputs=ngramtool.OutputOptions(rows=rows)
    )
    return dest


def stored_batches(dataset: IndexDataset, args: argparse.Namespace) -> Iterator[tuple[torch.Tensor, ...]]:
    """(tokens [B, S+1], rows [B, S, C]) of the index's windows, new random offsets every epoch."""
    loader = DataLoader(dataset, batch_size=args.batch, drop_last=True, num_workers=args.num_workers)
    for epoch in itertools.count():
        dataset.set_epoch(epoch)
        for batch in loader:
            yield batch["tokens"], batch["rows"][:, :, 0]


def token_batches(tokens: np.ndarray, args: argparse.Namespace) -> Iterator[tuple[torch.Tensor, ...]]:
    """(tokens [B, S+1],) at random offsets into the token array (nanoGPT's get_batch)."""
    rng = np.random.default_rng(args.seed)
    while True:
        starts = rng.integers(0, tokens.shape[0] - args.seq_len, args.batch)
        windows = np.stack([tokens[start : start + args.seq_len + 1] for start in starts])
        yield (torch.from_numpy(windows.astype(np.int64)),)


def train(args: argparse.Namespace, index_path: Path) -> list[float]:
    """Train for ``args.steps`` steps; returns the loss of every step."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    index = ngramtool.open_index(index_path)
    spec, tokens = index.spec, np.asarray(index.tokens)
    if (tokens.shape[0] - 1) // args.seq_len < args.batch:
        sys.exit(f"{index_path}: {tokens.shape[0]:,} tokens, too few for --batch {args.batch} windows")
    # The model predicts the corpus's own token set: raw ids -> classes 0..V-1 by falling frequency.
    vocab, counts = np.unique(tokens, return_counts=True)
    by_frequency = vocab[np.argsort(-counts, kind="stable")].astype(np.int64)
    classes = torch.zeros(int(vocab[-1]) + 1, dtype=torch.long)
    classes[torch.from_numpy(by_frequency)] = torch.arange(len(vocab))
    if args.rows == "stored":
        batches = stored_batches(IndexDataset(index_path, args.seq_len, random=True, seed=args.seed), args)
        ngram_rows, where = None, "read from the index by the data loader"
    else:
        batches = token_batches(tokens, args)
        ngram_rows, where = NgramRows(spec, index.lut), "hashed in the model's forward (NgramRows)"
    model = TinyEngramLM(len(vocab), spec, classes=classes, ngram_rows=ngram_rows, engram=not args.no_engram)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    print(
        f"index: {tokens.shape[0]:,} tokens, {len(vocab):,} distinct; spec N={spec.max_ngram} "
        f"K={spec.heads}, table {int(spec.rows_per_layer[0]):,} rows; "
        f"model {sum(p.numel() for p in model.parameters()):,} parameters; rows {where}"
    )
    losses = []
    started = time.perf_counter()
    for step, (window, *rows) in enumerate(itertools.islice(batches, args.steps), start=1):
        loss = model.loss(window[:, :-1], window[:, 1:], *rows)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % args.log_every == 0 or step == args.steps:
            print(f"step {step:4d}  loss {loss.item():.3f}  ({time.perf_counter() - started:.1f} s)")
    return losses


def main(argv: list[str] | None = None) -> int:
    """Build or open the index, train, print the loss summary; 0 when the loss fell, else 1."""
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ngramtool-train-") as tmp:
        lazy = "lazy" if args.rows == "forward" else "stored"
        index_path = args.index or build_index(Path(tmp) / "corpus.ngidx", lazy)
        losses = train(args, index_path)
    span = max(1, min(10, len(losses) // 5))
    first, last = float(np.mean(losses[:span])), float(np.mean(losses[-span:]))
    print(f"loss: first {first:.2f} -> last {last:.2f} (falling: {last < first})")
    return 0 if last < first else 1


if __name__ == "__main__":
    sys.exit(main())
