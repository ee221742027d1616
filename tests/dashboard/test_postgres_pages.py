"""The dashboard's pages over team memory: the same app, with its store in PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from postgres_server import new_database
from starlette.testclient import TestClient

from causantic.config import Config
from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.examples import SESSIONS_DIR
from causantic.facade import Memory
from causantic.ingest.service import ingest_paths
from causantic.services import open_services


def test_every_page_answers_over_postgres(postgres_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    url = new_database(postgres_server)
    # The settings page reads the configuration as the user set it, where the URL is a secret.
    monkeypatch.setenv("CAUSANTIC_STORAGE_BACKEND", "postgres")
    monkeypatch.setenv("CAUSANTIC_STORAGE_POSTGRES_URL", url)
    config = Config().with_overrides(
        {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": "alice", "team.shareProjects": "all"}
    )
    with open_services(config) as services:
        ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
        session = services.store.project_activity()[0]
        session_id = services.store.session_summaries(session.id)[0].session_id
    secrets = Secrets(port=8765)
    app = create_app(secrets, opener=lambda: Memory(config=config))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        overview = client.get("/", params={"token": secrets.token})
        assert overview.status_code == 200
        assert "vector-only" not in overview.text  # PostgreSQL's keyword index is on, if worded differently
        for path in ("/", "/projects", f"/project?name={session.name}", f"/session/{session_id}", "/topics"):
            page = client.get(path)
            assert page.status_code == 200, (path, page.text[:300])
        # Whose sessions each project holds, as `causantic list-projects` says it in team memory.
        projects = client.get("/projects").text
        assert "<th>by member</th>" in projects and 'data-label="by member">alice 3</td>' in projects
        found = client.get("/search", params={"q": "redirect"})
        assert found.status_code == 200 and "acme-shop" in found.text  # a hit, found through PostgreSQL
        settings = client.get("/settings")
        assert settings.status_code == 200, settings.text[:300]
        assert url not in settings.text and "**********" in settings.text
