"""Sessions held by more than one file (copies in a second folder, a few lines copied and edited,
fixtures reusing ids): one project per session, and a forced re-read of unchanged files changes
nothing while no copy's fuller text is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chunk_records import chunk_record
from transcript_files import write_session

from causantic.config import Config
from causantic.ingest.pipeline import IngestReport
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import ChunkScope

SESSION = "5e55a0c1-0000-4000-8000-000000000001"
# One turn of an answer in two long messages: several chunks, the later ones made of the second alone.
FIRST = " ".join(f"The retry budget step {n} waits longer before the upload is tried again." for n in range(60))
SECOND = " ".join(f"Then the changelog entry {n} records why the budget grew this week." for n in range(60))


def _ingest(services: Services, *paths: Path, force: bool = False) -> IngestReport:
    return ingest_paths(services, list(paths), embed=False, workers=1, force=force)


def _full_session(folder: Path, first: str = FIRST, second: str = SECOND) -> list[str]:
    """A session whose first turn's answer comes in two messages (long ones: several chunks); its
    lines, as written."""
    path = write_session(
        folder, "/work/site", SESSION, [("explain the retry budget", first), ("thanks", "You are welcome.")]
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    answer = json.loads(lines[1])
    more = {**answer, "uuid": answer["uuid"][:-3] + "099", "parentUuid": answer["uuid"]}
    more["message"] = {**answer["message"], "id": "msg_more", "content": [{"type": "text", "text": second}]}
    more["timestamp"] = answer["timestamp"].replace(":00.000Z", ":30.000Z")
    thanks = {**json.loads(lines[2]), "parentUuid": more["uuid"]}
    lines = [lines[0], lines[1], json.dumps(more), json.dumps(thanks), *lines[3:]]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return lines


def _copy(folder: Path, lines: list[str]) -> Path:
    """Some of a session's lines in a file of their own."""
    path = folder / "copy.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _messages(store: MemoryStoreProtocol) -> set[str]:
    return {u for c in store.chunks_in(ChunkScope()) for u in c.message_uuids}


def _texts(store: MemoryStoreProtocol) -> dict[str, str]:
    return {c.id: c.content for c in store.chunks_in(ChunkScope())}


@pytest.mark.parametrize("copy_first", [False, True], ids=["full-first", "copy-first"])
def test_a_session_with_a_line_copied_under_another_cwd_is_one_project(
    backend_config: Config, tmp_path: Path, copy_first: bool
) -> None:
    """The overview counts projects holding chunks, the project list those holding sessions: a chunk
    of a copied line filed under its own cwd made them differ (68 against 67 on the corpus)."""
    _full_session(tmp_path / "projects")
    turns = [
        ("explain the retry budget", FIRST),
        ("thanks", "You are welcome."),
        ("and the tokenizer?", "It splits words."),
    ]
    resumed = write_session(tmp_path / "elsewhere", "/work/tokenizer", SESSION, turns)
    copy = _copy(tmp_path / "copies", resumed.read_text(encoding="utf-8").splitlines()[4:])  # its last turn alone
    order = [copy, tmp_path / "projects"] if copy_first else [tmp_path / "projects", copy]
    with open_services(backend_config) as services:
        store = services.store
        _ingest(services, *order)
        listed = [(p.path, p.sessions) for p in store.project_activity()]
        holding = [(p.path, p.sessions) for p in store.project_summaries()]
        assert store.counts()["projects"] == len(listed) == 1
        assert holding == listed
        if not copy_first:  # the session is filed where it began; the copy's chunk follows it
            assert listed == [("/work/site", 1)]
        _ingest(services, *order, force=True)  # read again: still one project
        assert [(p.path, p.sessions) for p in store.project_summaries()] == listed


def test_a_forced_re_read_files_a_chunk_an_older_version_put_elsewhere_with_its_session(
    backend_config: Config, tmp_path: Path
) -> None:
    """A store an older version wrote: one chunk of the session under the copied line's cwd. Reading
    the session again moves it to the session's project, and the two counts agree."""
    _full_session(tmp_path / "projects")
    with open_services(backend_config) as services:
        store = services.store
        _ingest(services, tmp_path / "projects")
        elsewhere = store.resolve_project("/work/tokenizer", "/work/tokenizer")
        stray = chunk_record(7, id="stray", session_id=SESSION, start_time="2026-11-02T10:00:00.000Z")
        with store.atomic():
            store.save_session(elsewhere, SESSION, [stray])
        assert store.counts()["projects"] == 2 and len(store.project_activity()) == 1
        _ingest(services, tmp_path / "projects", force=True)
        assert store.counts()["projects"] == len(store.project_activity()) == 1
        assert [(p.path, p.chunks) for p in store.project_summaries()] == [("/work/site", len(_texts(store)))]


def test_a_forced_re_read_of_a_session_and_a_copy_of_one_message_changes_nothing(tmp_path: Path) -> None:
    """A file holding one message from the middle of a long turn beside the whole session (as
    claude-code-log's excerpts): every --force read dropped the turn's later parts and added them back."""
    lines = _full_session(tmp_path / "projects")
    copy = _copy(tmp_path / "copies", [lines[2]])
    whole = {json.loads(line)["uuid"] for line in lines}
    with open_services(Config()) as services:
        _ingest(services, copy, tmp_path / "projects")
        assert _messages(services.store) == whole
        texts = _texts(services.store)
        for _ in range(2):
            report = _ingest(services, copy, tmp_path / "projects", force=True)
            assert (report.chunks_added, report.chunks_removed, report.chunks_updated) == (0, 0, 0)
            assert _texts(services.store) == texts


def test_copies_that_tell_a_turn_differently_keep_the_first_read_and_stay_put(tmp_path: Path) -> None:
    """Two files with the same session and message ids but other words (test fixtures reuse ids):
    each read replaced the other's text; now the first file read keeps it, read after read."""
    first = write_session(tmp_path / "one", "/work/site", SESSION, [("fix the upload", "Raised the retry budget.")])
    second = write_session(tmp_path / "two", "/work/site", SESSION, [("fix the upload", "Rewrote the uploader.")])
    with open_services(Config()) as services:
        _ingest(services, first, second)
        texts = _texts(services.store)
        assert any("Raised the retry budget" in t for t in texts.values())
        report = _ingest(services, first, second, force=True)
        assert (report.chunks_added, report.chunks_removed, report.chunks_updated) == (0, 0, 0)
        assert _texts(services.store) == texts


def test_a_fuller_copy_read_later_still_replaces_a_shorter_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The opening copy read first and the whole session after it in one run: every chunk of the
    whole session is stored as the whole session alone makes it (its first turn's one chunk, with
    the second answer message the copy lacks, included)."""
    lines = _full_session(tmp_path / "projects", "Raised the retry budget.", "Also noted it in the changelog.")
    copy = _copy(tmp_path / "copies", lines[:2])
    held = []
    for name, paths in (("alone", [tmp_path / "projects"]), ("copy-first", [copy, tmp_path / "projects"])):
        monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / name))
        with open_services(Config()) as services:
            _ingest(services, *paths)
            held.append(_texts(services.store))
    alone, both = held
    assert {i: both.get(i) for i in alone} == alone


def test_a_forced_re_read_of_the_corpus_copies_changes_nothing(corpus_dir: Path) -> None:
    """claude-code-log's fixtures hold several sessions in many files (one-line excerpts, stubs of a
    sub-agent, other conversations under the same ids): --force removed and re-added 29 chunks."""
    folder = corpus_dir / "daaain__claude-code-log"
    with open_services(Config()) as services:
        _ingest(services, folder)
        texts = _texts(services.store)
        report = _ingest(services, folder, force=True)
        assert (report.chunks_added, report.chunks_removed, report.chunks_updated) == (0, 0, 0)
        assert _texts(services.store) == texts
        assert services.store.counts()["projects"] == len(services.store.project_activity())


def test_a_re_read_gives_a_turn_the_number_of_the_copy_whose_text_is_kept(tmp_path: Path) -> None:
    """An older release kept the number of a turn from the first file read (an excerpt: its turn 0)
    under the text of the whole session read after it (its second turn). The excerpt's version is
    never written again (the whole session shows more of the turn), so a re-read numbered the turn as
    the whole session does only once the whole session is no longer skipped as a copy read before."""
    turns = [("fix the upload", "Raised the retry budget."), ("and the tokenizer?", "It splits words.")]
    whole = write_session(tmp_path / "projects", "/work/site", SESSION, turns)
    excerpt = _copy(tmp_path / "copies", whole.read_text(encoding="utf-8").splitlines()[2:3])  # a prompt alone
    with open_services(Config()) as services:
        _ingest(services, excerpt, tmp_path / "projects")
        numbers = {c.id: c.turn_index for c in services.store.chunks_in(ChunkScope())}
        assert sorted(numbers.values()) == [0, 1]
        [second] = [i for i, n in numbers.items() if n == 1]
        services.store.conn.execute("UPDATE chunks SET turn_index = 0 WHERE id = ?", (second,))  # as stored then
        report = _ingest(services, excerpt, tmp_path / "projects", force=True)
        assert {c.id: c.turn_index for c in services.store.chunks_in(ChunkScope())} == numbers
        counts = (report.chunks_added, report.chunks_updated, report.chunks_renumbered, report.chunks_removed)
        assert counts == (0, 0, 1, 0)  # its text is the same: numbered anew, not updated
        report = _ingest(services, excerpt, tmp_path / "projects", force=True)
        assert (report.chunks_added, report.chunks_updated, report.chunks_renumbered) == (0, 0, 0)
