"""The Projects page, a new project's folder and pages without topics, read over real HTTP from the
running server, each in the CLI's words: `list-projects`' chunk counts, `list-sessions`' "Nothing in
memory for … yet" (an answer, not an error page), and `clusters`' reason for having no topics,
an ingest still running included; with team memory not answering, that the pages show local
memory alone, as `list-projects` and `stats` warn.

The stores are the packaged example sessions of acme-shop (6 chunks in 3 sessions): without
vectors (``example_dashboard``), and with them but too few for an ingest to cluster (``embedded``).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from dashboard_support import EXAMPLES, Dashboard, causantic, http_request, page_text, start_dashboard
from starlette.testclient import TestClient

from causantic.config import Config
from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.facade import Memory
from causantic.ingest_runs import IngestProgress

NEW_FOLDER = "/home/dev/brand-new-app"  # an agent's cwd in a project never ingested


def _said(page: str) -> str:
    """What a reader reads, with the CLI's `backticks` gone (pages set commands as code)."""
    return html.unescape(page_text(page))


def _unlinked(page: str) -> str:
    """A page with its links' tags gone, their words left where they stood."""
    return re.sub(r"</?a\b[^>]*>", "", page)


def _cli(dashboard: Dashboard, *args: str) -> str:
    """The CLI's answer as a page shows it: one line, commands without their backticks."""
    return " ".join(causantic(dashboard.home, *args).split()).replace("`", "")


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """acme-shop with vectors: 6 chunks, fewer than an ingest clusters, so no topics yet."""
    home = tmp_path_factory.mktemp("embedded") / "home"
    causantic(home, "batch-ingest", str(EXAMPLES))
    dashboard = start_dashboard(home)
    try:
        yield dashboard
    finally:
        dashboard.stop()


def test_the_projects_page_counts_each_project_s_chunks_as_list_projects_does(example_dashboard: Dashboard) -> None:
    listed = json.loads(causantic(example_dashboard.home, "list-projects", "--json"))["projects"]
    assert [(p["name"], p["chunk_count"], p["session_count"]) for p in listed] == [("acme-shop", 6, 3)]
    status, _, page = http_request(example_dashboard, "GET", "/projects")
    assert status == 200
    assert re.search(r"<th[^>]*>chunks</th>\s*<th[^>]*>sessions</th>", page), "the columns of list-projects"
    assert "acme-shop 6 3 " in page_text(page)
    assert 'data-label="chunks">6<' in page  # said once the headings are out of sight (a phone)


def test_no_topics_says_why_as_clusters_does_and_an_ingest_running_says_they_come_after_it(
    example_dashboard: Dashboard,
) -> None:
    idle = _cli(example_dashboard, "clusters")
    assert idle == "No topics yet. They appear after causantic cluster (or a batch ingest with enough chunks)."
    _, _, page = http_request(example_dashboard, "GET", "/topics")
    assert idle in _said(page)
    with IngestProgress(example_dashboard.home, [Path("/data/projects")]):  # as batch-ingest keeps it
        running = _cli(example_dashboard, "clusters")
        assert running == (
            "No topics yet: an ingest is running. Topics appear when it ends (it clusters once enough new "
            "chunks are embedded), or run causantic cluster after it."
        )
        _, _, page = http_request(example_dashboard, "GET", "/topics")
        assert running in _said(page)
    _, _, page = http_request(example_dashboard, "GET", "/topics")
    assert idle in _said(page) and "an ingest is running" not in page


def test_the_overview_says_why_there_are_no_topics_in_the_words_of_clusters(embedded: Dashboard) -> None:
    """It said "No topics yet: run causantic cluster." also while an ingest that clusters at its end ran."""
    _, _, page = http_request(embedded, "GET", "/")
    assert "6 vectors" in _said(page) and "0 topics" in _said(page)
    assert _cli(embedded, "clusters") in _said(page)
    with IngestProgress(embedded.home, [Path("/data/projects")]):
        _, _, page = http_request(embedded, "GET", "/")
        assert _cli(embedded, "clusters") in _said(page)
        assert "an ingest is running. Topics appear when it ends" in _said(page)
        assert "No topics yet: run" not in _said(page)


def test_empty_memory_while_the_first_ingest_runs_does_not_say_run_batch_ingest(empty_dashboard: Dashboard) -> None:
    with IngestProgress(empty_dashboard.home, [Path("/data/projects")]):
        _, _, page = http_request(empty_dashboard, "GET", "/")
        assert "Memory is empty so far: the ingest running now is reading your sessions." in _said(page)
        assert "batch-ingest" not in page
    _, _, page = http_request(empty_dashboard, "GET", "/")
    assert "Memory is empty: run causantic batch-ingest to read your sessions." in _said(page)


def test_a_new_project_s_folder_gets_the_cli_s_answer_not_an_error_page(example_dashboard: Dashboard) -> None:
    said = _cli(example_dashboard, "list-sessions", NEW_FOLDER)
    assert said.startswith(f"Nothing in memory for {NEW_FOLDER} yet: its sessions are remembered once ingested")
    status, _, page = http_request(example_dashboard, "GET", "/project?" + urlencode({"name": NEW_FOLDER}))
    assert status == 200, _said(page)
    assert said in _said(_unlinked(page))  # the projects it names are links: read as their words
    assert "Something needs your attention" not in page and "No project named" not in page
    assert f"<h1>{NEW_FOLDER}</h1>" in page
    for kind in ("search", "recall", "predict"):
        query = "/search?" + urlencode({"kind": kind, "q": "deploy", "project": NEW_FOLDER})
        assert _cli(example_dashboard, kind, "deploy", "--project", NEW_FOLDER) == said
        status, _, page = http_request(example_dashboard, "GET", query)
        assert status == 200 and said in _said(_unlinked(page)), kind
        assert f'<option value="{NEW_FOLDER}" selected>' in page, "the form keeps the folder it searched"
        status, _, part = http_request(example_dashboard, "GET", query, headers={"X-Partial": "results"})
        assert status == 200 and said in _said(_unlinked(part)) and "<header" not in part, kind


def test_a_new_folder_s_answer_links_the_projects_memory_holds(example_dashboard: Dashboard) -> None:
    """'(known projects: acme-shop)' was a name to retype: it opens acme-shop's page."""
    for asked in (
        "/project?" + urlencode({"name": NEW_FOLDER}),
        "/search?" + urlencode({"q": "deploy", "project": NEW_FOLDER}),
    ):
        status, _, page = http_request(example_dashboard, "GET", asked)
        assert status == 200 and 'known projects: <a href="/project?name=acme-shop">acme-shop</a>)' in page, asked


def test_a_misspelt_project_name_is_still_an_error_that_names_the_nearest(example_dashboard: Dashboard) -> None:
    status, _, page = http_request(example_dashboard, "GET", "/project?name=acme-shpo")
    assert status == 404
    # The name is a link (the next test): read as its words.
    assert "No project named 'acme-shpo' in memory: did you mean acme-shop?" in _said(_unlinked(page))


def test_a_misspelt_project_name_s_nearest_names_are_links_to_the_page_asked_for(example_dashboard: Dashboard) -> None:
    """'did you mean acme-shop?' was words to retype: each name is now the same page (the same search,
    its other fields kept) for that project, in the page and in the search form's results alike."""
    for asked, meant, headers in (
        ("/project?name=acme-shpo", "/project?name=acme-shop", {}),
        ("/search?q=deploy&kind=recall&project=acme-shpo", "/search?q=deploy&kind=recall&project=acme-shop", {}),
        ("/search?q=deploy&project=acme-shpo", "/search?q=deploy&project=acme-shop", {"X-Partial": "results"}),
    ):
        status, _, page = http_request(example_dashboard, "GET", asked, headers=headers)
        assert status in (400, 404), asked
        assert f'did you mean <a href="{html.escape(meant)}">acme-shop</a>?' in page, page_text(page)
        status, _, page = http_request(example_dashboard, "GET", meant)
        assert status == 200 and "No project named" not in page, meant


def test_with_team_memory_unreachable_the_overview_and_projects_say_they_show_local_memory_alone(
    tmp_path: Path,
) -> None:
    """Shared projects vanished from the Projects page unexplained, and the overview said "All healthy"."""
    socket_dir = tmp_path / "no-server"  # a PostgreSQL that is not running: refused at once
    config = Config().with_overrides(
        {
            "storage.backend": "postgres",
            "storage.postgresUrl": f"postgresql://alice:s3cret-pw@/causantic?host={socket_dir}",
            "team.shareProjects": "all",
        }
    )
    secrets = Secrets(port=8766)
    with TestClient(create_app(secrets, opener=lambda: Memory(config=config)), base_url="http://127.0.0.1:8766") as c:
        overview = _said(c.get("/", params={"token": secrets.token}).text)
        assert "These are local memory's figures only. Cannot reach the team memory" in overview
        assert "All healthy" not in overview
        projects = _said(c.get("/projects").text)
        assert "Local memory's projects only. Cannot reach the team memory" in projects
        assert "s3cret-pw" not in overview + projects
