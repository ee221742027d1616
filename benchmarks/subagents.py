"""Sub-agent linking coverage: how many sub-agent streams end up joined to their parent session.

Usage: python benchmarks/subagents.py [PATH] [--json OUT] [--workers N]

PATH defaults to ../shared/corpus/claude-code. The folder is ingested by the product (embeddings
off) into a fresh store in a temporary CAUSANTIC_HOME; the streams are then counted independently
of the product's own classification, straight from the transcript reader, per layout:

- ``inline``: sidechains written inside a main session file (Claude Code 1.0.x);
- ``flat``: ``agent-<id>.jsonl`` files beside the sessions (2.0.x);
- ``subagents/``: ``<session>/subagents/**/agent-<id>.jsonl`` files (2.1.x).

Per layout it prints the streams (and files), the dead-end stubs (no assistant message and at most
2 lines), the warm-up requests (first prompt ``Warmup``, or a lone greeting with no prompt), the
prompt suggestions (``aprompt_suggestion-…``, first prompt ``[SUGGESTION MODE: …``), how many of the
rest have their parent session present, and how many of those were linked with brief/debrief or team
edges. The goal is 100 % of the streams kept (not stub, warm-up or prompt suggestion) whose parent is
present. Unlinked streams are listed.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
LINK_TYPES = ("brief", "debrief", "team-spawn", "team-report", "peer-message")
LAYOUTS = ("inline", "flat", "subagents/")
TIME_GAP_MINUTES = 30  # graph.timeGapMinutes default: the window of every time-based link


@dataclass(frozen=True, slots=True)
class StreamRow:
    layout: str
    path: str
    session_id: str
    agent_id: str
    stub: bool
    warmup: bool
    suggestion: bool  # a prompt-suggestion stream, skipped like a warm-up
    parent_present: bool
    ingested: bool
    linked: bool
    minutes_outside_parent: float  # how far the stream runs outside its parent's first..last record

    @property
    def skipped(self) -> bool:
        return self.stub or self.warmup or self.suggestion

    @property
    def key(self) -> tuple[str, str]:
        return (self.session_id, self.agent_id)


def survey(root: Path, db: Path) -> list[StreamRow]:
    """Every sub-agent stream under ``root``, with what the store at ``db`` holds for it."""
    from causantic.transcripts.discovery import discover, read_session

    conn = sqlite3.connect(db)
    marks = ",".join("?" * len(LINK_TYPES))
    linked = set(
        conn.execute(
            "SELECT DISTINCT c.session_id, c.agent_id FROM edges e JOIN chunks c"
            f" ON c.id = e.source_chunk_id OR c.id = e.target_chunk_id WHERE e.reference_type IN ({marks})",
            LINK_TYPES,
        ).fetchall()
    )
    stored = set(conn.execute("SELECT DISTINCT session_id, agent_id FROM chunks").fetchall())
    conn.close()
    rows: list[StreamRow] = []
    for files in discover(root):
        sessions, _ = read_session(files)
        for session in sessions:
            parent = session.main is not None
            span = _span(session.main) if session.main is not None else None
            for sub in session.subagents:
                key = (session.session_id, sub.agent_id)
                rows.append(
                    StreamRow(
                        layout=_layout(sub.path, sub.path == files.main),
                        path=str(sub.path.relative_to(root)) if sub.path.is_relative_to(root) else str(sub.path),
                        session_id=session.session_id,
                        agent_id=sub.agent_id or "",
                        stub=_is_stub(sub),
                        warmup=_is_warm_up(sub),
                        suggestion=(sub.agent_id or "").startswith("aprompt_suggestion-")
                        or _first_prompt(sub).startswith("[SUGGESTION MODE:"),
                        parent_present=parent,
                        ingested=key in stored,
                        linked=key in linked,
                        minutes_outside_parent=_outside(_span(sub), span),
                    )
                )
    return rows


def _span(transcript: object) -> tuple[object, object] | None:
    times = [m.timestamp for m in transcript.messages if m.timestamp is not None]  # type: ignore[attr-defined]
    return (min(times), max(times)) if times else None


def _outside(inner: tuple[object, object] | None, outer: tuple[object, object] | None) -> float:
    if inner is None or outer is None:
        return 0.0
    before = (outer[0] - inner[1]).total_seconds()  # type: ignore[operator]
    after = (inner[0] - outer[1]).total_seconds()  # type: ignore[operator]
    return round(max(before, after, 0.0) / 60, 1)


def _layout(path: Path, inline: bool) -> str:
    if inline or not path.name.startswith("agent-"):
        return "inline"
    return "subagents/" if "subagents" in path.parts else "flat"


def _is_stub(sub: object) -> bool:
    messages = sub.messages  # type: ignore[attr-defined]
    if any(m.role == "assistant" for m in messages):
        return False
    path: Path = sub.path  # type: ignore[attr-defined]
    if path.name.startswith("agent-"):
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip()) <= 2
    return len(messages) <= 2


def _is_warm_up(sub: object) -> bool:
    """First prompt ``Warmup``; or, where 2.0.x never wrote that line, a file holding no prompt and
    a single reply that calls no tool (a greeting). Compaction and prompt-suggestion agents excepted."""
    from causantic.transcripts.model import ToolCall

    prompt = _first_prompt(sub)
    if prompt:
        return prompt == "Warmup"
    agent = sub.agent_id or ""  # type: ignore[attr-defined]
    replies = [m for m in sub.messages if m.role == "assistant"]  # type: ignore[attr-defined]
    return (
        not agent.startswith(("acompact-", "aprompt_suggestion-"))
        and len(replies) == 1
        and not any(isinstance(b, ToolCall) for b in replies[0].blocks)
    )


def _first_prompt(sub: object) -> str:
    from causantic.transcripts.turns import prompt_of

    return next((p for m in sub.messages if (p := prompt_of(m))), "").strip()  # type: ignore[attr-defined]


def summarise(rows: list[StreamRow]) -> dict[str, dict[str, object]]:
    # A stub can share its (session, agent) key with a full copy of the agent elsewhere; only a
    # stub whose key is its own proves that a skipped stream was ingested.
    counts = Counter(r.key for r in rows)
    unique = {key: n == 1 for key, n in counts.items()}
    table: dict[str, dict[str, object]] = {}
    for layout in (*LAYOUTS, "all"):
        part = [r for r in rows if layout in ("all", r.layout)]
        eligible = [r for r in part if not r.skipped and r.parent_present]
        linked = sum(1 for r in eligible if r.linked)
        in_gap = [r for r in eligible if r.minutes_outside_parent <= TIME_GAP_MINUTES]
        table[layout] = {
            "streams": len(part),
            "files": len({r.path for r in part}),
            "stubs": sum(1 for r in part if r.stub),
            "warmups": sum(1 for r in part if r.warmup and not r.stub),
            "suggestions": sum(1 for r in part if r.suggestion and not r.stub and not r.warmup),
            "skipped_ingested": sum(1 for r in part if r.skipped and r.ingested and unique[r.key]),
            "parent_present": len(eligible),
            "parent_absent": sum(1 for r in part if not r.skipped and not r.parent_present),
            "linked": linked,
            "coverage_pct": round(100 * linked / len(eligible), 1) if eligible else None,
            "parent_within_gap": len(in_gap),
            "coverage_within_gap_pct": (
                round(100 * sum(r.linked for r in in_gap) / len(in_gap), 1) if in_gap else None
            ),
        }
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not args.path.exists():
        print(f"{args.path} does not exist", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="causantic-bench-") as home:
        os.environ["CAUSANTIC_HOME"] = home
        from causantic import Memory
        from causantic.config import Config, db_path

        with Memory(config=Config()) as memory:
            report = memory.ingest([args.path], embed=False, workers=args.workers)
        rows = survey(args.path.resolve(), db_path(Config()))
    table = summarise(rows)
    header = (
        f"{'layout':<11} {'streams':>7} {'files':>6} {'stubs':>6} {'warmup':>7} {'suggest':>7} {'parent':>7}"
        f" {'no parent':>9} {'linked':>7} {'coverage':>9} {'in gap':>7} {'coverage':>9}"
    )
    print(header)
    for layout, t in table.items():
        cov = "—" if t["coverage_pct"] is None else f"{t['coverage_pct']:.1f} %"
        gap = "—" if t["coverage_within_gap_pct"] is None else f"{t['coverage_within_gap_pct']:.1f} %"
        print(
            f"{layout:<11} {t['streams']:>7} {t['files']:>6} {t['stubs']:>6} {t['warmups']:>7} {t['suggestions']:>7}"
            f" {t['parent_present']:>7} {t['parent_absent']:>9} {t['linked']:>7} {cov:>9}"
            f" {t['parent_within_gap']:>7} {gap:>9}"
        )
    print("parent: streams kept (no stub, warm-up or suggestion) whose parent is present; coverage = linked / parent.")
    print(f"in gap: of those, the ones running within {TIME_GAP_MINUTES} min of their parent's records.")
    skipped = table["all"]["skipped_ingested"]
    print(f"stubs, warm-ups and prompt suggestions ingested anyway: {skipped}")
    unlinked = [r for r in rows if not r.skipped and r.parent_present and not r.linked]
    for r in unlinked:
        why = (
            f"runs {r.minutes_outside_parent / 60:.1f} h outside its parent session's records"
            if r.minutes_outside_parent > TIME_GAP_MINUTES
            else "no call, position or time links it"
        )
        print(f"  unlinked: [{r.layout}] {r.path} ({r.agent_id}): {why}")
    for path, error in ((e.path, e.error) for e in report.errors):
        print(f"  ingest error: {path}: {error}")
    edges = Counter({k: v for k, v in report.edges_added.by_type.items() if k in LINK_TYPES})
    print("edges: " + ", ".join(f"{k} {edges[k]}" for k in LINK_TYPES))
    if args.json_out:
        args.json_out.write_text(
            json.dumps(
                {
                    "layouts": table,
                    "edges": dict(edges),
                    "unlinked": [asdict(r) for r in unlinked],
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
