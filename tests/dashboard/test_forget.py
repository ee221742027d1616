"""Forget in the browser: a preview lists every chunk, and a confirmation deletes those and no more.

Between the preview and the confirmation another session of the same project is ingested whose
chunks match the same filter: they were never shown, so they must stay.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import (
    BROWSER_HINT,
    CORPUS,
    SNIFFLY,
    Dashboard,
    causantic,
    console_errors,
    screenshot,
    start_dashboard,
)

pytest.importorskip("selenium", reason=BROWSER_HINT)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow
FIRST, LATE = "ba79134d-b6e9-4867-af0c-6941038c9e4b", "d3ad4cdc-5657-435d-98fa-0035d53e383d"
PUSH = "fed8ce56-bc79-401f-a83e-af084253362f"


@pytest.fixture
def forget_dashboard(tmp_path: Path) -> Iterator[Dashboard]:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is missing at {CORPUS}; CI provides ../shared beside the repo")
    home = tmp_path / "home"
    causantic(home, "ingest", "--no-embed", str(SNIFFLY / f"{FIRST}.jsonl"), str(SNIFFLY / f"{PUSH}.jsonl"))
    dashboard = start_dashboard(home)
    try:
        yield dashboard
    finally:
        dashboard.stop()


def _wait_for(driver: Any, css: str) -> None:
    """Wait for the page a form posted to (a click returns before the next page loads)."""
    WebDriverWait(driver, 60).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def _chunks_by_session(home: Path) -> dict[str, set[str]]:
    with sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True) as db:
        out: dict[str, set[str]] = {}
        for chunk_id, session_id in db.execute("SELECT id, session_id FROM chunks"):
            out.setdefault(session_id, set()).add(chunk_id)
        return out


def test_forget_previews_then_deletes_only_what_it_showed(
    forget_dashboard: Dashboard, chrome: Any, tmp_path: Path
) -> None:
    before = _chunks_by_session(forget_dashboard.home)
    expected = before[FIRST] | before[PUSH]
    chrome.get(forget_dashboard.url)
    chrome.get(forget_dashboard.base + "/forget")
    Select(chrome.find_element(By.NAME, "project")).select_by_value("ai-music")
    chrome.execute_script("document.querySelector('input[name=before]').value = '2025-06-11'")
    chrome.find_element(By.CSS_SELECTOR, "form.forget button").click()
    _wait_for(chrome, "section.preview")

    rows = chrome.find_elements(By.CSS_SELECTOR, "tr.doomed")
    assert len(rows) == len(expected), chrome.find_element(By.TAG_NAME, "body").text[:600]
    assert (
        f"{len(expected)} chunks in 2 sessions of ai-music would be deleted"
        in chrome.find_element(By.TAG_NAME, "body").text
    )
    listed = {e.get_attribute("value") for e in chrome.find_elements(By.CSS_SELECTOR, "form.confirm input[name=id]")}
    assert listed == expected
    assert _chunks_by_session(forget_dashboard.home) == before, "a preview deletes nothing"
    screenshot(chrome, tmp_path / "screenshots", "forget-preview")

    # Meanwhile a hook ingests another session of the project that matches the same filter.
    causantic(forget_dashboard.home, "ingest", "--no-embed", str(SNIFFLY / f"{LATE}.jsonl"))
    late = _chunks_by_session(forget_dashboard.home)[LATE]
    assert late

    chrome.find_element(By.CSS_SELECTOR, "form.confirm button").click()
    _wait_for(chrome, ".notice.ok")
    assert f"Deleted {len(expected)} chunks of ai-music" in chrome.find_element(By.TAG_NAME, "body").text
    after = _chunks_by_session(forget_dashboard.home)
    assert after == {LATE: late}, "only the previewed chunks went; the session ingested after the preview stays"
    assert console_errors(chrome) == []
    screenshot(chrome, tmp_path / "screenshots", "forget-done")


def test_forget_with_no_filter_previews_the_whole_project_and_deletes_nothing_yet(
    forget_dashboard: Dashboard, chrome: Any
) -> None:
    before = _chunks_by_session(forget_dashboard.home)
    everything = before[FIRST] | before[PUSH]
    chrome.get(forget_dashboard.url)
    chrome.get(forget_dashboard.base + "/forget")
    Select(chrome.find_element(By.NAME, "project")).select_by_value("ai-music")
    chrome.find_element(By.CSS_SELECTOR, "form.forget button").click()
    _wait_for(chrome, "section.preview")
    body = chrome.find_element(By.TAG_NAME, "body").text
    assert f"{len(everything)} chunks in 2 sessions of the whole project ai-music would be deleted" in body
    listed = {e.get_attribute("value") for e in chrome.find_elements(By.CSS_SELECTOR, "form.confirm input[name=id]")}
    assert listed == everything  # the whole project, as the CLI previews it: only a confirmation deletes it
    assert _chunks_by_session(forget_dashboard.home) == before
