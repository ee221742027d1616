"""Asked how something was done, search leads with the turn that asked for it and did it, not with the
report that retells it at the end of the turn or a compaction summary (retrieval.talkPenalty)."""

from __future__ import annotations

from pathlib import Path

from transcript_files import write_messages

from causantic import Memory
from causantic.config import RetrievalConfig
from causantic.retrieval.mentions import retells
from causantic.store.records import StoredChunk

AGENTS = RetrievalConfig().retelling_agents
SUBJECT = "retry failed uploads with exponential backoff"


def _chunk(text: str, part: int = 1, agent: str = "main") -> StoredChunk:
    return StoredChunk("c", "s", 1, "p", agent, 0, part, "", "", text, "", 0, ())


def test_a_later_part_of_a_turn_that_calls_no_tool_retells() -> None:
    for text in (
        "[Assistant]\nDone. Failed uploads now retry with exponential backoff.",  # the turn's report
        "[Result:Read] def upload(): ...\n\n[Assistant]\nThe client now retries.",  # a result, then talk
        "   - Added retries to the upload client\n   - Tests pass",  # a long message's next part
        "[Assistant]\nNext I would call [Tool:Edit] on the client.",  # not a call: mid-line
    ):
        assert retells(_chunk(text), AGENTS), text


def test_the_request_and_the_chunks_that_act_do_not_retell() -> None:
    assert not retells(_chunk("[User]\nfailed uploads should retry\n\n[Assistant]\nI'll do it.", part=0), AGENTS)
    assert not retells(_chunk("[Assistant]\nLong answer, first part, no tools.", part=0), AGENTS)  # chat
    for call in ("[Tool:Edit] uploader/client.py", "[Tool:Bash] pytest -q", "[Tool:apply_patch] *** Begin Patch"):
        assert not retells(_chunk(f"[Assistant]\nNow the client.\n\n{call}"), AGENTS), call


def test_every_chunk_of_a_compaction_summary_retells() -> None:
    opening = "[User]\n[Compaction of the conversation above]\n\n[Assistant]\n1. Added upload retries"
    assert retells(_chunk(opening, part=0, agent="compaction"), AGENTS)
    assert not retells(_chunk(opening, part=0, agent="compaction"), ())


def _sessions(folder: Path) -> Path:
    """Session "work": one turn that asks for the change and makes it, reads two files (so the turn
    takes two chunks) and ends on a report that retells the change in more of the request's words."""
    folder.mkdir(parents=True, exist_ok=True)
    listing = "\n".join(f"    def step_{n}(self): return self.client.put(part_{n})" for n in range(14))

    def call(n: int, name: str, path: str) -> list[dict[str, object]]:
        return [{"type": "tool_use", "id": f"t{n}", "name": name, "input": {"file_path": path}}]

    def result(n: int, text: str) -> list[dict[str, object]]:
        return [{"type": "tool_result", "tool_use_id": f"t{n}", "content": text}]

    report = (
        "Done. Failed uploads now retry with exponential backoff: each retry of a failed upload waits "
        "twice as long (exponential backoff), up to five retries."
    )
    work = [
        ("user", "failed uploads should retry with exponential backoff"),
        ("assistant", [{"type": "text", "text": "I'll change the client."}, *call(1, "Edit", "uploader/client.py")]),
        ("user", result(1, "The file was updated.")),
        ("assistant", call(2, "Read", "uploader/parts.py")),
        ("user", result(2, listing)),
        ("assistant", call(3, "Read", "uploader/stages.py")),
        ("user", result(3, listing.replace("step", "stage"))),
        ("assistant", [{"type": "text", "text": report}]),
    ]
    # Other work in the same project: the candidates both lists spread their scores over.
    others = [
        [("user", text), ("assistant", f"Done: {text}.")]
        for text in (
            "add a dark theme to the settings page",
            "bump the linter to the latest version",
            "fix the flaky clock test in the scheduler",
            "show upload progress as a percentage",
            "log the size of each uploaded file",
            "rename the bucket setting to storage",
        )
    ]
    for name, turns in [("work", work), *((f"other{n}", t) for n, t in enumerate(others))]:
        write_messages(folder / f"{name}.jsonl", name, "/work/uploader", turns)
    return folder


def test_the_turn_that_did_the_work_outranks_its_report(tmp_path: Path) -> None:
    folder = _sessions(tmp_path / "sessions")
    with Memory(tmp_path / "home") as memory:  # the default settings
        memory.ingest([folder])
        hits = memory.search(SUBJECT, limit=10).hits
        first, second = hits[0].chunk, hits[1].chunk
        assert (first.session_id, first.part, second.session_id, second.part) == ("work", 0, "work", 1)
        assert first.content.startswith("[User]\nfailed uploads should retry") and "[Tool:Edit]" in first.content
        assert "Done. Failed uploads now retry" in second.content
    with Memory(tmp_path / "home", overrides={"retrieval.talkPenalty": "0"}) as memory:
        unweighed = memory.search(SUBJECT, limit=10).hits
        assert unweighed[0].chunk.part == 1  # what the weighing corrects: the report led
