"""Kept to a project (project=, as an agent passes its working directory) that holds nothing
relevant while another project does, an answer names that project and tells little of its own weak
matches: the review's recall kept to claude-code-log, asked about another project's fix, named it
(73%) and still spent 2,400 tokens on weakly related episodes of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.episodes import episodes_body
from causantic.retrieval.format import render_episodes

QUERY = "how did we add the RSS feed to the blog"
# The shop's sessions mention a feed in passing, at length: weak matches that fill a budget.
CHATTER = " ".join(
    f"Step {n}: the admin page lists orders from the orders table, paged by fifty, sorted by date." for n in range(40)
)
SHOP = {
    f"shop-{name}": [("good morning", "Morning."), (f"the orders feed on the {name} page is slow", CHATTER)] * 3
    for name in ("admin", "report", "export")
}
BLOG_FEED = [("add an RSS feed to the blog", "Added /feed.xml with the last twenty posts, built at deploy.")]


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("elsewhere")
    shop, blog = root / "shop", root / "blog"
    shop.mkdir()
    blog.mkdir()
    sessions = root / "sessions"
    for day, (session, turns) in enumerate(SHOP.items(), start=2):
        write_session(sessions, str(shop), session, turns, day=day)
    write_session(sessions, str(blog), "blog-feed", BLOG_FEED, day=6)
    with Memory(root / "home") as memory:
        memory.ingest([sessions])
    return root / "home", shop


@pytest.mark.parametrize("kind", ["recall", "predict"])
def test_an_answer_kept_to_a_project_holding_nothing_relevant_tells_little_of_it(
    projects: tuple[Path, Path], kind: str
) -> None:
    home, shop = projects
    with Memory(home) as memory:
        wide = getattr(memory, kind)(QUERY, project=str(shop), max_tokens=2_500)
    with Memory(home, overrides={"episodes.elsewhereTokens": "0"}) as memory:
        bare = getattr(memory, kind)(QUERY, project=str(shop))
    heading = render_episodes(wide).splitlines()[0]
    assert "relevant matches in other projects: blog (" in heading
    assert "weakly related episode" in heading  # its best weak match, marked
    assert len(wide.episodes) == 1 and 0 < approx_tokens(episodes_body(wide)) <= 300
    assert render_episodes(bare).startswith("Nothing relevant") and not bare.episodes
    assert "relevant matches in other projects: blog (" in render_episodes(bare)
