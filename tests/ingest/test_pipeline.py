"""Ingestion on real transcripts: counts, idempotence, growth, crash recovery, privacy."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services
from causantic.transcripts.model import TextBlock, ThinkingBlock, ToolResult
from causantic.transcripts.reader import read_file

REPO = Path(__file__).resolve().parents[2]
TEAM_SESSION = "daaain__claude-code-log/test/test_data/real_projects/-experiments-worktrees"
LARGE_REAL = "marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _ingest(services: Services, *paths: Path, workers: int = 1):  # type: ignore[no-untyped-def]
    return ingest_paths(services, list(paths), embed=False, workers=workers)


def _graph(services: Services) -> tuple[set[str], set[tuple[str, str, str]]]:
    conn = services.store.conn
    chunks = {r[0] for r in conn.execute("SELECT id FROM chunks")}
    edges = {
        (r[0], r[1], r[2]) for r in conn.execute("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges")
    }
    return chunks, edges


@pytest.mark.slow
def test_every_corpus_transcript_ingests_without_an_error(corpus_dir: Path) -> None:
    with open_services(Config()) as services:
        report = _ingest(services, corpus_dir, workers=2)
        counts = services.store.counts()
    assert report.errors == []
    assert report.files >= 400
    assert counts["chunks"] > 3000
    assert counts["sessions"] > 150
    assert counts["edges"]["by_type"]["within-chain"] > 2500  # type: ignore[index]


def test_the_team_session_yields_its_turns_teammates_and_team_edges(corpus_dir: Path) -> None:
    # The six agents are spawned with a `name`, so they are teammates: team-spawn/team-report edges
    # replace brief/debrief (tests/teams checks where each edge points).
    with open_services(Config()) as services:
        report = _ingest(services, corpus_dir / TEAM_SESSION)
        counts = services.store.counts()
        agents = {r[0] for r in services.store.conn.execute("SELECT DISTINCT agent FROM chunks")}
    assert report.sessions == 1
    assert report.subagent_streams == 6 and report.linked_subagents == 6 and report.teammates == 6
    by_type = counts["edges"]["by_type"]  # type: ignore[index]
    assert by_type["team-spawn"] == 6 and by_type["team-report"] == 6
    assert "brief" not in by_type and "debrief" not in by_type
    assert {"main", "alice", "bob", "carol", "alice2", "bob2", "carol2"} <= agents
    assert report.chunks_added == 67  # 66 before SendMessage calls showed their message text


def test_ingesting_the_same_files_twice_adds_nothing(corpus_dir: Path) -> None:
    with open_services(Config()) as services:
        first = _ingest(services, corpus_dir / TEAM_SESSION)
        before = _graph(services)
        second = _ingest(services, corpus_dir / TEAM_SESSION)
        forced = ingest_paths(services, [corpus_dir / TEAM_SESSION], embed=False, force=True, workers=1)
        after = _graph(services)
    assert first.chunks_added > 0
    assert second.files_unchanged == second.files and second.chunks_added == 0
    assert forced.chunks_added == 0 and sum(forced.edges_added.values()) == 0
    assert before == after


def test_lines_appended_to_a_session_become_new_chunks_linked_to_the_old_last_one(
    corpus_dir: Path, tmp_path: Path
) -> None:
    source = corpus_dir / LARGE_REAL
    lines = source.read_bytes().splitlines(keepends=True)
    growing = tmp_path / "projects" / "p" / source.name
    growing.parent.mkdir(parents=True)
    growing.write_bytes(b"".join(lines[: len(lines) // 2]))
    with open_services(Config()) as services:
        _ingest(services, growing)
        old_chunks, _ = _graph(services)
        old_last = services.store.session_chunk_ids(_session_id(services))[-1]
        with growing.open("ab") as handle:
            handle.write(b"".join(lines[len(lines) // 2 :]))
        report = _ingest(services, growing)
        grown = _graph(services)
        followers = {t for s, t, kind in grown[1] if s == old_last and kind == "within-chain"}
    assert report.chunks_added > 0
    assert old_chunks <= grown[0] | set()  # no earlier chunk disappeared
    assert followers, "the previous last chunk must link forward to what was appended"
    fresh_home = tmp_path / "fresh"
    os.environ["CAUSANTIC_HOME"] = str(fresh_home)
    whole = tmp_path / "whole" / "p" / source.name
    whole.parent.mkdir(parents=True)
    shutil.copy(source, whole)
    with open_services(Config()) as fresh:
        _ingest(fresh, whole)
        assert _graph(fresh) == grown


def _session_id(services: Services) -> str:
    return services.store.conn.execute("SELECT id FROM sessions").fetchone()[0]


@pytest.mark.slow
def test_a_killed_batch_ingest_leaves_a_consistent_store_that_the_next_run_completes(
    corpus_dir: Path, tmp_path: Path, causantic_home: Path
) -> None:
    # The whole Claude Code corpus (65 MB): ingest commits at most every half second, so on a fast,
    # quiet machine two projects went in one commit and no kill could land mid-run. An attempt whose
    # kills all came after the last commit starts again from an empty home (at most three).
    subset = tmp_path / "subset"
    shutil.copytree(corpus_dir, subset)
    command = [sys.executable, "-m", "causantic", "batch-ingest", str(subset), "--no-embed", "--json"]
    for attempt in range(3):
        home = causantic_home / f"attempt-{attempt}"
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "CAUSANTIC_HOME": str(home)}
        partial_counts = []
        for extra_delay in (0.0, 0.3, 0.6):
            proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _wait_for_first_commit(home / "memory.db", proc)
            time.sleep(extra_delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            assert _left_running(str(subset)) == [], "the killed ingest's workers outlived it"
            conn = sqlite3.connect(home / "memory.db")
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            partial_counts.append(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
            dangling = conn.execute(
                "SELECT COUNT(*) FROM edges WHERE source_chunk_id NOT IN (SELECT id FROM chunks)"
                " OR target_chunk_id NOT IN (SELECT id FROM chunks)"
            ).fetchone()[0]
            assert dangling == 0
            conn.close()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        assert json.loads(done.stdout)["errors"] == []
        os.environ["CAUSANTIC_HOME"] = str(home)  # restored by the autouse fixture
        with open_services(Config()) as resumed:
            resumed_graph = _graph(resumed)
        if any(0 < n < len(resumed_graph[0]) for n in partial_counts):
            break
    else:
        pytest.fail(f"no kill landed mid-ingest in three attempts (chunk counts seen: {partial_counts})")
    os.environ["CAUSANTIC_HOME"] = str(tmp_path / "clean")
    with open_services(Config()) as clean:
        _ingest(clean, subset, workers=2)
        assert _graph(clean) == resumed_graph


def _left_running(argument: str, within: float = 5.0) -> list[int]:
    """Processes still running, after ``within`` seconds, whose command line holds ``argument``
    (the pool's forked workers keep their parent's); on Linux, where /proc lists them."""
    deadline = time.monotonic() + within
    while True:
        running = []
        for entry in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if argument in entry.read_bytes().decode(errors="replace"):
                    running.append(int(entry.parent.name))
            except OSError:
                pass  # ended meanwhile
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.1)


def _wait_for_first_commit(db: Path, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Block until the ingest has committed some chunks (or ended), so the kill lands mid-run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=1) as conn:
                    if conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] > 0:
                        return
            except sqlite3.OperationalError:
                pass  # schema not created yet
        time.sleep(0.02)


def test_thinking_text_is_never_searchable(corpus_dir: Path) -> None:
    path = corpus_dir / "marot__spotter/test/fixtures/transcripts/tool_heavy.jsonl"
    transcripts, _ = read_file(path)
    thinking, visible = [], []
    for transcript in transcripts:
        for message in transcript.messages:
            for block in message.blocks:
                if isinstance(block, ThinkingBlock):
                    thinking.append(block.text)
                elif isinstance(block, TextBlock | ToolResult):
                    visible.append(block.text)
    visible_words = set(re.findall(r"[a-z]{7,}", " ".join(visible).lower()))
    private = sorted(set(re.findall(r"[a-z]{7,}", " ".join(thinking).lower())) - visible_words)
    assert len(private) >= 3, "the fixture must have words only its thinking blocks use"
    with open_services(Config()) as services:
        _ingest(services, path)
        # The keyword index holds exactly these two columns; stemming makes a search for the word
        # itself match visible relatives ("catching" -> "catch"), so the columns are checked.
        for word in private[:50]:
            assert not services.store.conn.execute(
                "SELECT 1 FROM chunks WHERE lower(content) LIKE ? OR lower(search_terms) LIKE ?",
                (f"%{word}%", f"%{word}%"),
            ).fetchone(), word


def test_a_planted_secret_is_stored_redacted_and_cannot_be_found(tmp_path: Path) -> None:
    key = "AKIA" + "Z7Q2" * 4
    token = "ghp_" + "Q9w8E7r6T5y4" * 3
    records = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s-secret",
            "cwd": "/tmp/secret-proj",
            "timestamp": "2026-01-01T10:00:00Z",
            "message": {"role": "user", "content": f"deploy with AWS key {key} and token {token}"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "sessionId": "s-secret",
            "cwd": "/tmp/secret-proj",
            "timestamp": "2026-01-01T10:00:05Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": 'Set DB_PASSWORD="tr0ub4dor&3horse" in the deploy env.'}],
            },
        },
    ]
    path = tmp_path / "s-secret.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with open_services(Config()) as services:
        _ingest(services, path)
        content = "\n".join(r[0] for r in services.store.conn.execute("SELECT content FROM chunks"))
        assert key not in content and token not in content and "tr0ub4dor" not in content
        assert "[REDACTED:aws-access-key]" in content and "DB_PASSWORD" in content
        for probe in (key, token, "tr0ub4dor"):
            assert services.store.keyword_search(probe) == []


def test_two_projects_with_the_same_folder_name_stay_apart(tmp_path: Path) -> None:
    paths = []
    for i, cwd in enumerate(("/home/a/work/api", "/home/b/clients/api", "/home/user/project", "/Users/user/project")):
        record = {
            "type": "user",
            "uuid": f"u{i}",
            "sessionId": f"s{i}",
            "cwd": cwd,
            "timestamp": f"2026-01-0{i + 1}T10:00:00Z",
            "message": {"role": "user", "content": f"hello {i}"},
        }
        path = tmp_path / f"s{i}.jsonl"
        path.write_text(json.dumps(record) + "\n")
        paths.append(path)
    with open_services(Config()) as services:
        _ingest(services, *paths)
        names = sorted(r[0] for r in services.store.conn.execute("SELECT name FROM projects"))
    assert names == ["Users/user/project", "clients/api", "home/user/project", "work/api"]


@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_and_serial_ingest_build_the_same_graph(corpus_dir: Path, tmp_path: Path, workers: int) -> None:
    with open_services(Config()) as services:
        _ingest(services, corpus_dir / "randlee__claude-history", workers=workers)
        graph = _graph(services)
    assert len(graph[0]) > 50
    os.environ["CAUSANTIC_HOME"] = str(tmp_path / f"other-{workers}")
    with open_services(Config()) as other:
        _ingest(other, corpus_dir / "randlee__claude-history", workers=3 - workers)
        assert _graph(other) == graph


@pytest.mark.parametrize("copy_lines", [15, 40])
def test_a_session_in_two_files_gives_the_same_graph_whichever_is_read_first(
    corpus_dir: Path, tmp_path: Path, copy_lines: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An early copy of a session (its first lines) beside the full file: same chunks, texts and edges
    in both orders, and the same as the full file alone (issue 18: 168 vs 169 edges)."""
    full = corpus_dir / LARGE_REAL
    early = tmp_path / "early"
    early.mkdir()
    (early / "copy.jsonl").write_text("".join(full.read_text().splitlines(keepends=True)[:copy_lines]))
    results = []
    for name, order in (("full-first", [full, early]), ("copy-first", [early, full]), ("alone", [full])):
        monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / name))
        with open_services(Config()) as services:
            for path in order:  # separate runs, as when the copy turns up later
                _ingest(services, path)
            chunks, edges = _graph(services)
            texts = {r[0]: r[1] for r in services.store.conn.execute("SELECT id, content FROM chunks")}
        results.append((chunks, edges, texts))
    assert results[0][1] == results[1][1] == results[2][1]
    assert results[0][2] == results[1][2] == results[2][2]


def test_the_same_files_by_relative_and_absolute_path_are_read_once(
    corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(corpus_dir / TEAM_SESSION, folder)
    monkeypatch.chdir(tmp_path)
    with open_services(Config()) as services:
        first = _ingest(services, Path("sessions"), folder)  # both in one run
        assert first.files == len(list(folder.rglob("*.jsonl")))
        again = _ingest(services, Path("sessions"))  # relative, after absolute
        assert again.files_unchanged == again.files and again.chunks_added == 0


def test_an_unreadable_file_is_an_error_and_the_command_fails(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "gone.jsonl").symlink_to(tmp_path / "missing.jsonl")  # listed, but cannot be read
    done = subprocess.run(
        [sys.executable, "-m", "causantic", "ingest", "--no-embed", str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{folder / 'gone.jsonl'}: broken link: its target {tmp_path / 'missing.jsonl'}" in done.stdout  # one line


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user (root reads any folder)")
def test_an_unreadable_subfolder_is_reported_not_skipped_in_silence(corpus_dir: Path) -> None:
    """Discovery runs in a forked child as `nobody`, for whom one subfolder is closed."""
    import pwd
    import tempfile

    from causantic.transcripts.discovery import discover

    nobody = pwd.getpwnam("nobody")
    root = Path(tempfile.mkdtemp(prefix="causantic-unreadable-"))
    try:
        root.chmod(0o755)
        (root / "open").mkdir(mode=0o755)
        shutil.copy(corpus_dir / LARGE_REAL, root / "open" / "a.jsonl")
        (root / "open" / "a.jsonl").chmod(0o644)
        (root / "closed").mkdir(mode=0o700)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read)
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
                problems: list[tuple[str, str]] = []
                found = discover(root, problems)
                os.write(write, json.dumps([len(found), problems]).encode())
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as pipe:
            found, problems = json.loads(pipe.read())
    finally:
        shutil.rmtree(root)
    assert found == 1
    assert problems == [[str(root / "closed"), "cannot list this folder: Permission denied"]]


PROGRESS_SESSION = "marot__spotter/test/fixtures/transcripts/4d5611e5-241a-462a-8d15-5122611a9569"


def test_sub_agent_messages_carried_in_progress_records_are_ingested(corpus_dir: Path, tmp_path: Path) -> None:
    """Claude Code 2.1.x copies a sub-agent's messages into agent_progress records; when the
    sub-agent has no file of its own, those copies are the only record of its work (issue 18)."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(corpus_dir / f"{PROGRESS_SESSION}.jsonl", alone)
    with open_services(Config()) as services:
        _ingest(services, alone)
        rows = services.store.conn.execute("SELECT content FROM chunks WHERE agent_id = 'a2898e3'").fetchall()
        assert len(rows) > 5
        assert services.store.keyword_search("TranscriptRenderer SubagentLive")


def test_an_agent_with_its_own_file_is_not_read_twice_from_progress_records(
    corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    shutil.copy(corpus_dir / f"{PROGRESS_SESSION}.jsonl", folder)
    shutil.copytree(corpus_dir / PROGRESS_SESSION, folder / Path(PROGRESS_SESSION).name)
    with open_services(Config()) as services:
        _ingest(services, folder)
        rows = services.store.conn.execute("SELECT content FROM chunks WHERE agent_id = 'a2898e3'").fetchall()
    assert rows and len({r[0] for r in rows}) == len(rows)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "file-only"))
    only_file = tmp_path / "only-file"
    shutil.copytree(corpus_dir / PROGRESS_SESSION / "subagents", only_file)
    with open_services(Config()) as services:
        _ingest(services, only_file / "agent-a2898e3.jsonl")
        from_file = services.store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert len(rows) == from_file


def test_the_skipped_lines_figure_counts_damaged_lines_only(corpus_dir: Path, tmp_path: Path) -> None:
    """A copy of a real session with 3 damaged lines, 2 well-formed records of an unusable shape and a
    line with one invalid byte: 3 lines skipped (issue 18: the figure was inflated)."""
    lines = (corpus_dir / LARGE_REAL).read_bytes().split(b"\n")
    first = json.loads(lines[0])
    damaged = [b"{not json", b"[1, 2, 3]", b'"just a string"']
    unusable = [json.dumps({**first, "uuid": f"odd-{i}", "type": "user", "message": None}).encode() for i in range(2)]
    text_line = next(i for i, raw in enumerate(lines) if b'"type":"user"' in raw and b"Ok" not in raw)
    bad_byte = lines[text_line].replace(b'"content":"', b'"content":"\xff', 1)
    body = lines[:5] + damaged + unusable + [bad_byte] + lines[5:]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(body))
    with open_services(Config()) as services:
        report = _ingest(services, path)
    assert report.broken_lines == 3
    assert report.as_dict()["ignored_records"]["malformed message"] == 2  # type: ignore[index]


@pytest.mark.slow
def test_a_pasted_8_mb_line_is_kept_for_keyword_search_redacted_and_summarised_for_embedding(
    corpus_dir: Path, tmp_path: Path
) -> None:
    # One single line of 8 MB of real transcript text (a pasted log or bundle), with a word planted
    # near its start, middle and end and a secret in the middle. Issue 18: it used to take minutes.
    from causantic.ingest.chunker import long_lines_summarised
    from causantic.ingest.redact import redactor_from
    from causantic.transcripts import without_injected

    text = " ".join((corpus_dir / LARGE_REAL).read_text(encoding="utf-8").split())
    size = 8_000_000
    line = (text * (size // len(text) + 1))[:size]
    secret = "ghp_" + "Kd8s7F6g5H4j3K2l1Z0x" * 2
    words = ("quokkaopening", "quokkamiddle", "quokkaclosing")
    line = f"{words[0]} {line[: size // 2]} {words[1]} {secret} {line[size // 2 :]} {words[2]}"
    record = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s-long-line",
        "cwd": "/tmp/long-line",
        "timestamp": "2026-01-01T10:00:00Z",
        "message": {"role": "user", "content": f"Why does this bundle fail?\n{line}"},
    }
    path = tmp_path / "s-long-line.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with open_services(Config()) as services:
        report = _ingest(services, path)
        store = services.store
        found = {word: store.keyword_search(word) for word in words}
        contents = [r[0] for r in store.conn.execute("SELECT content FROM chunks ORDER BY part")]
        titles = [r[0] for r in store.conn.execute("SELECT title FROM sessions")]
    assert report.errors == [] and report.chunks_added == len(contents) > 5000
    assert all(found.values()), found
    assert secret not in "".join(contents) and "[REDACTED:github-token]" in "".join(contents)
    # Every character of the (redacted) line is stored once, in order: the slices, without their
    # markers, put back together are the line, nothing lost and nothing repeated.
    slices = [c for c in contents if "[long line " in c]
    kept = "".join(re.sub(r"^.*?\[long line \d+/\d+ of [\d,]+ characters\] ", "", c, flags=re.S) for c in slices)
    expected = redactor_from(Config().redaction)(without_injected(line))  # what the prompt renders to
    same = kept == expected  # (not compared inside assert: a diff of 8 MB strings takes minutes)
    parted = len(os.path.commonprefix([kept, expected])) if not same else None
    assert same, f"stored {len(kept):,} characters, expected {len(expected):,}; they part at {parted}"
    # The embedding model sees a short summary of a slice, not the slice: two texts in all.
    summaries = {long_lines_summarised(c) for c in contents if "[long line" in c}
    assert len(summaries) <= 2 and all(len(s) < 700 for s in summaries)
    assert titles and len(titles[0]) <= 200 and titles[0].startswith("Why does this bundle fail?")


def test_a_transcript_deleted_after_it_was_found_is_named_once_and_the_rest_is_read(tmp_path: Path) -> None:
    """Claude Code deletes old transcripts on its own (cleanupPeriodDays): one gone between discovery
    and reading was reported as 'TranscriptError: Cannot read transcript file <path>: …' after its
    path, the class name and the path said twice."""
    from transcript_files import write_session

    folder = tmp_path / "projects"
    kept = write_session(folder, "/work/shop", "a1b2c3d4-0000-4000-8000-000000000001", [("fix the build", "done")])
    gone = write_session(folder, "/work/shop", "b1b2c3d4-0000-4000-8000-000000000002", [("fix the tests", "ok")], day=3)
    with open_services(Config()) as services:
        report = ingest_paths(services, [folder], embed=False, workers=1, on_discovered=lambda *_: gone.unlink())
    assert report.errors == [(str(gone), "cannot read it: No such file or directory")]
    assert report.session_ids == {"a1b2c3d4-0000-4000-8000-000000000001"} and kept.exists()
