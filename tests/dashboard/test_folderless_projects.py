"""A project known by its folder's hash alone (a Gemini CLI session that names no path of its
folder) has no folder to show: `list-projects`, the list-projects tool and the dashboard's pages
showed its name ('gemini:7e3795038f20e7ce') a second time as its path."""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
from click.testing import CliRunner
from dashboard_support import EXAMPLES, page_text
from mcp import Client
from starlette.testclient import TestClient
from transcript_files import write_gemini_log

from causantic.cli.main import cli
from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.facade import Memory
from causantic.mcp.server import build_server

GARDEN = "/home/dev/garden"  # the folder; the session never names it, so only its hash is known


def test_a_project_known_by_its_folder_s_hash_alone_shows_no_path(causantic_home: Path, tmp_path: Path) -> None:
    chats = tmp_path / "gemini" / "tmp" / hashlib.sha256(GARDEN.encode()).hexdigest() / "chats"
    steps = [{"user": "how often should the tomatoes be watered"}, {"gemini": "Twice a week, in the morning."}]
    write_gemini_log(chats, GARDEN, "5e551010-aaaa-4bbb-8ccc-000000000009", steps)
    with Memory() as memory:
        memory.ingest([EXAMPLES, tmp_path / "gemini"], embed=False)
        [name] = [p.name for p in memory.projects() if p.name != "acme-shop"]
    assert name.startswith("gemini:")

    shown = CliRunner().invoke(cli, ["list-projects"], env={"COLUMNS": "200"}, catch_exceptions=False).output
    [row] = [line for line in shown.splitlines() if name in line]
    assert row.count(name) == 1 and row.rstrip().endswith("—"), row
    assert "/home/dev/acme-shop" in shown  # a folder that is known is shown

    async def ask() -> str:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return str((await client.call_tool("list-projects", {})).content[0].text)

    [line] = [line for line in anyio.run(ask).splitlines() if name in line]
    assert line.count(name) == 1 and line.endswith(")"), line

    secrets = Secrets(port=8766)
    with TestClient(create_app(secrets, opener=Memory), base_url="http://127.0.0.1:8766") as client:
        overview = page_text(client.get("/", params={"token": secrets.token}).text)
        projects = page_text(client.get("/projects").text)
        sessions = client.get("/project", params={"name": name}).text
    for page in (overview, projects):
        assert page.count(name) == 1 and f"{name} " in page and "/home/dev/acme-shop" in page
    assert 'class="muted path"' not in sessions and page_text(sessions).count(name) >= 1
