"""Team memory with `team.shareProjects`: shared projects in PostgreSQL, the others local, one answer.

Real PostgreSQL (the ``postgres_server`` fixture), real SQLite files, real transcripts written as
Claude Code writes them; the CLI through click's runner with the environment a user would set.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from postgres_server import new_database
from process_support import run_hook, subprocess_env
from transcript_files import write_session

from causantic import Memory, services
from causantic.cli.main import cli
from causantic.config import TeamConfig, load_config, shares_project
from causantic.errors import ProjectNotFound
from causantic.examples import SESSIONS_DIR
from causantic.retrieval.output import search_out
from causantic.runs import read_status

SHOP, DIARY = "/home/dev/shop", "/home/dev/diary"


# A team session with sub-agents (tests/teams/fixtures/docs_team/README.md).
DOCS_TEAM = Path(__file__).resolve().parents[1] / "teams" / "fixtures" / "docs_team"
SHOP_SESSION = "5a0b0000-0000-4000-8000-000000000001"
DIARY_SESSION = "d1a20000-0000-4000-8000-000000000002"


@pytest.fixture
def transcripts(tmp_path: Path) -> Path:
    folder = tmp_path / "projects"
    write_session(
        folder,
        SHOP,
        SHOP_SESSION,
        [("Safari users hit a redirect loop after login", "The session cookie lacked SameSite=None; fixed it.")],
    )
    write_session(
        folder,
        DIARY,
        DIARY_SESSION,
        [("My private notes on the redirect loop", "Keep these notes to myself: the redirect loop came back.")],
    )
    return folder


def _settings(url: str, user: str = "alice", share: Any = None) -> dict[str, Any]:
    settings: dict[str, Any] = {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": user}
    if share is not None:
        settings["team.shareProjects"] = share
    return settings


def _cli_env(home: Path, url: str, user: str = "alice") -> dict[str, str]:
    """The environment of a CLI run as ``user``, home ``home``, on team memory at ``url``, sharing the shop."""
    return {
        "CAUSANTIC_HOME": str(home),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_USER": user,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "shop",
    }


def _team_rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql).fetchall())


def _one_topic_in_each_store(memory: Memory, team_label: str, local_label: str) -> None:
    """One topic in each store, of the shop's chunks (team) and the diary's (local), as a recluster
    of each leaves them: each store numbers its own from 1."""
    both = memory._team
    assert both is not None and both.team is not None and both.local is not None
    for held, session, label in ((both.team, SHOP_SESSION, team_label), (both.local, DIARY_SESSION, local_label)):
        members = [(chunk_id, 0.1) for chunk_id in held.store.session_chunk_ids(session)]
        held.store.replace_clusters(held.vectors.model_id, [(None, label, b"\0" * 16, members)])


@contextmanager
def _dashboard(home: Path, settings: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    """The dashboard over the memory at ``home`` (a test client) and its token."""
    from starlette.testclient import TestClient

    from causantic.dashboard.app import create_app
    from causantic.dashboard.security import Secrets

    secrets = Secrets(port=8765)
    app = create_app(secrets, opener=lambda: Memory(home, overrides=settings))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client, secrets.token


def test_share_projects_reads_a_list_all_or_names_with_commas_and_shares_nothing_by_default() -> None:
    assert load_config(environ={}).team.share_projects == ()
    assert load_config(environ={"CAUSANTIC_TEAM_SHARE_PROJECTS": "shop, acme/web"}).team.share_projects == (
        "shop",
        "acme/web",
    )
    assert load_config(environ={"CAUSANTIC_TEAM_SHARE_PROJECTS": '["shop"]'}).team.share_projects == ("shop",)
    assert load_config(environ={"CAUSANTIC_TEAM_SHARE_PROJECTS": "all"}).team.share_projects == "all"
    team = TeamConfig(share_projects=("shop", "acme/web"))
    assert shares_project(team, SHOP) and shares_project(team, "/srv/acme/web")
    assert not shares_project(team, DIARY) and not shares_project(team, "/srv/other/web")
    assert not shares_project(TeamConfig(), SHOP)


def test_only_the_shared_project_reaches_the_server_and_search_fuses_both_marking_local(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    with Memory(tmp_path / "alice", overrides=_settings(url, share=["shop"])) as memory:
        report = memory.ingest([transcripts], embed=False)
        assert report.files == 2 and report.files_waiting == 0 and not report.notes
        result = memory.search("redirect loop", mode="keyword")
    # What other members can read: the shared project only, checked in the database itself.
    assert _team_rows(url, "SELECT DISTINCT session_id, member FROM chunks") == [(SHOP_SESSION, "alice")]
    assert [r[0] for r in _team_rows(url, "SELECT path FROM projects")] == [SHOP]
    out = search_out("redirect loop", result)
    stores = {h.session_id: (h.store, h.user) for h in out.hits}
    assert stores == {SHOP_SESSION: ("team", "alice"), DIARY_SESSION: ("local", None)}
    # The CLI shows which hits are local only.
    env = _cli_env(tmp_path / "alice", url)
    text = CliRunner().invoke(cli, ["search", "redirect loop", "--mode", "keyword"], env=env)
    assert text.exit_code == 0, text.output
    assert text.output.count("Local (not shared)") == 1 and "User: alice" in text.output
    # Recall and reconstruct answer from both stores too.
    with Memory(tmp_path / "alice", overrides=_settings(url, share=["shop"])) as memory:
        sessions = {c.session_id for c in memory.recall("redirect loop").chunks}
        assert sessions == {SHOP_SESSION, DIARY_SESSION}
        assert [s.session_id for s in memory.reconstruct("diary").sessions] == [DIARY_SESSION]
        assert [s.session_id for s in memory.reconstruct("shop").sessions] == [SHOP_SESSION]
        # Listing shows both stores' projects; a local project's sessions list as a shared one's do.
        assert {p.name for p in memory.projects()} == {"shop", "diary"}
        assert memory.project("diary").path == DIARY
        assert [s.session_id for s in memory.sessions("diary").sessions] == [DIARY_SESSION]


def test_nothing_is_shared_until_the_owner_says_so(postgres_server: Any, transcripts: Path, tmp_path: Path) -> None:
    url = new_database(postgres_server)
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol")) as memory:
        memory.ingest([transcripts], embed=False)
        assert {h.chunk.session_id for h in memory.search("redirect loop", mode="keyword").hits} == {
            SHOP_SESSION,
            DIARY_SESSION,
        }
    assert _team_rows(url, "SELECT count(*) FROM chunks") == [(0,)]
    # Sharing the project later: its files are unchanged, so a plain ingest uploads nothing, and it
    # says which project waits and that `--force` re-reads those already kept locally (docs/team-memory.md).
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol", ["shop"])) as memory:
        plain = memory.ingest([transcripts], embed=False)
        assert _team_rows(url, "SELECT count(*) FROM chunks") == [(0,)]
        hint = "shared now but kept in local memory only: shop (1 session); `causantic batch-ingest --force` uploads"
        assert any(note.startswith(hint) for note in plain.notes), plain.notes
        memory.ingest([transcripts], embed=False, force=True)
        assert not any("kept in local memory only" in n for n in memory.ingest([transcripts], embed=False).notes)
    assert _team_rows(url, "SELECT DISTINCT session_id FROM chunks") == [(SHOP_SESSION,)]


def test_an_unreachable_server_answers_from_local_memory_and_the_next_run_uploads(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    dead = f"postgresql://alice:pw@/causantic?host={tmp_path / 'no-server'}&connect_timeout=2"
    (tmp_path / "no-server").mkdir()
    with Memory(tmp_path / "alice", overrides=_settings(dead, share=["shop"])) as memory:
        report = memory.ingest([transcripts], embed=False)
        assert report.files_waiting == 1 and report.chunks_added > 0
        assert report.notes and report.notes[0].startswith("team memory unavailable: Cannot reach the team memory")
        assert report.notes[0].endswith("1 file of shared projects waits for it (the next run uploads it)")
        result = memory.search("redirect loop", mode="keyword")
        assert [s.session_id for s in memory.reconstruct("diary").sessions] == [DIARY_SESSION]
        with pytest.raises(ProjectNotFound, match="Team memory is unreachable, and shared projects live there"):
            memory.reconstruct("shop")
    assert {h.chunk.session_id for h in result.hits} == {DIARY_SESSION}
    assert any("answering from local memory only" in n for n in result.notes)
    assert "pw@" not in " ".join(result.notes)
    # The CLI says the same, in one sentence, without a traceback.
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "alice"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": dead,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "shop",
    }
    text = CliRunner().invoke(cli, ["search", "redirect loop", "--mode", "keyword"], env=env)
    assert text.exit_code == 0 and "team memory unavailable" in text.output and "Traceback" not in text.output
    ingest = CliRunner().invoke(cli, ["ingest", str(transcripts), "--no-embed"], env=env)
    assert ingest.exit_code == 0, ingest.output
    assert "waiting for team memory" in ingest.output and "team memory unavailable" in ingest.output
    # Back online: the next run uploads what waited, and keeps the local part as it was.
    with Memory(tmp_path / "alice", overrides=_settings(url, share=["shop"])) as memory:
        again = memory.ingest([transcripts], embed=False)
        assert again.files_waiting == 0 and again.files_unchanged == 1 and not again.notes
        hits = memory.search("redirect loop", mode="keyword").hits
    assert _team_rows(url, "SELECT DISTINCT session_id FROM chunks") == [(SHOP_SESSION,)]
    assert {h.chunk.session_id for h in hits} == {SHOP_SESSION, DIARY_SESSION}


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP port on this machine that takes connections and never answers, as a server behind a
    firewall that drops packets looks to libpq (the listening socket is never accepted)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        yield f"postgresql://alice:pw@127.0.0.1:{listener.getsockname()[1]}/causantic"


def test_a_silent_server_costs_the_short_team_timeout_then_search_answers_locally(
    silent_server: str, transcripts: Path, tmp_path: Path
) -> None:
    assert load_config(environ={}).team.connect_timeout_seconds == 3  # the documented default, not libpq's 10 s
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "alice"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": silent_server,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "shop",
        "CAUSANTIC_TEAM_CONNECT_TIMEOUT_SECONDS": "2",
    }
    ingest = CliRunner().invoke(cli, ["ingest", str(transcripts), "--no-embed"], env=env)
    assert ingest.exit_code == 0, ingest.output
    search = CliRunner().invoke(cli, ["search", "redirect loop", "--mode", "keyword", "--json"], env=env)
    assert search.exit_code == 0, search.output
    out = json.loads(search.output)
    # The wait was the configured one, and the note says which key sets it.
    assert any("no answer within 2 s: team.connectTimeoutSeconds" in n for n in out["notes"])
    assert any("answering from local memory only" in n for n in out["notes"])
    assert DIARY_SESSION in search.output and "pw@" not in search.output
    # A connect_timeout in the URL is the user's choice, as libpq documents: it wins over the key.
    own = silent_server + "?connect_timeout=2"
    settings = {**_settings(own, share=["shop"]), "team.connectTimeoutSeconds": 30}
    with Memory(tmp_path / "alice", overrides=settings) as memory:
        notes = memory.search("redirect loop", mode="keyword").notes
    assert any("no answer within 2 s" in n for n in notes)


def test_a_server_lost_mid_session_answers_locally_then_comes_back_without_a_restart(
    postgres_server: Any, transcripts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = new_database(postgres_server)
    monkeypatch.setattr(services, "RETRY_SECONDS", 0.0)  # ask the server again at the next command
    with Memory(tmp_path / "alice", overrides=_settings(url, share=["shop"])) as memory:  # a long-lived MCP server
        memory.ingest([transcripts], embed=False)
        with psycopg.connect(url, autocommit=True) as admin:  # a restart, a failover, a network cut
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        lost = memory.search("redirect loop", mode="keyword")
        assert {h.chunk.session_id for h in lost.hits} == {DIARY_SESSION}
        assert any(n.startswith("team memory unavailable: The team memory at") for n in lost.notes)
        back = memory.search("redirect loop", mode="keyword")
    assert {h.chunk.session_id for h in back.hits} == {SHOP_SESSION, DIARY_SESSION} and not back.notes


def test_user_filter_runs_in_the_database_so_a_busy_member_cannot_crowd_out_another(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    folder = tmp_path / "projects"
    noisy = [(f"flaky deploy pipeline again, run {n}", f"flaky deploy pipeline: retry {n}") for n in range(40)]
    write_session(folder / "bob", SHOP, "b0b00000-0000-4000-8000-000000000003", noisy)
    write_session(
        folder / "alice",
        SHOP,
        "a11ce000-0000-4000-8000-000000000004",
        [("Why is the deploy pipeline flaky?", "The cache key ignored the lock file; fixed it.")],
    )
    # A small candidate pool, so that filtering after retrieval would find none of alice's chunks.
    small = {"retrieval.keywordSearchLimit": 5, "retrieval.vectorSearchLimit": 5, "team.shareProjects": "all"}
    for user in ("bob", "alice"):
        with Memory(tmp_path / user, overrides=_settings(url, user) | small) as memory:
            memory.ingest([folder / user], embed=False)
    with Memory(tmp_path / "alice", overrides=_settings(url) | small) as memory:
        everyone = memory.search("flaky deploy pipeline", mode="keyword", limit=5)
        assert {h.chunk.user for h in everyone.hits} == {"bob"}  # bob's chunks lead the pool
        mine = memory.search("flaky deploy pipeline", mode="keyword", limit=1, user="alice")
    assert [h.chunk.user for h in mine.hits] == ["alice"]
    assert mine.hits[0].chunk.session_id.startswith("a11ce000")

    # The dashboard's search form has the same filter: a choice of the members, on team memory.
    with _dashboard(tmp_path / "alice", _settings(url) | small) as (client, token):
        everyone_page = client.get("/search", params={"token": token, "q": "flaky deploy pipeline"})
        alices_page = client.get("/search", params={"q": "flaky deploy pipeline", "member": "alice"})
        misspelt_page = client.get("/search", params={"q": "flaky deploy pipeline", "member": "alcie"})
    assert everyone_page.status_code == alices_page.status_code == misspelt_page.status_code == 200
    members = re.findall(
        r'<option value="([^"]*)"', everyone_page.text.split('name="member"', 1)[1].split("</select>")[0]
    )
    assert members == ["", "alice", "bob"] and '<option value="">every member</option>' in everyone_page.text
    assert "/session/b0b00000" in everyone_page.text and "/session/a11ce000" not in everyone_page.text
    assert '<option value="alice" selected>alice</option>' in alices_page.text
    assert "/session/a11ce000" in alices_page.text and "/session/b0b00000" not in alices_page.text
    # A name typed into the address is kept in the form, and the search says no member has it.
    assert '<option value="alcie" selected>alcie</option>' in misspelt_page.text
    assert "no member named 'alcie' has anything in team memory (members: alice, bob)" in html.unescape(
        misspelt_page.text
    )


def test_embedding_covers_both_stores_so_vector_search_finds_local_and_team_chunks(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    with Memory(tmp_path / "alice", overrides=_settings(url, share=["shop"])) as memory:
        report = memory.ingest([transcripts], embed=False)
        embedded = memory.embed_pending()  # what the session-end hook runs after its ingest
        assert embedded.vectors_added == report.chunks_added == embedded.vector_count
        result = memory.search("cookie problem after signing in on Safari, and my notes about it", mode="vector")
    assert result.mode == "vector-only"
    assert {h.chunk.session_id for h in result.hits} == {SHOP_SESSION, DIARY_SESSION}


@pytest.mark.slow
def test_prompt_memory_says_a_shared_project_lives_in_team_memory_instead_of_failing_or_going_quiet(
    causantic_home: Path, transcripts: Path, tmp_path: Path
) -> None:
    (tmp_path / "no-server").mkdir()
    dead = f"postgresql://alice:pw@/causantic?host={tmp_path / 'no-server'}&connect_timeout=2"
    with Memory(causantic_home, overrides=_settings(dead, share=["shop"])) as memory:
        memory.ingest([transcripts], embed=False)  # the diary locally; the shop waits for the server
    env = {
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": dead,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "shop",
        "CAUSANTIC_PROMPT_MEMORY_ENABLED": "true",
        "CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES": "0",
    }
    event = {
        "session_id": "0b9b4a6e-2222-4aaa-8bbb-000000000001",
        "transcript_path": "/nowhere/0b9b4a6e-2222-4aaa-8bbb-000000000001.jsonl",
        "cwd": SHOP,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Why did the SameSite cookie break Safari logins?",
    }
    done, _ = run_hook("user-prompt-submit", event, env=subprocess_env(**env))
    assert done.returncode == 0 and done.stderr == "" and done.stdout == ""
    run = read_status()["user-prompt-submit"]
    assert run["success"] and "a shared project's sessions are in team memory" in run["outcome"]


def test_forget_finds_an_unshared_project_locally_and_leaves_team_memory_alone(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    with Memory(tmp_path / "alice", overrides=_settings(url, share=["shop"])) as memory:
        memory.ingest([transcripts], embed=False)
        team_before = _team_rows(url, "SELECT count(*) FROM chunks")
        preview = memory.forget("diary")
        assert preview.count > 0 and {c.session_id for c, _ in preview.preview} == {DIARY_SESSION}
        assert memory.forget_previewed(preview).deleted == preview.count
        hits = memory.search("redirect loop", mode="keyword").hits
    assert {h.chunk.session_id for h in hits} == {SHOP_SESSION}
    assert _team_rows(url, "SELECT count(*) FROM chunks") == team_before


def test_the_bundled_examples_are_never_uploaded_even_when_everything_is_shared(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    with Memory(tmp_path / "alice", overrides=_settings(url, share="all")) as memory:
        memory.ingest([SESSIONS_DIR], embed=False, as_examples=True)
        hits = memory.search("Safari redirect loop", mode="keyword").hits
    assert hits and all(h.chunk.user is None for h in hits)  # found, and local
    assert _team_rows(url, "SELECT count(*) FROM chunks") == [(0,)]


def test_stats_and_the_dashboard_overview_count_local_projects_beside_team_memory(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    settings = _settings(url, share=["shop"])
    with Memory(tmp_path / "alice", overrides=settings) as memory:
        memory.ingest([transcripts], embed=False)
        stats = memory.stats()
        view = memory.overview()
        names = memory.project_names()
    (team_chunks,) = _team_rows(url, "SELECT COUNT(*) FROM chunks")[0]
    assert set(stats.stores) == {"team", "local"}
    local = stats.stores["local"]
    assert (stats.stores["team"].chunk_count, stats.stores["team"].session_count) == (team_chunks, 1)
    assert (local.session_count, local.project_count) == (1, 1) and local.chunk_count > 0
    # The totals are all of memory, the unshared diary included, as search answers from both.
    assert (
        stats.chunk_count == team_chunks + local.chunk_count and stats.session_count == 2 and stats.project_count == 2
    )
    assert {p.path for p in stats.projects} == {SHOP, DIARY}
    assert view.counts["chunks"] == stats.chunk_count and view.counts["projects"] == 2
    assert {p.path for p in view.projects} == {SHOP, DIARY}
    assert view.store_chunks == {"team": team_chunks, "local": local.chunk_count}
    assert names == ["diary", "shop"]  # the dashboard's choice of project (search, forget)
    env = _cli_env(tmp_path / "alice", url)
    text = CliRunner().invoke(cli, ["stats"], env=env, terminal_width=80)
    assert text.exit_code == 0, text.output
    assert (
        f"{team_chunks} chunk{'' if team_chunks == 1 else 's'}, 1 session, 1 project" in text.output
        and "local (unshared)" in text.output
    )
    # The dashboard's overview page shows the diary (a local project) beside the shared shop.
    from starlette.testclient import TestClient

    from causantic.dashboard.app import create_app
    from causantic.dashboard.security import Secrets

    secrets = Secrets(port=8765)
    app = create_app(secrets, opener=lambda: Memory(tmp_path / "alice", overrides=settings))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        page = client.get("/", params={"token": secrets.token})
        # Its link opens: the diary's timeline and session come from the local store.
        timeline = client.get("/project", params={"name": "diary"})
        session = client.get(f"/session/{DIARY_SESSION}")
    assert page.status_code == 200 and "diary" in page.text and "shop" in page.text
    assert timeline.status_code == 200 and DIARY_SESSION[:8] in timeline.text
    assert session.status_code == 200 and "Keep these notes to myself" in session.text
    assert f"your local memory (projects not shared) {local.chunk_count}" in page.text


def test_stats_with_team_memory_down_shows_local_figures_and_says_why_in_one_note(
    silent_server: str, transcripts: Path, tmp_path: Path
) -> None:
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "alice"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": silent_server,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "shop",
        "CAUSANTIC_TEAM_CONNECT_TIMEOUT_SECONDS": "2",
    }
    assert CliRunner().invoke(cli, ["ingest", str(transcripts), "--no-embed"], env=env).exit_code == 0
    with Memory(tmp_path / "alice", overrides={"storage.backend": "sqlite"}) as local:
        kept = local.stats()  # what this machine holds: the diary (the shop waits for the server)
    text = CliRunner().invoke(cli, ["stats"], env=env, terminal_width=100)
    assert text.exit_code == 0 and "Traceback" not in text.output
    # Local figures, and one note: what (team memory unavailable), where (the server, never the
    # password), how long it waited (the configured key) and what to do.
    assert f"chunks │ {kept.chunk_count} " in " ".join(text.output.split())
    notes = [line for line in text.output.splitlines() if "Cannot reach the team memory" in line]
    assert len(notes) == 1
    (note,) = notes
    assert note.startswith("Warning: these are local memory's figures only.")
    assert "127.0.0.1" in note and "no answer within 2 s: team.connectTimeoutSeconds" in note
    assert "`causantic team status` tries again" in note and "pw@" not in text.output
    out = CliRunner().invoke(cli, ["stats", "--json"], env=env)
    assert out.exit_code == 0, out.output
    figures = json.loads(out.output)
    assert figures["chunk_count"] == kept.chunk_count and figures["session_count"] == 1
    assert figures["team_unavailable"]["reason"] == "unreachable"
    assert figures["team_unavailable"]["message"].startswith("Cannot reach the team memory at PostgreSQL 127.0.0.1")


def test_stats_says_nothing_of_team_memory_while_it_answers(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    with Memory(tmp_path / "alice", overrides=_settings(url, share=["shop"])) as memory:
        memory.ingest([transcripts], embed=False)
        assert memory.stats().team_unavailable is None


def test_a_session_kept_locally_then_uploaded_is_counted_once_in_stats_and_the_overview(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol")) as memory:  # nothing shared yet: all local
        memory.ingest([transcripts], embed=False)
        before = memory.stats()
    assert before.session_count == 2 and before.stores["local"].session_count == 2
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol", ["shop"])) as memory:
        memory.ingest([transcripts], embed=False, force=True)  # the shop is uploaded; the local copy stays
        stats = memory.stats()
        view = memory.overview()
    (team_chunks,) = _team_rows(url, "SELECT COUNT(*) FROM chunks")[0]
    diary_chunks = before.projects[[p.path for p in before.projects].index(DIARY)].chunk_count
    assert stats.stores["local"].session_count == 2 and stats.stores["team"].session_count == 1  # what each store holds
    # All of memory: two sessions, the shop's chunks once (team memory's copy) and the diary's.
    assert stats.session_count == 2 and stats.project_count == 2
    assert stats.chunk_count == team_chunks + diary_chunks
    assert (stats.sources["claude-code"].session_count, stats.sources["claude-code"].chunk_count) == (
        2,
        stats.chunk_count,
    )
    assert (view.counts["sessions"], view.counts["chunks"]) == (2, stats.chunk_count)
    text = CliRunner().invoke(
        cli,
        ["stats", "--json"],
        env=_cli_env(tmp_path / "carol", url, user="carol"),
    )
    assert json.loads(text.output)["session_count"] == 2


def test_topics_of_both_stores_are_listed_labelled_by_where_they_live_in_the_cli_and_the_dashboard(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    settings = _settings(url, share=["shop"])
    with Memory(tmp_path / "alice", overrides=settings) as memory:
        memory.ingest([transcripts], embed=False)
        _one_topic_in_each_store(memory, "safari cookie redirect", "private redirect notes")
        topics = memory.topics()
        diary = memory.topics("diary")
    assert {(t.label, t.store) for t in topics} == {
        ("safari cookie redirect", "team"),
        ("private redirect notes", "local"),
    }
    assert [t.id for t in topics] == [1, 1]  # the same number in two stores: the store tells them apart
    assert [(t.label, t.store) for t in diary] == [("private redirect notes", "local")]
    env = _cli_env(tmp_path / "alice", url)
    text = CliRunner().invoke(cli, ["clusters"], env=env, terminal_width=140)
    assert text.exit_code == 0, text.output
    rows = {line.split("│")[1].strip(): line for line in text.output.splitlines() if "redirect" in line}
    assert "team memory" in rows["safari cookie redirect"] and "local (unshared)" in rows["private redirect notes"]
    everything = json.loads(CliRunner().invoke(cli, ["clusters", "--json"], env=env).output)
    listed = everything["topics"]
    # Both stores' chunks are counted, those in a topic and those in none.
    stats = json.loads(CliRunner().invoke(cli, ["stats", "--json"], env=env).output)
    assert (
        everything["chunk_count"] == stats["chunk_count"] == everything["in_no_topic"] + sum(t["size"] for t in listed)
    )
    assert {(t["label"], t["store"]) for t in listed} == {
        ("safari cookie redirect", "team"),
        ("private redirect notes", "local"),
    }
    with _dashboard(tmp_path / "alice", settings) as (client, token):
        page = client.get("/topics", params={"token": token})
        team_topic = client.get("/topics/1")
        local_topic = client.get("/topics/1", params={"store": "local"})
    assert page.status_code == 200
    assert "safari cookie redirect" in page.text and "private redirect notes" in page.text
    assert 'href="/topics/1?store=local"' in page.text and "local (unshared)" in page.text
    assert team_topic.status_code == 200 and "safari cookie redirect" in team_topic.text
    assert "SameSite" in team_topic.text and "Keep these notes" not in team_topic.text
    assert local_topic.status_code == 200 and "private redirect notes" in local_topic.text
    assert "Keep these notes to myself" in local_topic.text and "local memory (unshared)" in local_topic.text


def test_a_session_kept_locally_then_uploaded_is_counted_once_among_the_chunks_in_no_topic(
    postgres_server: Any, transcripts: Path, tmp_path: Path
) -> None:
    """The topics views said "1 of 3 chunks (33%) belong to no topic" of a memory of 2 chunks, each in
    a topic: the shop's local copy was counted beside team memory's."""
    url = new_database(postgres_server)
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol")) as memory:  # nothing shared yet: all local
        memory.ingest([transcripts], embed=False)
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol", ["shop"])) as memory:
        memory.ingest([transcripts], embed=False, force=True)  # the shop is uploaded; the local copy stays
        _one_topic_in_each_store(memory, "safari cookie redirect", "private redirect notes")
    env = _cli_env(tmp_path / "carol", url, user="carol")
    stats = json.loads(CliRunner().invoke(cli, ["stats", "--json"], env=env).output)
    (team_chunks,) = _team_rows(url, "SELECT COUNT(*) FROM chunks")[0]
    for project, chunks in ((None, stats["chunk_count"]), ("shop", team_chunks)):
        scope = ["--project", project] if project else []
        listed = json.loads(CliRunner().invoke(cli, ["clusters", "--json", *scope], env=env).output)
        assert (listed["chunk_count"], listed["in_no_topic"]) == (chunks, 0), project
    said = CliRunner().invoke(cli, ["clusters"], env=env, terminal_width=140).output
    assert f"0 of {stats['chunk_count']} chunks (0%) belong to no topic." in said
    with _dashboard(tmp_path / "carol", _settings(url, "carol", ["shop"])) as (client, token):
        page = client.get("/topics", params={"token": token}).text
    assert f"0 of {stats['chunk_count']} chunks (0%) belong to no topic." in html.unescape(page)


def test_a_session_held_by_both_stores_counts_its_edges_agents_and_vectors_once(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    folder = tmp_path / "projects"
    shutil.copytree(DOCS_TEAM, folder / "-home-synthetic-docs-team", ignore=shutil.ignore_patterns("*.md"))
    write_session(folder, DIARY, DIARY_SESSION, [("My private notes", "Keep these notes to myself.")])
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol")) as memory:  # nothing shared yet: all local
        memory.ingest([folder])
        alone = memory.stats()
    assert alone.agent_count >= 2 and alone.edges.total > 0 and alone.vector_count == alone.chunk_count
    with Memory(tmp_path / "carol", overrides=_settings(url, "carol", ["docs-team"])) as memory:
        memory.ingest([folder], force=True)  # the team session is uploaded; the local copy stays
        stats = memory.stats()
        view = memory.overview()
    assert stats.stores["local"].session_count == 2 and stats.stores["team"].session_count == 1
    # Memory holds what it held before the upload: every figure counts the session once.
    assert (stats.session_count, stats.chunk_count, stats.agent_count) == (
        alone.session_count,
        alone.chunk_count,
        alone.agent_count,
    )
    assert stats.edges == alone.edges
    assert (stats.vector_count, stats.chunks_without_vectors) == (alone.vector_count, 0)
    assert view.counts["edges"] == {"total": alone.edges.total, "by_type": alone.edges.by_type}
    assert (view.counts["agents"], view.vectors, view.without_vectors) == (alone.agent_count, alone.vector_count, 0)


def test_the_dashboard_topic_map_draws_both_stores_topics_each_linking_to_its_own(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    folder = tmp_path / "projects"
    turns = [
        (f"Step {n}: the redirect loop after login, part {n}", f"Checked the cookie flags, part {n}.") for n in range(4)
    ]
    write_session(folder, SHOP, SHOP_SESSION, turns)
    write_session(
        folder, DIARY, DIARY_SESSION, [(f"Private note {n} on my diary", f"Noted, entry {n}.") for n in range(4)]
    )
    settings = _settings(url, share=["shop"])
    with Memory(tmp_path / "alice", overrides=settings) as memory:
        memory.ingest([folder])
        _one_topic_in_each_store(memory, "safari cookie redirect", "private diary notes")
        drawn = memory.topic_map(memory.topic_sizes())
    with _dashboard(tmp_path / "alice", settings) as (client, token):
        page = client.get("/topics", params={"token": token}).text
    assert f'href="/session/{DIARY_SESSION}?at=' in page and f'href="/session/{SHOP_SESSION}?at=' in page
    # The dots of the two topics numbered 1 differ in colour, and a label opens its own store's topic.
    dots = re.findall(r'href="/session/([^?]+)\?at=[^"]+" class="pt"[^>]*><circle [^>]* class="(c\d+)"', page)
    assert len({colour for session, colour in dots if session == SHOP_SESSION}) == 1
    assert {c for s, c in dots if s == SHOP_SESSION}.isdisjoint({c for s, c in dots if s == DIARY_SESSION})
    assert 'href="/topics/1?store=local" class="lbl"' in page and 'href="/topics/1" class="lbl"' in page
    # One map of both stores: each point and topic says which store it is from (both number theirs 1).
    assert {(p.session_id, p.store, p.topic_id) for p in drawn.points} == {
        (SHOP_SESSION, "team", 1),
        (DIARY_SESSION, "local", 1),
    }
    assert {(t.label, t.store) for t in drawn.topics} == {
        ("safari cookie redirect", "team"),
        ("private diary notes", "local"),
    }


def test_with_team_memory_down_an_empty_local_store_does_not_send_the_member_to_batch_ingest(
    tmp_path: Path,
) -> None:
    # A member whose sessions all live in team memory, on a day the server refuses connections: the
    # local store is empty, and "run `causantic batch-ingest` first" would be the wrong advice.
    overrides = {"storage.backend": "postgres", "storage.postgresUrl": "postgresql://alice@127.0.0.1:1/causantic"}
    with Memory(tmp_path / "alice", overrides=overrides) as memory:
        for notes in (memory.search("login redirect").notes, memory.recall("login redirect").notes):
            assert notes[0].startswith("team memory unavailable:")
            assert "local memory holds nothing (with team memory configured, sessions are stored there)" in notes
            assert not any("batch-ingest" in note for note in notes)
