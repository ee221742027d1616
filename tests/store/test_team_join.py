"""`causantic team join URL [--share PROJECT …] [--user NAME]`: a member points Causantic at team
memory with one command instead of editing config.json by hand.

Real PostgreSQL (the ``postgres_server`` fixture) with the team's own roles, real SQLite files, the
real CLI through click's runner with nothing but ``CAUSANTIC_HOME`` in its environment.
"""

from __future__ import annotations

import json
import socket
import stat
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from postgres_server import new_database
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.services import team_init

SHOP, DIARY = "/home/dev/shop", "/home/dev/diary"
SHOP_SESSION = "5a0b0000-0000-4000-8000-00000000000a"
DIARY_SESSION = "d1a20000-0000-4000-8000-00000000000b"


def _role(url: str, member: bool = True) -> str:
    """A new login role on the server of ``url`` (granted causantic_member unless ``member`` is off)."""
    name = f"m_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN")
        if member:
            conn.execute(f"GRANT causantic_member TO {name}")
    return name


@pytest.fixture
def team(postgres_server: Any) -> str:
    """A team database its owner set up (`team init`)."""
    url = new_database(postgres_server)
    team_init(url)
    return url


def _run(home: Path, *args: str) -> Result:
    """The CLI as a member with nothing in the environment but their data folder."""
    return CliRunner().invoke(cli, list(args), env={"CAUSANTIC_HOME": str(home)}, catch_exceptions=False)


def _said(result: Result) -> str:
    return " ".join(result.output.split())


def test_join_checks_the_server_writes_the_members_settings_and_says_what_the_next_ingest_shares(
    team: str, tmp_path: Path
) -> None:
    home = tmp_path / "alice"
    folder = tmp_path / "projects"
    write_session(folder, SHOP, SHOP_SESSION, [("the checkout rounding", "Rounded the checkout total to cents.")])
    write_session(folder, DIARY, DIARY_SESSION, [("my private notes", "Kept to myself.")])
    assert _run(home, "batch-ingest", str(folder), "--no-embed").exit_code == 0  # local memory, before joining
    home.joinpath("config.json").write_text(json.dumps({"retrieval": {"mmrLambda": 0.6}}), encoding="utf-8")
    url = psycopg.conninfo.make_conninfo(team, user=_role(team))

    joined = _run(home, "team", "join", url, "--share", "shop", "--user", "alice")
    assert joined.exit_code == 0, joined.output
    said = _said(joined)
    assert "answers you as alice, role " in said and "no other member has ingested anything yet" in said
    assert f"Wrote {home / 'config.json'}:" in said
    assert 'storage.backend (not set) -> "postgres"' in said and "storage.postgresUrl (not set) -> **********" in said
    assert 'team.shareProjects (not set) -> ["shop"]' in said and 'team.user (not set) -> "alice"' in said
    assert url not in joined.output  # the URL may hold a password: never printed
    assert "The next `causantic batch-ingest` shares: shop (1 session in your memory; " in said
    assert "`causantic batch-ingest --force` uploads the 1 session kept locally so far)" in said
    assert "Stays in your local memory only: diary (1 session)." in said
    # The file: the member's settings beside the key that was there, readable by its owner alone.
    written = json.loads(home.joinpath("config.json").read_text(encoding="utf-8"))
    assert written == {
        "retrieval": {"mmrLambda": 0.6},
        "storage": {"backend": "postgres", "postgresUrl": url},
        "team": {"user": "alice", "shareProjects": ["shop"]},
    }
    assert stat.S_IMODE(home.joinpath("config.json").stat().st_mode) == 0o600
    # The next ingest does as join said: the shop's session reaches the server, the diary's does not.
    assert _run(home, "batch-ingest", str(folder), "--no-embed", "--force").exit_code == 0
    with psycopg.connect(team) as conn:
        rows = conn.execute("SELECT DISTINCT session_id, member FROM chunks").fetchall()
    assert rows == [(SHOP_SESSION, "alice")]
    # Joining again changes nothing, and --json says so for scripts.
    again = _run(home, "team", "join", url, "--json")
    assert again.exit_code == 0, again.output
    answer = json.loads(again.output)
    assert answer["changes"] == [] and answer["members"] == ["alice"] and answer["user"] == "alice"
    assert [(p["name"], p["local_only_count"]) for p in answer["shared"]] == [("shop", 0)]
    assert [p["name"] for p in answer["kept_local"]] == ["diary"] and answer["unmatched"] == []
    # Leaving: local memory alone at once; the team's settings stay for a later join.
    left = _run(home, "team", "leave")
    assert left.exit_code == 0, left.output
    assert 'storage.backend "postgres" -> "sqlite"' in _said(left)
    assert "Causantic now answers from your local memory alone." in _said(left)
    kept = json.loads(home.joinpath("config.json").read_text(encoding="utf-8"))
    assert kept["storage"] == {"backend": "sqlite", "postgresUrl": url} and kept["team"]["shareProjects"] == ["shop"]
    found = json.loads(_run(home, "search", "checkout rounding", "--mode", "keyword", "--json").output)
    assert {hit["store"] for hit in found["hits"]} == {"local"}
    assert json.loads(_run(home, "team", "leave", "--json").output)["changes"] == []


def test_join_names_a_project_not_ingested_yet_and_says_when_nothing_is_shared(team: str, tmp_path: Path) -> None:
    url = psycopg.conninfo.make_conninfo(team, user=_role(team))
    nothing = _run(tmp_path / "bob", "team", "join", url)
    assert nothing.exit_code == 0, nothing.output
    assert "(your login name: --user NAME names your rows otherwise)" in _said(nothing)
    assert "Nothing is shared: every project stays in your local memory." in _said(nothing)
    later = _run(tmp_path / "bob", "team", "join", url, "--share", "acme/api")
    said = _said(later)
    assert 'team.shareProjects (not set) -> ["acme/api"]' in said and "storage.backend" not in said
    assert "acme/api (no project of that name in your memory yet" in said
    everything = _said(_run(tmp_path / "bob", "team", "join", url, "--share", "all", "--user", "bob"))
    assert 'team.shareProjects ["acme/api"] -> "all"' in everything and 'team.user (not set) -> "bob"' in everything
    assert 'The next `causantic batch-ingest` shares every project (team.shareProjects is "all").' in everything
    assert everything.count("shares") == 1


def test_an_environment_variable_that_wins_over_config_json_is_named(team: str, tmp_path: Path) -> None:
    url = psycopg.conninfo.make_conninfo(team, user=_role(team))
    env = {"CAUSANTIC_HOME": str(tmp_path / "carol"), "CAUSANTIC_STORAGE_BACKEND": "sqlite"}
    joined = CliRunner().invoke(cli, ["team", "join", url, "--share", "shop"], env=env)
    assert joined.exit_code == 0, joined.output
    assert "storage.backend is also set in environment variable CAUSANTIC_STORAGE_BACKEND, which wins" in _said(joined)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_join_refuses_clearly_and_writes_nothing_when_the_server_will_not_do(
    postgres_server: Any, team: str, tmp_path: Path
) -> None:
    home = tmp_path / "dave"
    behind = new_database(postgres_server, template=team)
    ahead = new_database(postgres_server, template=team)
    with psycopg.connect(behind, autocommit=True) as conn:
        conn.execute("DELETE FROM schema_migrations WHERE version = 6")
    with psycopg.connect(ahead, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'm099_later', '2030-01-01')")
    member, outsider = _role(team), _role(team, member=False)
    cases = {
        f"postgresql://{member}@127.0.0.1:{_closed_port()}/causantic": "Cannot reach the team memory at PostgreSQL",
        psycopg.conninfo.make_conninfo(team, user="m_nobody_here"): "refused the login",
        new_database(postgres_server): "holds no team memory yet: whoever set up the server runs `causantic team init`",
        psycopg.conninfo.make_conninfo(team, user=outsider): f"`GRANT causantic_member TO {outsider};`",
        psycopg.conninfo.make_conninfo(behind, user=member): "lacks schema change 6 this causantic needs",
        psycopg.conninfo.make_conninfo(ahead, user=member): "newer than this causantic knows",
    }
    for url, why in cases.items():
        refused = _run(home, "team", "join", url, "--share", "shop")
        assert refused.exit_code != 0 and why in _said(refused), (why, refused.output)
        assert url not in refused.output
    assert not home.joinpath("config.json").exists()
