"""`causantic recall`, `predict`, `reconstruct` and `forget`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import click
from rich.text import Text

from causantic.cli.output import as_utc, console, domain_errors, emit_json, json_option, short_time
from causantic.errors import checked_query
from causantic.retrieval.episodes import EpisodeAnswer
from causantic.retrieval.forget import ForgetRequest, ForgetResult, delete_previewed, forget, preview_line
from causantic.retrieval.format import chunk_heading, episode_heading, episodes_heading, nothing_relevant
from causantic.retrieval.output import episodic_out, reconstruction_out
from causantic.retrieval.reconstruct import (
    ReconstructRequest,
    reconstruct,
    render_reconstruction,
)
from causantic.retrieval.search import SearchRequest
from causantic.services import open_services


def _print_episodes(answer: EpisodeAnswer) -> None:
    if answer.nothing_relevant:
        click.echo(nothing_relevant(answer.notes))
        return
    console.print(Text(episodes_heading(answer) + ":", style="bold"), soft_wrap=True)
    for i, episode in enumerate(answer.episodes):
        console.print()
        console.print(Text(episode_heading(answer, i), style="bold magenta"), soft_wrap=True)
        for j, member in enumerate(episode.chunks):
            console.print()
            console.print(Text(chunk_heading(answer, i, j), style="cyan"), soft_wrap=True)
            console.print(member.chunk.content, markup=False, soft_wrap=True)


def _episodic(
    kind: str, text: str, project: str | None, agent: str | None, max_tokens: int | None, as_json: bool
) -> None:
    with domain_errors():
        text = checked_query(text, "query" if kind == "recall" else "context")
    request = SearchRequest(text, project=project, agent=agent, max_tokens=max_tokens)
    with domain_errors(), open_services() as services:
        episodes = services.episodes
        answer = episodes.recall(request) if kind == "recall" else episodes.predict(request)
    if as_json:
        emit_json(episodic_out(text, answer, content=True).model_dump(mode="json"))
    else:
        _print_episodes(answer)


_common = [
    click.option("--project", help="Only this project (name, path, or a folder inside it)."),
    click.option("--agent", help="Start from this agent's chunks only; the story may then cross agents."),
    click.option(
        "--max-tokens",
        type=click.IntRange(100, 200_000),
        help="Token budget of the answer (default: episodes.maxTokens).",
    ),
]


_Command = TypeVar("_Command", bound=Callable[..., Any])


def _with_common(func: _Command) -> _Command:
    for option in reversed(_common):
        func = option(func)
    return func


@click.command("recall")
@click.argument("query")
@_with_common
@json_option
def recall_command(query: str, project: str | None, agent: str | None, max_tokens: int | None, as_json: bool) -> None:
    """Tell the story behind something, in order: what led up to it.

    A query that starts with "-" goes after "--": causantic recall -- "--force flag"

    Example: causantic recall "how did we fix the Safari login loop"
    """
    _episodic("recall", query, project, agent, max_tokens, as_json)


@click.command("predict")
@click.argument("context")
@_with_common
@json_option
def predict_command(
    context: str, project: str | None, agent: str | None, max_tokens: int | None, as_json: bool
) -> None:
    """What came next after work like this: the turns that followed the best matches, in order.

    Text that starts with "-" goes after "--": causantic predict -- "--dry-run added"

    Example: causantic predict "added a rate limiter to the search endpoint"
    """
    _episodic("predict", context, project, agent, max_tokens, as_json)


@click.command("reconstruct")
@click.argument("project")
@click.option("--session", "session_id", help="The text of one session (id or id prefix).")
@click.option("--full", is_flag=True, help="The chunks' text instead of one line per session.")
@click.option("--from", "since", type=click.DateTime(), help="Start of a time range (UTC).")
@click.option("--to", "until", type=click.DateTime(), help="End of a time range (UTC), or where a timeline ends.")
@click.option("--days-back", type=float, help="The last N days.")
@click.option("--previous-session", is_flag=True, help="The text of the session before --current-session.")
@click.option("--current-session", "current_session_id", help="The session you are in now.")
@click.option(
    "--page",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="1 is the most recent part; 2 the part before it, and so on.",
)
@click.option(
    "--limit", default=20, show_default=True, type=click.IntRange(1, 500), help="Sessions per page of the timeline."
)
@click.option("--keep-oldest", is_flag=True, help="Text pages start from the oldest chunk, not the newest.")
@click.option("--agent", help="Only this agent's chunks (timeline: sessions it took part in).")
@click.option("--max-tokens", type=click.IntRange(100, 200_000), help="Token budget of one page.")
@json_option
def reconstruct_command(
    project: str,
    session_id: str | None,
    full: bool,
    since: datetime | None,
    until: datetime | None,
    days_back: float | None,
    previous_session: bool,
    current_session_id: str | None,
    page: int,
    limit: int,
    keep_oldest: bool,
    agent: str | None,
    max_tokens: int | None,
    as_json: bool,
) -> None:
    """A project's sessions in time order: one line each (oldest first, newest last), or their text.

    Example: causantic reconstruct myapp   (then: --session 3f2a1b, or --days-back 1 --full)
    """
    if previous_session and not current_session_id:
        raise click.UsageError("--previous-session needs --current-session (the id of the session you are in now).")
    request = ReconstructRequest(
        project,
        session_id,
        as_utc(since),
        as_utc(until),
        days_back,
        previous_session,
        current_session_id,
        not keep_oldest,
        agent,
        max_tokens,
        full,
        page,
        limit,
    )
    with domain_errors(), open_services() as services:
        result = reconstruct(services.store, request, services.config.tokens.mcp_max_response)
    if as_json:
        emit_json(reconstruction_out(result, content=True).model_dump(mode="json"))
        return
    console.print(render_reconstruction(result, page_hint="--page {page}"), markup=False, soft_wrap=True)
    if result.view == "timeline" and result.sessions:
        console.print(
            Text(
                f"The text of one session: causantic reconstruct {project} --session ID "
                "(ID from the second column); of this page: add --full.",
                style="dim",
            )
        )


@click.command("forget")
@click.argument("project")
@click.option("--before", type=click.DateTime(), help="Chunks before this time (UTC).")
@click.option("--after", type=click.DateTime(), help="Chunks at or after this time (UTC).")
@click.option("--session", "session_id", help="One session (id or id prefix).")
@click.option("--query", help="Chunks similar to this text (see --threshold).")
@click.option(
    "--threshold",
    default=0.6,
    show_default=True,
    type=click.FloatRange(0.01, 1.0),
    help="Cosine similarity a --query match must reach.",
)
@click.option(
    "--all",
    "whole_project",
    is_flag=True,
    help="The whole project (also what no filter means); refuses filters beside it.",
)
@click.option("--yes", is_flag=True, help="Delete what the preview shows, without asking.")
@json_option
def forget_command(
    project: str,
    before: datetime | None,
    after: datetime | None,
    session_id: str | None,
    query: str | None,
    threshold: float,
    whole_project: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Delete chosen memories of a project, or all of it. Always previews first; deletes only with --yes
    or when you confirm at the prompt (in a terminal), and never more than the preview showed.

    Example: causantic forget myapp --query "staging credentials" --threshold 0.7 --yes
    (or: causantic forget acme-shop — the whole project: a preview, then confirm)
    """
    if whole_project and any((before, after, session_id, query)):
        raise click.UsageError(
            "--all takes no filter: drop --before/--after/--session/--query, or drop --all to "
            "forget only what they match."
        )
    if query is not None and not query.strip():
        raise click.UsageError("--query is empty: give the words to match, or use --before/--after/--session.")
    request = ForgetRequest(
        project,
        as_utc(before),
        as_utc(after),
        session_id,
        query,
        threshold,
        dry_run=not yes,
        whole_project=whole_project,
    )
    with domain_errors(), open_services() as services:
        result = forget(services.store, services.vectors, services.embedder.embed_query if query else None, request)
        if as_json:
            emit_json(
                {
                    "project": result.project,
                    "dry_run": result.dry_run,
                    "whole_project": result.whole_project,
                    "count": result.count,
                    "sessions": result.sessions,
                    "deleted": result.deleted,
                    "preview": [
                        {"id": c.id, "date": c.start_time, "similarity": s, "first_line": preview_line(c, 100)}
                        for c, s in result.preview
                    ],
                    "preview_sessions": list(result.session_summaries),
                }
            )
            return
        _print_forget(result)
        if result.dry_run and result.count:
            if (
                sys.stdin.isatty()
                and sys.stdout.isatty()
                and click.confirm(f"Delete these {result.count} chunk(s) of {result.project!r}?", default=False)
            ):
                done = delete_previewed(services.store, services.vectors, result)
                console.print(f"{done.deleted} chunk(s) of {done.project!r} deleted.", markup=False)
            else:
                console.print("Nothing was deleted. Add --yes to delete.")


def _print_forget(result: ForgetResult) -> None:
    scope = "the whole project " if result.whole_project else ""
    if result.dry_run:
        head = f"{result.count} chunk(s) in {result.sessions} session(s) of {scope}{result.project!r} would be deleted."
    else:
        head = f"{result.deleted} chunk(s) in {result.sessions} session(s) of {scope}{result.project!r} deleted."
    console.print(head, markup=False)
    if result.whole_project:  # a project is best recognised by its sessions
        for session in result.session_summaries:
            console.print(
                Text(
                    f"  {short_time(session.started_at)}  {session.session_id[:8]}  {session.chunks} chunks"
                    f"  {session.short_title(70)}"
                )
            )
        shown = len(result.session_summaries)
        if result.sessions > shown:
            console.print(f"  … and {result.sessions - shown} more session(s)", markup=False)
        return
    for chunk, similarity in result.preview:
        score = f"[{similarity * 100:.0f}%] " if similarity is not None else ""
        console.print(Text(f"  {score}{short_time(chunk.start_time)}  {preview_line(chunk, 80)}"))
    if result.count > len(result.preview):
        console.print(f"  … and {result.count - len(result.preview)} more", markup=False)


COMMANDS = [recall_command, predict_command, reconstruct_command, forget_command]
