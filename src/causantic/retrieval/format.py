"""Text renderings of retrieval results, shared by the CLI, the MCP tools and the hooks."""

from __future__ import annotations

from causantic.retrieval.episodes import EpisodeAnswer
from causantic.retrieval.search import Hit, SearchResult
from causantic.store.records import StoredChunk

NOTHING_RELEVANT = "Nothing relevant in memory"


def when(iso_text: str | None, missing: str = "?") -> str:
    """'2026-05-01T10:20:30.000000Z' -> '2026-05-01 10:20'; ``missing`` when there is no time."""
    return iso_text[:16].replace("T", " ") if iso_text else missing


def mixes_stores(chunks: list[StoredChunk]) -> bool:
    """An answer from team memory and the local store at once: its local chunks are then marked."""
    return any(c.user is None for c in chunks) and any(c.user is not None for c in chunks)


def chunk_header(
    chunk: StoredChunk,
    relevance: float | None = None,
    position: str | None = None,
    *,
    marker: str | None = None,
    mixed: bool = False,
) -> str:
    """One chunk's header line; ``mixed`` (:func:`mixes_stores`): say which chunks are local only."""
    parts = [position] if position else []
    parts += [
        f"Project: {chunk.project}",
        f"Session: {chunk.session_id[:8]}",
        f"Date: {when(chunk.start_time)}",
        f"Source: {chunk.source}",
    ]
    if chunk.agent != "main":
        parts.append(f"Agent: {chunk.agent}")
    if chunk.user is not None:
        parts.append(f"User: {chunk.user}")
    elif mixed:
        parts.append("Local (not shared)")
    if relevance is not None:
        parts.append(f"Relevance: {round(max(0.0, min(relevance, 1.0)) * 100)}%")
    if marker:
        parts.append(marker)
    return "[" + " | ".join(parts) + "]"


def render_hit(hit: Hit, shown_relevance: float, *, mixed: bool = False) -> str:
    return f"{chunk_header(hit.chunk, shown_relevance, mixed=mixed)}\n{hit.chunk.content}"


def nothing_relevant(notes: list[str] | tuple[str, ...]) -> str:
    return f"{NOTHING_RELEVANT}" + (f" ({'; '.join(notes)})" if notes else "") + "."


def search_heading(result: SearchResult) -> str:
    head = f"Found {len(result.hits)} relevant memory chunks ({result.tokens} tokens, {result.mode})"
    return head + (f" — {'; '.join(result.notes)}" if result.notes else "")


def render_search(result: SearchResult) -> str:
    if result.nothing_relevant:
        return nothing_relevant(result.notes)
    hits = zip(result.hits, result.shown_relevance, strict=True)
    mixed = mixes_stores([h.chunk for h in result.hits])
    return search_heading(result) + ":\n\n" + "\n\n---\n\n".join(render_hit(h, r, mixed=mixed) for h, r in hits)


def episodes_heading(answer: EpisodeAnswer) -> str:
    what = "the story behind it" if answer.kind == "recall" else "what came next"
    count = len(answer.episodes)
    head = (
        f"{answer.kind.capitalize()}: {what}, {count} episode{'s' if count != 1 else ''} in time order "
        f"({len(answer.chunks)} chunks, {answer.tokens} tokens)"
    )
    if answer.mode == "chain":
        head += " — chain walk"
    return head + (f" — {'; '.join(answer.notes)}" if answer.notes else "")


def episode_heading(answer: EpisodeAnswer, index: int) -> str:
    episode = answer.episodes[index]
    first, last = episode.chunks[0].chunk, episode.chunks[-1].chunk
    span = when(first.start_time) + (
        f" – {when(last.end_time)[11:]}" if last.end_time[:10] == first.start_time[:10] else f" – {when(last.end_time)}"
    )
    sessions = list(dict.fromkeys(c.chunk.session_id[:8] for c in episode.chunks))
    return (
        f"== Episode {index + 1} of {len(answer.episodes)} · {first.project} · session "
        f"{', '.join(sessions)} · {span} =="
    )


def chunk_heading(answer: EpisodeAnswer, index: int, position: int) -> str:
    member = answer.episodes[index].chunks[position]
    return chunk_header(
        member.chunk,
        position=f"{position + 1}/{len(answer.episodes[index].chunks)}",
        marker="match" if member.is_hit else None,
        mixed=mixes_stores(answer.chunks),
    )


def render_episodes(answer: EpisodeAnswer) -> str:
    if answer.nothing_relevant:
        return nothing_relevant(answer.notes)
    blocks = [episodes_heading(answer) + ":"]
    for i, episode in enumerate(answer.episodes):
        blocks.append(episode_heading(answer, i))
        blocks += [f"{chunk_heading(answer, i, j)}\n{member.chunk.content}" for j, member in enumerate(episode.chunks)]
    return "\n\n".join(blocks)
