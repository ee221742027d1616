"""Shared fixtures: every test gets its own CAUSANTIC_HOME, and real corpus files from ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus" / "claude-code"


@pytest.fixture(autouse=True)
def causantic_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the data directory at a fresh temporary folder and clear config from the environment."""
    home = tmp_path / "causantic-home"
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in list(__import__("os").environ):
        if name.startswith("CAUSANTIC_") and name != "CAUSANTIC_HOME":
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"The shared corpus is missing at {CORPUS}; tests need ../shared beside the repo.")
    return CORPUS


@pytest.fixture(scope="session")
def agents_corpus() -> Path:
    """The shared corpus root, for tests of the Codex CLI and Gemini CLI files in it."""
    root = SHARED / "corpus"
    if not (root / "codex").is_dir() or not (root / "gemini").is_dir():
        pytest.skip(f"The shared corpus is missing at {root}; these tests read its codex/ and gemini/ folders.")
    return root
