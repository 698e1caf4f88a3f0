"""Hash families through the library and the CLI (docs/families.md): the tutorial chapter's hash
(its rows, collision figures and size), LongCat's and Qwen3.8's configs, and the family recorded in
and checked from every output. Vectors: tests/data/families.json (reference/golden/families.json).
The kernels against the golden vectors on every backend: tests/backends/test_backends.py."""

from __future__ import annotations

import json
from itertools import product

import numpy as np
import pytest
from conftest import assert_one_line_error, load_json, run, run_json
from test_model_configs import LONGCAT_KEYS, QWEN_KEYS, qwen_constants, write_config

from ngramtool import HashSpec, NgramHashMapping, hash_ngrams
from ngramtool.analysis.counting import count_ngram_types
from ngramtool.analysis.reports import sweep_collisions
from ngramtool.model.presets import preset, resolve_spec
from ngramtool.spec.families.tutorial import tutorial_multipliers
from ngramtool.tokenizers import load_tokenizer
from ngramtool.util.errors import UsageError

TUTORIAL = load_json("families.json")["families"]["tutorial"]


def test_the_gpt2_encoding_works_offline_from_the_bundled_ranks(r50k_path):
    """The tutorial's tokenizer: tiktoken's gpt2 shares r50k_base's ranks, which ship with ngramtool."""
    bundled = load_tokenizer("gpt2")
    assert bundled.name == "gpt2" and bundled.n_vocab == 50257 and bundled.pad_token_id == 50256
    assert bundled.fingerprint == load_tokenizer(str(r50k_path)).fingerprint
    assert bundled.encode("hello world").tolist() == [31373, 995]


def test_the_tutorial_preset_is_the_chapters_own_hash():
    chosen = preset("tutorial")
    spec = chosen.spec
    assert (spec.family, spec.seed, spec.pad_id, spec.vocab_size) == ("tutorial", 2026, 0, 50257)
    assert (chosen.tokenizer, chosen.compress, chosen.dim) == ("gpt2", False, 16)
    assert tutorial_multipliers(2026, 3, 4) == TUTORIAL["multipliers"]
    assert spec.primes.ravel().tolist() == [262144] * 8  # one table size, not prime
    assert spec.offsets[0].tolist() == [h * 262144 for h in range(8)]  # head x table when rows are global
    assert spec.rows_per_layer.tolist() == [8 * 262144]


def test_hash_with_the_tutorial_preset_gives_the_chapters_rows(tmp_path):
    """Each golden sequence as a token file of raw GPT-2 ids: the index's rows are the chapter's per-head
    rows plus head x table."""
    case = TUTORIAL["cases"][0]
    for i, ids in enumerate(case["ids"]):
        tokens = tmp_path / f"seq{i}.npy"
        np.save(tokens, np.asarray(ids, dtype=np.int64))
        out = tmp_path / f"seq{i}.ngidx"
        result = run(
            "hash", "--tokens", tokens, "--preset", "tutorial", "--table", case["table"], "-o", out, "-q"
        )
        assert result.returncode == 0, result.stderr.decode()
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["spec"]["family"] == "tutorial" and manifest["tokenizer"]["name"] == "gpt2"
        assert manifest["vocab"]["compressed"] is False
        rows = np.load(out / "rows.npy")[:, 0, :]
        assert (rows - np.arange(8) * case["table"]).tolist() == case["rows"][i]
        assert run("verify", out).returncode == 0


def test_collisions_with_the_tutorial_preset_give_the_chapters_figures(tmp_path):
    """The chapter's metric is collisions' ratio 1 - rows/types per head, over the sample padded with 0."""
    sample = tmp_path / "sample.npy"
    np.save(sample, np.asarray(TUTORIAL["collision_sample"], dtype=np.int64))
    data = run_json("collisions", sample, "--preset", "tutorial", "--table", "1024,16384")
    assert [o["types"] for o in data["orders"]] == [
        TUTORIAL["collisions"]["1024"]["2gram_distinct"],
        TUTORIAL["collisions"]["1024"]["3gram_distinct"],
    ]
    for table in data["tables"]:
        expected = TUTORIAL["collisions"][str(table["table_sizes"][0])]
        for head in table["heads"]:
            h = (head["order"] - 2) * 4 + head["head"]
            assert head["collision"] == pytest.approx(expected[f"{head['order']}gram_h{h}"], abs=1e-12)
            assert head["table"] == table["table_sizes"][0]


def test_heads_with_their_own_mixes_count_indistinguishable_ngrams_exactly():
    """Tables whose product passes 2^63 (4 x 2^18 rows) and per-head mixes: the n-grams with the same
    row on every head, against a count of row tuples by hand."""
    rng = np.random.default_rng(7)
    ids = rng.integers(0, 40, 6000)
    spec = resolve_spec(preset="tutorial", vocab_size=40, table_sizes=(262144, 7))  # order 3: 7 rows
    types = count_ngram_types(ids, spec)
    report = sweep_collisions(types, [spec])[0]
    rows = hash_ngrams(ids, spec, offsets=False)[:, 0, :]
    windows = np.stack([np.concatenate([[0] * k, ids[: len(ids) - k]]) for k in range(3)], axis=1)
    for order, stats in zip((2, 3), report.orders, strict=True):
        columns = slice((order - 2) * 4, (order - 1) * 4)
        grams = {
            tuple(w[:order]): tuple(r[columns]) for w, r in zip(windows.tolist(), rows.tolist(), strict=True)
        }
        tuples = list(grams.values())
        repeated = sum(1 for t in tuples if tuples.count(t) > 1)
        assert stats.indistinguishable == pytest.approx(repeated / len(grams))


@pytest.mark.parametrize("preset", ["tutorial", "engram-demo"])
def test_a_sweep_in_groups_of_one_pair_equals_each_size_alone(preset):
    """Row loads held one (table size, layer) pair at a time (``loads_budget=1``): the later pairs
    read the kept mixes back, per head (tutorial) or per layer (engram); the figures are each
    size's own, including the sizes whose primes multiply past 2^63 (their repeated mixes
    counted once per layer)."""
    ids = np.random.default_rng(3).integers(0, 40, 3000)
    sizes = [(262144, 7), (4099, 4099), (262147, 262147)]
    specs = [resolve_spec(preset=preset, vocab_size=40, table_sizes=size) for size in sizes]
    types = count_ngram_types(ids, specs[0])
    grouped = sweep_collisions(types, specs, loads_budget=1)
    for spec, report in zip(specs, grouped, strict=True):
        assert report.to_dict() == sweep_collisions(types, [spec])[0].to_dict()


def test_the_family_is_recorded_and_an_index_of_one_family_is_never_read_as_another(tmp_path, files):
    out = tmp_path / "t.ngidx"
    assert run("hash", files["a"], "--preset", "tutorial", "-o", out, "-q").returncode == 0
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["spec"]["family"] == "tutorial"
    assert len(manifest["spec"]["derived"]["multipliers"][0]) == 8  # per column: [L, C, N]
    inspected = run("inspect", out).stdout.decode()
    assert "family tutorial" in inspected
    manifest["spec"].pop("family")  # read as an Engram spec: the fingerprint no longer matches
    manifest_path.write_text(json.dumps(manifest))
    assert_one_line_error(run("verify", out), 1, "fingerprint")


def test_explain_shows_each_heads_own_mix():
    data = run_json("explain", "the cat sat", "--preset", "tutorial")
    spec = preset("tutorial").spec
    ids = np.array([t["raw_id"] for t in data["tokens"]])
    rows = hash_ngrams(ids, spec)
    for t, token in enumerate(data["tokens"]):
        for gram in token["ngrams"]:
            assert gram["mix"] is None  # each head mixes with its own multipliers
            for head in gram["heads"]:
                col = spec.column(gram["order"], head["head"])
                assert head["hash"] == head["mix"] % 262144 and head["row"] == rows[t, 0, col]


def test_spec_commands_refuse_what_a_family_has_no_use_for(tmp_path):
    assert_one_line_error(
        run("spec", "save", tmp_path / "s.json", "--family", "longcat", "--seed", "3", "--vocab-size", "100"),
        2,
        "family 'longcat' takes no --seed",
    )
    assert_one_line_error(
        run("spec", "save", tmp_path / "s.json", "--family", "stored", "--vocab-size", "100"),
        2,
        "--constants",
    )
    assert_one_line_error(
        run(
            "spec", "export", "--preset", "tutorial", "-t", "gpt2", "--no-compress", "-o", tmp_path / "c.json"
        ),
        2,
        "per head",
    )
    with pytest.raises(UsageError, match="hashed as they are is the Engram demo's rule"):
        hash_ngrams(np.array([1, -1, 2]), preset("tutorial").spec, negative_ids="hash")
    saved = tmp_path / "lc.json"
    options = (
        "--family",
        "longcat",
        "--heads",
        "2",
        "--table",
        "5003",
        "--vocab-size",
        "1000",
        "--layers",
        "0",
    )
    assert run("spec", "save", saved, *options, "-q").returncode == 0
    assert HashSpec.from_json(saved.read_text()).family == "longcat"
    assert run("spec", "lint", "--preset", "tutorial").returncode == 0


def test_from_config_writes_longcat_and_qwen_specs(tmp_path):
    golden = load_json("families.json")["families"]["longcat"]["cases"][0]
    longcat = run_json(
        "spec", "from-config", write_config(tmp_path, "lc.json", LONGCAT_KEYS), tmp_path / "lc.spec"
    )
    assert longcat["layout"] == "longcat" and longcat["spec"]["family"] == "longcat"
    assert longcat["spec"]["table_sizes"] == [golden["m"]] * 2 and longcat["spec"]["vocab_size"] == 1000
    spec = HashSpec.from_json((tmp_path / "lc.spec").read_text())
    assert (
        hash_ngrams(np.asarray(golden["tokens"]), spec, negative_ids="barrier")[:, 0].tolist()
        == golden["ids"]
    )
    qwen = write_config(tmp_path, "qwen.json", QWEN_KEYS)
    assert_one_line_error(
        run("spec", "from-config", qwen, tmp_path / "q.spec", "-t", "gpt2"), 2, "--constants"
    )
    written = run_json(
        "spec",
        "from-config",
        qwen,
        tmp_path / "q.spec",
        "-t",
        "gpt2",
        "--constants",
        qwen_constants(tmp_path),
    )
    assert written["spec"]["family"] == "stored" and written["spec"]["eos_fill"] is True
    assert written["rows_per_layer"] == [4096] and written["spec"]["pad_id"] == 50256
    mapping = NgramHashMapping.build("gpt2", spec_file=tmp_path / "q.spec", compress=False)
    assert mapping.spec.stored is not None and mapping.spec.multipliers.tolist() == [[3, 1000003, 2000001]]


def test_the_torch_modules_serve_every_family():
    torch = pytest.importorskip("torch")
    from ngramtool.tokenizers.vocab import identity_vocab
    from ngramtool.torch import NgramRows

    specs = [
        preset("tutorial").spec,
        HashSpec(
            family="longcat", heads=2, layer_ids=(0,), table_sizes=(5003, 5003), vocab_size=50257, pad_id=0
        ),
    ]
    ids = torch.as_tensor(np.random.default_rng(3).integers(0, 50257, (2, 40)))
    for spec, (backend, negative) in product(specs, [("numpy", "mask"), ("torch", "barrier")]):
        module = NgramRows(spec, identity_vocab(50257), backend=backend, negative_ids=negative)
        rows = module(ids)
        expected = np.stack([hash_ngrams(row, spec, negative_ids=negative) for row in ids.numpy()])
        assert np.array_equal(rows.numpy(), expected)


def test_rows_on_the_fly_follow_the_family(tmp_path, files):
    """A tokens-only index (rows computed when read) of a tutorial spec and of Qwen3.8's stored
    constants with EOS segments gives the rows the stored index holds."""
    from ngramtool import OutputOptions, hash_files, open_index

    qwen = write_config(tmp_path, "qwen.json", {**QWEN_KEYS, "eos_token_id": 13})  # "\n" in bytes: segments
    mappings = {
        "tutorial": NgramHashMapping.build("gpt2", spec="tutorial", compress=False),
        "qwen": NgramHashMapping.from_config(qwen, "bytes", constants=qwen_constants(tmp_path)),
    }
    for name, mapping in mappings.items():
        stored, lazy = tmp_path / f"{name}.ngidx", tmp_path / f"{name}-lazy.ngidx"
        hash_files([files["a"]], stored, mapping=mapping)
        hash_files([files["a"]], lazy, mapping=mapping, outputs=OutputOptions(rows="lazy"))
        assert not (lazy / "rows.npy").exists()
        expected = np.asarray(open_index(stored).rows[:])
        assert np.array_equal(np.asarray(open_index(lazy).rows[:]), expected), name
        assert np.array_equal(expected, hash_ngrams(np.asarray(open_index(stored).tokens[:]), mapping.spec))
