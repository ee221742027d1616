"""A tool output of many megabytes (a ``cat`` of a log, a huge diff) stays in its file: ingest keeps
what it kept when the output was decoded whole, without holding the output in memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from causantic.config import Config
from causantic.ingest.plan import PlanSettings, plan_group
from causantic.ingest.service import ingest_paths
from causantic.services import open_services
from causantic.transcripts import discover, longvalue, reader
from causantic.transcripts.model import ToolResult

REMINDER = "\n\n<system-reminder>\nWhenever you read a file, consider whether it looks malicious.\n</system-reminder>\n"
LOG = "2026-11-25 08:00:01 INFO worker 7 took job quokka-%d in 12ms ✓ 😀 naïve\n"


def _output(lines: int, start: int = 0) -> str:
    return "".join(LOG % n for n in range(start, start + lines))


def _session(folder: Path, outputs: list[tuple[str, object, bool]]) -> Path:
    """A Claude Code session in which each (tool, output content, is_error) answers one call;
    Bash outputs are copied into ``toolUseResult.stdout``, as Claude Code writes them."""
    lines: list[dict[str, Any]] = []

    def record(n: int, kind: str, content: object, **extra: object) -> None:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message["id"] = f"msg_{n}"
        lines.append(
            {
                "type": kind,
                "uuid": f"u-{n}",
                "parentUuid": f"u-{n - 1}" if n else None,
                "sessionId": "s-tool",
                "cwd": "/work/app",
                "timestamp": f"2026-11-25T08:{n:02d}:00Z",
                "message": message,
                **extra,
            }
        )

    record(0, "user", "why does the nightly job hang?")
    for i, (tool, content, failed) in enumerate(outputs):
        n = 3 * i + 1
        call = {"type": "tool_use", "id": f"call-{i}", "name": tool, "input": {"command": f"cat job-{i}.log"}}
        record(n, "assistant", [call])
        result = {"type": "tool_result", "tool_use_id": f"call-{i}", "content": content, "is_error": failed}
        extra = {"toolUseResult": {"stdout": content, "stderr": ""}} if tool == "Bash" else {}
        record(n + 1, "user", [result], **extra)
        record(n + 2, "assistant", [{"type": "text", "text": f"Output {i} shows the worker loop."}])
    path = folder / "-work-app" / "s-tool.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def _stored(path: Path) -> list[tuple[Any, ...]]:
    with open_services(Config()) as services:
        report = ingest_paths(services, [path], embed=False, workers=1)
        assert report.errors == [] and report.broken_lines == 0
        return list(services.store.conn.execute("SELECT turn_index, part, content FROM chunks ORDER BY 1, 2"))


def test_huge_tool_outputs_store_the_chunks_they_stored_when_decoded_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outputs of 2–3 MB: leading blank lines, reminders appended (one longer than the tail kept of
    # an output, so the output is decoded whole), an error, a block list, a blank output.
    outputs: list[tuple[str, object, bool]] = [
        ("Bash", "\n\n   " + _output(30_000) + REMINDER + REMINDER, False),
        ("Read", [{"type": "text", "text": _output(30_000, 7) + REMINDER}], False),
        ("Bash", _output(30_000) + "\n<system-reminder>" + "x" * 70_000 + "</system-reminder>", True),
        ("Grep", " " * 2_200_000, False),
    ]
    path = _session(tmp_path / "projects", outputs)
    kept = [b for m in reader.read_file(path)[0][0].messages for b in m.blocks if isinstance(b, ToolResult) and b.long]
    assert len(kept) == 4  # each output left in the file
    lazy = _stored(path)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "whole"))
    monkeypatch.setattr(reader, "LONG_LINE_BYTES", 1 << 40)  # every line parsed whole, as before
    assert _stored(path) == lazy
    assert any("[Result:Bash] 2026-11-25 08:00:01 INFO worker 7 took job quokka-0" in c for *_, c in lazy)
    assert any("[Error:Bash]" in c and "…[truncated]" in c for *_, c in lazy)


def test_a_huge_tool_output_is_read_and_chunked_without_being_held_in_memory(tmp_path: Path) -> None:
    path = _session(tmp_path, [("Bash", _output(60_000), False)])  # 5 MB, emoji and accents in it
    size = path.stat().st_size
    tracemalloc.start()
    try:
        plan = plan_group(discover(path)[0], PlanSettings.from_config(Config()))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert plan.sessions[0].chunks and size > 4 * longvalue.LONG_VALUE_BYTES
    # The file's bytes are read once; decoded whole, the output (4 bytes a character as it holds an
    # emoji) and its copy in toolUseResult took 6.6 times the file. Left in the file: 1.7 times with
    # orjson 3.8, 3.0 with orjson 3.13, which over-allocates while decoding non-ASCII text (the
    # decoded window's share: docs/measurements.md, "A huge tool output").
    assert peak < 4 * size, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
