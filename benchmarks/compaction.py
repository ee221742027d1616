"""Claude Code's compactions on real transcripts: what memory keeps of them.

Usage: python benchmarks/compaction.py [PATH] [--json OUT]

PATH defaults to ../shared/corpus/claude-code. The folder is ingested by the product (embeddings
off) into a fresh store in a temporary CAUSANTIC_HOME. What the transcripts hold is counted straight
from their JSON lines, independently of the product's reader:

- **compaction files** (``agent-acompact-*.jsonl``) and the records they hold before Claude Code's
  instruction to summarise: records of the main conversation (hook notes, the result of the tool call
  the compaction interrupted), and how many of those the session's own file holds too (same uuid,
  or the same message);
- **/compact with words** (``<command-name>/compact</command-name>`` with ``<command-args>``).

What memory holds is read from the store:

- chunks of the compaction agents made of those records alone: the main conversation's records filed
  as the compaction's;
- duplicate chunk texts within a session family (a session's main and agent chunks);
- where each record carried by a compaction file ends up: in main chunks, in compaction chunks, or in
  no chunk (harness text, which is never memory);
- /compact instructions whose words some chunk holds, as ``/compact <words>``.

Run it with ``PYTHONPATH=src`` for this tree; with another tree's ``src`` to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
INSTRUCTION = "Your task is to create a detailed summary of the conversation so far"
_COMPACT_ARGS = re.compile(r"<command-name>/compact</command-name>.*?<command-args>(.*?)</command-args>", re.DOTALL)


def _records(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        index, line = 0, line.strip()
        while index < len(line):
            try:
                value, index = decoder.raw_decode(line, index)
            except ValueError:
                break
            if isinstance(value, dict):
                out.append(value)
    return out


def _texts(record: dict[str, Any]) -> list[str]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return []


def _same_message(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("type") == b.get("type") and (a.get("message") or {}).get("content") == (b.get("message") or {}).get(
        "content"
    )


def _main_file(agent_file: Path, session: str) -> Path | None:
    """The session's own file: ``<session>.jsonl`` beside its ``<session>/subagents/`` folder, or a
    file of another name (an export's ``session.jsonl``) above the agents' folder holding the session."""
    for folder in (agent_file.parent.parent.parent, agent_file.parent.parent):
        if (folder / f"{session}.jsonl").exists():
            return folder / f"{session}.jsonl"
    for candidate in sorted(agent_file.parent.parent.glob("*.jsonl")):
        if session in candidate.read_text(encoding="utf-8", errors="replace")[:20_000]:
            return candidate
    return None


def transcript_counts(corpus: Path) -> dict[str, Any]:
    """What the transcripts hold, from their JSON lines."""
    files = sorted(corpus.rglob("agent-acompact-*.jsonl"))
    carried: list[tuple[str, bool, bool]] = []  # (uuid, the session's own file is present, it holds the record)
    with_main = 0
    for path in files:
        records = [r for r in _records(path) if r.get("type") in ("user", "assistant")]
        cut = next((i for i, r in enumerate(records) if any(t.lstrip().startswith(INSTRUCTION) for t in _texts(r))), 0)
        session = next((r.get("sessionId") for r in records if r.get("sessionId")), "")
        main = (
            [r for r in _records(m) if r.get("type") in ("user", "assistant")]
            if (m := _main_file(path, session))
            else []
        )
        with_main += bool(main)
        for record in records[:cut]:
            held = any(r.get("uuid") == record.get("uuid") or _same_message(r, record) for r in main)
            carried.append((str(record.get("uuid")), bool(main), held))
    compacts: list[str] = []
    for path in sorted(corpus.rglob("*.jsonl")):
        if "acompact" in path.name:
            continue
        for record in _records(path):
            if record.get("type") == "user":
                for text in _texts(record):
                    compacts += [m.strip() for m in _COMPACT_ARGS.findall(text) if m.strip()]
    return {
        "compaction_files": len(files),
        "compaction_files_with_main": with_main,
        "carried_records": len(carried),
        "carried_beside_main": sum(1 for _, beside, _ in carried if beside),
        "carried_held_by_main": sum(1 for _, _, held in carried if held),
        "carried": [(u, beside) for u, beside, _ in carried],
        "compact_with_words": compacts,
    }


def store_counts(home: Path, facts: dict[str, Any]) -> dict[str, Any]:
    """What the store made of them."""
    with sqlite3.connect(home / "memory.db") as conn:
        rows = conn.execute("SELECT id, session_id, agent, content, message_uuids FROM chunks").fetchall()
    carried = {u for u, _ in facts["carried"]}
    of_carried = [r for r in rows if r[2] == "compaction" and set(json.loads(r[4] or "[]")) <= carried]
    family = Counter((r[1], r[3]) for r in rows)
    where: dict[str, Counter[str]] = {"beside": Counter(), "absent": Counter()}
    for uuid, beside in facts["carried"]:
        agents = {r[2] for r in rows if uuid in json.loads(r[4] or "[]")}
        where["beside" if beside else "absent"]["/".join(sorted(agents)) or "no chunk"] += 1
    kept = [w for w in facts["compact_with_words"] if any(f"/compact {w}" in r[3] for r in rows)]
    return {
        "chunks": len(rows),
        "compaction_chunks_of_carried": len(of_carried),
        "duplicate_texts_in_a_session_family": sum(n - 1 for n in family.values() if n > 1),
        "carried_records_in": {k: dict(v) for k, v in where.items()},
        "compact_with_words_kept": len(kept),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    facts = transcript_counts(args.path)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CAUSANTIC_HOME"] = tmp
        from causantic.config import Config
        from causantic.ingest.service import ingest_paths
        from causantic.services import open_services

        with open_services(Config()) as services:
            ingest_paths(services, [args.path], embed=False, workers=1)
        held = store_counts(Path(tmp), facts)
    files, with_main = facts["compaction_files"], facts["compaction_files_with_main"]
    carried, beside, copies = facts["carried_records"], facts["carried_beside_main"], facts["carried_held_by_main"]
    words = facts["compact_with_words"]

    def chunks_of(counts: dict[str, int]) -> str:
        return ", ".join(f"{agent} {n}" for agent, n in sorted(counts.items())) or "none"

    lines = [
        ("compaction files", f"{files}, {with_main} of them beside their session's own file"),
        ("records before the instruction", f"{carried}, {beside} of them beside it; it holds {copies} of those"),
        ("  in chunks (session file there)", chunks_of(held["carried_records_in"]["beside"])),
        ("  in chunks (session file absent)", chunks_of(held["carried_records_in"]["absent"])),
        ("compaction chunks of those alone", str(held["compaction_chunks_of_carried"])),
        ("duplicate texts in a session", str(held["duplicate_texts_in_a_session_family"])),
        ("/compact with words", f"{len(words)}, kept as '/compact <words>': {held['compact_with_words_kept']}"),
        ("chunks", f"{held['chunks']:,}"),
    ]
    width = max(len(k) for k, _ in lines)
    print("\n".join(f"{k.ljust(width)}  {v}" for k, v in lines))
    if args.json:
        facts.pop("carried")
        args.json.write_text(json.dumps({**facts, **held}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
