"""The model registry, and where each model's files are found on this machine.

Owns: model ids and their facts (dimensions, the word pieces one window may hold, pooling, query and
document prefixes), locating the ONNX graph and ``tokenizer.json`` of a model, and the one
:class:`~causantic.errors.ModelUnavailable` message per way a model can be missing. Running a model
is left to :mod:`causantic.embedding.embedder`.

Nothing here touches the network. The default model ships inside the package
(``assets/``, built by ``scripts/export_onnx.py`` and pinned by ``assets/MANIFEST.json``); every
other model is used only if an ONNX export of it is already in the local Hugging Face cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from causantic.errors import ModelUnavailable

# The one shipped in assets/, and embedding.model's default in config.py. Written here too because a
# cold `causantic search` reads its settings from the config cache and must not import pydantic
# (tests/test_cli_imports.py); tests/embedding/test_embedding_models.py keeps the two the same.
DEFAULT_MODEL = "all-minilm-l6-v2"
ASSETS = Path(__file__).resolve().parent / "assets"
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """What Causantic knows about one embedding model."""

    id: str
    hf_repo: str  # where the weights come from (the shipped model's provenance, or the cache entry)
    dims: int
    max_word_pieces: int  # the most the model accepts in one window, special tokens included
    pooling: Literal["mean", "cls"]  # how token vectors become one vector (when the graph leaves it to us)
    query_prefix: str = ""
    document_prefix: str = ""
    bundled: bool = False  # shipped in assets/; otherwise read from the Hugging Face cache
    note: str = ""


MODELS: dict[str, ModelSpec] = {
    spec.id: spec
    for spec in (
        ModelSpec(
            "all-minilm-l6-v2",
            "sentence-transformers/all-MiniLM-L6-v2",
            dims=384,
            max_word_pieces=256,
            pooling="mean",
            bundled=True,
            note="default; shipped (int8, 23 MB), offline",
        ),
        ModelSpec(
            "bge-small-en-v1.5",
            "BAAI/bge-small-en-v1.5",
            dims=384,
            max_word_pieces=512,
            pooling="cls",
            query_prefix=BGE_QUERY_PREFIX,
            note="stronger retrieval; 12 fp32 layers: slower",
        ),
        ModelSpec(
            "bge-base-en-v1.5",
            "BAAI/bge-base-en-v1.5",
            dims=768,
            max_word_pieces=512,
            pooling="cls",
            query_prefix=BGE_QUERY_PREFIX,
            note="larger bge: 768 dims, slower still",
        ),
        ModelSpec(
            "jina-small",
            "jinaai/jina-embeddings-v2-small-en",
            dims=512,
            max_word_pieces=8192,
            pooling="mean",
            note="long context (1,024-piece windows here)",
        ),
        ModelSpec(
            "nomic-embed-text-v1.5",
            "nomic-ai/nomic-embed-text-v1.5",
            dims=768,
            max_word_pieces=8192,
            pooling="mean",
            query_prefix="search_query: ",
            document_prefix="search_document: ",
            note="768 dims, task prefixes",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """The two files a model runs from, and the hashes they must have (shipped model only)."""

    onnx: Path
    tokenizer: Path
    onnx_sha256: str | None = None
    tokenizer_sha256: str | None = None


def get_spec(model_id: str) -> ModelSpec:
    """The registry entry for ``model_id``; ModelUnavailable naming the known ids otherwise."""
    spec = MODELS.get(model_id)
    if spec is None:
        known = ", ".join(MODELS)
        raise ModelUnavailable(
            f"Unknown embedding model {model_id!r}. Known models: {known}. "
            f"Set embedding.model to one of them (the default, {DEFAULT_MODEL!r}, needs no download)."
        )
    return spec


def locate(spec: ModelSpec) -> ModelFiles:
    """Find the model's files on disk, or raise ModelUnavailable saying how to get them. No network."""
    if spec.bundled:
        return _bundled_files(spec)
    snapshot = _cached_snapshot(spec.hf_repo)
    if snapshot is None:
        repo_dir = hf_hub_cache() / _repo_folder(spec.hf_repo)
        raise ModelUnavailable(
            f"Embedding model {spec.id!r} needs an ONNX export of {spec.hf_repo} in the local Hugging Face "
            f"cache ({repo_dir}/snapshots/*/onnx/model.onnx and tokenizer.json), and none is there. "
            f"Causantic never downloads at run time: fetch it once with "
            f"`hf download {spec.hf_repo} onnx/model.onnx tokenizer.json` "
            f"(from `pip install huggingface_hub`; set HF_HOME if your cache lives elsewhere), "
            f"or use the default model {DEFAULT_MODEL!r}."
        )
    return ModelFiles(onnx=snapshot / "onnx" / "model.onnx", tokenizer=snapshot / "tokenizer.json")


def is_available(model_id: str) -> bool:
    """Whether ``model_id`` is known and its files are present (hashes are checked only on load)."""
    try:
        locate(get_spec(model_id))
    except ModelUnavailable:
        return False
    return True


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache folder, resolved the way huggingface_hub resolves it."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(name):
            return Path(os.environ[name]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "huggingface" / "hub"


def _repo_folder(hf_repo: str) -> str:
    return "models--" + hf_repo.replace("/", "--")


def _cached_snapshot(hf_repo: str) -> Path | None:
    """The snapshot holding both files: the one refs/main points at first, then any other, newest first."""
    repo_dir = hf_hub_cache() / _repo_folder(hf_repo)
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return None
    candidates = sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    ref = repo_dir / "refs" / "main"
    if ref.is_file():
        main = snapshots / ref.read_text(encoding="utf-8").strip()
        candidates = [main, *(c for c in candidates if c != main)]
    for snapshot in candidates:
        if (snapshot / "onnx" / "model.onnx").is_file() and (snapshot / "tokenizer.json").is_file():
            return snapshot
    return None


def _bundled_files(spec: ModelSpec) -> ModelFiles:
    manifest_path = ASSETS / "MANIFEST.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        files = ModelFiles(
            onnx=ASSETS / manifest["onnx"]["file"],
            tokenizer=ASSETS / manifest["tokenizer"]["file"],
            onnx_sha256=manifest["onnx"]["sha256"],
            tokenizer_sha256=manifest["tokenizer"]["sha256"],
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _damaged_install(f"{manifest_path} is missing or unreadable ({exc})") from exc
    for path in (files.onnx, files.tokenizer):
        if not path.is_file():
            raise _damaged_install(f"{path} is missing")
    return files


_verified: set[Path] = set()
_verify_lock = threading.Lock()


def verify_file(path: Path, expected_sha256: str | None) -> None:
    """Check a shipped file against its MANIFEST.json hash, once per process (about 50 ms for 23 MB)."""
    if expected_sha256 is None:
        return
    with _verify_lock:
        if path in _verified:
            return
        actual = sha256_file(path)
        if actual != expected_sha256:
            raise _damaged_install(f"{path} has sha256 {actual}, MANIFEST.json expects {expected_sha256}")
        _verified.add(path)


def sha256_file(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _damaged_install(detail: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"The bundled embedding model is damaged: {detail}. Reinstall Causantic "
        f"(`pip install --force-reinstall causantic`); in a source checkout, rebuild it with "
        f"`python scripts/export_onnx.py`."
    )
