"""Configuration: every tunable in one place, with documented defaults.

Sources, lowest priority first (the last one wins, key by key):

1. the defaults below;
2. ``~/.causantic/config.json`` (or ``$CAUSANTIC_HOME/config.json``);
3. ``./causantic.config.json`` in the working directory;
4. ``CAUSANTIC_<SECTION>_<KEY>`` environment variables, e.g. ``CAUSANTIC_RETRIEVAL_MMR_LAMBDA=0.5``.

Keys are camelCase in files (``retrieval.mmrLambda``) as in the design documents. Values are
validated by pydantic; an invalid value raises :class:`ConfigError` naming the key and its source.
Only composition roots (``causantic.services``) call :func:`load_config`; everything else is handed
the section it needs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from causantic.errors import ConfigError


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class StorageConfig(_Section):
    db_path: str | None = Field(None, description="SQLite file; default <home>/memory.db.")
    vector_path: str | None = Field(None, description="LanceDB folder; default <home>/vectors.")
    busy_timeout_ms: int = Field(30_000, ge=0, description="How long a writer waits for another's lock.")


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
        20_000, ge=1000,
        description=("A single line longer than this (a pasted bundle, base64) is kept whole for keyword "
                     "search, but its chunks are embedded as a short summary instead of slice by slice."),
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
    cross_session: bool = Field(True, description="Link each project's consecutive sessions.")


class RedactionConfig(_Section):
    enabled: bool = Field(True, description="Redact secrets before chunk text is stored or indexed.")
    extra_patterns: tuple[str, ...] = Field((), description="More regexes whose matches are redacted (as `custom`).")
    custom_patterns: dict[str, str] = Field(
        {}, description="Named regexes to redact: {\"acme-id\": \"ACME-\\\\d{6}\"} gives [REDACTED:acme-id]."
    )
    disabled_kinds: tuple[str, ...] = Field(
        (), description="Built-in kinds not to redact, e.g. [\"high-entropy-secret\"]; `secret` is the assignment rule."
    )
    min_entropy: float = Field(
        3.5, ge=0, le=8,
        description=("Bits per character a value near 'secret', 'key', 'token' or 'password' needs (with upper "
                     "case, lower case and digits) to be redacted as a high-entropy secret. Measured by "
                     "benchmarks/redaction.py."),
    )


class EmbeddingConfig(_Section):
    model: str = Field("all-minilm-l6-v2", description="Model id from the registry (`causantic models`).")
    batch_size: int = Field(
        1, ge=1, le=1024,
        description=("Model windows per inference batch. 1 makes a text's vector depend on that text alone "
                     "(the int8 model quantises activations per batch) and is no slower here."),
    )
    eager: bool = Field(True, description="Embed during ingest; false defers to `causantic embed`.")
    threads: int = Field(0, ge=0, description="Inference threads; 0 lets the runtime choose.")


class RetrievalConfig(_Section):
    primary: Literal["hybrid", "keyword", "vector"] = Field("hybrid", description="Candidate generation.")
    fusion: Literal["convex", "rrf"] = Field(
        "convex",
        description=("How vector and keyword candidates combine. convex: each list's scores divided by its best, "
                     "weighted by vectorWeight and keywordWeight; rrf: Reciprocal Rank Fusion (the seeds' choice), "
                     "by rank alone. On LoCoMo convex recalled more at every turn budget (benchmarks/locomo.py)."),
    )
    rrf_k: int = Field(
        5, ge=1,
        description=("Reciprocal Rank Fusion constant (fusion rrf). The seeds used 60; on LoCoMo 5 ranks better at "
                     "every budget, because a small k lets a top hit of either list count."),
    )
    vector_weight: float = Field(
        0.5, ge=0,
        description=("Weight of the vector list in the fusion (BM25 is the stronger signal with MiniLM). 0.5 suits "
                     "convex fusion; RRF scored best at 0.4 (the default before convex fusion)."),
    )
    keyword_weight: float = Field(1.0, ge=0, description="Weight of the BM25 list in the fusion.")
    vector_search_limit: int = Field(50, ge=1, description="Candidates from vector search.")
    keyword_search_limit: int = Field(50, ge=1, description="Candidates from BM25 search.")
    keyword_score_budget: int = Field(
        8000, ge=0,
        description=("Chunks BM25 may score per query before the commonest query words stop selecting "
                     "candidates (they still count in the score); bounds keyword search time on large "
                     "stores. 0 scores every chunk with any query word."),
    )
    mmr_lambda: float = Field(0.7, ge=0, le=1, description="MMR trade-off: 1 = relevance only.")
    mmr_enabled: bool = Field(True, description="Rerank with Maximal Marginal Relevance.")
    dedup_threshold: float = Field(0.97, ge=0, le=1, description="Cosine above which two hits are duplicates.")
    recency_decay_factor: float = Field(0.1, ge=0, le=1, description="Max score boost for brand-new chunks.")
    recency_half_life_hours: float = Field(48.0, gt=0, description="Half-life of the recency boost.")
    default_limit: int = Field(10, ge=1, description="Results returned when the caller names no limit.")
    seed_count: int = Field(5, ge=1, description="Top search hits used as chain-walk seeds.")


class ClusterExpansionConfig(_Section):
    enabled: bool = Field(
        False,
        description=("Add cluster siblings of the top hits as candidates. Off by default: on LoCoMo it lowered "
                     "turn recall at every budget (benchmarks/locomo.py, retriever hybrid_cluster_expansion)."),
    )
    max_clusters: int = Field(3, ge=0, description="Clusters expanded per query.")
    max_siblings: int = Field(5, ge=0, description="Siblings added per expanded cluster.")


class ClusteringConfig(_Section):
    min_cluster_size: int = Field(4, ge=2, description="HDBSCAN min_cluster_size (seed 002).")
    threshold: float = Field(
        0.09, gt=0, lt=1, description="Angular distance under which a new chunk joins a cluster (seed 001)."
    )
    recluster_after_new_chunks: int = Field(
        200, ge=0, description="Batch ingest reclusters when at least this many new vectors arrived."
    )


class TraversalConfig(_Section):
    max_depth: int = Field(50, ge=1, le=10_000, description="Safety cap on chain length (seed 000).")


class TokensConfig(_Section):
    mcp_max_response: int = Field(20_000, ge=500, description="Token budget of one tool answer.")
    claude_md_budget: int = Field(500, ge=50, description="Token budget of the session-start briefing.")


class HooksConfig(_Section):
    claude_md: bool = Field(False, description="Maintain a memory block in the project's existing CLAUDE.md.")


class Config(_Section):
    storage: StorageConfig = StorageConfig()
    chunking: ChunkingConfig = ChunkingConfig()
    graph: GraphConfig = GraphConfig()
    redaction: RedactionConfig = RedactionConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    cluster_expansion: ClusterExpansionConfig = ClusterExpansionConfig()
    clustering: ClusteringConfig = ClusteringConfig()
    traversal: TraversalConfig = TraversalConfig()
    tokens: TokensConfig = TokensConfig()
    hooks: HooksConfig = HooksConfig()

    def with_overrides(self, overrides: dict[str, Any]) -> Config:
        """A copy with dotted-key overrides applied (``{"retrieval.mmrLambda": 0.5}``)."""
        data = self.model_dump(by_alias=True)
        for dotted, value in overrides.items():
            _set_dotted(data, dotted, value, "override")
        return _validate(data, "override")


def causantic_home() -> Path:
    """The data directory: ``$CAUSANTIC_HOME``, else ``~/.causantic``."""
    env = os.environ.get("CAUSANTIC_HOME")
    return Path(env).expanduser() if env else Path.home() / ".causantic"


def db_path(config: Config) -> Path:
    return Path(config.storage.db_path).expanduser() if config.storage.db_path else causantic_home() / "memory.db"


def vector_path(config: Config) -> Path:
    if config.storage.vector_path:
        return Path(config.storage.vector_path).expanduser()
    return causantic_home() / "vectors"


def load_config(cwd: Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """Merge defaults, the user file, the project file and the environment; validate the result."""
    env = os.environ if environ is None else environ
    data: dict[str, Any] = Config().model_dump(by_alias=True)
    for path in (causantic_home() / "config.json", (cwd or Path.cwd()) / "causantic.config.json"):
        if path.is_file():
            _merge(data, _read_json(path), str(path))
    for name, raw in env.items():
        if not name.startswith("CAUSANTIC_") or name == "CAUSANTIC_HOME":
            continue
        key = _env_key(name)
        if key is not None:
            _set_dotted(data, key, _parse_env_value(raw), f"environment variable {name}")
    return _validate(data, "configuration")


def config_keys() -> dict[str, tuple[Any, str]]:
    """Every dotted key with its default and description, for `causantic config show` and the docs."""
    out: dict[str, tuple[Any, str]] = {}
    for section_name, section_field in Config.model_fields.items():
        section_type = section_field.annotation
        assert isinstance(section_type, type) and issubclass(section_type, BaseModel)
        for key, field in section_type.model_fields.items():
            out[f"{to_camel(section_name)}.{to_camel(key)}"] = (field.default, field.description or "")
    return out


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}). Fix or delete the file.") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level.")
    return value


def _merge(into: dict[str, Any], new: dict[str, Any], source: str) -> None:
    for section, values in new.items():
        if section not in into:
            raise ConfigError(f"{source}: unknown section {section!r}; known: {', '.join(sorted(into))}.")
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: section {section!r} must be an object.")
        for key, value in values.items():
            _set_dotted(into, f"{section}.{key}", value, source)


def _set_dotted(data: dict[str, Any], dotted: str, value: Any, source: str) -> None:
    section, _, key = dotted.partition(".")
    if section not in data or not isinstance(data[section], dict):
        raise ConfigError(f"{source}: unknown section {section!r} in key {dotted!r}.")
    if key not in data[section]:
        known = ", ".join(sorted(data[section]))
        raise ConfigError(f"{source}: unknown key {dotted!r}; {section} has: {known}.")
    data[section][key] = value


def _env_key(name: str) -> str | None:
    """CAUSANTIC_RETRIEVAL_MMR_LAMBDA -> retrieval.mmrLambda (None when no section matches)."""
    rest = name.removeprefix("CAUSANTIC_").lower()
    for section_name in sorted(Config.model_fields, key=len, reverse=True):
        prefix = section_name + "_"
        if rest.startswith(prefix):
            return f"{to_camel(section_name)}.{to_camel(rest[len(prefix):])}"
    return None


def _parse_env_value(raw: str) -> Any:
    """Environment values are JSON when they parse as JSON (numbers, booleans, lists), else strings."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _validate(data: dict[str, Any], source: str) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"Invalid {source}: {problems}") from exc
