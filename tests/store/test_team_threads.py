"""Searches from several threads at once on one team memory (PostgreSQL, the ``postgres_server``
fixture), as the MCP server and the dashboard run them: each gets the answer it gets alone.

A search reads the vector matches' chunks on its own thread while a helper thread weighs the
query's words and runs the keyword search, whose counting is a transaction of its own (with
planner settings local to it): on one shared connection another thread's statements ran inside it,
and two threads' transactions interleaved.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from postgres_server import new_database

from causantic import Memory

QUERIES = (
    "redirect loop after login on Safari",
    "flaky deploy pipeline cache key",
    "database migration rollback",
    "session cookie SameSite",
    "pytest fixture teardown order",
    "slow dashboard page render",
)


def _transcripts(folder: Path) -> Path:
    """Six short Claude Code sessions in two projects, one topic each."""
    for n, query in enumerate(QUERIES):
        session = f"7e{n:06d}-0000-4000-8000-{n:012d}"
        cwd = "/home/dev/shop" if n % 2 else "/home/dev/api"
        lines = []
        parent = None
        for turn in range(4):
            for kind in ("user", "assistant"):
                uuid = f"{session[:8]}-0000-4000-8000-{2 * turn + (kind == 'assistant'):012d}"
                text = f"{query}: {'question' if kind == 'user' else 'what we found'} {turn}, step {turn} of the fix"
                message: dict[str, Any] = {
                    "role": kind,
                    "content": text if kind == "user" else [{"type": "text", "text": text}],
                }
                if kind == "assistant":
                    message["id"] = f"msg_{uuid[-8:]}"
                lines.append(
                    {
                        "parentUuid": parent,
                        "isSidechain": False,
                        "type": kind,
                        "cwd": cwd,
                        "sessionId": session,
                        "uuid": uuid,
                        "timestamp": f"2026-11-0{n + 1}T09:0{turn}:00.000Z",
                        "message": message,
                    }
                )
                parent = uuid
        path = folder / cwd.strip("/").replace("/", "-") / f"{session}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return folder


def test_searches_from_many_threads_at_once_each_get_their_own_answer(postgres_server: Any, tmp_path: Path) -> None:
    url = new_database(postgres_server)
    settings = {
        "storage.backend": "postgres",
        "storage.postgresUrl": url,
        "team.user": "alice",
        "team.shareProjects": "all",
    }
    with Memory(tmp_path / "alice", overrides=settings) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")])
        asks = [(q, p) for n, q in enumerate(QUERIES) for p in (None, "shop" if n % 2 else "api")]

        def answer(ask: tuple[str, str | None]) -> list[str]:
            result = memory.search(ask[0], project=ask[1], limit=5)
            assert result.mode == "hybrid", result.notes
            return [h.chunk.id for h in result.hits]

        alone = [answer(ask) for ask in asks]
        assert all(alone)
        with ThreadPoolExecutor(max_workers=6) as pool:
            for _ in range(4):
                assert list(pool.map(answer, asks)) == alone
