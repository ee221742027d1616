"""A Codex or Gemini CLI tool output of many megabytes stays in its file, as a Claude Code one does:
ingest stores what it stored when the output was decoded whole (cut to its head, with the same
marker), without holding the output, or the file, in memory."""

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
from causantic.transcripts import discover, longvalue
from causantic.transcripts.codex import read_rollout
from causantic.transcripts.gemini import read_gemini
from causantic.transcripts.model import ToolResult

ENTIRE = "codex/blackgirlbytes__entire-token-costs-benchmark-tests/a7/1156299398/0/full.jsonl"  # Codex 0.142
SHELL = "gemini/computermode__test-repo/72/9ac91fce19/0/full.jsonl"  # Gemini CLI: run_shell_command
LOG = "2026-11-25 08:00:01 INFO worker 7 took job quokka-%d in 12ms ✓ 😀 naïve\n"
HEADER = "Chunk ID: e63726\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 9\nOutput:\n"


def _log(megabytes: float) -> str:
    return "".join(LOG % n for n in range(int(megabytes * 1e6 / len(LOG.encode()))))


def _rollout(corpus: Path, folder: Path, outputs: list[str]) -> Path:
    """The real rollout's first 60 records, its first command outputs replaced by ``outputs``."""
    path = folder / "rollout-2026-06-23T07-21-00-019b0000-0000-7000-8000-000000000001.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    left = list(outputs)
    with (corpus / ENTIRE).open("rb") as source, path.open("w") as out:
        for _, line in zip(range(60), source, strict=False):
            record = json.loads(line)
            payload = record.get("payload") or {}
            if left and payload.get("type") == "function_call_output":
                payload["output"] = left.pop(0)
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    assert not left
    return path


def _gemini(corpus: Path, folder: Path, output: str, lines: bool) -> Path:
    """The real Gemini session, its shell output ``output`` (and its resultDisplay the log again): as a
    pretty-printed document, or as the JSON-lines log newer versions write."""
    document = json.loads((corpus / SHELL).read_bytes())
    call = next(c for m in document["messages"] for c in m.get("toolCalls") or [])
    call["result"][0]["functionResponse"]["response"]["output"] = f"Output: {output}\nProcess Group PGID: 56705"
    call["resultDisplay"] = output
    chats = folder / "tmp" / "app" / "chats"
    chats.mkdir(parents=True)
    if not lines:
        path = chats / "session-2026-03-17T22-22-9ac91fce.json"
        path.write_text(json.dumps(document, ensure_ascii=False, indent=2))
        return path
    header = {k: v for k, v in document.items() if k != "messages"}
    path = chats / "session-2026-03-17T22-22-9ac91fce.jsonl"
    records = [header, *document["messages"]]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def _stored(path: Path) -> list[tuple[Any, ...]]:
    with open_services(Config()) as services:
        report = ingest_paths(services, [path], embed=False, workers=1)
        assert report.errors == [] and report.broken_lines == 0
        return list(services.store.conn.execute("SELECT id, turn_index, part, content FROM chunks ORDER BY 1"))


def _stored_decoded_whole(path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    monkeypatch.setattr(longvalue, "LONG_VALUE_BYTES", 1 << 40)  # no value left in the file: all decoded
    return _stored(path)


def test_a_huge_codex_command_output_is_stored_as_when_decoded_whole(
    agents_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A failed command's 3 MB output after Codex's header; an older Codex's JSON-wrapped output
    # (its text read from inside the JSON, its exit code from what follows it); an output all blank.
    older = _log(2.5)
    wrapped = json.dumps({"output": older, "metadata": {"exit_code": 2, "duration_seconds": 0.4}}, ensure_ascii=False)
    log = _log(3)
    path = _rollout(agents_corpus, tmp_path / "codex", [HEADER + log, wrapped, " " * 2_200_000])
    transcript, _, _ = read_rollout(path)
    assert transcript is not None
    results = [b for m in transcript.messages for b in m.blocks if isinstance(b, ToolResult) and b.long]
    assert len(results) == 2 and all(r.is_error for r in results)  # the blank one decoded; both failed
    assert results[0].whole() == log and log.startswith(results[0].text)  # read back without its header
    assert results[1].whole() == older and older.startswith(results[1].text) and older.endswith(results[1].tail)
    assert results[1].long is not None and results[1].long.length == len(older)
    lazy = _stored(path)
    assert _stored_decoded_whole(path, tmp_path / "whole", monkeypatch) == lazy
    first = "[Error:exec_command] 2026-11-25 08:00:01 INFO worker 7 took job quokka-0"
    assert any(first in c and "…[truncated]" in c and "Chunk ID" not in c for *_, c in lazy)
    assert sum(c.count("[Error:exec_command] 2026-11-25 08:00:01") for *_, c in lazy) == 2  # and the wrapped one


@pytest.mark.parametrize("lines", [False, True], ids=["document", "json-lines"])
def test_a_huge_gemini_tool_output_is_stored_as_when_decoded_whole(
    agents_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: bool
) -> None:
    path = _gemini(agents_corpus, tmp_path / "gemini", _log(3), lines)
    lazy = _stored(path)
    assert _stored_decoded_whole(path, tmp_path / "whole", monkeypatch) == lazy
    first = "[Result:run_shell_command] Output: 2026-11-25 08:00:01 INFO worker 7 took job quokka-0"
    assert any(first in c and "…[truncated]" in c for *_, c in lazy)


def _peak(path: Path) -> int:
    """Bytes traced at the peak of planning ``path``'s session."""
    tracemalloc.start()
    try:
        plan = plan_group(discover(path)[0], PlanSettings.from_config(Config()))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert any("quokka-0" in c.content for s in plan.sessions for c in s.chunks)
    return peak


@pytest.mark.parametrize("kind", ["codex", "codex-json", "gemini-document", "gemini-json-lines"])
def test_a_huge_output_is_read_without_holding_it_or_its_file(agents_corpus: Path, tmp_path: Path, kind: str) -> None:
    def session(megabytes: float) -> Path:
        folder = tmp_path / f"{megabytes:g}"
        if kind == "codex":
            return _rollout(agents_corpus, folder, [HEADER + _log(megabytes)])
        if kind == "codex-json":  # an older version's output, wrapped in JSON
            wrapped = {"output": _log(megabytes), "metadata": {"exit_code": 0, "duration_seconds": 0.4}}
            return _rollout(agents_corpus, folder, [json.dumps(wrapped, ensure_ascii=False)])
        return _gemini(agents_corpus, folder, _log(megabytes), lines=kind == "gemini-json-lines")

    small, big = session(2), session(8)
    plan_group(discover(small)[0], PlanSettings.from_config(Config()))  # imports and caches: not counted
    grown = big.stat().st_size - small.stat().st_size
    # What a few windows of the output cost stays the same whatever its size (how much depends on the
    # orjson release); decoded whole, text holding an emoji is held at four bytes a character, and
    # the peak grew by 9x (a Gemini document, the output written twice) to 13x (Codex; an older
    # Codex's output wrapped in JSON: 7.6x) what the file grew. Now it grows by less than the file
    # itself: neither the output nor the file is held.
    growth = _peak(big) - _peak(small)
    assert growth < grown, f"the peak grew by {growth / 1e6:.1f} MB for a file {grown / 1e6:.1f} MB larger"


def test_a_gemini_document_cut_inside_a_huge_output_counts_once_without_being_held(
    agents_corpus: Path, tmp_path: Path
) -> None:
    # Caught while Gemini CLI rewrites it, in the middle of an output of megabytes: one cut document,
    # as when it is cut elsewhere, told from the bytes before that output. It was read whole and
    # parsed (the peak grew by 13.6x what the file grew); now it grows by less than the file.
    def cut(megabytes: float) -> Path:
        path = _gemini(agents_corpus, tmp_path / f"{megabytes:g}", _log(megabytes), lines=False)
        data = path.read_bytes()
        path.write_bytes(data[: data.index(b"quokka-1000 ") + int(megabytes * 750_000)])  # 3/4 of it
        return path

    small, big = cut(4), cut(12)
    read_gemini(small)  # imports and caches: not counted
    peaks = []
    for path in (small, big):
        tracemalloc.start()
        try:
            session, report = read_gemini(path)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert session.transcript is None and dict(report.counts) == {"truncated last line": 1}
    grown = big.stat().st_size - small.stat().st_size
    assert peaks[1] - peaks[0] < grown, (
        f"the peak grew by {(peaks[1] - peaks[0]) / 1e6:.1f} MB, the file {grown / 1e6:.1f}"
    )
