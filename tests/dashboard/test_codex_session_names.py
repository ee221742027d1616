"""The dashboard names a session as every other answer does (``short_session``): a Codex id begins
with the millisecond it was made, so two Codex sessions started within a minute both read
'019a085e' where the pages cut ids at 8 characters, while list-sessions and reconstruct name them
'019a085e-52e1' and '019a085e-5a00'."""

from __future__ import annotations

import re
from pathlib import Path

from dashboard_support import page_text
from starlette.testclient import TestClient
from transcript_files import write_codex_rollout

from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.facade import Memory

FIRST, SECOND = "019a085e-52e1-7000-8000-000000000001", "019a085e-5a00-7000-8000-000000000002"  # 30 s apart


def test_two_codex_sessions_started_within_a_minute_read_apart_on_the_pages(
    causantic_home: Path, tmp_path: Path
) -> None:
    sessions = tmp_path / "codex"
    said = "Added timer.py: a 25 minute pomodoro timer."
    write_codex_rollout(sessions, "/home/dev/timer", FIRST, [("add a pomodoro timer in timer.py", said)])
    asked = "continue: make the pomodoro timer in timer.py beep"  # the second goes on from the first: linked
    write_codex_rollout(sessions, "/home/dev/timer", SECOND, [(asked, "timer.py beeps at the end of the pomodoro.")])
    with Memory() as memory:
        memory.ingest([sessions], embed=False)
    secrets = Secrets(port=8766)
    with TestClient(create_app(secrets, opener=Memory), base_url="http://127.0.0.1:8766") as client:
        client.get("/", params={"token": secrets.token})
        timeline = page_text(client.get("/project", params={"name": "timer"}).text)
        found = page_text(client.get("/search", params={"q": "pomodoro timer", "mode": "keyword"}).text)
        linked = page_text(client.get(f"/session/{SECOND}").text)
        [csrf] = re.findall(r'name="csrf" value="([^"]+)"', client.get("/forget").text)[:1]
        form = {"csrf": csrf, "project": "timer", "session": "019a085e"}  # a prefix of both: both previewed
        doomed = client.post("/forget/preview", data=form, headers={"Origin": "http://127.0.0.1:8766"}).text
    assert "would be deleted" in doomed
    assert "cross-session session 019a085e-52e1 · 2026-11-02 09:00" in linked, linked  # its link to the first
    for page in (timeline, found, page_text(doomed)):
        assert "019a085e-52e1" in page and "019a085e-5a00" in page, page
