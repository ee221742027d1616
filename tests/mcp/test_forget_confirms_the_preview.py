"""The MCP forget tool deletes what its preview showed, never a chunk ingested since: a model cannot
show the user a prompt mid-call, so the confirmation is a second call, and between the two another
session's ingest or forget may change what the filters match."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from transcript_files import write_session

from causantic.examples import SESSIONS_DIR
from causantic.facade import Memory
from causantic.mcp.server import build_server

SESSION = "4005b823"  # of the example project acme-shop: 2 of its 6 chunks
NEW_SESSION = "7e570000-0000-4000-8000-000000000000"


def _text(result: Any) -> str:
    return str(result.content[0].text)


def test_a_confirmation_deletes_none_of_what_was_ingested_after_the_preview(tmp_path: Path) -> None:
    """One session forgotten elsewhere and one of as many chunks ingested: the count still read 6, and
    the confirmed forget deleted the new session, which no preview had shown."""
    with Memory() as memory:
        memory.ingest([SESSIONS_DIR], embed=False)
        acme = memory.project("acme-shop").path

    def meanwhile() -> int:
        """Another session's work: a new session of 2 chunks, and the 2 chunks of one session forgotten."""
        turns = [("the invoice export times out on large months", "Paged the export."), ("and csv?", "Same.")]
        with Memory() as memory:
            memory.ingest([write_session(tmp_path, acme, NEW_SESSION, turns)], embed=False)
            return memory.forget("acme-shop", session_id=SESSION, dry_run=False, expected=2).deleted

    async def run() -> tuple[str, int, str]:
        async with Client(build_server(warm=False), mode="legacy") as client:
            preview = await client.call_tool("forget", {"project": "acme-shop"})
            changed = meanwhile()
            confirmed = await client.call_tool(
                "forget", {"project": "acme-shop", "dry_run": False, "expected_count": 6}
            )
            return _text(preview), changed, _text(confirmed)

    preview, changed, confirmed = anyio.run(run)
    assert preview.startswith("Dry run: 6 chunks in 3 sessions would be deleted")
    assert changed == 2
    with Memory() as memory:
        kept = {s.session_id: s.chunks for s in memory.sessions("acme-shop").sessions}
    assert kept[NEW_SESSION] == 2 and sum(kept.values()) == 6  # what matches now still counts 6
    assert "4 chunks of 'acme-shop' match now, not the 6 previewed" in confirmed  # of those it showed
