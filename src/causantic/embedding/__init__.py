"""Embedding: texts to unit vectors, offline, with a small ONNX model.

- ``models``: the registry of model ids and their facts, and where each model's files are on disk
  (the default ships in ``assets/``; others come from the local Hugging Face cache, never the network).
- ``embedder``: :class:`Embedder` (windowing of long texts, batching, pooling) and
  :func:`load_embedder` (one per model per process, loaded on first use).

Importing this package is cheap: numpy, tokenizers and onnxruntime load on first use.
"""

from causantic.embedding.embedder import MAX_WINDOWS_PER_DOCUMENT, Embedder, load_embedder
from causantic.embedding.models import DEFAULT_MODEL, MODELS, ModelSpec, get_spec, is_available

__all__ = [
    "DEFAULT_MODEL",
    "MAX_WINDOWS_PER_DOCUMENT",
    "MODELS",
    "Embedder",
    "ModelSpec",
    "get_spec",
    "is_available",
    "load_embedder",
]
