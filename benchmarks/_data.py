"""Real transcript text for benchmarks, and synthetic stores made from it.

Nothing here copies corpus files: the transcripts are read where they lie (``../shared/corpus``) and
only derived numbers (embedding matrices) are cached, outside the repository.

- :func:`corpus_text` reads every ``*.jsonl`` transcript: user prompts (injected harness text removed
  with the product's own filter) and *pieces* — paragraphs of user text, assistant text, tool calls
  and tool results, at most :data:`PIECE_MAX_CHARS` characters, each labelled the way the product
  renders a turn (``[Assistant]``, ``[Tool:Bash]``, ``[Result:Read]``), deduplicated, in corpus order.
- :func:`embed_cached` embeds texts with the product's default model, caching the matrix on disk keyed
  by a hash of the model files and the texts. It takes ``load_embedder``'s own defaults (batches of
  32, up to 4 full windows), not the configured ``embedding.*`` (1, one window of 128 word pieces).
- :func:`synthetic_chunks` composes store-sized sets of chunks from a few thousand embedded pieces
  and derives each chunk's vector from its pieces' real vectors (see its docstring for exactly how).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "causantic-bench"

PIECE_MAX_CHARS = 600  # a chunk is at most 1,400 characters (400 approx. tokens): 1-3 pieces
PIECE_MIN_CHARS = 40
CHUNK_MAX_CHARS = 1400  # chunking.maxTokens (400) x 3.5 characters
TOOL_RESULT_MAX_CHARS = 600  # chunking.toolResultMaxChars: the product keeps the head of a result
PROMPT_MIN_CHARS, PROMPT_MAX_CHARS = 15, 400
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")


# --- reading the corpus --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CorpusText:
    prompts: list[str]  # real user prompts, deduplicated, corpus order
    pieces: list[str]  # labelled paragraphs, deduplicated, corpus order
    files: int


def transcript_files(root: Path) -> list[Path]:
    """Every ``*.jsonl`` under ``root``, sorted; exits with a message when there is none."""
    files = sorted(p for p in root.rglob("*.jsonl") if p.is_file())
    if not files:
        raise SystemExit(f"No *.jsonl transcripts under {root}; pass --corpus.")
    return files


def message_records(files: Sequence[Path]) -> Iterator[dict[str, Any]]:
    """The user and assistant records of ``files``, in file order; unparseable lines are skipped."""
    for path in files:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
                    yield record


def corpus_text(root: Path) -> CorpusText:
    from causantic.transcripts._system_text import prompt_text_of

    files = transcript_files(root)
    prompts: dict[str, None] = {}
    pieces: dict[str, None] = {}
    for record in message_records(files):
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        for label, text in _labelled_blocks(message, bool(record.get("isMeta"))):
            if label == "[User]":
                text = prompt_text_of(text)
                if PROMPT_MIN_CHARS <= len(text) <= PROMPT_MAX_CHARS and len(text.split()) >= 3:
                    prompts.setdefault(text, None)
            for piece in _split(text):
                if sum(ch.isalpha() for ch in piece) >= PIECE_MIN_CHARS // 2:
                    sep = "\n" if label in ("[User]", "[Assistant]") else " "
                    pieces.setdefault(f"{label}{sep}{piece}", None)
    return CorpusText(list(prompts), list(pieces), len(files))


def _labelled_blocks(message: dict[str, Any], is_meta: bool) -> Iterator[tuple[str, str]]:
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, str):
        if not is_meta:
            yield ("[User]" if role == "user" else "[Assistant]"), content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and not is_meta and isinstance(block.get("text"), str):
            yield ("[User]" if role == "user" else "[Assistant]"), block["text"]
        elif kind == "tool_use" and isinstance(block.get("input"), dict):
            summary = " ".join(v for v in block["input"].values() if isinstance(v, str))[:200]
            yield f"[Tool:{block.get('name', 'tool')}]", summary
        elif kind == "tool_result":
            yield "[Result:tool]", flatten_content(block.get("content"))[:TOOL_RESULT_MAX_CHARS]


def flatten_content(value: Any) -> str:
    """The text of a message or tool-result content: a string, a block list, or a text block."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(flatten_content(v) for v in value)
    if isinstance(value, dict):
        return flatten_content(value.get("text", ""))
    return ""


def _split(text: str) -> Iterator[str]:
    """Paragraphs packed into pieces of PIECE_MIN_CHARS..PIECE_MAX_CHARS; long ones cut at sentences."""
    current = ""
    for paragraph in _PARAGRAPH.split(text.strip()):
        paragraph = paragraph.strip()
        units = [paragraph] if len(paragraph) <= PIECE_MAX_CHARS else _sentences(paragraph)
        for unit in units:
            if current and len(current) + 2 + len(unit) > PIECE_MAX_CHARS:
                if len(current) >= PIECE_MIN_CHARS:
                    yield current
                current = unit
            else:
                current = f"{current}\n\n{unit}" if current else unit
    if len(current) >= PIECE_MIN_CHARS:
        yield current


def _sentences(paragraph: str) -> list[str]:
    out: list[str] = []
    current = ""
    for sentence in _SENTENCE.split(paragraph):
        while len(sentence) > PIECE_MAX_CHARS:
            out.append(sentence[:PIECE_MAX_CHARS])
            sentence = sentence[PIECE_MAX_CHARS:]
        if current and len(current) + 1 + len(sentence) > PIECE_MAX_CHARS:
            out.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        out.append(current)
    return out


# --- embedding with a cache ----------------------------------------------------------------------


def embed_cached(texts: Sequence[str], cache_dir: Path, *, label: str) -> tuple[Any, bool, float]:
    """(matrix, from_cache, seconds) for ``texts`` embedded with the default model (``load_embedder``'s
    defaults, not the configured ``embedding.*``)."""
    import time

    import numpy as np

    from causantic.embedding import DEFAULT_MODEL, load_embedder

    embedder = load_embedder(DEFAULT_MODEL)
    digest = hashlib.sha256()
    digest.update(f"{embedder.model_id}\0{embedder.files.onnx_sha256}\0".encode())
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    path = cache_dir / f"{label}-{embedder.model_id.replace('/', '_')}-{digest.hexdigest()[:20]}.npy"
    if path.exists():
        matrix = np.load(path)
        if matrix.shape == (len(texts), embedder.dims):
            return matrix, True, 0.0
    started = time.perf_counter()
    matrix = embedder.embed_documents(list(texts))
    seconds = time.perf_counter() - started
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, matrix)
    tmp.replace(path)
    return matrix, False, seconds


# --- synthetic stores ----------------------------------------------------------------------------

PROJECTS = 50
SESSION_CHUNKS = (10, 80)  # chunks per session, uniform
SESSION_NEIGHBOURHOOD = 150  # a session draws its pieces from this many neighbouring corpus pieces
SUBAGENT_SESSION_SHARE = 0.25  # sessions that also have a sub-agent stream
PIECES_PER_CHUNK = ((1, 0.3), (2, 0.5), (3, 0.2))
NOISE_NORM = 0.05  # expected norm of the Gaussian noise added to a derived vector (before normalising)
HISTORY_DAYS = 365
DERIVATION = (
    "every chunk is 1-3 real corpus pieces (30/50/20 %) joined by a blank line, at most 1,400 "
    "characters; a session draws its pieces from a neighbourhood of 150 consecutive pieces of the "
    "embedded sample (so a session stays on its topics); no piece set is used twice, so no two chunks "
    "have the same text. Vector = normalise(sum_i (len_i / sum len) * v_i + e), v_i the product "
    "embedder's vector of piece i, e ~ N(0, (0.05^2/384) I) (|e| ~ 0.05). Sessions of 10-80 chunks, "
    "one turn per chunk a minute or two apart, over 365 days; 50 projects with Zipf-like sizes "
    "(weight 1/rank^0.8); 25 % of sessions add a sub-agent stream of 3-15 chunks."
)


@dataclass(frozen=True, slots=True)
class SyntheticSession:
    project_path: str
    session_id: str
    chunks: tuple[Any, ...]  # ChunkRecord
    vectors: Any  # np.ndarray (len(chunks), dims)


def project_paths() -> list[str]:
    return [f"/home/dev/work/bench-project-{i:02d}" for i in range(PROJECTS)]


def synthetic_sessions(
    n_chunks: int, pieces: Sequence[str], vectors: Any, *, seed: int, now: datetime | None = None
) -> Iterator[SyntheticSession]:
    """Sessions totalling exactly ``n_chunks`` chunks, composed from ``pieces`` and their ``vectors``."""
    import numpy as np

    from causantic.ingest.chunker import chunk_id, content_hash
    from causantic.ingest.tokens import approx_tokens
    from causantic.store.fts import identifier_terms
    from causantic.store.records import ChunkRecord, iso

    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    now = now or datetime.now(UTC)
    dims = vectors.shape[1]
    sigma = NOISE_NORM / np.sqrt(dims)
    paths = project_paths()
    weights = [1 / (rank + 1) ** 0.8 for rank in range(len(paths))]
    lengths = np.array([len(p) for p in pieces], dtype=np.float64)
    used: set[tuple[int, ...]] = set()
    sizes, probs = zip(*PIECES_PER_CHUNK, strict=True)
    made = 0
    while made < n_chunks:
        project = rng.choices(paths, weights)[0]
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        centre = rng.randrange(len(pieces))
        low = max(0, min(centre - SESSION_NEIGHBOURHOOD // 2, len(pieces) - SESSION_NEIGHBOURHOOD))
        high = min(len(pieces), low + SESSION_NEIGHBOURHOOD)
        start = now - timedelta(days=rng.uniform(0, HISTORY_DAYS))
        streams = [("main", None, min(rng.randint(*SESSION_CHUNKS), n_chunks - made))]
        if rng.random() < SUBAGENT_SESSION_SHARE and made + streams[0][2] < n_chunks:
            agent_id = f"a{rng.getrandbits(64):016x}"
            streams.append(
                (
                    rng.choice(["Explore", "general-purpose", "Plan"]),
                    agent_id,
                    min(rng.randint(3, 15), n_chunks - made - streams[0][2]),
                )
            )
        records: list[Any] = []
        rows: list[Any] = []
        for agent, agent_id, count in streams:
            when = start
            for turn in range(count):
                combo = _new_combo(rng, low, high, lengths, sizes, probs, used)
                text = "\n\n".join(pieces[i] for i in combo)
                w = lengths[list(combo)] / lengths[list(combo)].sum()
                vector = (w[:, None] * vectors[list(combo)]).sum(axis=0) + nrng.normal(0, sigma, dims)
                rows.append(vector / np.linalg.norm(vector))
                when += timedelta(seconds=rng.uniform(20, 180))
                anchor = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                records.append(
                    ChunkRecord(
                        id=chunk_id(session_id, agent_id or "main", anchor, 0),
                        session_id=session_id,
                        agent=agent,
                        agent_id=agent_id,
                        team_name=None,
                        turn_index=turn,
                        part=0,
                        start_time=iso(when),
                        end_time=iso(when + timedelta(seconds=rng.uniform(1, 60))),
                        content=text,
                        search_terms=identifier_terms(text),
                        content_hash=content_hash(text),
                        approx_tokens=approx_tokens(text),
                        tool_use_count=text.count("[Tool:"),
                        code_block_count=text.count("```") // 2,
                        has_thinking=rng.random() < 0.3,
                        message_uuids=(anchor,),
                    )
                )
        made += len(records)
        yield SyntheticSession(project, session_id, tuple(records), np.asarray(rows, dtype=np.float32))


def _new_combo(
    rng: random.Random,
    low: int,
    high: int,
    lengths: Any,
    sizes: Sequence[int],
    probs: Sequence[float],
    used: set[tuple[int, ...]],
) -> tuple[int, ...]:
    for attempt in range(1000):
        size = rng.choices(sizes, probs)[0] if attempt < 50 else 3
        pool_low, pool_high = (low, high) if attempt < 200 else (0, len(lengths))
        combo: list[int] = []
        total = 0
        for i in rng.sample(range(pool_low, pool_high), min(size, pool_high - pool_low)):
            if total + lengths[i] + 2 * len(combo) <= CHUNK_MAX_CHARS:
                combo.append(i)
                total += lengths[i]
        key = tuple(sorted(combo))
        if key and key not in used:
            used.add(key)
            return tuple(combo)
    raise RuntimeError("could not find an unused piece combination")
