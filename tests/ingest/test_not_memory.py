"""What is not memory never becomes memory: warm-up agents, IDE wrappers, reminders, Causantic's own
briefing. Real corpus sessions throughout; an older store is cleaned on the next ingest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from chunk_records import chunk_record

from causantic.config import Config
from causantic.ingest.chunker import chunk_id
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services
from causantic.store.memory import MemoryStore
from causantic.store.records import ChunkRecord
from causantic.transcripts import BRIEFING_OPENING, MEMORY_BLOCK_END, MEMORY_BLOCK_START

REAL = "daaain__claude-code-log/test/test_data/real_projects"
SOUND = f"{REAL}/-Users-dain-workspace-JSSoundRecorder"  # 8 reply-only warm-ups, IDE wrappers
SOUND_SESSION = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"
CODERABBIT = f"{REAL}/-Users-dain-workspace-coderabbit-review-helper"


@pytest.fixture
def corpus(corpus_dir: Path) -> Path:
    return corpus_dir


@pytest.fixture
def services() -> Services:
    with open_services(Config()) as svc:
        yield svc  # type: ignore[misc]


def _ingest(services: Services, *paths: Path, force: bool = False):  # type: ignore[no-untyped-def]
    return ingest_paths(services, list(paths), embed=False, workers=1, force=force)


def _contents(services: Services) -> list[str]:
    return [r[0] for r in services.store.conn.execute("SELECT content FROM chunks")]


def test_warm_up_agents_whose_prompt_line_is_missing_form_no_session_and_no_chunk(
    corpus: Path, services: Services
) -> None:
    report = _ingest(services, corpus / SOUND)
    sessions = [r[0] for r in services.store.conn.execute("SELECT id FROM sessions")]
    assert sessions == [SOUND_SESSION]  # two sessions used to exist only for their warm-up replies
    assert report.skipped_subagents["warm-up"] == 8
    assert not any("I'm ready to help you explore" in text for text in _contents(services))


def test_real_sub_agents_are_still_kept_beside_skipped_warm_ups(corpus: Path, services: Services) -> None:
    report = _ingest(services, corpus / CODERABBIT)
    agents = {r[0] for r in services.store.conn.execute("SELECT DISTINCT agent_id FROM chunks")}
    assert {"668b5ac2", "9fa17969", "b52b1c09", "db734024", "ea02459f", "f36dc5e5"} <= agents
    assert report.skipped_subagents["warm-up"] >= 20
    assert not any(text.startswith("[User]\nWarmup") for text in _contents(services))


def test_ide_wrappers_and_tool_result_reminders_stay_out_of_chunks_but_the_prompt_stays(
    corpus: Path, services: Services
) -> None:
    _ingest(services, corpus / SOUND)
    texts = _contents(services)
    for wrapper in ("<ide_opened_file>", "<ide_selection>", "<system-reminder>", "This may or may not be related"):
        assert not any(wrapper in text for text in texts), wrapper
    assert any(text.startswith("[User]\nOK, so this was just so you know what there is now") for text in texts)
    assert any("Let's also Migrate to AudioWorklet" in text for text in texts)


def test_a_session_title_is_its_first_real_prompt_not_an_ide_wrapper(corpus: Path, services: Services) -> None:
    _ingest(services, corpus / SOUND)
    (title,) = services.store.conn.execute("SELECT title FROM sessions").fetchone()
    assert title.startswith("OK, so this was just so you know what there is now, but after more than a decade")


def _with_injected_records(corpus: Path, folder: Path) -> Path:
    """A real session with the text Causantic injects (its briefing, echoed as hook output, and its
    CLAUDE.md block) added as the user messages Claude Code writes for them."""
    source = corpus / SOUND / f"{SOUND_SESSION}.jsonl"
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    first_user = next(i for i, r in enumerate(records) if r.get("type") == "user")
    base = records[first_user]
    briefing = (
        f"SessionStart:startup hook success: {BRIEFING_OPENING} (JSSoundRecorder; 3 session(s) stored),"
        " from Causantic.\n\nWhere work stopped: fix the drone synth"
    )
    block = f"{MEMORY_BLOCK_START}\n## Memory Context\n\nRecent sessions: tokenizer redirect\n{MEMORY_BLOCK_END}"
    injected = [
        {
            **base,
            "uuid": "injected-1",
            "message": {"role": "user", "content": f"<system-reminder>{briefing}</system-reminder>"},
        },
        {**base, "uuid": "injected-2", "message": {"role": "user", "content": briefing}},
        {
            **base,
            "uuid": "injected-3",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": f"{block}\n\nPlease also check the sequencer"}],
            },
        },
    ]
    records[first_user:first_user] = injected
    target = folder / source.name
    target.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return target


def test_causantic_own_briefing_and_memory_block_never_become_chunk_text_or_a_title(
    corpus: Path, services: Services, tmp_path: Path
) -> None:
    (tmp_path / "t").mkdir()
    _ingest(services, _with_injected_records(corpus, tmp_path / "t"))
    texts = _contents(services)
    assert not any(BRIEFING_OPENING in t or "Memory Context" in t or "MEMORY_START" in t for t in texts)
    assert any("Please also check the sequencer" in t for t in texts)  # the user's own words stay
    (title,) = services.store.conn.execute("SELECT title FROM sessions").fetchone()
    assert title == "Please also check the sequencer"


def test_a_store_written_by_older_rules_loses_its_warm_up_chunks_on_the_next_ingest(
    corpus: Path, services: Services, tmp_path: Path
) -> None:
    from causantic.store import migrations

    db = tmp_path / "old.db"
    # A store from before m008: the schema and rows an older ingest left, warm-up reply included.
    old_migrations = migrations.MIGRATIONS
    migrations.MIGRATIONS = tuple(m for m in old_migrations if m.__name__ < "m005")
    try:
        old = MemoryStore(db)
        project = old.resolve_project("/Users/dain/workspace/JSSoundRecorder", "/Users/dain/workspace/JSSoundRecorder")
        with old.atomic():
            old.conn.execute("INSERT INTO sessions(id, project_id) VALUES (?, ?)", (SOUND_SESSION, project.id))
            old.conn.execute(
                "INSERT INTO chunks(id, session_id, project_id, agent, agent_id, turn_index, part, start_time,"
                " end_time, content, content_hash, approx_tokens, created_at) VALUES ('warm', ?, ?, 'subagent',"
                " '88061e52', 0, 0, '2025-11-17T23:50:04Z', '2025-11-17T23:50:04Z',"
                " '[Assistant]\nHello! I''m ready to help you explore', 'h', 10, 'x')",
                (SOUND_SESSION, project.id),
            )
            old.conn.execute(
                "INSERT INTO files(path, size, mtime_ns, ingested_at) VALUES (?, 1, 1, 'x')",
                (str(corpus / SOUND / "agent-88061e52.jsonl"),),
            )
        old.close()
    finally:
        migrations.MIGRATIONS = old_migrations
    services.store.close()
    services.store = MemoryStore(db)  # opening it applies m008: file checkpoints are forgotten
    assert services.store.conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] == 0
    report = _ingest(services, corpus / SOUND)
    assert report.chunks_removed == 1
    assert not services.store.get_chunks(["warm"])
    assert not any("Hello! I'm ready" in text for text in _contents(services))


def test_a_forced_re_ingest_removes_a_stored_chunk_of_a_stream_the_rules_now_skip(
    corpus: Path, services: Services, tmp_path: Path
) -> None:
    shutil.copytree(corpus / SOUND, tmp_path / "sound")
    _ingest(services, tmp_path / "sound")
    store = services.store
    project = store.resolve_project("/Users/dain/workspace/JSSoundRecorder", "/Users/dain/workspace/JSSoundRecorder")
    at = "2025-11-17T23:50:05.000000Z"
    # As an older version stored it: made of the warm-up's own reply (a chunk of that stream made
    # of other messages, a copy of it elsewhere holding more, is not the warm-up's to drop).
    lines = (tmp_path / "sound" / "agent-88061e52.jsonl").read_text(encoding="utf-8").splitlines()
    reply = next(r["uuid"] for r in map(json.loads, lines) if r.get("type") == "assistant")
    stale = chunk_record(
        0,
        id="stale",
        session_id=SOUND_SESSION,
        agent="subagent",
        agent_id="88061e52",
        start_time=at,
        end_time=at,
        content="[Assistant]\nHello! I'm Claude Code",
        content_hash="h",
        approx_tokens=9,
        message_uuids=(reply,),
    )
    with store.atomic():
        store.save_session(project, SOUND_SESSION, [stale])
    report = _ingest(services, tmp_path / "sound", force=True)
    assert report.chunks_removed == 1 and not store.get_chunks(["stale"])


def test_a_turn_that_shrank_loses_its_stale_trailing_part_but_another_files_turn_is_kept(
    corpus: Path, services: Services
) -> None:
    _ingest(services, corpus / SOUND)
    store = services.store
    row = store.conn.execute(
        "SELECT turn_index, MAX(part) AS part, message_uuids, start_time FROM chunks WHERE agent_id IS NULL"
        " GROUP BY turn_index ORDER BY turn_index DESC LIMIT 1"
    ).fetchone()
    first = store.conn.execute(
        "SELECT id, message_uuids FROM chunks WHERE agent_id IS NULL AND turn_index = ? AND part = 0",
        (row["turn_index"],),
    ).fetchone()
    # The turn's first message, which names its parts (chunk_id): a later part of it has the id
    # that message and the part's number make.
    anchor = next(u for u in json.loads(first["message_uuids"]) if chunk_id(SOUND_SESSION, "main", u, 0) == first["id"])
    project = store.resolve_project("/Users/dain/workspace/JSSoundRecorder", "/Users/dain/workspace/JSSoundRecorder")

    def extra(chunk_id: str, uuids: tuple[str, ...]) -> ChunkRecord:
        return chunk_record(
            row["turn_index"],
            id=chunk_id,
            session_id=SOUND_SESSION,
            part=row["part"] + 1,
            start_time=row["start_time"],
            end_time=row["start_time"],
            content="[Result:Read] x\n\n<system-reminder>malware</system-reminder>",
            content_hash=chunk_id,
            approx_tokens=9,
            message_uuids=uuids,
        )

    # As an older version stored it: one more part of the last turn, sharing its messages.
    stale = extra(
        chunk_id(SOUND_SESSION, "main", anchor, row["part"] + 1), tuple(json.loads(row["message_uuids"]))[-1:]
    )
    # Same turn number, other messages: a turn of the same session read from another file.
    other = extra("other-file", ("some-other-message",))
    with store.atomic():
        store.save_session(project, SOUND_SESSION, [stale, other])
    report = _ingest(services, corpus / SOUND, force=True)
    assert report.chunks_removed == 1
    assert set(store.get_chunks([stale.id, "other-file"])) == {"other-file"}


def test_the_injected_text_markers_are_the_ones_the_hooks_write() -> None:
    from causantic.hooks.briefing import BRIEFING_OPENING as written_opening
    from causantic.hooks.claude_md import END, START

    assert (START, END) == (MEMORY_BLOCK_START, MEMORY_BLOCK_END)
    assert written_opening == BRIEFING_OPENING
