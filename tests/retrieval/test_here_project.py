"""Asked without a project filter from inside a project (the CLI's working directory, the MCP
server's), memory's answer leads with that project's own history: on the whole Claude Code corpus
22% of the coding dev questions led with another project's session, 15% asked from the project
(benchmarks/relevance_floor.py --large). Another project's clearly better answer still leads: the
working directory weighs, it does not filter."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from cli_runs import cli_stdout
from mcp import Client
from transcript_files import write_session

from causantic import Memory
from causantic.mcp.server import build_server
from causantic.retrieval.format import render_episodes, render_search

QUERY = "how did we fix the flaky login test"
# Two projects fixed a flaky login test; the blog's session words it a little closer to the question.
SHOP_FIX = [
    ("the login test is flaky on CI again", "It races the session cookie; I'll wait for the cookie first."),
    ("did that fix it", "Yes: the login test passed twenty runs in a row."),
]
BLOG_FIX = [
    ("the flaky login test fails on CI", "It races the session cookie; the fix waits for the cookie."),
    ("is the login test fixed", "Yes, it passed twenty runs in a row."),
]
# Only the blog ever set up its RSS feed: asked from the shop, the blog's answer is still the answer.
BLOG_FEED = [("add an RSS feed to the blog", "Added /feed.xml with the last twenty posts, built at deploy.")]


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The home, and the shop's and the blog's folders (real folders, so one can be the cwd)."""
    root = tmp_path_factory.mktemp("here")
    shop, blog = root / "shop", root / "blog"
    shop.mkdir()
    blog.mkdir()
    sessions = root / "sessions"
    write_session(sessions, str(shop), "shop-login", SHOP_FIX)
    write_session(sessions, str(blog), "blog-login", BLOG_FIX)
    write_session(sessions, str(blog), "blog-feed", BLOG_FEED, day=3)
    with Memory(root / "home") as memory:
        memory.ingest([sessions])
    return root / "home", shop, blog


def first_session(home: Path, query: str, here: Path | None) -> str:
    with Memory(home) as memory:
        return memory.search(query, here=str(here) if here else None).hits[0].chunk.session_id


def test_a_question_asked_from_a_project_leads_with_that_projects_history(projects: tuple[Path, Path, Path]) -> None:
    home, shop, blog = projects
    assert first_session(home, QUERY, None) == "blog-login"  # asked from nowhere: the closer wording wins
    assert first_session(home, QUERY, shop) == "shop-login"
    assert first_session(home, QUERY, blog) == "blog-login"


def test_another_projects_match_ranked_below_keeps_its_own_figure_and_is_explained(
    projects: tuple[Path, Path, Path],
) -> None:
    home, shop, _ = projects
    with Memory(home) as memory:
        result = memory.search(QUERY, here=str(shop))
    shown: dict[str, float] = {}  # each session's first hit, as shown
    for hit, figure in zip(result.hits, result.shown_relevance, strict=True):
        shown.setdefault(hit.chunk.session_id, figure)
    best_blog = max(h.relevance for h in result.hits if h.chunk.session_id == "blog-login")
    assert shown["blog-login"] == best_blog > shown["shop-login"]  # not pulled down to the shop's figure
    note = "asked from shop: its own matches placed above other projects' higher-scoring ones"
    assert note in result.notes
    assert note in render_search(result).splitlines()[0]


def test_another_projects_clearly_better_answer_still_leads(projects: tuple[Path, Path, Path]) -> None:
    home, shop, _ = projects
    assert first_session(home, "how did we add the RSS feed", shop) == "blog-feed"


def test_the_cli_asks_from_its_working_directory(
    projects: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, shop, _ = projects
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    monkeypatch.chdir(shop)
    hits = json.loads(cli_stdout("search", QUERY, "--json"))["hits"]
    assert hits[0]["session_id"] == "shop-login"
    monkeypatch.chdir(home.parent)  # a folder of no project: the closer wording leads again
    assert json.loads(cli_stdout("search", QUERY, "--json"))["hits"][0]["session_id"] == "blog-login"


def test_the_mcp_server_asks_from_the_folder_it_was_started_in(
    projects: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, shop, _ = projects
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))

    async def first(here: Path | None) -> str:
        async with Client(build_server(warm=False, here=str(here) if here else None), mode="legacy") as client:
            result = await client.call_tool("search", {"query": QUERY})
        return re.findall(r"\| Session: ([^ |\]]+)", result.content[0].text)[0]  # the first hit's header

    assert anyio.run(first, shop) == "shop-login"[:8]  # the text names a session by its first 8 characters
    assert anyio.run(first, None) == "blog-login"[:8]


def test_an_answer_told_only_from_another_project_does_not_say_the_askers_matches_were_placed_first(
    tmp_path: Path,
) -> None:
    """Search places the shop's weak match above the blog's higher-scoring one and says so; recall,
    whose story is all the blog's, said it too, over an answer holding nothing of the shop."""
    shop, blog, sessions = tmp_path / "shop", tmp_path / "blog", tmp_path / "sessions"
    shop.mkdir()
    blog.mkdir()
    orders = [
        ("the orders feed on the admin page is slow", "I added an index on orders.created; the feed loads in 80 ms.")
    ]
    write_session(sessions, str(shop), "shop-orders", orders)
    write_session(sessions, str(shop), "shop-login", SHOP_FIX[:1], day=2)
    write_session(sessions, str(blog), "blog-feed", BLOG_FEED, day=3)
    draft = [
        (
            "draft a post about our deploy pipeline",
            "Drafted posts/deploy-pipeline.md; it joins the feed at the next deploy.",
        )
    ]
    write_session(sessions, str(blog), "blog-draft", draft, day=4)
    query, note = "how is the feed built", "asked from shop: its own matches placed above"
    with Memory(tmp_path / "home") as memory:
        memory.ingest([sessions])
        found = memory.search(query, here=str(shop))
        answers = [memory.recall(query, here=str(shop)), memory.predict(query, here=str(shop))]
    assert any(n.startswith(note) for n in found.notes)  # the search's list holds the shop's match
    for answer in answers:
        assert {e.chunks[0].chunk.project for e in answer.episodes} == {"blog"}, answer.kind
        assert note not in render_episodes(answer).splitlines()[0], answer.kind


def test_an_answer_kept_to_a_project_that_holds_nothing_relevant_names_the_projects_that_do(
    projects: tuple[Path, Path, Path],
) -> None:
    """Kept to the working directory's project (as an agent passes it), a question about another
    project's work got weakly related matches or nothing, and no word that another project held it."""
    home, shop, blog = projects
    query = "how did we add the RSS feed"
    with Memory(home) as memory:
        kept = [
            render_search(memory.search(query, project=str(shop))),
            render_episodes(memory.recall(query, project=str(shop))),
            render_episodes(memory.predict(query, project="shop")),
        ]
        there = render_episodes(memory.recall(query, project=str(blog)))
    for answer in kept:
        heading = answer.splitlines()[0]
        assert re.search(
            r"relevant matches in other projects: blog \(\d\d%\); ask without project to see them", heading
        )
    assert "other projects" not in there.splitlines()[0]
