"""Team memory never receives what was recorded in a folder its member did not share.

A session that starts in a shared repository and moves (`cd`) into a private folder, and a file that
holds sessions of a shared and of a private project, stay in the member's local memory whole. Real
PostgreSQL (the ``postgres_server`` fixture), real SQLite files, transcripts written as Claude Code
writes them; the CLI through click's runner with the environment a user would set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from postgres_server import new_database
from transcript_files import git_checkout, write_codex_rollout, write_session

from causantic import Memory
from causantic.cli.main import cli
from causantic.ingest import pipeline
from causantic.retrieval.output import search_out

SHOP, DIARY = "/home/dev/shop", "/home/dev/diary"
MOVED = "c0de0000-0000-4000-8000-000000000001"  # starts in the shop, moves into the diary
SHOP_ONLY = "c0de0000-0000-4000-8000-000000000002"
DIARY_ONLY = "c0de0000-0000-4000-8000-000000000003"
PRIVATE = "my landlord dispute and the rent arrears letter"


def _settings(url: str) -> dict[str, Any]:
    return {
        "storage.backend": "postgres",
        "storage.postgresUrl": url,
        "team.user": "alice",
        "team.shareProjects": ["shop"],
    }


def _team_text(url: str) -> list[tuple[str, str]]:
    """Every chunk team memory holds: (session id, text), read in the database itself."""
    with psycopg.connect(url) as conn:
        return list(conn.execute("SELECT session_id, content FROM chunks ORDER BY session_id").fetchall())


@pytest.mark.parametrize("streamed", [False, True], ids=["planned", "streamed"])
def test_a_session_that_moves_from_the_shared_repo_into_a_private_folder_never_reaches_team_memory(
    postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    if streamed:  # every file saved as its chunks are made, as a large one is (team memory refuses it first)
        monkeypatch.setattr(pipeline, "STREAM_FILE_BYTES", 0)
        monkeypatch.setattr(pipeline, "STREAM_BATCH_CHARS", 1)
    url = new_database(postgres_server)
    folder = tmp_path / "projects"
    turns = [
        ("fix the checkout total rounding in the shop", "Rounded the checkout total to cents."),
        ("now cd ~/diary and draft " + PRIVATE, "Drafted the letter about " + PRIVATE + "."),
    ]
    write_session(folder, SHOP, MOVED, turns, moves={1: DIARY})
    write_session(folder, SHOP, SHOP_ONLY, [("shop checkout tax lines", "Added tax lines to the checkout.")])
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "alice"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_USER": "alice",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "shop",
    }
    run = CliRunner().invoke(cli, ["batch-ingest", str(folder), "--no-embed"], env=env)
    assert run.exit_code == 0, run.output
    held = _team_text(url)
    # Only the session that stayed in the shop is shared; no word of the diary turn left the machine.
    assert {session for session, _ in held} == {SHOP_ONLY}
    assert not any("landlord" in text for _, text in held)
    # The member is told, once, why a shop session stayed local.
    said = " ".join(run.output.split())
    assert "kept in local memory only, as it also worked in a folder not shared" in said, run.output
    assert "shop (1 session)" in said, run.output
    # It is in local memory, found by search as the member's own, never as the team's.
    with Memory(tmp_path / "alice", overrides=_settings(url)) as memory:
        hits = search_out("landlord", memory.search("landlord rent arrears letter", mode="keyword")).hits
        assert {(h.session_id, h.store) for h in hits} == {(MOVED, "local")}
    # The next runs read nothing new and do not send the member to --force to upload it.
    again = CliRunner().invoke(cli, ["batch-ingest", str(folder), "--no-embed"], env=env)
    assert again.exit_code == 0, again.output
    assert "--force" not in again.output and "kept in local memory only" not in again.output, again.output
    forced = CliRunner().invoke(cli, ["batch-ingest", str(folder), "--no-embed", "--force"], env=env)
    assert forced.exit_code == 0, forced.output
    assert {session for session, _ in _team_text(url)} == {SHOP_ONLY}


def test_a_file_with_a_shared_and_a_private_session_is_kept_locally_not_left_waiting(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    folder = tmp_path / "projects"
    shop = write_session(folder, SHOP, SHOP_ONLY, [("shop checkout tax lines", "Added tax lines to the checkout.")])
    diary = write_session(tmp_path / "elsewhere", DIARY, DIARY_ONLY, [("draft " + PRIVATE, "Drafted it.")])
    with shop.open("a", encoding="utf-8") as out:  # one file, two sessions (a resumed one's copied lines)
        out.write(diary.read_text(encoding="utf-8"))
    with Memory(tmp_path / "alice", overrides=_settings(url)) as memory:
        report = memory.ingest([folder], embed=False)
        assert report.files_waiting == 0 and report.session_count == 2, report
        assert not any("team memory" in note for note in report.notes), report.notes
        hits = search_out("tax", memory.search("checkout tax landlord", mode="keyword")).hits
        found = {h.session_id: h.store for h in hits}
        assert found == {SHOP_ONLY: "local", DIARY_ONLY: "local"}
        assert memory.ingest([folder], embed=False).files_unchanged == 1
    assert _team_text(url) == []


def test_a_codex_thread_whose_later_turn_runs_in_a_private_folder_stays_local(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    codex = tmp_path / "codex"
    turns = [("fix the shop checkout rounding", "Rounded to cents."), ("draft " + PRIVATE, "Drafted it.")]
    write_codex_rollout(codex, SHOP, "019a0000-0000-7000-8000-000000000001", turns, moves={1: DIARY})
    write_codex_rollout(codex, SHOP, "019a0000-0000-7000-8000-000000000002", [("shop tax lines", "Added them.")])
    with Memory(tmp_path / "alice", overrides=_settings(url)) as memory:
        report = memory.ingest([codex], embed=False)
        assert report.session_count == 2 and report.files_waiting == 0, report
    assert {session for session, _ in _team_text(url)} == {"019a0000-0000-7000-8000-000000000002"}


def test_a_folder_inside_the_shared_repo_is_shared_and_a_repository_nested_in_it_is_not(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    shop = git_checkout(tmp_path / "code" / "shop", "git@example.com:acme/shop.git")
    (shop / "src").mkdir()
    secret = git_checkout(shop / "vendor" / "secret", "git@example.com:me/secret.git")
    folder = tmp_path / "projects"
    inside, nested = "c0de0000-0000-4000-8000-000000000004", "c0de0000-0000-4000-8000-000000000005"
    turns = [("shop checkout rounding", "Rounded it."), ("now in the source folder", "Edited cart.py there.")]
    write_session(folder, str(shop), inside, turns, moves={1: str(shop / "src")})
    gone = [("shop checkout tax", "Added tax."), ("the folder since deleted", "Tidied it.")]
    write_session(folder, str(shop), SHOP_ONLY, gone, moves={1: str(shop / "old-scripts")})
    write_session(folder, str(shop), nested, [("shop", "ok"), (PRIVATE, "Drafted it.")], moves={1: str(secret)})
    with Memory(tmp_path / "alice", overrides=_settings(url)) as memory:
        report = memory.ingest([folder], embed=False)
        assert report.session_count == 3 and report.files_waiting == 0, report
    assert {session for session, _ in _team_text(url)} == {inside, SHOP_ONLY}
