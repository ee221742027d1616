"""The CLI's commands through click's runner: what a person reads, and ``--json`` in the facade's shapes.

One store holds the bundled example sessions (project acme-shop) with their vectors, ingested once
through :class:`causantic.Memory`; every ``--json`` output is validated against its result model
(``causantic.retrieval.output``), one shape per answer.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from process_support import EXAMPLES
from pydantic import BaseModel
from transcript_files import write_session

from causantic.cli import output
from causantic.cli.main import cli
from causantic.facade import Memory
from causantic.ingest_runs import IngestProgress
from causantic.retrieval import options
from causantic.retrieval import output as output_models
from causantic.retrieval.output import (
    EmbedOut,
    EpisodicOut,
    ForgetOut,
    HookStatusOut,
    IngestOut,
    ProjectsOut,
    ReconstructOutput,
    SearchOut,
    SessionsOut,
    StatsOut,
    TopicsOut,
)
from causantic.runs import record


@pytest.fixture(scope="module")
def store_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("cli-home")
    with Memory(home) as memory:
        report = memory.ingest([EXAMPLES])
    assert report.errors == [] and report.vectors_added
    return home


@pytest.fixture
def run(store_home: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("CAUSANTIC_HOME", str(store_home))
    return CliRunner()


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args), catch_exceptions=False)


def as_model(result: Result, model: type[BaseModel]) -> BaseModel:
    assert result.exit_code == 0, result.output
    return model.model_validate(json.loads(result.stdout))


def test_stats_reads_as_a_table_and_its_json_validates(run: CliRunner) -> None:
    text = invoke(run, "stats")
    assert text.exit_code == 0
    assert "chunks" in text.stdout and "acme" not in text.stdout.lower()
    stats = as_model(invoke(run, "stats", "--json"), StatsOut)
    assert isinstance(stats, StatsOut)
    assert stats.chunk_count > 0 and stats.vector_count == stats.chunk_count and stats.chunks_without_vectors == 0
    assert stats.project_count == 1 and [p.name for p in stats.projects] == ["acme-shop"]
    assert stats.vector_error is None and f"{stats.chunk_count}" in text.stdout
    # Only Claude Code sessions are stored: the table names no other agent, --json lists each at 0.
    assert "claude-code" in text.stdout and "codex" not in text.stdout and "gemini" not in text.stdout
    assert stats.sources["codex"].session_count == 0 and stats.sources["gemini"].session_count == 0
    # The agents besides main are named, not only counted ('agents (besides main) │ 1' said not which).
    assert stats.agent_count == 1 and stats.agents == ["Explore"]
    assert re.search(r"^ agents \(besides main\) +│ 1: Explore$", text.stdout, re.MULTILINE), text.stdout


def test_many_agents_are_named_up_to_eight_then_counted() -> None:
    from causantic.wording import with_names

    names = [f"agent-{n:02}" for n in range(19)]
    assert with_names(names) == "19: " + ", ".join(names[:8]) + " and 11 more"
    assert (with_names(names[:2]), with_names([])) == ("2: agent-00, agent-01", "0")


def test_the_agents_two_stores_name_are_joined_once() -> None:
    """Team memory beside the local store: each names its sub-agents; together each name once, sorted."""
    from causantic.retrieval.listing import combined_counts

    both = combined_counts({"agent_names": ["Plan", "reviewer"]}, {"agent_names": ["Explore", "Plan"]})
    assert both["agent_names"] == ["Explore", "Plan", "reviewer"]


def test_stats_says_an_ingest_is_running_while_one_does(run: CliRunner, store_home: Path) -> None:
    with IngestProgress(store_home, [EXAMPLES]) as progress:  # as a batch-ingest in another terminal keeps it
        progress.discovered(3, 0)
        text = invoke(run, "stats")
        stats = as_model(invoke(run, "stats", "--json"), StatsOut)
    assert isinstance(stats, StatsOut)
    assert [(r.files_done, r.files_total, r.path) for r in stats.ingests_running] == [(0, 3, str(EXAMPLES))]
    line = stats.ingests_running[0].summary
    assert line.startswith("Ingest running: 0 of 3 files, 0 chunks so far, started just now") and line in text.stdout
    assert "Ingest running" not in invoke(run, "stats").stdout
    after = as_model(invoke(run, "stats", "--json"), StatsOut)
    assert isinstance(after, StatsOut) and after.ingests_running == []


def test_stats_values_start_in_one_column(run: CliRunner) -> None:
    """A name/value list reads down one column: right-aligned, a short count sat far from its name
    whenever another value was a sentence (the ingest summary's topics line)."""
    rows = [row for row in invoke(run, "stats").stdout.splitlines() if "│" in row]
    starts = {len(row.split("│", 1)[1]) - len(row.split("│", 1)[1].lstrip()) for row in rows}
    assert len(rows) > 5 and starts == {1}


def test_projects_and_sessions(run: CliRunner) -> None:
    assert "acme-shop" in invoke(run, "list-projects").stdout
    projects = as_model(invoke(run, "list-projects", "--json"), ProjectsOut)
    assert isinstance(projects, ProjectsOut) and [p.name for p in projects.projects] == ["acme-shop"]
    text = invoke(run, "list-sessions", "acme-shop").stdout
    sessions = as_model(invoke(run, "list-sessions", "acme-shop", "--json"), SessionsOut)
    assert isinstance(sessions, SessionsOut) and sessions.total == len(sessions.sessions) > 0
    assert all(s.session_id[:8] in text for s in sessions.sessions)
    assert f"{sessions.total} of {sessions.total} sessions" in text


def test_search_prints_hits_with_their_place_and_json_carries_whole_chunks(run: CliRunner) -> None:
    text = invoke(run, "search", "rate limiting")
    assert text.exit_code == 0 and text.stdout.startswith("Found ")
    assert "Project: acme-shop" in text.stdout
    found = as_model(invoke(run, "search", "rate limiting", "--json", "--limit", "3"), SearchOut)
    assert isinstance(found, SearchOut)
    assert found.query == "rate limiting" and 0 < len(found.hits) <= 3
    assert all(h.content and h.project == "acme-shop" for h in found.hits)


def test_a_search_for_nothing_says_so_and_an_empty_query_is_an_error(run: CliRunner) -> None:
    nothing = as_model(invoke(run, "search", "zqxv wobblefrotz", "--json"), SearchOut)
    assert isinstance(nothing, SearchOut) and nothing.nothing_relevant and nothing.hits == []
    said = invoke(run, "search", "zqxv wobblefrotz").stdout
    assert said.startswith("Nothing relevant in memory") and "(es)" not in said and "(s)" not in said
    empty = invoke(run, "search", "   ")
    assert empty.exit_code == 1 and "The query is empty" in empty.output


def test_user_on_a_local_memory_says_it_filters_team_memory(run: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--user bob` on local memory said only "no matching chunks"."""
    monkeypatch.setenv("CAUSANTIC_TEAM_USER", "alice")  # this machine's member (team.user)
    said = invoke(run, "search", "rate limiting", "--user", "bob")
    assert said.exit_code == 0 and said.stdout.startswith("Nothing relevant in memory")
    assert "no matching chunks" not in said.stdout
    assert "user filter picks a member's chunks in team memory" in " ".join(said.stdout.split())
    assert "this memory is local and every chunk in it is alice's, none bob's" in " ".join(said.stdout.split())
    # this machine's own member: local memory is all theirs, so the filter keeps everything
    everyone = as_model(invoke(run, "search", "rate limiting", "--json"), SearchOut)
    mine = as_model(invoke(run, "search", "rate limiting", "--json", "--user", "alice"), SearchOut)
    assert isinstance(mine, SearchOut) and isinstance(everyone, SearchOut)
    assert mine.hits and [h.id for h in mine.hits] == [h.id for h in everyone.hits]


def test_the_user_option_says_what_it_does_in_local_memory_and_does_that(
    run: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search tool's user parameter read "Team memory: only what this member ingested … Local memory
    is all this machine's member's.": nothing said what passing it does to a local, single-user memory."""
    import anyio
    from mcp import Client

    from causantic.mcp.server import build_server

    monkeypatch.setenv("CAUSANTIC_TEAM_USER", "alice")  # this machine's member (team.user)
    query = "rate limiting"

    async def ask() -> tuple[str, str, str, str]:
        async with Client(build_server(warm=False), mode="legacy") as client:
            [tool] = [t for t in (await client.list_tools()).tools if t.name == "search"]
            said = [await client.call_tool("search", {"query": query, **who}) for who in ({}, {"user": "alice"})]
            other = await client.call_tool("search", {"query": query, "user": "bob"})
            texts = [str(r.content[0].text) for r in (*said, other)]
            return tool.input_schema["properties"]["user"]["description"], texts[0], texts[1], texts[2]

    described, everyone, theirs, another = anyio.run(ask)
    meaning = "In local, single-user memory every chunk is this machine's user's: their name keeps everything"
    assert meaning in described and "any other name finds nothing; omit it there." in described
    assert meaning in " ".join(invoke(run, "search", "--help").stdout.split())  # the CLI's --user says it too
    assert theirs == everyone and "Found " in everyone  # their name keeps everything
    assert another.startswith("Nothing relevant in memory")  # any other name finds nothing


@pytest.mark.parametrize("command", ["recall", "predict"])
def test_episodic_answers_in_time_order(run: CliRunner, command: str) -> None:
    text = invoke(run, command, "rate limiting")
    assert text.exit_code == 0 and text.stdout.startswith(command.capitalize() + ":")
    answer = as_model(invoke(run, command, "rate limiting", "--json"), EpisodicOut)
    assert isinstance(answer, EpisodicOut) and answer.kind == command and answer.episodes
    starts = [e.start for e in answer.episodes]
    assert starts == sorted(starts)


def test_an_episode_names_its_project_session_and_source_once_not_on_every_chunk(run: CliRunner) -> None:
    """Each chunk header repeated "Project: acme-shop | Session: 7a378dd6 | … | Source: claude-code"
    under an episode heading that already said so: 8.5% of recall's text on the coding dev set."""
    answer = as_model(invoke(run, "recall", "which code depends on the current date in billing", "--json"), EpisodicOut)
    assert isinstance(answer, EpisodicOut) and answer.episodes
    text = invoke(run, "recall", "which code depends on the current date in billing").stdout
    for episode in answer.episodes:
        assert f"· acme-shop · session {episode.session_id[:8]} (Claude Code) ·" in text
    headers = [line for line in text.splitlines() if re.match(r"\[\d+/\d+ \| ", line)]
    assert len(headers) == sum(len(e.chunks) for e in answer.episodes)
    assert not any("Project:" in h or "Session:" in h or "Source:" in h for h in headers)
    assert any("| Agent: Explore |" in h for h in headers)  # what differs within an episode is still said


def test_reconstruct_timeline_and_text(run: CliRunner) -> None:
    timeline = invoke(run, "reconstruct", "acme-shop")
    assert timeline.exit_code == 0 and "causantic reconstruct acme-shop --session ID" in timeline.stdout
    out = as_model(invoke(run, "reconstruct", "acme-shop", "--json"), ReconstructOutput)
    assert isinstance(out, ReconstructOutput) and out.view == "timeline" and out.sessions and not out.chunks
    first = out.sessions[0].session_id
    text = as_model(invoke(run, "reconstruct", "acme-shop", "--session", first[:8], "--json"), ReconstructOutput)
    assert isinstance(text, ReconstructOutput) and text.view == "text"
    assert {c.session_id for c in text.chunks} == {first} and all(c.content for c in text.chunks)
    full = invoke(run, "reconstruct", "acme-shop", "--full").stdout
    assert "=== Session 2a2ee33e · Claude Code (2026-11-02 09:15 – 09:20) ===" in full  # the day said once


def test_a_reconstruct_page_over_its_budget_says_so_as_the_tool_does(run: CliRunner) -> None:
    """With max_tokens=100 reconstruct gave a page of 123 tokens (one chunk larger than the budget,
    shown whole) and said nothing of the budget, where search says when its matches exceed it."""
    import anyio
    from mcp import Client

    from causantic.mcp.server import build_server

    low = int(options.MAX_TOKENS.low or 0)
    said = "this chunk is larger than it, and is shown whole on a page of its own"
    shown = invoke(run, "reconstruct", "acme-shop", "--full", "--max-tokens", str(low)).stdout
    head = shown.split("\n", 2)
    tokens = int(re.findall(r"(\d+) tokens", head[0])[0])
    assert tokens > low and head[1] == f"(Over the {low}-token budget: {said}.)", head
    assert said not in invoke(run, "reconstruct", "acme-shop", "--full").stdout  # within its budget: no word

    async def ask() -> str:
        async with Client(build_server(warm=False), mode="legacy") as client:
            answer = await client.call_tool("reconstruct", {"project": "acme-shop", "full": True, "max_tokens": low})
            return str(answer.content[0].text)

    assert f"(Over the {low}-token budget: {said}.)" in anyio.run(ask)


def test_previous_session_by_a_prefix_of_the_current_session_shows_the_one_before(run: CliRunner) -> None:
    timeline = as_model(invoke(run, "reconstruct", "acme-shop", "--json"), ReconstructOutput)
    assert isinstance(timeline, ReconstructOutput)
    *_, before, current = [s.session_id for s in timeline.sessions]  # oldest first
    args = ("reconstruct", "acme-shop", "--previous-session", "--current-session", current[: options.SESSION_ID_MIN])
    shown = as_model(invoke(run, *args, "--json"), ReconstructOutput)
    assert isinstance(shown, ReconstructOutput) and {c.session_id for c in shown.chunks} == {before}
    assert f"=== Session {before[:8]}" in invoke(run, *args).stdout


def test_a_session_that_is_not_there_is_named_and_so_is_a_first_session_with_none_before(run: CliRunner) -> None:
    """Both said "No session data found for project 'acme-shop' in the requested range" (no range was given)."""
    missing = invoke(run, "reconstruct", "acme-shop", "--session", "ffffffff")
    assert missing.exit_code == 1 and "No session of 'acme-shop' has an id starting 'ffffffff'" in missing.output
    timeline = as_model(invoke(run, "reconstruct", "acme-shop", "--json"), ReconstructOutput)
    assert isinstance(timeline, ReconstructOutput)
    first = timeline.sessions[0].session_id  # oldest first
    none = invoke(run, "reconstruct", "acme-shop", "--previous-session", "--current-session", first)
    assert none.exit_code == 0 and none.stdout == "No session of 'acme-shop' comes before the current one.\n"


def test_an_ambiguous_current_session_prefix_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sessions starting with the same characters: the prefix names both instead of guessing."""
    project = tmp_path / "projects" / "-home-dev-acme-shop"
    shutil.copytree(EXAMPLES / "-home-dev-acme-shop", project)
    old, twin = "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec", "7a378dd6-0000-5d34-8e2d-b31f59bac0ec"
    (project / f"{twin}.jsonl").write_text((project / f"{old}.jsonl").read_text().replace(old, twin))
    (project / f"{old}.jsonl").unlink()
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    assert invoke(CliRunner(), "ingest", str(project.parent), "--no-embed").exit_code == 0
    refused = CliRunner().invoke(
        cli, ["reconstruct", "acme-shop", "--previous-session", "--current-session", "7a378dd6"]
    )
    assert refused.exit_code == 1 and "matches 2 sessions" in refused.output and twin in refused.output


def test_a_session_prefix_naming_two_sessions_or_another_projects_session_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "The text of one session" by a prefix two ids share printed both, run together as one story; a
    session of another project read only as "no session has an id starting …"."""
    project = tmp_path / "projects" / "-home-dev-acme-shop"
    shutil.copytree(EXAMPLES / "-home-dev-acme-shop", project)
    old, twin = "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec", "7a378dd6-0000-5d34-8e2d-b31f59bac0ec"
    (project / f"{twin}.jsonl").write_text((project / f"{old}.jsonl").read_text().replace(old, twin))
    other = "b111aaaa-0000-4000-8000-000000000000"  # the same work in a project of its own
    billing = tmp_path / "projects" / "-home-dev-billing"
    billing.mkdir()
    text = (
        (project / f"{old}.jsonl").read_text().replace(old, other).replace("/home/dev/acme-shop", "/home/dev/billing")
    )
    (billing / f"{other}.jsonl").write_text(text)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    assert invoke(CliRunner(), "ingest", str(project.parent), "--no-embed").exit_code == 0
    both = CliRunner().invoke(cli, ["reconstruct", "acme-shop", "--session", "7a378dd6"])
    assert both.exit_code == 1 and "'7a378dd6' is the start of 2 session ids in 'acme-shop'" in both.output
    assert twin in both.output and "7a378dd6-f9b6-52f1-ad8d-dd8aa785f035" in both.output
    whole = invoke(CliRunner(), "reconstruct", "acme-shop", "--session", twin, "--json")  # a whole id is one session
    assert {c["session_id"] for c in json.loads(whole.stdout)["chunks"]} == {twin}
    elsewhere = CliRunner().invoke(cli, ["reconstruct", "acme-shop", "--session", other[:8]])
    assert elsewhere.exit_code == 1
    assert "No session of 'acme-shop' has an id starting 'b111aaaa'; it is a session of 'billing'" in elsewhere.output


def test_reconstruct_for_an_agent_that_never_worked_in_the_project_says_so(run: CliRunner) -> None:
    """It read "No session data found for project 'acme-shop' in the requested range": no range was given."""
    nobody = run.invoke(cli, ["reconstruct", "acme-shop", "--agent", "Explor"])
    assert nobody.exit_code == 1 and "No chunk of 'acme-shop' is by an agent named 'Explor'" in nobody.output
    assert "Explore" in invoke(run, "reconstruct", "acme-shop", "--agent", "Explore").stdout


def test_a_timeline_ends_with_how_to_read_one_session_or_all_of_them(run: CliRunner) -> None:
    """Its last line read 'Of this page: add --full.', which says neither what --full gives nor of what."""
    hints = invoke(run, "reconstruct", "acme-shop").stdout.splitlines()[-3:]
    assert hints == [
        "The text of one session (ID from the second column):",
        "  causantic reconstruct acme-shop --session ID",
        "The text of every session above: add --full.",
    ]


def test_a_timeline_in_a_narrow_terminal_keeps_each_session_within_its_width(
    run: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each session's line ran to 180 characters whatever the terminal, which wrapped it mid-word; and
    the hint below split its command in two at 60 columns ('… causantic reconstruct Demo ⏎ --session ID')."""
    timeline = as_model(invoke(run, "reconstruct", "acme-shop", "--json"), ReconstructOutput)
    assert isinstance(timeline, ReconstructOutput)
    for width in (60, 100):
        monkeypatch.setattr(output.console, "width", width)
        lines = invoke(run, "reconstruct", "acme-shop").stdout.splitlines()
        hint = next(i for i, line in enumerate(lines) if line.startswith("The text of one session"))
        assert all(len(line) <= width for line in lines), lines
        assert lines[hint + 1] == "  causantic reconstruct acme-shop --session ID"  # whole, to copy
        for s in timeline.sessions:
            assert any(s.title[:20] in line for line in lines), (width, s.title)
    assert not lines[1].startswith("    ")  # 100 columns: a title fits beside its session


def test_tables_in_a_narrow_terminal_keep_every_value_whole(run: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 60 columns a six-column table would cut every cell ("2025-0…"); its rows print as blocks. Their
    times are UTC, as stored, and say so (a 'start' column read as local time)."""
    listing = as_model(invoke(run, "list-sessions", "acme-shop", "--json"), SessionsOut)
    assert isinstance(listing, SessionsOut)
    monkeypatch.setattr(output.console, "width", 60)
    shown = invoke(run, "list-sessions", "acme-shop").stdout
    for s in listing.sessions:
        assert f"session      {s.session_id[:8]}" in shown
        assert f"start (UTC)  {s.started_at[:16].replace('T', ' ')}" in shown  # stored times are UTC
        assert f"title        {s.title[:30]}" in shown
    assert "┃" not in invoke(run, "stats").stdout  # a name/value list has no empty header row
    assert "first (UTC)  2026-11-" in invoke(run, "list-projects").stdout  # not taken for local time


# A project kept deep in a folder tree: its path alone is wider than a terminal.
DEEP = "/home/dev/" + "/".join(f"clients-{n:02d}-northwind-traders-portal" for n in range(5)) + "/billing-api"


@pytest.fixture(scope="module")
def deep_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deep")
    write_session(root / "projects", DEEP, "dee90000-0000-4000-8000-000000000000", [("why 402", "a card")])
    with Memory(root / "home") as memory:
        assert memory.ingest([root / "projects"], embed=False).errors == []
    return root / "home"


@pytest.mark.parametrize("width", [60, 80, 120, None])
def test_list_projects_keeps_a_long_path_on_one_line_ending_with_its_folder(
    deep_home: Path, width: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path column folded a long path into pieces at 100 columns, and at 200 when piped: piped,
    it is whole; in a terminal, cut at its start ('…/billing-api'), never broken across lines."""
    monkeypatch.setenv("CAUSANTIC_HOME", str(deep_home))
    if width is not None:
        monkeypatch.setattr(output.console, "width", width)
    lines = invoke(CliRunner(), "list-projects").stdout.splitlines()
    path = [line for line in lines if "portal" in line]  # words of the path alone: its line(s)
    assert len(path) == 1 and path[0].rstrip().endswith("-portal/billing-api"), lines
    if width is None:  # piped: the row whole, the path whole
        assert DEEP in path[0]
    else:
        assert max(len(line) for line in lines) <= width and "…" in path[0], lines
    assert lines[0].startswith("project") if width == 60 else "┃ chunks ┃" in lines[0], lines


def test_columns_set_by_hand_sizes_piped_tables(run: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """`COLUMNS=60 causantic list-sessions … | less` printed rows 150 columns wide."""
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(output, "_consoles", {})  # made anew, as in a new process
    shown = invoke(run, "list-sessions", "acme-shop").stdout
    assert "session  " in shown and max(len(line) for line in shown.splitlines()) <= 60


@pytest.mark.parametrize("columns", ["0", "wide"])
def test_columns_that_is_no_width_is_ignored(run: CliRunner, monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    """`COLUMNS=0 causantic list-sessions … | cat` (a container that exports the size of a terminal it
    does not know) printed blank lines: rich took 0 for the width."""
    monkeypatch.setenv("COLUMNS", columns)
    shown = invoke(run, "list-sessions", "acme-shop").stdout
    assert "4005b823" in shown and "Let's add rate limiting" in shown
    assert "claude-code            │ 3 sessions, 6 chunks" in invoke(run, "stats").stdout


def test_an_empty_time_range_says_it_is_the_range_that_holds_no_session(run: CliRunner) -> None:
    shown = invoke(run, "list-sessions", "acme-shop", "--from", "2030-01-01").stdout
    assert "No sessions found for project 'acme-shop' in that time range" in shown
    assert "; its newest session started 2026-11-04 10:30 UTC (drop --from/--to/--days-back" in shown


def test_search_takes_the_mcp_tools_time_range_with_its_meaning_and_its_refusals(run: CliRunner) -> None:
    """The search tool took from/to/days_back; `causantic search` had no such options ("No such
    option '--from'"), so a person could not narrow a search to last week as an agent could."""
    import anyio
    from mcp import Client

    from causantic.mcp.server import build_server

    query = "invoice test rate limiting redirect login"  # words of each of the three sessions

    def days(*args: str) -> list[str]:
        found = as_model(invoke(run, "search", query, "--json", *args), SearchOut)
        assert isinstance(found, SearchOut)
        return sorted({h.date[:10] for h in found.hits})

    assert days() == ["2026-11-02", "2026-11-03", "2026-11-04"]
    assert days("--from", "2026-11-04") == ["2026-11-04"]
    assert days("--to", "2026-11-03") == ["2026-11-02"]  # the end is exclusive
    assert days("--from", "2026-11-03T00:00+00:00", "--to", "2026-11-04") == ["2026-11-03"]
    assert days("--days-back", "3650") == days()
    last_day = invoke(run, "search", query, "--days-back", "1").stdout
    assert "memory holds no chunk from the requested time range" in last_day

    refusals = [("2026-11-01", None, 3), ("2026-11-04", "2026-11-02", None)]

    async def ask() -> list[str]:
        async with Client(build_server(warm=False), mode="legacy") as client:
            said = []
            for start, end, back in refusals:
                arguments = {"query": query, "from": start, "to": end, "days_back": back}
                answer = await client.call_tool("search", {k: v for k, v in arguments.items() if v is not None})
                assert answer.is_error
                said.append(answer.content[0].text)
            return said

    for (start, end, back), tool_said in zip(refusals, anyio.run(ask), strict=True):
        args = ["--from", start, *(["--to", end] if end else []), *(["--days-back", str(back)] if back else [])]
        refused = invoke(run, "search", query, *args)
        assert refused.exit_code == 1 and refused.stdout == ""
        message = refused.output.removeprefix("Error: ").strip()
        assert message and message in tool_said, (message, tool_said)


def test_a_forget_preview_keeps_each_chunk_on_one_line_of_a_narrow_terminal(
    run: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output.console, "width", 60)
    for args in (("forget", "acme-shop"), ("forget", "acme-shop", "--before", "2027-01-01")):
        preview = invoke(run, *args).stdout.splitlines()
        listed = [line for line in preview if line.startswith("  20")]  # "  <date>  <session or chunk>"
        assert listed and all(len(line) <= 60 for line in listed), args
        assert any(line.endswith("…") for line in listed)  # a cut is marked


def test_a_forget_preview_names_its_columns_once_its_times_utc(run: CliRunner) -> None:
    """Its sessions and chunks were listed under times that did not say they were UTC."""
    for args in (("forget", "acme-shop"), ("forget", "acme-shop", "--session", "4005b823")):
        preview = invoke(run, *args).stdout.splitlines()
        first = next(i for i, line in enumerate(preview) if line.startswith("  20"))
        assert preview[first - 1].startswith("  start (UTC)  "), preview
        assert sum("UTC" in line for line in preview) == 1, preview


def test_an_ingest_too_small_for_topics_says_when_they_will_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "fresh"))
    report = as_model(invoke(CliRunner(), "ingest", str(EXAMPLES), "--json"), IngestOut)
    assert isinstance(report, IngestOut) and report.vectors_added
    note = report.topics_note
    assert note is not None and note.startswith("none yet") and "causantic cluster" in note


def test_cluster_and_clusters_name_their_counts_alike(
    store_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cluster --json said clusters, clustered_chunks and noise_chunks where clusters --json says
    topics, chunks and in_no_topic."""
    shutil.copytree(store_home, tmp_path / "home")
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    run = CliRunner()
    clustered = json.loads(invoke(run, "cluster", "--json").stdout)
    listed = json.loads(invoke(run, "clusters", "--json").stdout)
    assert set(clustered) == {"topics_found", "chunk_count", "in_no_topic", "kept_identities", "seconds"}
    assert clustered["topics_found"] == len(listed["topics"])
    assert (clustered["chunk_count"], clustered["in_no_topic"]) == (listed["chunk_count"], listed["in_no_topic"])


def test_search_recall_and_reconstruct_say_once_that_their_times_are_utc(run: CliRunner) -> None:
    """Their headings gave times with no zone (tables said "(UTC)"): a reader in another zone took
    them for local. Each says it once, in its first line, as the MCP tools' answers do."""
    query = "invoice test rate limiting redirect login"
    for args in (("search", query), ("recall", query), ("predict", query), ("reconstruct", "acme-shop", "--full")):
        shown = invoke(run, *args).output
        assert re.search(r" \d\d:\d\d", shown), args  # it gives times
        assert shown.count("times in UTC") == 1 and "times in UTC" in shown.split("\n", 1)[0], args


def test_headings_wrap_between_words_in_a_narrow_terminal(run: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 60 columns a hit's heading ran on as one line that the terminal broke mid-word
    ('… | Relevan' and 'ce: 21%]'); the chunks' own text still keeps its lines."""
    monkeypatch.setenv("FORCE_COLOR", "1")  # as on a terminal: printed by rich
    monkeypatch.setattr(output.console, "width", 60)
    query = "invoice test rate limiting redirect login"
    for command in ("search", "recall"):
        shown = re.sub(r"\x1b\[[0-9;]*m", "", invoke(run, command, query).stdout)
        heading = shown.split("\n\n", 1)[0]
        assert all(len(line) <= 60 for line in heading.splitlines()) and "times in UTC" in heading, heading
        headers = re.findall(r"^(?:\[Project: |\[\d+/\d+ \||== Episode ).*?(?:\]|==)$", shown, re.M | re.S)
        assert headers and all(len(line) <= 60 for h in headers for line in h.splitlines()), headers
        words = [word for h in headers for word in h.split()]
        wanted = ("Relevance:", "Source:") if command == "search" else ("Episode", "best", "match")
        assert all(w in words for w in wanted), words  # none broken in two


def test_a_stats_warning_wraps_between_words_on_a_narrow_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its warnings and notes ran on as one line the terminal broke mid-word at 60 columns."""
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    assert invoke(CliRunner(), "ingest", str(EXAMPLES), "--no-embed").exit_code == 0
    monkeypatch.setenv("FORCE_COLOR", "1")  # as on a terminal
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(output, "_consoles", {})  # made anew, as in a new process
    said = invoke(CliRunner(), "stats").stderr
    assert said.startswith("Warning: 6 chunks have no vector") and "Run `causantic embed`." in said, said
    assert all(len(line) <= 60 for line in said.splitlines()), said


def test_topics_is_a_list_of_topics_in_every_json_answer_that_holds_it(
    store_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`topics` was a count in cluster --json, a list in clusters --json and a sentence in ingest --json:
    a script reading one broke on the others. A count and a sentence now have names of their own."""
    shutil.copytree(store_home, tmp_path / "home")
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAUSANTIC_CLUSTERING_MIN_CLUSTER_SIZE", "2")  # the examples are few: topics of two
    run = CliRunner()
    answers = {args: json.loads(invoke(run, *args, "--json").stdout) for args in (("cluster",), ("clusters",))}
    answers["ingest", str(EXAMPLES)] = json.loads(invoke(run, "ingest", str(EXAMPLES), "--json").stdout)
    listed = answers["clusters",]["topics"]
    assert isinstance(listed, list) and listed and all(isinstance(t["label"], str) for t in listed)
    assert "topics" not in answers["cluster",] and answers["cluster",]["topics_found"] == len(listed)
    ingested = answers["ingest", str(EXAMPLES)]
    assert "topics" not in ingested and isinstance(ingested["topics_note"], str)
    for model in vars(output_models).values():  # and so in every result model, not only these three
        if isinstance(model, type) and issubclass(model, BaseModel) and "topics" in model.model_fields:
            assert model.model_fields["topics"].annotation == list[output_models.TopicInfo], model


def test_topics_and_embedding_have_json_shapes(run: CliRunner) -> None:
    topics = as_model(invoke(run, "clusters", "--json"), TopicsOut)
    assert isinstance(topics, TopicsOut)
    embedded = as_model(invoke(run, "embed", "--json"), EmbedOut)
    assert isinstance(embedded, EmbedOut) and embedded.vectors_added == 0 and embedded.vector_count > 0


def test_forget_previews_without_deleting(run: CliRunner) -> None:
    before = as_model(invoke(run, "stats", "--json"), StatsOut)
    sessions = as_model(invoke(run, "list-sessions", "acme-shop", "--json"), SessionsOut)
    assert isinstance(before, StatsOut) and isinstance(sessions, SessionsOut)
    target = sessions.sessions[0]
    text = invoke(run, "forget", "acme-shop", "--session", target.session_id[:8])
    assert text.exit_code == 0 and f"{target.chunk_count} chunks in 1 session of 'acme-shop' would be deleted" in (
        text.stdout
    )
    assert "Nothing was deleted" in text.stdout  # no terminal to confirm in
    preview = as_model(invoke(run, "forget", "acme-shop", "--session", target.session_id[:8], "--json"), ForgetOut)
    assert isinstance(preview, ForgetOut) and preview.dry_run and preview.chunk_count == target.chunk_count
    assert preview.deleted == 0 and len(preview.preview_chunks) == min(5, target.chunk_count)
    # A previewed chunk has a search hit's shape (it had four fields of its own: id, date, similarity, first_line).
    hit = json.loads(invoke(run, "search", "rate limiting", "--json").stdout)["hits"][0]
    previewed = json.loads(invoke(run, "forget", "acme-shop", "--session", target.session_id[:8], "--json").stdout)
    assert set(previewed["preview_chunks"][0]) == set(hit) | {"similarity"}
    assert {c["session_id"] for c in previewed["preview_chunks"]} == {target.session_id}
    assert all(c["content"] and c["project"] == "acme-shop" for c in previewed["preview_chunks"])
    after = as_model(invoke(run, "stats", "--json"), StatsOut)
    assert isinstance(after, StatsOut) and after.chunk_count == before.chunk_count


def test_a_whole_project_forget_preview_starts_every_title_in_one_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'fe5e1c67  74 chunks  /orchestrator …' over '1af7fc5e  2 chunks  (no prompt …': the titles zigzagged."""
    from transcript_files import write_session

    sessions = tmp_path / "sessions"
    write_session(sessions, "/work/billing", "10000000-0000-4000-8000-000000000000", [("fix the invoice", "Fixed.")])
    long = [(f"step {n} of the invoice migration", f"step {n} done") for n in range(12)]
    write_session(sessions, "/work/billing", "20000000-0000-4000-8000-000000000000", long, day=3)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    invoke(CliRunner(), "ingest", "--no-embed", str(sessions))
    lines = invoke(CliRunner(), "forget", "billing").stdout.splitlines()
    titles = [line for line in lines if "step 0 of" in line or "fix the invoice" in line]
    assert len(titles) == 2 and titles[0].index("step 0") == titles[1].index("fix the invoice"), lines


def test_a_forget_that_matches_nothing_says_so_in_words(run: CliRunner) -> None:
    """Not '0 chunk(s) in 0 session(s) of 'acme-shop' would be deleted.'"""
    text = invoke(run, "forget", "acme-shop", "--before", "2000-01-01")
    assert text.exit_code == 0 and text.stdout.strip() == "Nothing in 'acme-shop' matches: nothing would be deleted."


def test_a_forget_by_query_that_reaches_nothing_says_how_close_the_nearest_chunk_came(run: CliRunner) -> None:
    """The default --threshold (0.6) is strict: a query that search answers well can match nothing
    here, and 'Nothing matches' alone left the user guessing whether the query or the threshold was wrong."""
    said = invoke(run, "forget", "acme-shop", "--query", "rate limiting").stdout.strip()
    head, _, hint = said.partition(" nothing would be deleted. ")
    assert head == "Nothing in 'acme-shop' matches:", said
    nearest = re.fullmatch(
        r"The query's closest chunk there is (0\.\d\d) similar: --threshold \1 would take it\.", hint
    )
    assert nearest is not None, said
    taken = invoke(run, "forget", "acme-shop", "--query", "rate limiting", "--threshold", nearest[1])
    assert taken.stdout.startswith("1 chunk in 1 session of 'acme-shop' would be deleted."), taken.stdout


def test_forget_by_query_is_refused_while_no_vectors_are_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI refuses as the MCP tool does: a meaning-match over no vectors would match nothing."""
    home = tmp_path / "no-vectors"
    with Memory(home) as memory:
        memory.ingest([EXAMPLES], embed=False)
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    refused = CliRunner().invoke(cli, ["forget", "acme-shop", "--query", "redis", "--json"])
    assert refused.exit_code == 1 and "no vectors are stored yet" in refused.output


def test_option_limits_are_the_shared_ones(run: CliRunner) -> None:
    low = int(options.MAX_TOKENS.low or 0)
    refused = invoke(run, "search", "rate limiting", "--max-tokens", str(low - 1))
    assert refused.exit_code == 2 and f"{low}<=x<={int(options.MAX_TOKENS.high or 0)}" in refused.output
    assert invoke(run, "recall", "rate limiting", "--max-tokens", str(low)).exit_code == 0


def test_a_session_id_prefix_shorter_than_the_mcp_tools_accept_is_refused(run: CliRunner) -> None:
    """A one-letter prefix picks some session at random; the MCP tools refuse it, so the CLI does too,
    before anything is shown or forgotten."""
    short = "a" * (options.SESSION_ID_MIN - 1)
    for args in (
        ("reconstruct", "acme-shop", "--session", short),
        ("reconstruct", "acme-shop", "--previous-session", "--current-session", short),
        ("forget", "acme-shop", "--session", short, "--yes"),
    ):
        refused = invoke(run, *args)
        assert refused.exit_code == 2 and f"at least {options.SESSION_ID_MIN} characters" in refused.output, args


def test_team_status_without_a_team_database_says_what_is_missing(run: CliRunner) -> None:
    """On the default SQLite backend the message names the missing URL, not a backend never chosen."""
    result = run.invoke(cli, ["team", "status"])
    assert result.exit_code != 0
    assert "No team database: storage.postgresUrl is not set" in result.output
    assert "storage.backend is 'postgres'" not in result.output


def test_hook_status_json_is_the_shape_the_mcp_tool_sends(run: CliRunner) -> None:
    record("session-start", success=True, started=time.perf_counter(), outcome="briefing of 10 characters")
    text = invoke(run, "hook", "status")
    assert text.exit_code == 0 and "session-start" in text.stdout and "briefing of 10 characters" in text.stdout
    status = as_model(invoke(run, "hook", "status", "--json"), HookStatusOut)
    assert isinstance(status, HookStatusOut) and status.hooks["session-start"].success


def test_ingest_json_reports_in_its_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "fresh"))
    text = invoke(CliRunner(), "ingest", str(EXAMPLES), "--no-embed")
    assert text.exit_code == 0 and text.stdout.startswith("Ingest summary")  # piped: no blank line left by a bar
    assert "deferred (--no-embed)" in text.stdout
    assert all(line == line.rstrip() for line in text.stdout.splitlines())  # no padding to the table's width
    again = as_model(invoke(CliRunner(), "ingest", str(EXAMPLES), "--no-embed", "--json"), IngestOut)
    assert isinstance(again, IngestOut) and again.chunks_added == 0 and again.files_unchanged == again.files
    unchanged = invoke(CliRunner(), "ingest", str(EXAMPLES), "--no-embed").stdout
    assert unchanged.startswith(f"Nothing new: {again.files} files, all unchanged since the last ingest (")
    assert "Ingest summary" not in unchanged  # not a table of zeros


def test_ingest_says_how_many_records_it_kept_with_a_value_nested_too_deep_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool payload nested 2,000 levels deep is cut, not the line skipped: the summary says so."""
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "fresh"))
    path = write_session(tmp_path / "sessions", "/work/shop", "5e0c7a1d-2b3f-4c5d-8e9f-0a1b2c3d4e5f", [("q", "a")])
    deep = b'{"a":' * 2_000 + b"1" + b"}" * 2_000
    path.write_bytes(
        path.read_bytes().replace(b'"type": "assistant"', b'"toolUseResult": ' + deep + b', "type": "assistant"')
    )
    text = invoke(CliRunner(), "ingest", str(tmp_path / "sessions"), "--no-embed")
    assert "1 record kept with a value nested deeper than 256 levels cut" in text.stdout
    again = as_model(
        invoke(CliRunner(), "ingest", str(tmp_path / "sessions"), "--no-embed", "--force", "--json"), IngestOut
    )
    assert isinstance(again, IngestOut) and again.ignored_records == {"value nested too deep, cut": 1}
    assert (again.session_count, again.skipped_lines.total) == (1, 0)


def test_stats_report_an_unusable_vector_index_and_the_rest(run: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """One behaviour for the CLI and MCP (both call Memory.stats): the counts, and why vectors are missing."""
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_MODEL", "no-such-model")
    stats = as_model(invoke(run, "stats", "--json"), StatsOut)
    assert isinstance(stats, StatsOut) and stats.chunk_count > 0 and stats.project_count == 1
    assert stats.vector_count is None and stats.vector_error and "no-such-model" in stats.vector_error
    text = invoke(run, "stats")
    assert text.exit_code == 0 and "unavailable" in text.stdout
    assert "the vector index cannot be read (Unknown embedding model 'no-such-model'" in text.stderr


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("serch", "search or serve"), ("list", "list-projects or list-sessions"), ("clusterz", "cluster or clusters")],
)
def test_a_mistyped_command_names_the_ones_meant(typed: str, meant: str) -> None:
    """The commands load lazily, so click's own suggestion had nothing to suggest from."""
    result = CliRunner().invoke(cli, [typed, "x"])
    assert result.exit_code == 2 and f"No such command '{typed}'. Did you mean {meant}?" in result.output


def test_an_unknown_command_like_no_other_gets_no_guess() -> None:
    result = CliRunner().invoke(cli, ["xyzzy"])
    assert result.exit_code == 2 and "No such command 'xyzzy'." in result.output and "Did you mean" not in result.output


@pytest.mark.parametrize(
    ("command", "flags"), [("list-sessions", ("--from", "--to")), ("forget", ("--before", "--after"))]
)
def test_date_options_read_as_date_in_help(command: str, flags: tuple[str, ...]) -> None:
    """Not ``--from [%Y-%m-%d|%Y-%m-%dT%H:%M:%S|%Y-%m-%d %H:%M:%S]``, which pushed every help line aside."""
    shown = CliRunner().invoke(cli, [command, "--help"]).output
    assert all(f"{flag} DATE " in shown for flag in flags) and "%Y" not in shown


@pytest.mark.parametrize("command", ["search", "recall"])
def test_a_search_before_any_ingest_says_memory_is_empty(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said "no vectors yet: keyword-only (… run `causantic embed`); no matching chunks"."""
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "empty"))
    said = invoke(CliRunner(), command, "how did we fix the login loop").stdout
    assert said == "Nothing relevant in memory (memory is empty: run `causantic batch-ingest` first).\n"
    scoped = invoke(CliRunner(), command, "the login loop", "--project", "acme-shop")
    assert scoped.exit_code == 1 and "memory is empty (run `causantic batch-ingest` first)" in scoped.output


def test_config_shows_values_as_config_json_spells_them(run: CliRunner) -> None:
    """A user copying a value into config.json needs null, true and [], not Python's None, True and ()."""
    rows = {line.split("│")[0].strip(): line.split("│")[1:3] for line in invoke(run, "config").stdout.splitlines()[2:]}
    assert [cell.strip() for cell in rows["storage.dbPath"]] == ["null", "null"]
    assert [cell.strip() for cell in rows["team.shareProjects"]] == ["[]", "[]"]
    assert [cell.strip() for cell in rows["promptMemory.enabled"]] == ["false", "false"]


def test_reindex_run_from_a_script_names_the_model_and_says_to_add_yes(run: CliRunner) -> None:
    """With no answer on stdin it stopped at a bare "Aborted!", as init did before it learnt to say more."""
    result = run.invoke(cli, ["reindex"], input="", catch_exceptions=False)
    assert result.exit_code == 1
    assert "Re-embed every chunk with all-minilm-l6-v2?" in result.output
    assert "add --yes to go ahead without asking" in result.output


def test_reindex_answered_no_says_nothing_was_re_embedded_and_exits_0(run: CliRunner, store_home: Path) -> None:
    """A no printed click's 'Aborted!' and exited 1, as if the command had failed; forget says
    'Nothing was deleted.' and exits 0."""
    vectors = {p.name: p.stat().st_mtime_ns for p in (store_home / "vectors").iterdir()}
    result = run.invoke(cli, ["reindex"], input="n\n", catch_exceptions=False)
    assert result.exit_code == 0 and result.output.endswith("Nothing was re-embedded.\n")
    assert "Aborted!" not in result.output
    assert {p.name: p.stat().st_mtime_ns for p in (store_home / "vectors").iterdir()} == vectors


def test_reindex_json_without_yes_re_embeds_nothing_and_says_to_add_yes(run: CliRunner, store_home: Path) -> None:
    """`reindex --json` re-embedded every chunk without asking, where `forget --json` only previews."""
    vectors = {p.name: p.stat().st_mtime_ns for p in (store_home / "vectors").iterdir()}
    refused = run.invoke(cli, ["reindex", "--json"], input="y\n", catch_exceptions=False)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "--json asks nothing: add --yes to re-embed every chunk with all-minilm-l6-v2." in refused.output
    assert {p.name: p.stat().st_mtime_ns for p in (store_home / "vectors").iterdir()} == vectors
    # scripts that pass --yes go on as before
    done = as_model(invoke(run, "reindex", "--json", "--yes"), EmbedOut)
    assert isinstance(done, EmbedOut) and done.vectors_added == done.vector_count > 0
