"""A tool's output coloured for a terminal (pytest, cargo, mix print ESC [ 31 m …) reads without its
codes: the text every interface shares (CLI, MCP) has no escape byte to recolour a terminal or to
reach the model, and the dashboard draws no '▯[0m'. Memory keeps the text as it was stored."""

from __future__ import annotations

from pathlib import Path

from transcript_files import write_session

from causantic import Memory
from causantic.dashboard.text import sections
from causantic.retrieval.format import render_search

COLOURED = "\x1b[0m\x1b[1;31mFAILED\x1b[0m test_checkout_retry.py::test_idempotency_key \x1b]0;pytest\x07(3 runs)"


def test_a_tool_s_terminal_colour_codes_are_left_out_of_what_is_read(tmp_path: Path) -> None:
    turns = [("why does checkout double-charge on retry", COLOURED)]
    write_session(tmp_path / "sessions", "/work/shop", "7c7c0000-0000-4000-8000-000000000000", turns)
    with Memory(tmp_path / "home") as memory:
        memory.ingest([tmp_path / "sessions"])
        result = memory.search("checkout retry idempotency key")
    chunk = result.hits[0].chunk
    assert "\x1b[1;31m" in chunk.content  # stored as it was
    text = render_search(result)
    assert "\x1b" not in text and "FAILED test_checkout_retry.py::test_idempotency_key (3 runs)" in text
    shown = "\n".join(section.text for section in sections(chunk.content))
    assert "\x1b" not in shown and "[0m" not in shown and "FAILED test_checkout_retry.py" in shown
