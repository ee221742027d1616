"""A chunk deep in a session is found by the task its session opened with (retrieval.sessionContext)."""

from __future__ import annotations

from pathlib import Path

from transcript_files import write_session

from causantic import Memory

QUERY = "currency column in the CSV export"


def _sessions(folder: Path) -> Path:
    sessions = {
        "export": [
            ("the CSV export must show the currency of each amount", "I'll look at the exporter first."),
            ("ok, go ahead and change it", "Added a new column to the writer, filled from the ledger; the tests pass."),
        ],
        "report": [
            ("the PDF report looks cramped; shrink the fonts a little", "Shrunk the body font to 10pt."),
            ("also put a column for the amounts in the table", "Added a currency column to the PDF table."),
        ],
    }
    for name, turns in sessions.items():
        write_session(folder, "/work/ledger", name, turns, day=2 if name == "export" else 3)
    return folder


def _order(memory: Memory) -> list[str]:
    hits = memory.search(QUERY, limit=10).hits
    return [f"{h.chunk.session_id}:{h.chunk.turn_index}" for h in hits]


def test_the_session_s_opening_task_lifts_its_later_chunks(tmp_path: Path) -> None:
    folder = _sessions(tmp_path / "sessions")
    # Session support and whole-session evidence also lift "export" here (its opening chunk matches
    # too); they are off so that this test sees the session's task alone.
    alone = {"retrieval.sessionEvidence": "0", "retrieval.sessionWords": "0"}
    with Memory(tmp_path / "home", overrides=alone) as memory:
        memory.ingest([folder])
        order = _order(memory)
    with Memory(tmp_path / "home", overrides={**alone, "retrieval.sessionContext": "0"}) as memory:
        without = _order(memory)
    assert order.index("export:1") < order.index("report:1")
    assert without.index("export:1") > without.index("report:1")  # what the context corrects
