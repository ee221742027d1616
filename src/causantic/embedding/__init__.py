"""Embedding: texts to unit vectors, offline, with a small ONNX model.

- ``models``: the registry of model ids and their facts, and where each model's files are on disk
  (the default ships in ``assets/``; others come from the local Hugging Face cache, never the network).
- ``embedder``: :class:`Embedder` (windowing of long texts, batching, pooling) and
  :func:`load_embedder` (one per model per process, loaded on first use).

Importing this package is cheap: numpy, tokenizers and onnxruntime load on first use, and each
name below loads its module on first use (a read command asking a model's dimensions does not
load the embedder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from causantic import lazy_names

if TYPE_CHECKING:
    from causantic.embedding.embedder import MAX_WINDOWS_PER_DOCUMENT, Embedder, load_embedder
    from causantic.embedding.models import DEFAULT_MODEL, MODELS, ModelSpec, get_spec, is_available

_MODULE_OF = {
    "MAX_WINDOWS_PER_DOCUMENT": "embedder",
    "Embedder": "embedder",
    "load_embedder": "embedder",
    "DEFAULT_MODEL": "models",
    "MODELS": "models",
    "ModelSpec": "models",
    "get_spec": "models",
    "is_available": "models",
}

__all__ = [
    "DEFAULT_MODEL",
    "Embedder",
    "MAX_WINDOWS_PER_DOCUMENT",
    "MODELS",
    "ModelSpec",
    "get_spec",
    "is_available",
    "load_embedder",
]

__getattr__ = lazy_names(__name__, _MODULE_OF)
