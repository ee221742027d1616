"""Two ingests making projects at the same moment on team memory: each project is named apart from the
others of its folder name, a Gemini CLI session never stays in a stand-in project once another
session names its folder, and no ingest writes a row before it holds the projects it may rename.

Each race is made to happen, not hoped for: one ingest runs inside a transaction held open (a member's
ingest caught between writing a session group and committing it) while a second store, on its own
connection, ingests beside it; the holder commits once the second is seen waiting for a lock (in
``pg_locks``, from a third connection) or has finished. Before the fix the second never waited, and
the result after both commits showed the race: two projects named ``api``, a stand-in left behind.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from postgres_server import backend_settings, interleaved
from transcript_files import write_session

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services

pytestmark = pytest.mark.slow

SHOP = "/work/shop"
BLOG = "/work/blog"


@pytest.fixture
def team_config(request: pytest.FixtureRequest) -> Config:
    return backend_settings(request, "postgres")


def _session_id(n: int) -> str:
    return f"0000{n:04x}-0000-4000-8000-{n:012d}"


def _claude(folder: Path, cwd: str, n: int) -> Path:
    return write_session(folder, cwd, _session_id(n), [(f"fix the upload retry in {cwd}", "Fixed: it backs off now.")])


def _two_project_file(folder: Path, first: tuple[str, str], second: tuple[str, str]) -> Path:
    """One transcript file holding two sessions, each in its own project (a resumed session's file
    also holds the one it resumed): ``first`` and ``second`` are (cwd, session id), in file order.
    Its group's transaction writes both projects."""
    texts = [
        write_session(folder / sid, cwd, sid, [(f"deploy {cwd}", "Deployed.")]).read_text(encoding="utf-8")
        for cwd, sid in (first, second)
    ]
    both = folder / "group" / f"{second[1]}.jsonl"
    both.parent.mkdir(parents=True, exist_ok=True)
    both.write_text("".join(texts), encoding="utf-8")
    return both


def _gemini(folder: Path, cwd: str, n: int) -> Path:
    """A Gemini CLI session in ``cwd`` that names no path: known only by the hash of its folder, so it
    is filed under a stand-in project until a session names the folder."""
    document = {
        "sessionId": _session_id(n),
        "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
        "messages": [
            {"id": "u1", "type": "user", "content": "why does the upload loop", "timestamp": "2026-11-02T10:00:00Z"},
            {"id": "g1", "type": "gemini", "content": "It never backs off.", "timestamp": "2026-11-02T10:00:05Z"},
        ],
    }
    path = folder / "gemini" / f"g{n}" / "chats" / f"session-2026-11-02T10-00-{n}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _ingest(services: Services, path: Path) -> None:
    report = ingest_paths(services, [path], embed=False, workers=1)
    assert report.errors == [] and report.sessions > 0, report.errors


def _assert_ran(failures: list[BaseException]) -> None:
    assert failures == [], [f"{type(e).__name__}: {e}" for e in failures]


def _projects(services: Services) -> list[tuple[str, str]]:
    """Every project's name and path, in order of name."""
    return sorted(services.store.conn.execute("SELECT name, path FROM projects"))  # type: ignore[attr-defined]


def test_two_projects_of_one_folder_name_made_at_the_same_moment_are_named_apart(
    team_config: Config, tmp_path: Path
) -> None:
    """Each ingest named its new project from the projects it saw: neither saw the other's, not yet
    committed, so both were ``api`` and `--project api` named two projects."""
    first_api, second_api = _claude(tmp_path, "/work/api", 1), _claude(tmp_path, "/clients/api", 2)
    with open_services(team_config) as first, open_services(team_config) as second:
        waited, failures = interleaved(
            first, [lambda: _ingest(first, first_api)], second, lambda: _ingest(second, second_api)
        )
        _assert_ran(failures)
        assert _projects(first) == [("clients/api", "/clients/api"), ("work/api", "/work/api")]
        assert waited  # for the first's project, to name its own apart from it


@pytest.mark.parametrize("first_source", ["gemini", "claude"])
def test_a_gemini_session_ingested_beside_a_session_naming_its_folder_joins_that_project(
    team_config: Config, tmp_path: Path, first_source: str
) -> None:
    """A Gemini CLI session is filed under a stand-in project (``gemini:<hash>``) until a session names
    its folder, whose ingest then moves it there. Ingested at the same moment, neither saw the other's
    project: the stand-in outlived the session naming its folder, a second project of one folder."""
    gemini, claude = _gemini(tmp_path, SHOP, 1), _claude(tmp_path, SHOP, 2)
    held, beside = (gemini, claude) if first_source == "gemini" else (claude, gemini)
    with open_services(team_config) as first, open_services(team_config) as second:
        waited, failures = interleaved(first, [lambda: _ingest(first, held)], second, lambda: _ingest(second, beside))
        _assert_ran(failures)
        assert _projects(first) == [("shop", SHOP)]
        (shop,) = first.store.find_projects(SHOP)
        sessions = {s.session_id: s.source for s in first.store.session_summaries(shop.id)}
        assert sessions == {_session_id(1): "gemini", _session_id(2): "claude-code"}
        assert waited


def test_a_new_project_renaming_its_folder_names_projects_waits_for_their_locks_first(
    team_config: Config, tmp_path: Path
) -> None:
    """A new ``/work/api`` renames the existing ``api`` (``/old/api``) apart from it. The ingest making
    it, its group also writing the blog, took the blog's lock first and the old api's when renaming
    it; a forget of chunks in both projects, holding the old api's lock and then asking for the
    blog's, deadlocked with it (``deadlock detected``, and one of the two rolled back)."""
    with open_services(team_config) as first, open_services(team_config) as second:
        _ingest(first, _claude(tmp_path / "before", "/old/api", 1))  # the lower id
        _ingest(first, _claude(tmp_path / "before", BLOG, 2))
        ((old,), (blog,)) = first.store.find_projects("/old/api"), first.store.find_projects(BLOG)
        group = _two_project_file(tmp_path, (BLOG, _session_id(3)), ("/work/api", _session_id(4)))
        waited, failures = interleaved(
            first,
            [lambda: first.store.lock_projects([old.id]), lambda: first.store.lock_projects([blog.id])],
            second,
            lambda: _ingest(second, group),
        )
        _assert_ran(failures)
        assert waited
        assert _projects(first) == [("blog", BLOG), ("old/api", "/old/api"), ("work/api", "/work/api")]
        assert len(first.store.session_chunk_ids(_session_id(4))) == 1


def test_a_stand_in_for_the_path_of_a_cwds_recorded_project_is_locked_with_the_groups_projects(
    team_config: Config, tmp_path: Path
) -> None:
    """An older release recorded ``/old/api/web`` as a cwd of the project ``/old/api``, and a Gemini CLI
    session run in ``/old/api`` sits in its stand-in (made first: the lower id). A session in the cwd
    joins the recorded project and absorbs that stand-in, whose lock the group took only when absorbing
    it, after the project's: a forget holding the stand-in and then asking for the project deadlocked
    with it."""
    with open_services(team_config) as first, open_services(team_config) as second:
        _ingest(first, _gemini(tmp_path, "/old/api", 1))
        [stand_in] = first.store.projects_by_id(first.store.projects_with_chunks())
        project = first.store.resolve_project("/old/api/web", "/old/api")
        assert stand_in.id < project.id
        waited, failures = interleaved(
            first,
            [lambda: first.store.lock_projects([stand_in.id]), lambda: first.store.lock_projects([project.id])],
            second,
            lambda: _ingest(second, _claude(tmp_path, "/old/api/web", 2)),
        )
        _assert_ran(failures)
        assert waited
        assert _projects(first) == [("api", "/old/api")]
        sessions = {s.session_id: s.source for s in first.store.session_summaries(project.id)}
        assert sessions == {_session_id(1): "gemini", _session_id(2): "claude-code"}
