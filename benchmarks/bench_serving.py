"""Serving: microseconds per decode step and prefill tokens/s of the hash state, against a
straightforward numpy implementation of the same semantics, in one run.

    python benchmarks/bench_serving.py                       # V4.1 spec, barrier, 1/64/256 requests
    python benchmarks/bench_serving.py --steps 100 --negative-ids mask --requests 1 8

Both sides serve the same requests with the DeepSeek-V4.1-Flash spec (N=4, 8 heads, 2 layers: 48
rows per token): each request is prefilled with a prompt, then every decode step hashes one token
for every request. Ids are random canonical ids with a fraction ``--dead`` of negative ones
(masked or DEAD tokens, per ``--negative-ids``).

- ``straightforward``: what one writes first. Each request keeps a Python list of its ids; a
  decode step builds each request's window from its list, applies the convention and hashes it
  with ``rows_from_windows``, one request at a time; a prefill builds the chunk's lag windows
  with numpy and hashes them with ``rows_from_windows``.
- ``BatchHashState``: ``step(slots, tokens)`` for all requests in one vectorized call, on numpy
  (``device=None``) and on torch CPU tensors (``device="cpu"``, when torch is installed, with
  torch's threads); ``prefill(slot, ids)`` through the backend (``auto``: numba when installed).

Before timing, both sides serve a shorter run (prefill, steps and rollbacks) and their rows are
checked equal. Reported per request count: microseconds per decode step by the wall clock and by
CPU seconds (process time, which a shared machine distorts less), per request, and the ratio to
the straightforward implementation; then prefill tokens/s and its ratio. Ratios come from one run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from ngramtool import BatchHashState, HashSpec
from ngramtool.hashing.backends import MASKED_ROW
from ngramtool.hashing.backends.numpy_backend import lag_windows, rows_from_windows
from ngramtool.model.presets import preset


class Straightforward:
    """The same semantics, one request at a time: a Python list of ids per request."""

    def __init__(self, spec: HashSpec, requests: int, negative_ids: str) -> None:
        self.spec = spec
        self.negative_ids = negative_ids
        self.ids: list[list[int]] = [[] for _ in range(requests)]

    def _rows(self, windows: np.ndarray) -> np.ndarray:
        """Rows of windows [M, N] under the convention."""
        pad = self.spec.pad_id
        dead = windows < 0
        if self.negative_ids == "barrier":
            windows = np.where(np.cumsum(dead, axis=1) > 0, pad, windows)
        elif self.negative_ids == "mask":
            windows = np.where(dead, pad, windows)
        rows = rows_from_windows(windows, self.spec)
        if self.negative_ids == "mask":
            rows[dead[:, 0]] = MASKED_ROW
        return rows

    def step(self, slots: list[int], tokens: list[int]) -> np.ndarray:
        """Rows [B, L, C] of one token per request, one request at a time."""
        n, pad = self.spec.max_ngram, self.spec.pad_id
        out = []
        for slot, token in zip(slots, tokens, strict=True):
            ids = self.ids[slot]
            ids.append(token)
            window = [ids[-1 - k] if k < len(ids) else pad for k in range(n)]
            out.append(self._rows(np.array([window], dtype=np.int64))[0])
        return np.stack(out)

    def prefill(self, slot: int, chunk: np.ndarray) -> np.ndarray:
        """Rows [T, L, C] of a chunk of one request."""
        n, ids = self.spec.max_ngram, self.ids[slot]
        before = ([self.spec.pad_id] * (n - 1) + ids)[-(n - 1) :]
        ext = np.concatenate([np.array(before, dtype=np.int64), chunk])
        ids.extend(chunk.tolist())
        return self._rows(lag_windows(ext, n))

    def rollback(self, slot: int, count: int) -> None:
        """Forget the last ``count`` ids of a request."""
        del self.ids[slot][len(self.ids[slot]) - count :]


def random_ids(rng: np.random.Generator, shape: tuple[int, ...], spec: HashSpec, dead: float) -> np.ndarray:
    """Canonical ids with a fraction ``dead`` of them -1."""
    ids = rng.integers(0, spec.vocab_size, shape, dtype=np.int64)
    ids[rng.random(shape) < dead] = -1
    return ids


def check_equal(spec: HashSpec, negative_ids: str, device: str | None, dead: float) -> None:
    """Both sides serve 8 requests (prefills, steps, rollbacks) and give the same rows."""
    rng = np.random.default_rng(1)
    ours = BatchHashState(spec, 8, negative_ids=negative_ids, device=device)
    theirs = Straightforward(spec, 8, negative_ids)
    slots = list(range(8))
    for slot in slots:
        chunk = random_ids(rng, (int(rng.integers(0, 20)),), spec, dead)
        assert np.array_equal(np.asarray(ours.prefill(slot, chunk)), theirs.prefill(slot, chunk))
    for round_ in range(40):
        tokens = random_ids(rng, (8,), spec, dead)
        assert np.array_equal(np.asarray(ours.step(slots, tokens)), theirs.step(slots, tokens.tolist()))
        if round_ % 7 == 6:
            counts = rng.integers(0, 4, 8)
            ours.rollback(slots, counts)
            for slot, count in zip(slots, counts.tolist(), strict=True):
                theirs.rollback(slot, count)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


Factory = Callable[[int], "Straightforward | BatchHashState"]


def implementations(
    spec: HashSpec, negative_ids: str, devices: list[str | None]
) -> list[tuple[str, Factory]]:
    """(name, a function of the request count that makes the state), the straightforward one first."""
    names = {None: "BatchHashState numpy", "cpu": "BatchHashState torch cpu"}
    made: list[tuple[str, Factory]] = [
        ("straightforward", lambda requests: Straightforward(spec, requests, negative_ids))
    ]
    for device in devices:
        made.append(
            (names[device], lambda r, d=device: BatchHashState(spec, r, negative_ids=negative_ids, device=d))
        )
    return made


def decode(
    state: Straightforward | BatchHashState, prompt: np.ndarray, steps: np.ndarray
) -> tuple[float, float]:
    """Seconds (wall, CPU) of the decode ``steps`` [S, B] of B requests prefilled with ``prompt``."""
    slots = np.arange(prompt.shape[0], dtype=np.int64)
    for slot in slots.tolist():
        state.prefill(slot, prompt[slot])
    if isinstance(state, Straightforward):
        slot_list, token_lists = slots.tolist(), steps.tolist()
        return timed(lambda: [state.step(slot_list, tokens) for tokens in token_lists])
    return timed(lambda: [state.step(slots, tokens) for tokens in steps])


def prefill(make: Factory, chunks: np.ndarray) -> tuple[float, float]:
    """Seconds (wall, CPU) of prefilling one request per chunk of ``chunks`` [R, T]."""
    make(1).prefill(0, chunks[0])  # first use: kernels compiled or loaded
    state = make(chunks.shape[0])
    return timed(lambda: [state.prefill(slot, chunk) for slot, chunk in enumerate(chunks)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, nargs="+", default=[1, 64, 256], help="request counts")
    parser.add_argument("--steps", type=int, default=300, help="decode steps timed per request count")
    parser.add_argument("--prompt", type=int, default=64, help="prompt tokens per request before decoding")
    parser.add_argument("--prefill-tokens", type=int, default=8192, help="tokens of each prefill chunk")
    parser.add_argument("--prefill-chunks", type=int, default=16, help="prefill chunks timed")
    parser.add_argument("--negative-ids", choices=["mask", "barrier", "hash"], default="barrier")
    parser.add_argument("--dead", type=float, default=0.01, help="fraction of negative ids")
    args = parser.parse_args()

    spec = preset("deepseek-v4.1-flash").spec
    try:
        import torch

        devices: list[str | None] = [None, "cpu"]
        torch_note = f"torch {torch.__version__} on {torch.get_num_threads()} threads"
    except ImportError:
        devices, torch_note = [None], "torch not installed"
    for device in devices:
        check_equal(spec, args.negative_ids, device, args.dead)
    print(
        f"spec deepseek-v4.1-flash: N={spec.max_ngram}, {spec.heads} heads, {spec.num_layers} layers, "
        f"{spec.num_layers * spec.num_columns} rows per token; negative_ids={args.negative_ids}, "
        f"{args.dead:.0%} negative ids; {torch_note}"
    )
    print("rows checked equal to the straightforward implementation (prefill, steps, rollbacks)")
    candidates = implementations(spec, args.negative_ids, devices)

    rng = np.random.default_rng(0)
    print(f"\ndecode, {args.steps} steps after {args.prompt}-token prompts")
    print(
        f"{'implementation':26s} {'requests':>8s} {'µs/step':>10s} {'CPU µs/step':>12s} "
        f"{'µs/request':>11s} {'x straightforward':>18s}"
    )
    for requests in args.requests:
        prompt = random_ids(rng, (requests, args.prompt), spec, args.dead)
        steps = random_ids(rng, (args.steps, requests), spec, args.dead)
        base = None
        for name, make in candidates:
            wall, cpu = decode(make(requests), prompt, steps)
            base = base or wall
            per_step = wall / args.steps * 1e6
            print(
                f"{name:26s} {requests:8d} {per_step:10.1f} {cpu / args.steps * 1e6:12.1f} "
                f"{per_step / requests:11.2f} {base / wall:17.1f}x"
            )

    chunks = random_ids(rng, (args.prefill_chunks, args.prefill_tokens), spec, args.dead)
    print(f"\nprefill, {args.prefill_chunks} chunks of {args.prefill_tokens} tokens, one request each")
    print(f"{'implementation':26s} {'Mtok/s':>10s} {'CPU Mtok/s':>12s} {'x straightforward':>18s}")
    base = None
    for name, make in candidates:
        wall, cpu = prefill(make, chunks)
        base = base or wall
        rate, cpu_rate = chunks.size / wall / 1e6, chunks.size / cpu / 1e6
        print(f"{name:26s} {rate:10.2f} {cpu_rate:12.2f} {base / wall:17.1f}x")


if __name__ == "__main__":
    main()
