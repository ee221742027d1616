"""The model registry and where models load from: shipped assets, the Hugging Face cache, or a clear error."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from causantic.embedding import (
    DEFAULT_MODEL,
    MODELS,
    Embedder,
    ModelSpec,
    get_spec,
    is_available,
    load_embedder,
)
from causantic.embedding.embedder import plan_windows
from causantic.embedding.models import ASSETS, ModelFiles, hf_hub_cache, locate, sha256_file
from causantic.errors import ModelUnavailable


@pytest.fixture
def hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hugging Face cache of our own (the machine's is never looked at)."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    return tmp_path / "hf"


def put_in_cache(repo: str, onnx: Path, tokenizer: Path, snapshot: str = "0123abcd") -> Path:
    folder = hf_hub_cache() / ("models--" + repo.replace("/", "--"))
    (folder / "snapshots" / snapshot / "onnx").mkdir(parents=True)
    (folder / "snapshots" / snapshot / "onnx" / "model.onnx").symlink_to(onnx)
    (folder / "snapshots" / snapshot / "tokenizer.json").symlink_to(tokenizer)
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / "main").write_text(snapshot)
    return folder / "snapshots" / snapshot


def test_the_default_model_is_shipped_and_described() -> None:
    spec = get_spec(DEFAULT_MODEL)
    assert spec.bundled and spec.dims == 384 and spec.max_word_pieces == 256 and spec.pooling == "mean"
    assert is_available(DEFAULT_MODEL)
    assert {"bge-small-en-v1.5", "jina-small"} <= set(MODELS)


def test_the_shipped_model_is_what_the_configuration_asks_for_by_default() -> None:
    # Written twice (the embedding path stays free of pydantic for a cold search): one name for both.
    from causantic.config import EmbeddingConfig

    assert EmbeddingConfig().model == DEFAULT_MODEL


def test_the_shipped_onnx_matches_its_manifest_hash() -> None:
    manifest = json.loads((ASSETS / "MANIFEST.json").read_text(encoding="utf-8"))
    for key in ("onnx", "tokenizer"):
        path = ASSETS / manifest[key]["file"]
        assert path.stat().st_size == manifest[key]["bytes"]
        assert sha256_file(path) == manifest[key]["sha256"]
    assert manifest["source"]["sha256"]["tokenizer.json"] == manifest["tokenizer"]["sha256"]


def test_an_unknown_model_id_names_the_known_ones() -> None:
    with pytest.raises(ModelUnavailable, match=r"Unknown embedding model 'minilm-xxl'.*all-minilm-l6-v2"):
        load_embedder("minilm-xxl")


def test_a_model_missing_from_the_cache_says_what_to_download_without_waiting(hf_home: Path) -> None:
    started = time.perf_counter()
    with pytest.raises(ModelUnavailable) as caught:
        load_embedder("bge-small-en-v1.5")
    assert time.perf_counter() - started < 1
    message = str(caught.value)
    assert "hf download BAAI/bge-small-en-v1.5 onnx/model.onnx tokenizer.json" in message
    assert str(hf_home / "hub" / "models--BAAI--bge-small-en-v1.5") in message
    assert not is_available("jina-small")


def test_a_model_in_the_hugging_face_cache_loads_from_there(hf_home: Path) -> None:
    # The shipped MiniLM graph, filed in the cache under another model's name, stands in for a download.
    shipped = locate(get_spec(DEFAULT_MODEL))
    snapshot = put_in_cache("BAAI/bge-small-en-v1.5", shipped.onnx, shipped.tokenizer)
    spec = get_spec("bge-small-en-v1.5")
    files = locate(spec)
    assert files.onnx == snapshot / "onnx" / "model.onnx" and files.onnx_sha256 is None
    embedder = Embedder(spec, files)
    text = "the websocket reconnects in a loop"
    document = embedder.embed_documents([text])[0]
    query = embedder.embed_query(text)
    assert document.shape == query.shape == (384,)
    assert 0.3 < float(document @ query) < 0.999  # bge's query prefix is applied to queries only


def test_a_damaged_shipped_file_is_refused_with_a_reinstall_hint(tmp_path: Path) -> None:
    shipped = locate(get_spec(DEFAULT_MODEL))
    damaged = tmp_path / "model.onnx"
    shutil.copyfile(shipped.onnx, damaged)
    with damaged.open("r+b") as f:
        f.seek(1000)
        f.write(b"\x00\x01\x02\x03")
    files = ModelFiles(damaged, shipped.tokenizer, shipped.onnx_sha256, shipped.tokenizer_sha256)
    with pytest.raises(ModelUnavailable, match="damaged.*pip install --force-reinstall causantic"):
        Embedder(get_spec(DEFAULT_MODEL), files).load()


def test_a_file_that_is_not_a_model_is_reported_not_crashed_on(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"this is not protobuf")
    files = ModelFiles(bad, locate(get_spec(DEFAULT_MODEL)).tokenizer)
    with pytest.raises(ModelUnavailable, match="(?s)Cannot load .*hf download BAAI/bge-small-en-v1.5"):
        Embedder(get_spec("bge-small-en-v1.5"), files).load()


# --- models whose graph returns token vectors: pooling and windowing done by the embedder ---------


def token_vector_model(path: Path, table: np.ndarray) -> Path:
    """A real (tiny) ONNX graph in the Hugging Face export shape: ids in, ``last_hidden_state`` out."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "token-vectors",
        [
            helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", table.shape[1]])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.fixture
def table() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((30522, 8)).astype(np.float32)


def word_pieces(text: str) -> list[int]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(ASSETS / "tokenizer.json"))
    tokenizer.no_padding()  # the file carries MiniLM's training-time padding to 128
    return tokenizer.encode(text, add_special_tokens=False).ids


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_token_vectors_are_pooled_over_real_tokens_only(tmp_path: Path, table: np.ndarray, pooling: str) -> None:
    spec = ModelSpec("tiny", "test/tiny", dims=8, max_word_pieces=16, pooling=pooling)  # type: ignore[arg-type]
    files = ModelFiles(token_vector_model(tmp_path / "tiny.onnx", table), ASSETS / "tokenizer.json")
    embedder = Embedder(spec, files)
    short, longer = "hello world", "a somewhat longer sentence that needs padding"
    ids = [101, *word_pieces(short), 102]
    expected = unit(table[ids].mean(axis=0) if pooling == "mean" else table[101])
    got_alone = embedder.embed_documents([short])[0]
    got_padded = embedder.embed_documents([short, longer])[0]  # batched with a longer text: padded
    assert np.allclose(got_alone, expected, atol=1e-6) and np.allclose(got_padded, expected, atol=1e-6)


def test_a_long_text_is_the_mean_of_its_window_vectors(tmp_path: Path, table: np.ndarray) -> None:
    spec = ModelSpec("tiny", "test/tiny", dims=8, max_word_pieces=16, pooling="mean")
    embedder = Embedder(spec, ModelFiles(token_vector_model(tmp_path / "tiny.onnx", table), ASSETS / "tokenizer.json"))
    text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    ids = word_pieces(text)
    assert len(ids) == 16  # more than the 14 a 16-piece window leaves for text: two windows
    windows = [ids[start:end] for start, end in plan_windows(len(ids), 14)]
    assert len(windows) == 2
    expected = unit(np.mean([unit(table[[101, *w, 102]].mean(axis=0)) for w in windows], axis=0))
    assert np.allclose(embedder.embed_documents([text])[0], expected, atol=1e-6)
