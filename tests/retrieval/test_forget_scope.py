"""A forget selects exactly what its arguments name: `%`, `_` and empty strings are characters or
errors, never wildcards or "no filter" (issue 12). Through the store's scope, the CLI and MCP, on the
bundled example project (acme-shop: 3 sessions, 6 chunks; session 4005b823 holds 2)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from causantic.cli.main import cli
from causantic.config import Config
from causantic.errors import CausanticError
from causantic.examples import SESSIONS_DIR
from causantic.facade import Memory
from causantic.ingest.service import ingest_paths
from causantic.mcp.server import build_server
from causantic.retrieval import options
from causantic.services import open_services
from causantic.store.records import ChunkScope

SESSION = "4005b823-fa0d-5890-9dc8-e686765e4267"


@pytest.fixture(autouse=True)
def acme() -> None:
    with open_services(Config()) as services:
        report = ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
    assert not report.errors and report.chunks_added == 6


def _chunks(**scope: Any) -> list[str]:
    with open_services(Config()) as services:
        [project] = services.store.find_projects("acme-shop")
        return [c.id for c in services.store.chunks_in(ChunkScope(project_ids=(project.id,), **scope))]


def _left() -> int:
    return len(_chunks())


@pytest.mark.parametrize("prefix", ["%", "_", "4005b8%", "4005b82_", "4005b823%", "\\", "4005b823\\"])
def test_a_session_prefix_is_matched_literally_never_as_a_pattern(prefix: str) -> None:
    assert _chunks(session_prefix=prefix) == []
    assert len(_chunks(session_prefix="4005b823")) == 2  # the real prefix still finds the session
    assert len(_chunks(session_prefix=SESSION)) == len(_chunks(session_id=SESSION)) == 2


@pytest.mark.parametrize(
    "scope",
    [{"session_prefix": ""}, {"session_id": ""}, {"agent": ""}, {"member": ""}, {"project_ids": ()}],
    ids=str,
)
def test_an_empty_scope_value_is_refused_rather_than_read_as_everything(scope: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="empty"):
        ChunkScope(**scope)


def _forget(*args: str) -> Any:
    return CliRunner().invoke(cli, ["forget", *args], catch_exceptions=False)


@pytest.mark.parametrize("session", ["%%%%", "____", "4005b82_", "4005%"])
def test_cli_forget_of_a_wildcard_session_deletes_nothing(session: str) -> None:
    result = _forget("acme-shop", "--session", session, "--yes", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert (out["chunk_count"], out["deleted"], out["whole_project"]) == (0, 0, False)
    assert _left() == 6


@pytest.mark.parametrize(
    ("session", "says"),
    [("", "session id is empty"), ("  ", "session id is empty"), ("%", "at least"), (" 4_ ", "at least")],
    ids=repr,
)
def test_cli_forget_with_an_empty_or_short_session_is_refused_not_the_whole_project(session: str, says: str) -> None:
    # Shorter than options.SESSION_ID_MIN: a usage error in forget's words, before anything is previewed.
    result = _forget("acme-shop", "--session", session, "--yes")
    assert result.exit_code == 2 and says in result.output, result.output
    if says == "at least":
        assert f"at least {options.SESSION_ID_MIN} characters of the session id" in result.output
    assert _left() == 6


@pytest.mark.parametrize("session", ["4", "400", "  ", " 400 "], ids=repr)
def test_the_library_forget_refuses_a_session_prefix_too_short_to_name_one_session(session: str) -> None:
    # Memory.forget is what the CLI, MCP and dashboard call; a library caller gets the same refusal.
    # "4" starts the id of acme-shop's session 4005b823: without the minimum it would delete it.
    with Memory(config=Config()) as memory, pytest.raises(CausanticError, match="session id") as refused:
        memory.forget("acme-shop", session_id=session, dry_run=False)
    if session.strip():
        assert f"at least {options.SESSION_ID_MIN} characters" in str(refused.value)
    assert _left() == 6
    with Memory(config=Config()) as memory:  # four characters, spaces around them dropped, are enough
        assert memory.forget("acme-shop", session_id=" 4005 ").count == 2


@pytest.mark.parametrize("project", ["", " ", "%", "_", "%/acme-shop"])
def test_cli_forget_of_an_empty_or_wildcard_project_names_no_project(project: str) -> None:
    result = _forget(project, "--yes")
    if "/" in project:  # a folder memory has never seen: an answer, not an error
        assert result.exit_code == 0 and result.output.startswith(f"Nothing in memory for {project} yet")
    else:
        assert result.exit_code == 1 and "project" in result.output.lower()
    assert _left() == 6


def test_cli_forget_of_a_real_prefix_deletes_exactly_that_session() -> None:
    result = _forget("acme-shop", "--session", "4005b823", "--yes", "--json")
    assert json.loads(result.output)["deleted"] == 2
    assert _left() == 4 and _chunks(session_id=SESSION) == []


def test_only_mine_is_refused_in_local_memory_where_every_chunk_is_yours() -> None:
    """Team memory's --only-mine leaves other members' chunks alone; local memory has no other members,
    so the switch is refused in so many words (not silently ignored), and nothing is deleted."""
    refused = _forget("acme-shop", "--only-mine", "--yes")
    assert refused.exit_code == 1, refused.output
    assert "'acme-shop' is in local memory, where every chunk is yours" in " ".join(refused.output.split())
    [mcp] = _mcp(("forget", {"project": "acme-shop", "only_mine": True}))  # refused at the preview already
    assert mcp.is_error and "forgetting only your own chunks (only-mine) is for team memory" in mcp.content[0].text
    whole = _forget("acme-shop", "--all", "--only-mine", "--yes")
    assert whole.exit_code == 2 and "--whole-project (--all) takes no filter" in whole.output
    assert _left() == 6 and _chunks(member="alice") == []  # a member's scope covers no local chunk


def _mcp(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def test_mcp_forget_of_a_wildcard_or_empty_session_deletes_nothing() -> None:
    real = {"project": "acme-shop", "dry_run": False, "expected_count": 0}  # a pattern must match no chunk
    calls = [("forget", {**real, "session": s}) for s in ("%%%%", "____", "4005%")]
    refused = [("forget", {**real, "session": s}) for s in ("", "4")]  # "4" starts 4005b823's id
    results = _mcp(*calls, *refused)
    for result in results[:-2]:
        assert not result.is_error, result.content[0].text
        assert result.content[0].text == "Nothing in 'acme-shop' matches: nothing was deleted."
    assert results[-2].is_error and "session id is empty" in results[-2].content[0].text
    assert results[-1].is_error and "at least 4 characters of the session id" in results[-1].content[0].text
    assert _left() == 6
