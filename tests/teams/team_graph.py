"""What an ingest stored, read back for the team and sub-agent tests (imported by conftest and tests)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from causantic.config import Config
from causantic.ingest.pipeline import IngestReport
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

TEST_DATA = "daaain__claude-code-log/test/test_data"
REAL_TEAM_SESSION = f"{TEST_DATA}/real_projects/-experiments-worktrees"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    agent: str
    agent_id: str | None
    team_name: str | None
    turn_index: int
    part: int
    start_time: str
    end_time: str
    content: str


@dataclass(frozen=True, slots=True)
class Graph:
    """What one ingest stored: chunks by id, edges as (source, target, type), the ingest report."""

    chunks: dict[str, Chunk]
    edges: list[tuple[Chunk, Chunk, str]]
    report: IngestReport
    session_team: dict[str, str | None]

    def of(self, kind: str) -> list[tuple[Chunk, Chunk]]:
        return [(s, t) for s, t, k in self.edges if k == kind]

    def agent_chunks(self, agent: str) -> list[Chunk]:
        return sorted(
            (c for c in self.chunks.values() if c.agent == agent),
            key=lambda c: (c.start_time, c.agent_id or "", c.turn_index, c.part),
        )


def ingest_graph(*paths: Path) -> Graph:
    """Ingest paths into the store of the current CAUSANTIC_HOME (no embedding); read the graph back."""
    with open_services(Config()) as services:
        report = ingest_paths(services, list(paths), embed=False, workers=1)
        conn: sqlite3.Connection = services.store.conn
        chunks = {
            r["id"]: Chunk(
                r["id"],
                r["agent"],
                r["agent_id"],
                r["team_name"],
                r["turn_index"],
                r["part"],
                r["start_time"],
                r["end_time"],
                r["content"],
            )
            for r in conn.execute("SELECT * FROM chunks")
        }
        edges = [
            (chunks[r[0]], chunks[r[1]], r[2])
            for r in conn.execute("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges ORDER BY id")
        ]
        teams = {r[0]: r[1] for r in conn.execute("SELECT id, team_name FROM sessions")}
    return Graph(chunks, edges, report, teams)
