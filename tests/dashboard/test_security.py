"""The dashboard's door, tested on the real server over real HTTP and in the browser.

Loopback only; a foreign Host (DNS rebinding) or Origin is refused; nothing is served without the
per-run token; a state-changing request needs the CSRF token; static files come from a fixed
table, so no path reaches the filesystem and no folder is listed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from dashboard_support import REBOUND_HOST, Dashboard, console_errors, csrf_of, http_request


def test_the_printed_url_is_on_loopback_and_its_token_becomes_a_strict_cookie(empty_dashboard: Dashboard) -> None:
    assert empty_dashboard.base.startswith("http://127.0.0.1:")
    status, headers, _ = http_request(empty_dashboard, "GET", f"/?token={empty_dashboard.token}", cookie=False)
    assert status == 303
    assert headers["location"] == "/", "the token leaves the address bar"
    cookie = headers["set-cookie"]
    assert f"causantic_dashboard_{empty_dashboard.port}={empty_dashboard.token}" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


@pytest.mark.parametrize("path", ["/", "/projects", "/settings", "/static/style.css", "/search?q=x"])
def test_nothing_is_served_without_the_token(empty_dashboard: Dashboard, path: str) -> None:
    status, _, body = http_request(empty_dashboard, "GET", path, cookie=False)
    assert status == 401
    assert "causantic dashboard" in body
    status, _, _ = http_request(
        empty_dashboard, "GET", path + ("&" if "?" in path else "?") + "token=wrong", cookie=False
    )
    assert status == 401


def test_a_foreign_host_or_origin_is_refused(empty_dashboard: Dashboard) -> None:
    port = empty_dashboard.port
    assert http_request(empty_dashboard, "GET", "/")[0] == 200
    assert http_request(empty_dashboard, "GET", "/", host=f"localhost:{port}")[0] == 200
    for host in (f"evil.example:{port}", f"{REBOUND_HOST}:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}"):
        status, _, body = http_request(empty_dashboard, "GET", "/", host=host)
        assert status == 403, host
        assert "Host not allowed" in body
    for origin in ("http://evil.example", f"http://{REBOUND_HOST}:{port}", "null", f"https://127.0.0.1:{port}"):
        assert http_request(empty_dashboard, "GET", "/", headers={"Origin": origin})[0] == 403, origin


def test_a_state_change_needs_our_origin_and_the_csrf_token(empty_dashboard: Dashboard) -> None:
    origin = {"Origin": f"http://127.0.0.1:{empty_dashboard.port}"}
    form = {"project": "nope", "session": "abcd"}
    csrf = csrf_of(empty_dashboard)
    for headers, fields in (
        (origin, form),
        (origin, {**form, "csrf": "forged"}),
        ({}, {**form, "csrf": csrf}),
        ({"Origin": "http://evil.example"}, {**form, "csrf": csrf}),
    ):
        status, _, _ = http_request(empty_dashboard, "POST", "/forget/preview", headers=headers, body=urlencode(fields))
        assert status == 403, (headers, fields)
    # With both, the request reaches the page, which answers the form itself (no such project).
    status, _, body = http_request(
        empty_dashboard, "POST", "/forget/preview", headers=origin, body=urlencode({**form, "csrf": csrf})
    )
    assert status == 400
    assert "No project named" in body


@pytest.mark.parametrize(
    "path",
    [
        "/static/",
        "/static",
        "/static/..%2F..%2Fpyproject.toml",
        "/static/%2e%2e/app.py",
        "/static/../app.py",
        "/static/.%2Fstyle.css",
        "/templates/base.html",
        "/static/style.css%00.png",
    ],
)
def test_no_folder_is_listed_and_no_path_reaches_the_filesystem(empty_dashboard: Dashboard, path: str) -> None:
    status, _, body = http_request(empty_dashboard, "GET", path)
    assert status == 404, (path, body[:200])
    # The dashboard's own error page: its links are the fixed pages, never a listed file.
    pages = {"/", "/projects", "/search", "/topics", "/forget", "/settings"}
    assert set(re.findall(r'<a href="([^"]*)"', body)) <= pages
    assert "[project]" not in body and "{% " not in body, "no file's text is served"


def test_pages_carry_a_strict_content_security_policy(empty_dashboard: Dashboard) -> None:
    status, headers, _ = http_request(empty_dashboard, "GET", "/")
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    status, headers, css = http_request(empty_dashboard, "GET", "/static/style.css")
    assert status == 200 and headers["content-type"].startswith("text/css") and ":root" in css


def test_the_server_listens_on_loopback_only(empty_dashboard: Dashboard) -> None:
    table = Path("/proc/net/tcp")
    if not table.is_file():
        pytest.skip("no /proc/net/tcp here to read listening sockets from")
    port = f"{empty_dashboard.port:04X}"
    listening = [
        line.split()[1]
        for line in table.read_text().splitlines()[1:]
        if line.split()[1].endswith(f":{port}") and line.split()[3] == "0A"
    ]
    assert listening == ["0100007F:" + port], "bound to 127.0.0.1 and nothing else"


def test_a_dns_rebinding_page_in_the_browser_is_refused(empty_dashboard: Dashboard, chrome: Any) -> None:
    from selenium.webdriver.common.by import By

    # The browser resolves rebound.test to 127.0.0.1, as an attacker's rebinding DNS would.
    chrome.get(f"http://{REBOUND_HOST}:{empty_dashboard.port}/?token={empty_dashboard.token}")
    assert "Host not allowed" in chrome.find_element(By.TAG_NAME, "body").text
    console_errors(chrome)  # the 403 itself is logged; what matters is that nothing was served


def test_every_page_of_an_empty_memory_loads_without_a_console_error(empty_dashboard: Dashboard, chrome: Any) -> None:
    from selenium.webdriver.common.by import By

    chrome.get(empty_dashboard.url)
    console_errors(chrome)
    for path, shown in (
        ("/", "Memory is empty"),
        ("/projects", "No projects in memory yet"),
        ("/search?q=anything", "Nothing relevant in memory"),
        ("/topics", "No topics yet"),
        ("/forget", "Preview"),
        ("/settings", "retrieval.mmrLambda"),
    ):
        chrome.get(empty_dashboard.base + path)
        assert shown in chrome.find_element(By.TAG_NAME, "body").text, path
        assert console_errors(chrome) == [], path


def test_a_taken_port_is_the_same_one_clear_sentence_as_for_serve_http(free_tcp_port: int) -> None:
    import socket

    from click.testing import CliRunner

    from causantic.cli.main import cli

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", free_tcp_port))
        holder.listen(1)
        done = CliRunner().invoke(cli, ["dashboard", "--port", str(free_tcp_port)])
    assert done.exit_code == 1
    assert done.stderr.strip() == (
        f"Error: Port {free_tcp_port} on 127.0.0.1 is already in use by another program; choose another with --port."
    )
