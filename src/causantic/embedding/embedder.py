"""Texts to unit vectors with an ONNX embedding model: windowing, batching, pooling.

Owns: tokenising, splitting long texts into windows the model can see, batching every window of a
call in one place, running onnxruntime, pooling and L2 normalisation. Which model, and where its
files are, is left to :mod:`causantic.embedding.models`; storing vectors is left to ``store/``.

Long texts. A model sees at most ``max_word_pieces`` per window (256 for the default model), and a
chunk can be longer. So a document is cut into at most :data:`MAX_WINDOWS_PER_DOCUMENT` windows of
equal length, spread evenly over its word pieces and overlapping by at least :data:`WINDOW_OVERLAP`;
each window gets the model's special tokens and document prefix, and the document's vector is the
re-normalised mean of its window vectors. Four windows of the default model cover a text of up to
about 1,000 word pieces completely (the chunker's largest chunks need two or three); past that the
windows stay spread from start to end and the text between them goes unseen. A query is one window:
its first word pieces.

Batches. Every window of one call is sorted by length and run in batches of ``batch_size`` windows
(fewer when they are long), so little of a batch is padding. With the int8 default model a window's
vector also depends slightly on its batch-mates, because dynamic quantisation takes one activation
scale per batch: the same text embedded alone and in a batch of 32 agree to cosine 0.992 on average
(about the int8-vs-fp32 gap, and no worse against fp32). ``batch_size=1`` makes every vector a
function of its text alone and, measured on two cores, costs no throughput.

numpy, tokenizers and onnxruntime are imported on first use, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causantic.embedding.models import DEFAULT_MODEL, ModelFiles, ModelSpec, get_spec, locate, verify_file
from causantic.errors import ModelUnavailable, raise_if_interrupted

if TYPE_CHECKING:
    import numpy as np
    from onnxruntime import InferenceSession
    from tokenizers import Tokenizer

MAX_WINDOWS_PER_DOCUMENT = 4
"""Most windows one document is embedded as: bounds the cost of a pathological text at 4x."""

WINDOW_OVERLAP = 32
"""Word pieces neighbouring windows share at least, so no sentence is only ever seen cut in two."""

MAX_WINDOW_WORD_PIECES = 1024
"""Longest window even for long-context models: attention cost grows with its square, chunks are short."""

BATCH_WORD_PIECES_PER_SLOT = 256
"""A batch holds ``batch_size`` windows and at most ``batch_size * 256`` padded word pieces."""

_INSTALL_HINT = "pip install onnxruntime tokenizers numpy"


class Embedder:
    """One embedding model, loaded on first use. Thread-safe: share one per process (load_embedder)."""

    def __init__(
        self,
        spec: ModelSpec,
        files: ModelFiles,
        *,
        batch_size: int = 32,
        threads: int = 0,
        max_windows: int = MAX_WINDOWS_PER_DOCUMENT,
        document_word_pieces: int = MAX_WINDOW_WORD_PIECES,
        cache_dir: Path | None = None,
    ) -> None:
        if batch_size < 1 or threads < 0 or max_windows < 1 or document_word_pieces < 16:
            raise ValueError("batch_size and max_windows must be >= 1, threads >= 0, document_word_pieces >= 16")
        self.spec = spec
        self.files = files
        self.batch_size = batch_size
        self.threads = threads
        self.max_windows = max_windows
        self.document_word_pieces = document_word_pieces
        self.cache_dir = cache_dir  # where the optimised graph is kept between processes; None: nowhere
        self._lock = threading.RLock()
        self._tokenizer: Tokenizer | None = None
        self._session: InferenceSession | None = None
        self._input_types: dict[str, str] = {}
        self._output_name = ""
        self._pad_id = 0
        self._head: list[int] = []  # special tokens before a window's text ([CLS])
        self._tail: list[int] = []  # and after it ([SEP])
        self._prefixes: dict[str, list[int]] = {}  # query/document prefix -> word pieces

    @property
    def model_id(self) -> str:
        return self.spec.id

    @property
    def dims(self) -> int:
        return self.spec.dims

    def __repr__(self) -> str:
        return f"Embedder({self.model_id!r}, dims={self.dims}, batch_size={self.batch_size})"

    # --- public API ------------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, shape ``(len(texts), dims)``; long texts are windowed."""
        import numpy as np

        tokenizer = self._get_tokenizer()
        prefix = self._prefix_ids(self.spec.document_prefix)
        size = min(self._window_size(), self.document_word_pieces) - len(prefix)
        windows: list[list[int]] = []
        owners: list[int] = []
        for doc, encoding in enumerate(tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            ids = encoding.ids
            for start, end in plan_windows(len(ids), size, max_windows=self.max_windows):
                windows.append(self._head + prefix + ids[start:end] + self._tail)
                owners.append(doc)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if windows:
            np.add.at(out, np.asarray(owners), self._embed_windows(windows))
        return _normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        """The L2-normalised float32 vector of one query, shape ``(dims,)``; one window, query prefix."""
        tokenizer = self._get_tokenizer()
        prefix = self._prefix_ids(self.spec.query_prefix)
        ids = tokenizer.encode(text, add_special_tokens=False).ids[: self._window_size() - len(prefix)]
        vector: np.ndarray = self._embed_windows([self._head + prefix + ids + self._tail])[0].copy()
        return vector

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` alone (no special tokens, no prefix). Loads only the tokenizer."""
        return len(self._get_tokenizer().encode(text, add_special_tokens=False).ids)

    def load(self) -> None:
        """Load the tokenizer and the model now, not on first use; ModelUnavailable if they are broken."""
        self._get_tokenizer()
        self._get_session()

    # --- batching: the one place windows reach the model -----------------------------------------

    def _embed_windows(self, windows: list[list[int]]) -> np.ndarray:
        """Unit vectors of token-id windows, batched by similar length so little is padding."""
        import numpy as np

        session = self._get_session()
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        out = np.empty((len(windows), self.dims), dtype=np.float32)
        budget = self.batch_size * BATCH_WORD_PIECES_PER_SLOT
        start = 0
        while start < len(order):
            end = start + 1  # sorted ascending: the window just added is the widest of its batch
            while end < len(order) and end - start < self.batch_size:
                if (end - start + 1) * len(windows[order[end]]) > budget:
                    break
                end += 1
            batch = order[start:end]
            width = len(windows[batch[-1]])
            ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, : len(windows[i])] = windows[i]
                mask[row, : len(windows[i])] = 1
            out[batch] = self._run(session, ids, mask)
            start = end
        return out

    def _run(self, session: InferenceSession, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        values = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(ids),
            "position_ids": np.broadcast_to(np.arange(ids.shape[1], dtype=np.int64), ids.shape),
        }
        feeds = {
            name: values[name].astype(np.int32 if kind == "tensor(int32)" else np.int64, copy=False)
            for name, kind in self._input_types.items()
        }
        result = session.run([self._output_name], feeds)[0]
        if result.ndim == 3:  # token vectors: pool them as the model was trained to
            if self.spec.pooling == "cls":
                result = result[:, 0]
            else:
                weights = mask[:, :, None].astype(np.float32)
                result = (result * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if result.shape[1] != self.dims:
            raise ModelUnavailable(
                f"{self.files.onnx} gives {result.shape[1]}-dimensional vectors, but {self.model_id!r} has "
                f"{self.dims}. The file is not an export of {self.spec.hf_repo}: replace it."
            )
        return _normalise(result.astype(np.float32, copy=False))

    # --- lazy loading ----------------------------------------------------------------------------

    def _window_size(self) -> int:
        return min(self.spec.max_word_pieces, MAX_WINDOW_WORD_PIECES) - len(self._head) - len(self._tail)

    def _prefix_ids(self, prefix: str) -> list[int]:
        if prefix not in self._prefixes:
            ids = self._get_tokenizer().encode(prefix, add_special_tokens=False).ids if prefix else []
            self._prefixes[prefix] = ids
        return self._prefixes[prefix]

    def _get_tokenizer(self) -> Tokenizer:
        if self._tokenizer is not None:
            return self._tokenizer
        with self._lock:
            if self._tokenizer is None:
                try:
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise_if_interrupted(exc)
                    raise ModelUnavailable(f"Embedding needs the tokenizers package: {_INSTALL_HINT}.") from exc
                verify_file(self.files.tokenizer, self.files.tokenizer_sha256)
                try:
                    tokenizer = Tokenizer.from_file(str(self.files.tokenizer))
                except Exception as exc:  # the Rust side raises plain Exception
                    raise ModelUnavailable(f"Cannot read {self.files.tokenizer} ({exc}). {self._refetch()}") from exc
                self._pad_id = int((tokenizer.padding or {}).get("pad_id", 0))
                # Files often carry the training-time padding and truncation; windows are cut here.
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._head, self._tail = _special_tokens(tokenizer)
                self._tokenizer = tokenizer
        return self._tokenizer

    def _get_session(self) -> InferenceSession:
        if self._session is not None:
            return self._session
        with self._lock:
            if self._session is None:
                self._get_tokenizer()
                self._session = self._open_session()
        return self._session

    def _open_session(self) -> InferenceSession:
        try:
            import numpy  # noqa: F401  (fail here, with the install hint, rather than mid-batch)
            import onnxruntime as ort
        except ImportError as exc:
            raise_if_interrupted(exc)
            raise ModelUnavailable(f"Embedding needs onnxruntime and numpy: {_INSTALL_HINT}.") from exc
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.intra_op_num_threads = self.threads  # 0: one per physical core
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: the optimiser's notes are not the user's business
        # Idle worker threads sleep instead of spinning, so two ingest processes on two cores do not
        # burn each other's time between batches.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = self._open_optimized(ort, options)
        if session is None:
            verify_file(self.files.onnx, self.files.onnx_sha256)
            session = self._optimize_and_cache(ort, options)
        known = {"input_ids", "attention_mask", "token_type_ids", "position_ids"}
        self._input_types = {i.name: i.type for i in session.get_inputs()}
        unknown = sorted(set(self._input_types) - known)
        if unknown or "input_ids" not in self._input_types:
            raise ModelUnavailable(
                f"{self.files.onnx} expects inputs {sorted(self._input_types)}; Causantic feeds "
                f"input_ids, attention_mask, token_type_ids and position_ids. {self._refetch()}"
            )
        outputs = [o.name for o in session.get_outputs()]
        preferred = [name for name in ("sentence_embedding", "last_hidden_state") if name in outputs]
        self._output_name = (preferred or outputs)[0]
        return session

    def _optimize_and_cache(self, ort: Any, options: Any) -> InferenceSession:
        """A session on the shipped graph, optimised now; the optimised graph is kept for the next
        process where it can be (not in a read-only home; on a full disk the model loads without it)."""
        cached = self._optimized_path(ort.__version__)
        partial = None
        if cached is not None:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                _remove_stale_partials(cached)
                # Optimising the graph takes ~0.5 s of each cold start; its result is kept for the next.
                partial = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
                options.optimized_model_filepath = str(partial)
            except OSError:  # a read-only home: no cache, only slower starts
                partial = None
        try:
            session = self._load_shipped(ort, options)
        except ModelUnavailable:
            if partial is None:
                raise
            # Writing the optimised copy failed, not the model (a full disk: onnxruntime says "Protobuf
            # serialization failed", and the user was told to reinstall): load it without keeping a
            # copy, and leave no half-written one to fill the disk further.
            with contextlib.suppress(OSError):
                partial.unlink()
            options.optimized_model_filepath = ""
            return self._load_shipped(ort, options)
        if cached is not None and partial is not None:
            try:
                partial.chmod(0o600)
                os.replace(partial, cached)
            except OSError:
                with contextlib.suppress(OSError):
                    partial.unlink()
        return session

    def _load_shipped(self, ort: Any, options: Any) -> InferenceSession:
        try:
            return ort.InferenceSession(str(self.files.onnx), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph/... types
            raise ModelUnavailable(f"Cannot load {self.files.onnx} ({exc}). {self._refetch()}") from exc

    def _optimized_path(self, runtime_version: str) -> Path | None:
        """Where this model's graph, optimised by this onnxruntime on this machine, is cached."""
        if self.cache_dir is None:
            return None
        try:
            stat = self.files.onnx.stat()
        except OSError:
            return None
        key = (self.files.onnx_sha256 or f"{stat.st_size}-{stat.st_mtime_ns}")[:16]
        return self.cache_dir / f"{self.spec.id}-{key}-ort{runtime_version}.onnx"

    def _open_optimized(self, ort: Any, options: Any) -> InferenceSession | None:
        """A session on the cached optimised graph (no optimisation pass, no hash check: the cache
        name carries the verified file's hash); None when there is none or it does not load."""
        cached = self._optimized_path(ort.__version__)
        if cached is None or not cached.is_file():
            return None
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return ort.InferenceSession(str(cached), options, providers=["CPUExecutionProvider"])
        except Exception:  # a damaged cache file is rebuilt from the shipped model
            with contextlib.suppress(OSError):
                cached.unlink()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            return None

    def _refetch(self) -> str:
        if self.spec.bundled:
            return "Reinstall Causantic (`pip install --force-reinstall causantic`)."
        return f"Download it again: `hf download {self.spec.hf_repo} onnx/model.onnx tokenizer.json`."


PARTIAL_STALE_S = 600  # a half-written optimised graph this old was left by a process killed writing it


def _remove_stale_partials(cached: Path) -> None:
    """Remove the half-written copies of ``cached`` that killed processes left (~20 MB each): a
    copy is written in about half a second, so one untouched for minutes belongs to nobody."""
    now = time.time()
    for partial in cached.parent.glob(f"{cached.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if now - partial.stat().st_mtime > PARTIAL_STALE_S:
                partial.unlink()


@functools.cache
def load_embedder(
    model_id: str = DEFAULT_MODEL,
    *,
    batch_size: int = 32,
    threads: int = 0,
    max_windows: int = MAX_WINDOWS_PER_DOCUMENT,
    document_word_pieces: int = MAX_WINDOW_WORD_PIECES,
    cache_dir: Path | None = None,
) -> Embedder:
    """The process-wide embedder for a model. Finding its files is immediate and raises
    ModelUnavailable when they are absent; the model itself loads on first use."""
    spec = get_spec(model_id)
    return Embedder(
        spec,
        locate(spec),
        batch_size=batch_size,
        threads=threads,
        max_windows=max_windows,
        document_word_pieces=document_word_pieces,
        cache_dir=cache_dir,
    )


def plan_windows(
    n: int, size: int, *, overlap: int = WINDOW_OVERLAP, max_windows: int = MAX_WINDOWS_PER_DOCUMENT
) -> list[tuple[int, int]]:
    """``(start, end)`` ranges over ``n`` word pieces: windows of equal length ``<= size``, as few as
    cover the text with ``overlap`` shared pieces, at most ``max_windows``, spread from start to end."""
    if n <= size:
        return [(0, n)]
    overlap = min(overlap, size // 2)
    count = min(max_windows, math.ceil((n - overlap) / (size - overlap)))
    if count <= 1:
        return [(0, size)]
    length = min(size, math.ceil((n + (count - 1) * overlap) / count))
    return [(s, s + length) for s in (round(i * (n - length) / (count - 1)) for i in range(count))]


def _special_tokens(tokenizer: Tokenizer) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a text ([CLS] / [SEP], <s> / </s>, ...)."""
    plain = tokenizer.encode("hello", add_special_tokens=False).ids
    full = tokenizer.encode("hello", add_special_tokens=True).ids
    for i in range(len(full) - len(plain) + 1):
        if full[i : i + len(plain)] == plain:
            return full[:i], full[i + len(plain) :]
    return [], []


def _normalise(vectors: Any) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return unit
