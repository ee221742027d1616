"""`causantic recall`, `predict`, `reconstruct` and `forget`."""

from __future__ import annotations

from datetime import datetime

import click
from rich.text import Text

from causantic.cli.output import as_utc, console, domain_errors, emit_json, json_option
from causantic.errors import checked_query
from causantic.retrieval.chains import EpisodicResult
from causantic.retrieval.forget import ForgetRequest, forget
from causantic.retrieval.format import chunk_header
from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct, render_reconstruction
from causantic.retrieval.search import SearchRequest
from causantic.services import open_services


def episodic_dict(result: EpisodicResult) -> dict[str, object]:
    d = result.diagnostics
    return {
        "mode": result.mode,
        "tokens": result.tokens,
        "chain_median": result.chain_median,
        "chunks": [
            {"id": c.id, "project": c.project, "session_id": c.session_id, "date": c.start_time, "agent": c.agent,
             "score": s, "content": c.content}
            for c, s in zip(result.chunks, result.scores, strict=True)
        ],
        "diagnostics": {"search_hits": d.search_hits, "seeds": d.seeds, "chains_attempted": d.chains_attempted,
                        "chain_lengths": d.chain_lengths, "unscored_nodes": d.unscored_nodes,
                        "fallback_reason": d.fallback_reason},
    }


def _print_episodic(result: EpisodicResult, title: str) -> None:
    if not result.chunks:
        console.print("No relevant memory found.")
    else:
        kind = "chain" if result.mode == "chain" else "search results (fallback)"
        console.print(f"[bold]{title}[/bold]: {len(result.chunks)} chunks as a {kind}, {result.tokens} tokens")
        total = len(result.chunks)
        for i, (chunk, score) in enumerate(zip(result.chunks, result.scores, strict=True), start=1):
            console.print()
            console.print(Text(chunk_header(chunk, score, f"{i}/{total}"), style="cyan"))
            console.print(chunk.content, markup=False)
    if result.diagnostics.fallback_reason:
        console.print()
        console.print(Text(result.diagnostics.line(len(result.search.hits)), style="dim"))


def _episodic(direction: str, text: str, project: str | None, agent: str | None, max_tokens: int | None,
              as_json: bool) -> None:
    with domain_errors():
        text = checked_query(text, "query" if direction == "backward" else "context")
    request = SearchRequest(text, project=project, agent=agent, max_tokens=max_tokens)
    with domain_errors(), open_services() as services:
        walker = services.chains
        result = walker.recall(request) if direction == "backward" else walker.predict(request)
    if as_json:
        emit_json(episodic_dict(result))
    else:
        _print_episodic(result, "Recall" if direction == "backward" else "Predict")


_common = [
    click.option("--project", help="Only this project (name, path, or a folder inside it)."),
    click.option("--agent", help="Choose seeds from this agent's chunks only; chains then cross agents."),
    click.option("--max-tokens", type=click.IntRange(100, 200_000), help="Token budget."),
]


def _with_common(func):  # type: ignore[no-untyped-def]
    for option in reversed(_common):
        func = option(func)
    return func


@click.command("recall")
@click.argument("query")
@_with_common
@json_option
def recall_command(query: str, project: str | None, agent: str | None, max_tokens: int | None,
                   as_json: bool) -> None:
    """Tell the story behind something, in order: what led up to it.

    A query that starts with "-" goes after "--": causantic recall -- "--force flag"

    Example: causantic recall "how did we fix the Safari login loop"
    """
    _episodic("backward", query, project, agent, max_tokens, as_json)


@click.command("predict")
@click.argument("context")
@_with_common
@json_option
def predict_command(context: str, project: str | None, agent: str | None, max_tokens: int | None,
                    as_json: bool) -> None:
    """What usually came next after work like this (walks the graph forward).

    Text that starts with "-" goes after "--": causantic predict -- "--dry-run added"

    Example: causantic predict "added a rate limiter to the search endpoint"
    """
    _episodic("forward", context, project, agent, max_tokens, as_json)


@click.command("reconstruct")
@click.argument("project")
@click.option("--session", "session_id", help="One session (id or id prefix).")
@click.option("--from", "since", type=click.DateTime(), help="Start of a time range (UTC).")
@click.option("--to", "until", type=click.DateTime(), help="End of a time range (UTC), or where a timeline ends.")
@click.option("--days-back", type=float, help="The last N days.")
@click.option("--previous-session", is_flag=True, help="The session before --current-session.")
@click.option("--current-session", "current_session_id", help="The session you are in now.")
@click.option("--keep-oldest", is_flag=True, help="When over budget keep the oldest chunks, not the newest.")
@click.option("--agent", help="Only this agent's chunks.")
@click.option("--max-tokens", type=click.IntRange(100, 200_000), help="Token budget.")
@json_option
def reconstruct_command(project: str, session_id: str | None, since: datetime | None, until: datetime | None,
                        days_back: float | None, previous_session: bool, current_session_id: str | None,
                        keep_oldest: bool, agent: str | None, max_tokens: int | None, as_json: bool) -> None:
    """Replay a project's sessions in order (timeline, time range, one session, or the previous one).

    Example: causantic reconstruct myapp --days-back 1
    """
    request = ReconstructRequest(project, session_id, as_utc(since), as_utc(until), days_back, previous_session,
                                 current_session_id, not keep_oldest, agent, max_tokens)
    with domain_errors(), open_services() as services:
        result = reconstruct(services.store, request, services.config.tokens.mcp_max_response)
    if as_json:
        emit_json({"project": result.project, "mode": result.mode, "tokens": result.tokens,
                   "truncated": result.truncated, "sessions": result.sessions,
                   "chunks": [{"id": c.id, "session_id": c.session_id, "date": c.start_time, "agent": c.agent,
                               "content": c.content} for c in result.chunks]})
        return
    console.print(render_reconstruction(result), markup=False)


@click.command("forget")
@click.argument("project")
@click.option("--before", type=click.DateTime(), help="Chunks before this time (UTC).")
@click.option("--after", type=click.DateTime(), help="Chunks at or after this time (UTC).")
@click.option("--session", "session_id", help="One session (id or id prefix).")
@click.option("--query", help="Chunks similar to this text (see --threshold).")
@click.option("--threshold", default=0.6, show_default=True, type=click.FloatRange(0.01, 1.0),
              help="Cosine similarity a --query match must reach.")
@click.option("--yes", is_flag=True, help="Really delete (without it, only a preview is shown).")
@json_option
def forget_command(project: str, before: datetime | None, after: datetime | None, session_id: str | None,
                   query: str | None, threshold: float, yes: bool, as_json: bool) -> None:
    """Delete chosen memories of a project. A preview unless --yes is given.

    Example: causantic forget myapp --query "staging credentials" --threshold 0.7 --yes
    """
    request = ForgetRequest(project, as_utc(before), as_utc(after), session_id, query, threshold, dry_run=not yes)
    with domain_errors(), open_services() as services:
        result = forget(services.store, services.vectors, services.embedder.embed_query if query else None,
                        request)
    if as_json:
        emit_json({"project": result.project, "dry_run": result.dry_run, "count": result.count,
                   "deleted": result.deleted,
                   "preview": [{"id": c.id, "date": c.start_time, "similarity": s, "first_line":
                                c.content.splitlines()[0][:100] if c.content else ""} for c, s in result.preview]})
        return
    verb = "would be deleted" if result.dry_run else "deleted"
    console.print(f"{result.count if result.dry_run else result.deleted} chunk(s) of {result.project!r} {verb}.")
    for chunk, similarity in result.preview:
        score = f"[{similarity * 100:.0f}%] " if similarity is not None else ""
        first = chunk.content.splitlines()[0][:80] if chunk.content else ""
        console.print(Text(f"  {score}{chunk.start_time[:16].replace('T', ' ')}  {first}"))
    if result.dry_run and result.count:
        console.print("Nothing was deleted. Add --yes to delete.")



COMMANDS = [recall_command, predict_command, reconstruct_command, forget_command]
