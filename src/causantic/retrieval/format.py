"""Text renderings of retrieval results shared by the CLI, the MCP tools and the hooks."""

from __future__ import annotations

from causantic.retrieval.search import Hit, SearchResult
from causantic.store.records import StoredChunk


def chunk_header(chunk: StoredChunk, relevance: float | None = None, position: str | None = None) -> str:
    parts = [position] if position else []
    parts += [f"Project: {chunk.project}", f"Session: {chunk.session_id[:8]}",
              f"Date: {chunk.start_time[:16].replace('T', ' ')}", f"Source: {chunk.source}"]
    if chunk.agent != "main":
        parts.append(f"Agent: {chunk.agent}")
    if relevance is not None:
        parts.append(f"Relevance: {round(min(relevance, 1.0) * 100)}%")
    return "[" + " | ".join(parts) + "]"


def render_hit(hit: Hit) -> str:
    return f"{chunk_header(hit.chunk, hit.relevance)}\n{hit.chunk.content}"


def render_search(result: SearchResult) -> str:
    if not result.hits:
        note = f" ({'; '.join(result.notes)})" if result.notes else ""
        return f"No relevant memory found{note}."
    head = f"Found {len(result.hits)} relevant memory chunks ({result.tokens} tokens, {result.mode})"
    if result.notes:
        head += f" — {'; '.join(result.notes)}"
    return head + ":\n\n" + "\n\n---\n\n".join(render_hit(h) for h in result.hits)
