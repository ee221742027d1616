"""Configuration: every tunable in one place, with documented defaults.

Sources, lowest priority first (the last one wins, key by key):

1. the defaults below;
2. ``~/.causantic/config.json`` (or ``$CAUSANTIC_HOME/config.json``);
3. ``./causantic.config.json`` in the working directory;
4. ``CAUSANTIC_<SECTION>_<KEY>`` environment variables, e.g. ``CAUSANTIC_RETRIEVAL_MMR_LAMBDA=0.5``;
   one set to nothing (``CAUSANTIC_RETRIEVAL_MMR_LAMBDA=``, as a shell line or a CI file leaves it)
   counts as unset.

Keys are camelCase in files (``retrieval.mmrLambda``) as in the design documents. Values are
validated by pydantic; an invalid value raises :class:`ConfigError` naming the key and its source.
Only composition roots (``causantic.services``) call :func:`load_config`; everything else is handed
the section it needs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from causantic.errors import ConfigError
from causantic.errors import ConfigWarning as ConfigWarning

# Re-exported: part of the configuration, kept in light modules so that the store and the read
# commands use them without loading pydantic.
from causantic.home import causantic_home as causantic_home
from causantic.home import db_path as db_path
from causantic.home import memory_missing as memory_missing
from causantic.home import project_config_file
from causantic.home import vector_path as vector_path
from causantic.sources import SOURCE_NAMES as SOURCE_NAMES
from causantic.sources import SOURCES as SOURCES
from causantic.sources import Source as Source


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class StorageConfig(_Section):
    db_path: str | None = Field(None, description="SQLite file; default <home>/memory.db.")
    vector_path: str | None = Field(None, description="Folder of the derived ANN index files; default <home>/vectors.")
    busy_timeout_ms: int = Field(30_000, ge=0, description="How long a writer waits for another's lock.")
    idle_checkpoint_seconds: float = Field(
        10.0,
        ge=0,
        description="How often an MCP server or the dashboard looks whether memory's write-ahead log has stopped "
        "changing and, if so, empties it (a reader on an older snapshot can keep an ingest's log); 0: never.",
    )
    backend: Literal["sqlite", "postgres"] = Field(
        "sqlite", description="Where memory lives: the local SQLite file, or a team's PostgreSQL (postgresUrl)."
    )
    # A secret: pydantic masks it in every dump and repr, so `config show` and errors never print it.
    postgres_url: SecretStr | None = Field(
        None, description="libpq URL of the team database (backend postgres); never printed."
    )


class TeamConfig(_Section):
    user: str | None = Field(None, description="Name on your rows in team memory; default your login name.")
    # Nothing leaves the machine unless its owner names it: the safe default is no project at all.
    share_projects: tuple[str, ...] | Literal["all"] = Field(
        (),
        description=(
            "Projects (names or paths) whose sessions go to team memory (storage.backend postgres), or "
            '"all"; the others stay in the local SQLite file, and search answers from both. '
            'Environment: a JSON list, "all", or names separated by commas.'
        ),
    )

    connect_timeout_seconds: int = Field(
        3,
        ge=2,
        le=600,
        description=(
            "Seconds to wait for the team database before answering from local memory alone (libpq's "
            "connect_timeout; at least 2, as libpq rounds up). A connect_timeout in storage.postgresUrl wins."
        ),
    )

    @field_validator("share_projects", mode="before")
    @classmethod
    def _names_from_text(cls, value: Any) -> Any:
        """``CAUSANTIC_TEAM_SHARE_PROJECTS=api,web`` (not JSON) names two projects."""
        if isinstance(value, str) and value.strip() != "all":
            return tuple(name.strip() for name in value.split(",") if name.strip())
        return value.strip() if isinstance(value, str) else value


class ChunkingConfig(_Section):
    max_tokens: int = Field(
        400,
        ge=64,
        le=8192,
        description=(
            "Largest chunk, in approximate tokens (characters / 3.5). 400 keeps a chunk within about "
            "two windows of the default embedding model, so no text is invisible to vector search."
        ),
    )
    tool_result_max_chars: int = Field(600, ge=0, description="Tool results longer than this are truncated.")
    tool_input_max_chars: int = Field(200, ge=0, description="Rendered tool-call summary length cap.")
    long_line_chars: int = Field(
        20_000,
        ge=1000,
        description=(
            "A single line longer than this (a pasted bundle, base64) is kept whole for keyword "
            "search, but its chunks are embedded as a short summary instead of slice by slice."
        ),
    )


class GraphConfig(_Section):
    time_gap_minutes: float = Field(
        30.0, ge=0, description="No inter-turn edge when the gap between turns exceeds this (seed 001)."
    )
    topic_shift_gating: bool = Field(True, description="No inter-turn edge into a turn that opens a new topic.")
    topic_shift_patterns: tuple[str, ...] = Field(
        (
            r"actually,? (let'?s|can we|could we)",
            r"(new|different|another) (question|topic|issue)",
            r"switching (to|gears)",
            r"(on|about) a (different|separate) (note|topic)",
            r"(ok|okay),? (so|now) ",
            r"moving on",
            r"forget (about )?(that|this)",
            r"let'?s (change|switch|move) (to|on|topics?)",
            r"(unrelated|separate) (question|topic|issue)",
            r"(btw|by the way)\b",
        ),
        description="Case-insensitive regexes matched at the start of a user prompt.",
    )


class RedactionConfig(_Section):
    enabled: bool = Field(True, description="Redact secrets before chunk text is stored or indexed.")
    extra_patterns: tuple[str, ...] = Field((), description="More regexes whose matches are redacted (as `custom`).")
    custom_patterns: dict[str, str] = Field(
        {}, description='Named regexes to redact: {"acme-id": "ACME-\\\\d{6}"} gives [REDACTED:acme-id].'
    )
    disabled_kinds: tuple[str, ...] = Field(
        (), description='Built-in kinds not to redact, e.g. ["high-entropy-secret"]; `secret` is the assignment rule.'
    )
    min_entropy: float = Field(
        3.5,
        ge=0,
        le=8,
        description=(
            "Bits per character a value near 'secret', 'key', 'token' or 'password' needs (with upper "
            "case, lower case and digits) to be redacted as a high-entropy secret. Measured by "
            "benchmarks/redaction.py."
        ),
    )


class EmbeddingConfig(_Section):
    model: str = Field("all-minilm-l6-v2", description="Model id from the registry (`causantic models`).")
    batch_size: int = Field(
        1,
        ge=1,
        le=1024,
        description=(
            "Model windows per inference batch. 1 makes a text's vector depend on that text alone "
            "(the int8 model quantises activations per batch) and is no slower here."
        ),
    )
    eager: bool = Field(True, description="Embed during ingest; false defers to `causantic embed`.")
    threads: int = Field(0, ge=0, description="Inference threads; 0 lets the runtime choose.")
    document_word_pieces: int = Field(
        128,
        ge=16,
        le=1024,
        description=(
            "Word pieces of a chunk's embedding text the model reads (its start; queries keep the model's "
            "full window). Measured on real chunks: 128 embeds 4x as many chunks per CPU-second as "
            "today's two windows of 256, with coding R@5 and LoCoMo recall held (docs/architecture.md)."
        ),
    )
    max_windows: int = Field(
        1,
        ge=1,
        le=8,
        description="Windows of documentWordPieces a long chunk is embedded as (their vectors are averaged).",
    )
    tool_result_chars: int = Field(
        200,
        ge=0,
        description=(
            "Characters of each tool result that reach the embedding model (the whole stored text stays "
            "in keyword search). Repeated lines and lines without letters are left out too."
        ),
    )


class RetrievalConfig(_Section):
    primary: Literal["hybrid", "keyword", "vector"] = Field("hybrid", description="Candidate generation.")
    fusion: Literal["convex", "rrf", "blend"] = Field(
        "convex",
        description=(
            "How vector and keyword candidates combine. convex: each list's scores divided by its best, "
            "weighted by vectorWeight and keywordWeight; rrf: Reciprocal Rank Fusion (the seeds' choice), "
            "by rank alone; blend: fusionBlend times convex plus the rest times RRF scaled to 0-1. On "
            "LoCoMo convex recalled more at every turn budget (benchmarks/locomo.py); on coding history "
            "RRF (k 10, equal weights) ranked better (MRR 0.868 against 0.791) but lost 7 points of LoCoMo "
            "turn recall at 5 turns (benchmarks/coding.py, variants rrf*)."
        ),
    )
    fusion_blend: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "Share of convex fusion in fusion blend (the rest is RRF with rrfK, scaled to 0-1). Blends "
            "raised coding MRR (0.7: +0.004 to +0.027) but lost LoCoMo recall at 5 and 10 turns."
        ),
    )
    rrf_k: int = Field(
        5,
        ge=1,
        description=(
            "Reciprocal Rank Fusion constant (fusion rrf). The seeds used 60; on LoCoMo 5 ranks better at "
            "every budget, because a small k lets a top hit of either list count."
        ),
    )
    vector_weight: float = Field(
        0.6,
        ge=0,
        description=(
            "Weight of the vector list in the fusion (BM25 is the stronger signal with MiniLM). 0.6 with "
            "vectorSpread; 0.5 to 0.7 scored alike (benchmarks/coding.py and locomo.py, spread_vw*). RRF "
            "scored best at 0.4."
        ),
    )
    vector_spread: bool = Field(
        True,
        description=(
            "Convex fusion counts a cosine as its share of the way from the vector list's weakest "
            "candidate to its best (min-max), not as a share of its best: MiniLM's cosines crowd into a "
            "narrow band, so as shares of the best the list's order barely counted beside BM25's and a "
            "clear vector winner sank under keyword hits. On: coding R@5 +3.7 points on the project and "
            "with distractors, LoCoMo turn recall +0.6 / +1.6 / -0.1 / -0.3 at 5 / 10 / 25 / 50 turns "
            "(paired bootstrap: only 10 turns clear of zero). Spreading BM25 too changed nothing."
        ),
    )
    keyword_weight: float = Field(1.0, ge=0, description="Weight of the BM25 list in the fusion.")
    fusion_keep_top: int = Field(
        0,
        ge=0,
        description=(
            "Each list's top N hits rank no lower than just below fused hit N+1, so a list the other "
            "disagrees with cannot bury its best hits. Off (0): on LoCoMo keep1 and keep2 lost 1.6 and 3.2 "
            "points of turn recall at 5 turns, and the coding set did not move (variants keep1-keep3)."
        ),
    )
    mention_penalty: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "Demotes a chunk by this factor times the share of its match to the query found only in the "
            "output of listing tools (shell, search, fetch: a git log, a changelog diff, a PR list), not in "
            "the prompt, the agent's words or its tool calls; measured for every fused candidate after a "
            "substring test. Chat has no tool output and is unaffected (LoCoMo unchanged). On the "
            "coding set 0.5 moved one query up with distractors and none down (benchmarks/coding.py, "
            "mention*)."
        ),
    )
    session_evidence: float = Field(
        0.2,
        ge=0,
        description=(
            "Adds this factor times the scores of up to sessionEvidenceChunks other candidates of the "
            "same session to a chunk's score: several good chunks of one session are stronger evidence "
            "than one. 0.2 with one other chunk moved 1 coding query up on the project and 3 with "
            "distractors, none down, and raised LoCoMo turn recall at every budget (+2.0 to +2.2 at "
            "10-50 turns); counting two other chunks moved a coding top hit to second (variants session*)."
        ),
    )
    session_context: float = Field(
        0.25,
        ge=0,
        description=(
            "Multiplies a chunk's score by 1 + this factor times the share of the query found in its "
            "session's opening prompt (the task the session was about), context a chunk deep in a long "
            "session lacks. 0.25 raised coding MRR and LoCoMo turn recall; 0.5 and 1.0 cost LoCoMo recall "
            "at 10 turns (benchmarks/coding.py and locomo.py, context*)."
        ),
    )
    session_evidence_chunks: int = Field(
        1, ge=1, description="Most other chunks of a session counted by sessionEvidence."
    )
    work_evidence: float = Field(
        0.1,
        ge=0,
        description=(
            "Multiplies a chunk's score by 1 + this factor when the chunk calls an editing tool "
            "(workTools: the session changed files there, not only talked about them). 0.1: the mined "
            "commits' piece of work +9 -1 queries (p = 0.02, MRR +0.034), the coding dev set +0 -1 "
            "(project) and +2 -0 (distractors); 0.15-0.5 gained more on the mined set but moved dev "
            "queries down (-2 to -3 with distractors). Chat has no tool calls: LoCoMo unchanged. "
            "benchmarks/coding.py and locomo.py, variants work*; docs/measurements.md. 0: off."
        ),
    )
    work_tools: tuple[str, ...] = Field(
        (
            *("Edit", "MultiEdit", "Write", "NotebookEdit"),  # Claude Code, Cursor's Write
            *("apply_patch", "write_file", "replace"),  # Codex, Gemini CLI
            *("Create", "ApplyPatch", "create", "edit", "write"),  # Factory Droid, Copilot CLI, Pi
        ),
        description=(
            "Tool calls that change files (Claude Code, Cursor, Codex, Gemini CLI, Factory Droid, "
            "Copilot CLI, Pi), for workEvidence."
        ),
    )
    talk_penalty: float = Field(
        0.25,
        ge=0,
        le=1,
        description=(
            "Demotes by this factor a chunk that talks about work rather than asks for it or does it: a "
            "later part of a turn that calls no tool (the agent's report, summary or explanation after "
            "it began working), or a chunk of a retellingAgent (Claude Code's compaction summary). The "
            "request that opened the turn and the chunks that act are the work. 0.25: the mined commits' "
            "piece of work +21 -7 queries (p = 0.01), the coding dev set +1 -0 (project) and +3 -0 "
            "(distractors), LoCoMo unchanged (a chat turn is one chunk). benchmarks/coding.py and "
            "locomo.py, variants talk*; docs/measurements.md. 0: off."
        ),
    )
    retelling_agents: tuple[str, ...] = Field(
        ("compaction",),
        description="Agents whose every chunk retells work done before it, for talkPenalty.",
    )
    here_boost: float = Field(
        0.5,
        ge=0,
        description=(
            "Asked without a project filter from inside a project (the CLI's, the MCP server's or a hook's "
            "working directory), that project's candidates score this share more: its own history leads unless "
            "another project's match is clearly better. 0: the working directory does not count."
        ),
    )
    session_coverage: float = Field(
        0.25,
        ge=0,
        description=(
            "Multiplies a chunk's score by 1 + this factor times the IDF-weighted share of the query that "
            "its session's candidates hold together in their own words (listing output left out): the "
            "session that did the work often names the request's parts in different chunks. 0.25 raised "
            "LoCoMo turn recall +1.2 / +1.8 / +0.3 / +0.2 at 5 / 10 / 25 / 50 turns (95% bootstrap above "
            "zero at 5 and 10) and moved no coding query down (2 up with distractors); 0.5 and 1.0 gained "
            "more on LoCoMo but moved coding queries down (benchmarks/coding.py and locomo.py, sesscov*)."
        ),
    )
    session_words: float = Field(
        0.5,
        ge=0,
        description=(
            "Multiplies a chunk's score by 1 + this factor times a BM25 over sessions (0-1) of its "
            "session: every chunk of it read, not only the candidates, as one document (how many of "
            "its chunks hold each query word in their own words, saturated, against the session's "
            "length), for the sessionWordsDepth best sessions. 0.5: LoCoMo turn recall +0.8 (95% CI "
            "+0.1 to +1.5) / +0.0 / +0.5 / +0.3 at 5 / 10 / 25 / 50 turns, the mined commits' work "
            "level +5 -0 queries (MRR +0.006), the coding dev set +2 -2 (project) and +1 -0 "
            "(distractors), none lower; read from the store's per-session stem counts it costs x1.07 "
            "search time on a 100k-chunk store (x1.05 with a project filter; x1.6 when each chunk "
            "was read). benchmarks/search_paired.py, coding.py, locomo.py (variant no_bm25s: off); "
            "docs/measurements.md. 0: off."
        ),
    )
    session_words_depth: int = Field(
        30, ge=1, description="Distinct sessions, best first, whose every chunk sessionWords reads."
    )
    feedback_weight: float = Field(
        0.4,
        ge=0,
        description=(
            "Query feedback (pseudo-relevance feedback): the query vector is moved towards the mean "
            "vector of the feedbackDepth best candidates, and each candidate's score multiplied by 1 + "
            "this factor times its cosine to the moved query, spread from the weakest candidate (0) to "
            "the best (1). Gives a short or vague request the topic its best hits share; compares only "
            "the candidates' vectors (no second index query). 0.4: coding with distractors R@5 and R@10 "
            "+3.7 points (2 vague queries up, none down), on the project alone one up and one down; "
            "LoCoMo turn recall +0.2/+0.3/+0.2/+0.4 at 5/10/25/50 turns (within noise; no budget lower). "
            "0 turns it off (benchmarks/coding.py and locomo.py, variants feedback*, no_feedback)."
        ),
    )
    feedback_depth: int = Field(5, ge=1, description="Best candidates whose mean vector moves the query (feedback).")
    feedback_pull: float = Field(
        1.0, ge=0, description="How far the query moves towards that mean: q + pull x mean, re-normalised."
    )
    term_feedback_weight: float = Field(
        0.0,
        ge=0,
        description=(
            "Keyword feedback (pseudo-relevance feedback, RM3-style): the termFeedbackTerms most "
            "distinctive words of the termFeedbackDepth best fused candidates (their own words, tool "
            "listings left out, weighed by the store's IDF) make a second BM25 query whose hits join the "
            "keyword list at this weight (the original query's list counts 1). Off (0): at 0.1 with 5 "
            "words it finds the piece of a session that did the work more often on the mined coding set "
            "(+10 -2 queries, p = 0.04; MRR +0.038) but cost LoCoMo turn recall at 5 turns (-0.5; -1.2 to "
            "-1.6, 95% bootstrap below zero, at 0.2-0.5) and one coding dev query; search x1.6-1.8 at "
            "100k chunks (benchmarks/coding.py and locomo.py, variants terms*; docs/measurements.md)."
        ),
    )
    term_feedback_depth: int = Field(3, ge=1, description="Best fused candidates whose words feed termFeedback.")
    term_feedback_terms: int = Field(5, ge=1, description="Words of the termFeedback query.")
    vector_search_limit: int = Field(
        50,
        ge=1,
        description=(
            "Candidates from vector search (at least 3x the hits asked for). Deeper lists found nothing "
            "more: with the benchmarks' 50 hits each list holds 150, and 200 (with keywordSearchLimit) "
            "moved coding dev queries down (+0 -3 on the project) and LoCoMo at 10 turns (-0.5); for a "
            "10-hit search 100 and 200 cost x1.35 and x2.1 at 100k chunks (variants depth100, depth200)."
        ),
    )
    keyword_search_limit: int = Field(50, ge=1, description="Candidates from BM25 search (see vectorSearchLimit).")
    keyword_score_budget: int = Field(
        8000,
        ge=0,
        description=(
            "Chunks BM25 may score per query before the commonest query words stop selecting "
            "candidates (they still count in the score); bounds keyword search time on large "
            "stores. 0 scores every chunk with any query word."
        ),
    )
    mmr_lambda: float = Field(0.7, ge=0, le=1, description="MMR trade-off: 1 = relevance only.")
    mmr_enabled: bool = Field(True, description="Rerank with Maximal Marginal Relevance.")
    dedup_threshold: float = Field(0.97, ge=0, le=1, description="Cosine above which two hits are duplicates.")
    recency_decay_factor: float = Field(0.1, ge=0, le=1, description="Max score boost for brand-new chunks.")
    recency_half_life_hours: float = Field(48.0, gt=0, description="Half-life of the recency boost.")
    default_limit: int = Field(10, ge=1, description="Results returned when the caller names no limit.")
    seed_count: int = Field(5, ge=1, description="Top search hits used as chain-walk seeds.")


class RelevanceConfig(_Section):
    floor: float = Field(
        0.0213,
        ge=0,
        le=1,
        description=(
            "Calibrated relevance (0-1, the chance a hit is the right one) below which a hit is not shown; "
            "an answer with no hit above it says nothing relevant is in memory. 0 shows everything "
            "(benchmarks/relevance_floor.py: 3.7% of off-topic questions answered, 1.8% of real ones lost on the "
            "development stores; see relevance.nearestCosine for a large store). Lower floors (0.015-0.017) lost "
            "fewer real questions there but told gibberish and unrelated turns in a store of a few sessions."
        ),
    )
    intercept: float = Field(
        -4.561, description="Relevance model: intercept (benchmarks/relevance_floor.py --fit, then --rescale)."
    )
    cosine_weight: float = Field(4.83, description="Relevance model: weight of the query-chunk cosine similarity.")
    coverage_weight: float = Field(
        2.31, description="Relevance model: weight of the IDF-weighted share of query words found in the chunk."
    )
    missing_cosine: float = Field(
        0.35, ge=-1, le=1, description="Cosine assumed for a chunk without a vector (keyword-only search)."
    )
    bulk_penalty: float = Field(
        1.189, ge=0, description="Relevance model: penalty per unit share of non-prose payload (SVG, base64, dumps)."
    )
    absent_penalty: float = Field(
        1.932, ge=0, description="Relevance model: penalty per unit share of query words found nowhere in memory."
    )
    absent_min_chunks: int = Field(
        100,
        ge=0,
        description="Words absent from memory count against a hit only in a scope of at least this many chunks.",
    )
    absent_prior: float = Field(
        0.12,
        ge=0,
        le=1,
        description=(
            "Share of absent words assumed in a smaller scope: its mean over relevant hits on the "
            "development sets (benchmarks/relevance_floor.py)."
        ),
    )
    most_counted: int = Field(
        20_000, ge=1, description="Chunks counted per query word when weighing it (bounds the cost on large stores)."
    )
    nearest_cosine: float = Field(
        0.32,
        ge=-1,
        le=1,
        description=(
            "Cosine the query's nearest chunk in memory must reach for a hit to clear the floor, unless the hit "
            "holds relevance.coverageAlone of the query's words, reaches relevance.farFloor, or the query is in "
            "memory's own words (relevance.knownChunks): an off-topic question's best match in a large memory is "
            "far (benchmarks/relevance_floor.py --large, whole Claude Code corpus, 3132 chunks: everyday questions "
            "answered 28% -> 14%, other walks of life 21% -> 7%, coding questions lost 0; dev off-topic answered "
            "3.7% -> 1.1%, real questions lost 1.8% -> 1.9%; coding dev R@5 92.6, MRR 0.810 unchanged). -1 turns "
            "it off."
        ),
    )
    large_nearest_cosine: float = Field(
        0.36,
        ge=-1,
        le=1,
        description=(
            "relevance.nearestCosine in a memory of relevance.largeMinChunks chunks or more: among thousands of "
            "chunks some chunk comes nearer any question. Whole Claude Code corpus as one memory "
            "(benchmarks/relevance_floor.py --large), 0.32 -> 0.36: questions about other stacks answered "
            "53% -> 34% (UNKNOWN_PROJECTS) and 67% -> 39% (OTHER_STACKS), everyday ones 18% -> 14%, LoCoMo's chat "
            "questions 8% -> 3%, coding questions lost 4% either way. In the development stores (a few hundred "
            "chunks) 0.36 cost LoCoMo recall 0.2 points, so smaller memories keep 0.32."
        ),
    )
    large_min_chunks: int = Field(
        1_000, ge=0, description="Chunks from which relevance.largeNearestCosine replaces relevance.nearestCosine."
    )
    coverage_alone: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "IDF-weighted share of the query's words a hit must hold to clear the floor on its own when the "
            "query's nearest chunk is further than relevance.nearestCosine (a question in the chat's own words)."
        ),
    )
    nearest_min_chunks: int = Field(
        100,
        ge=0,
        description=(
            "relevance.nearestCosine applies only in a scope of at least this many chunks: a store of a few "
            "sessions may hold nothing close to a question it still answers in part."
        ),
    )
    far_floor: float = Field(
        0.1,
        ge=0,
        le=1,
        description=(
            "The floor of a hit without that coverage when the query's nearest chunk is further than "
            "relevance.nearestCosine: above the 2-8% that off-topic hits showed on a whole-corpus store."
        ),
    )
    known_chunks: int = Field(
        5,
        ge=1,
        description=(
            "A query whose every word is found in at least this many chunks of the scope is asked in memory's own "
            "vocabulary: when its nearest chunk is further than relevance.nearestCosine, a hit reaching "
            "relevance.knownFloor is still shown. A vague request in a project's words (Will this get properly "
            "redacted?, nearest cosine 0.27-0.28) keeps its session (without it coding dev R@5 92.6 -> 88.9, real "
            "questions lost 1.9% -> 2.1%); an everyday question almost always holds a word memory barely knows "
            "(whole corpus: everyday questions answered 12% without it, 14% with it)."
        ),
    )
    known_floor: float = Field(
        0.05,
        ge=0,
        le=1,
        description=(
            "The floor of a hit of a query in memory's own vocabulary (relevance.knownChunks) when the query's "
            "nearest chunk is further than relevance.nearestCosine: the vague request's right hits read 6-8%, "
            "hits of everyday questions in common words 3-5% (at 0.04 whole-corpus everyday answered 16%)."
        ),
    )


class EpisodesConfig(_Section):
    mode: Literal["episodes", "chain"] = Field(
        "episodes",
        description=(
            "How recall and predict answer. episodes: the turns around the best search hits, merged, each "
            "told in time order (episodes.order says in which order they come); chain: the seeds' single best "
            "chain by median similarity (seed 000)."
        ),
    )
    order: Literal["best", "time"] = Field(
        "best",
        description=(
            "The order an answer tells its episodes in. best: the session of the best-ranked match first (asked "
            "from a project, retrieval.hereBoost, that project's best-ranked session, which then tells the story, "
            "unless its match is weakly related beside a relevant one or far weaker than the best), then the "
            "others as their best matches rank, side sessions (sideShare) last, a session's episodes together "
            "from its best one on; time: all in time order. Each episode tells its chunks in time order either "
            "way. An agent reads an answer from the top and a client may cut it short: on the coding "
            "dev set the first episode was the right session's in 56% of recall's answers in time order and 78% "
            "best first (63% and 85% asked from the project among the whole corpus)."
        ),
    )
    max_tokens: int = Field(2_500, ge=100, description="Token budget of a recall or predict answer.")
    max_episodes: int = Field(
        5, ge=1, description="Most sessions an answer's episodes come from (a session may tell several episodes)."
    )
    context_chunks: int = Field(
        4, ge=0, description="Most chunks an episode adds before its hit (recall) or after it (predict)."
    )
    context_relevance: float = Field(
        0.2,
        ge=0,
        le=1,
        description=(
            "Recall extends an episode backward while a chunk's relevance is at least this share of its "
            "hit's; the story is cut where relevance drops."
        ),
    )
    story_chunks: int = Field(
        4,
        ge=0,
        description=(
            "Context chunks the best episode gets right after each session's best hit, before the budget "
            "goes to further hits: the turns that led to the best match (recall) or followed it (predict). "
            "With 0, a budget that the hits fill tells no story, and recall and predict give the same "
            "answer of matches only. 4 (was 2) once tool results were cut (resultLines): on the coding dev "
            "set recall's answers that tell a story went from 44% to 59%, LoCoMo's evidence unchanged."
        ),
    )
    whole_session_alone: bool = Field(
        True,
        description=(
            "When an answer tells the best match's session whole (every chunk of it: a short session that did "
            "one thing), side sessions (sideShare) are left out and the heading counts them, rather than filling "
            "the rest of the budget: the story is all there. Off: side matches fill what the story leaves. On the "
            "coding dev set the share of recall's tokens spent on the right session went from 62% to 70% "
            "(predict 63% to 71%; dev022's answer from 1,862 tokens to 122), LoCoMo's evidence unchanged."
        ),
    )
    result_lines: int = Field(
        6,
        ge=0,
        description=(
            "Lines of a tool result an episode shows from its head, then up to as many more that hold a word of "
            "the query; each gap says how many lines it left out. On the coding dev set tool results were 39% of "
            "recall's tokens, two thirds of them lines without a query word; cut, the budget tells more of the "
            "story. Errors are shown whole. 0: results shown as stored. Search shows results uncut either way."
        ),
    )
    similar_lines: int = Field(
        3,
        ge=0,
        description=(
            "Lines alike in a tool result (same first and last word and as many words, numbers aside: a test "
            "runner's 'ok  pkg  (cached)' lines) that come this many times or more are told in an episode by the "
            "first of them ('… N more lines like this'). 0: never."
        ),
    )
    whole_results: tuple[str, ...] = Field(
        ("Edit", "MultiEdit", "NotebookEdit", "Task", "Agent"),
        description=(
            "Tools whose results an episode shows uncut (resultLines does not apply): an edit's result is "
            "the edited code, the work itself; a sub-agent's (Task, Agent) is its report, the explanation."
        ),
    )
    story_turn: bool = Field(
        True,
        description=(
            "Recall's best episode tells its match's turn: back to the request that opened it (past where "
            "relevance drops) and on to the turn's end (what was tried, the fix, how it ended), up to "
            "contextChunks each way. Off: only the turns that led to a match while relevance holds. On the "
            "coding dev set recall's answers that tell the right session's story (its request and what "
            "followed, in order) went from 52% to 63% (67% with sideShare), LoCoMo's evidence unchanged."
        ),
    )
    story_opening: int = Field(
        3,
        ge=0,
        description=(
            "When recall's best match lies in a long turn, beyond contextChunks of its request, the best episode "
            "tells the turn's first this many chunks (the request and how the work began), then '… N chunks left "
            "out …' and the match's neighbourhood, rather than no request at all. 0: only the walk back. On the "
            "coding dev set recall's answers that tell the right session's story went from 67% to 78% (59% to 70% "
            "among the whole corpus), LoCoMo's evidence unchanged; 1 and 2 left it at 67%."
        ),
    )
    predict_request: bool = Field(
        True,
        description=(
            "Predict's best episode tells, after what followed its match, how the match's turn began: back to "
            "the request that opened it when the walk back (contextChunks) reaches it, else the turn's first "
            "storyOpening chunks and how many it leaves out; the budget gives what followed the match first. "
            "Told in time order, the episode reads: what the work was for, the match, what came next. Off: "
            "predict tells from the match on. On the coding dev set predict's answers that tell the right "
            "session's story went from 56% to 70% (52% to 70% among the whole corpus, 59% to 81% asked from the "
            "project), the chunks told after the best match unchanged (81 and 80 over 27 answers)."
        ),
    )
    side_share: float = Field(
        0.35,
        ge=0,
        le=1,
        description=(
            "Sessions whose best match reads under this share of the best match's relevance (the best-ranked "
            "hit's session aside) are side matches: their episodes get only the budget the others leave, after "
            "the best session's story and every other match. 0: every session's best match is told first. On "
            "the coding dev set 0.35 raised the share of recall's tokens spent on the right session from 53% to "
            "62% and the answers that tell its story from 52% to 59%, LoCoMo's evidence unchanged (0.5: 65% and "
            "59%, LoCoMo -0.4 points)."
        ),
    )
    elsewhere_tokens: int = Field(
        300,
        ge=0,
        description=(
            "An answer kept to a project (project=) that holds nothing relevant, while other projects do (the "
            "answer names them: 'relevant matches in other projects: …; ask without project to see them'), tells "
            "at most this many tokens of episodes: its best weak match and the chunks nearest it. 0: the note "
            "alone. None of those weak episodes held the answer (benchmarks/cross_project.py: 134 answers; the "
            "coding dev set kept to its project among distractors: 6), and they took a median of 1,460 tokens."
        ),
    )
    weak_anchors: bool = Field(
        False,
        description=(
            "Let weakly related hits (relevance under 10%, as search labels them) of other projects anchor "
            "episodes beside a relevant hit. Off: an answer that holds a relevant match spends none of its budget "
            "on other projects' weak matches, and says how many sessions it left out; weak matches of the "
            "relevant hit's own project, or of an answer whose every match is weak, are still told, each marked."
        ),
    )


class ClusterExpansionConfig(_Section):
    enabled: bool = Field(
        False,
        description=(
            "Add cluster siblings of the top hits as candidates. Off by default: on LoCoMo it lowered "
            "turn recall at every budget (benchmarks/locomo.py, retriever hybrid_cluster_expansion)."
        ),
    )
    max_clusters: int = Field(3, ge=0, description="Clusters expanded per query.")
    max_siblings: int = Field(5, ge=0, description="Siblings added per expanded cluster.")


class ClusteringConfig(_Section):
    min_cluster_size: int = Field(4, ge=2, description="HDBSCAN min_cluster_size (seed 002).")
    min_samples: int = Field(
        2,
        ge=2,
        description=(
            "HDBSCAN min_samples: the neighbours (counting the chunk itself) a chunk needs near it to sit "
            "in a dense part. Lower leaves fewer chunks in no topic: 4 (min_cluster_size, scikit-learn's "
            "default) left 73% of the Claude Code corpus in none, 2 leaves 55% (benchmarks/topics.py)."
        ),
    )
    max_topic_share: float = Field(
        0.2,
        gt=0,
        le=1,
        description=(
            "Largest share of memory's embedded chunks one topic may hold (HDBSCAN max_cluster_size, "
            "never under twice minClusterSize); a larger cluster gives way to the topics it splits into. "
            'Without it one topic of 5 real projects held 97% of their chunks, labelled "app, project, '
            'file" (benchmarks/topics.py). 1 turns the limit off.'
        ),
    )
    join_neighbours: int = Field(
        5,
        ge=0,
        le=16,
        description=(
            "A chunk HDBSCAN leaves in no topic joins the topic that more than half of its this many "
            "nearest chunks belong to (never past maxTopicShare); 0 turns it off. On 5 real projects "
            "it left 35% of their chunks in no topic, not 48% (benchmarks/topics.py)."
        ),
    )
    threshold: float = Field(
        0.09,
        gt=0,
        lt=1,
        description=(
            "Angular distance under which a new chunk between full reclusters always joins its nearest "
            "topic (seed 001). Alone it joined none: only 0.6-3.2% of real topics' own members lie that "
            "close to their centre (joinQuantile reaches further)."
        ),
    )
    join_quantile: float = Field(
        0.6,
        ge=0,
        le=1,
        description=(
            "Between full reclusters a new chunk also joins its nearest topic when it lies no farther from "
            "the topic's centre than this share of the topic's own members do (0.6: the nearest 60%); 0 "
            "leaves it to threshold. Sessions held out of real memories: 0.5-2.0% of their chunks joined "
            "(threshold alone: none; a full recluster puts 6-22% with old topics' members), and no chunk of "
            "a new project (0 of 704; 0.75: 4) (benchmarks/topics.py)."
        ),
    )
    recluster_after_new_chunks: int = Field(
        200, ge=0, description="Batch ingest reclusters when at least this many new vectors arrived."
    )


class TraversalConfig(_Section):
    max_depth: int = Field(50, ge=1, le=10_000, description="Safety cap on chain length (seed 000).")


class TokensConfig(_Section):
    # Claude Code warns of an MCP result over 10,000 tokens and puts one over 50,000 characters in a
    # file, handing the model a path and a preview: 20,000 (about 70,000 characters) did both.
    mcp_max_response: int = Field(
        10_000, ge=500, description="Token budget of one tool answer (search, reconstruct; about 35,000 characters)."
    )
    claude_md_budget: int = Field(500, ge=50, description="Token budget of the session-start briefing.")


class HooksConfig(_Section):
    claude_md: bool = Field(False, description="Maintain a memory block in the project's existing CLAUDE.md.")


class DashboardConfig(_Section):
    # 150 rows made a real memory's topics page (193 topics) 10,000 px long at 380 px, and its 43
    # smallest topics were in no row: the list comes in pages.
    topics_page: int = Field(
        20,
        ge=1,
        le=1_000,
        description="Topics per page of the dashboard's topic list, largest first (the map draws all).",
    )


class SourcesConfig(_Section):
    codex_sessions: str | None = Field(
        None, description="Codex CLI rollouts batch-ingest reads; default $CODEX_HOME/sessions or ~/.codex/sessions."
    )
    gemini_sessions: str | None = Field(
        None, description="Gemini CLI sessions batch-ingest reads; default ~/.gemini/tmp (its chats folders)."
    )
    copilot_sessions: str | None = Field(
        None,
        description="GitHub Copilot CLI sessions batch-ingest reads; default $COPILOT_HOME/session-state or "
        "~/.copilot/session-state.",
    )
    cursor_projects: str | None = Field(
        None, description="Cursor agent transcripts batch-ingest reads; default ~/.cursor/projects."
    )
    droid_sessions: str | None = Field(
        None, description="Factory Droid sessions batch-ingest reads; default ~/.factory/sessions."
    )
    pi_sessions: str | None = Field(
        None,
        description="Pi sessions batch-ingest reads; default $PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions.",
    )


class PromptMemoryConfig(_Section):
    enabled: bool = Field(
        False,
        description=(
            "Add relevant past work to each prompt (the UserPromptSubmit hook); `causantic init "
            "--prompt-memory` registers the hook with this switched on."
        ),
    )
    bar: float = Field(
        0.0623,
        ge=0,
        le=1,
        description=(
            "Relevance (keyword-only scoring, so relevance.missingCosine stands in for the cosine) a past "
            "moment of this project needs to be added to a prompt; stricter than relevance.floor "
            "(benchmarks/prompt_memory.py)."
        ),
    )
    cross_project_bar: float = Field(
        0.0870,
        ge=0,
        le=1,
        description="Relevance a moment of another project needs; 1 keeps prompt memory to the current project.",
    )
    min_terms: int = Field(
        2, ge=1, description='Prompts with fewer meaningful words ("yes", "go on") get nothing added.'
    )
    session_margin: float = Field(
        1.4,
        ge=1,
        description=(
            "Add nothing unless the best past session clearly leads: its best BM25 score at least this "
            "many times any other session's (1 turns the check off; benchmarks/prompt_memory.py)."
        ),
    )
    min_coverage: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "Share of the prompt's words (IDF-weighted) the leading moment must hold; at relevance.coverageAlone "
            "or above, every lead added clears search's nothing-relevant rule too (benchmarks/prompt_memory.py "
            "--large, whole corpus: everyday prompts given context 1 of 600, at 0 23 of 600 even with that rule)."
        ),
    )
    per_session: int = Field(2, ge=1, le=10, description="Most moments of one past session added to one prompt.")
    max_moments: int = Field(3, ge=1, le=10, description="Most past moments added to one prompt.")
    max_tokens: int = Field(300, ge=50, le=2_000, description="Token budget of what one prompt gets added.")
    keep_days: float = Field(
        14.0, gt=0, description="Days the per-session record of what was added (no repeats) is kept."
    )
    warm_minutes: float = Field(
        30.0,
        ge=0,
        description=(
            "Minutes without a prompt after which the hook's warm process (it keeps the hook's imports "
            "loaded and answers over a unix socket in <home>/run) exits; 0: never start it."
        ),
    )


class Config(_Section):
    storage: StorageConfig = StorageConfig()
    team: TeamConfig = TeamConfig()
    chunking: ChunkingConfig = ChunkingConfig()
    graph: GraphConfig = GraphConfig()
    redaction: RedactionConfig = RedactionConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    relevance: RelevanceConfig = RelevanceConfig()
    episodes: EpisodesConfig = EpisodesConfig()
    cluster_expansion: ClusterExpansionConfig = ClusterExpansionConfig()
    clustering: ClusteringConfig = ClusteringConfig()
    traversal: TraversalConfig = TraversalConfig()
    tokens: TokensConfig = TokensConfig()
    hooks: HooksConfig = HooksConfig()
    dashboard: DashboardConfig = DashboardConfig()
    sources: SourcesConfig = SourcesConfig()
    prompt_memory: PromptMemoryConfig = PromptMemoryConfig()

    def with_overrides(self, overrides: dict[str, Any]) -> Config:
        """A copy with dotted-key overrides applied (``{"retrieval.mmrLambda": 0.5}``)."""
        data = self.model_dump(by_alias=True)
        for dotted, value in overrides.items():
            _set_dotted(data, dotted, value, "override")
        return _validate(data, "override")


def shares_project(team: TeamConfig, path: str) -> bool:
    """Whether ``team.shareProjects`` names the project at ``path`` (its canonical path): "all", the
    path itself, or its last folders (``api``, ``acme/api``) as a project's name is."""
    if team.share_projects == "all":
        return True
    parts = Path(path).parts
    for entry in team.share_projects:
        named = Path(entry).expanduser().parts
        if str(Path(entry).expanduser()) == path or (named and tuple(parts[-len(named) :]) == named):
            return True
    return False


def claude_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Claude Code's folder, where its settings and its sessions (``projects/``) are:
    ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (``HOME`` honoured as given)."""
    env = os.environ if environ is None else environ
    custom = env.get("CLAUDE_CONFIG_DIR")
    if custom:
        return Path(custom).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".claude"


def agent_folders(config: Config) -> list[Path]:
    """The folders where Claude Code (honouring ``$CLAUDE_CONFIG_DIR``, as it does) and the other
    agents (:func:`agent_folder_paths`) keep sessions, those holding any: what `batch-ingest` and
    `init` read by default."""
    return [p for p in agent_folder_paths(config) if p.is_dir() and next(p.rglob("*.json*"), None) is not None]


def agent_folder_paths(config: Config) -> tuple[Path, ...]:
    """Where Claude Code, Codex CLI, Gemini CLI, Copilot CLI, Cursor, Factory Droid and Pi keep
    sessions, whether or not they hold any."""
    s, home = config.sources, Path.home()
    pi_home, copilot_home = os.environ.get("PI_CODING_AGENT_DIR"), os.environ.get("COPILOT_HOME")
    return (
        claude_config_dir() / "projects",
        codex_sessions_dir(config),
        gemini_sessions_dir(config),
        Path(s.copilot_sessions).expanduser()
        if s.copilot_sessions
        else (Path(copilot_home).expanduser() if copilot_home else home / ".copilot") / "session-state",
        Path(s.cursor_projects).expanduser() if s.cursor_projects else home / ".cursor" / "projects",
        Path(s.droid_sessions).expanduser() if s.droid_sessions else home / ".factory" / "sessions",
        Path(s.pi_sessions).expanduser()
        if s.pi_sessions
        else (Path(pi_home).expanduser() if pi_home else home / ".pi" / "agent") / "sessions",
    )


def codex_sessions_dir(config: Config, environ: dict[str, str] | None = None) -> Path:
    """Where Codex CLI writes rollouts: ``sources.codexSessions``, else ``$CODEX_HOME/sessions``, else
    ``~/.codex/sessions``."""
    if config.sources.codex_sessions:
        return Path(config.sources.codex_sessions).expanduser()
    env = os.environ if environ is None else environ
    home = env.get("CODEX_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".codex") / "sessions"


def gemini_sessions_dir(config: Config) -> Path:
    """Where Gemini CLI writes sessions: ``sources.geminiSessions``, else ``~/.gemini/tmp``."""
    if config.sources.gemini_sessions:
        return Path(config.sources.gemini_sessions).expanduser()
    return Path.home() / ".gemini" / "tmp"


# Keys of the earlier implementation whose meaning lives on under another name.
RENAMED_KEYS = {
    "recency.decayFactor": "retrieval.recencyDecayFactor",
    "recency.halfLifeHours": "retrieval.recencyHalfLifeHours",
    "hybridSearch.rrfK": "retrieval.rrfK",
    "hybridSearch.vectorWeight": "retrieval.vectorWeight",
    "hybridSearch.keywordWeight": "retrieval.keywordWeight",
    "hybridSearch.keywordSearchLimit": "retrieval.keywordSearchLimit",
}


def load_config(
    cwd: Path | None = None,
    environ: dict[str, str] | None = None,
    sources: dict[str, str] | None = None,
    home: Path | None = None,
) -> Config:
    """Merge defaults, the user file, the project file and the environment; validate the result.

    ``home``: the data directory whose ``config.json`` is the user file (default
    :func:`causantic_home`), so a memory opened on another home reads that home's configuration.

    ``sources``, when given, receives the source that set each key not left at its default. A key
    Causantic does not know is ignored with a :class:`ConfigWarning` naming it (and its new name,
    where it was renamed), so a file written for another version never stops a command.
    """
    env = os.environ if environ is None else environ
    sources = {} if sources is None else sources  # also what names the source of a value that is refused
    data: dict[str, Any] = Config().model_dump(by_alias=True)
    for path in ((home or causantic_home()) / "config.json", project_config_file(cwd)):
        if path is not None and path.is_file():
            _merge(data, _read_json(path), str(path), sources)
    for name, raw in env.items():
        if not name.startswith("CAUSANTIC_") or name == "CAUSANTIC_HOME" or not raw.strip():
            continue
        key = _env_key(name)
        if key is not None:
            _set_known(data, key, _parse_env_value(raw), f"environment variable {name}", sources)
    return _validate(data, "configuration", sources)


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One key a command wrote to the user's config.json: as that file spells it before and after
    (None: not set there); a secret (storage.postgresUrl) shows as asterisks."""

    key: str
    before: Any
    after: Any


SECRET_KEYS = frozenset({"storage.postgresUrl"})
MASK = "**********"  # as pydantic shows a secret


def user_config_file(home: Path | None = None) -> Path:
    """The user's config.json: in ``home`` (default :func:`causantic_home`), read by :func:`load_config`."""
    return (home or causantic_home()) / "config.json"


def write_user_settings(settings: dict[str, Any], home: Path | None = None) -> list[SettingChange]:
    """Set dotted keys in the user's config.json (made, owner-only, when missing), keeping every other
    key as it was; the result is validated as :func:`load_config` would before anything is written.
    Returns the keys whose value changed."""
    from causantic.files import atomic_write, secure_dir

    path = user_config_file(home)
    data = _read_json(path) if path.is_file() else {}
    merged: dict[str, Any] = Config().model_dump(by_alias=True)
    _merge(merged, data, str(path))
    changes: list[SettingChange] = []
    for dotted, value in settings.items():
        _set_dotted(merged, dotted, value, "this command")
        section, _, key = dotted.partition(".")
        before = data.get(section, {}).get(key) if isinstance(data.get(section), dict) else None
        if before != value:
            hide = dotted in SECRET_KEYS
            changes.append(
                SettingChange(dotted, MASK if hide and before else before, MASK if hide and value else value)
            )
        data.setdefault(section, {})[key] = value
    _validate(merged, str(path))
    if changes:
        secure_dir(path.parent)
        atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return changes


def config_keys() -> dict[str, tuple[Any, str]]:
    """Every dotted key with its default and description, for `causantic config show` and the docs."""
    out: dict[str, tuple[Any, str]] = {}
    for section_name, section_field in Config.model_fields.items():
        section_type = section_field.annotation
        assert isinstance(section_type, type) and issubclass(section_type, BaseModel)
        for key, field in section_type.model_fields.items():
            out[f"{to_camel(section_name)}.{to_camel(key)}"] = (field.default, field.description or "")
    return out


@dataclass(frozen=True, slots=True)
class Setting:
    """One key as `causantic config` and the dashboard's settings page show it."""

    key: str
    value: Any
    default: Any
    source: str  # "default", the file that set it, or "environment variable CAUSANTIC_…"
    description: str


def described_settings(config: Config, sources: dict[str, str]) -> list[Setting]:
    """Every key of ``config`` with its default, meaning and where its value came from (``sources``
    as :func:`load_config` filled it)."""
    current = config.model_dump(by_alias=True)
    return [
        Setting(key, current[key.split(".")[0]][key.split(".")[1]], default, sources.get(key, "default"), description)
        for key, (default, description) in config_keys().items()
    ]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}). Fix or delete the file.") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level.")
    return value


def _merge(into: dict[str, Any], new: dict[str, Any], source: str, sources: dict[str, str] | None = None) -> None:
    for section, values in new.items():
        if not isinstance(values, dict):
            if section in into:
                raise ConfigError(f"{source}: section {section!r} must be an object.")
            _warn_unknown(section, source)
            continue
        for key, value in values.items():
            _set_known(into, f"{section}.{key}", value, source, sources)


def _set_known(
    data: dict[str, Any], dotted: str, value: Any, source: str, sources: dict[str, str] | None = None
) -> None:
    """Set a key read from a file or the environment: a renamed key moves to its new name, an
    unknown one is ignored; both with a warning naming the key."""
    if _is_unknown(data, dotted):
        renamed = RENAMED_KEYS.get(dotted)
        if renamed is None:
            _warn_unknown(dotted, source)
            return
        _warn(f"{source}: configuration key {dotted!r} is now {renamed!r}; its value is used under that name.")
        dotted = renamed
    _set_dotted(data, dotted, value, source, sources)


def _is_unknown(data: dict[str, Any], dotted: str) -> bool:
    section, _, key = dotted.partition(".")
    return not isinstance(data.get(section), dict) or key not in data[section]


def _warn_unknown(dotted: str, source: str) -> None:
    import difflib

    close = difflib.get_close_matches(dotted, list(config_keys()), n=1)
    hint = f"did you mean {close[0]!r}?" if close else "`causantic config` lists the keys"
    _warn(f"{source}: ignoring unknown configuration key {dotted!r} ({hint}).")


def _warn(message: str) -> None:
    import warnings

    warnings.warn(message, ConfigWarning, stacklevel=5)


def _set_dotted(
    data: dict[str, Any], dotted: str, value: Any, source: str, sources: dict[str, str] | None = None
) -> None:
    section, _, key = dotted.partition(".")
    if section not in data or not isinstance(data[section], dict):
        raise ConfigError(f"{source}: unknown section {section!r} in key {dotted!r}.")
    if key not in data[section]:
        known = ", ".join(sorted(data[section]))
        raise ConfigError(f"{source}: unknown key {dotted!r}; {section} has: {known}.")
    data[section][key] = value
    if sources is not None:
        sources[dotted] = source


def _env_key(name: str) -> str | None:
    """CAUSANTIC_RETRIEVAL_MMR_LAMBDA -> retrieval.mmrLambda (None when no section matches)."""
    rest = name.removeprefix("CAUSANTIC_").lower()
    for section_name in sorted(Config.model_fields, key=len, reverse=True):
        prefix = section_name + "_"
        if rest.startswith(prefix):
            return f"{to_camel(section_name)}.{to_camel(rest[len(prefix) :])}"
    return None


def _parse_env_value(raw: str) -> Any:
    """Environment values are JSON when they parse as JSON (numbers, booleans, lists), else strings."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _validate(data: dict[str, Any], source: str, sources: dict[str, str] | None = None) -> Config:
    """The configuration, or a ConfigError naming each refused key and, from ``sources``, where its
    value was set (the file or the environment variable to correct)."""
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            where = (sources or {}).get(".".join(str(p) for p in err["loc"][:2]))
            problems.append(f"{key}{f' (set in {where})' if where else ''}: {err['msg']}")
        raise ConfigError(f"Invalid {source}: {'; '.join(problems)}") from exc
