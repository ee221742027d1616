"""`causantic team init` and `team status` against a real PostgreSQL, and `--user` on search."""

from __future__ import annotations

import json
import re
import threading
import uuid
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from click.testing import CliRunner
from postgres_server import new_database

from causantic.cli.main import cli
from causantic.config import Config
from causantic.errors import StoreError
from causantic.examples import SESSIONS_DIR
from causantic.ingest.pipeline import IngestReport, combined
from causantic.ingest.service import ingest_paths
from causantic.services import open_services
from causantic.store.postgres.connection import failure

ONE_SESSION = SESSIONS_DIR / "-home-dev-acme-shop" / "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec.jsonl"


def _run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_init_creates_the_schema_and_never_prints_the_url(postgres_server: Any) -> None:
    url = new_database(postgres_server)
    result = _run("team", "init", url)
    assert result.exit_code == 0, result.output
    assert "Team memory is ready" in result.output and "pgvector 0." in result.output
    # What each member does next includes sharing something: by default nothing is shared.
    assert "`causantic team join URL --share PROJECT`" in " ".join(result.output.split())
    assert "GRANT" not in result.output
    assert "causantic_member" in result.output
    assert url not in result.output
    again = json.loads(_run("team", "init", url, "--json").output)
    assert again["schema_version"] >= 1 and again["pgvector_version"]
    # Nobody has ingested yet: one sentence says so, under no table of headings.
    empty = _run("team", "status", env={"CAUSANTIC_STORAGE_POSTGRES_URL": url}).output.splitlines()
    assert empty[1:] == ["No member has ingested anything yet."], empty


def test_an_unreachable_server_is_one_sentence_without_the_password(tmp_path: Any) -> None:
    url = f"postgresql://alice:s3cret-pw@/causantic?host={tmp_path}&connect_timeout=2"
    result = _run("team", "init", url)
    assert result.exit_code != 0
    assert "Cannot reach the team memory" in result.output
    assert "s3cret-pw" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    "url",
    [
        "postgresql//alice:s3cret-pw@db.example.com/causantic ",  # a typo and a trailing space, as pasted
        "postgresql://alice:s3cret-pw@db.example.com/causantic sslmode=require",
        "host=db.example.com password=s3cret-pw sslmode",
    ],
)
def test_a_url_libpq_cannot_read_is_refused_without_quoting_the_password(url: str) -> None:
    result = _run("team", "init", url)
    assert result.exit_code != 0 and "not a valid libpq URL" in result.output
    assert "s3cret-pw" not in result.output and "Traceback" not in result.output


def test_a_url_pasted_with_spaces_around_it_connects(postgres_server: Any) -> None:
    database = psycopg.conninfo.conninfo_to_dict(new_database(postgres_server))["dbname"]
    uri = str(postgres_server.get_uri()).replace("/postgres?", f"/{database}?")  # the URI form, as users write it
    result = _run("team", "init", f" {uri}\n")
    assert result.exit_code == 0, result.output


def test_list_projects_with_team_memory_unreachable_says_so_beside_local_memory(tmp_path: Any) -> None:
    env = {
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": f"postgresql://alice:s3cret-pw@/causantic?host={tmp_path}",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    for args in (["list-projects"], ["list-projects", "--json"]):
        result = _run(*args, env=env)
        assert result.exit_code == 0, result.output
        assert "Warning: local memory's projects only. Cannot reach the team memory" in result.stderr
        assert "s3cret-pw" not in result.output
    assert json.loads(result.stdout) == {"projects": []}  # the warning never breaks the JSON


def test_an_ingest_into_both_stores_says_which_store_each_topics_note_is_about() -> None:
    none_yet = "none yet: they form after 200 new embedded chunks (40 so far) or with `causantic cluster`"
    report = combined(IngestReport(topics_note=none_yet), IngestReport(topics_note=none_yet.replace("40", "24")))
    assert report.topics_note == f"local (unshared): {none_yet}; team memory: {none_yet.replace('40', '24')}"
    assert combined(IngestReport(), IngestReport(topics_note="reclustered")).topics_note == "team memory: reclustered"


def test_status_lists_members_with_their_sessions_and_last_ingest(postgres_server: Any) -> None:
    url = new_database(postgres_server)
    for user in ("alice", "bob"):
        config = Config().with_overrides(
            {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": user, "team.shareProjects": "all"}
        )
        with open_services(config) as services:
            ingest_paths(services, [ONE_SESSION] if user == "alice" else [SESSIONS_DIR], embed=False)
    env = {
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    result = _run("team", "status", "--json", env=env)
    assert result.exit_code == 0, result.output
    members = {m["user"]: m for m in json.loads(result.output)["members"]}
    # Bob read every example, including alice's sessions: each chunk is stored once, under its first reader.
    assert set(members) == {"alice", "bob"}
    assert members["alice"]["session_count"] >= 1 and members["alice"]["last_ingest"]
    assert members["bob"]["last_ingest"] >= members["alice"]["last_ingest"]
    human = _run("team", "status", env=env).output
    assert "alice" in human and "bob" in human and url not in human
    stats = _run("stats", env=env).output
    assert "database size" in stats and "SQLite" not in stats  # the figure is the PostgreSQL database's
    heading, *rows = human.splitlines()
    assert re.fullmatch(r"Team memory at .+ \(\d+(\.\d)? [KMG]?B\)", heading), heading  # whole, on one line
    assert any(" KB " in row for row in rows if row.startswith(" alice")), human  # a session's text, not "0.0" MB
    assert "last ingest (UTC)" in rows[0], human  # its times are UTC, as list-projects' and list-sessions' say


def test_a_push_with_nothing_new_sends_as_many_statements_for_one_file_as_for_all(
    postgres_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each statement is a round trip to the server; a member with thousands of transcripts must not
    wait one per file to learn that nothing changed."""
    config = Config().with_overrides(
        {
            "storage.backend": "postgres",
            "storage.postgresUrl": new_database(postgres_server),
            "team.user": "alice",
            "team.shareProjects": "all",
        }
    )
    files = sorted(SESSIONS_DIR.rglob("*.jsonl"))
    with open_services(config) as services:
        ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
    sent: list[object] = []
    execute = psycopg.Cursor.execute
    monkeypatch.setattr(psycopg.Cursor, "execute", lambda cur, *a, **k: (sent.append(a[0]), execute(cur, *a, **k))[1])
    counts = []
    for paths in ([files[0]], [SESSIONS_DIR]):
        with open_services(config) as services:
            sent.clear()
            report = ingest_paths(services, paths, embed=False, workers=1)
            assert report.files_unchanged == len(paths if paths == [files[0]] else files) and not report.chunks_added
            counts.append(len(sent))
    assert len(files) > 2 and counts[0] == counts[1], counts


@pytest.mark.parametrize("user", ["alice", "nobody"])
def test_search_by_user_keeps_only_that_members_chunks(
    postgres_server: Any, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = new_database(postgres_server)
    config = Config().with_overrides(
        {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": "alice", "team.shareProjects": "all"}
    )
    with open_services(config) as services:
        ingest_paths(services, [SESSIONS_DIR], embed=False)
    env = {
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    result = _run("search", "redirect", "--user", user, "--json", "--mode", "keyword", env=env)
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)["hits"]
    assert all(h["user"] == "alice" for h in hits)
    assert bool(hits) == (user == "alice")
    # A member nobody is called is named as such, with those who are (not "no matching chunks").
    unknown = "no member named 'nobody' has anything in team memory (members: alice)"
    assert (unknown in json.loads(result.output)["notes"]) == (user == "nobody")
    if user == "nobody":  # an agent narrows the same way through MCP (the tool used to drop the argument)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        answer = _mcp_search({"query": "redirect", "user": user, "mode": "keyword"})
        assert "[Project: " not in answer and unknown in answer


def _mcp_search(arguments: dict[str, Any]) -> Any:
    """The MCP search tool's answer (its text), from an in-process server (the SDK's in-memory client)."""
    from mcp import Client

    from causantic.mcp.server import build_server

    async def run() -> Any:
        async with Client(build_server(warm=False), mode="legacy") as client:
            result = await client.call_tool("search", arguments)
            assert not result.is_error, result.content
            return result.content[0].text

    return anyio.run(run)


def test_a_server_lost_mid_command_is_one_sentence_and_the_next_run_completes(postgres_server: Any) -> None:
    url = new_database(postgres_server)
    config = Config().with_overrides(
        {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": "alice", "team.shareProjects": "all"}
    )
    with open_services(config) as services:
        ingest_paths(services, [ONE_SESSION], embed=False, workers=1)
        # The server drops every connection of this database (a restart, a failover, a network cut).
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        with pytest.raises(StoreError, match="stopped answering.*next run completes it") as lost:
            ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
        assert url not in str(lost.value)
    with open_services(Config()) as local:  # the whole example set, in SQLite, for comparison
        ingest_paths(local, [SESSIONS_DIR], embed=False, workers=1)
        expected = local.store.counts()
    with open_services(config) as services:
        report = ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
        assert report.files_unchanged == 1  # the session stored before the cut is not read again
        counts = services.store.counts()
    for key in ("chunks", "edges", "sessions", "projects"):
        assert counts[key] == expected[key], key


def test_a_transaction_the_server_rolls_back_in_a_deadlock_says_so_not_that_the_server_stopped(
    postgres_server: Any,
) -> None:
    """Two writers each holding a row the other wants: the server rolls one back. Its message says to
    run the command again, not that the server stopped answering."""
    url = new_database(postgres_server)
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute("CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2)")
    first, second = psycopg.connect(url), psycopg.connect(url)
    for conn, mine in ((first, 1), (second, 2)):
        conn.execute("SET deadlock_timeout = '50ms'")
        conn.execute("UPDATE t SET id = id WHERE id = %s", (mine,))
    errors: list[BaseException] = []

    def take(conn: Any, other: int) -> None:
        try:
            conn.execute("UPDATE t SET id = id WHERE id = %s", (other,))
            conn.commit()
        except psycopg.Error as exc:
            errors.append(exc)
            conn.rollback()

    threads = [threading.Thread(target=take, args=(first, 2)), threading.Thread(target=take, args=(second, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    first.close()
    second.close()
    assert len(errors) == 1
    message = str(failure(errors[0], url))
    assert "rolled this command back (deadlock detected)" in message and "run the command again" in message
    assert "stopped answering" not in message and url not in message


def test_a_role_that_may_not_create_the_vector_extension_is_told_to_ask_the_admin_at_init_and_first_connect(
    postgres_server: Any, tmp_path: Path
) -> None:
    """The database's owner is no superuser, and pgvector's extension is not trusted: only a superuser
    creates it. `team init` and a first ingest say so, naming the statement and the database, not a
    traceback and not "ask the owner of the tables" (there are none yet)."""
    url = new_database(postgres_server)
    database = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    role = f"owner_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN CREATEROLE')
        admin.execute(f'ALTER DATABASE "{database}" OWNER TO "{role}"')
        admin.execute(f'GRANT ALL ON SCHEMA public TO "{role}"')
    owner = psycopg.conninfo.make_conninfo(url, user=role)
    ask = f"Ask the server's admin to run `CREATE EXTENSION vector;` in database {database}"

    result = CliRunner().invoke(cli, ["team", "init", owner])
    assert result.exit_code == 1 and ask in result.output, result.output
    assert 'permission denied to create extension "vector"' in result.output and "CREATEROLE" in result.output
    assert "HINT" not in result.output and "Traceback" not in result.output and owner not in result.output

    env = {
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": owner,
        "CAUSANTIC_TEAM_USER": role,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    # Ingest keeps working on local memory (a hook must not fail) and says why team memory waits.
    ingest = CliRunner().invoke(cli, ["ingest", "--no-embed", str(ONE_SESSION)], env=env)
    assert ingest.exit_code == 0 and ask in ingest.output, ingest.output
    assert "lacks schema changes" not in ingest.output

    with psycopg.connect(url, autocommit=True) as admin:  # the admin does as asked
        admin.execute("CREATE EXTENSION vector")
    ready = CliRunner().invoke(cli, ["team", "init", owner])
    assert ready.exit_code == 0 and "Team memory is ready" in ready.output, ready.output


def test_a_missing_database_or_a_refused_login_says_which_and_what_to_do(postgres_server: Any) -> None:
    """The server answered both times: the advice is about the database's name, or about the login,
    not to check that the server is up."""
    url = new_database(postgres_server)
    typo = psycopg.conninfo.make_conninfo(url, dbname="causantic_tema")
    missing = CliRunner().invoke(cli, ["team", "init", typo])
    assert missing.exit_code == 1
    text = " ".join(missing.output.split())
    assert 'FATAL: database "causantic_tema" does not exist' in text
    assert "holds no database causantic_tema: check its name in storage.postgresUrl" in text
    assert "`createdb causantic_tema`" in text and "server is up" not in text

    stranger = psycopg.conninfo.make_conninfo(url, user="nobody_here", password="s3cret-pw")
    refused = CliRunner().invoke(cli, ["team", "init", stranger])
    text = " ".join(refused.output.split())
    assert refused.exit_code == 1 and 'role "nobody_here" does not exist' in text
    assert "refused the login: check the user and password in storage.postgresUrl" in text
    assert "server is up" not in text and "s3cret-pw" not in text


def test_team_status_when_the_server_drops_the_connection_mid_command_is_one_sentence(postgres_server: Any) -> None:
    """The connection is lost between `team status`'s questions (a restart, a failover): here the
    server ends it itself, while it counts the chunks."""
    url = new_database(postgres_server)
    _run("team", "init", url)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "ALTER TABLE chunks RENAME TO stored_chunks;"
            " CREATE VIEW chunks AS SELECT * FROM stored_chunks WHERE (SELECT pg_terminate_backend(pg_backend_pid()))"
        )
    result = CliRunner().invoke(cli, ["team", "status"], env={"CAUSANTIC_STORAGE_POSTGRES_URL": url})
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "stopped answering" in result.output and url not in result.output
