"""Fixtures: headless Chromium, a store ingested from real transcripts, running dashboards.

Browser tests use Debian's ``chromium`` through ``chromium-driver`` (Selenium, the ``dev`` extra);
nothing is downloaded at test time. Where no browser is installed they skip and say what to
install; ``.ci/run`` installs both.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import (
    BROWSER_HINT,
    EXAMPLES,
    KFISCHER,
    RANDLEE,
    REBOUND_HOST,
    SNIFFLY,
    Dashboard,
    causantic,
    start_dashboard,
)


@pytest.fixture(scope="session")
def chrome() -> Iterator[Any]:
    """One headless Chromium for the session (cookies are per port, so servers do not mix)."""
    yield from _chromium(javascript=True)


@pytest.fixture(scope="session")
def chrome_without_js() -> Iterator[Any]:
    """Headless Chromium with JavaScript off for pages (a reader who turned it off): what the server
    sends is all the page shows. The tests' own ``execute_script`` still runs."""
    yield from _chromium(javascript=False)


def _chromium(*, javascript: bool) -> Iterator[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip(f"selenium is not installed: {BROWSER_HINT}")
    if not chromium or not driver_path:
        pytest.skip(f"no chromium/chromedriver on this machine: {BROWSER_HINT}")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,1000",
        f"--host-resolver-rules=MAP {REBOUND_HOST} 127.0.0.1",
    ):
        options.add_argument(arg)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def corpus_home(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Path:
    """A store ingested from real transcripts (with vectors and topics), and one real hook run."""
    home = tmp_path_factory.mktemp("dashboard") / "home"
    causantic(home, "ingest", str(SNIFFLY), str(KFISCHER), str(RANDLEE))
    causantic(home, "cluster")
    causantic(
        home,
        "hook",
        "session-start",
        stdin='{"session_id": "dashboard-test", "cwd": "/Users/chip/dev/ai-music", "source": "startup"}',
    )
    return home


@pytest.fixture(scope="session")
def corpus_dashboard(corpus_home: Path) -> Iterator[Dashboard]:
    dashboard = start_dashboard(corpus_home)
    try:
        yield dashboard
    finally:
        dashboard.stop()


@pytest.fixture(scope="module")
def empty_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """A dashboard over a memory nothing was ingested into (no corpus needed)."""
    dashboard = start_dashboard(tmp_path_factory.mktemp("empty") / "home")
    try:
        yield dashboard
    finally:
        dashboard.stop()


@pytest.fixture(scope="module")
def example_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """A dashboard over the packaged example sessions (acme-shop), without vectors: no corpus needed."""
    home = tmp_path_factory.mktemp("examples") / "home"
    causantic(home, "batch-ingest", str(EXAMPLES), "--no-embed")
    dashboard = start_dashboard(home)
    try:
        yield dashboard
    finally:
        dashboard.stop()
