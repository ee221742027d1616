"""Pages as a person reads them, in headless Chromium: two episodes of one session in a recall story
say what was left out between them and are numbered as recall's text numbers them; at 400 px each
project's session count and last activity, each hook's outcome and time, and each setting's source
and meaning stay in sight (not scrolled out of a table), and a time is not broken across lines; at
380 px the header's search box is there, reached by the keyboard, and scrolls away with the header,
each of the overview's figures reads on one line inside its box, and the page links lie in rows of
their own under the brand; at 1280 px the search filters fit on one line beside a long project name;
at both, a date field's calendar button shows the dashboard's focus ring when Tab reaches it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from dashboard_support import (
    BROWSER_HINT,
    Dashboard,
    causantic,
    console_errors,
    fits_sideways,
    in_sight,
    open_page,
    pixels_of_colour,
    start_dashboard,
    window_size,
)
from transcript_files import GAP_LINE, GAP_QUERY, GAP_TURNS, write_session

pytest.importorskip("selenium", reason=BROWSER_HINT)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow

# A project named by a long path, as real ones are: its name alone is wider than a phone.
LONG_PROJECT = "/home/dev/customer_portal_frontend_monorepo_checkout_experience"


@pytest.fixture(scope="module")
def billing_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    root = tmp_path_factory.mktemp("story-narrow")
    write_session(root / "projects", "/work/billing", "9a9e0000-0000-4000-8000-000000000000", GAP_TURNS)
    turns = [("why does checkout double-charge on retry", "The idempotency key was regenerated per retry.")]
    write_session(root / "projects", LONG_PROJECT, "9a9e0000-0000-4000-8000-000000000001", turns)
    home = root / "home"
    causantic(home, "ingest", str(root / "projects"))
    start = '{"session_id": "9a9e0000-0000-4000-8000-00000000ffff", "cwd": "/work/billing", "source": "startup"}'
    causantic(home, "hook", "session-start", stdin=start)
    dashboard = start_dashboard(home)
    try:
        yield dashboard
    finally:
        dashboard.stop()


def test_a_recall_story_says_what_it_left_out_between_two_episodes_of_one_session(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, billing_dashboard, f"/search?kind=recall&q={quote(GAP_QUERY)}")
    lines = chrome.find_elements(By.CSS_SELECTOR, "ol.story > li.chapter, ol.story > li.left-out")
    said = [(line.get_attribute("class").split()[0], line.text) for line in lines]
    assert [kind for kind, _ in said] == ["chapter", "left-out", "chapter"], said
    assert said[1][1] == GAP_LINE
    # Numbered as `causantic recall` numbers them ("== Episode 2 of 2 · billing · …"), times in UTC.
    assert said[0][1].startswith("Episode 1 of 2 · billing · session 9a9e0000 (Claude Code) · "), said[0][1]
    assert said[2][1].startswith("Episode 2 of 2 · billing · session 9a9e0000 (Claude Code) · "), said[2][1]
    assert all(" UTC · best match " in text for _, text in (said[0], said[2])), said
    with window_size(chrome, 400, 900):
        chrome.get(chrome.current_url)
        window = fits_sideways(chrome, "the recall story")
        in_sight(chrome, chrome.find_element(By.CSS_SELECTOR, "ol.story > li.left-out"), window)
        assert console_errors(chrome) == []


def test_at_400_px_each_project_s_sessions_and_last_activity_stayin_sight(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, billing_dashboard, "/")
    with window_size(chrome, 400, 900):
        for path in ("/", "/projects"):
            chrome.get(billing_dashboard.base + path)
            window = fits_sideways(chrome, path)
            rows = chrome.find_elements(By.CSS_SELECTOR, "table.projects tbody tr")
            assert len(rows) == 2, path
            for row in rows:
                cells = row.find_elements(By.TAG_NAME, "td")  # the overview's have no chunk count
                for cell in cells[: 5 if path == "/projects" else 4]:  # name, [chunks,] sessions, first, last active
                    in_sight(chrome, cell, window)
            # Each figure says what it is once the column headings are out of sight.
            for cell in rows[0].find_elements(By.CSS_SELECTOR, "td[data-label]"):
                label = chrome.execute_script("return getComputedStyle(arguments[0], '::before').content", cell)
                assert cell.get_attribute("data-label") in label, (cell.text, label)
        # A time reads on one line: '2026-11-24 22:49 UTC', not '(2026-' and '11-24 22:49 UTC)'.
        chrome.get(billing_dashboard.base + "/")
        times = chrome.find_elements(By.CSS_SELECTOR, "dl.facts dd .when")
        assert len(times) == 2
        for time in times:
            assert chrome.execute_script("return arguments[0].getClientRects().length", time) == 1, time.text


def test_an_unknown_project_s_known_names_are_links_to_those_projects(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    """'known: billing, …' was words to retype into the address; each name now opens that project's
    page, and the search it was asked for keeps its other fields."""
    for asked, page_of_billing in (
        ("/project?name=nosuch", "/project?name=billing"),
        ("/search?q=retry&kind=recall&project=nosuch", "/search?q=retry&kind=recall&project=billing"),
    ):
        open_page(chrome, billing_dashboard, asked)
        notice = chrome.find_element(By.CSS_SELECTOR, ".notice.error")
        assert "No project named 'nosuch' in memory (known: " in notice.text, notice.text
        links = {a.text: a.get_attribute("href") for a in notice.find_elements(By.TAG_NAME, "a")}
        assert set(links) == {"billing", "customer_portal_frontend_monorepo_checkout_experience"}, notice.text
        assert links["billing"] == billing_dashboard.base + page_of_billing
        notice.find_element(By.LINK_TEXT, "billing").click()
        WebDriverWait(chrome, 10).until(ec.url_to_be(billing_dashboard.base + page_of_billing))
        assert "No project named" not in chrome.find_element(By.TAG_NAME, "main").text
        # The unknown name's 404 or 400 is the browser log's only error (read here, not left to the next test).
        assert [e for e in console_errors(chrome) if "nosuch" not in e] == []


def test_at_400_px_each_setting_s_value_source_and_description_stay_in_sight(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, billing_dashboard, "/")
    with window_size(chrome, 400, 900):
        chrome.get(billing_dashboard.base + "/settings")
        window = fits_sideways(chrome, "/settings")
        rows = chrome.find_elements(By.CSS_SELECTOR, "table.settings tbody tr")
        assert len(rows) > 20
        for row in rows[:6]:
            for cell in row.find_elements(By.TAG_NAME, "td"):  # key, value, source, what it does
                in_sight(chrome, cell, window)


def test_at_400_px_each_hook_s_outcome_and_time_stay_in_sight(billing_dashboard: Dashboard, chrome: Any) -> None:
    open_page(chrome, billing_dashboard, "/")
    with window_size(chrome, 400, 900):
        chrome.get(billing_dashboard.base + "/")
        window = fits_sideways(chrome, "/")
        rows = chrome.find_elements(By.CSS_SELECTOR, "table.hooks tbody tr")
        assert len(rows) == 1
        cells = rows[0].find_elements(By.TAG_NAME, "td")  # hook, last run, outcome, time
        assert "session-start" in cells[0].text and cells[3].text.endswith(" ms")
        for cell in cells:
            in_sight(chrome, cell, window)


def test_the_search_filters_fit_on_one_line_beside_a_long_project_name(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, billing_dashboard, "/search")
    middles = {}
    for name in ("kind", "project", "agent", "from", "to"):
        rect = chrome.find_element(By.NAME, name).rect
        middles[name] = rect["y"] + rect["height"] / 2
    assert max(middles.values()) - min(middles.values()) < 10, middles  # one line, not the dates on a second


def test_at_380_px_the_header_search_box_is_in_sight_and_reached_by_tab(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    """Below 820 px the box was hidden: on a phone, searching took the Search page first."""
    open_page(chrome, billing_dashboard, "/")
    with window_size(chrome, 380, 900):
        chrome.get(billing_dashboard.base + "/projects")
        window = fits_sideways(chrome, "/projects")
        box = chrome.find_element(By.CSS_SELECTOR, "header form.quick input[name=q]")
        in_sight(chrome, box, window)
        assert box.size["width"] >= 200, box.size  # room to read a query, not a sliver
        body = chrome.find_element(By.TAG_NAME, "body")
        body.click()
        for _ in range(12):  # the brand, six page links, then the box
            chrome.switch_to.active_element.send_keys(Keys.TAB)
            if chrome.switch_to.active_element == box:
                break
        assert chrome.switch_to.active_element == box, "Tab reaches the search box after the page links"
        # Wrapped onto three rows, a header that stays on top would hide a quarter of the screen.
        chrome.get(billing_dashboard.base + "/settings")  # a page long enough to scroll
        chrome.execute_script("window.scrollTo(0, 400)")
        bottom = chrome.execute_script("return document.querySelector('header.top').getBoundingClientRect().bottom")
        assert bottom <= 0, f"the header still covers {bottom} px once the page is scrolled"
        box = chrome.find_element(By.CSS_SELECTOR, "header form.quick input[name=q]")
        box.send_keys("double-charge on retry", Keys.ENTER)
        # The form's navigation is the browser's own: read the address once it has happened, not before.
        WebDriverWait(chrome, 30).until(ec.url_contains("/search?q=double-charge"))
        assert "idempotency key was regenerated" in chrome.find_element(By.ID, "results").text
        fits_sideways(chrome, "the search page")
        # The Search page's own box, with the filters, is the one box there (not two, one above the other);
        # its error page, with no form, keeps the header's.
        assert len(chrome.find_elements(By.CSS_SELECTOR, "input[name=q]")) == 1
        chrome.get(billing_dashboard.base + "/search?kind=bogus&q=retry")
        assert chrome.find_element(By.CSS_SELECTOR, "header form.quick input[name=q]").is_displayed()
        # The page's 400 is the browser log's only error (read here, it is not left to the next test's check).
        assert [e for e in console_errors(chrome) if "kind=bogus" not in e or "400" not in e] == []


def test_at_380_px_each_overview_figure_reads_on_one_line_inside_its_box(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    """'10.6 MB' on disk broke into '10.6' over 'MB', and a six-digit chunk count ran past its box."""
    open_page(chrome, billing_dashboard, "/")
    with window_size(chrome, 380, 900):
        chrome.get(billing_dashboard.base + "/")
        figures = chrome.find_elements(By.CSS_SELECTOR, ".stats .stat .n")
        assert len(figures) == 6
        # The widest figures of a 100k-chunk memory, as the page would show them.
        chunks, disk = figures[2], figures[5]
        chrome.execute_script("arguments[0].textContent = '100,000'", chunks)
        chrome.execute_script("arguments[0].textContent = '510.7 MB'", disk)
        for figure in figures:
            lines = chrome.execute_script(
                "const n = arguments[0]; return n.offsetHeight / parseFloat(getComputedStyle(n).lineHeight)", figure
            )
            inside = chrome.execute_script(
                "const n = arguments[0], box = n.parentElement.getBoundingClientRect(), r = n.getBoundingClientRect();"
                "return n.scrollWidth <= n.clientWidth + 1 && r.right <= box.right",
                figure,
            )
            assert lines < 1.5 and inside, (figure.text, lines, inside)


def test_at_380_px_the_page_links_lie_in_two_even_rows_under_the_brand(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    """Beside the brand the six links wrapped onto three ragged rows (two, three, one); at 1280 px
    they stay on the brand's line."""
    open_page(chrome, billing_dashboard, "/")
    for width, rows in ((1280, 1), (380, 2)):
        with window_size(chrome, width, 900):
            chrome.get(billing_dashboard.base + "/projects")
            window = fits_sideways(chrome, f"/projects at {width} px")
            brand = chrome.find_element(By.CSS_SELECTOR, "header .brand").rect
            links = chrome.find_elements(By.CSS_SELECTOR, "header nav a")
            for link in links:
                in_sight(chrome, link, window)
            tops = sorted({round(link.rect["y"]) for link in links})
            assert len(tops) == rows, (width, [(link.text, link.rect) for link in links])
            if width == 380:
                assert tops[0] >= brand["y"] + brand["height"], "the links are under the brand, not beside it"
                widths = {round(link.rect["width"]) for link in links}
                assert max(widths) - min(widths) <= 1, f"three a row, each as wide: {widths}"
            else:
                assert abs(links[0].rect["y"] + links[0].rect["height"] / 2 - brand["y"] - brand["height"] / 2) < 4


ACCENT = (0x44, 0x60, 0xE0)  # the dashboard's focus ring (--accent)


def test_a_date_field_s_calendar_button_shows_the_dashboard_s_focus_ring(
    billing_dashboard: Dashboard, chrome: Any
) -> None:
    """Tab from a date's year reaches its calendar button, which Chromium ringed in its own near black."""
    open_page(chrome, billing_dashboard, "/")
    for width in (1280, 380):
        with window_size(chrome, width, 900):
            for path, before, field in (("/search?q=retry", "agent", "from"), ("/forget", "session", "before")):
                chrome.get(billing_dashboard.base + path)
                date = chrome.find_element(By.NAME, field)
                chrome.execute_script("arguments[0].scrollIntoView({block: 'center'})", date)
                chrome.find_element(By.NAME, before).click()
                presses = 0
                button = "const a = document.activeElement; return a.name === arguments[0] && !a.matches(':focus')"
                while not chrome.execute_script(button, field) and presses < 8:  # month, day, year, the button
                    ActionChains(chrome).send_keys(Keys.TAB).perform()
                    presses += 1
                assert chrome.execute_script(button, field), f"Tab reached no calendar button on {path}"
                assert pixels_of_colour(chrome, date, ACCENT) >= 40, f"no accent ring at {width} px on {path}"
