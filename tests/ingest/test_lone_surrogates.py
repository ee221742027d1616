"""Text cut inside an emoji: JavaScript's ``JSON.stringify`` writes the half it kept as an escape
(``\\ud83d``), valid JSON that decodes to a code point no UTF-8 text may hold. Claude Code, Codex CLI
and Gemini CLI sessions holding one (a tool output cut short) are ingested with U+FFFD in its place;
storing it failed the whole file ("UnicodeEncodeError: surrogates not allowed")."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_codex_rollout, write_gemini_log, write_session

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

CUT = "the build log ends with \\ud83d"  # as it lies in the file: half of 🚀, its other half cut off


def _claude(folder: Path) -> Path:
    path = write_session(folder, "/work/shop", "aaaaaaaa-0000-4000-8000-000000000001", [("show the log", "HOLD")])
    path.write_text(path.read_text().replace("HOLD", CUT))
    return path


def _long_claude(folder: Path) -> Path:
    """A pasted log of 2.4 MB: its text stays in the file and is decoded a window at a time."""
    path = write_session(folder, "/work/shop", "aaaaaaaa-0000-4000-8000-000000000004", [("HOLD", "Read it.")])
    path.write_text(path.read_text().replace("HOLD", "why does it fail? " + "log line " * 270_000 + CUT))
    return path


def _codex(folder: Path) -> Path:
    path = write_codex_rollout(folder, "/work/shop", "019b0000-0000-7000-8000-000000000002", [("show log", "PLACE")])
    path.write_text(path.read_text().replace("PLACE", CUT))
    return path


def _gemini(folder: Path) -> Path:
    path = write_gemini_log(folder / "chats", "/work/shop", "cccccccc-0000-4000-8000-000000000003", [{"user": "x"}])
    path.write_text(path.read_text().replace('"x"', f'"show the log: {CUT}"', 1))
    return path


@pytest.mark.parametrize("write", [_claude, _long_claude, _codex, _gemini])
def test_a_lone_half_of_an_emoji_is_stored_as_a_replacement_character(write, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path / "sessions")
    assert "\\ud83d" in path.read_text()
    with open_services(Config()) as services:
        report = ingest_paths(services, [path], embed=False, workers=1)
        assert report.errors == []
        contents = [r[0] for r in services.store.conn.execute("SELECT content FROM chunks")]
        assert any("the build log ends with \ufffd" in content for content in contents)
        assert services.store.keyword_search("build log")
