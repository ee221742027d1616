"""LoCoMo evidence retrieval through Causantic's real ingestion and search paths.

Usage::

    PYTHONPATH=src python benchmarks/locomo.py PATH [--json OUT] [--limit-conversations N]
        [--limit-questions N] [--retrievers bm25,hybrid,...] [--set key=value ...] [--details OUT.jsonl]
        [--backend sqlite|postgres]

``PATH`` is any file in LoCoMo's format (a JSON list of samples with ``sample_id``, ``conversation``
and ``qa``; e.g. ``../shared/benchdata/locomo/locomo10-dev.json``). Nothing here depends on which
conversations the file holds.

What happens (``../shared/reference/benchmarks.md`` §1.3–§1.4):

1. Each conversation becomes Claude Code JSONL, one file per ``session_N``, in a temporary folder:
   session id ``"<sample_id>/session_<N>"``, session start parsed from ``session_N_date_time``,
   turn i (0-based) stamped start + i·30 s (LoCoMo has no turn times: **synthetic**), ``speaker_a`` →
   ``user`` and ``speaker_b`` → ``assistant`` with the name kept in the text (``"Caroline: …"``), an
   image's ``blip_caption`` appended as ``" [shares <caption>]"``, and each message's ``uuid``
   ``"<sample_id>:<dia_id>"``, so every chunk's ``message_uuids`` name the dialogue turns it covers.
   Every conversation has its own fake ``cwd`` and its own fresh store (its own ``CAUSANTIC_HOME``).
2. The files are ingested with ``causantic.ingest.service.ingest_paths`` (the product's ingestion:
   chunking, redaction, edges, FTS5 and, when the embedding model is available, vectors).
3. Every question is asked of every retriever; the ranked chunks are flattened into dialogue turns.

Retrievers (``SearchRequest`` fields; everything else is the product default configuration):

- ``bm25`` (``mode="keyword"``), ``vector`` (``mode="vector"``), ``hybrid`` (the default pipeline),
  ``hybrid_no_mmr`` (``mmr=False``), ``hybrid_no_cluster_expansion`` (``expand=False``) and
  ``hybrid_cluster_expansion`` (``expand=True``): ``limit=50`` chunks, a 200,000-token budget, and no
  relevance floor (``floor=0``), so every retriever is scored at the same depth; ``hybrid_floor`` is
  ``hybrid`` with the floor, as a person is shown it (fewer chunks when weak ones are left out).
  Ingestion clusters each conversation as the product does after a batch ingest; whether ``hybrid``
  expands through clusters follows ``clusterExpansion.enabled`` (off by default, as measured here).
- ``recall``: the product's ``recall`` (episodes around the best search hits, ``episodes.mode``
  ``episodes``) with the request the ``recall`` command sends (product defaults); its whole answer is
  scored in the order the product returns it (the best match's episode first), plus
  ``chronological_share`` (answers whose chunks never go back in time), ``episodes_chronological_share``
  (answers each of whose episodes tells its chunks in time order) and ``median_tokens``.
- ``recall_chain``: the same with ``episodes.mode`` ``chain``, the seeds' single best chain by median
  similarity (the baseline the episodes replace), plus ``fallback_rate`` and ``chain_length_median``.
- ``predict``: the product's ``predict`` (what followed the best search hits), scored as ``recall``.
- ``search_same_budget``: the hybrid search given, per question, the token budget that question's
  recall answer used (``limit=200`` so tokens, not the hit count, bind).

Metrics (percentages 0–100 unless noted): turn-level evidence recall at turn budgets 5/10/25/50
(chunks flattened into their dialogue turns in rank order, within a chunk in conversation order; the
first k turns kept; fractional |E∩R|/|E|), session-level recall at 2/5/10 distinct sessions, MRR@10 over
chunks (0–1), and "answer" recall over everything returned with the tokens it cost. Evidence ids are
normalised (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``, bare ``"D"`` dropped); questions left with no
evidence are dropped and counted; evidence ids naming no turn count as misses. Reference: the LoCoMo
paper's DRAGON "Dialog" rows (turn units) and "Summary" rows (session units), Table 3.

Without the embedding model (``causantic.embedding``), only ``bm25`` runs (ingest without vectors);
the other retrievers are reported as skipped with the reason.

``--backend postgres`` runs everything twice in one run, first on SQLite (the baseline) and then with
each conversation's store in a fresh PostgreSQL database (``benchmarks/_postgres.py``: the server in
``CAUSANTIC_BENCH_POSTGRES_URL``, else a local one from the ``pgserver`` wheel), with the same
embedder; it prints both reports and the hybrid turn recall of both at every budget with the
difference (goal: within 2 points). The JSON is the PostgreSQL report, in the same format, with the
SQLite one under ``sqlite_baseline`` and the differences under ``backend_gap``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for _folder in (REPO / "src", REPO / "benchmarks"):  # the package, and the shared variants when imported as a module
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _variants import VARIANTS  # noqa: E402

# --- constants -----------------------------------------------------------------------------------

TURN_BUDGETS = (5, 10, 25, 50)
SESSION_BUDGETS = (2, 5, 10)
MRR_K = 10
TURN_SECONDS = 30
SEARCH_LIMIT = 50  # chunks per question for the ranked retrievers: ≥ 50 turns, since a chunk holds ≥ 1
SEARCH_MAX_TOKENS = 200_000
SAME_BUDGET_LIMIT = 200

CATEGORY_NAMES = {4: "single-hop", 1: "multi-hop", 2: "temporal", 3: "open-domain", 5: "adversarial"}
CATEGORY_ORDER = (4, 1, 2, 3, 5)  # the paper's column order
SHORT_NAMES = {"single-hop": "SH", "multi-hop": "MH", "temporal": "Temp", "open-domain": "OD", "adversarial": "Adv"}

RANKED_RETRIEVERS = (
    "bm25",
    "vector",
    "hybrid",
    "hybrid_floor",
    "hybrid_no_mmr",
    "hybrid_no_cluster_expansion",
    "hybrid_cluster_expansion",
)
EPISODIC_RETRIEVERS = ("recall", "recall_chain", "predict", "search_same_budget")
ALL_RETRIEVERS = RANKED_RETRIEVERS + EPISODIC_RETRIEVERS
NEEDS_VECTORS = frozenset(ALL_RETRIEVERS) - {"bm25"}
EXPECTED_MODE = {
    "bm25": "keyword-only",
    "vector": "vector-only",
    "hybrid": "hybrid",
    "hybrid_floor": "hybrid",
    "hybrid_no_mmr": "hybrid",
    "hybrid_no_cluster_expansion": "hybrid",
    "hybrid_cluster_expansion": "hybrid",
    "recall": "hybrid",
    "recall_chain": "hybrid",
    "predict": "hybrid",
    "search_same_budget": "hybrid",
}

# LoCoMo paper (ACL 2024) Table 3, retriever DRAGON: "Dialog" rows (k turns) and "Summary" rows (k sessions).
DRAGON_TURN: dict[str, dict[int, float]] = {
    "overall": {5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7},
    "single-hop": {5: 68.0, 10: 77.7, 25: 87.1, 50: 91.1},
    "multi-hop": {5: 35.4, 10: 46.6, 25: 62.5, 50: 73.0},
    "temporal": {5: 70.4, 10: 77.3, 25: 83.5, 50: 89.6},
    "open-domain": {5: 33.1, 10: 40.8, 25: 52.6, 50: 61.7},
    "adversarial": {5: 43.9, 10: 54.7, 25: 66.3, 50: 72.5},
}
DRAGON_SESSION: dict[str, dict[int, float]] = {
    "overall": {2: 65.9, 5: 72.1, 10: 84.7},
    "single-hop": {2: 63.0, 5: 77.0, 10: 88.7},
    "multi-hop": {2: 33.0, 5: 54.3, 10: 72.7},
    "temporal": {2: 57.7, 5: 72.8, 10: 84.5},
    "open-domain": {2: 31.5, 5: 47.6, 10: 67.3},
    "adversarial": {2: 65.9, 5: 79.1, 10: 88.8},
}
BASELINE_NAME = "DRAGON (LoCoMo paper Table 3: Dialog rows for turns, Summary rows for sessions)"
SYNTHETIC_NOTE = (
    f"Turn times are synthetic: LoCoMo gives one date-time per session; turn i was stamped "
    f"session start + i*{TURN_SECONDS} s."
)


# --- evidence ids ----------------------------------------------------------------------------------

_DIA = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_CANONICAL_DIA = re.compile(r"D(\d+):(\d+)")


def normalize_evidence(raw: Any) -> tuple[list[str], int, int]:
    """Evidence dia_ids in canonical ``D<session>:<turn>`` form, deduplicated, in order.

    Returns (ids, items that needed repair, items dropped). Handles ``"D8:6; D9:17"``, space-joined lists,
    ``"D:11:26"`` → ``D11:26``, ``"D30:05"`` → ``D30:5``; an item with no id in it (a bare ``"D"``) is
    dropped.
    """
    items = raw if isinstance(raw, list) else ([] if raw is None else [raw])
    out: dict[str, None] = {}
    repaired = dropped = 0
    for item in items:
        text = str(item)
        found = [f"D{int(a)}:{int(b)}" for a, b in _DIA.findall(text)]
        if not found:
            dropped += 1
            continue
        if len(found) > 1 or found[0] != text.strip():
            repaired += 1
        for dia in found:
            out.setdefault(dia, None)
    return list(out), repaired, dropped


def canonical_dia(dia_id: Any) -> str | None:
    found = _DIA.findall(str(dia_id))
    return f"D{int(found[0][0])}:{int(found[0][1])}" if len(found) == 1 else None


def dia_session(dia_id: str) -> int | None:
    match = _CANONICAL_DIA.fullmatch(dia_id)
    return int(match.group(1)) if match else None


# --- conversion ----------------------------------------------------------------------------------

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%H:%M on %d %B, %Y",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d",
)


@dataclass(frozen=True, slots=True)
class DialogTurn:
    dia_id: str  # canonical
    session: int
    position: int  # order in the whole conversation
    speaker: str
    role: str  # "user" or "assistant"
    text: str  # the message content as written to the transcript
    uuid: str
    timestamp: datetime


@dataclass(slots=True)
class Session:
    number: int
    session_id: str
    start: datetime
    turns: list[DialogTurn]
    start_was_guessed: bool = False


@dataclass(slots=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[Session]
    turn_by_dia: dict[str, DialogTurn]
    dia_by_uuid: dict[str, str]
    session_by_id: dict[str, int]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


@dataclass(frozen=True, slots=True)
class Question:
    sample_id: str
    index: int
    question: str
    category: str  # paper column name, e.g. "single-hop"
    evidence: tuple[str, ...]  # canonical ids
    unretrievable: tuple[str, ...]  # evidence ids naming no turn of the conversation

    @property
    def evidence_sessions(self) -> frozenset[int]:
        return frozenset(s for e in self.evidence if (s := dia_session(e)) is not None)


@dataclass(slots=True)
class DatasetStats:
    questions_total: int = 0
    dropped_empty_evidence: int = 0
    dropped_by_category: Counter[str] = field(default_factory=Counter)
    repaired_items: int = 0
    dropped_items: int = 0
    unretrievable_ids: list[str] = field(default_factory=list)
    guessed_session_dates: int = 0


def parse_date(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    cleaned = " ".join(text.split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def category_name(code: Any) -> str:
    try:
        number = int(code)
    except (TypeError, ValueError):
        return f"category-{code}"
    return CATEGORY_NAMES.get(number, f"category-{number}")


def parse_conversation(sample: dict[str, Any], stats: DatasetStats | None = None) -> Conversation:
    """A LoCoMo sample's dialogue as sessions of turns with roles, times and message uuids."""
    sample_id = str(sample.get("sample_id") or "sample")
    conv = sample.get("conversation") or {}
    speaker_a = str(conv.get("speaker_a") or "")
    speaker_b = str(conv.get("speaker_b") or "")
    numbers = sorted(
        int(m.group(1)) for key, value in conv.items() if (m := _SESSION_KEY.fullmatch(key)) and isinstance(value, list)
    )
    sessions: list[Session] = []
    turn_by_dia: dict[str, DialogTurn] = {}
    dia_by_uuid: dict[str, str] = {}
    position = 0
    previous_end: datetime | None = None
    for number in numbers:
        start = parse_date(conv.get(f"session_{number}_date_time"))
        guessed = start is None
        if start is None:  # no usable date: a day after the previous session (or a fixed epoch)
            start = (previous_end + timedelta(days=1)) if previous_end else datetime(2000, 1, 1, tzinfo=UTC)
            if stats is not None:
                stats.guessed_session_dates += 1
        session = Session(number, f"{sample_id}/session_{number}", start, [], guessed)
        for i, raw in enumerate(conv[f"session_{number}"]):
            if not isinstance(raw, dict):
                continue
            dia = canonical_dia(raw.get("dia_id")) or f"D{number}:{i + 1}"
            speaker = str(raw.get("speaker") or "")
            text = str(raw.get("text") or "")
            caption = raw.get("blip_caption")
            content = f"{speaker}: {text}" if speaker else text
            if caption:
                content += f" [shares {caption}]"
            uuid = f"{sample_id}:{dia}"
            k = 2
            while uuid in dia_by_uuid:  # a repeated uuid would be dropped by the reader
                uuid, k = f"{sample_id}:{dia}~{k}", k + 1
            turn = DialogTurn(
                dia,
                number,
                position,
                speaker,
                "user" if speaker == speaker_a else "assistant",
                content,
                uuid,
                start + timedelta(seconds=TURN_SECONDS * i),
            )
            position += 1
            session.turns.append(turn)
            turn_by_dia.setdefault(dia, turn)
            dia_by_uuid[uuid] = dia
        if session.turns:
            sessions.append(session)
            previous_end = session.turns[-1].timestamp
    return Conversation(
        sample_id, speaker_a, speaker_b, sessions, turn_by_dia, dia_by_uuid, {s.session_id: s.number for s in sessions}
    )


def parse_questions(sample: dict[str, Any], conv: Conversation, stats: DatasetStats) -> list[Question]:
    out: list[Question] = []
    for index, qa in enumerate(sample.get("qa") or []):
        if not isinstance(qa, dict):
            continue
        stats.questions_total += 1
        evidence, repaired, dropped = normalize_evidence(qa.get("evidence"))
        stats.repaired_items += repaired
        stats.dropped_items += dropped
        category = category_name(qa.get("category"))
        if not evidence:
            stats.dropped_empty_evidence += 1
            stats.dropped_by_category[category] += 1
            continue
        missing = tuple(e for e in evidence if e not in conv.turn_by_dia)
        stats.unretrievable_ids += [f"{conv.sample_id} {e}" for e in missing]
        text = str(qa.get("question") or "")
        out.append(Question(conv.sample_id, index, text, category, tuple(evidence), missing))
    return out


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def session_records(conv: Conversation, session: Session, cwd: str) -> list[dict[str, Any]]:
    """The Claude Code JSONL records of one session."""
    records: list[dict[str, Any]] = []
    parent: str | None = None
    for turn in session.turns:
        record: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session.session_id,
            "version": "locomo-benchmark",
            "type": turn.role,
            "uuid": turn.uuid,
            "timestamp": _iso(turn.timestamp),
        }
        if turn.role == "user":
            record["message"] = {"role": "user", "content": turn.text}
        else:
            record["message"] = {
                "id": f"msg_{turn.uuid}",
                "type": "message",
                "role": "assistant",
                "model": "locomo",
                "content": [{"type": "text", "text": turn.text}],
            }
        records.append(record)
        parent = turn.uuid
    return records


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "x"


def write_sessions(conv: Conversation, folder: Path, cwd: str) -> list[Path]:
    """One ``session_<N>.jsonl`` per session under ``folder``; returns the paths in session order."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for session in conv.sessions:
        path = folder / f"session_{session.number:03d}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for record in session_records(conv, session, cwd):
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths


# --- metrics -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One returned chunk as the metrics see it."""

    dia_ids: tuple[str, ...]  # in conversation order
    sessions: frozenset[int]
    tokens: int = 0


@dataclass(slots=True)
class QuestionScore:
    turn_recall: dict[int, float]
    session_recall: dict[int, float]
    rr10: float
    answer_recall: float
    chunks: int
    turns: int
    tokens: int


def flatten_turns(units: Sequence[Unit]) -> list[str]:
    seen: dict[str, None] = {}
    for unit in units:
        for dia in unit.dia_ids:
            seen.setdefault(dia, None)
    return list(seen)


def turn_recall(units: Sequence[Unit], evidence: frozenset[str], k: int) -> float:
    """|E ∩ first k turns| / |E| with the chunks flattened into turns in rank order."""
    if not evidence:
        raise ValueError("turn recall needs evidence")
    return len(evidence.intersection(flatten_turns(units)[:k])) / len(evidence)


def session_recall(units: Sequence[Unit], evidence_sessions: frozenset[int], k: int) -> float:
    """|E_s ∩ first k distinct sessions| / |E_s|, sessions taken from the chunks in rank order."""
    if not evidence_sessions:
        raise ValueError("session recall needs evidence sessions")
    order: dict[int, None] = {}
    for unit in units:
        for s in sorted(unit.sessions):
            order.setdefault(s, None)
    return len(evidence_sessions.intersection(list(order)[:k])) / len(evidence_sessions)


def reciprocal_rank(units: Sequence[Unit], evidence: frozenset[str], k: int = MRR_K) -> float:
    for rank, unit in enumerate(units[:k], start=1):
        if evidence.intersection(unit.dia_ids):
            return 1.0 / rank
    return 0.0


def score_units(units: Sequence[Unit], question: Question, tokens: int | None = None) -> QuestionScore:
    evidence = frozenset(question.evidence)
    sessions = question.evidence_sessions
    turns = flatten_turns(units)
    return QuestionScore(
        turn_recall={k: turn_recall(units, evidence, k) for k in TURN_BUDGETS},
        session_recall={k: session_recall(units, sessions, k) for k in SESSION_BUDGETS}
        if sessions
        else dict.fromkeys(SESSION_BUDGETS, 0.0),
        rr10=reciprocal_rank(units, evidence, MRR_K),
        answer_recall=len(evidence.intersection(turns)) / len(evidence),
        chunks=len(units),
        turns=len(turns),
        tokens=tokens if tokens is not None else sum(u.tokens for u in units),
    )


def units_of(chunks: Sequence[Any], conv: Conversation) -> list[Unit]:
    """Chunks (anything with ``message_uuids``, ``session_id``, ``content``) as metric units."""
    from causantic.ingest.tokens import approx_tokens
    from causantic.retrieval.search import HEADER_TOKENS

    out = []
    for chunk in chunks:
        dias = {conv.dia_by_uuid[u] for u in chunk.message_uuids if u in conv.dia_by_uuid}
        ordered = tuple(sorted(dias, key=lambda d: conv.turn_by_dia[d].position))
        sessions = {conv.turn_by_dia[d].session for d in ordered}
        if chunk.session_id in conv.session_by_id:
            sessions.add(conv.session_by_id[chunk.session_id])
        out.append(Unit(ordered, frozenset(sessions), approx_tokens(chunk.content) + HEADER_TOKENS))
    return out


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def aggregate(scores: Sequence[QuestionScore]) -> dict[str, Any]:
    """Means over questions; recalls as percentages, MRR@10 as 0–1."""
    return {
        "n": len(scores),
        "turn_recall": {str(k): round(100 * _mean([s.turn_recall[k] for s in scores]), 2) for k in TURN_BUDGETS},
        "session_recall": {
            str(k): round(100 * _mean([s.session_recall[k] for s in scores]), 2) for k in SESSION_BUDGETS
        },
        "mrr10": round(_mean([s.rr10 for s in scores]), 4),
        "answer_recall": round(100 * _mean([s.answer_recall for s in scores]), 2),
        "chunks_mean": round(_mean([s.chunks for s in scores]), 2),
        "turns_mean": round(_mean([s.turns for s in scores]), 2),
        "tokens_mean": round(_mean([s.tokens for s in scores]), 1),
    }


def ordered_categories(names: Sequence[str]) -> list[str]:
    known = [CATEGORY_NAMES[c] for c in CATEGORY_ORDER if CATEGORY_NAMES[c] in names]
    return known + sorted(n for n in set(names) if n not in known)


def summarize(results: Sequence[tuple[Question, QuestionScore]]) -> dict[str, Any]:
    """Overall and per-category aggregates for one retriever."""
    by_cat: dict[str, list[QuestionScore]] = defaultdict(list)
    for question, score in results:
        by_cat[question.category].append(score)
    summary = aggregate([s for _, s in results])
    summary["by_category"] = {name: aggregate(by_cat[name]) for name in ordered_categories(list(by_cat))}
    return summary


# --- running -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


class _QueryCache:
    """Wraps the shared embedder so one question's vector is computed once for all retrievers."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self._queries: dict[str, Any] = {}

    def embed_query(self, text: str) -> Any:
        if text not in self._queries:
            if len(self._queries) > 4096:
                self._queries.clear()
            self._queries[text] = self._embedder.embed_query(text)
        return self._queries[text]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)


@dataclass(slots=True)
class Outcome:
    """One question answered by one retriever."""

    question: Question
    retriever: str
    score: QuestionScore
    mode: str
    seconds: float
    top_dia_ids: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ConversationRun:
    sample_id: str
    sessions: int
    turns: int
    questions: int
    chunks: int
    turns_covered: int
    vectors: int | None
    ingest_seconds: float
    embed_seconds: float
    query_seconds: dict[str, float]
    outcomes: list[Outcome]


class Runner:
    """Holds what is shared across conversations: base configuration and the embedder."""

    def __init__(
        self,
        config: Any,
        retrievers: Sequence[str],
        work_dir: Path,
        *,
        embed: bool,
        log: Callable[[str], None],
        variants: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.database: Callable[[str], tuple[str, bool]] | None = None  # PostgreSQL database per store, or SQLite
        self.retrievers = list(retrievers)
        self.variants = list(variants)
        self.work_dir = work_dir
        self.want_embed = embed and any(r in NEEDS_VECTORS for r in retrievers)
        self.embedder: Any = None
        self.embedding_error: str | None = (
            None if self.want_embed else "--no-embed given" if not embed else "no chosen retriever needs vectors"
        )
        self.log = log

    def active(self) -> list[str]:
        if self.embedder is None and self.embedding_error is not None:
            return [r for r in self.retrievers if r not in NEEDS_VECTORS]
        return list(self.retrievers)

    def _attach_embedder(self, services: Any) -> None:
        """Give these services the shared embedder (loaded on first use); record why when impossible."""
        if not self.want_embed or (self.embedder is None and self.embedding_error is not None):
            return
        try:
            _ = services.vectors
            if self.embedder is None:
                started = time.perf_counter()
                embedder = services.embedder
                embedder.embed_query("warm up")
                self.embedder = _QueryCache(embedder)
                self.log(f"  embedding model {embedder!r} loaded in {time.perf_counter() - started:.1f}s")
            services._embedder = self.embedder  # one model for every conversation
        except Exception as exc:  # the embedding package may not exist yet, or the model may be missing
            self.embedder = None
            self.embedding_error = f"{type(exc).__name__}: {exc}"
            self.log(f"  embedding unavailable ({self.embedding_error}); running keyword-only retrievers")

    def run(self, conv: Conversation, questions: Sequence[Question], ordinal: int = 0) -> ConversationRun:
        """Convert, ingest into a fresh store of its own and ask every question; ``ordinal`` keeps
        the folders of conversations apart even when their ids look alike."""
        from causantic.ingest.service import ingest_paths
        from causantic.services import open_services
        from causantic.store.records import ChunkScope

        name = f"{ordinal:03d}-{safe_name(conv.sample_id)}"
        home = self.work_dir / "homes" / name
        folder = self.work_dir / "transcripts" / name
        write_sessions(conv, folder, cwd=f"/locomo/{name}")
        overrides = {"storage.dbPath": str(home / "memory.db"), "storage.vectorPath": str(home / "vectors")}
        if self.database is not None:
            import _postgres

            overrides |= _postgres.settings(self.database("causantic_locomo")[0])
        config = self.config.with_overrides(overrides)
        # Services, not Memory: the retrievers set search knobs (floor, mmr, expand, variants) Memory keeps fixed.
        with _env("CAUSANTIC_HOME", str(home)), open_services(config) as services:
            self._attach_embedder(services)
            embed = self.embedder is not None
            last = [0.0]

            def on_embed(done: int, total: int) -> None:
                now = time.perf_counter()
                if done == total or now - last[0] > 5:
                    last[0] = now
                    self.log(f"    embedded {done}/{total} chunks")

            started = time.perf_counter()
            # workers=1: planning in this process. Forking worker processes after LanceDB is loaded (from the
            # previous conversation) risks a deadlock (lancedb warns so); serial and parallel planning build
            # the same store (tests/ingest/test_pipeline.py), and parsing takes well under a second here.
            report = ingest_paths(services, [folder], embed=embed, workers=1, on_embed_progress=on_embed)
            total_seconds = time.perf_counter() - started
            if report.errors:
                raise RuntimeError(f"ingest of {conv.sample_id} failed: {report.errors}")
            chunks = list(services.store.chunks_in(ChunkScope()))
            covered = {conv.dia_by_uuid[u] for c in chunks for u in c.message_uuids if u in conv.dia_by_uuid}
            embed_seconds = total_seconds - report.seconds
            embedded = f"; embedded {report.vectors_added} in {embed_seconds:.1f}s" if embed else ""
            self.log(
                f"  ingested {report.sessions} sessions → {len(chunks)} chunks covering "
                f"{len(covered)}/{len(conv.turn_by_dia)} turns in {report.seconds:.1f}s{embedded}"
            )
            retrievers = self.active()
            outcomes, seconds = self._ask(services, conv, questions, retrievers)
        return ConversationRun(
            conv.sample_id,
            len(conv.sessions),
            conv.turn_count,
            len(questions),
            len(chunks),
            len(covered),
            report.vectors_added,
            report.seconds,
            (total_seconds - report.seconds) if embed else 0.0,
            seconds,
            outcomes,
        )

    def _ask(
        self, services: Any, conv: Conversation, questions: Sequence[Question], retrievers: list[str]
    ) -> tuple[list[Outcome], dict[str, float]]:
        from causantic.retrieval.search import SearchRequest

        searcher = services.searcher
        episodes = services.episodes if any(r in EPISODIC_RETRIEVERS for r in retrievers) else None
        seconds: dict[str, float] = defaultdict(float)
        outcomes: list[Outcome] = []
        # Ranking is scored at a fixed depth, so the relevance floor is off (floor 0) except in
        # hybrid_floor, which returns what a person is shown: only hits above the floor.
        unfloored = {"floor": 0.0}
        ranked = {
            "bm25": {"mode": "keyword", **unfloored},
            "vector": {"mode": "vector", **unfloored},
            "hybrid": unfloored,
            "hybrid_floor": {},
            "hybrid_no_mmr": {"mmr": False, **unfloored},
            "hybrid_no_cluster_expansion": {"expand": False, **unfloored},
            "hybrid_cluster_expansion": {"expand": True, **unfloored},
        }
        last_log = time.perf_counter()
        for n, question in enumerate(questions, start=1):
            for name in retrievers:
                if name not in ranked:
                    continue
                started = time.perf_counter()
                result = searcher.search(
                    SearchRequest(question.question, limit=SEARCH_LIMIT, max_tokens=SEARCH_MAX_TOKENS, **ranked[name])
                )
                elapsed = time.perf_counter() - started
                seconds[name] += elapsed
                outcomes.append(
                    self._outcome(
                        question, name, [h.chunk for h in result.hits], conv, result.mode, elapsed, result.tokens
                    )
                )
            if self.variants and self.embedder is not None:
                self._ask_variants(services, question, conv, outcomes, seconds)
            if episodes is not None:
                self._ask_episodic(searcher, episodes, question, conv, retrievers, outcomes, seconds)
            now = time.perf_counter()
            if now - last_log > 10 or n == len(questions):
                last_log = now
                self.log(f"    asked {n}/{len(questions)} questions")
        return outcomes, dict(seconds)

    def _ask_variants(
        self, services: Any, question: Question, conv: Conversation, outcomes: list[Outcome], seconds: dict[str, float]
    ) -> None:
        """The hybrid search under each named variant (``benchmarks/_variants.py``), floor off like
        ``hybrid``; outcomes are named ``variant:<name>``."""
        from causantic.retrieval.search import SearchRequest
        from causantic.services import Services

        for name in self.variants:
            overrides, request = VARIANTS[name]
            searcher = (
                services.searcher
                if not overrides
                else Services(
                    services.config.with_overrides(overrides),
                    services.store,
                    home=services.home,
                    _embedder=services._embedder,
                    _vectors=services._vectors,
                ).searcher
            )
            started = time.perf_counter()
            result = searcher.search(
                SearchRequest(
                    question.question, limit=SEARCH_LIMIT, max_tokens=SEARCH_MAX_TOKENS, **{"floor": 0.0, **request}
                )
            )
            elapsed = time.perf_counter() - started
            seconds[f"variant:{name}"] += elapsed
            outcomes.append(
                self._outcome(
                    question,
                    f"variant:{name}",
                    [h.chunk for h in result.hits],
                    conv,
                    result.mode,
                    elapsed,
                    result.tokens,
                )
            )

    def _ask_episodic(
        self,
        searcher: Any,
        episodes: Any,
        question: Question,
        conv: Conversation,
        retrievers: list[str],
        outcomes: list[Outcome],
        seconds: dict[str, float],
    ) -> None:
        from causantic.retrieval.search import SearchRequest

        recall_tokens = 0
        for name, mode in (("recall", "episodes"), ("recall_chain", "chain"), ("predict", "episodes")):
            if name not in retrievers and not (name == "recall" and "search_same_budget" in retrievers):
                continue
            started = time.perf_counter()
            ask = episodes.predict if name == "predict" else episodes.recall
            answer = ask(SearchRequest(question.question), mode)
            elapsed = time.perf_counter() - started
            chunks = answer.chunks
            times = [c.start_time for c in chunks]
            extra = {
                "chronological": times == sorted(times),
                "episodes_chronological": all(
                    (told := [c.chunk.start_time for c in e.chunks]) == sorted(told) for e in answer.episodes
                ),
                "nothing_relevant": answer.nothing_relevant,
            }
            if name == "recall_chain":
                chain = answer.episodes and len(answer.episodes) == 1 and len(answer.episodes[0].chunks) > 1
                extra |= {
                    "fallback": not chain,
                    "chain_length": len(chunks) if chain else None,
                    "fallback_reason": None if chain else (answer.notes[0] if answer.notes else "none"),
                }
            elif name == "recall":
                recall_tokens = answer.tokens
            if name in retrievers:
                seconds[name] += elapsed
                outcomes.append(
                    self._outcome(question, name, chunks, conv, answer.search.mode, elapsed, answer.tokens, extra)
                )
        if "search_same_budget" in retrievers:
            started = time.perf_counter()
            if recall_tokens > 0:
                same = searcher.search(
                    SearchRequest(question.question, limit=SAME_BUDGET_LIMIT, max_tokens=recall_tokens)
                )
                hits, mode, tokens = [h.chunk for h in same.hits], same.mode, same.tokens
            else:  # the recall answer was empty: an equal budget is an empty answer
                hits, mode, tokens = [], "hybrid", 0
            elapsed = time.perf_counter() - started
            seconds["search_same_budget"] += elapsed
            outcomes.append(
                self._outcome(
                    question, "search_same_budget", hits, conv, mode, elapsed, tokens, {"budget": recall_tokens}
                )
            )

    @staticmethod
    def _outcome(
        question: Question,
        name: str,
        chunks: Sequence[Any],
        conv: Conversation,
        mode: str,
        seconds: float,
        tokens: int,
        extra: dict[str, Any] | None = None,
    ) -> Outcome:
        units = units_of(chunks, conv)
        score = score_units(units, question, tokens)
        top = flatten_turns(units)[: max(TURN_BUDGETS)]
        return Outcome(question, name, score, mode, seconds, top, extra or {})


# --- reporting -----------------------------------------------------------------------------------


def _cells(values: Sequence[float], spec: str) -> str:
    return "".join(f"{v:{spec}}" for v in values)


def _diff(ours: Sequence[float], ref: Sequence[float]) -> list[float]:
    return [a - b for a, b in zip(ours, ref, strict=True)]


def _ratio(ours: Sequence[float], ref: Sequence[float]) -> list[float]:
    return [a / b for a, b in zip(ours, ref, strict=True)]


def render_overall(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """Overall turn and session recall, MRR and answer size, each retriever with its gap to DRAGON."""
    head = (
        f"{'retriever':<20}"
        + "".join(f"{'T@' + str(k):>7}" for k in TURN_BUDGETS)
        + "  |"
        + "".join(f"{'S@' + str(k):>7}" for k in SESSION_BUDGETS)
        + "  |"
        + f"{'MRR@10':>8}{'chunks':>8}{'turns':>7}{'tokens':>8}"
    )
    dragon_t = [DRAGON_TURN["overall"][k] for k in TURN_BUDGETS]
    dragon_s = [DRAGON_SESSION["overall"][k] for k in SESSION_BUDGETS]
    lines = [
        head,
        "-" * len(head),
        f"{'DRAGON (paper)':<20}{_cells(dragon_t, '7.1f')}  |{_cells(dragon_s, '7.1f')}  |{'–':>8}",
    ]
    for name, s in summaries.items():
        t = [s["turn_recall"][str(k)] for k in TURN_BUDGETS]
        ss = [s["session_recall"][str(k)] for k in SESSION_BUDGETS]
        lines += [
            f"{name:<20}{_cells(t, '7.1f')}  |{_cells(ss, '7.1f')}  |{s['mrr10']:8.3f}"
            f"{s['chunks_mean']:8.1f}{s['turns_mean']:7.1f}{s['tokens_mean']:8.0f}",
            f"{'  Δ vs DRAGON':<20}{_cells(_diff(t, dragon_t), '+7.1f')}  |{_cells(_diff(ss, dragon_s), '+7.1f')}  |",
            f"{'  ratio to DRAGON':<20}{_cells(_ratio(t, dragon_t), '7.2f')}  |"
            f"{_cells(_ratio(ss, dragon_s), '7.2f')}  |",
        ]
    return lines


def render_categories(name: str, summary: dict[str, Any]) -> list[str]:
    """One retriever's recall per category: each turn budget as ours (DRAGON Δ)."""
    head = (
        f"{'category':<13}{'n':>5} |"
        + "".join(f"{'T@' + str(k) + ' (DRAGON Δ)':>20}" for k in TURN_BUDGETS)
        + " |"
        + "".join(f"{'S@' + str(k):>6}" for k in SESSION_BUDGETS)
        + f"{'MRR@10':>8}"
    )
    lines = [f"{name}: evidence recall by category (%; ours (DRAGON Δ))", head, "-" * len(head)]
    for cat, s in [*summary["by_category"].items(), ("overall", summary)]:
        ref = DRAGON_TURN.get(cat, {})
        cells = ""
        for k in TURN_BUDGETS:
            value = s["turn_recall"][str(k)]
            r = ref.get(k)
            cells += f"{value:7.1f} ({r:4.1f} {value - r:+5.1f})" if r is not None else f"{value:7.1f}{'':13}"
        sessions = _cells([s["session_recall"][str(k)] for k in SESSION_BUDGETS], "6.1f")
        lines.append(f"{cat:<13}{s['n']:>5} |{cells} |{sessions}{s['mrr10']:8.3f}")
    return lines


def render_side_by_side(summaries: dict[str, dict[str, Any]], k: int) -> list[str]:
    """Turn recall at budget k per category, DRAGON and every retriever in columns."""
    names = list(summaries)
    cats = ordered_categories([c for s in summaries.values() for c in s["by_category"]])
    width = max(8, *(len(n) + 2 for n in names))
    head = f"{'category':<13}{'DRAGON':>8}" + "".join(f"{n:>{width}}" for n in names)
    lines = [f"Turn recall at {k} turns by category (%)", head, "-" * len(head)]
    for cat in [*cats, "overall"]:
        ref = DRAGON_TURN.get(cat, {}).get(k)
        row = f"{cat:<13}" + (f"{ref:8.1f}" if ref is not None else f"{'–':>8}")
        for n in names:
            s = summaries[n] if cat == "overall" else summaries[n]["by_category"].get(cat)
            row += f"{s['turn_recall'][str(k)]:{width}.1f}" if s else f"{'–':>{width}}"
        lines.append(row)
    return lines


def render_episodic(summaries: dict[str, dict[str, Any]], extras: dict[str, Any]) -> list[str]:
    """Answer recall of the episodic path against search at the same token budget."""
    names = [n for n in EPISODIC_RETRIEVERS if n in summaries]
    if not names:
        return []
    cats = ordered_categories([c for n in names for c in summaries[n]["by_category"]])
    head = (
        f"{'retriever':<20}{'answer recall':>14}{'tokens':>8}{'chunks':>8}{'turns':>7}  |"
        + "".join(f"{SHORT_NAMES.get(c, c):>7}" for c in cats)
        + "  |"
        + f"{'T@5':>6}{'T@10':>6}{'MRR@10':>8}"
    )
    lines = [
        "Episodic path: evidence recall of the whole answer (%) and its mean size; "
        "per-category columns are answer recall",
        head,
        "-" * len(head),
    ]
    for name in names:
        s = summaries[name]
        per_cat = "".join(
            f"{s['by_category'][c]['answer_recall']:7.1f}" if c in s["by_category"] else f"{'–':>7}" for c in cats
        )
        lines.append(
            f"{name:<20}{s['answer_recall']:14.1f}{s['tokens_mean']:8.0f}{s['chunks_mean']:8.1f}"
            f"{s['turns_mean']:7.1f}  |{per_cat}  |"
            f"{s['turn_recall']['5']:6.1f}{s['turn_recall']['10']:6.1f}{s['mrr10']:8.3f}"
        )
    if "recall" in summaries and "search_same_budget" in summaries:
        a, b = summaries["recall"]["answer_recall"], summaries["search_same_budget"]["answer_recall"]
        ratio = f" (ratio {a / b:.2f})" if b else ""
        lines.append(f"recall − search_same_budget: {a - b:+.1f} points of answer recall at equal token budgets{ratio}")
    for name in ("recall", "recall_chain", "predict"):
        if name in summaries:
            s = summaries[name]
            lines.append(
                f"{name}: chronological {s['chronological_share']:.1f}% of answers (each episode "
                f"{s['episodes_chronological_share']:.1f}%), median "
                f"{s['median_tokens']:.0f} tokens, nothing relevant for {s['nothing_relevant_share']:.1f}%"
            )
    if "recall_chain" in extras:
        e = extras["recall_chain"]
        median = e["chain_length_median"]
        reasons = ", ".join(f"{k}: {v}" for k, v in e["fallback_reasons"].items()) or "none"
        lines.append(
            f"recall_chain: fell back to search for {e['fallback_rate']:.1f}% of questions ({reasons}); "
            f"median chain length {median if median is not None else '–'} chunks"
        )
    return lines


def build_report(
    path: Path,
    runs: Sequence[ConversationRun],
    stats: DatasetStats,
    runner: Runner,
    wall_seconds: float,
    limits: dict[str, Any],
) -> dict[str, Any]:
    outcomes = [o for run in runs for o in run.outcomes]
    names = [r for r in ALL_RETRIEVERS if any(o.retriever == r for o in outcomes)]
    retrievers: dict[str, Any] = {}
    for name in names:
        mine = [o for o in outcomes if o.retriever == name]
        summary = summarize([(o.question, o.score) for o in mine])
        summary["modes"] = dict(Counter(o.mode for o in mine))
        summary["query_seconds"] = round(sum(o.seconds for o in mine), 2)
        if name in ("recall", "recall_chain", "predict"):
            for key in ("chronological", "episodes_chronological"):
                summary[f"{key}_share"] = (
                    round(100 * sum(1 for o in mine if o.extra.get(key)) / len(mine), 2) if mine else 0.0
                )
            summary["nothing_relevant_share"] = (
                round(100 * sum(1 for o in mine if o.extra.get("nothing_relevant")) / len(mine), 2) if mine else 0.0
            )
            summary["median_tokens"] = statistics.median(o.score.tokens for o in mine) if mine else 0
        if name == "recall_chain":
            fallbacks = [o for o in mine if o.extra.get("fallback")]
            lengths = [o.extra["chain_length"] for o in mine if o.extra.get("chain_length") is not None]
            summary["fallback_rate"] = round(100 * len(fallbacks) / len(mine), 2) if mine else 0.0
            summary["fallback_reasons"] = dict(Counter(o.extra.get("fallback_reason") for o in fallbacks))
            summary["chain_length_median"] = statistics.median(lengths) if lengths else None
        retrievers[name] = summary
    skipped = {
        r: f"needs vectors; embedding unavailable ({runner.embedding_error})"
        for r in runner.retrievers
        if r not in names and r in NEEDS_VECTORS and runner.embedding_error
    }
    n_questions = len({(o.question.sample_id, o.question.index) for o in outcomes})
    return {
        "search_variants": summarize_variants(outcomes, runner.variants),
        "dataset": str(path),
        "dataset_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "n_conversations": len(runs),
        "n_questions": n_questions,
        "n_questions_total": stats.questions_total,
        "dropped_empty_evidence": stats.dropped_empty_evidence,
        "dropped_empty_evidence_by_category": dict(stats.dropped_by_category),
        "evidence": {
            "repaired_items": stats.repaired_items,
            "dropped_items": stats.dropped_items,
            "unretrievable_ids": stats.unretrievable_ids,
        },
        "limits": limits,
        "note": SYNTHETIC_NOTE,
        "retrieval_settings": {
            "ranked": {"limit": SEARCH_LIMIT, "max_tokens": SEARCH_MAX_TOKENS},
            "recall": "SearchRequest(question) with product defaults (episodes.mode episodes)",
            "recall_chain": "SearchRequest(question), episodes.mode chain",
            "predict": "SearchRequest(question) with product defaults, predict",
            "search_same_budget": {"limit": SAME_BUDGET_LIMIT, "max_tokens": "that question's recall tokens"},
        },
        "config": runner.config.model_dump(by_alias=True, mode="json"),
        "embedding": {"used": runner.embedder is not None, "error": runner.embedding_error},
        "baseline": {
            "name": BASELINE_NAME,
            "turn_recall": {c: {str(k): v for k, v in d.items()} for c, d in DRAGON_TURN.items()},
            "session_recall": {c: {str(k): v for k, v in d.items()} for c, d in DRAGON_SESSION.items()},
        },
        "retrievers": retrievers,
        "skipped_retrievers": skipped,
        "conversations": [
            {
                "sample_id": r.sample_id,
                "sessions": r.sessions,
                "turns": r.turns,
                "questions": r.questions,
                "chunks": r.chunks,
                "turns_covered": r.turns_covered,
                "vectors": r.vectors,
                "ingest_seconds": round(r.ingest_seconds, 2),
                "embed_seconds": round(r.embed_seconds, 2),
                "query_seconds": {k: round(v, 2) for k, v in r.query_seconds.items()},
            }
            for r in runs
        ],
        "wall_seconds": round(wall_seconds, 1),
    }


def summarize_variants(outcomes: Sequence[Outcome], variants: Sequence[str]) -> dict[str, Any]:
    """Per variant: turn recall at each budget, MRR@10, and against ``default`` the paired difference
    per budget with a 95% bootstrap interval (questions resampled, 2,000 draws) and a sign test."""
    import numpy as np

    by_name: dict[str, dict[tuple[str, int], QuestionScore]] = defaultdict(dict)
    questions: dict[tuple[str, int], Question] = {}
    for o in outcomes:
        if o.retriever.startswith("variant:"):
            key = (o.question.sample_id, o.question.index)
            by_name[o.retriever.removeprefix("variant:")][key] = o.score
            questions[key] = o.question
    out: dict[str, Any] = {}
    base = by_name.get("default")
    rng = np.random.default_rng(19)
    for name in variants:
        scores = by_name.get(name)
        if not scores:
            continue
        keys = sorted(scores)
        summary = summarize([(questions[k], scores[k]) for k in keys])
        entry: dict[str, Any] = {
            "turn_recall": summary["turn_recall"],
            "session_recall": summary["session_recall"],
            "mrr10": summary["mrr10"],
            "n": summary["n"],
        }
        if base is not None and name != "default":
            versus: dict[str, Any] = {}
            draws = rng.integers(0, len(keys), size=(2000, len(keys)))
            for k in TURN_BUDGETS:
                diff = np.array([scores[q].turn_recall[k] - base[q].turn_recall[k] for q in keys])
                means = diff[draws].mean(axis=1)
                wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
                versus[f"T@{k}"] = {
                    "delta": round(100 * float(diff.mean()), 2),
                    "ci95": [
                        round(100 * float(np.percentile(means, 2.5)), 2),
                        round(100 * float(np.percentile(means, 97.5)), 2),
                    ],
                    "wins": wins,
                    "losses": losses,
                }
            entry["vs_default"] = versus
        out[name] = entry
    return out


def render_variants(variants: dict[str, Any]) -> list[str]:
    head = (
        f"{'variant':<14}"
        + "".join(f"{'T@' + str(k):>7}" for k in TURN_BUDGETS)
        + f"{'MRR@10':>8}"
        + "  Δ vs default per budget [95% bootstrap]"
    )
    lines = ["Search variants (hybrid pipeline, floor off; benchmarks/_variants.py)", head, "-" * len(head)]
    for name, v in variants.items():
        t = [v["turn_recall"][str(k)] for k in TURN_BUDGETS]
        versus = v.get("vs_default")
        diff = (
            "  " + " ".join(f"{d['delta']:+.1f}[{d['ci95'][0]:+.1f},{d['ci95'][1]:+.1f}]" for d in versus.values())
            if versus
            else ""
        )
        lines.append(f"{name:<14}{_cells(t, '7.1f')}{v['mrr10']:8.3f}{diff}")
    return lines


def render_report(report: dict[str, Any]) -> str:
    evidence = report["evidence"]
    missing = evidence["unretrievable_ids"]
    dropped = report["dropped_empty_evidence"]
    lines = [
        "",
        f"LoCoMo evidence retrieval — {report['dataset']}",
        f"{report['n_conversations']} conversation(s), {report['n_questions']} questions scored "
        f"({report['n_questions_total']} in the file; {dropped} dropped for empty evidence"
        + (f": {report['dropped_empty_evidence_by_category']}" if dropped else "")
        + ").",
        f"Evidence ids: {evidence['repaired_items']} malformed item(s) normalised, "
        f"{evidence['dropped_items']} dropped, {len(missing)} name no turn and count as misses"
        + (f" ({', '.join(missing)})." if missing else "."),
        report["note"],
        f"Ranked retrievers get limit {SEARCH_LIMIT} chunks and {SEARCH_MAX_TOKENS:,} tokens.",
        "T@k: evidence recall in the first k dialogue turns; S@k: evidence-session recall in the first k "
        "sessions; MRR@10 over chunks (0-1).",
        f"Reference: {BASELINE_NAME}.",
        "",
    ]
    ranked = {n: s for n, s in report["retrievers"].items() if n in RANKED_RETRIEVERS}
    if ranked:
        lines += ["Overall (%)", *render_overall(ranked), ""]
        for name, summary in ranked.items():
            lines += [*render_categories(name, summary), ""]
        if len(ranked) > 1:
            for k in (10, 50):
                lines += [*render_side_by_side(ranked, k), ""]
    if report.get("search_variants"):
        lines += [*render_variants(report["search_variants"]), ""]
    episodic = {n: s for n, s in report["retrievers"].items() if n in EPISODIC_RETRIEVERS}
    if episodic:
        lines += [*render_episodic(episodic, report["retrievers"]), ""]
        lines += [
            "Episodic retrievers on the ranked metrics (recall's list in the order the product returns it):",
            *render_overall(episodic),
            "",
        ]
    for name, s in report["retrievers"].items():
        expected = EXPECTED_MODE.get(name)
        if expected and set(s["modes"]) != {expected}:
            lines.append(f"WARNING: {name} ran as {s['modes']} (expected {expected}).")
    by_reason: dict[str, list[str]] = defaultdict(list)
    for name, why in report["skipped_retrievers"].items():
        by_reason[why].append(name)
    lines += [f"Skipped {', '.join(names)}: {why}" for why, names in by_reason.items()]
    lines.append("Timings:")
    for c in report["conversations"]:
        lines.append(
            f"  {c['sample_id']}: {c['sessions']} sessions, {c['turns']} turns → {c['chunks']} "
            f"chunks; ingest {c['ingest_seconds']:.1f}s, embed {c['embed_seconds']:.1f}s, "
            f"{c['questions']} questions {sum(c['query_seconds'].values()):.1f}s"
        )
    per_retriever = ", ".join(f"{n} {s['query_seconds']:.1f}s" for n, s in report["retrievers"].items())
    lines.append(f"  query time by retriever: {per_retriever}")
    lines.append(f"  wall time {report['wall_seconds']:.1f}s")
    return "\n".join(lines)


# --- command line --------------------------------------------------------------------------------


def load_samples(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):  # a single sample
        data = [data]
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise SystemExit(f"{path}: not in LoCoMo format (a JSON list of samples with a 'conversation').")
    return data


def _parse_set(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"--set {item!r}: expected key=value, e.g. retrieval.mmrLambda=0.5")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def run_all(
    runner: Runner,
    samples: Sequence[dict[str, Any]],
    limit_questions: int | None,
    stats: DatasetStats,
    log: Callable[[str], None],
    started: float,
) -> list[ConversationRun]:
    """Every conversation through ``runner``, in order."""
    runs: list[ConversationRun] = []
    seen_ids: Counter[str] = Counter()
    for i, sample in enumerate(samples, start=1):
        sample_id = str(sample.get("sample_id") or "sample")
        seen_ids[sample_id] += 1
        if seen_ids[sample_id] > 1:  # keep question keys and reports unambiguous
            renamed = f"{sample_id}#{seen_ids[sample_id]}"
            log(f"  sample_id {sample_id!r} repeats; this one is called {renamed}")
            sample = {**sample, "sample_id": renamed}
        conv = parse_conversation(sample, stats)
        questions = parse_questions(sample, conv, stats)
        if limit_questions is not None:
            questions = questions[:limit_questions]
        log(
            f"[{i}/{len(samples)}] {conv.sample_id}: {len(conv.sessions)} sessions, "
            f"{conv.turn_count} turns, {len(questions)} questions"
        )
        t0 = time.perf_counter()
        runs.append(runner.run(conv, questions, i))
        log(f"  done in {time.perf_counter() - t0:.1f}s (elapsed {time.perf_counter() - started:.0f}s)")
    return runs


def backend_gap(sqlite: dict[str, Any], postgres: dict[str, Any]) -> dict[str, Any]:
    """Per retriever run on both, turn recall at every budget on each backend and the difference."""
    out: dict[str, Any] = {}
    for name, theirs in postgres["retrievers"].items():
        ours = sqlite["retrievers"].get(name)
        if ours is None or "turn_recall" not in theirs:
            continue
        out[name] = {
            k: {
                "sqlite": ours["turn_recall"][k],
                "postgres": theirs["turn_recall"][k],
                "difference": round(theirs["turn_recall"][k] - ours["turn_recall"][k], 2),
            }
            for k in theirs["turn_recall"]
        }
    return out


def render_gap(gap: dict[str, Any]) -> str:
    lines = ["Turn recall, SQLite vs PostgreSQL (points; goal: hybrid within 2 at every budget)"]
    for name, budgets in gap.items():
        cells = ", ".join(
            f"T@{k} {b['sqlite']:.1f} / {b['postgres']:.1f} ({b['difference']:+.1f})" for k, b in budgets.items()
        )
        worst = max(abs(b["difference"]) for b in budgets.values())
        verdict = " — within 2" if worst <= 2 else " — NOT within 2"
        lines.append(f"  {name}: {cells}{verdict if name == 'hybrid' else ''}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--json", type=Path, dest="json_out", help="write the results as JSON here")
    parser.add_argument("--limit-conversations", type=int, help="only the first N conversations")
    parser.add_argument("--limit-questions", type=int, help="only the first N questions of each conversation")
    parser.add_argument(
        "--retrievers",
        default=",".join(ALL_RETRIEVERS),
        help=f"comma-separated subset of {', '.join(ALL_RETRIEVERS)} (default: all)",
    )
    parser.add_argument("--no-embed", action="store_true", help="ingest without vectors (bm25 only)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="configuration override, e.g. retrieval.mmrLambda=0.5 (repeatable)",
    )
    parser.add_argument("--details", type=Path, help="write one JSON line per (question, retriever) here")
    parser.add_argument(
        "--keep", type=Path, help="keep the transcripts and stores in this folder (a later run reuses them)"
    )
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="postgres: run on SQLite and on PostgreSQL + pgvector, and compare (see above)",
    )
    parser.add_argument(
        "--variants", default="", help=f"also run these search variants (with default), from: {', '.join(VARIANTS)}"
    )
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    if variants and "default" not in variants:
        variants.insert(0, "default")
    if set(variants) - set(VARIANTS):
        parser.error(f"unknown variant(s) {sorted(set(variants) - set(VARIANTS))}; known: {', '.join(VARIANTS)}")

    retrievers = [r.strip() for r in args.retrievers.split(",") if r.strip()]
    unknown = [r for r in retrievers if r not in ALL_RETRIEVERS]
    if unknown:
        parser.error(f"unknown retriever(s) {unknown}; known: {', '.join(ALL_RETRIEVERS)}")

    from causantic.config import Config

    config = Config().with_overrides(_parse_set(args.set)) if args.set else Config()
    samples = load_samples(args.path)
    if args.limit_conversations is not None:
        samples = samples[: args.limit_conversations]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    stats = DatasetStats()
    with contextlib.ExitStack() as stack:
        if args.keep:
            work_dir = args.keep
            work_dir.mkdir(parents=True, exist_ok=True)
        else:
            work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="causantic-locomo-")))
        runner = Runner(config, retrievers, work_dir, embed=not args.no_embed, log=log, variants=variants)
        runs = run_all(runner, samples, args.limit_questions, stats, log, started)
        if args.backend == "postgres":
            import _postgres

            sqlite_report = build_report(
                args.path, runs, stats, runner, time.perf_counter() - started, {"backend": "sqlite"}
            )
            log("\nThe same conversations on PostgreSQL + pgvector:")
            runner.database = stack.enter_context(_postgres.databases())
            runner.work_dir = work_dir / "postgres"
            stats = DatasetStats()
            started = time.perf_counter()
            runs = run_all(runner, samples, args.limit_questions, stats, log, started)
    limits = {"conversations": args.limit_conversations, "questions_per_conversation": args.limit_questions}
    report = build_report(args.path, runs, stats, runner, time.perf_counter() - started, limits)
    if args.backend == "postgres":
        report["backend"] = "postgres"
        report["sqlite_baseline"] = sqlite_report
        report["backend_gap"] = backend_gap(sqlite_report, report)
        print("SQLite (baseline):" + render_report(sqlite_report))
        print("PostgreSQL + pgvector:" + render_report(report))
        print(render_gap(report["backend_gap"]))
    else:
        print(render_report(report))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        log(f"wrote {args.json_out}")
    if args.details:
        args.details.parent.mkdir(parents=True, exist_ok=True)
        with args.details.open("w", encoding="utf-8") as f:
            for run in runs:
                for o in run.outcomes:
                    f.write(
                        json.dumps(
                            {
                                "sample_id": o.question.sample_id,
                                "qa_index": o.question.index,
                                "retriever": o.retriever,
                                "category": o.question.category,
                                "question": o.question.question,
                                "evidence": list(o.question.evidence),
                                "mode": o.mode,
                                "turn_recall": {str(k): v for k, v in o.score.turn_recall.items()},
                                "session_recall": {str(k): v for k, v in o.score.session_recall.items()},
                                "rr10": o.score.rr10,
                                "answer_recall": o.score.answer_recall,
                                "tokens": o.score.tokens,
                                "chunks": o.score.chunks,
                                "top_turns": o.top_dia_ids,
                                **o.extra,
                            }
                        )
                        + "\n"
                    )
        log(f"wrote {args.details}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
