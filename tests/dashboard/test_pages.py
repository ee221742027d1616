"""Every page in headless Chromium, on a store ingested from real transcripts by the CLI.

Each page must load with no console error (a script error, a blocked resource, a CSP violation or
a failed request all count) and show what it is for. A screenshot of each is written under the
test's temporary folder (``screenshots/``).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from dashboard_support import BROWSER_HINT, Dashboard, causantic, console_errors, open_page, screenshot, window_size

pytest.importorskip("selenium", reason=BROWSER_HINT)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow


def _db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True)


def _text(driver: Any, css: str) -> str:
    return "\n".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, css))


def test_every_page_loads_without_a_console_error_and_shows_its_content(
    corpus_dashboard: Dashboard, chrome: Any, tmp_path: Path
) -> None:
    with _db(corpus_dashboard.home) as db:
        chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        sub_session = db.execute("SELECT session_id FROM chunks WHERE agent = 'general-purpose' LIMIT 1").fetchone()[0]
        topic_id = db.execute("SELECT id FROM clusters ORDER BY size DESC LIMIT 1").fetchone()[0]
    pages = {
        "overview": ("/", "Memory overview", [f"{chunks:,}", "session-start", "ai-music"]),
        "projects": ("/projects", "Projects", ["ai-music", "claude-history", "project"]),
        "sessions": (
            "/project?name=claude-history",
            "claude-history",
            ["read claude.md and docs/project-plan", "Claude Code"],
        ),
        "session": (
            f"/session/{sub_session}",
            "Hello I want to have some test conversation",
            ["general-purpose", "brief"],
        ),
        "search": ("/search?q=" + quote("word embeddings sound"), "Search memory", ["memory chunk", "ai-music"]),
        "recall": ("/search?kind=recall&q=" + quote("why did the ci test keep failing"), "Search memory", ["Recall:"]),
        "predict": ("/search?kind=predict&q=" + quote("create a task agent"), "Search memory", ["Predict:"]),
        "topics": ("/topics", "Topics", ["Map of memory", "topics"]),
        "topic": (f"/topics/{topic_id}", "", ["chunks"]),
        "forget": ("/forget", "Forget", ["Preview"]),
        "settings": ("/settings", "Settings", ["retrieval.mmrLambda", "default"]),
    }
    chrome.get(corpus_dashboard.url)
    console_errors(chrome)  # start each page's log empty
    for name, (path, heading, shown) in pages.items():
        chrome.get(corpus_dashboard.base + path)
        body = chrome.find_element(By.TAG_NAME, "body").text
        assert heading in _text(chrome, "h1"), (name, body[:500])
        for text in shown:
            assert text in body, (name, text, body[:1500])
        assert console_errors(chrome) == [], name
        assert screenshot(chrome, tmp_path / "screenshots", name).stat().st_size > 10_000
    # The map is drawn: dots link to sessions, labels to topics.
    chrome.get(corpus_dashboard.base + "/topics")
    assert len(chrome.find_elements(By.CSS_SELECTOR, "svg.topicmap a.pt")) >= 20
    assert chrome.find_elements(By.CSS_SELECTOR, "svg.topicmap a.lbl")


def test_search_returns_the_session_holding_the_words_and_opens_it_at_that_chunk(
    corpus_dashboard: Dashboard, chrome: Any, tmp_path: Path
) -> None:
    phrase = "Section for Conversation Revert Test"
    with _db(corpus_dashboard.home) as db:
        holders = {
            r[0]: r[1] for r in db.execute("SELECT id, session_id FROM chunks WHERE content LIKE ?", (f"%{phrase}%",))
        }
    assert len(set(holders.values())) == 1, "the phrase should name one session of the test store"
    open_page(chrome, corpus_dashboard, "/search")
    box = chrome.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    box.send_keys(phrase.lower())
    box.submit()
    WebDriverWait(chrome, 60).until(ec.presence_of_element_located((By.CSS_SELECTOR, "li.hit")))
    first = chrome.find_element(By.CSS_SELECTOR, "li.hit")
    marked = {m.text.lower() for m in first.find_elements(By.TAG_NAME, "mark")}
    assert {"revert", "conversation"} <= marked, f"matches are highlighted: {marked}"
    assert "%" in first.find_element(By.CSS_SELECTOR, ".rel").text
    assert "q=section" in chrome.current_url.lower(), "the address bar follows the partial update"
    first.find_element(By.CSS_SELECTOR, "a.sess").click()
    WebDriverWait(chrome, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, "article.chunk.target")))
    target = chrome.find_element(By.CSS_SELECTOR, "article.chunk.target")
    chunk_id = target.get_attribute("id").removeprefix("c-")
    assert chunk_id in holders
    assert f"/session/{holders[chunk_id]}" in chrome.current_url
    assert target.is_displayed()
    assert console_errors(chrome) == []
    screenshot(chrome, tmp_path / "screenshots", "search-to-session")


def test_search_filters_by_project_as_the_cli_does(corpus_dashboard: Dashboard, chrome: Any) -> None:
    open_page(chrome, corpus_dashboard, "/search?project=ai-music&q=" + quote("test file"))
    projects = {e.text for e in chrome.find_elements(By.CSS_SELECTOR, "li.hit .proj")}
    assert projects == {"ai-music"}


def test_a_link_to_a_sub_agent_chunk_opens_its_branch(corpus_dashboard: Dashboard, chrome: Any) -> None:
    with _db(corpus_dashboard.home) as db:
        chunk_id, session_id = db.execute(
            "SELECT id, session_id FROM chunks WHERE agent = 'general-purpose' LIMIT 1"
        ).fetchone()
    open_page(chrome, corpus_dashboard, f"/session/{session_id}?at={chunk_id}#c-{chunk_id}")
    target = chrome.find_element(By.ID, f"c-{chunk_id}")
    assert target.is_displayed()
    branch = chrome.find_element(By.CSS_SELECTOR, "details.branch")
    assert branch.get_attribute("open") is not None
    # Without the link, branches start folded.
    chrome.get(f"{corpus_dashboard.base}/session/{session_id}")
    assert chrome.find_element(By.CSS_SELECTOR, "details.branch").get_attribute("open") is None


def _cli_session_text(home: Path, project: str, session: str) -> str:
    """Every page of ``causantic reconstruct PROJECT --session ID``, as a user would read them."""
    pages, number = [], 1
    while True:
        pages.append(causantic(home, "reconstruct", project, "--session", session, "--page", str(number)))
        if not re.search(r"earlier chunks? not shown", pages[-1]):
            return "\n".join(pages)
        number += 1


def _tool_lines(driver: Any) -> list[str]:
    """Each tool-call line of the page as ``[Tool:Name] what``, from closed sub-agent branches too."""
    return [
        f"[Tool:{e.find_element(By.CSS_SELECTOR, '.tag').get_attribute('textContent')}] "
        + e.find_element(By.TAG_NAME, "code").get_attribute("textContent")
        for e in driver.find_elements(By.CSS_SELECTOR, "div.sec.tool")
    ]


def test_a_session_page_folds_tool_runs_and_acknowledgements_as_the_cli_does(
    corpus_dashboard: Dashboard, chrome: Any
) -> None:
    # A real session with runs of Edit, Bash and Read calls: the page shows each run as the one
    # line `causantic reconstruct` prints for it, not a line per call.
    session = "967e501d-aa48-4eab-a21f-b17058bd78f0"
    cli_text = _cli_session_text(corpus_dashboard.home, "claude-history", session[:8])
    cli_runs = sorted(ln for ln in cli_text.splitlines() if ln.startswith("[Tool:") and " ×" in ln)
    assert len(cli_runs) >= 4, "the test session should hold runs of one tool's calls"
    open_page(chrome, corpus_dashboard, f"/session/{session}")
    assert sorted(ln for ln in _tool_lines(chrome) if " ×" in ln) == cli_runs
    assert console_errors(chrome) == []

    # A session that updates its todo list 13 times: each update stays, its boilerplate result goes.
    open_page(chrome, corpus_dashboard, "/session/d3ad4cdc-5657-435d-98fa-0035d53e383d")
    assert sum(ln.startswith("[Tool:TodoWrite] ") for ln in _tool_lines(chrome)) == 13
    ack = "Todos have been modified successfully"
    assert ack not in chrome.page_source
    assert ack not in _cli_session_text(corpus_dashboard.home, "ai-music", "d3ad4cdc")


def test_a_phone_wide_window_scrolls_no_page_sideways(corpus_dashboard: Dashboard, chrome: Any) -> None:
    # At 400 px every page link stays in sight and nothing widens the page: wide tables and long
    # project names scroll inside their own box.
    open_page(chrome, corpus_dashboard, "/")
    with window_size(chrome, 400, 900):
        for path in ("/", "/projects", "/settings", "/topics", "/search?q=" + quote("fix the failing test")):
            chrome.get(corpus_dashboard.base + path)
            page, window = chrome.execute_script(
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            assert page <= window, f"{path} is {page} px wide in a {window} px window"
            for link in chrome.find_elements(By.CSS_SELECTOR, "header nav a"):
                right = chrome.execute_script("return arguments[0].getBoundingClientRect().right", link)
                assert right <= window, f"{link.text} is out of sight on {path}"


SHELL_WORDS = {"cd", "git", "ls", "la", "cat", "grep", "head", "tail", "updated", "edited", "snippet"}


def test_the_topics_page_of_real_projects_names_what_they_were_about_and_leaves_few_chunks_out(
    corpus_dashboard: Dashboard, chrome: Any
) -> None:
    """Three real projects: one of them ran every command after a `cd` into a worktree, and its topics
    were named "cd, git, branch"; half of the chunks were in no topic (HDBSCAN's noise)."""
    open_page(chrome, corpus_dashboard, "/topics")
    body = chrome.find_element(By.TAG_NAME, "body").text
    left_out = re.search(r"of [\d,]+ chunks \((\d+)%\) belong to no topic", body)
    assert left_out and int(left_out.group(1)) <= 40, body[:2000]
    rows = chrome.find_elements(By.CSS_SELECTOR, "section.list td.label a")
    labels = [row.text for row in rows]
    assert len(labels) >= 5
    words = {word for label in labels for word in label.split(", ")}
    assert not words & SHELL_WORDS, labels
    # The largest topic's own page bears the same label and lists its chunks.
    rows[0].click()
    assert _text(chrome, "h1") == labels[0]
    assert len(chrome.find_elements(By.CSS_SELECTOR, "ol.hits li.hit")) >= 5
