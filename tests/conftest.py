"""Shared fixtures: every test gets its own CAUSANTIC_HOME, and real corpus files from ../shared."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from postgres_server import BACKENDS, backend_settings, require_postgres, start_server
from shared_data import require_shared

from causantic.cli import output
from causantic.config import Config

# Property tests judge answers, not speed: on a loaded machine (CI shares two cores) an example past
# Hypothesis's 200 ms deadline, or slow to generate, failed a test whose answers were all right.
settings.register_profile("causantic", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("causantic")

# Started in the background by a shell without job control (`pytest &` in a script), the test run
# ignores SIGINT, and every command a test starts inherits that: the Ctrl-C tests then saw commands
# run on to the end (8 failures in a plain clone's run). A terminal's Ctrl-C is what they test.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus" / "claude-code"


# What the shell running the tests says about itself, which the product reads: the terminal's size
# (the CLI wraps to COLUMNS when it is set; CI sets none, a developer's shell may) and colour wishes,
# and where the coding agents keep their sessions when it is not in HOME.
MACHINE_SETTINGS = (
    "COLUMNS",
    "LINES",
    "FORCE_COLOR",
    "NO_COLOR",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "COPILOT_HOME",
    "PI_CODING_AGENT_DIR",
)


def _machine_free(env: pytest.MonkeyPatch, user_home: Path) -> None:
    """HOME at an empty folder (no test reads the ~/.claude, ~/.codex, … of whoever runs it), the
    model hub offline, and no Causantic setting nor any of MACHINE_SETTINGS from the environment."""
    user_home.mkdir(exist_ok=True)
    env.setenv("HOME", str(user_home))
    env.setenv("HF_HUB_OFFLINE", "1")
    for name in list(os.environ):
        if name.startswith("CAUSANTIC_") or name in MACHINE_SETTINGS:
            env.delenv(name)


@pytest.fixture(autouse=True, scope="session")
def machine_free_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same for the module- and session-wide fixtures (stores ingested once for a module), which
    start before any test's own: they read the runner's CAUSANTIC_CHUNKING_MAX_TOKENS, say."""
    with pytest.MonkeyPatch.context() as env:
        _machine_free(env, tmp_path_factory.mktemp("user-home"))
        yield


@pytest.fixture(autouse=True)
def causantic_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the data directory at a fresh temporary folder, and HOME at another (:func:`_machine_free`)."""
    _machine_free(monkeypatch, tmp_path / "user-home")
    home = tmp_path / "causantic-home"
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    # The CLI's consoles are made once per process, at the width of the moment: made anew per test.
    monkeypatch.setattr(output, "_consoles", {})
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return require_shared(CORPUS, "The shared transcript corpus")


@pytest.fixture(scope="session")
def agents_corpus() -> Path:
    """The shared corpus root, for tests of the Codex CLI and Gemini CLI files in it."""
    root = SHARED / "corpus"
    require_shared(root / "codex", "The shared Codex CLI corpus")
    require_shared(root / "gemini", "The shared Gemini CLI corpus")
    return root


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A real PostgreSQL with pgvector for the whole session (tests/postgres_server.py)."""
    require_postgres()
    # Not under pytest's temporary folder: every pytest run resets pytest-of-<user> to owner-only,
    # which would lock out the server's own system user when it runs as root (postgres_server.py).
    folder = Path(tempfile.mkdtemp(prefix="causantic-pgserver-"))
    server = start_server(folder / "data")
    try:
        yield server
    finally:
        server.cleanup()
        # Its tens of thousands of files (a folder per database) take 15 s and more to delete on a
        # loaded disk: a detached `rm` does it after the session, no test waits for it.
        subprocess.run(["sh", "-c", 'rm -rf "$1" >/dev/null 2>&1 &', "sh", str(folder)], check=True)


@pytest.fixture(params=BACKENDS)
def backend_config(request: pytest.FixtureRequest) -> Config:
    """Default configuration on each backend: the SQLite file in CAUSANTIC_HOME, or a new database."""
    return backend_settings(request)


# Modules whose tests each run the product as real processes (CLI, hooks, MCP servers, installs) or
# fill a disk: seconds per test. They leave the fast lane, `pytest -m "not slow"`; CI runs everything.
PROCESS_MODULES = frozenset(
    {
        "hooks/test_claude_md.py",
        "hooks/test_ingest_hooks.py",
        "hooks/test_prompt_memory.py",
        "hooks/test_session_start.py",
        "integration/test_agents_init.py",
        "integration/test_init_uninstall.py",
        "mcp/test_concurrency.py",
        "mcp/test_http.py",
        "mcp/test_stdio_server.py",
        "store/test_store_failures.py",
        "store/test_wal_bounds.py",
        "test_cli_imports.py",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Tests that read ../shared carry the `shared` marker, so `-m "not shared"` runs the rest.
    # Tests on a real PostgreSQL (a server start, then network round trips) join the slow lane.
    tests_root = Path(__file__).parent
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if {"corpus_dir", "agents_corpus"} & fixtures:
            item.add_marker(pytest.mark.shared)
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and "postgres" in callspec.params.values()
        module = item.path.relative_to(tests_root).as_posix()
        if "postgres_server" in fixtures or on_postgres or module in PROCESS_MODULES:
            item.add_marker(pytest.mark.slow)
