"""What a topic list leaves out, said plainly: how many chunks belong to no topic (HDBSCAN leaves
what fits no dense group as noise), of all memory or of one project, and why a list is empty after
a clustering that found nothing, rather than advice to run that clustering again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runs import cli_stdout
from transcript_files import write_session

LOGIN = [
    (f"The login page returns 401 after the token refresh ({n})", f"The refresh handler dropped the auth cookie {n}.")
    for n in range(8)
]
# Close to LOGIN but apart from it: the two split late, after the odd turns fell out as noise.
LOGOUT = [
    (f"The logout button leaves the session cookie set ({n})", f"The logout handler now expires the cookie {n}.")
    for n in range(8)
]
ODD = [("What is the capital of Mongolia?", "Ulaanbaatar."), ("Sing me a sea shanty", "Soon may the Wellerman come.")]


@pytest.fixture(scope="module")
def clustered_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("coverage")
    write_session(root / "projects", "/work/webapp", "aaaaaaaa-0000-4000-8000-000000000001", LOGIN + ODD)
    write_session(root / "projects", "/work/accounts", "aaaaaaaa-0000-4000-8000-000000000002", LOGOUT)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CAUSANTIC_HOME", str(root / "home"))
        cli_stdout("batch-ingest", str(root / "projects"))
        cli_stdout("cluster")
    return root / "home"


def test_the_topic_list_says_how_many_chunks_belong_to_no_topic(
    clustered_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_HOME", str(clustered_home))
    chunks = json.loads(cli_stdout("stats", "--json"))["chunk_count"]
    listed = json.loads(cli_stdout("clusters", "--json"))
    in_topics = sum(t["size"] for t in listed["topics"])
    assert listed["topics"] and 0 < in_topics < chunks, "the test sessions should leave some chunks out"
    assert listed["chunk_count"] == chunks and listed["in_no_topic"] == chunks - in_topics
    left_out = chunks - in_topics
    assert cli_stdout("clusters").splitlines()[-1] == (
        f"{left_out} of {chunks} chunks ({left_out / chunks:.0%}) belong to no topic."
    )


def test_a_project_topic_list_counts_that_project_s_chunks_only(
    clustered_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_HOME", str(clustered_home))
    projects = {p["name"]: p["chunk_count"] for p in json.loads(cli_stdout("list-projects", "--json"))["projects"]}
    listed = json.loads(cli_stdout("clusters", "--project", "accounts", "--json"))
    assert listed["chunk_count"] == projects["accounts"] < sum(projects.values())
    assert listed["in_no_topic"] == projects["accounts"] - sum(t["size"] for t in listed["topics"])
    assert all(t["projects"] == ["accounts"] for t in listed["topics"])


def test_after_a_clustering_that_found_none_the_list_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(tmp_path / "projects", "/work/tiny", "aaaaaaaa-0000-4000-8000-000000000003", ODD + LOGIN[:1])
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    cli_stdout("batch-ingest", str(tmp_path / "projects"))
    never = cli_stdout("clusters")
    assert "after `causantic cluster`" in never  # not clustered yet: running it is the advice
    why = "a topic needs at least 4 alike chunks (clustering.minClusterSize)"
    assert why in cli_stdout("cluster")
    after = cli_stdout("clusters")
    assert why in after and "3 chunks" in after and "`causantic cluster`" not in after


def test_clustering_an_empty_memory_says_to_ingest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    assert cli_stdout("cluster").strip() == "No embedded chunks to cluster yet: run `causantic batch-ingest` first."
    assert "memory holds no chunks yet" in cli_stdout("clusters")


def test_a_topic_without_words_is_not_named_after_another_topic_s_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Turns of figures only: no word to label them with. The label used to be "topic <n>", n being
    # the clustering's own count, not the id the list shows beside it.
    figures = [(f"{1000 + n} {2000 + n} {3000 + n}", f"{4000 + n} {5000 + n}") for n in range(8)]
    write_session(tmp_path / "projects", "/work/figures", "aaaaaaaa-0000-4000-8000-000000000004", LOGIN + figures)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    cli_stdout("batch-ingest", str(tmp_path / "projects"))
    cli_stdout("cluster")
    topics = json.loads(cli_stdout("clusters", "--json"))["topics"]
    assert len(topics) == 2
    unnamed = [t for t in topics if not any(ch.isalpha() for ch in t["label"].replace("unnamed topic", ""))]
    assert [t["label"] for t in unnamed] == ["unnamed topic"], topics


def _topics_page(home: Path) -> tuple[int, str]:
    """The dashboard's /topics over ``home`` (in-process): its status and page."""
    from starlette.testclient import TestClient

    from causantic.dashboard.app import create_app
    from causantic.dashboard.security import Secrets
    from causantic.facade import Memory

    secrets = Secrets(port=8765)
    app = create_app(secrets, opener=lambda: Memory(home))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        page = client.get("/topics", params={"token": secrets.token})
    return page.status_code, page.text


def test_the_topics_page_draws_its_map_where_scikit_learn_is_not_installed(
    clustered_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Team memory clustered by a teammate has topics for a member whose install left the topics
    # extra out: the page must still draw them (it used to fail with an error page).
    for module in ("sklearn", "sklearn.decomposition"):
        monkeypatch.setitem(sys.modules, module, None)  # import sklearn raises ImportError
    status, page = _topics_page(clustered_home)
    assert status == 200, page[:500]
    assert page.count('class="pt"') == 16 and "belong to no topic" in page


def test_a_forgotten_project_s_topics_leave_the_counts_and_the_topics_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(tmp_path / "projects", "/work/webapp", "aaaaaaaa-0000-4000-8000-000000000007", LOGIN + ODD)
    write_session(tmp_path / "projects", "/work/accounts", "aaaaaaaa-0000-4000-8000-000000000008", LOGOUT)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    cli_stdout("batch-ingest", str(tmp_path / "projects"))
    cli_stdout("cluster")
    assert json.loads(cli_stdout("stats", "--json"))["topic_count"] == 2
    cli_stdout("forget", "accounts", "--yes")
    assert json.loads(cli_stdout("stats", "--json"))["topic_count"] == 1
    status, page = _topics_page(tmp_path / "home")
    assert status == 200 and "<h2>1 topic</h2>" in page  # one, said in the singular
    assert "logout" not in page and '<td class="num">0</td>' not in page


def test_an_ingest_that_reclusters_says_how_many_chunks_are_in_no_topic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(tmp_path / "projects", "/work/webapp", "aaaaaaaa-0000-4000-8000-000000000005", LOGIN + ODD)
    write_session(tmp_path / "projects", "/work/accounts", "aaaaaaaa-0000-4000-8000-000000000006", LOGOUT)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAUSANTIC_CLUSTERING_RECLUSTER_AFTER_NEW_CHUNKS", "10")
    report = json.loads(cli_stdout("batch-ingest", str(tmp_path / "projects"), "--json"))
    assert report["topics_note"] == "reclustered: 2 topics over 16 of 18 chunks, 2 in no topic"
