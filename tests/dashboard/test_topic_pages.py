"""The topics page as a person reads it, in headless Chromium: it says how many chunks belong to no
topic, a topic's size stays in sight beside its label at 400 px, and the labels on the map lie inside
the map. The store holds two topics named by long identifiers (what real code topics are often
called), at the two ends of the map, and a few turns that fit neither."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from dashboard_support import BROWSER_HINT, Dashboard, causantic, start_dashboard
from transcript_files import write_session

pytest.importorskip("selenium", reason=BROWSER_HINT)
from selenium.webdriver.common.by import By  # noqa: E402

pytestmark = pytest.mark.slow

# Two close topics (both about signing in): they part late, after the odd turns fell out as noise.
# Their words are the same but for a verb and a file name: the file name is in the label.
LOGIN = [
    (f"Why is the auth cookie dropped by refresh_token_rotation_handler.ts ({n})?", f"Fixed the auth cookie ({n}).")
    for n in range(8)
]
LOGOUT = [
    (f"Why is the auth cookie kept by session_cookie_expiry_middleware.ts ({n})?", f"Fixed the auth cookie ({n}).")
    for n in range(8)
]
ODD = [("What is the capital of Mongolia?", "Ulaanbaatar."), ("Sing me a sea shanty", "Soon may the Wellerman come.")]


@pytest.fixture(scope="module")
def topics_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    root = tmp_path_factory.mktemp("topic-pages")
    write_session(root / "projects", "/work/webapp", "bbbbbbbb-0000-4000-8000-000000000001", LOGIN + ODD)
    write_session(root / "projects", "/work/accounts", "bbbbbbbb-0000-4000-8000-000000000002", LOGOUT)
    home = root / "home"
    causantic(home, "batch-ingest", str(root / "projects"))
    causantic(home, "cluster")
    dashboard = start_dashboard(home)
    try:
        yield dashboard
    finally:
        dashboard.stop()


def _open(driver: Any, dashboard: Dashboard, path: str) -> None:
    driver.get(dashboard.url)  # trades the token for this server's cookie
    driver.get(dashboard.base + path)


def _right(driver: Any, element: Any) -> float:
    return float(driver.execute_script("return arguments[0].getBoundingClientRect().right", element))


def test_the_topics_page_says_how_many_chunks_belong_to_no_topic(topics_dashboard: Dashboard, chrome: Any) -> None:
    with sqlite3.connect(f"file:{topics_dashboard.home / 'memory.db'}?mode=ro", uri=True) as db:
        chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        in_topics = db.execute("SELECT COUNT(DISTINCT chunk_id) FROM chunk_clusters").fetchone()[0]
    left_out = chunks - in_topics
    assert left_out, "the odd turns should belong to no topic"
    _open(chrome, topics_dashboard, "/topics")
    body = chrome.find_element(By.TAG_NAME, "body").text
    assert f"{left_out} of {chunks} chunks ({left_out / chunks:.0%}) belong to no topic." in body


def test_at_400_px_each_topic_s_size_stays_in_sight_beside_its_label(topics_dashboard: Dashboard, chrome: Any) -> None:
    _open(chrome, topics_dashboard, "/topics")
    chrome.set_window_size(400, 900)
    try:
        chrome.get(topics_dashboard.base + "/topics")
        table = chrome.find_element(By.CSS_SELECTOR, "section.list table.grid")
        labels = [e.text for e in table.find_elements(By.CSS_SELECTOR, "tbody td a")]
        assert any("session_cookie_expiry_middleware.ts" in label for label in labels), labels
        sizes = table.find_elements(By.CSS_SELECTOR, "tbody td.num")
        assert len(sizes) == len(labels) >= 2
        for label, cell in zip(labels, sizes, strict=True):
            assert _right(chrome, cell) <= _right(chrome, table) + 0.5, f"the size of {label!r} is out of sight"
    finally:
        chrome.set_window_size(1280, 1000)


def test_the_labels_on_the_map_lie_inside_the_map(topics_dashboard: Dashboard, chrome: Any) -> None:
    _open(chrome, topics_dashboard, "/topics")
    svg = chrome.find_element(By.CSS_SELECTOR, "svg.topicmap")
    left_edge, width = chrome.execute_script("const v = arguments[0].viewBox.baseVal; return [v.x, v.width]", svg)
    labels = svg.find_elements(By.CSS_SELECTOR, "a.lbl text")
    assert len(labels) >= 2
    for label in labels:
        left, right = chrome.execute_script("const b = arguments[0].getBBox(); return [b.x, b.x + b.width]", label)
        assert left_edge <= left and right <= left_edge + width, f"{label.text!r} crosses the map's edge"
        assert not label.text.endswith(("_", ",")), f"{label.text!r} is cut inside a term"
