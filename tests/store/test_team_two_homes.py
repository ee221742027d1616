"""Two developers sharing one team memory, each with a Causantic home of their own, as they meet it
on the command line: what one member's command says about what the other's did.

Real PostgreSQL (``postgres_server``), transcripts as Claude Code writes them, the CLI in-process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from postgres_server import new_database
from transcript_files import write_session

from causantic.cli.main import cli

pytestmark = pytest.mark.slow


def _member(tmp_path: Path, url: str, name: str) -> dict[str, str]:
    return {
        "CAUSANTIC_HOME": str(tmp_path / f"{name}-home"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_USER": name,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }


def test_an_ingest_that_embeds_another_members_chunks_says_so(postgres_server: Any, tmp_path: Path) -> None:
    """Every chunk missing a vector gets one, another member's included: bob's summary said 'vectors
    added 3' beside 'chunks added 1', as if his one chunk had made three."""
    url = new_database(postgres_server)
    runner = CliRunner()
    alices = write_session(
        tmp_path / "a",
        "/home/alice/shop",
        "a1000000-0000-4000-8000-000000000000",
        [
            ("the cart total rounds wrong", "Rounded per line now."),
            ("and the tax?", "Tax is rounded once, on the total."),
        ],
    )
    bobs = write_session(
        tmp_path / "b",
        "/home/bob/blog",
        "b1000000-0000-4000-8000-000000000000",
        [
            ("the rss feed dates are in the wrong zone", "They are UTC now."),
        ],
    )
    alice = runner.invoke(
        cli, ["batch-ingest", str(alices.parent.parent), "--no-embed"], env=_member(tmp_path, url, "alice")
    )
    assert alice.exit_code == 0, alice.output
    bob = runner.invoke(cli, ["batch-ingest", str(bobs.parent.parent)], env=_member(tmp_path, url, "bob"))
    assert bob.exit_code == 0, bob.output
    assert " chunks added          │ 1\n" in bob.output
    assert " vectors added         │ 3 (2 for chunks this run did not store)\n" in bob.output


def test_forgetting_only_ones_own_single_chunk_reads_as_english(postgres_server: Any, tmp_path: Path) -> None:
    """It read '1 of your chunk in 1 session of 'shop' would be deleted.'"""
    url = new_database(postgres_server)
    runner = CliRunner()
    for n, name in enumerate(("alice", "bob")):
        session = write_session(
            tmp_path / name,
            "/home/dev/shop",
            f"5{n}000000-0000-4000-8000-000000000000",
            [
                (f"{name}: the cart total rounds wrong", "Rounded per line now."),
            ],
        )
        ingested = runner.invoke(
            cli, ["batch-ingest", str(session.parent.parent), "--no-embed"], env=_member(tmp_path, url, name)
        )
        assert ingested.exit_code == 0, ingested.output
    shown = runner.invoke(cli, ["forget", "shop", "--only-mine"], env=_member(tmp_path, url, "alice"))
    assert shown.output.startswith("1 of your chunks in 1 session of 'shop' would be deleted.\n"), shown.output
