"""The topics page as a person reads it, in headless Chromium: it says how many chunks belong to no
topic, a topic's size stays in sight beside its label at 400 px, and the labels on the map lie inside
the map. The store holds two topics named by long identifiers (what real code topics are often
called), at the two ends of the map, and a few turns that fit neither. A second store holds two dozen
topics, a list much longer than the map: the map keeps its own size and stays in sight beside it,
and its labels stay readable, inside it and apart at 1280 and 400 px, with JavaScript on or off."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import (
    BROWSER_HINT,
    Dashboard,
    causantic,
    console_errors,
    fits_sideways,
    open_page,
    start_dashboard,
    window_size,
)
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
# Two dozen subjects far apart, five turns each: as many topics.
SUBJECTS = [
    ("postgres autovacuum", "table bloat"),
    ("kubernetes pod", "eviction"),
    ("webpack bundle", "code splitting"),
    ("rust borrow checker", "lifetimes"),
    ("css grid", "column layout"),
    ("git rebase", "merge conflicts"),
    ("docker image", "layer cache"),
    ("python asyncio", "event loop"),
    ("redis cache", "key expiry"),
    ("terraform state", "locking"),
    ("react useEffect", "dependency array"),
    ("nginx proxy", "forwarded headers"),
    ("sql btree index", "query planner"),
    ("unicode normalization", "accents"),
    ("timezone", "daylight saving"),
    ("regex", "catastrophic backtracking"),
    ("heap snapshot", "memory leak"),
    ("cron schedule", "missed runs"),
    ("csv parser", "quoted commas"),
    ("pdf renderer", "embedded fonts"),
    ("bluetooth", "pairing"),
    ("cuda kernel", "gpu occupancy"),
    ("dns resolver", "ttl caching"),
    ("tls certificate", "chain expiry"),
]


def _clustered_dashboard(root: Path) -> Iterator[Dashboard]:
    """A dashboard over the sessions written under ``root/projects``, ingested and clustered."""
    home = root / "home"
    causantic(home, "batch-ingest", str(root / "projects"))
    causantic(home, "cluster")
    dashboard = start_dashboard(home)
    try:
        yield dashboard
    finally:
        dashboard.stop()


@pytest.fixture(scope="module")
def topics_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    root = tmp_path_factory.mktemp("topic-pages")
    write_session(root / "projects", "/work/webapp", "bbbbbbbb-0000-4000-8000-000000000001", LOGIN + ODD)
    write_session(root / "projects", "/work/accounts", "bbbbbbbb-0000-4000-8000-000000000002", LOGOUT)
    yield from _clustered_dashboard(root)


@pytest.fixture(scope="module")
def many_topics_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    root = tmp_path_factory.mktemp("many-topics")
    for n, (thing, trouble) in enumerate(SUBJECTS):
        turns = [
            (
                f"Why does the {thing} show {trouble} trouble again ({k})?",
                f"The {thing} {trouble} trouble is fixed ({k}).",
            )
            for k in range(5)
        ]
        write_session(root / "projects", f"/work/p{n}", f"cccccccc-0000-4000-8000-{n:012d}", turns)
    yield from _clustered_dashboard(root)


def _right(driver: Any, element: Any) -> float:
    return float(driver.execute_script("return arguments[0].getBoundingClientRect().right", element))


def test_the_topics_page_says_how_many_chunks_belong_to_no_topic(topics_dashboard: Dashboard, chrome: Any) -> None:
    with sqlite3.connect(f"file:{topics_dashboard.home / 'memory.db'}?mode=ro", uri=True) as db:
        chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        in_topics = db.execute("SELECT COUNT(DISTINCT chunk_id) FROM chunk_clusters").fetchone()[0]
    left_out = chunks - in_topics
    assert left_out, "the odd turns should belong to no topic"
    open_page(chrome, topics_dashboard, "/topics")
    body = chrome.find_element(By.TAG_NAME, "body").text
    assert f"{left_out} of {chunks} chunks ({left_out / chunks:.0%}) belong to no topic." in body


def test_at_400_px_each_topic_s_size_stays_in_sight_beside_its_label(topics_dashboard: Dashboard, chrome: Any) -> None:
    open_page(chrome, topics_dashboard, "/topics")
    with window_size(chrome, 400, 900):
        chrome.get(topics_dashboard.base + "/topics")
        table = chrome.find_element(By.CSS_SELECTOR, "section.list table.grid")
        labels = [e.text for e in table.find_elements(By.CSS_SELECTOR, "tbody td a")]
        assert any("session_cookie_expiry_middleware.ts" in label for label in labels), labels
        sizes = table.find_elements(By.CSS_SELECTOR, "tbody td.num")
        assert len(sizes) == len(labels) >= 2
        for label, cell in zip(labels, sizes, strict=True):
            assert _right(chrome, cell) <= _right(chrome, table) + 0.5, f"the size of {label!r} is out of sight"


def test_the_labels_on_the_map_lie_inside_the_map(topics_dashboard: Dashboard, chrome: Any) -> None:
    open_page(chrome, topics_dashboard, "/topics")
    svg = chrome.find_element(By.CSS_SELECTOR, "svg.topicmap")
    left_edge, width = chrome.execute_script("const v = arguments[0].viewBox.baseVal; return [v.x, v.width]", svg)
    labels = [label for label in svg.find_elements(By.CSS_SELECTOR, "a.lbl text") if label.is_displayed()]
    assert len(labels) >= 2
    for label in labels:
        left, right = chrome.execute_script("const b = arguments[0].getBBox(); return [b.x, b.x + b.width]", label)
        assert left_edge <= left and right <= left_edge + width, f"{label.text!r} crosses the map's edge"
        assert not label.text.endswith(("_", ",")), f"{label.text!r} is cut inside a term"


def _rect(driver: Any, css: str) -> dict[str, float]:
    return dict(driver.execute_script(f"return document.querySelector({css!r}).getBoundingClientRect().toJSON()"))


def test_beside_a_long_topic_list_the_map_keeps_its_size_and_stays_in_sight(
    many_topics_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, many_topics_dashboard, "/topics")
    with window_size(chrome, 1280, 800):
        chrome.get(many_topics_dashboard.base + "/topics")
        window = chrome.execute_script("return window.innerHeight")
        card, caption, listing = _rect(chrome, ".card.map"), _rect(chrome, ".card.map > p"), _rect(chrome, ".card.list")
        assert listing["height"] > window, "the list should be longer than the window"
        # Stretched to the list's height, the map's card was a tall empty white box under the map.
        assert card["bottom"] - caption["bottom"] < 48, (card, caption)  # the card's padding, the caption's margin
        chrome.execute_script("document.querySelector('.card.list tbody tr:last-child').scrollIntoView(false)")
        header, svg = _rect(chrome, "header.top"), _rect(chrome, "svg.topicmap")
        assert header["bottom"] <= svg["top"] and svg["bottom"] <= window, (
            "the map scrolled away beside the list",
            window,
            svg,
        )


def test_a_long_topic_list_comes_in_pages_and_its_smallest_topics_are_on_the_last(
    many_topics_dashboard: Dashboard, chrome: Any
) -> None:
    """A real memory's 193 topics: 150 rows made the page 10,000 px long at 380 px, and its 43 smallest
    topics were in no row ("43 smaller topics are not listed"). Here 24 topics, 20 to a page."""
    open_page(chrome, many_topics_dashboard, "/topics")
    seen: list[str] = []
    with window_size(chrome, 380, 900):
        for page in (1, 2):
            body = chrome.find_element(By.TAG_NAME, "body").text
            rows = chrome.find_elements(By.CSS_SELECTOR, ".card.list tbody td.label a")
            seen += [row.text for row in rows]
            assert "24 topics" in body and f"page {page} of 2" in body, body
            assert "not listed" not in body
            fits_sideways(chrome, f"the topics page {page} at 380 px")
            if page == 1:
                assert len(rows) == 20 and "Topics 1–20, largest first." in body, body
                chrome.find_element(By.LINK_TEXT, "Smaller topics →").click()
            else:
                assert len(rows) == 4 and "Topics 21–24, largest first." in body, body
                assert chrome.find_elements(By.LINK_TEXT, "← Larger topics")
        assert len(set(seen)) == 24, seen  # every topic has its row, once
        assert len(chrome.find_elements(By.CSS_SELECTOR, "svg.topicmap circle")) >= 24 * 4  # the whole map
        chrome.get(many_topics_dashboard.base + "/topics?page=3")
        assert "Page 3 is past the last: memory has 24 topics, 2 pages of 20." in chrome.page_source


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
@pytest.mark.parametrize("width", [1280, 400])
def test_the_map_s_labels_are_readable_inside_the_map_and_apart(
    many_topics_dashboard: Dashboard, request: pytest.FixtureRequest, width: int, javascript: bool
) -> None:
    """With JavaScript off as with it on: the labels are laid out by the server for the map's width."""
    chrome = request.getfixturevalue("chrome" if javascript else "chrome_without_js")
    open_page(chrome, many_topics_dashboard, "/topics")
    with window_size(chrome, width, 900):
        console_errors(chrome)  # start the page's log empty
        chrome.get(many_topics_dashboard.base + "/topics")
        assert console_errors(chrome) == []
        fits_sideways(chrome, f"the topics page at {width} px")
        svg = chrome.find_element(By.CSS_SELECTOR, "svg.topicmap")
        drawn = chrome.execute_script(
            """const svg = arguments[0], scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
            const shown = [...svg.querySelectorAll('a.lbl text')].filter((t) => t.getClientRects().length);
            const size = (t) => parseFloat(getComputedStyle(t).fontSize) * scale;
            return shown.map((t) => [t.textContent, t.getBoundingClientRect().toJSON(), size(t)]);""",
            svg,
        )
        assert len(drawn) >= 3, drawn
        box = _rect(chrome, "svg.topicmap")
        for label, rect, size in drawn:
            assert size >= 11, f"{label!r} is drawn {size:.1f} px high at {width} px"
            assert box["left"] < rect["left"] and rect["right"] < box["right"], f"{label!r} crosses the map's side"
            assert box["top"] < rect["top"] and rect["bottom"] < box["bottom"], (
                f"{label!r} crosses the map's top or foot"
            )
        for n, (label, rect, _) in enumerate(drawn):
            for other, near, _ in drawn[n + 1 :]:
                apart = (
                    rect["right"] <= near["left"]
                    or near["right"] <= rect["left"]
                    or rect["bottom"] <= near["top"]
                    or near["bottom"] <= rect["top"]
                )
                assert apart, f"{label!r} and {other!r} overlap at {width} px"


def test_a_keyboard_reaches_the_topic_list_right_after_the_header_and_the_map_s_labels_after_it(
    many_topics_dashboard: Dashboard, chrome: Any
) -> None:
    """Tab from the top of the page: past the header to the first topic in the list, every topic in
    the list, then the map's labels. Each dot of the map was a stop of its own (900 on a real store's
    page), then the map's 40 labels came before the list. In a wide window the map is still drawn
    on the left, beside the list."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_page(chrome, many_topics_dashboard, "/topics")
    for width in (1280, 380):
        with window_size(chrome, width, 1000):
            chrome.get(many_topics_dashboard.base + "/topics")
            listed = len(chrome.find_elements(By.CSS_SELECTOR, ".card.list a"))  # its topics and its pager
            labels = [a for a in chrome.find_elements(By.CSS_SELECTOR, "svg.topicmap a.lbl") if a.is_displayed()]
            assert listed >= 20 and labels, (listed, len(labels))
            map_box, list_box = (chrome.find_element(By.CSS_SELECTOR, f".card.{c}").rect for c in ("map", "list"))
            if width == 1280:  # before Tab scrolls the page (the map is sticky)
                assert map_box["x"] < list_box["x"] and abs(map_box["y"] - list_box["y"]) < 2, (map_box, list_box)
            chrome.execute_script("document.activeElement.blur()")
            stops = []
            while len(stops) < 9 + listed + len(labels) + 1:  # the skip link, the brand, six links, the search box
                ActionChains(chrome).send_keys(Keys.TAB).perform()
                stops.append(
                    chrome.execute_script(
                        "const a = document.activeElement;"
                        "return a.closest('.card.list') ? 'list' : a.closest('svg.topicmap') ? 'map' : 'other'"
                    )
                )
                if stops[-1] == "map":
                    break
            assert stops[9:] == ["list"] * listed + ["map"], (width, stops)
