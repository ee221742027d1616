"""The dashboard's pages over team memory: the same app, with its store in PostgreSQL."""

from __future__ import annotations

from typing import Any

from postgres_server import new_database
from starlette.testclient import TestClient

from causantic.config import Config
from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.examples import SESSIONS_DIR
from causantic.facade import Memory
from causantic.ingest.service import ingest_paths
from causantic.services import open_services


def test_every_page_answers_over_postgres(postgres_server: Any) -> None:
    url = new_database(postgres_server)
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
        assert client.get("/", params={"token": secrets.token}).status_code == 200
        for path in ("/", "/projects", f"/project?name={session.name}", f"/session/{session_id}", "/topics"):
            page = client.get(path)
            assert page.status_code == 200, (path, page.text[:300])
        found = client.get("/search", params={"q": "redirect"})
        assert found.status_code == 200 and "acme-shop" in found.text  # a hit, found through PostgreSQL
        assert url not in client.get("/settings").text
