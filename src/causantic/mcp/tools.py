"""The MCP tools: each parses typed arguments, calls one ``Memory`` method and answers in text.

The docstring of each tool is its description, written so the model picks the right one: temporal
questions go to ``reconstruct``, "how / why did we…" to ``recall``, discovery to ``search``, "what
comes next" to ``predict``. Bad arguments and domain failures raise (the client gets
``isError`` with the message); nothing returns an error string.

Answers are text only, with no ``structuredContent`` and no output schema: Claude Code and Codex
hand the model ``structuredContent`` in place of the text whenever a result has it
(anthropics/claude-code#79944, openai/codex#38287), so the model would read chunk previews cut at
160 characters instead of the chunks and the stories the text tells within their budget. Scripts
get the same answers' JSON shapes from the CLI's ``--json`` (``causantic.retrieval.output``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from causantic import write_waits
from causantic.facade import Memory
from causantic.live_session import current_session as current_session_now
from causantic.mcp.app import AppContext
from causantic.retrieval import options
from causantic.retrieval.forget import chunks_forgotten, nothing_to_forget, others_note, preview_line, space_note
from causantic.retrieval.format import DATES_ZONE, TIMES_ZONE, counted, day_span, short_session, span
from causantic.retrieval.listing import newest_note, topics_off_note
from causantic.retrieval.output import status_out
from causantic.runs import PROMPT_HOOK, read_status
from causantic.sources import Source
from causantic.wording import ago, sentence, with_names

if TYPE_CHECKING:
    from causantic.retrieval.episodes import EpisodeAnswer
    from causantic.retrieval.forget import ForgetResult

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

Project = Annotated[
    str,
    Field(
        min_length=1,
        description=(
            "Project name (see list-projects), its path, or any folder inside it such as the current working directory."
        ),
    ),
]
OptionalProject = Annotated[str | None, Field(min_length=1, description=options.PROJECT.help + " Omit for all.")]
Agent = Annotated[str | None, Field(min_length=1, description=options.AGENT.help)]
SourceFilter = Annotated[Source | None, Field(description=options.SOURCE.help + " Omit for all.")]


def token_ceiling(environ: Mapping[str, str]) -> int:
    """The largest budget an answer may have: :data:`~causantic.retrieval.options.MCP_MAX_TOKENS`, or
    less when Claude Code's ``MAX_MCP_OUTPUT_TOKENS`` (default 25,000) is set lower: it counts the
    model's tokens, up to 1.4 of ours (3.5 characters) on code, and cuts a result beyond it."""
    limit = environ.get("MAX_MCP_OUTPUT_TOKENS", "")
    ceiling = min(options.MCP_MAX_TOKENS, int(limit) * 5 // 7) if limit.isdigit() else options.MCP_MAX_TOKENS
    return max(ceiling, int(options.MAX_TOKENS.low or 0))


CEILING = token_ceiling(os.environ)  # the server's environment is fixed at spawn
MaxTokens = Annotated[int | None, Field(ge=options.MAX_TOKENS.low, le=CEILING, description=options.MAX_TOKENS.help)]
EpisodeMaxTokens = Annotated[
    int | None, Field(ge=options.MAX_TOKENS.low, le=CEILING, description=options.EPISODE_MAX_TOKENS.help)
]
From = Annotated[
    datetime | None,
    Field(
        validation_alias="from",
        description=options.SINCE.help,
    ),
]
To = Annotated[
    datetime | None,
    Field(validation_alias="to", description=options.UNTIL.help),
]
DaysBack = Annotated[
    float | None, Field(gt=options.DAYS_BACK.low, le=options.DAYS_BACK.high, description=options.DAYS_BACK.help)
]


# ---- retrieval -------------------------------------------------------------------------------


def search(
    ctx: Context,
    query: Annotated[str, Field(description="What to look for, in words.")],
    project: OptionalProject = None,
    agent: Agent = None,
    source: SourceFilter = None,
    user: Annotated[str | None, Field(min_length=1, description=options.USER.help)] = None,
    limit: Annotated[
        int | None, Field(ge=options.LIMIT.low, le=options.LIMIT.high, description=options.LIMIT.help)
    ] = None,
    max_tokens: MaxTokens = None,
    from_: From = None,
    to: To = None,
    days_back: DaysBack = None,
    mode: Annotated[
        Literal["hybrid", "keyword", "vector"] | None,
        Field(
            description=("hybrid (default) fuses meaning and exact words; keyword for identifiers and error strings.")
        ),
    ] = None,
) -> CallToolResult:
    """Find past context by meaning and exact words across stored sessions (Claude Code, Codex, Gemini).

    Use for discovery, when you do not know where or when something happened: "have we dealt with
    flaky CI before?", "where did we touch the billing webhook?". Returns the best-matching chunks,
    most relevant first, each headed by project, session, date and relevance: the chance that it is
    what you are after (a right hit usually reads 4-56%, median 20%; an off-topic one that still
    shows 1-4%). Under 10% is marked "weakly related" (a quarter of right hits read that low, so
    check them when nothing better comes) and, beside a relevant hit, listed in one line each. Says
    plainly when nothing in memory is relevant or the query holds no word to search by. For how/why
    something was done use recall; for what happened when (yesterday, the last session) reconstruct;
    for what usually comes next predict.
    """
    from causantic.retrieval.format import render_search

    app = _app(ctx)
    result = app.call(
        "search",
        lambda m: m.search(
            query,
            project=project,
            agent=agent,
            source=source,
            user=user,
            since=from_,
            until=to,
            days_back=days_back,
            limit=limit,
            max_tokens=_budget(m, max_tokens),
            mode=mode,
            here=app.here,
        ),
    )
    return _result(render_search(result))


def recall(
    ctx: Context,
    query: Annotated[
        str,
        Field(description=("The thing whose story you want, e.g. 'the Safari login redirect loop fix'.")),
    ],
    project: OptionalProject = None,
    agent: Agent = None,
    max_tokens: EpisodeMaxTokens = None,
) -> CallToolResult:
    """Tell the story behind something, in order: how and why it was done, and what led up to it.

    Use for "how did we fix X?", "why did we choose Y?", "what led to Z?", "how did we set up …?".
    Finds the best matches and, for each, the turns of its session that led up to it (cut where
    they stop being about the question); returns these episodes compact, the best match's first
    (of this project's sessions, when one matches), each told oldest first and headed by its best
    match's relevance (under 10%: "weakly related"). Says plainly when nothing in memory is relevant.
    """
    return _episodic(ctx, "recall", query, project, agent, max_tokens)


def predict(
    ctx: Context,
    context: Annotated[str, Field(description=("What is being worked on now, in a sentence or two."))],
    project: OptionalProject = None,
    agent: Agent = None,
    max_tokens: EpisodeMaxTokens = None,
) -> CallToolResult:
    """What came next after work like the current one: the turns that followed the best matches,
    the best match's first (of this project's sessions, when one matches).

    Use when planning the next step: "what usually follows a schema migration here?", "what did we
    do after adding the cache last time?", "what problems came up after similar changes?".
    """
    return _episodic(ctx, "predict", context, project, agent, max_tokens)


def reconstruct(
    ctx: Context,
    project: Project,
    session: Annotated[
        str | None, Field(min_length=options.SESSION_ID_MIN, description="The text of one session, by id or id prefix.")
    ] = None,
    full: Annotated[
        bool, Field(description="The chunks' text instead of one line per session (implied by session).")
    ] = False,
    from_: From = None,
    to: To = None,
    days_back: DaysBack = None,
    previous_session: Annotated[
        bool, Field(description=("The text of the session before current_session: how the last one ended."))
    ] = False,
    current_session: Annotated[
        str | None,
        Field(
            min_length=options.SESSION_ID_MIN,
            description=(
                "The session you are in now: Claude Code's is known (also after /clear); "
                "under Codex pass $CODEX_THREAD_ID. Unknown: the newest session counts as previous."
            ),
        ),
    ] = None,
    page: Annotated[int, Field(ge=options.PAGE.low, description=options.PAGE.help)] = 1,
    limit: Annotated[
        int,
        Field(ge=options.TIMELINE_LIMIT.low, le=options.TIMELINE_LIMIT.high, description=options.TIMELINE_LIMIT.help),
    ] = 20,
    keep_oldest: Annotated[
        bool, Field(description="Text pages count forward from the oldest chunk, not back from the newest.")
    ] = False,
    agent: Agent = None,
    max_tokens: MaxTokens = None,
) -> CallToolResult:
    """A project's sessions in time order: one line each (date, agents, title, size), or their text.

    Use for temporal questions: "what did we do yesterday / last week?" (days_back), "where did I leave off?"
    (previous_session=true), "what happened between Monday and Wednesday?" (from/to), "show
    session 3f2a…" (session). Without session or full it lists sessions, oldest first, so the
    newest is last; pick one and call again with its session for the story. Not for topic
    questions: use search or recall for those.
    """
    from causantic.retrieval.reconstruct import render_reconstruction

    app = _app(ctx)
    current = current_session or (current_session_now(os.environ, app.started) if previous_session else None)
    result = app.call(
        "reconstruct",
        lambda m: m.reconstruct(
            project,
            session_id=session,
            since=from_,
            until=to,
            days_back=days_back,
            previous_session=previous_session,
            current_session_id=current,
            keep_newest=not keep_oldest,
            agent=agent,
            max_tokens=_budget(m, max_tokens),
            full=full,
            page=page,
            limit=limit,
        ),
    )
    return _result(render_reconstruction(result, page_hint="page={page}"))


# ---- what memory holds -----------------------------------------------------------------------


def list_projects(ctx: Context) -> CallToolResult:
    """List the projects in memory with chunk and session counts and the dates they cover.

    Use to find the name to pass as project, or to see what memory knows about.
    """
    projects = _app(ctx).call("list-projects", lambda m: m.projects())
    if not projects:
        text = "No projects in memory yet (run `causantic batch-ingest`)."
    else:
        text = f"Projects in memory ({DATES_ZONE}):\n" + "\n".join(
            f"- {p.name} ({counted(p.chunks, 'chunk')}, {counted(p.sessions, 'session')}, "
            f"{day_span(p.first_seen, p.last_seen)})" + (f" {p.folder}" if p.folder else "")
            for p in projects
        )
    return _result(text)


def list_sessions(
    ctx: Context,
    project: Project,
    from_: From = None,
    to: To = None,
    days_back: DaysBack = None,
    limit: Annotated[
        int,
        Field(ge=options.SESSIONS_LIMIT.low, le=options.SESSIONS_LIMIT.high, description=options.SESSIONS_LIMIT.help),
    ] = options.SESSIONS_LISTED,
) -> CallToolResult:
    """List a project's sessions, newest first, with their time span, size and title (first prompt).

    Use to pick a session for reconstruct, or to see when work happened.
    """
    listing = _app(ctx).call(
        "list-sessions", lambda m: m.sessions(project, since=from_, until=to, days_back=days_back, limit=limit)
    )
    sessions, total = listing.sessions, listing.total
    if not sessions:
        text = f"No session of {listing.project!r} in that range{newest_note(listing.newest)}."
    else:
        lines = [
            f"- {x.session_id} ({x.source}, {span(x.started_at or '', x.ended_at or '')}, "
            f"{counted(x.chunks, 'chunk')}, {counted(x.tokens, 'token')}{_agents(x.agents)}{_members(x.members)}): "
            f"{x.short_title(120)}"
            for x in sessions
        ]
        head = f"Sessions of {listing.project} ({len(sessions)} of {total}, newest first; {TIMES_ZONE}):"
        text = head + "\n" + "\n".join(lines)
        if total > len(sessions):
            text += f"\n(showing {len(sessions)} of {total} sessions; use from/to or limit to see others)"
    return _result(text)


def stats(ctx: Context) -> CallToolResult:
    """Memory statistics: chunks, vectors, edges by type, sessions, projects, agents, clusters."""
    output = _app(ctx).call("stats", lambda m: m.stats())
    # Counts with thousands separators, as the lines beside them ('167 sessions, 3,063 chunks') say them.
    vectors = f"{output.vector_count:,}" if output.vector_count is not None else f"unavailable ({output.vector_error})"
    edges = "".join(f"\n  - {k}: {v:,}" for k, v in sorted(output.edges.by_type.items()))
    lines = [
        f"Causantic v{output.version}",
        "",
        "Memory Statistics:",
        f"- Chunks: {output.chunk_count:,}",
        f"- Vectors: {vectors}",
        f"- Edges: {output.edges.total:,}" + edges,
        f"- Sessions: {output.session_count:,}"
        + "".join(
            f"\n  - {k}: {counted(v.session_count, 'session')}, {counted(v.chunk_count, 'chunk')}"
            for k, v in output.sources.items()
            if v.session_count  # an agent never ingested is no news
        ),
        f"- Projects: {output.project_count:,}",
        f"- Agents besides main: {with_names(output.agents)}",
        f"- Clusters: {output.topic_count:,}",
        f"- Keyword index: {output.keyword_index}",
    ]
    if output.members:  # team memory: who contributed what
        lines.insert(
            -2,
            "- Sessions by member: "
            + ", ".join(
                f"{k} {v.session_count} ({counted(v.chunk_count, 'chunk')})" for k, v in output.members.items()
            ),
        )
    if output.team_unavailable:
        lines[2:2] = [f"Team memory unavailable, local memory's figures only: {output.team_unavailable.message}", ""]
    if output.team_schema_note:
        lines += ["", f"Note: {sentence(output.team_schema_note)}"]
    if n := output.chunks_without_vectors:
        lines.append(f"- Not yet embedded: {counted(n, 'chunk')} (keyword search finds them; vector search not yet)")
    lines += [f"- {run.summary}" for run in output.ingests_running]  # the figures may change under it
    if off := topics_off_note(output.topics_off, output.topic_count):
        lines += ["", off]
    if output.projects:
        lines += ["", f"Projects ({DATES_ZONE}):"] + [
            f"- {p.name}: {counted(p.chunk_count, 'chunk')} ({day_span(p.first_seen, p.last_seen)})"
            for p in output.projects
        ]
    return _result("\n".join(lines))


def forget(
    ctx: Context,
    project: Project,
    before: Annotated[
        datetime | None, Field(description="Chunks before this time, e.g. 2026-03-01; UTC when no offset.")
    ] = None,
    after: Annotated[datetime | None, Field(description="Chunks at or after this time; UTC when no offset.")] = None,
    # No min_length here: forget itself refuses a prefix too short to name one session, in its own words.
    session: Annotated[
        str | None, Field(description=f"A session id or id prefix (at least {options.SESSION_ID_MIN} characters).")
    ] = None,
    query: Annotated[
        str | None,
        Field(
            description=("Chunks similar in meaning to this text (needs vectors); see threshold."),
        ),
    ] = None,
    threshold: Annotated[
        float,
        Field(ge=options.THRESHOLD.low, le=options.THRESHOLD.high, description=options.THRESHOLD.help),
    ] = options.FORGET_THRESHOLD,
    whole_project: Annotated[
        bool, Field(description="Everything in the project (also what no filter means); takes no filter.")
    ] = False,
    only_mine: Annotated[
        bool,
        Field(description="Team memory: only this member's own chunks; other members' in the project stay."),
    ] = False,
    dry_run: Annotated[
        bool,
        Field(
            description=("Only preview what would be deleted (default). Set false, after the user confirms, to delete.")
        ),
    ] = True,
    expected_count: Annotated[
        int | None,
        Field(
            ge=0,
            description=(
                "With dry_run=false (required then): the count the preview reported; nothing is deleted if "
                "the matches differ."
            ),
        ),
    ] = None,
) -> CallToolResult:
    """Delete chosen memories of one project, or the whole project; by default only previews what would go.

    Use only when the user asks to forget something (a leaked secret, a wrong approach, an old
    period, a project). Filters combine: before/after (time), session, query (meaning); no filter
    means the whole project. Show the preview to the user and call again with dry_run=false and
    expected_count set to the previewed count only after they confirm.
    """
    # The model cannot be shown a prompt mid-call, so memory goes only as this server previewed it: a
    # delete never touches more than a preview showed (a query's matches, a period, a session alike).
    if not dry_run and expected_count is None:
        raise ToolError(
            "Deleting needs expected_count: preview first (dry_run=true), show the user the count, and pass "
            "it as expected_count once they confirm."
        )
    app = _app(ctx)
    asked = (project, before, after, session, query, threshold, whole_project, only_mine)
    previewed = app.forget_previews.get(asked)
    if not dry_run and previewed is None and expected_count:
        raise ToolError(
            "This server has shown no preview of this forget, so it cannot tell which chunks the user "
            "confirmed: preview it first (dry_run=true) with the same arguments."
        )

    def run(m: Memory) -> ForgetResult:
        # Named to a process that waits for this deletion ("the MCP server's forget started at 10:02 UTC").
        with nullcontext() if dry_run else write_waits.write("forget"):
            return m.forget(
                project,
                before=before,
                after=after,
                session_id=session,
                query=query,
                threshold=threshold,
                whole_project=whole_project,
                only_mine=only_mine,
                dry_run=dry_run,
                expected=expected_count,
                only_ids=None if dry_run else previewed,
            )

    result = app.call("forget", run)
    if result.dry_run:
        app.forget_previews[asked] = frozenset(result.ids)
    else:
        app.forget_previews.pop(asked, None)
    lines = [
        f'  {i}. {_percent(similarity)}"{preview_line(chunk, 80)}" ({_day(chunk.start_time)})'
        for i, (chunk, similarity) in enumerate(result.preview, start=1)
    ]
    if result.whole_project:  # a project is best recognised by its sessions
        lines = [
            f"  - {short_session(x.session_id)} ({_day(x.started_at)}, {counted(x.chunks, 'chunk')}): "
            f"{x.short_title(80)}"
            for x in result.session_summaries
        ]
    listed = f"{'Sessions' if result.whole_project else 'Chunks'} ({DATES_ZONE}):"  # said once, above the dates
    scope = "the whole project" if result.whole_project else "project"
    if not (result.count or result.deleted):
        text = nothing_to_forget(result, "threshold={}")
    elif result.dry_run:
        text = (
            f"Dry run: {chunks_forgotten(result, result.count)} in {counted(result.sessions, 'session')} would be "
            f"deleted from {scope} {result.project!r}."
            + (f" {note}" if (note := others_note(result, "only_mine=true")) else "")
            + ("\n" + "\n".join([listed, *lines]) if lines else "")
            + f"\nAfter the user confirms, call again with dry_run=false and expected_count={result.count}."
        )
    else:
        text = (
            f"Deleted {chunks_forgotten(result, result.deleted)} from {scope} {result.project!r}."
            + (f" {note}" if (note := others_note(result, "only_mine=true")) else "")
            + (f" {note}" if (note := space_note(result)) else "")
            + ("\n" + "\n".join([listed, *lines[:3]]) if lines else "")
        )
    return _result(text)


def hook_status(ctx: Context) -> CallToolResult:
    """When each Causantic hook (session-start, pre-compact, session-end, user-prompt-submit) last ran, and how
    it went; for user-prompt-submit, on each recent prompt, whether memory was added, why, and which past
    moments with their scores.

    Use when memory seems stale or a briefing is missing, to see whether ingestion is working.
    """
    from causantic.retrieval.prompt_report import PROMPTS_HEADING, added_text, explain_prompt, recent_prompts

    status = read_status()
    runs = status_out(status).hooks
    if not runs:
        return _result("Hook Status: (no hooks have run yet)")
    now = datetime.now(UTC)
    lines = ["Hook Status:"]
    for name, run in runs.items():
        line = f"- {name}: last ran {ago(run.last_run, now)} ({'success' if run.success else 'FAILED'}"
        line += f", {run.duration_ms} ms)" if run.duration_ms is not None else ")"
        line += f" for {run.project}" if run.project else ""
        line += f", session {short_session(run.session_id)}" if run.session_id else ""
        said = run.error or (added_text(status[name]) if name == PROMPT_HOOK else run.outcome)
        line += f" — {said}" if said else ""
        lines.append(line)
    prompts = recent_prompts(status)  # as `causantic hook status` lists them, indented as it indents them
    if prompts:
        lines += ["", PROMPTS_HEADING]
    lines += ["  " * min(shown.level, 1) + shown.text for run in prompts for shown in explain_prompt(run)]
    return _result("\n".join(lines))


TOOLS: Sequence[tuple[Callable[..., Any], str, ToolAnnotations]] = (
    (search, "search", READ_ONLY),
    (recall, "recall", READ_ONLY),
    (predict, "predict", READ_ONLY),
    (reconstruct, "reconstruct", READ_ONLY),
    (list_projects, "list-projects", READ_ONLY),
    (list_sessions, "list-sessions", READ_ONLY),
    (stats, "stats", READ_ONLY),
    (forget, "forget", DESTRUCTIVE),
    (hook_status, "hook-status", READ_ONLY),
)


def register(server: MCPServer[AppContext]) -> None:
    for function, name, hints in TOOLS:
        server.tool(name=name, annotations=hints)(function)


# ---- helpers ---------------------------------------------------------------------------------


def _app(ctx: Context) -> AppContext:
    return cast(AppContext, ctx.request_context.lifespan_context)


def _episodic(
    ctx: Context, tool: str, text: str, project: str | None, agent: str | None, max_tokens: int | None
) -> CallToolResult:
    from causantic.retrieval.format import render_episodes

    app = _app(ctx)

    def answer(m: Memory) -> EpisodeAnswer:
        ask = m.recall if tool == "recall" else m.predict
        return ask(
            text,
            project=project,
            agent=agent,
            max_tokens=_budget(m, max_tokens, m.config.episodes.max_tokens),
            here=app.here,
        )

    result = app.call(tool, answer)
    return _result(render_episodes(result))


def _budget(memory: Memory, asked: int | None, default: int | None = None) -> int:
    """``asked``, else the configured budget, within :data:`CEILING` (a configured budget may exceed it)."""
    return min(asked or default or memory.config.tokens.mcp_max_response, CEILING)


def _result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _day(iso_text: str | None) -> str:
    return iso_text[:10] if iso_text else "?"


def _agents(agents: Sequence[str]) -> str:
    others = [a for a in agents if a and a != "main"]
    return f", agents: main + {', '.join(others)}" if others else ""


def _members(members: Sequence[str]) -> str:
    """', by alice': whose a session of team memory is; nothing in local memory, where all is yours."""
    return f", by {' and '.join(members)}" if members else ""


def _percent(similarity: float | None) -> str:
    return f"[{round(similarity * 100)}%] " if similarity is not None else ""
