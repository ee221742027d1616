"""Multi-tenant safety enforced by PostgreSQL: a member reads everything, forgets only their own rows;
a team admin may forget anyone's. Checked through Causantic and with plain SQL as each member."""

from __future__ import annotations

import html
import json
import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from postgres_server import new_database
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.config import Config
from causantic.errors import CausanticError, StoreError
from causantic.examples import SESSIONS_DIR
from causantic.facade import Memory
from causantic.ingest.pipeline import remove_chunks
from causantic.ingest.service import ingest_paths
from causantic.retrieval.forget import others_note
from causantic.retrieval.regroup import move_summary
from causantic.services import Services, open_services, team_init

SESSIONS = sorted((SESSIONS_DIR / "-home-dev-acme-shop").glob("*.jsonl"))


@pytest.fixture
def team(postgres_server: Any) -> dict[str, str]:
    """A team database set up by its owner, with members alice and bob and admin carol (own roles)."""
    url = new_database(postgres_server)
    team_init(url)
    with psycopg.connect(url, autocommit=True) as conn:
        for role in ("alice", "bob", "carol"):
            conn.execute(f"DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT causantic_member TO alice, bob")
        conn.execute("GRANT causantic_admin TO carol")
    return {role: psycopg.conninfo.make_conninfo(url, user=role) for role in ("alice", "bob", "carol")}


def _config(url: str, user: str) -> Config:
    return Config().with_overrides(
        {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": user, "team.shareProjects": "all"}
    )


def _services(stack: ExitStack, url: str, user: str) -> Services:
    return stack.enter_context(open_services(_config(url, user)))


def _log_size(server: Any) -> int:
    return int(server.log.stat().st_size)  # pgserver's server log (pgdata/log)


def _log_since(server: Any, size: int) -> str:
    """What the server logged since it had ``size`` bytes (tests run one at a time)."""
    with open(server.log, "rb") as log:
        log.seek(size)
        return log.read().decode(errors="replace")


def _chunks_of(url: str, member: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM chunks WHERE member = %s ORDER BY id", (member,))]


def test_a_member_forgets_only_their_own_rows_and_an_admin_any(team: dict[str, str]) -> None:
    with ExitStack() as stack:
        alice, bob, carol = (_services(stack, team[r], r) for r in ("alice", "bob", "carol"))
        ingest_paths(alice, [SESSIONS[0]], embed=False, workers=1)
        ingest_paths(bob, [SESSIONS[1]], embed=False, workers=1)
        alices, bobs = _chunks_of(team["alice"], "alice"), _chunks_of(team["bob"], "bob")
        assert alices and bobs
        # Everyone reads everything.
        assert set(bob.store.get_chunks(alices)) == set(alices)

        # Bob's preview of the project both sessions belong to says whose they are, before --yes is refused.
        with Memory(config=_config(team["bob"], "bob")) as memory:
            preview = memory.forget("acme-shop")
        assert preview.others == (("alice", len(alices)),)
        assert f"{len(alices)} chunks of these are other members' (alice {len(alices)})" in str(others_note(preview))
        with pytest.raises(StoreError, match=r"belong to other members \(alice\).*Nothing was deleted"):
            remove_chunks(bob.store, bob.vectors, alices[:2] + bobs[:1])
        assert _chunks_of(team["alice"], "alice") == alices and _chunks_of(team["bob"], "bob") == bobs

        assert remove_chunks(bob.store, bob.vectors, bobs) == len(bobs)
        assert remove_chunks(carol.store, carol.vectors, alices[:1]) == 1
        assert _chunks_of(team["alice"], "alice") == alices[1:]


def test_a_member_forgets_only_their_own_chunks_of_a_project_another_member_shares(
    team: dict[str, str], tmp_path: Path
) -> None:
    """Bob's chunks in alice's project block her forgetting it; --only-mine previews and deletes hers alone."""
    with ExitStack() as stack:
        ingest_paths(_services(stack, team["alice"], "alice"), [SESSIONS[0]], embed=False, workers=1)
        ingest_paths(_services(stack, team["bob"], "bob"), [SESSIONS[1]], embed=False, workers=1)
    alices, bobs = _chunks_of(team["alice"], "alice"), _chunks_of(team["bob"], "bob")
    with Memory(config=_config(team["alice"], "alice")) as memory:
        everything = memory.forget("acme-shop")
        assert everything.others == (("bob", len(bobs)),)
        assert str(others_note(everything, "--only-mine")).endswith("Add --only-mine to forget only your own.")
        with pytest.raises(StoreError, match=r"belong to other members \(bob\)"):  # without it, as before
            memory.forget("acme-shop", dry_run=False, expected=everything.count)
        mine = memory.forget("acme-shop", only_mine=True)
    assert sorted(mine.ids) == alices and mine.count == len(alices) and mine.others == ()
    assert _chunks_of(team["alice"], "alice") == alices and _chunks_of(team["bob"], "bob") == bobs

    env = {
        "CAUSANTIC_HOME": str(tmp_path / "alice"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": team["alice"],
        "CAUSANTIC_TEAM_USER": "alice",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    runner = CliRunner()
    shown = runner.invoke(cli, ["forget", "acme-shop", "--only-mine"], env=env)
    assert shown.exit_code == 0, shown.output
    assert f"{len(alices)} of your chunks in 1 session of 'acme-shop' would be deleted." in shown.output
    assert "other members" not in shown.output
    done = runner.invoke(cli, ["forget", "acme-shop", "--only-mine", "--yes", "--json"], env=env)
    assert done.exit_code == 0, done.output
    out = json.loads(done.output)
    assert out["deleted"] == len(alices) and out["only_mine"] is True and out["other_members"] == {}
    assert _chunks_of(team["alice"], "alice") == [] and _chunks_of(team["bob"], "bob") == bobs


def test_the_dashboards_forget_page_ticks_only_my_chunks_from_preview_to_confirmation(
    team: dict[str, str], tmp_path: Path
) -> None:
    """Bob's chunks in alice's project: the page's preview says so and names its box; ticked, the preview lists
    alice's alone and the confirmation carries it, deleting hers and leaving bob's."""
    from starlette.testclient import TestClient

    from causantic.dashboard.app import create_app
    from causantic.dashboard.security import Secrets

    with ExitStack() as stack:
        ingest_paths(_services(stack, team["alice"], "alice"), [SESSIONS[0]], embed=False, workers=1)
        ingest_paths(_services(stack, team["bob"], "bob"), [SESSIONS[1]], embed=False, workers=1)
    alices, bobs = _chunks_of(team["alice"], "alice"), _chunks_of(team["bob"], "bob")
    secrets = Secrets(port=8765)
    app = create_app(secrets, opener=lambda: Memory(tmp_path, config=_config(team["alice"], "alice")))
    own_page = {"origin": "http://127.0.0.1:8765"}  # as a browser posts the page's forms
    with TestClient(app, base_url=own_page["origin"], headers=own_page) as client:
        form = client.get("/forget", params={"token": secrets.token}).text
        assert 'name="only_mine"' in form
        fields = {"csrf": re.findall(r'name="csrf" value="([^"]+)"', form)[0], "project": "acme-shop"}
        everything = client.post("/forget/preview", data=fields)
        assert everything.status_code == 200, everything.text[:300]
        assert f"other members' (bob {len(bobs)})" in html.unescape(everything.text)
        assert "Add “Only my chunks” to forget only your own." in everything.text
        mine = client.post("/forget/preview", data=fields | {"only_mine": "1"})
        assert mine.status_code == 200 and "Only my chunks” to forget" not in mine.text
        assert f"{len(alices)} of your chunks in 1 session of acme-shop would be deleted" in mine.text
        assert 'name="only_mine" value="1" checked' in mine.text
        confirm = mine.text.split('class="confirm"', 1)[1].split("</form>", 1)[0]
        sent = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', confirm)
        assert ("only_mine", "1") in sent and sorted(v for k, v in sent if k == "id") == alices
        posted: dict[str, list[str]] = {}
        for name, value in sent:
            posted.setdefault(name, []).append(html.unescape(value))
        done = client.post("/forget/confirm", data=posted)
    assert f"Deleted {len(alices)} of your chunks of acme-shop." in done.text
    assert _chunks_of(team["alice"], "alice") == [] and _chunks_of(team["bob"], "bob") == bobs


def test_the_database_itself_refuses_a_member_changing_anothers_rows(team: dict[str, str]) -> None:
    """Not only Causantic's check: plain SQL as bob cannot delete, rewrite or re-own alice's rows."""
    with ExitStack() as stack:
        ingest_paths(_services(stack, team["alice"], "alice"), [SESSIONS[0]], embed=False, workers=1)
    alices = _chunks_of(team["alice"], "alice")
    with psycopg.connect(team["bob"], autocommit=True) as conn:
        assert conn.execute("DELETE FROM chunks").rowcount == 0
        assert conn.execute("UPDATE chunks SET content = 'defaced'").rowcount == 0
        assert conn.execute("DELETE FROM sessions").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO chunks(id, session_id, project_id, turn_index, part, start_time, end_time, content,"
                " content_hash, approx_tokens, created_at, member, owner_role)"
                " SELECT 'forged', session_id, project_id, 0, 0, '', '', 'x', 'x', 1, '', 'alice', 'alice'"
                " FROM chunks LIMIT 1"
            )
    with psycopg.connect(team["alice"], autocommit=True) as conn:
        # Alice updates her own rows, but cannot hand them to someone else.
        assert conn.execute("UPDATE chunks SET owner_role = 'bob', member = 'bob'").rowcount == len(alices)
    assert _chunks_of(team["alice"], "alice") == alices


def test_a_member_on_a_newer_version_is_told_the_owner_must_upgrade_the_schema(
    postgres_server: Any, tmp_path: Path
) -> None:
    """Only the tables' owner may change the schema: a member whose causantic needs a migration the
    database lacks gets a message naming the command that applies it, and works once it ran."""
    url = new_database(postgres_server)
    team_init(url)
    with psycopg.connect(url, autocommit=True) as conn:  # as a database from before the text features
        # and the session stem counts they feed (m006; its triggers read the columns)
        conn.execute("DROP TABLE session_stems; DROP FUNCTION causantic_session_stems() CASCADE")
        for column in ("stems", "own_stems", "bulk"):
            conn.execute(f"ALTER TABLE chunks DROP COLUMN {column}")
        conn.execute("DELETE FROM schema_migrations WHERE version IN (3, 6)")
        conn.execute("DO $$ BEGIN CREATE ROLE dave LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT causantic_member TO dave")
    dave = psycopg.conninfo.make_conninfo(url, user="dave")
    upgrade = (
        r"lacks schema changes 3 and 6 this causantic needs, and only the role that owns its tables \(\w+\) may make"
        r" them \(must be owner of table \w+\)\. Ask them to run `causantic team init`"
    )
    with pytest.raises(StoreError, match=upgrade), ExitStack() as stack:
        _services(stack, dave, "dave")
    # Their ingest and search carry on with local memory, saying why: not "unreachable", it answered.
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "dave"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": dave,
        "CAUSANTIC_TEAM_USER": "dave",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    for args in (["ingest", "--no-embed", str(SESSIONS[0])], ["search", "redirect loop"]):
        said = " ".join(CliRunner().invoke(cli, args, env=env).output.split())
        assert "team memory unavailable: The team database at" in said and "unreachable" not in said, said
        assert re.search(upgrade, said), said

    team_init(url)
    with ExitStack() as stack:
        ingest_paths(_services(stack, dave, "dave"), [SESSIONS[0]], embed=False, workers=1)
    assert _chunks_of(dave, "dave")


def test_a_member_whose_team_database_lacks_a_change_they_can_do_without_keeps_using_it_and_is_told_who_runs_what(
    postgres_server: Any, tmp_path: Path
) -> None:
    """A database the owner set up with the release before sessions recorded their folder (m008): a
    member's role may not add the column (ALTER TABLE is the tables' owner's), and their ingest went to
    local memory, "team memory unreachable", until the owner upgraded. Now it lands in team memory
    without the folder, and ingest and `team status` say what goes without it and who runs what."""
    url = new_database(postgres_server)
    team_init(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN cwd; DELETE FROM schema_migrations WHERE version = 8")
        conn.execute("DO $$ BEGIN CREATE ROLE erin LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT causantic_member TO erin")
        owner = conn.execute("SELECT current_user").fetchone()[0]
    erin = psycopg.conninfo.make_conninfo(url, user="erin")
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "erin"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": erin,
        "CAUSANTIC_TEAM_USER": "erin",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    first = write_session(tmp_path / "t", "/work/shop", "00000001-0000-4000-8000-000000000001", [("retry", "ok")])
    runner = CliRunner()
    logged = _log_size(postgres_server)
    done = runner.invoke(cli, ["ingest", "--no-embed", str(first)], env=env)
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "unreachable" not in said and "waiting for team memory" not in said
    assert (
        "lacks schema change 8 of this causantic (members may not change its tables), so the sessions you ingest are"
        f" stored without the folder they were recorded in (which split-project reads) until the role that owns its"
        f" tables ({owner}) runs `causantic team init`"
    ) in said
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT member FROM sessions").fetchall() == [("erin",)]
    status = runner.invoke(cli, ["team", "status", "--json"], env=env)
    assert json.loads(status.output)["schema_missing"] == [8]
    assert (
        f"until the role that owns its tables ({owner}) runs" in runner.invoke(cli, ["team", "status"], env=env).output
    )

    # Each open saw the role may not migrate without trying: no ALTER refused in the server's log.
    assert "must be owner of table" not in _log_since(postgres_server, logged)

    team_init(url)  # the owner upgrades: the folder is recorded from then on, and nothing more is said
    write_session(tmp_path / "t", "/work/shop", "00000002-0000-4000-8000-000000000002", [("retry", "ok")])
    done = runner.invoke(cli, ["ingest", "--no-embed", "--json", str(tmp_path / "t")], env=env)
    assert done.exit_code == 0 and "schema" not in done.output, done.output
    # The session ingested before has its folder too: its file, marked before the database recorded
    # folders, was read once more (it kept no folder until its file changed or `batch-ingest --force`).
    assert json.loads(done.output)["files"] == 2
    with psycopg.connect(url) as conn:
        assert dict(conn.execute("SELECT left(id, 8), cwd FROM sessions").fetchall()) == {
            "00000001": "/work/shop",
            "00000002": "/work/shop",
        }
    again = runner.invoke(cli, ["ingest", "--no-embed", "--json", str(tmp_path / "t")], env=env)
    assert json.loads(again.output)["files_unchanged"] == 2  # once: both are marked now
    assert json.loads(runner.invoke(cli, ["team", "status", "--json"], env=env).output)["schema_note"] is None


def test_members_sharing_one_login_are_told_their_forget_deletes_the_others_chunks_too(
    postgres_server: Any, tmp_path: Path
) -> None:
    """A team on one login (the database owner's, as a small team sets it up) is not kept apart by row-level
    security: the preview said bob's chunks needed the admin role and nothing would be deleted, and --yes
    then deleted them with alice's."""
    url = new_database(postgres_server)
    with ExitStack() as stack:
        ingest_paths(_services(stack, url, "alice"), [SESSIONS[0]], embed=False, workers=1)
        ingest_paths(_services(stack, url, "bob"), [SESSIONS[1]], embed=False, workers=1)
    bobs = _chunks_of(url, "bob")
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "alice"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_USER": "alice",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    runner = CliRunner()
    shown = runner.invoke(cli, ["forget", "acme-shop"], env=env)
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.output.split())
    assert f"{len(bobs)} chunks of these are other members' (bob {len(bobs)}), and your database role may" in said
    assert "they go too. Add --only-mine to forget only your own." in said and "nothing is deleted" not in said
    done = runner.invoke(cli, ["forget", "acme-shop", "--yes"], env=env)
    assert done.exit_code == 0, done.output
    assert f"{len(bobs)} of them were other members' (bob {len(bobs)})." in " ".join(done.output.split())
    assert _chunks_of(url, "bob") == []


def test_a_member_moves_only_their_own_chunks_into_another_project_and_an_admin_any(
    team: dict[str, str], tmp_path: Path
) -> None:
    """A merge moves chunks, and an UPDATE that row-level security refuses skips the row without a word:
    alice's merge of bob's project would have moved the session and left his chunks behind."""
    with ExitStack() as stack:
        ingest_paths(_services(stack, team["alice"], "alice"), [SESSIONS[0]], embed=False, workers=1)
        bobs = write_session(tmp_path, "/home/bob/shop-old", "b0b00000-0000-4000-8000-000000000000", [("x", "y")])
        ingest_paths(_services(stack, team["bob"], "bob"), [bobs], embed=False, workers=1)
    with Memory(config=_config(team["alice"], "alice")) as memory:
        preview = memory.merge_projects("shop-old", "acme-shop")
        assert move_summary(preview) == (
            "1 session (1 chunk) of 'shop-old' (/home/bob/shop-old) cannot move into 'acme-shop' "
            "(/home/dev/acme-shop): of them, 1 chunk is bob's, which only bob or a team admin (causantic_admin) "
            "may move."
        )
        with pytest.raises(CausanticError, match="Nothing was moved"):
            memory.merge_projects("shop-old", "acme-shop", dry_run=False)
        assert sorted(p.name for p in memory.projects()) == ["acme-shop", "shop-old"]
    with Memory(config=_config(team["carol"], "carol")) as memory:
        assert memory.merge_projects("shop-old", "acme-shop", dry_run=False).others == ()
        assert [(p.name, p.sessions) for p in memory.projects()] == [("acme-shop", 2)]
