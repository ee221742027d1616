"""Two members on one team database, each with their own home and transcripts, as a team first
meets it: a clone of the team's repository kept under another folder name, a project kept private
beside the shared one, `batch-ingest --force`, and a project shared after its sessions were kept
locally. What is shared reaches team memory, what is not leaves no trace there, and the ingest
summary counts each transcript file once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from postgres_server import new_database
from starlette.testclient import TestClient
from transcript_files import git_checkout, write_session

from causantic.cli.main import cli
from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.facade import Memory

DIARY = "/home/bob/diary"  # bob's private project: never shared
FIX_ASKED, FIX = "why does the cart total drift", "the cart total drifted: rounding per line, now rounded once"


@pytest.fixture
def url(postgres_server: Any) -> str:
    return new_database(postgres_server)


def _env(tmp_path: Path, url: str, user: str, share: str) -> dict[str, str]:
    return {
        "CAUSANTIC_HOME": str(tmp_path / user / "causantic"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_USER": user,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": share,
    }


def _ingest(env: dict[str, str], folder: Path, *more: str) -> dict[str, Any]:
    done = CliRunner().invoke(cli, ["ingest", "--no-embed", "--json", *more, str(folder)], env=env)
    assert done.exit_code == 0, done.output
    return dict(json.loads(done.output))


def _team_files(url: str, member: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT path FROM files WHERE member = %s ORDER BY path", (member,))]


def _bobs_diary(folder: Path) -> list[Path]:
    """Bob's private project: a session, a sub-agent's warm-up (no chunk) and an empty transcript."""
    session = write_session(folder, DIARY, "d1a20000-0000-4000-8000-000000000002", [("my notes", "kept to myself")])
    warmup = session.parent / "agent-a1593bc.jsonl"
    line = {
        "parentUuid": None,
        "isSidechain": True,
        "cwd": DIARY,
        "sessionId": "d1a20000-0000-4000-8000-000000000003",
        "agentId": "a1593bc",
        "type": "user",
        "message": {"role": "user", "content": "Warmup"},
        "uuid": "d78e4428-159f-4b51-af83-552cc9b843b6",
        "timestamp": "2026-11-02T09:07:32.651Z",
    }
    warmup.write_text(json.dumps(line) + "\n", encoding="utf-8")
    empty = session.parent / "e0000000-0000-4000-8000-000000000004.jsonl"
    empty.write_text("", encoding="utf-8")
    return [session, warmup, empty]


def test_a_members_clone_under_another_folder_name_is_shared_by_the_teams_name_for_it(url: str, tmp_path: Path) -> None:
    """Bob shares "shop", the team's name for acme/shop, and keeps his clone at ~/src/shop-clone:
    his sessions stayed local without a word, and alice never saw them. A fork of another
    repository under a folder of that name stays local."""
    alices = git_checkout(tmp_path / "alice" / "code" / "shop", "git@github.com:acme/shop.git")
    bobs = git_checkout(tmp_path / "bob" / "src" / "shop-clone", "https://github.com/acme/shop")
    fork = git_checkout(tmp_path / "bob" / "play" / "shop-fork", "git@github.com:bob/shop.git")
    alice, bob = _env(tmp_path, url, "alice", "shop"), _env(tmp_path, url, "bob", "shop")
    write_session(tmp_path / "a", str(alices), "a0000000-0000-4000-8000-000000000001", [("cart total", "fixed")])
    _ingest(alice, tmp_path / "a")
    write_session(tmp_path / "b", str(bobs), "b0000000-0000-4000-8000-000000000001", [("cart rounding", "fixed")])
    write_session(tmp_path / "b", str(fork), "b0000000-0000-4000-8000-000000000002", [("my fork", "mine")])
    _ingest(bob, tmp_path / "b")

    listed = CliRunner().invoke(cli, ["list-projects", "--json"], env=alice)
    projects = {p["name"]: p["members"] for p in json.loads(listed.output)["projects"]}
    assert projects == {"shop": {"alice": 1, "bob": 1}}
    assert not any("shop-fork" in path for path in _team_files(url, "bob"))


def test_a_forced_ingest_leaves_no_trace_of_an_unshared_project_in_team_memory_and_counts_each_file_once(
    url: str, tmp_path: Path
) -> None:
    """Under --force (and after ingest's rules change) each store reads every file: team memory
    marked the files of bob's private project that held no chunk (a warm-up, an empty file), their
    paths naming its folder to every member, and the summary counted them twice and said files
    "wait for team memory" that local memory had taken."""
    bobs = git_checkout(tmp_path / "bob" / "src" / "shop", "git@github.com:acme/shop.git")
    bob = _env(tmp_path, url, "bob", "shop")
    folder = tmp_path / "b"
    write_session(folder, str(bobs), "b0000000-0000-4000-8000-000000000001", [("cart rounding", "fixed")])
    files = 1 + len(_bobs_diary(folder))
    first = _ingest(bob, folder)
    assert (first["files"], first["files_waiting"]) == (files, 0)
    forced = _ingest(bob, folder, "--force")
    assert (forced["files"], forced["files_unchanged"], forced["files_waiting"]) == (files, 0, 0)
    assert [Path(p).parent.name for p in _team_files(url, "bob")] == [str(bobs).strip("/").replace("/", "-")]
    again = _ingest(bob, folder)
    assert (again["files"], again["files_unchanged"]) == (files, files)


def test_a_project_shared_after_its_sessions_were_kept_locally_counts_each_file_once(url: str, tmp_path: Path) -> None:
    """The uploaded sessions stay in local memory too (until forgotten there): each file was counted
    by both stores, "Nothing new: 2 files" for one."""
    folder = tmp_path / "b"
    write_session(folder, "/home/bob/shop", "b0000000-0000-4000-8000-000000000001", [("cart rounding", "fixed")])
    _ingest(_env(tmp_path, url, "bob", "nothing-yet"), folder)
    shared = _env(tmp_path, url, "bob", "shop")
    uploaded = _ingest(shared, folder, "--force")
    assert (uploaded["files"], uploaded["session_count"]) == (1, 1)
    again = _ingest(shared, folder)
    assert (again["files"], again["files_unchanged"]) == (1, 1)


def test_stats_beside_team_memory_names_each_stores_keyword_index(url: str, tmp_path: Path) -> None:
    """It said "keyword index │ on (PostgreSQL full-text search); on": the second "on" was the local store's."""
    write_session(tmp_path / "b", DIARY, "d1a20000-0000-4000-8000-000000000002", [("my notes", "kept to myself")])
    bob = _env(tmp_path, url, "bob", "shop")
    _ingest(bob, tmp_path / "b")
    figures = json.loads(CliRunner().invoke(cli, ["stats", "--json"], env=bob).output)
    assert figures["keyword_index"] == "on (PostgreSQL full-text search); on (SQLite FTS5)"


def test_the_dashboards_answers_say_whose_each_chunk_is_as_the_cli_does(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI says 'User: bob' and 'Local (not shared)'; the dashboard's search and recall said neither."""
    write_session(tmp_path / "b", "/home/bob/shop", "b0000000-0000-4000-8000-000000000001", [(FIX_ASKED, FIX)])
    _ingest(_env(tmp_path, url, "bob", "shop"), tmp_path / "b")
    alice = _env(tmp_path, url, "alice", "shop")
    write_session(tmp_path / "a", "/home/alice/notes", "a0000000-0000-4000-8000-000000000001", [(FIX_ASKED, "noted")])
    _ingest(alice, tmp_path / "a")
    for name, value in alice.items():
        monkeypatch.setenv(name, value)
    secrets = Secrets(port=8766)
    with TestClient(create_app(secrets, opener=Memory), base_url="http://127.0.0.1:8766") as client:
        client.get("/", params={"token": secrets.token})
        for kind in ("search", "recall"):
            page = client.get("/search", params={"q": FIX_ASKED, "kind": kind, "mode": "keyword"}).text
            assert '<span class="member" title="the team member whose session it is">bob</span>' in page, kind
            assert '<span class="member muted">local (not shared)</span>' in page, kind


def test_an_ingest_into_both_stores_says_how_many_chunks_each_embeds(url: str, tmp_path: Path) -> None:
    """It said "embedding 1 chunk" (the local store's) and then embedded 2: team memory's went unsaid."""
    bob = _env(tmp_path, url, "bob", "shop")
    write_session(tmp_path / "b", "/home/bob/shop", "b0000000-0000-4000-8000-000000000001", [(FIX_ASKED, FIX)])
    _bobs_diary(tmp_path / "b")
    done = CliRunner().invoke(cli, ["ingest", str(tmp_path / "b")], env=bob)
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "embedding 1 chunk for vector search" in said and "Embedding 1 more chunk for vector search." in said
    assert "vectors added │ 2" in said
