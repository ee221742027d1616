"""The MCP tools in-process (the SDK's in-memory client): behaviours that change the store or need
their own setup, and one run with real vectors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tool_answers import hit_headers, text
from transcript_files import write_session

from causantic.mcp.server import build_server


def call_all(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """Run tool calls in order on one fresh in-process server; returns their results."""

    async def run() -> list[Any]:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def test_forget_deletes_a_session_only_when_dry_run_is_false(memory: Path) -> None:
    session = {"project": "acme-shop", "session": "4005b823"}
    preview, refused, deleted, search, listing = call_all(
        ("forget", session),
        ("forget", {**session, "dry_run": False}),  # no count previewed: refused, nothing deleted
        ("forget", {**session, "dry_run": False, "expected_count": 2}),
        ("search", {"query": "REDIS_URL rate limiting", "project": "acme-shop"}),
        ("list-sessions", {"project": "acme-shop"}),
    )
    assert text(preview).startswith("Dry run: 2 chunks in 1 session would be deleted")
    assert refused.is_error and "needs expected_count" in text(refused)
    assert text(deleted).startswith("Deleted 2 chunks")
    assert all(h["Session"] != "4005b823" for h in hit_headers(text(search)))
    assert "(2 of 2, newest first; times in UTC)" in text(listing) and "4005b823" not in text(listing)


def test_reconstruct_by_time_range_and_by_session(memory: Path) -> None:
    ranged, one = call_all(
        ("reconstruct", {"project": "acme-shop", "from": "2026-11-03", "to": "2026-11-04"}),
        ("reconstruct", {"project": "/home/dev/acme-shop", "session": "2a2ee33e"}),
    )
    assert "7a378dd6" in text(ranged) and "2a2ee33e" not in text(ranged) and "4005b823" not in text(ranged)
    assert "2a2ee33e" in text(one) and "7a378dd6" not in text(one)
    assert "Safari" in text(one)


def test_previous_session_defaults_to_the_servers_claude_code_session(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "7a378dd6-f9b6-52f1-ad8d-dd8aa785f035")
    (result,) = call_all(("reconstruct", {"project": "acme-shop", "previous_session": True}))
    assert "2a2ee33e" in text(result) and "7a378dd6" not in text(result)


def test_answers_stay_within_the_token_budget(memory: Path) -> None:
    results = call_all(
        ("search", {"query": "recorder audio worklet", "max_tokens": 1000}),
        ("reconstruct", {"project": "JSSoundRecorder", "full": True, "max_tokens": 1000}),
        ("recall", {"query": "recorder audio worklet", "max_tokens": 1000}),
    )
    for result in results:
        assert not result.is_error, text(result)
        assert 0 < len(text(result)) / 3.5 <= 1000 * 1.2  # headers on top of the chunks' budget
    assert "page=2" in text(results[1])  # what did not fit is a page away


def test_search_filters_by_agent(memory: Path) -> None:
    (result,) = call_all(("search", {"query": "billing date timezone", "agent": "Explore"}))
    hits = hit_headers(text(result))
    assert hits and {h["Agent"] for h in hits} == {"Explore"}


def test_a_store_error_reaches_the_model_as_a_tool_error(memory: Path) -> None:
    """A project name that matches two projects is the model's to fix: the message says how."""
    (result,) = call_all(("list-sessions", {"project": "o"}))
    assert result.is_error
    assert "No project named 'o'" in text(result) or "matches several projects" in text(result)


@pytest.mark.slow
def test_with_real_vectors_search_runs_hybrid_and_forget_matches_by_meaning(
    causantic_home: Path, corpus_dir: Path
) -> None:
    from process_support import EXAMPLES

    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:
        report = ingest_paths(services, [EXAMPLES], embed=True, workers=1)
    assert report.vectors_added == 6
    search, forget = call_all(
        ("search", {"query": "browser keeps bouncing between sign-in and home page", "project": "acme-shop"}),
        (
            "forget",
            {"project": "acme-shop", "query": "Redis connection string for the limiter", "threshold": 0.3},
        ),
    )
    assert "hybrid" in text(search).splitlines()[0]
    assert "Safari" in text(search).split("\n\n---\n\n")[0]
    assert text(forget).startswith("Dry run: ")
    assert "REDIS_URL" in text(forget) or "rate limiting" in text(forget)


def test_search_narrows_to_one_coding_agent_and_stats_count_each(memory: Path, agents_corpus: Path) -> None:
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:  # Codex and Gemini sessions beside the Claude Code ones
        ingest_paths(services, [agents_corpus / "codex", agents_corpus / "gemini"], embed=False, workers=1)
    both, codex, gemini, stats = call_all(
        ("search", {"query": "readme file test", "limit": 50}),
        ("search", {"query": "readme file test", "source": "codex", "limit": 50}),
        ("search", {"query": "readme file test", "source": "gemini", "limit": 50}),
        ("stats", {}),
    )
    assert len({h["Source"] for h in hit_headers(text(both))}) > 1
    codex_hits, gemini_hits = hit_headers(text(codex)), hit_headers(text(gemini))
    assert codex_hits and {h["Source"] for h in codex_hits} == {"codex"}
    assert gemini_hits and {h["Source"] for h in gemini_hits} == {"gemini"}
    assert "  - codex: 11 sessions, 243 chunks\n  - gemini: 11 sessions, 21 chunks" in text(stats)
    assert "  - claude-code: " in text(stats)


def test_forget_with_no_filter_previews_a_whole_project_and_deletes_only_the_previewed_count(memory: Path) -> None:
    project = {"project": "acme-shop"}
    preview, refused, deleted, projects = call_all(
        ("forget", project),
        ("forget", {**project, "dry_run": False}),
        ("forget", {**project, "dry_run": False, "expected_count": 6}),
        ("list-projects", {}),
    )
    titles = [line.split("): ", 1)[1][:24] for line in text(preview).splitlines() if line.startswith("  - ")]
    assert text(preview).startswith("Dry run: 6 chunks in 3 sessions would be deleted from the whole project")
    assert titles == ["Let's add rate limiting ", "The invoice test `test_i", "After logging in, users "]
    assert "expected_count=6" in text(preview)
    assert refused.is_error and "needs expected_count" in text(refused)
    assert text(deleted).startswith("Deleted 6 chunks")
    assert "acme-shop" not in text(projects)


def test_a_whole_project_preview_counts_a_one_chunk_session_as_1_chunk(tmp_path: Path) -> None:
    """Its session line read "(2026-11-02, 1 chunks)"."""
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    transcript = write_session(tmp_path, "/home/dev/tiny", "5e55a0aa-0000-4000-8000-000000000001", [("hi", "hello")])
    with open_services() as services:
        ingest_paths(services, [transcript], embed=False, workers=1)
    (preview,) = call_all(("forget", {"project": "tiny"}))
    assert "  - 5e55a0aa (2026-11-02, 1 chunk): hi" in text(preview)


def test_list_projects_reads_as_english_with_one_date_for_a_single_day(memory: Path) -> None:
    """An agent reads '1 session, 2026-11-03', not '1 sessions, 2026-11-03 – 2026-11-03'."""
    (listing,) = call_all(("list-projects", {}))
    from causantic.facade import Memory

    with Memory() as memory:
        projects = memory.projects()
    lines = text(listing).splitlines()[1:]
    assert len(lines) == len(projects) and any(p.sessions == 1 for p in projects)
    for line, project in zip(lines, projects, strict=True):
        sessions = project.sessions
        assert f", {sessions} session{'' if sessions == 1 else 's'}, " in line
        first, last = project.first_seen[:10], project.last_seen[:10]
        assert (f", {first}) " in line) if first == last else (f", {first} – {last}) " in line)


def test_bad_arguments_are_named_in_one_line_without_pydantics_report(memory: Path) -> None:
    """It read '1 validation error for searchArguments / query / Field required [type=missing,
    input_value={}, input_type=dict] / For further information visit https://errors.pydantic.dev/…'."""
    missing, wrong = call_all(
        ("search", {}), ("search", {"query": "rate limiting", "limit": "ten", "source": "windsurf"})
    )
    assert missing.is_error and text(missing) == "Error executing tool search: invalid arguments: query is required."
    assert wrong.is_error and text(wrong).startswith("Error executing tool search: invalid arguments: ")
    assert "limit: Input should be a valid integer" in text(wrong)
    assert "source: Input should be 'claude-code', 'codex', 'gemini', 'copilot', 'cursor', 'droid' or 'pi'" in text(
        wrong
    )
    assert all(noise not in text(wrong) for noise in ("input_value", "pydantic", "\n"))


def test_a_forget_that_matches_nothing_says_so_in_words(memory: Path) -> None:
    (preview,) = call_all(("forget", {"project": "acme-shop", "before": "2000-01-01T00:00:00"}))
    assert text(preview) == "Nothing in 'acme-shop' matches: nothing would be deleted."


def test_an_unknown_project_names_the_known_ones_and_the_tool_that_lists_them(memory: Path) -> None:
    """It told the model to 'Run `causantic list-projects`', a command line it may not have."""
    listing, unknown = call_all(("list-projects", {}), ("search", {"query": "redirect", "project": "no-such-app"}))
    names = [line[2:].split(" (")[0] for line in text(listing).splitlines()[1:]]
    assert unknown.is_error and "`causantic" not in text(unknown)
    assert text(unknown).endswith(f"(known: {', '.join(names[:10])}; list-projects shows each with its path).")


def test_a_folder_inside_a_project_names_it_even_when_it_is_not_on_this_machine(memory: Path) -> None:
    """An agent passes its cwd; the project's folder held no git checkout here, so a subfolder was
    'No project named …' (only the folder itself, or a git checkout's subfolder, named it)."""
    search, sessions = call_all(
        ("search", {"query": "Safari redirect loop", "project": "/home/dev/acme-shop/src/auth"}),
        ("list-sessions", {"project": "/home/dev/acme-shop/src/auth/"}),
    )
    assert not search.is_error, text(search)
    assert {h["Project"] for h in hit_headers(text(search))} == {"acme-shop"}
    assert text(sessions).startswith("Sessions of acme-shop (3 of 3, newest first; times in UTC)")


def test_a_new_project_under_home_is_not_taken_for_sessions_run_in_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions started in the home folder make a project of it; a cwd in a new project below home
    has no memory yet, and must not get home's sessions as its own."""
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    monkeypatch.setenv("HOME", "/home/dana")
    transcript = write_session(
        tmp_path, "/home/dana", "5e55a0aa-0000-4000-8000-000000000002", [("tidy the dotfiles", "done")]
    )
    with open_services() as services:
        ingest_paths(services, [transcript], embed=False, workers=1)
    home, below = call_all(
        ("search", {"query": "dotfiles", "project": "/home/dana"}),
        ("search", {"query": "dotfiles", "project": "/home/dana/src/newapp"}),
    )
    assert hit_headers(text(home))
    assert not below.is_error and text(below).startswith("Nothing in memory for /home/dana/src/newapp yet")


def test_a_new_projects_folder_is_answered_plainly_not_as_an_error(memory: Path) -> None:
    """An agent in a project memory has never seen passes its cwd: it got an error, 'No project named
    '/home/dev/new-app' in memory (known: …)', for what is simply an empty memory of that project."""
    calls = [
        ("search", {"query": "redirect", "project": "/home/dev/new-app"}),
        ("recall", {"query": "redirect", "project": "/home/dev/new-app/src"}),
        ("reconstruct", {"project": "/home/dev/new-app", "days_back": 1}),
        ("list-sessions", {"project": "/home/dev/new-app"}),
    ]
    answers = call_all(*calls)
    for result in answers:
        assert not result.is_error, text(result)
        assert text(result).startswith("Nothing in memory for /home/dev/new-app")
        assert "yet: its sessions are remembered once ingested (known projects: acme-shop" in text(result)


def test_a_misspelt_project_name_is_an_error_naming_the_nearest_project(memory: Path) -> None:
    (typo,) = call_all(("search", {"query": "redirect", "project": "acme-shpo"}))
    assert typo.is_error and "No project named 'acme-shpo' in memory: did you mean acme-shop?" in text(typo)


def test_a_time_range_with_no_session_says_when_the_newest_one_was(memory: Path) -> None:
    """An agent asked for last week of a project idle for a month read only "No session data found
    for project 'acme-shop' in the requested range" (list-sessions: "No sessions found …"), and had
    to guess how far back to look."""
    for tool, arguments in [
        ("reconstruct", {"project": "acme-shop", "from": "2030-01-01"}),
        ("reconstruct", {"project": "acme-shop", "from": "2030-01-01", "full": True}),
    ]:
        (result,) = call_all((tool, arguments))
        assert text(result) == (
            "No session of 'acme-shop' in the requested range; its newest session started 2026-11-04 10:30 UTC."
        )
    (listed,) = call_all(("list-sessions", {"project": "acme-shop", "from": "2030-01-01"}))
    assert text(listed) == "No session of 'acme-shop' in that range; its newest session started 2026-11-04 10:30 UTC."


def test_reconstruct_refuses_days_back_beside_a_start_as_search_and_list_sessions_do(memory: Path) -> None:
    """reconstruct kept the start and dropped days_back without a word."""
    both = {"project": "acme-shop", "days_back": 3, "from": "2026-11-01"}
    results = call_all(("reconstruct", both), ("list-sessions", both), ("search", {"query": "redis", **both}))
    for result in results:
        assert result.is_error and "Give either days back or a start time, not both." in text(result)


def test_an_answer_stays_within_what_claude_code_hands_the_model_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """max_tokens took up to 100,000 (and tokens.mcpMaxResponse any size): a session read whole came
    back as some 90,000 characters, which Claude Code puts in a file (over 50,000), handing the model
    a path and a preview. Now a bigger budget is refused, naming the largest, and a configured one is
    held to it."""
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    words = "the retry queue drains the webhook backlog before the nightly billing export runs; "
    turns = [(f"step {n}: {words * 6}", f"done {n}: {words * 6}") for n in range(90)]
    transcript = write_session(tmp_path, "/home/dev/long-app", "10a9e000-0000-4000-8000-000000000001", turns)
    with open_services() as services:
        ingest_paths(services, [transcript], embed=False, workers=1)
    monkeypatch.setenv("CAUSANTIC_TOKENS_MCP_MAX_RESPONSE", "40000")
    read, refused = call_all(
        ("reconstruct", {"project": "long-app", "session": "10a9e000"}),
        ("search", {"query": "webhook backlog", "max_tokens": 30_000}),
    )
    assert not read.is_error and 30_000 < len(text(read)) < 50_000, len(text(read))
    assert refused.is_error and "max_tokens: Input should be less than or equal to 12000" in text(refused)


def test_a_lower_max_mcp_output_tokens_lowers_the_largest_budget() -> None:
    """Claude Code cuts a result beyond MAX_MCP_OUTPUT_TOKENS (its model's tokens, up to 1.4 of ours)."""
    from causantic.mcp.tools import token_ceiling

    assert token_ceiling({}) == token_ceiling({"MAX_MCP_OUTPUT_TOKENS": "50000"}) == 12_000
    assert token_ceiling({"MAX_MCP_OUTPUT_TOKENS": "7000"}) == 5_000
    assert token_ceiling({"MAX_MCP_OUTPUT_TOKENS": "10"}) == 100


def test_an_argument_a_tool_does_not_take_is_refused_naming_the_nearest(memory: Path) -> None:
    """pydantic ignored it: `days: 3` listed every session, as if no range were asked for, and the
    old `keep_newest: false` (now keep_oldest) kept the newest."""
    days, renamed = call_all(
        ("reconstruct", {"project": "acme-shop", "days": 3}),
        ("reconstruct", {"project": "acme-shop", "session": "2a2ee33e", "keep_newest": False}),
    )
    assert days.is_error and "days is not an argument of reconstruct (did you mean days_back?)" in text(days)
    assert renamed.is_error and "(keep_oldest=true is its keep_newest=false)" in text(renamed)


def test_every_answer_that_gives_times_says_once_that_they_are_utc(memory: Path) -> None:
    """Search's and recall's headings gave '2026-11-03 10:12' with no zone: a reader in another zone
    took stored UTC times for local ones. Each answer now says it once, not beside every time."""
    answers = call_all(
        ("search", {"query": "REDIS_URL rate limiting"}),
        ("recall", {"query": "REDIS_URL rate limiting"}),
        ("predict", {"context": "REDIS_URL rate limiting"}),
        ("reconstruct", {"project": "acme-shop"}),
        ("reconstruct", {"project": "acme-shop", "full": True}),
        ("list-sessions", {"project": "acme-shop"}),
    )
    for answer in answers:
        said = text(answer)
        assert re.search(r"\d\d:\d\d", said), said[:300]  # it gives times
        assert said.count("times in UTC") == 1 and "times in UTC" in said.split("\n", 1)[0], said[:300]


def test_every_answer_that_gives_dates_alone_says_once_that_they_are_utc(memory: Path) -> None:
    """list-projects, stats' projects and forget's preview gave '2026-11-03' with no zone, where
    answers with times say 'times in UTC': a day in UTC is not always the reader's day."""
    answers = call_all(
        ("list-projects", {}),
        ("stats", {}),
        ("forget", {"project": "acme-shop", "before": "2030-01-01", "dry_run": True}),
        ("forget", {"project": "acme-shop", "dry_run": True}),
    )
    for answer in answers:
        said = text(answer)
        day = re.search(r"[( ]\d{4}-\d\d-\d\d[,)]", said)
        assert day, said[:300]  # it gives dates
        assert said.count("dates in UTC") == 1, said[:300]
        assert said.index("dates in UTC") < day.start(), said[:300]  # said above the dates, not after them


def test_stats_names_the_agents_besides_main(causantic_home: Path) -> None:
    """'- Agents besides main: 1' said not which agent (the example sessions have an Explore sub-agent)."""
    from process_support import EXAMPLES

    from causantic.facade import Memory

    with Memory() as memory:
        memory.ingest([EXAMPLES], embed=False)
    (stats,) = call_all(("stats", {}))
    assert "- Agents besides main: 1: Explore\n" in text(stats), text(stats)


def test_stats_writes_its_counts_as_the_lines_beside_them_do(causantic_home: Path, tmp_path: Path) -> None:
    """'- Chunks: 1200' stood above '- claude-code: 1 session, 1,200 chunks'."""
    from causantic.facade import Memory

    turns = [(f"question {n} about the billing cron " * 20, f"answer {n} with its details " * 40) for n in range(600)]
    write_session(tmp_path / "projects", "/work/billing", "aaaaaaaa-0000-4000-8000-000000000000", turns)
    with Memory() as memory:
        chunks = memory.ingest([tmp_path / "projects"], embed=False).chunks_added
    assert chunks >= 1000  # else no count needs a separator
    (stats,) = call_all(("stats", {}))
    said = text(stats)
    assert f"- Chunks: {chunks:,}\n" in said and f"1 session, {chunks:,} chunks" in said, said
    assert re.search(r"^  - within-chain: \d{1,3},\d{3}$", said, re.MULTILINE), said


def test_stats_says_topics_are_off_as_the_cli_does(causantic_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without scikit-learn (the optional topics extra) the CLI's stats said what to install, and the MCP
    stats only 'Clusters: 0': an agent could not tell a user why their memory has no topics."""
    from process_support import EXAMPLES

    import causantic.cluster
    from causantic.facade import Memory

    with Memory() as memory:
        memory.ingest([EXAMPLES], embed=False)
    monkeypatch.setattr(causantic.cluster, "topics_available", lambda: False)  # as without the extra
    (off,) = call_all(("stats", {}))
    assert f"\n\nNote: {causantic.cluster.TOPICS_HINT}" in text(off), text(off)
    monkeypatch.setattr(causantic.cluster, "topics_available", lambda: True)
    (on,) = call_all(("stats", {}))
    assert "scikit-learn" not in text(on)


def test_each_answering_tool_names_its_own_default_budget() -> None:
    """recall's max_tokens said "default 10000; recall and predict 2500": the agent reading recall's
    schema had to work out which of the two was recall's."""

    async def listed() -> dict[str, str]:
        async with Client(build_server(warm=False), mode="legacy") as client:
            tools = (await client.list_tools()).tools
        fields = {t.name: t.input_schema["properties"] for t in tools}
        return {name: field["max_tokens"]["description"] for name, field in fields.items() if "max_tokens" in field}

    assert {name: re.findall(r"default \d+", help) for name, help in anyio.run(listed).items()} == {
        "search": ["default 10000"],
        "reconstruct": ["default 10000"],
        "recall": ["default 2500"],
        "predict": ["default 2500"],
    }


def test_the_search_tools_description_gives_the_measured_figures() -> None:
    """The description said a right hit "usually reads 5-60%, an off-topic one under 1%" yet called
    anything under 10% weakly related: the agent reading it could not tell what a 7% hit is. Its
    figures are the ones docs/measurements.md records (benchmarks/relevance_floor.py)."""
    from causantic.retrieval.format import WEAK_RELEVANCE

    async def described() -> str:
        async with Client(build_server(warm=False), mode="legacy") as client:
            tools = (await client.list_tools()).tools
        return " ".join(next(t.description for t in tools if t.name == "search").split())

    said = anyio.run(described)
    measured = " ".join((Path(__file__).resolve().parents[2] / "docs" / "measurements.md").read_text("utf-8").split())
    recorded = re.search(
        r"a right hit's median figure is (\d+)% \(p10[–-]p90 (\d+)[–-](\d+)%; an off-topic hit that still shows "
        r"reads (\d+)[–-](\d+)%\)",
        measured,
    )
    assert recorded is not None
    median, low, high, off_low, off_high = recorded.groups()
    assert f"a right hit usually reads {low}-{high}%, median {median}%" in said, said
    assert f"an off-topic one that still shows {off_low}-{off_high}%" in said, said
    assert f'Under {WEAK_RELEVANCE:.0%} is marked "weakly related"' in said, said
