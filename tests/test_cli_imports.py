"""Each CLI command family imports only what it needs: a cold command pays for nothing else.

Every command runs as a real subprocess against a store holding the example sessions with their
vectors; at exit it reports which heavy libraries (and heavy Causantic modules) it had loaded. The
configuration's validation (pydantic) runs once, the first time, and is cached from then on
(config_cache.py): the read commands' text output needs no pydantic, only their ``--json`` does.
Output here goes to a pipe, where search, recall and predict print plain text without rich.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from process_support import EXAMPLES, cli_imports

RUNTIME = {"numpy", "onnxruntime", "tokenizers", "causantic.embedding.embedder"}
SERVERS = {"mcp", "starlette", "uvicorn", "causantic.mcp"}
CLUSTERING = {"sklearn", "scipy"}
LEGACY = {"lancedb", "pyarrow"}


@pytest.fixture(scope="module")
def user_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HOME of every command here: the configuration cache's key holds it, so one for all (each
    test has a HOME of its own otherwise)."""
    return tmp_path_factory.mktemp("user-home")


@pytest.fixture(autouse=True)
def _cached_under_one_home(user_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(user_home))


@pytest.fixture(scope="module")
def store_home(tmp_path_factory: pytest.TempPathFactory, user_home: Path) -> Path:
    home = tmp_path_factory.mktemp("home")
    loaded = cli_imports(home, "batch-ingest", str(EXAMPLES), HOME=str(user_home))
    # Ingest embeds (the runtime) but needs no server, no clustering of 6 chunks, no legacy store.
    assert RUNTIME <= loaded and not loaded & (SERVERS | CLUSTERING | LEGACY)
    # The first read validates the configuration in full (pydantic) and caches it for the rest.
    assert "pydantic" in cli_imports(home, "list-projects", HOME=str(user_home))
    return home


@pytest.mark.parametrize(
    "args",
    [
        ("list-projects",),
        ("list-sessions", "acme-shop"),
        ("reconstruct", "acme-shop"),
    ],
)
def test_listing_commands_load_no_embedding_runtime_no_index_no_server_and_no_validation(
    store_home: Path, args: tuple[str, ...]
) -> None:
    assert cli_imports(store_home, *args) <= {"rich"}  # tables


@pytest.mark.parametrize(
    "args",
    [
        ("stats",),
        ("list-projects", "--json"),
        ("reconstruct", "acme-shop", "--json"),
        ("clusters",),
        ("hook", "status"),
        ("config",),
    ],
)
def test_other_read_commands_and_json_output_load_no_embedding_runtime_no_index_and_no_server(
    store_home: Path, args: tuple[str, ...]
) -> None:
    # Their answers are pydantic models (stats, --json) or they show the configuration itself.
    assert cli_imports(store_home, *args) <= {"pydantic", "rich"}


@pytest.mark.parametrize(
    "args", [("search", "rate limiting"), ("recall", "rate limiting"), ("predict", "rate limiting")]
)
def test_search_commands_load_the_embedding_runtime_and_nothing_else_heavy(
    store_home: Path, args: tuple[str, ...]
) -> None:
    # A six-chunk store is scanned exactly: not even faiss loads; the configuration comes from the
    # cache, and piped answers print as plain text, without rich.
    assert cli_imports(store_home, *args) == RUNTIME


def test_the_session_start_hook_briefs_without_validating_the_configuration(store_home: Path, tmp_path: Path) -> None:
    """Claude Code waits for this hook at every session start: the cached configuration spares it
    pydantic (about 0.1 s), as it spares the read commands."""
    event = {"session_id": "s-imports", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup"}
    cli_imports(store_home, "hook", "session-start", stdin=json.dumps(event))  # a new folder: cached now
    loaded = cli_imports(store_home, "hook", "session-start", stdin=json.dumps(event))
    assert not loaded & {"pydantic", *RUNTIME, *SERVERS}


@pytest.mark.parametrize("hook", ["pre-compact", "session-end"])
def test_the_ingest_hooks_hand_over_to_their_worker_without_validating_the_configuration(
    store_home: Path, tmp_path: Path, hook: str
) -> None:
    """Claude Code gives SessionEnd hooks 1.5 s; this one spent 0.3 s of it importing the configuration's
    pydantic models for the home folder's path, and took 2.4 s beside a batch-ingest and three MCP
    servers on two cores (benchmarks/concurrent_sessions.py). The worker it starts validates it."""
    transcript = tmp_path / ".claude" / "projects" / "-work-shop" / "0b9b4a6e-3333-4aaa-8bbb-000000000001.jsonl"
    event = {"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    assert not cli_imports(store_home, "hook", hook, stdin=json.dumps(event)) & {"pydantic", *RUNTIME, *SERVERS}


def test_only_clustering_loads_scikit_learn(store_home: Path) -> None:
    pytest.importorskip("sklearn", reason="topics are the optional scikit-learn extra")
    loaded = cli_imports(store_home, "cluster")
    assert CLUSTERING & loaded and not loaded & (SERVERS | LEGACY | {"onnxruntime", "tokenizers"})


def test_clustering_an_empty_memory_loads_no_scikit_learn(tmp_path: Path) -> None:
    """It paid about two seconds of scikit-learn imports to label no topics."""
    pytest.importorskip("sklearn", reason="topics are the optional scikit-learn extra")
    assert not cli_imports(tmp_path / "empty", "cluster") & {"sklearn"}
