"""The dashboard's team-only controls in a phone-wide window: over team memory (PostgreSQL) Search
offers a member to search and Forget a box for only one's own chunks; at 400 px both are in sight
and work, no page scrolls sideways however long a member's name, and the preview of one's own
chunks shows what would be deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from dashboard_support import BROWSER_HINT, console_errors, fits_sideways, in_sight, start_dashboard
from postgres_server import new_database
from transcript_files import write_session

from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

pytest.importorskip("selenium", reason=BROWSER_HINT)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

LONG_MEMBER = "alexandra.konstantinopoulou-contractor"  # a login name as long as real ones get


def test_the_team_controls_fit_and_work_in_a_phone_wide_window(
    postgres_server: Any, chrome: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    home = tmp_path / "home"
    home.mkdir()
    team = {"storage": {"backend": "postgres", "postgresUrl": url}, "team": {"user": "alice", "shareProjects": "all"}}
    (home / "config.json").write_text(json.dumps(team), encoding="utf-8")
    for member, sessions in (("alice", SESSIONS_DIR), (LONG_MEMBER, _one_session(tmp_path / "theirs"))):
        config = Config().with_overrides(
            {
                "storage.backend": "postgres",
                "storage.postgresUrl": url,
                "team.user": member,
                "team.shareProjects": "all",
            }
        )
        with open_services(config) as services:
            ingest_paths(services, [sessions], embed=False, workers=1)
    dashboard = start_dashboard(home)
    chrome.get(dashboard.url)  # trades the token for this server's cookie
    chrome.set_window_size(400, 900)
    try:
        chrome.get(dashboard.base + "/search?q=" + quote("redirect loop"))
        window = fits_sideways(chrome, "/search")
        member = chrome.find_element(By.NAME, "member")
        in_sight(chrome, member, window)
        Select(member).select_by_visible_text(LONG_MEMBER)
        chrome.find_element(By.CSS_SELECTOR, "form.search button[type=submit]").click()
        WebDriverWait(chrome, 30).until(lambda d: "member=" in d.current_url)
        assert f"member={quote(LONG_MEMBER)}" in chrome.current_url
        fits_sideways(chrome, "/search with a member chosen")

        chrome.get(dashboard.base + "/forget")
        window = fits_sideways(chrome, "/forget")
        only_mine = chrome.find_element(By.NAME, "only_mine")
        in_sight(chrome, only_mine, window)
        chrome.find_element(By.XPATH, "//label[.//input[@name='only_mine']]").click()  # the label ticks it
        assert only_mine.is_selected()
        Select(chrome.find_element(By.NAME, "project")).select_by_index(1)
        chrome.find_element(By.CSS_SELECTOR, "form.forget button[type=submit]").click()
        WebDriverWait(chrome, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "section.preview"))
        window = fits_sideways(chrome, "/forget preview of only my chunks")
        # What would be deleted is read without scrolling the table: each chunk's beginning is in sight,
        # a line of words wide (squeezed beside the other columns it was a letter wide and off screen).
        beginnings = chrome.find_elements(By.CSS_SELECTOR, "tr.doomed td.line")
        assert beginnings
        for cell in beginnings:
            in_sight(chrome, cell, window)
            assert cell.size["width"] >= window / 2, cell.size
        assert chrome.find_element(By.NAME, "only_mine").is_selected()
        assert console_errors(chrome) == []
    finally:
        chrome.set_window_size(1280, 1000)
        dashboard.stop()


def _one_session(folder: Path) -> Path:
    turns = [("the redirect loop is back on Safari", "The cookie lost SameSite again; set it to Lax.")]
    write_session(folder, "/home/dev/acme-shop", "b0b00000-0000-4000-8000-000000000001", turns)
    return folder
