"""Helpers for the dashboard tests: the real server as a subprocess, the CLI, the browser log.

The server runs as ``python -m causantic dashboard`` exactly as a user starts it, and is found
through the URL it prints.
"""

from __future__ import annotations

import http.client
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CORPUS = (REPO / ".." / "shared" / "corpus" / "claude-code").resolve()
SNIFFLY = CORPUS / "chiphuyen__sniffly/tests/mock-data/-Users-chip-dev-ai-music"
KFISCHER = CORPUS / "kfischer-okarin__scripts-and-tools/src/claude-history/test/fixtures/claude-projects"
RANDLEE = CORPUS / "randlee__claude-history/docs/examples/claude-history-simple/export/source"
BROWSER_HINT = (
    "the browser tests need Debian's chromium and chromium-driver "
    "(apt-get install -y chromium chromium-driver) and selenium (pip install -e '.[dev]')"
)
EXAMPLES = REPO / "src" / "causantic" / "examples" / "sessions"  # shipped with the package
REBOUND_HOST = "rebound.test"  # the browser resolves it to 127.0.0.1, like a DNS-rebinding attack
START_TIMEOUT_S = 60


def causantic(home: Path, *args: str, stdin: str | None = None, timeout: float = 600) -> str:
    """Run the CLI as a user would, against ``home``; fail with its output when it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "causantic", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(home),
        timeout=timeout,
    )
    assert done.returncode == 0, f"causantic {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("CAUSANTIC_")}
    return {
        **keep,
        "CAUSANTIC_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])),
    }


@dataclass
class Dashboard:
    """A running ``causantic dashboard``: its printed URL, and where it is."""

    url: str  # as printed, with the token
    process: subprocess.Popen[str]
    home: Path
    reader: threading.Thread  # drains the server's output so it never blocks on a full pipe

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    @property
    def token(self) -> str:
        return self.url.rsplit("token=", 1)[1]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=15)
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_dashboard(home: Path, command: tuple[str, ...] = ("-m", "causantic", "dashboard")) -> Dashboard:
    """``causantic dashboard`` on ``home`` (``command``: Python's arguments that start it)."""
    process = subprocess.Popen(
        [sys.executable, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(home),
        cwd=home.parent,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=START_TIMEOUT_S)
        except queue.Empty:
            process.kill()
            process.wait()
            raise AssertionError(f"causantic dashboard printed no URL in {START_TIMEOUT_S} s: {seen}") from None
        seen.append(line)
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
        if found:
            return Dashboard(found.group(0), process, home, reader)


def open_page(driver: Any, dashboard: Dashboard, path: str) -> None:
    """Open ``path`` of the dashboard in the browser, signed in: the token URL first sets the cookie."""
    driver.get(dashboard.url)  # trades the token for this server's cookie
    driver.get(dashboard.base + path)


def http_request(
    dashboard: Dashboard,
    method: str,
    path: str,
    *,
    host: str | None = None,
    cookie: bool = True,
    headers: dict[str, str] | None = None,
    body: str | None = None,
) -> tuple[int, dict[str, str], str]:
    """One request as the dashboard's pages send it (its cookie; a form body when given): status, headers, text."""
    conn = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=60)
    sent = {"Host": host or f"127.0.0.1:{dashboard.port}", **(headers or {})}
    if cookie:
        sent["Cookie"] = f"causantic_dashboard_{dashboard.port}={dashboard.token}"
    if body is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body=body, headers=sent)
    response = conn.getresponse()
    text = response.read().decode("utf-8", "replace")
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def page_text(html: str) -> str:
    """A page's words as a reader reads them: tags dropped, runs of white space one space (entities kept)."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def csrf_of(dashboard: Dashboard) -> str:
    """The CSRF token the forget form carries, as a page would post it back."""
    _, _, page = http_request(dashboard, "GET", "/forget")
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "the forget form carries the CSRF token"
    return found.group(1)


@contextmanager
def window_size(driver: Any, width: int, height: int) -> Iterator[None]:
    """The browser window at ``width`` × ``height`` for the block, then back to the 1280 × 1000 every
    test starts from (a test that fails inside leaves the next one its usual window)."""
    driver.set_window_size(width, height)
    try:
        yield
    finally:
        driver.set_window_size(1280, 1000)


def console_errors(driver: Any) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver: Any, folder: Path, name: str) -> Path:
    """The whole page (the window grows to its height), saved as ``folder/name.png``."""
    folder.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, max(600, min(int(height) + 40, 4000)))
    path = folder / f"{name}.png"
    assert driver.save_screenshot(str(path)), f"no screenshot of {name}"
    driver.set_window_size(1280, 1000)
    return path


def fits_sideways(driver: Any, where: str) -> int:
    """The window's width, once the page is seen to be no wider."""
    page, window = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert page <= window, f"{where} is {page} px wide in a {window} px window"
    return int(window)


def in_sight(driver: Any, element: Any, window: int) -> None:
    """``element`` is shown and lies within the window's width (not scrolled out of a box)."""
    left, right = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.left, r.right]", element
    )
    assert element.is_displayed() and 0 <= left and right <= window, (element.text, left, right, window)


def pixels_of_colour(driver: Any, element: Any, rgb: tuple[int, int, int], within: int = 30) -> int:
    """How many pixels of ``element`` as drawn on screen lie within ``within`` of ``rgb`` in each
    channel: a focus ring's colour, where no computed style shows it (counted by the browser's canvas)."""
    shot = element.screenshot_as_base64
    return int(
        driver.execute_async_script(
            """const [shot, rgb, within, done] = arguments;
            const img = new Image();
            img.onload = () => {
              const canvas = document.createElement("canvas");
              canvas.width = img.width; canvas.height = img.height;
              const g = canvas.getContext("2d");
              g.drawImage(img, 0, 0);
              const px = g.getImageData(0, 0, img.width, img.height).data;
              let n = 0;
              for (let i = 0; i < px.length; i += 4) {
                if ([0, 1, 2].every((c) => Math.abs(px[i + c] - rgb[c]) <= within)) n++;
              }
              done(n);
            };
            img.src = "data:image/png;base64," + shot;""",
            shot,
            list(rgb),
            within,
        )
    )
