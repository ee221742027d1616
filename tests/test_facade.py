"""The rules the facade holds for every interface, on a real (small) store without vectors."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from process_support import EXAMPLES
from pydantic import ValidationError

from causantic import Memory
from causantic.cli.main import cli
from causantic.errors import CausanticError, InvalidQuery, ProjectNotFound


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    opened = Memory(tmp_path / "home")
    opened.ingest([EXAMPLES], embed=False)
    return opened


def test_a_start_time_and_days_back_exclude_each_other_and_an_end_must_follow_the_start(memory: Memory) -> None:
    with memory, pytest.raises(InvalidQuery, match="not both"):
        memory.sessions("acme-shop", since=datetime(2026, 1, 1), days_back=3)
    with Memory(memory.home) as again, pytest.raises(InvalidQuery, match="must be later"):
        again.search("redis", since=datetime(2026, 2, 1), until=datetime(2026, 1, 1))


def test_queries_are_checked_once_for_everyone(memory: Memory) -> None:
    with memory:
        for ask in (memory.search, memory.recall, memory.predict):
            with pytest.raises(InvalidQuery, match="empty"):
                ask("  ")


def test_forget_by_query_needs_vectors_and_forget_of_an_unknown_project_says_so(memory: Memory) -> None:
    with memory:
        with pytest.raises(CausanticError, match="no vectors are stored yet"):
            memory.forget("acme-shop", query="redis")
        with pytest.raises(ProjectNotFound):
            memory.forget("no-such-project", before=datetime(2026, 1, 1))
        preview = memory.forget("acme-shop")
        assert preview.dry_run and preview.whole_project and preview.count == memory.stats().chunk_count
        assert memory.stats().chunk_count == preview.count  # a preview deletes nothing


def test_results_are_frozen_and_name_their_project(memory: Memory) -> None:
    with memory:
        stats = memory.stats()
        with pytest.raises(ValidationError):
            stats.chunk_count = 0  # type: ignore[misc]
        listing = memory.sessions("/home/dev/acme-shop")  # by path as well as by name
        assert (listing.project, listing.project_path) == ("acme-shop", "/home/dev/acme-shop")
        assert listing.total == len(listing.sessions) == stats.session_count


def test_a_memory_opened_on_another_home_reads_that_homes_configuration(tmp_path: Path, causantic_home: Path) -> None:
    # $CAUSANTIC_HOME would show one hit per search; the other home redacts the word "redis".
    causantic_home.mkdir(parents=True)
    (causantic_home / "config.json").write_text('{"retrieval": {"defaultLimit": 1}}', encoding="utf-8")
    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.json").write_text('{"redaction": {"customPatterns": {"cache": "(?i)redis"}}}', encoding="utf-8")
    with Memory(other) as memory:
        memory.ingest([EXAMPLES], embed=False)
        assert memory.search("redis").hits == []  # redacted before it was indexed
        assert len(memory.search("test").hits) > 1  # $CAUSANTIC_HOME's limit of 1 does not apply


def test_a_memory_opened_on_a_home_uses_the_store_its_configuration_names_as_the_cli_does(
    tmp_path: Path, causantic_home: Path
) -> None:
    causantic_home.mkdir(parents=True)
    # Relative, as a user writes it: the CLI reads it from the working directory, and so does the facade.
    (causantic_home / "config.json").write_text('{"storage": {"dbPath": "stores/work.db"}}', encoding="utf-8")
    with Memory(causantic_home) as memory:
        memory.ingest([EXAMPLES], embed=False)
        chunks = memory.stats().chunk_count
    assert (tmp_path / "stores" / "work.db").is_file() and not (causantic_home / "memory.db").exists()
    cli_stats = CliRunner().invoke(cli, ["stats", "--json"])
    assert cli_stats.exit_code == 0, cli_stats.output
    assert chunks > 0 and json.loads(cli_stats.output)["chunk_count"] == chunks  # one store for both


def test_project_names_for_the_dashboards_menus_are_in_alphabetical_order_whatever_the_case(
    tmp_path: Path,
) -> None:
    """The dashboard's project menus listed 'Demo' before 'ai-music': capitals sorted first."""
    from transcript_files import write_session

    for n, folder in enumerate(("/work/ai-music", "/work/Demo", "/work/billing")):
        write_session(tmp_path / "sessions", folder, f"5e55{n:04d}-0000-4000-8000-000000000000", [("hi", "hello")])
    with Memory(tmp_path / "home") as memory:
        memory.ingest([tmp_path / "sessions"], embed=False)
        assert memory.project_names() == ["ai-music", "billing", "Demo"]
