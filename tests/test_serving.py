"""HashState and BatchHashState: any split into prefill chunks, decode steps, rollbacks and copies
gives the rows of hashing the whole sequence at once, for every negative-id convention."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngramtool import BatchHashState, HashSpec, HashState, hash_ngrams
from ngramtool.model.presets import preset
from ngramtool.util.errors import NgramToolError, UsageError

torch = pytest.importorskip("torch")

CUDA = os.environ.get("NGRAMTOOL_TEST_CUDA") == "1"  # benchmarks/gpu_check.sh on a GPU machine
DEVICES = [
    None,
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not CUDA, reason="CUDA runs with NGRAMTOOL_TEST_CUDA=1")),
]

CONVENTIONS = ("mask", "barrier", "hash")
SPECS = {
    "N4": HashSpec(
        max_ngram=4, heads=2, layer_ids=(0, 3), table_sizes=(101, 103, 107), vocab_size=40, pad_id=3
    ),
    "N2": HashSpec(max_ngram=2, heads=3, layer_ids=(1,), table_sizes=(211,), vocab_size=9, pad_id=0),
    "v4.1": preset("deepseek-v4.1-flash").spec,
    # Heads with multipliers of their own, and Qwen3.8's segments after each EOS (id 5).
    "tutorial+eos": HashSpec(
        family="tutorial", heads=2, layer_ids=(0,), table_sizes=(97, 89), vocab_size=12, pad_id=5,
        seed=2026, eos_fill=True,
    ),
    "longcat": HashSpec(family="longcat", heads=2, layer_ids=(0,), table_sizes=(101, 101), vocab_size=30),
    # LongCat as sglang serves it (the walk stops at EOS 4), and the speedrun family's sequences,
    # whose first token reads as the reserved id (modded-nanogpt) or as itself (parameter-golf).
    "longcat+stop": HashSpec(
        family="longcat", heads=2, layer_ids=(0,), table_sizes=(101, 101), vocab_size=30, stop_token=4
    ),
    "speedrun": HashSpec(family="speedrun", heads=1, layer_ids=(0, 2), table_sizes=(97, 89), vocab_size=40),
    "speedrun-kept": HashSpec(
        family="speedrun", max_ngram=2, heads=1, layer_ids=(0,), table_sizes=(211,), vocab_size=50,
        first_token="kept",
    ),
}  # fmt: skip


def spec_conventions(names: list[str]) -> list[tuple[str, str]]:
    """(spec, convention) pairs: negative ids hashed as they are is the Engram family's rule only."""
    return [(name, c) for name in names for c in CONVENTIONS if c != "hash" or SPECS[name].family == "engram"]


SETTINGS = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])


def one_shot(ids: list[int], spec: HashSpec, negative_ids: str) -> np.ndarray:
    """Rows of the whole sequence at once: the oracle."""
    return hash_ngrams(np.array(ids, dtype=np.int64), spec, negative_ids=negative_ids, backend="numpy")


def tokens(spec: HashSpec) -> st.SearchStrategy[int]:
    """A canonical id, or a negative one (masked or DEAD)."""
    return st.integers(-2, min(spec.vocab_size, 60) - 1)


def token_lists(spec: HashSpec, max_size: int) -> st.SearchStrategy[list[int]]:
    """Canonical ids, negative ones among them."""
    return st.lists(tokens(spec), max_size=max_size)


@st.composite
def operations(draw: st.DrawFn, spec: HashSpec) -> list[tuple[str, object]]:
    """A request's life: chunks (a prefill, or a step of one token), rollbacks and copies."""
    kinds = st.sampled_from(["chunk", "step", "step", "rollback", "copy"])
    ops: list[tuple[str, object]] = []
    for kind in draw(st.lists(kinds, max_size=25)):
        if kind == "chunk":
            ops.append(("extend", draw(token_lists(spec, 12))))
        elif kind == "step":
            ops.append(("extend", [draw(tokens(spec))]))
        elif kind == "rollback":
            ops.append(("rollback", draw(st.integers(0, 8))))
        else:
            ops.append(("copy", draw(token_lists(spec, 5))))
    return ops


@pytest.mark.parametrize("backend", ["numpy", "torch", "torch-tensors"])
@pytest.mark.parametrize(
    ("spec_name", "negative_ids"),
    spec_conventions(["N4", "N2", "tutorial+eos", "longcat", "longcat+stop", "speedrun", "speedrun-kept"]),
)
@SETTINGS
@given(data=st.data(), max_rollback=st.integers(0, 6))
def test_hash_state_equals_one_shot(data, max_rollback, negative_ids, backend, spec_name):
    spec = SPECS[spec_name]
    state = HashState(
        spec, negative_ids=negative_ids, max_rollback=max_rollback, backend=backend.partition("-")[0]
    )
    sequence: list[int] = []
    for op, value in data.draw(operations(spec)):
        if op == "extend":
            ids = torch.tensor(value, dtype=torch.int64) if backend == "torch-tensors" else np.array(value)
            rows = state.extend(ids)
            assert type(rows) is type(ids)
            sequence += value
            expected = one_shot(sequence, spec, negative_ids)[len(sequence) - len(value) :]
            assert np.array_equal(np.asarray(rows), expected)
        elif op == "rollback":
            count = min(value, state.rollback_limit)
            state.rollback(count)
            del sequence[len(sequence) - count :]
        else:  # the snapshot carries on; the original goes on elsewhere and must not affect it
            snapshot = state.copy()
            state.extend(np.array(value, dtype=np.int64))
            state = snapshot
        assert state.length == len(sequence)


def test_hash_state_rolls_back_max_rollback_after_enough_tokens():
    """After N-1 + max_rollback tokens, exactly max_rollback; after a rollback, less until tokens come."""
    spec = SPECS["N4"]
    state = HashState(spec, max_rollback=5)
    state.extend(np.arange(20) % spec.vocab_size)
    assert state.rollback_limit == 5
    state.rollback(2)
    assert state.rollback_limit == 3
    state.extend([1])
    assert state.rollback_limit == 4
    short = HashState(spec, max_rollback=0)
    short.extend([1, 2])
    assert short.rollback_limit == 2  # a short request keeps everything: back to its start


def test_v41_preset_barrier_steps_equal_one_shot():
    """The V4.1 spec, DEAD tokens (an image span) in the middle, token by token after a prompt."""
    spec = SPECS["v4.1"]
    rng = np.random.default_rng(0)
    ids = rng.integers(0, spec.vocab_size, 40)
    ids[12:17] = -1
    state = HashState(spec, negative_ids="barrier")
    rows = [state.extend(ids[:10])] + [state.extend(ids[t : t + 1]) for t in range(10, 40)]
    assert np.array_equal(np.concatenate(rows), one_shot(ids.tolist(), spec, "barrier"))


@st.composite
def batch_operations(draw: st.DrawFn, spec: HashSpec, slots: int) -> list[tuple[str, object]]:
    """Steps of random subsets of slots, prefills, rollbacks, resets and releases."""
    ops: list[tuple[str, object]] = []
    kinds = st.sampled_from(["step", "step", "step", "prefill", "rollback", "reset", "release"])
    for kind in draw(st.lists(kinds, max_size=30)):
        if kind == "step":
            chosen = draw(st.lists(st.integers(0, slots - 1), unique=True, max_size=slots))
            ops.append(("step", (chosen, [draw(tokens(spec)) for _ in chosen])))
        elif kind == "prefill":
            ops.append(("prefill", (draw(st.integers(0, slots - 1)), draw(token_lists(spec, 10)))))
        elif kind == "rollback":
            chosen = draw(st.lists(st.integers(0, slots - 1), unique=True, min_size=1, max_size=slots))
            ops.append(("rollback", (chosen, [draw(st.integers(0, 6)) for _ in chosen])))
        else:
            ops.append((kind, draw(st.integers(0, slots - 1))))
    return ops


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("spec_name", "negative_ids"),
    spec_conventions(
        ["N4", "N2", "v4.1", "tutorial+eos", "longcat", "longcat+stop", "speedrun", "speedrun-kept"]
    ),
)
@SETTINGS
@given(data=st.data(), slots=st.integers(1, 5), max_rollback=st.integers(0, 4))
def test_batch_state_equals_one_shot_per_request(data, slots, max_rollback, negative_ids, device, spec_name):
    spec = SPECS[spec_name]
    state = BatchHashState(spec, slots, negative_ids=negative_ids, max_rollback=max_rollback, device=device)
    requests: list[list[int] | None] = [[] for _ in range(slots)]
    kind = np.ndarray if device is None else torch.Tensor
    for op, value in data.draw(batch_operations(spec, slots)):
        if op == "step":
            chosen, tokens = value
            chosen = [slot for slot in chosen if requests[slot] is not None]
            tokens = tokens[: len(chosen)]
            rows = state.step(np.array(chosen, dtype=np.int64), np.array(tokens, dtype=np.int64))
            assert isinstance(rows, kind) and rows.shape == (len(chosen), spec.num_layers, spec.num_columns)
            for i, (slot, token) in enumerate(zip(chosen, tokens, strict=True)):
                requests[slot].append(token)
                assert np.array_equal(np.asarray(rows[i]), one_shot(requests[slot], spec, negative_ids)[-1])
        elif op == "prefill":
            slot, ids = value
            if requests[slot] is None:
                continue
            rows = state.prefill(slot, ids)
            assert isinstance(rows, kind)
            requests[slot] += ids
            expected = one_shot(requests[slot], spec, negative_ids)[len(requests[slot]) - len(ids) :]
            assert np.array_equal(np.asarray(rows), expected)
        elif op == "rollback":
            chosen, counts = value
            pairs = [(s, c) for s, c in zip(*value, strict=True) if requests[s] is not None]
            limits = state.rollback_limits
            counts = [min(c, int(limits[s])) for s, c in pairs]
            chosen = [s for s, _ in pairs]
            state.rollback(chosen, counts)
            for slot, count in zip(chosen, counts, strict=True):
                del requests[slot][len(requests[slot]) - count :]
        elif op == "reset":
            state.reset(value)
            requests[value] = []
        else:
            state.release(value)
            requests[value] = None
        assert state.lengths.tolist() == [len(r) if r is not None else 0 for r in requests]
        assert state.active.tolist() == [r is not None for r in requests]


def test_batch_rollback_limits_follow_max_rollback():
    spec = SPECS["N4"]
    state = BatchHashState(spec, 3, max_rollback=4)
    state.prefill(0, np.arange(30) % spec.vocab_size)
    state.prefill(1, [1, 2])
    assert state.rollback_limits.tolist() == [4, 2, 0]
    state.rollback([0, 1], 2)
    assert state.rollback_limits.tolist() == [2, 0, 0]
    state.step([0, 1], [5, 6])
    assert state.rollback_limits.tolist() == [3, 1, 0]


@pytest.fixture
def one_state() -> HashState:
    state = HashState(SPECS["N4"], max_rollback=2)
    state.extend(np.arange(12))
    return state


def test_rollback_beyond_what_is_kept_is_refused(one_state):
    with pytest.raises(UsageError, match=r"cannot roll back 3 tokens: it keeps the ids for at most 2 now \("):
        one_state.rollback(3)
    assert one_state.length == 12  # nothing changed
    fresh = HashState(SPECS["N4"])
    fresh.extend([1, 2])
    with pytest.raises(UsageError, match="the request has 2, and a rollback cannot go before its start"):
        fresh.rollback(3)
    with pytest.raises(UsageError, match="number of tokens >= 0"):
        fresh.rollback(-1)
    with pytest.raises(UsageError, match="max_rollback"):
        HashState(SPECS["N4"], max_rollback=-1)


def test_hash_state_refuses_bad_ids(one_state):
    with pytest.raises(NgramToolError, match="token id 40 at position 2 is not a canonical id"):
        one_state.extend([1, 2, 40])
    assert one_state.length == 12
    with pytest.raises(UsageError, match=r"1-D \[T\], got shape \(2, 2\)"):
        one_state.extend(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(UsageError, match="must be integers"):
        one_state.extend(np.array([1.0]))
    after = one_state.extend([4])
    assert np.array_equal(after, one_shot([*range(12), 4], SPECS["N4"], "mask")[-1:])


@pytest.mark.parametrize("device", DEVICES)
def test_batch_state_refuses_bad_calls(device):
    spec = SPECS["N4"]
    state = BatchHashState(spec, 3, max_rollback=1, device=device)
    state.prefill(1, np.arange(10))
    with pytest.raises(NgramToolError, match=r"token id 40 for slot 2 \(position 1 of the step\)"):
        state.step([0, 2], [1, 40])
    with pytest.raises(UsageError, match="one token per slot: 2 slot ids but 1 token ids"):
        state.step([0, 2], [1])
    with pytest.raises(UsageError, match=r"slot 3 is not a slot of this state: slots are 0\.\.2"):
        state.step([3], [1])
    with pytest.raises(UsageError, match="slot ids must be distinct"):
        state.step([0, 0], [1, 1])
    with pytest.raises(UsageError, match=r"`token_ids` must be 1-D integer ids"):
        state.step([0], [[1]])
    with pytest.raises(
        UsageError, match="cannot roll back 2 tokens of slot 1: it keeps the ids for at most 1"
    ):
        state.rollback([0, 1], [0, 2])
    with pytest.raises(UsageError, match="cannot roll back 1 tokens of slot 0: the request has 0"):
        state.rollback(0, 1)
    with pytest.raises(UsageError, match="one count, or one per slot"):
        state.rollback([0, 1], [0, 0, 0])
    state.release(2)
    with pytest.raises(UsageError, match="slot 2 holds no request: it was released"):
        state.prefill(2, [1])
    assert state.lengths.tolist() == [0, 10, 0]  # every refused call left the state as it was
    with pytest.raises(UsageError, match="`slots` must be a positive number"):
        BatchHashState(spec, 0)
    with pytest.raises(UsageError, match="`negative_ids` must be"):
        BatchHashState(spec, 1, negative_ids="drop")
