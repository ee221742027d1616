"""What the dashboard's pages say, read over real HTTP from the running server (no browser needed).

The store is the packaged example sessions of acme-shop: three sessions on 2026-11-02, -03 and -04.
These are the answers a demanding user checked: error pages, the search dates, the forget
preview and confirmation worded as ``causantic forget`` words them, times said in UTC, weak search
hits, and the prompt hook's recent prompts worded as ``causantic hook status`` words them.
"""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import pytest
from dashboard_support import Dashboard, _env, causantic, csrf_of, http_request, page_text, start_dashboard
from mcp import Client
from process_support import run_hook
from transcript_files import write_session

from causantic import ingest_runs
from causantic.ingest_runs import IngestProgress
from causantic.mcp.server import build_server

SAFARI_SESSION = "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec"  # the session of 2026-11-02
INVOICE_SESSION = "7a378dd6-f9b6-52f1-ad8d-dd8aa785f035"  # of 2026-11-03, with a sub-agent of one chunk


def _post(dashboard: Dashboard, path: str, **fields: str | list[str]) -> tuple[int, str]:
    form = {"csrf": csrf_of(dashboard), **fields}
    status, _, page = http_request(
        dashboard, "POST", path, headers={"Origin": dashboard.base}, body=urlencode(form, doseq=True)
    )
    return status, page


def test_an_unknown_address_gets_the_dashboards_error_page_with_its_way_back(example_dashboard: Dashboard) -> None:
    for path in ("/nothing", "/topics/abc", "/session/"):
        status, headers, page = http_request(example_dashboard, "GET", path)
        assert status == 404, path
        assert headers["content-type"].startswith("text/html"), path
        assert f"Nothing is served at {path}." in page_text(page)
        assert 'href="/projects"' in page, "the navigation is there to go on"
    status, _, page = http_request(example_dashboard, "GET", "/topics/999999")  # a link from before a recluster
    assert status == 404 and "No topic 999999" in page_text(page)
    status, _, page = http_request(example_dashboard, "GET", "/forget/preview")
    assert status == 405
    assert "open the form and submit it" in page_text(page)
    status, _, page = http_request(example_dashboard, "GET", "/project?name=no-such-project")
    assert status == 404
    assert "No project named 'no-such-project'" in page_text(page.replace("&#39;", "'"))


def test_a_session_opens_by_the_start_of_its_id_as_the_cli_takes_it(example_dashboard: Dashboard) -> None:
    """Pages, search hits and the CLI show 8 characters of a session id; typed into the address, they
    said 'No session … in memory'."""
    _, _, whole = http_request(example_dashboard, "GET", f"/session/{SAFARI_SESSION}")
    status, _, page = http_request(example_dashboard, "GET", f"/session/{SAFARI_SESSION[:8]}")
    assert status == 200, page_text(page)
    assert re.search(r"<h1.*?</h1>", page, re.S).group(0) == re.search(r"<h1.*?</h1>", whole, re.S).group(0)  # type: ignore[union-attr]
    assert SAFARI_SESSION in page
    status, _, page = http_request(example_dashboard, "GET", "/session/2a2")  # too short to pick one
    assert status == 404 and "No session '2a2' in memory" in html.unescape(page_text(page))


def test_search_from_and_to_on_one_day_finds_that_days_chunks(example_dashboard: Dashboard) -> None:
    # A date picker's To is inclusive: one day in both finds that day, not an error.
    status, _, page = http_request(
        example_dashboard, "GET", "/search?q=" + quote("invoice test") + "&from=2026-11-03&to=2026-11-03"
    )
    assert status == 200, page_text(page)
    assert f"/session/{INVOICE_SESSION}" in page
    status, _, page = http_request(example_dashboard, "GET", "/search?q=" + quote("invoice test") + "&to=2026-11-02")
    assert status == 200
    assert INVOICE_SESSION not in page, "a day before the session's keeps it out"


def test_a_search_forms_error_is_a_notice_in_the_results_not_a_page_in_a_page(example_dashboard: Dashboard) -> None:
    # The search form swaps in what the server answers (X-Partial): an error must be the notice alone.
    bad = "/search?q=invoice&from=2026-11-04&to=2026-11-02"
    status, _, part = http_request(example_dashboard, "GET", bad, headers={"X-Partial": "results"})
    assert status == 400
    assert 'class="notice error"' in part and "The To date 2026-11-02 is before the From date 2026-11-04." in part
    assert "<nav" not in part and "<html" not in part
    status, _, page = http_request(example_dashboard, "GET", bad)  # the address itself: the whole page
    assert status == 400 and "<nav" in page and "The To date 2026-11-02 is before" in page


def test_recall_given_dates_says_it_looked_at_every_date(example_dashboard: Dashboard) -> None:
    query = "/search?kind=recall&q=" + quote("safari redirect loop")
    _, _, page = http_request(example_dashboard, "GET", query + "&from=2026-11-04")
    assert "From and To filter search only: recall looked at every date." in page_text(page)
    _, _, page = http_request(example_dashboard, "GET", query)
    assert "From and To filter" not in page
    # Members are team memory's: local memory's form has no member field, and a member in the
    # address is for search alone, as dates are.
    assert 'name="member"' not in page
    _, _, page = http_request(example_dashboard, "GET", query + "&member=bob")
    assert "Member filters search only: recall looked at every member's memory." in html.unescape(page_text(page))


def test_each_recall_episode_says_how_well_it_matches_as_the_cli_says_it(example_dashboard: Dashboard) -> None:
    """Each chapter line gives its episode's best match, as recall's text does: the later ones read beside the first."""
    _, _, page = http_request(example_dashboard, "GET", "/search?kind=recall&q=" + quote("safari redirect loop"))
    chapters = re.findall(r'<li class="chapter">(.*?)</li>', page)
    assert chapters and all(re.search(r" · best match \d+%(, weakly related)?$", html.unescape(c)) for c in chapters)


def test_one_of_a_thing_is_not_counted_as_many(example_dashboard: Dashboard) -> None:
    _, _, page = http_request(example_dashboard, "GET", f"/session/{INVOICE_SESSION}")
    assert "1 chunk — sub-agent started here" in page_text(page)
    _, _, page = http_request(example_dashboard, "GET", "/search?q=REDIS_URL")
    assert "1 relevant memory chunk (" in page_text(page)  # as the CLI counts it
    _, _, page = http_request(example_dashboard, "GET", "/search?kind=recall&q=REDIS_URL")
    assert "1 episode (1 chunk, " in page_text(page)


@pytest.mark.parametrize("kind", ["search", "recall", "predict"])
def test_search_recall_and_predict_say_what_they_found_in_the_cli_s_words(
    example_dashboard: Dashboard, kind: str
) -> None:
    """The page's summary is the CLI's heading, word for word, its notes apart: it said '1 relevant
    memory chunk · keyword-only · 128 tokens' and 'Recall: 1 step · 141 tokens · 1 episode: …'."""
    heading = causantic(example_dashboard.home, kind, "REDIS_URL").splitlines()[0]
    # The text says once that its times are UTC; the page says it beside each time.
    said = heading.removeprefix("Found ").split(" — ")[0].replace("; times in UTC", "")
    _, _, page = http_request(example_dashboard, "GET", f"/search?kind={kind}&q=REDIS_URL")
    (summary,) = re.findall(r'<p class="summary">(.*?)</p>', page, re.S)
    assert page_text(html.unescape(summary)).startswith(said), (summary, heading)


def test_a_command_in_a_search_note_is_code_not_backticks(example_dashboard: Dashboard) -> None:
    # The example store has no vectors: search and recall note it and name the command that adds them.
    for kind in ("search", "recall"):
        _, _, page = http_request(example_dashboard, "GET", f"/search?kind={kind}&q=REDIS_URL")
        assert "<code>causantic embed</code>" in page, kind
        assert "`causantic embed`" not in page, kind


def test_the_overview_of_chunks_without_vectors_allows_for_a_running_ingest(example_dashboard: Dashboard) -> None:
    # Seen during an ingest: its newest chunks wait for their vectors, so "run causantic embed" alone misleads.
    _, _, page = http_request(example_dashboard, "GET", "/")
    assert "have no vector yet: a running ingest is embedding them, or run causantic embed" in page_text(page)


def test_the_overview_says_an_ingest_is_running_while_one_does(
    example_dashboard: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_runs, "WRITE_EVERY_S", 0.0)  # each count written at once
    with IngestProgress(example_dashboard.home, [Path("/data/projects")]) as progress:  # as batch-ingest keeps it
        progress.discovered(431, 0)
        progress.read(120, 0, 2310)
        _, _, page = http_request(example_dashboard, "GET", "/")
        running = f"Ingest running: 120 of 431 files, 2,310 chunks so far, started just now (pid {os.getpid()})"
        assert running in page_text(page)
    _, _, page = http_request(example_dashboard, "GET", "/")
    assert "Ingest running" not in page


def test_the_overview_counts_each_coding_agent_s_sessions_and_chunks_as_stats_does(
    example_dashboard: Dashboard,
) -> None:
    """`causantic stats` lists each coding agent's sessions and chunks; the overview did not say them."""
    sources = json.loads(causantic(example_dashboard.home, "stats", "--json"))["sources"]
    n = sources["claude-code"]
    _, _, page = http_request(example_dashboard, "GET", "/")
    said = (
        f"Coding agents Claude Code: {n['session_count']:,} sessions, {n['chunk_count']:,} chunks Agents besides main"
    )
    assert said in page_text(page)
    assert "Agents besides main 1 (Explore) " in page_text(page)  # named, as `causantic stats` names them


def test_the_overview_of_one_edge_kind_shows_no_empty_brackets(empty_dashboard: Dashboard) -> None:
    _, _, page = http_request(empty_dashboard, "GET", "/")
    assert "Edges 0 Agents" in page_text(page), "an empty memory lists no edge kinds, not '()'"


@pytest.mark.parametrize("kind", ["search", "recall", "predict"])
def test_an_answer_from_empty_memory_says_why_as_the_cli_does(empty_dashboard: Dashboard, kind: str) -> None:
    _, _, page = http_request(empty_dashboard, "GET", f"/search?kind={kind}&q=deploy")
    said = "Nothing relevant in memory (memory is empty: run causantic batch-ingest first)."
    assert said in page_text(html.unescape(page)), kind


def test_a_forget_preview_says_what_the_cli_says(example_dashboard: Dashboard) -> None:
    cli = causantic(example_dashboard.home, "forget", "acme-shop")  # not a terminal, no --yes: a preview
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' would be deleted." in cli
    status, page = _post(example_dashboard, "/forget/preview", project="acme-shop", threshold="0.6")
    assert status == 200
    assert "6 chunks in 3 sessions of the whole project acme-shop would be deleted" in page_text(page)
    # Local memory has no other members: no "Only my chunks" box, and a posted one is refused, not ignored.
    assert 'name="only_mine"' not in page
    status, page = _post(example_dashboard, "/forget/preview", project="acme-shop", only_mine="1")
    assert status == 400 and "is in local memory, where every chunk is yours" in page_text(page)

    status, page = _post(example_dashboard, "/forget/preview", project="acme-shop", before="2020-01-01")
    assert "Nothing in 'acme-shop' matches: nothing would be deleted." in page_text(page.replace("&#39;", "'"))

    # Spaces only are not "no filter" (the whole project): forget refuses them, in its own words.
    for field, says in (("query", "The query is empty"), ("session", "The session id is empty")):
        status, page = _post(example_dashboard, "/forget/preview", project="acme-shop", **{field: "   "})
        assert status == 400 and says in page_text(page), field

    status, page = _post(example_dashboard, "/forget/preview", project="acme-shop", session="7a")
    assert status == 400, "a two-character prefix could name several sessions"
    assert "at least 4 characters of the session id" in page_text(page)


def test_confirming_a_forget_twice_says_the_second_deleted_nothing(example_dashboard: Dashboard) -> None:
    fields = {"project": "acme-shop", "session": SAFARI_SESSION[:8], "threshold": "0.6"}
    _, page = _post(example_dashboard, "/forget/preview", **fields)
    ids = re.findall(r'name="id" value="([^"]+)"', page)
    assert len(ids) == 2 and "2 chunks in 1 session of acme-shop would be deleted" in page_text(page)
    _, page = _post(example_dashboard, "/forget/confirm", **fields, id=ids)
    assert "Deleted 2 chunks of acme-shop." in page_text(page)
    with sqlite3.connect(f"file:{example_dashboard.home / 'memory.db'}?mode=ro", uri=True) as db:
        assert db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 4
    _, page = _post(example_dashboard, "/forget/confirm", **fields, id=ids)  # a reload re-posts the form
    assert "Deleted 0" not in page
    assert "Nothing was deleted: the previewed chunks of acme-shop are already gone." in page_text(page)


# A time as the pages show it, alone or as a range ('2026-11-03 09:14', '09:14 – 09:20', '… – 2026-11-04 01:02').
_SHOWN_TIME = re.compile(r"(?:\d{4}-\d\d-\d\d )?\d\d:\d\d(?: – (?:\d{4}-\d\d-\d\d )?\d\d:\d\d)?")
# What sessions said (a test's frozen '2026-01-31 23:30:00' is no time the page gives).
_CHUNK_TEXT = re.compile(r'<(pre|code)\b.*?</\1>|<div class="prose">.*?</div>|<span class="line">.*?</span>', re.S)


def test_every_page_that_shows_a_time_says_it_is_utc(example_dashboard: Dashboard) -> None:
    """Stored times are UTC: a reader elsewhere must not take them for local times, on any page."""
    pages = {
        path: http_request(example_dashboard, "GET", path)[2]
        for path in (
            "/",
            "/projects",
            "/project?name=acme-shop",
            f"/session/{INVOICE_SESSION}",
            "/search?q=" + quote("invoice test"),
            "/search?kind=recall&q=" + quote("invoice test"),
        )
    }
    pages["forget preview"] = _post(example_dashboard, "/forget/preview", project="acme-shop", after="2026-11-03")[1]
    for where, page in pages.items():
        shown = page_text(_CHUNK_TEXT.sub(" ", page))
        times = list(_SHOWN_TIME.finditer(shown))
        assert times, f"{where} shows a time"
        for found in times:
            assert shown[found.end() :].startswith(" UTC"), f"{where}: {shown[found.start() : found.end() + 20]!r}"


def test_search_counts_and_marks_weak_hits_apart_as_the_cli_does(example_dashboard: Dashboard) -> None:
    """Keyword-only, 'invoice search' finds two invoice chunks near 30% and two of another session at 8%
    ('search' only): the page does not call all four relevant (tests/retrieval/test_weak_hits.py: the
    CLI and MCP). Not a session another test here forgets."""
    _, _, page = http_request(example_dashboard, "GET", "/search?q=" + quote("invoice search"))
    assert re.search(
        r"4 memory chunks \([\d,]+ tokens, keyword-only\), 2 relevant and 2 weakly related \(relevance under 10%\) ·",
        page_text(page),
    )
    hits = re.findall(r'<li class="hit( weak)?">.*?</li>', page, re.S)
    assert [bool(weak) for weak in hits] == [False, False, True, True]
    assert page.count('<span class="pill weak">weakly related</span>') == 2


# What the prompt hook did on each recent prompt reads the same in `causantic hook status`, the MCP
# `hook-status` tool and the overview (retrieval.prompt_report words it once): two real prompt-hook runs,
# one about the invoice test (2 moments of session 7a378dd6 added), a later one about the weather (none).
INVOICE = "How did we fix the invoice due date test that failed in another time zone?"
WEATHER = "What is the weather like on the moon tonight, roughly?"
HEADING = "Recent prompts (newest first): memory added or not, and why"


@pytest.fixture(scope="module")
def prompted(example_dashboard: Dashboard) -> Dashboard:
    env = {**_env(example_dashboard.home), "CAUSANTIC_PROMPT_MEMORY_ENABLED": "true"}
    env["CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES"] = "0"  # no warm process left behind
    for prompt in (INVOICE, WEATHER):
        payload = {
            "session_id": "0c0ffee0-0000-4000-8000-000000000001",
            "cwd": "/home/dev/acme-shop",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
        done, _ = run_hook("user-prompt-submit", payload, env=env)
        assert done.returncode == 0, done.stderr
    return example_dashboard


def _report(text: str) -> list[str]:
    """The recent-prompts lines, stripped of each interface's indentation."""
    lines = text.splitlines()
    start = lines.index(HEADING) + 1
    return [line.strip() for line in lines[start:] if line.strip()]


def test_cli_mcp_and_dashboard_list_every_recent_prompt_in_the_same_words(
    prompted: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the CLI wraps to the terminal; the others leave wrapping to the reader
    cli = _report(causantic(prompted.home, "hook", "status"))
    heads = [line for line in cli if " UTC, project acme-shop: " in line]
    assert [h.split(": ", 1)[1] for h in heads] == ["no memory added.", "memory added: 2 past moments."]
    moments = [line for line in cli if re.match(r"\d\. acme-shop, session 7a378dd6 \(2026-11-03\): relevance", line)]
    assert len(moments) == 2 and all("of the prompt's words" in m for m in moments)

    monkeypatch.setenv("CAUSANTIC_HOME", str(prompted.home))

    async def ask() -> Any:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return await client.call_tool("hook-status", {})

    mcp = anyio.run(ask).content[0].text
    assert _report(mcp) == cli  # both prompts, not only the last, worded alike
    assert "- user-prompt-submit: last ran" in mcp and "— no memory added" in mcp

    _, _, page = http_request(prompted, "GET", "/")
    section = page[page.index(HEADING) : page.index("</ul>", page.index(HEADING))]
    shown = [
        html.unescape(" ".join(re.sub(r"<[^>]+>", " ", div).split())) for div in re.findall(r"<div.*?</div>", section)
    ]
    assert shown == cli
    assert section.count('href="/session/7a378dd6-f9b6-52f1-ad8d-dd8aa785f035?') == 2  # each moment links its session


@pytest.fixture(scope="module")
def monorepo_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """One project of 201 sessions (one more than a timeline page holds), another of one session."""
    root = tmp_path_factory.mktemp("monorepo")
    for n in range(201):
        turn = [(f"task number {n}", f"Done with task {n}.")]
        write_session(root / "projects", "/work/monorepo", f"dddd{n:04d}-0000-4000-8000-000000000000", turn, 1 + n % 28)
    write_session(root / "projects", "/work/tiny", "eeee0000-0000-4000-8000-000000000000", [("hello", "Hi.")])
    causantic(root / "home", "ingest", str(root / "projects"), "--no-embed")
    dashboard = start_dashboard(root / "home")
    try:
        yield dashboard
    finally:
        dashboard.stop()


def test_a_project_s_older_sessions_are_a_page_away(monorepo_dashboard: Dashboard) -> None:
    """The timeline showed the newest 200 sessions and said '200 of 201': the oldest had no page."""
    _, _, page = http_request(monorepo_dashboard, "GET", "/project?name=monorepo")
    assert "Sessions 1–200 of 201, newest first." in page_text(page)
    older = re.search(r'<a href="([^"]+)" rel="next">Older sessions →</a>', page)
    assert older, page_text(page)
    status, _, page = http_request(monorepo_dashboard, "GET", html.unescape(older.group(1)))
    assert status == 200 and "Sessions 201–201 of 201, newest first." in page_text(page)
    assert page.count('<li class="entry">') == 1 and 'rel="next"' not in page and "← Newer sessions" in page
    status, _, page = http_request(monorepo_dashboard, "GET", "/project?name=monorepo&page=3")
    assert status == 400 and "Page 3 is past the last: monorepo has 201 sessions, 2 pages of 200." in page_text(page)
    status, _, page = http_request(monorepo_dashboard, "GET", "/project?name=monorepo&page=two")
    assert status == 400 and "is not a page number" in page_text(page) and "Traceback" not in page


def test_a_project_of_one_session_says_1_session(monorepo_dashboard: Dashboard) -> None:
    _, _, page = http_request(monorepo_dashboard, "GET", "/project?name=tiny")
    assert "1 session." in page_text(page) and "1 sessions" not in page_text(page)
