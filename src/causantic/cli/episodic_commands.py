"""`causantic recall`, `predict`, `reconstruct` and `forget`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from causantic.cli import output
from causantic.cli.options import (
    agent_option,
    date_option,
    days_back_option,
    defaulted_int_option,
    float_range,
    max_tokens_option,
    project_option,
    session_id_option,
    text_argument,
    time_range_options,
)
from causantic.cli.output import domain_errors, emit_json, json_option, line, table
from causantic.config_cache import read_config
from causantic.facade import Memory
from causantic.retrieval import options
from causantic.retrieval.episodes import EpisodeAnswer
from causantic.retrieval.forget import (
    ForgetResult,
    PruneResult,
    chunks_forgotten,
    nothing_to_forget,
    others_note,
    preview_line,
    space_note,
)
from causantic.retrieval.format import (
    chunk_heading,
    counted,
    episode_heading,
    episodes_heading,
    left_out_before,
    left_out_within,
    nothing_relevant,
    short_session,
    when,
    when_utc,
)
from causantic.retrieval.reconstruct import render_reconstruction
from causantic.retrieval.regroup import ProjectMove, move_notes, move_summary
from causantic.wording import shortened

if TYPE_CHECKING:
    from rich.text import Text

# A forget preview line: a session's title or a chunk's opening words, at most and at least.
PREVIEW_TITLE_CHARS, PREVIEW_CHUNK_CHARS, PREVIEW_MIN_CHARS = 70, 80, 20
PRUNE_PROJECTS_SHOWN = 15  # a prune preview's projects, most chunks first
PREVIEW_SESSIONS = 10  # a merge's or split's preview: its sessions, newest first
TIME_HEADER = f"{'start (UTC)':<16}"  # a preview's time column, as wide as its times ('2026-11-02 09:00')


def _print_episodes(answer: EpisodeAnswer) -> None:
    if answer.nothing_relevant:
        click.echo(nothing_relevant(answer.notes))
        return
    line(episodes_heading(answer) + ":", "bold")
    for i, episode in enumerate(answer.episodes):
        if gap := left_out_before(answer, i):
            line()
            line(gap, "dim")
        line()
        line(episode_heading(answer, i), "bold magenta")
        for j, member in enumerate(episode.chunks):
            if gap := left_out_within(episode, j):
                line()
                line(gap, "dim")
            line()
            line(chunk_heading(answer, i, j), "cyan")
            line(member.text)


def _episodic(
    kind: str, text: str, project: str | None, agent: str | None, max_tokens: int | None, as_json: bool
) -> None:
    with domain_errors(), Memory(config=read_config()) as memory:
        ask = memory.recall if kind == "recall" else memory.predict
        answer = ask(text, project=project, agent=agent, max_tokens=max_tokens, here=os.getcwd())
    if as_json:
        from causantic.retrieval.output import episodic_out  # pydantic: only for JSON

        emit_json(episodic_out(text.strip(), answer))
    else:
        _print_episodes(answer)


_Command = TypeVar("_Command", bound=Callable[..., Any])


def _with_common(func: _Command) -> _Command:
    """--project, --agent (the story starts from that agent's chunks, then may cross agents), --max-tokens."""
    return project_option(agent_option(max_tokens_option("episodes.maxTokens")(func)))


@click.command("recall", short_help="The story behind something, in order.")
@text_argument("query")
@_with_common
@json_option
def recall_command(query: str, project: str | None, agent: str | None, max_tokens: int | None, as_json: bool) -> None:
    """Tell the story behind something, in order: what led up to it.

    Quotes are optional; a query that starts with "-" goes after "--": causantic recall -- "--force flag"

    Example: causantic recall "how did we fix the Safari login loop"
    """
    _episodic("recall", query, project, agent, max_tokens, as_json)


@click.command("predict", short_help="What came next after work like this.")
@text_argument("context")
@_with_common
@json_option
def predict_command(
    context: str, project: str | None, agent: str | None, max_tokens: int | None, as_json: bool
) -> None:
    """What came next after work like this: the turns that followed the best matches, in order.

    Quotes are optional; text that starts with "-" goes after "--": causantic predict -- "--dry-run added"

    Example: causantic predict "added a rate limiter to the search endpoint"
    """
    _episodic("predict", context, project, agent, max_tokens, as_json)


@click.command("reconstruct", short_help="A project's sessions in order, or their text.")
@click.argument("project")
@session_id_option("--session", "session_id", help="The text of one session (id or id prefix).")
@click.option("--full", is_flag=True, help="The chunks' text instead of one line per session.")
@time_range_options
@days_back_option
@click.option("--previous-session", is_flag=True, help="The text of the session before --current-session.")
@session_id_option(
    "--current-session",
    "current_session_id",
    help="The session you are in now (default: $CLAUDE_CODE_SESSION_ID, or $CODEX_THREAD_ID).",
)
@defaulted_int_option("--page", options.PAGE)
@defaulted_int_option("--limit", options.TIMELINE_LIMIT)
@click.option("--keep-oldest", is_flag=True, help="Text pages start from the oldest chunk, not the newest.")
@click.option("--agent", help="Only this agent's chunks (timeline: sessions it took part in).")
@max_tokens_option("tokens.mcpMaxResponse")
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
    if previous_session and not current_session_id:  # run by an agent's shell: the agent's session
        from causantic.live_session import current_session

        current_session_id = current_session(os.environ, time.time())
    with domain_errors(), Memory(config=read_config()) as memory:
        result = memory.reconstruct(
            project,
            session_id=session_id,
            since=since,
            until=until,
            days_back=days_back,
            previous_session=previous_session,
            current_session_id=current_session_id,
            keep_newest=not keep_oldest,
            agent=agent,
            max_tokens=max_tokens,
            full=full,
            page=page,
            limit=limit,
        )
    if as_json:
        from causantic.retrieval.output import reconstruction_out  # pydantic: only for JSON

        emit_json(reconstruction_out(result))
        return
    from rich.text import Text

    console = output.console
    text = render_reconstruction(result, page_hint="--page {page}", width=console.width)
    if not result.sessions and result.page > 1:  # a --page past the end is a wrong input: exit 1
        raise click.ClickException(text)
    console.print(text, markup=False, soft_wrap=True)
    if result.view == "timeline" and result.sessions:
        # The command on a line of its own: wrapped inside the sentence, a narrow terminal split it
        # ('… causantic reconstruct Demo ⏎ --session ID'), where it can no longer be copied.
        console.print(Text("The text of one session (ID from the second column):", style="dim"))
        console.print(Text(f"  causantic reconstruct {project} --session ID", style="dim"), soft_wrap=True)
        console.print(Text("The text of every session above: add --full.", style="dim"))


@click.command("forget", short_help="Delete chosen memories of a project.")
@click.argument("project")
@date_option("--before", "before", "Chunks before this time, e.g. 2026-03-01 or 2026-03-01T09:00; UTC when no offset.")
@date_option("--after", "after", "Chunks at or after this time; UTC when no offset.")
@session_id_option("--session", "session_id", help="One session (id or id prefix).")
@click.option("--query", help="Chunks similar to this text (see --threshold).")
@click.option(
    "--threshold",
    default=options.THRESHOLD.default,
    show_default=True,
    type=float_range(options.THRESHOLD),
    help=options.THRESHOLD.help,
)
@click.option(
    "--whole-project",
    "--all",
    "whole_project",
    is_flag=True,
    help="The whole project (also what no filter means); refuses filters beside it.",
)
@click.option(
    "--only-mine",
    is_flag=True,
    help="Team memory: only your own chunks; other members' in the same project stay.",
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
    only_mine: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Delete chosen memories of a project, or all of it. Always previews first; deletes only with --yes
    or when you confirm at the prompt (in a terminal), and never more than the preview showed.

    Example: causantic forget myapp --query "staging credentials" --threshold 0.7 --yes
    (or: causantic forget acme-shop — the whole project: a preview, then confirm)
    """
    if whole_project and any((before, after, session_id, query, only_mine)):
        raise click.UsageError(
            "--whole-project (--all) takes no filter: drop --before/--after/--session/--query/--only-mine, or "
            "drop --whole-project to forget only what they match."
        )
    with domain_errors(), Memory(config=read_config()) as memory:
        result = memory.forget(
            project,
            before=before,
            after=after,
            session_id=session_id,
            query=query,
            threshold=threshold,
            whole_project=whole_project,
            only_mine=only_mine,
            dry_run=not yes,
        )
        if as_json:
            from causantic.retrieval.output import forget_out  # pydantic: only for JSON

            emit_json(forget_out(result))
            return
        _print_forget(result)
        if (
            result.dry_run
            and result.count
            and _confirmed(f"Delete these {counted(result.count, 'chunk')} of {result.project!r}?")
        ):
            done = memory.forget_previewed(result)
            output.console.print(f"{counted(done.deleted, 'chunk')} of {done.project!r} deleted.", markup=False)
            if note := space_note(done):
                output.console.print(note, markup=False)


def _confirmed(question: str, declined: str = "Nothing was deleted. Add --yes to delete.") -> bool:
    """A preview's deletion (or move), asked only in a terminal; piped or scripted, the preview stands
    and nothing is done without --yes (``declined`` says so)."""
    if sys.stdin.isatty() and sys.stdout.isatty() and click.confirm(question):
        return True
    output.console.print(declined)
    return False


def _print_forget(result: ForgetResult) -> None:
    console = output.console
    scope = "the whole project " if result.whole_project else ""
    where = f"in {counted(result.sessions, 'session')} of {scope}{result.project!r}"
    if not (result.count or result.deleted):  # not "0 chunks in 0 sessions of … deleted"
        head = nothing_to_forget(result, "--threshold {}")
    elif result.dry_run:
        head = f"{chunks_forgotten(result, result.count)} {where} would be deleted."
    else:
        head = f"{chunks_forgotten(result, result.deleted)} {where} deleted."
    console.print(head, markup=False)
    if note := others_note(result, "--only-mine"):
        console.print(note, markup=False)
    if note := space_note(result):
        console.print(note, markup=False)
    if result.whole_project:  # a project is best recognised by its sessions
        rows = [(s.started_at, s.session_id, s.chunks, s.title) for s in result.session_summaries]
        _print_session_rows(rows)
        shown = len(result.session_summaries)
        if result.sessions > shown:
            console.print(f"  … and {counted(result.sessions - shown, 'more session')}", markup=False)
        return
    scores = [f"[{similarity * 100:.0f}%] " if similarity is not None else "" for _, similarity in result.preview]
    score_width = max(map(len, scores), default=0)
    if result.preview:  # its columns named once: the times are UTC
        _print_header(f"  {'match' if score_width else '':<{score_width}}{TIME_HEADER}  chunk")
    for (chunk, _), score in zip(result.preview, scores, strict=True):
        lead = f"  {score:<{score_width}}{when(chunk.start_time)}  "
        console.print(_fitted(lead, preview_line(chunk, PREVIEW_CHUNK_CHARS + 1), PREVIEW_CHUNK_CHARS))
    if result.count > len(result.preview):
        console.print(f"  … and {result.count - len(result.preview)} more", markup=False)


@click.command("prune", short_help="Forget everything older than a date.")
@date_option("--before", "before", "Forget every chunk before this time, in every project (UTC), e.g. 2026-01-01.")
@click.option("--yes", is_flag=True, help="Delete what the preview shows, without asking.")
@json_option
def prune_command(before: datetime | None, yes: bool, as_json: bool) -> None:
    """Forget everything older than a date, in every project: keep memory to the months you want.
    Always previews first (chunks by project); deletes only with --yes or when you confirm at the
    prompt (in a terminal), and never more than the preview showed.

    Example: causantic prune --before 2026-01-01
    """
    if before is None:
        raise click.UsageError("Give --before DATE: memory older than that date is forgotten, in every project.")
    with domain_errors(), Memory(config=read_config()) as memory:
        result = memory.prune(before, dry_run=not yes)
        if as_json:
            from causantic.retrieval.output import prune_out  # pydantic: only for JSON

            emit_json(prune_out(result))
            return
        _print_prune(result)
        if result.dry_run and result.count and _confirmed(f"Delete these {counted(result.count, 'chunk')}?"):
            _print_prune(memory.prune_previewed(result))


def _print_prune(result: PruneResult) -> None:
    console = output.console
    day = when_utc(result.before.isoformat())
    if result.dry_run and not result.count:
        console.print(f"Nothing in memory is older than {day}: nothing would be deleted.", markup=False)
        return
    where = f"in {counted(result.sessions, 'session')} of {counted(len(result.projects), 'project')}"
    verb = "would be deleted" if result.dry_run else "deleted"
    count = result.count if result.dry_run else result.deleted
    console.print(f"{counted(count, 'chunk')} older than {day} {where} {verb}.", markup=False)
    if result.dry_run:
        shown = result.projects[:PRUNE_PROJECTS_SHOWN]
        table(
            None,
            [("project", "left"), ("chunks", "right"), ("sessions", "right")],
            [(p.project, p.chunks, p.sessions) for p in shown],
        )
        if len(result.projects) > len(shown):
            console.print(f"  … and {counted(len(result.projects) - len(shown), 'more project')}", markup=False)
    if note := space_note(result):
        console.print(note, markup=False)


@click.command("merge-projects", short_help="Merge one project into another (previewed).")
@click.argument("source")
@click.argument("into")
@click.option("--yes", is_flag=True, help="Move without asking: what the preview shows when it runs.")
@json_option
def merge_projects_command(source: str, into: str, yes: bool, as_json: bool) -> None:
    """Move every session of project SOURCE into project INTO; SOURCE's folders join INTO, and SOURCE
    goes. For clones of one repository that memory keeps as two projects (recorded before clones
    were joined). Previews first; moves only when you confirm, never more than previewed, or with
    --yes (what SOURCE holds then, sessions an ingest adds meanwhile too).

    Example: causantic merge-projects api-service api
    """
    with domain_errors(), Memory(config=read_config()) as memory:
        _move(memory, memory.merge_projects(source, into, dry_run=not yes), as_json)


@click.command("split-project", short_help="Move a folder's sessions into a project of their own.")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--project", help="The project the folder's sessions joined, when the folder alone does not name it.")
@click.option("--yes", is_flag=True, help="Move without asking: what the preview shows when it runs.")
@json_option
def split_project_command(folder: str, project: str | None, yes: bool, as_json: bool) -> None:
    """Move the sessions recorded in FOLDER (or below it) out of their project into one of their own;
    later sessions there join it. For two projects from one template that kept its git remote
    (origin), which memory joins as clones of one repository. Previews first; moves only when you
    confirm, never more than previewed, or with --yes (what FOLDER holds then).

    Example: causantic split-project ~/code/blog
    """
    with domain_errors(), Memory(config=read_config()) as memory:
        _move(memory, memory.split_project(folder, project=project, dry_run=not yes), as_json)


def _move(memory: Memory, move: ProjectMove, as_json: bool) -> None:
    """Print a merge's or split's preview (or what it did), then move it once confirmed."""
    if as_json:
        from causantic.retrieval.output import move_out  # pydantic: only for JSON

        emit_json(move_out(move))
        return
    _print_move(move)
    question = f"Move these {counted(len(move.session_ids), 'session')}?"
    declined = "Nothing was moved. Add --yes to move."
    if move.dry_run and move.session_ids and not move.others and _confirmed(question, declined):
        _print_move(memory.move_previewed(move))


def _print_move(move: ProjectMove) -> None:
    console = output.console
    console.print(move_summary(move), markup=False)
    for note in move_notes(move):
        console.print(note, markup=False)
    if not move.dry_run:
        return
    _print_session_rows([(s.started, s.session_id, s.chunks, s.title or "") for s in move.sessions[:PREVIEW_SESSIONS]])
    if len(move.sessions) > PREVIEW_SESSIONS:
        console.print(f"  … and {counted(len(move.sessions) - PREVIEW_SESSIONS, 'more session')}", markup=False)


def _print_session_rows(rows: list[tuple[str, str, int, str]]) -> None:
    """A preview's sessions (start, id, chunks, title), one line each, in aligned columns: ids of
    other agents' sessions are not all 8 characters, nor counts all '1 chunk'."""
    ids = [short_session(session_id) for _, session_id, _, _ in rows]
    counts = [counted(chunks, "chunk") for _, _, chunks, _ in rows]
    id_width = max(map(len, ["session", *ids]))
    count_width = max(map(len, ["size", *counts]))
    if rows:  # its columns named once: the times are UTC
        _print_header(f"  {TIME_HEADER}  {'session':<{id_width}}  {'size':>{count_width}}  title")
    for (started, _, _, title), short_id, count in zip(rows, ids, counts, strict=True):
        lead = f"  {when(started)}  {short_id:<{id_width}}  {count:>{count_width}}  "
        output.console.print(_fitted(lead, title, PREVIEW_TITLE_CHARS))


def _print_header(text: str) -> None:
    from rich.text import Text

    output.console.print(Text(text, style="dim"), soft_wrap=True)


def _fitted(lead: str, text: str, most: int) -> Text:
    """``lead`` then ``text`` cut (an ellipsis marks it) to ``most`` characters and to the
    terminal's width, so a preview line stays one line in a narrow terminal too."""
    from rich.text import Text

    room = max(PREVIEW_MIN_CHARS, min(most, output.console.width - len(lead)))
    return Text(lead + shortened(text, room))


COMMANDS = [
    recall_command,
    predict_command,
    reconstruct_command,
    forget_command,
    prune_command,
    merge_projects_command,
    split_project_command,
]
