"""A project's timeline, a session's page and the forms as a person reads them, in headless Chromium.

At 1280 px a session's time span stays in its column (it ran on under the title: '18:55 – 18:56
UTC' over 'update the…'); at 380 px a title that is one long path wraps inside the page, a first prompt
as a title leaves room for the session, and a chunk's time and size each stay on one line; a Codex
session is labelled Codex CLI, not Claude Code; a sub-agent's text reads in ink (it was drawn in the
colour of the page's lines, #e2e5eb on white); muted text and links reach 4.5:1 contrast; at 380
px a form's fields stay inside it; the keyboard's place is a ring seen on the header and the page,
and one stop skips the header.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from dashboard_support import (
    BROWSER_HINT,
    REPO,
    Dashboard,
    causantic,
    fits_sideways,
    open_page,
    start_dashboard,
    window_size,
)
from transcript_files import write_codex_rollout, write_session

pytest.importorskip("selenium", reason=BROWSER_HINT)
from selenium.webdriver.common.by import By  # noqa: E402

pytestmark = pytest.mark.slow

CWD = "/home/dev/acme/checkout"
PROJECT = "acme/checkout"
LONG_PATH = "/Users/dev/Documents/github/checkout-worktrees/feature/phase10-payment-retry-idempotency-keys/src"
# A project named by a long path, as real ones are: its name alone is wider than a phone.
LONG_PROJECT = "/home/dev/customer_portal_frontend_monorepo_checkout_experience"
TEAM = REPO / "tests" / "teams" / "fixtures" / "docs_team"  # a lead, two teammates, one of them twice
TEAM_SESSION = "d0c5d0c5-0000-4000-8000-000000000001"
ORPHANS = "0a9a0000-0000-4000-8000-000000000001"
PROSE_SESSION = "c0c0a000-0000-4000-8000-000000000005"
PROSE = (  # a first prompt as people write them: its first 200 characters are the session's title
    "OK, we are going to try a small experiment here: pretend we have a list of tasks, the first being to "
    "research how the payment service retries a charge, the second how it keys idempotency"
)

# Every text's contrast with what is behind it (WCAG: 4.5:1, or 3:1 for large text), worst first.
LOW_CONTRAST = """
function lum(c) { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(v => { v /= 255;
  return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b; }
function behind(el) { for (let n = el; n; n = n.parentElement) { const c = getComputedStyle(n).backgroundColor;
  const v = c.match(/[\\d.]+/g).map(Number); if (v.length < 4 || v[3] > 0.5) return c; } return "rgb(255, 255, 255)"; }
const low = [];
if (arguments[0] === "focus") {  // the ring around the focused element, against what is behind it
  const el = document.activeElement, st = getComputedStyle(el);
  const ratio = (x, y) => (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  const seen = st.outlineStyle !== "none" && parseFloat(st.outlineWidth) >= 2;
  return [el.textContent.trim() || el.name, seen, ratio(lum(st.outlineColor), lum(behind(el.parentElement)))];
}
for (const el of document.querySelectorAll("body *")) {
  if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()) || el.closest("svg")) continue;
  const st = getComputedStyle(el), a = lum(st.color), b = lum(behind(el));
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), size = parseFloat(st.fontSize);
  const large = size >= 24 || (size >= 18.66 && parseInt(st.fontWeight) >= 700);
  const what = `${el.tagName}.${el.className}: ${el.textContent.trim().slice(0, 40)}`;
  if (ratio < (large ? 3 : 4.5)) low.push(`${ratio.toFixed(2)} ${what}`);
}
return low.sort();
"""


@pytest.fixture(scope="module")
def checkout_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    root = tmp_path_factory.mktemp("timeline")
    projects = root / "projects"
    turns = [(f"step {n} of the payment retry work", f"Done with step {n}.") for n in range(8)]
    write_session(projects, CWD, "c0c0a000-0000-4000-8000-000000000001", turns, day=2)  # 09:00 – 09:07
    write_session(projects, CWD, "c0c0a000-0000-4000-8000-000000000002", [(LONG_PATH, "Opened it.")], day=4)
    write_session(projects, LONG_PROJECT, "c0c0a000-0000-4000-8000-000000000004", turns[:1], day=3)
    write_session(projects, "/home/dev/acme/notes", PROSE_SESSION, [(PROSE, "Noted.")], day=5)
    # A session worked on past midnight: its span names the day it ended.
    late = write_session(projects, CWD, "c0c0a000-0000-4000-8000-000000000003", turns[:2], day=6)
    lines = [json.loads(line) for line in late.read_text(encoding="utf-8").splitlines()]
    lines[-1]["timestamp"] = "2026-11-07T08:30:00.000Z"
    late.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    # A session of which only the sub-agents' files were read: the team's three, under an id of their own.
    for part in (TEAM / TEAM_SESSION / "subagents").iterdir():
        copy = projects / "-home-dev-acme-checkout" / ORPHANS / "subagents" / part.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(part.read_text(encoding="utf-8").replace(TEAM_SESSION, ORPHANS), encoding="utf-8")
    codex = root / "codex"
    write_codex_rollout(codex, CWD, "019a0000-0000-7000-8000-00000000c0de", [("add a retry test", "Added it.")])
    home = root / "home"
    causantic(home, "ingest", str(projects), str(codex), str(TEAM), "--no-embed")
    dashboard = start_dashboard(home)
    try:
        yield dashboard
    finally:
        dashboard.stop()


def _overlaps(driver: Any) -> list[str]:
    """Each timeline entry whose time runs past its column, or into the title beside it."""
    return driver.execute_script(
        """return [...document.querySelectorAll("ol.timeline li.entry")].flatMap(entry => {
             const when = entry.querySelector(".when"), what = entry.querySelector(".what");
             const w = when.getBoundingClientRect(), t = what.getBoundingClientRect();
             const beside = w.top < t.bottom && t.top < w.bottom && w.left < t.left;
             return when.scrollWidth > when.clientWidth || (beside && w.right > t.left) ? [when.textContent] : [];
           })"""
    )


def test_each_session_s_time_span_stays_in_its_column_beside_the_title(
    checkout_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, checkout_dashboard, f"/project?name={PROJECT}")
    spans = [e.text for e in chrome.find_elements(By.CSS_SELECTOR, "ol.timeline .when")]
    assert "09:00 – 09:07 UTC" in spans and any("2026-11-07 08:30 UTC" in s for s in spans), spans
    assert _overlaps(chrome) == []
    with window_size(chrome, 380, 900):
        chrome.get(chrome.current_url)
        fits_sideways(chrome, "the project's timeline")
        assert _overlaps(chrome) == []


def test_a_title_that_is_one_long_path_wraps_inside_a_phone_wide_page(
    checkout_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, checkout_dashboard, "/")
    with window_size(chrome, 380, 900):
        chrome.get(f"{checkout_dashboard.base}/project?name={PROJECT}")
        fits_sideways(chrome, "a timeline holding a long path as a title")
        chrome.get(f"{checkout_dashboard.base}/session/c0c0a000-0000-4000-8000-000000000002")
        assert chrome.find_element(By.TAG_NAME, "h1").text.replace("\n", "") == LONG_PATH
        fits_sideways(chrome, "a session titled by a long path")


def test_at_380_px_a_session_s_first_prompt_as_its_title_leaves_room_for_the_session(
    checkout_dashboard: Dashboard, chrome: Any
) -> None:
    """At the page heading's size a 200-character prompt took six lines of a phone's screen, and each
    chunk's time broke in two ('2026-11-05 09:00' over 'UTC') beside its turn and tokens."""
    open_page(chrome, checkout_dashboard, "/")
    with window_size(chrome, 380, 900):
        chrome.get(f"{checkout_dashboard.base}/session/{PROSE_SESSION}")
        title = chrome.find_element(By.TAG_NAME, "h1")
        assert title.text.replace("\n", " ").startswith(PROSE[:60])
        lines = chrome.execute_script(
            "const h = arguments[0]; return h.offsetHeight / parseFloat(getComputedStyle(h).lineHeight)",
            title,
        )
        assert lines <= 5.2, f"the title takes {lines:.1f} lines"
        parts = chrome.find_elements(By.CSS_SELECTOR, "article.chunk header .time, article.chunk header .muted")
        assert len(parts) == 2
        for part in parts:
            assert chrome.execute_script("return arguments[0].getClientRects().length", part) == 1, part.text


def test_a_codex_session_is_labelled_codex_cli_as_recall_names_it(checkout_dashboard: Dashboard, chrome: Any) -> None:
    open_page(chrome, checkout_dashboard, f"/project?name={PROJECT}")
    labels = [e.text for e in chrome.find_elements(By.CSS_SELECTOR, "ol.timeline .src")]
    assert sorted(labels) == ["Claude Code", "Claude Code", "Claude Code", "Codex CLI"], labels


def test_a_sub_agent_s_text_reads_in_ink_and_each_run_says_what_it_was_asked(
    checkout_dashboard: Dashboard, chrome: Any
) -> None:
    open_page(chrome, checkout_dashboard, f"/session/{TEAM_SESSION}")
    folds = chrome.find_elements(By.CSS_SELECTOR, "details.branch")
    # ana worked in two contexts: two runs, each where it was started (the second by the lead's message).
    summaries = [fold.find_element(By.TAG_NAME, "summary").text for fold in folds]
    assert [s.split()[0] for s in summaries] == ["ana", "ben", "ana"], summaries
    assert "Write docs/api.md for the export endpoint" in summaries[0]
    assert "add the pagination example" in summaries[2]
    for fold in folds:
        chrome.execute_script("arguments[0].open = true", fold)
    assert chrome.execute_script(LOW_CONTRAST) == []


@pytest.mark.parametrize("path", ["/", f"/project?name={PROJECT}", "/search?q=payment+retry", "/forget"])
def test_muted_text_and_links_reach_4_5_to_1_contrast(checkout_dashboard: Dashboard, chrome: Any, path: str) -> None:
    open_page(chrome, checkout_dashboard, path)
    assert chrome.execute_script(LOW_CONTRAST) == []


def test_at_380_px_every_field_of_a_form_lies_inside_the_form(checkout_dashboard: Dashboard, chrome: Any) -> None:
    """The forget form's fields ran 36 px past its right edge: the column took the project list's
    width, as wide as its longest name."""
    open_page(chrome, checkout_dashboard, "/")
    with window_size(chrome, 380, 900):
        for path in ("/forget", "/search?q=payment"):
            chrome.get(checkout_dashboard.base + path)
            fits_sideways(chrome, path)
            outside = chrome.execute_script(
                """return [...document.querySelectorAll("main form")].flatMap(form => {
                     const box = form.getBoundingClientRect();
                     return [...form.querySelectorAll("input:not([type=hidden]), select, button")]
                       .filter(e => { const q = e.getBoundingClientRect();
                                      return q.left < box.left || q.right > box.right; })
                       .map(e => `${e.name}: ${r(e)} beyond ${box.right}`);
                     function r(e) { const q = e.getBoundingClientRect(); return `${q.left}-${q.right}`; }
                   })"""
            )
            assert outside == [], (path, outside)


def test_the_keyboard_s_place_is_a_ring_seen_on_the_dark_header_and_on_the_page(
    checkout_dashboard: Dashboard, chrome: Any
) -> None:
    """Chromium's own ring was 1 px of near black: 1.2:1 on the header, where Tab starts."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_page(chrome, checkout_dashboard, "/")
    chrome.execute_script("document.activeElement.blur()")
    rings = []
    for _ in range(11):  # the skip link, the brand, six page links, the quick search, then the page's own links
        ActionChains(chrome).send_keys(Keys.TAB).perform()
        rings.append(chrome.execute_script(LOW_CONTRAST, "focus"))
    assert [name for name, _, _ in rings][:4] == ["Skip to the page", "◆ Causantic", "Overview", "Projects"], rings
    assert all(seen and ratio >= 3 for _, seen, ratio in rings), rings


def test_the_keyboard_skips_the_header_to_the_page_in_one_stop(checkout_dashboard: Dashboard, chrome: Any) -> None:
    """Eight stops of header (brand, six page links, the search box) came before every page's own links."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_page(chrome, checkout_dashboard, "/projects")
    chrome.execute_script("document.activeElement.blur()")
    skip = chrome.find_element(By.CSS_SELECTOR, "a.skip")
    assert not _in_view(chrome, skip), "out of sight until the keyboard reaches it"
    ActionChains(chrome).send_keys(Keys.TAB).perform()
    assert chrome.switch_to.active_element == skip and _in_view(chrome, skip)
    ActionChains(chrome).send_keys(Keys.ENTER).perform()
    ActionChains(chrome).send_keys(Keys.TAB).perform()
    first = chrome.find_element(By.CSS_SELECTOR, "main a")
    assert chrome.switch_to.active_element == first, chrome.switch_to.active_element.text


def _in_view(driver: Any, element: Any) -> bool:
    rect = driver.execute_script("return arguments[0].getBoundingClientRect()", element)
    return bool(rect["bottom"] > 0 and rect["top"] < driver.execute_script("return innerHeight"))


def test_a_search_hit_names_the_coding_agent_that_wrote_it_as_the_cli_does(
    checkout_dashboard: Dashboard, chrome: Any
) -> None:
    """`causantic search` heads each hit 'Source: codex'; the page's hits did not say it."""
    said = causantic(checkout_dashboard.home, "search", "add a retry test", "--limit", "1")
    assert "Source: codex" in said, said
    open_page(chrome, checkout_dashboard, "/search?q=add+a+retry+test")
    where = chrome.find_element(By.CSS_SELECTOR, "li.hit .where")
    assert where.find_element(By.CSS_SELECTOR, ".src").text == "Codex CLI", where.text


def test_a_session_of_sub_agents_only_shows_their_text_unfolded(checkout_dashboard: Dashboard, chrome: Any) -> None:
    """Only its sub-agents' files were read (as in randlee's claude-history export): the page was a
    stack of folds and no text."""
    open_page(chrome, checkout_dashboard, f"/session/{ORPHANS}")
    folds = chrome.find_elements(By.CSS_SELECTOR, "main > details.branch")
    assert len(folds) == 3 and all(fold.get_attribute("open") is not None for fold in folds)
    assert all(chunk.is_displayed() for chunk in chrome.find_elements(By.CSS_SELECTOR, "article.chunk"))
    # Beside a main stream, branches still start folded.
    chrome.get(f"{checkout_dashboard.base}/session/{TEAM_SESSION}")
    assert all(f.get_attribute("open") is None for f in chrome.find_elements(By.CSS_SELECTOR, "details.branch"))
