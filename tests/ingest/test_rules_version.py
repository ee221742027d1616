"""A store read under older ingest rules converges on a plain ingest, without `--force`.

Each file's mark records the version of ingest's rules it was read under (:mod:`causantic.ingest.rules`);
a file read under an older version counts as changed, so `causantic batch-ingest` and the hooks read it
again. Real files from the shared corpus: marot ``spotter`` (six compactions) and randlee
``claude-history`` (six prompt suggestions), whose chunks today's rules make differently.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from postgres_server import new_database
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.config import Config, causantic_home
from causantic.dashboard import pages
from causantic.facade import Memory
from causantic.ingest import rules, subagents
from causantic.ingest.service import ingest_paths
from causantic.services import open_services
from causantic.store.protocol import MemoryStoreProtocol
from causantic.transcripts import _system_text, gemini

SPOTTER = "marot__spotter/test/fixtures/transcripts"
RANDLEE = "randlee__claude-history/docs/examples/claude-history-simple/export/source"
INSTRUCTION = "Your task is to create a detailed summary"  # Claude Code's compaction instruction


def _memory(store: MemoryStoreProtocol) -> tuple[dict[str, tuple[str, str, str, str]], object]:
    """Every stored chunk (agent, start, end, text) by id, and the edge counts by type."""
    sessions = [s.session_id for p in store.projects_with_chunks() for s in store.session_summaries(p)]
    ids = [k.id for s in sessions for k in store.session_chunk_keys(s)]
    chunks = {i: (c.agent, c.start_time, c.end_time, c.content) for i, c in store.get_chunks(ids).items()}
    return chunks, store.counts()["edges"]


def test_a_store_read_under_older_rules_is_re_read_by_a_plain_ingest_and_ends_as_a_fresh_ingest(
    backend_config: Config, corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [corpus_dir / SPOTTER, corpus_dir / RANDLEE]
    # An older release: the instruction to summarise read as a prompt, prompt suggestions ingested,
    # and its rules one version behind today's.
    with monkeypatch.context() as before:
        before.setattr(_system_text, "COMPACTION_PROMPT_OPENING", "\0")
        before.setattr(subagents, "_PROMPT_SUGGESTION", "\0")
        before.setattr(subagents, "SUGGESTION_PROMPT_OPENING", "\0")
        before.setattr(rules, "VERSION", rules.VERSION - 1)
        with open_services(backend_config) as services:
            first = ingest_paths(services, paths, embed=False, workers=1)
            assert any(INSTRUCTION in text for *_, text in _memory(services.store)[0].values())

    with open_services(backend_config) as services:
        upgraded = ingest_paths(services, paths, embed=False, workers=1)  # no --force
        assert upgraded.chunks_removed > 0 and upgraded.skipped_subagents["prompt-suggestion"] == 6
        assert upgraded.files_rules_changed == upgraded.files == first.files and upgraded.files_unchanged == 0
        converged = _memory(services.store)
        again = ingest_paths(services, paths, embed=False, workers=1)
        assert again.files_unchanged == again.files and again.files_rules_changed == 0
        assert (again.chunks_added, again.chunks_updated, again.chunks_removed) == (0, 0, 0)

    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "fresh"))
    with open_services(Config()) as fresh:
        ingest_paths(fresh, paths, embed=False, workers=1)
        assert converged == _memory(fresh.store)
    assert not any(INSTRUCTION in text for *_, text in converged[0].values())


def _session(tmp_path: Path) -> Path:
    return write_session(
        tmp_path / "projects",
        "/work/shop",
        "5e0c1a55-0000-4000-8000-000000000001",
        [("why does checkout time out", "the payment call had no timeout; set it to 10 s")],
    )


def _marks_from_before_versions(home: Path) -> None:
    """What a store upgraded from a release that recorded no rules version holds: marks at 0."""
    with sqlite3.connect(home / "memory.db") as conn:
        conn.execute("UPDATE files SET rules_version = 0")


def test_files_marked_before_versions_are_re_read_once_and_only_changed_chunks_are_embedded_again(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path)
    with Memory() as memory:
        first = memory.ingest([session.parent])
        assert first.vectors_added == first.chunks_added > 0
    _marks_from_before_versions(causantic_home())
    with Memory() as memory:
        upgraded = memory.ingest([session.parent])
        assert (upgraded.files, upgraded.files_rules_changed, upgraded.files_unchanged) == (1, 1, 0)
        # Today's rules make the same chunks from this transcript: nothing rewritten, nothing embedded.
        assert (upgraded.chunks_added, upgraded.chunks_updated, upgraded.vectors_added) == (0, 0, 0)
        again = memory.ingest([session.parent])
        assert (again.files_unchanged, again.files_rules_changed) == (1, 0)


def test_the_summary_says_files_were_re_read_because_the_rules_changed_and_json_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _session(tmp_path).parent
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # the session is in Claude Code's folder
    runner = CliRunner()
    with monkeypatch.context() as before:  # an older release
        before.setattr(rules, "VERSION", rules.VERSION - 1)
        first = runner.invoke(cli, ["batch-ingest", "--no-embed", str(folder)], catch_exceptions=False)
    assert first.exit_code == 0 and "re-read" not in first.output
    # Before the next ingest, stats says what it will do.
    stats = runner.invoke(cli, ["stats"], catch_exceptions=False)
    assert "Note: 1 transcript file was ingested under older ingest rules; the next" in stats.output
    assert json.loads(runner.invoke(cli, ["stats", "--json"]).output)["files_under_older_rules"] == 1
    upgraded = runner.invoke(cli, ["batch-ingest", "--no-embed", str(folder)], catch_exceptions=False)
    assert upgraded.exit_code == 0
    assert "files re-read" in upgraded.output and "1: ingest rules changed since they were read" in upgraded.output
    unchanged = runner.invoke(cli, ["batch-ingest", "--no-embed", str(folder)], catch_exceptions=False)
    assert "Nothing new: 1 file, all unchanged since the last ingest" in unchanged.output
    assert "older ingest rules" not in runner.invoke(cli, ["stats"], catch_exceptions=False).output
    monkeypatch.setattr(rules, "VERSION", rules.VERSION + 1)  # the next upgrade
    as_json = runner.invoke(cli, ["batch-ingest", "--no-embed", "--json", str(folder)], catch_exceptions=False)
    out = json.loads(as_json.output)
    assert (out["files"], out["files_rules_changed"], out["files_unchanged"]) == (1, 1, 0)


def test_stats_names_the_folder_to_ingest_again_for_files_read_from_outside_the_agents_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain `causantic batch-ingest` and the hooks read the agents' folders only: stats said they would
    read again a file once ingested from another folder (`causantic ingest ~/exports`), and went on
    saying so after they ran."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    inside = _session(tmp_path / "claude")
    exported = write_session(tmp_path / "exports", "/work/blog", "5e0c1a55-0000-4000-8000-000000000002", [("a", "b")])
    runner = CliRunner()
    with monkeypatch.context() as before:  # an older release
        before.setattr(rules, "VERSION", rules.VERSION - 1)
        runner.invoke(cli, ["ingest", "--no-embed", str(inside), str(exported)], catch_exceptions=False)

    def note() -> str:
        return " ".join(runner.invoke(cli, ["stats"], catch_exceptions=False).output.split("Note: ", 1)[-1].split())

    assert note() == (
        "2 transcript files were ingested under older ingest rules: the next `causantic batch-ingest` (or a hook's "
        f"ingest) reads 1 of them again, and `causantic batch-ingest {exported.parent}` the 1 from outside the "
        "agents' folders."
    )
    as_json = json.loads(runner.invoke(cli, ["stats", "--json"]).output)
    assert as_json["files_under_older_rules"] == 2 and as_json["older_rules_elsewhere"] == {str(exported.parent): 1}
    assert runner.invoke(cli, ["batch-ingest", "--no-embed"], catch_exceptions=False).exit_code == 0
    assert note() == (
        "1 transcript file was ingested under older ingest rules, outside the agents' folders: "
        f"`causantic batch-ingest {exported.parent}` reads it again."
    )
    runner.invoke(cli, ["batch-ingest", "--no-embed", str(exported.parent)], catch_exceptions=False)
    assert "older ingest rules" not in runner.invoke(cli, ["stats"], catch_exceptions=False).output


COMPACT_WITH_WORDS = (
    "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
    "<command-args>keep the checkout work</command-args>"
)


def test_after_the_compact_words_rule_chunks_only_renumbered_are_not_counted_as_updated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version 2 made `/compact keep …` a prompt: the turns after it are numbered one higher, their
    text unchanged and not embedded again. The summary said `chunks updated │ 2` for them (102 on a
    real store)."""
    turns = [
        ("why does checkout time out", "the payment call had no timeout"),
        (COMPACT_WITH_WORDS, "Compacted."),
        ("now add a retry to the payment call", "added one retry with backoff"),
        ("and a test for it", "test added"),
    ]
    folder = write_session(tmp_path / "projects", "/work/shop", "5e0c1a55-0000-4000-8000-000000000002", turns).parent
    runner = CliRunner()
    said = {}
    for shown in ("table", "json"):
        monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / shown))
        with monkeypatch.context() as before:  # version 1: /compact's words were a local command's settings
            before.setattr(rules, "VERSION", 1)
            before.setattr(_system_text, "_LOCAL_COMMANDS", _system_text._LOCAL_COMMANDS | {"compact"})
            runner.invoke(cli, ["batch-ingest", "--no-embed", str(folder)], catch_exceptions=False)
        json_flag = ["--json"] if shown == "json" else []
        said[shown] = runner.invoke(cli, ["batch-ingest", "--no-embed", *json_flag, str(folder)]).output
    assert "chunks updated        │ 0" in said["table"]
    assert "chunks renumbered     │ 2 (text unchanged, a new turn number)" in said["table"]
    out = json.loads(said["json"])
    assert (out["chunks_added"], out["chunks_updated"], out["chunks_renumbered"]) == (1, 0, 2)


def test_the_dashboard_overview_says_which_files_the_next_ingest_reads_again(tmp_path: Path) -> None:
    """`causantic stats` said so; the dashboard's overview, where a person looks first, did not."""
    folder = _session(tmp_path).parent
    with Memory() as memory:
        memory.ingest([folder], embed=False)
    _marks_from_before_versions(causantic_home())
    derived = pages.Derived()
    with Memory() as memory:
        said = [w.text for w in pages.overview(memory, derived)["warnings"]]
        assert any(text.startswith("1 transcript file was ingested under older ingest rules") for text in said)
        memory.ingest([folder], embed=False)
        said = [w.text for w in pages.overview(memory, derived)["warnings"]]
        assert not any("older ingest rules" in text for text in said)


# How releases before rules versions marked a file they had read (store/memory.py, postgres/store.py).
OLDER_RELEASE_MARK = {
    "sqlite": "INSERT INTO files(path, size, mtime_ns, skipped_lines, ingested_at) VALUES (?, ?, ?, 0, '')"
    " ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,"
    " skipped_lines = excluded.skipped_lines, ingested_at = excluded.ingested_at",
    "postgres": "INSERT INTO files(member, path, size, mtime_ns, skipped_lines, ingested_at)"
    " VALUES ('alice', %s, %s, %s, 0, '') ON CONFLICT (member, path) DO UPDATE SET size = excluded.size,"
    " mtime_ns = excluded.mtime_ns, skipped_lines = excluded.skipped_lines, ingested_at = excluded.ingested_at",
}


def test_a_file_an_older_release_re_reads_is_read_again_by_this_one(backend_config: Config, tmp_path: Path) -> None:
    session = _session(tmp_path)
    with open_services(backend_config) as services:
        ingest_paths(services, [session.parent], embed=False, workers=1)
        # An older release (a hook still installed from it, a member's machine) re-reads the grown file
        # and marks it the way it did, unaware of rules versions; the chunks it made follow its rules.
        with session.open("a") as f:
            f.write("\n")
        st = session.stat()
        with services.store.atomic():
            services.store.conn.execute(  # type: ignore[attr-defined]
                OLDER_RELEASE_MARK[backend_config.storage.backend], (str(session), st.st_size, st.st_mtime_ns)
            )
    with open_services(backend_config) as services:
        report = ingest_paths(services, [session.parent], embed=False, workers=1)
        assert (report.files_unchanged, report.files_rules_changed) == (0, 1)
        # This release's own marks of a grown file keep its version: read once, then unchanged.
        with session.open("a") as f:
            f.write("\n")
        grown = ingest_paths(services, [session.parent], embed=False, workers=1)
        assert (grown.files_unchanged, grown.files_rules_changed) == (0, 0)
        assert ingest_paths(services, [session.parent], embed=False, workers=1).files_unchanged == 1


def test_team_memory_and_local_memory_each_re_read_their_files_when_the_rules_changed(
    postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "projects"
    write_session(folder, "/home/dev/shop", "5a0b0000-0000-4000-8000-000000000001", [("cookie loop", "SameSite")])
    write_session(folder, "/home/dev/diary", "d1a20000-0000-4000-8000-000000000002", [("my notes", "kept local")])
    team = {"storage.backend": "postgres", "storage.postgresUrl": new_database(postgres_server), "team.user": "alice"}
    with monkeypatch.context() as before:  # an older release, sharing nothing yet: both kept locally
        before.setattr(rules, "VERSION", rules.VERSION - 1)
        with Memory(tmp_path / "alice", overrides=team | {"team.shareProjects": []}) as memory:
            assert memory.ingest([folder], embed=False).files == 2
    team["team.shareProjects"] = ["shop"]
    # The shop shared now, team memory unreachable: the diary is re-read, the shop waits (not re-read).
    dead = team | {"storage.postgresUrl": f"postgresql://alice@/x?host={tmp_path / 'none'}&connect_timeout=2"}
    (tmp_path / "none").mkdir()
    with Memory(tmp_path / "alice", overrides=dead) as memory:
        offline = memory.ingest([folder], embed=False)
        assert (offline.files_rules_changed, offline.files_waiting) == (1, 1)
    with Memory(tmp_path / "alice", overrides=team) as memory:
        # The shop goes to team memory (new there), as `--force` would send it: the local copy is older.
        online = memory.ingest([folder], embed=False)
        assert (online.files_rules_changed, online.files_unchanged, online.files_waiting) == (0, 1, 0)
        assert online.session_count == 1 and not any("kept in local memory only" in n for n in online.notes)
        again = memory.ingest([folder], embed=False)
        assert (again.files_rules_changed, again.files_unchanged) == (0, 2)
        # The shop's local mark is older, but team memory holds it under today's rules: nothing to read.
        assert memory.stats().files_under_older_rules == 0
    # Team memory's own marks follow the rules too.
    monkeypatch.setattr(rules, "VERSION", rules.VERSION + 1)
    with Memory(tmp_path / "alice", overrides=team) as memory:
        # The diary, and the shop: marked in both stores, read again once (by team memory). It was
        # counted once per store: "3 transcript files", then the ingest read 2.
        assert memory.stats().files_under_older_rules == 2
        upgraded = memory.ingest([folder], embed=False)
        assert (upgraded.files_rules_changed, upgraded.files_unchanged) == (2, 0)
        assert memory.stats().files_under_older_rules == 0


def _as_gemini_json_lines(document: Path, chats: Path) -> Path:
    """A real Gemini CLI session document written as Gemini CLI has written sessions since April 2026:
    its header, then each message, a reply again with its token counts and again with its calls."""
    session = json.loads(document.read_text())
    lines: list[dict[str, Any]] = [{k: session[k] for k in ("sessionId", "projectHash", "startTime", "lastUpdated")}]
    for message in session["messages"]:
        said = {k: v for k, v in message.items() if k not in ("tokens", "toolCalls")}
        versions = [said, {**said, "tokens": message.get("tokens")}] if message["type"] == "gemini" else [said]
        if message.get("toolCalls"):
            versions.append({**said, "tokens": message.get("tokens"), "toolCalls": message["toolCalls"]})
        lines += [*versions, {"$set": {"lastUpdated": message["timestamp"]}}]
    path = chats / f"session-{session['sessionId'][:8]}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_gemini_json_lines_sessions_read_under_older_rules_end_as_a_fresh_ingest(
    backend_config: Config, agents_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e6's first turn splits into parts; read with every version of each reply, its parts held more
    # of its messages than today's: the store must not keep those as a fuller copy of the turn.
    chats = tmp_path / "gemini" / "chats"
    for name in ("e6/b2f769a273", "79/d52455f160"):
        _as_gemini_json_lines(agents_corpus / "gemini/computermode__test-repo" / name / "0/full.jsonl", chats)

    def every_version(path: Path, report: Any) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any], None]]]:
        records = [(n, record) for n, _, record in gemini.read_records(path, report)]
        return records[0][1], [(n, r, None) for n, r in records if "type" in r]

    with monkeypatch.context() as before:  # an older release: every version of a reply read as a reply
        before.setattr(gemini, "_records", every_version)
        before.setattr(rules, "VERSION", rules.VERSION - 1)
        with open_services(backend_config) as services:
            ingest_paths(services, [chats], embed=False, workers=1)
            texts = [text for *_, text in _memory(services.store)[0].values()]
            assert any(text.count("I will list the files in the current directory") == 3 for text in texts)
    with open_services(backend_config) as services:
        upgraded = ingest_paths(services, [chats], embed=False, workers=1)
        assert upgraded.chunks_updated > 0 and upgraded.chunks_removed > 0
        converged = _memory(services.store)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "fresh"))
    with open_services(Config()) as fresh:
        ingest_paths(fresh, [chats], embed=False, workers=1)
        assert converged == _memory(fresh.store)
