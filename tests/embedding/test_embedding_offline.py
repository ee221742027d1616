"""Importing is lazy, and embedding works with the hub switched off and no network (fresh processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(SRC), **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=60)


def test_importing_the_package_and_finding_the_model_loads_no_heavy_library() -> None:
    result = run(
        "import sys, causantic.embedding as e\n"
        "e.load_embedder()\n"
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_embedding_works_offline_with_an_empty_hugging_face_cache(tmp_path: Path) -> None:
    code = (
        "import causantic.embedding as e\n"
        "from causantic.errors import ModelUnavailable\n"
        "v = e.load_embedder().embed_documents(['offline works'])\n"
        "print(v.shape)\n"
        "try:\n"
        "    e.load_embedder('jina-small')\n"
        "except ModelUnavailable as exc:\n"
        "    print('unavailable:', exc)\n"
    )
    dead = "http://127.0.0.1:9"  # nothing listens: any attempt to reach the network would fail
    result = run(
        code,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"),
        HTTP_PROXY=dead,
        HTTPS_PROXY=dead,
        http_proxy=dead,
        https_proxy=dead,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "(1, 384)"
    assert lines[1].startswith("unavailable: Embedding model 'jina-small' needs an ONNX export")
    assert "hf download jinaai/jina-embeddings-v2-small-en" in lines[1]
