"""The Settings page shows the configuration of the memory the dashboard serves."""

from __future__ import annotations

import json
import re
from pathlib import Path

from starlette.testclient import TestClient

from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.facade import Memory


def test_the_settings_page_reads_the_served_memorys_own_config_file(tmp_path: Path) -> None:
    """It read the default home's config.json ($CAUSANTIC_HOME), so a dashboard opened on another
    home showed settings that memory was not using."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "config.json").write_text(json.dumps({"retrieval": {"mmrLambda": 0.55}}))
    secrets = Secrets(port=8765)
    app = create_app(secrets, opener=lambda: Memory(served))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/", params={"token": secrets.token}).status_code == 200
        page = client.get("/settings").text
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*retrieval\.mmrLambda(?:(?!</tr>).)*</tr>", page, re.S)
    assert row is not None and "0.55" in row.group(0) and str(served / "config.json") in row.group(0)
