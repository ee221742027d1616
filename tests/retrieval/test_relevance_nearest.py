"""An everyday question asked of a memory of many real projects gets a plain "Nothing relevant",
while a real question keeps its answer: some chunk among hundreds shares a word or two with any
question ("keyboard", "interview"), but nothing in memory is near it (``relevance.nearestCosine``, opt-in)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from process_support import REAL_PROJECTS, REPO
from shared_data import require_shared

from causantic.cli.main import cli
from causantic.facade import Memory

PROJECTS = REPO.parent / "shared" / "corpus" / "claude-code" / REAL_PROJECTS
EVERYDAY = (
    "What is a good mechanical keyboard for typing all day?",
    "What is a good way to prepare for a system design interview?",
)
REAL = (
    ("How did we set up the Vite dev server so it works cross-platform?", "JSSoundRecorder"),
    ("Which npm scripts start the dev server?", "JSSoundRecorder"),
)

NEAREST_ON = {"relevance.nearestCosine": "0.32"}

pytestmark = pytest.mark.slow  # ingests eight real projects with their vectors (~25 s)


@pytest.fixture(scope="module")
def projects_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of every real project of the shared corpus's claude-code-log sample, with vectors."""
    folder = require_shared(PROJECTS, "The real projects of the shared corpus")
    home = tmp_path_factory.mktemp("projects-home")
    with Memory(home) as memory:
        report = memory.ingest([folder])
        assert report.errors == [] and memory.stats().chunks > 500
    return home


@pytest.mark.parametrize("query", EVERYDAY)
def test_an_everyday_question_is_told_nothing_relevant(
    projects_home: Path, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the query's nearest chunk counting (the default), a weak hit sharing a word or two
    # clears the floor; with it (relevance.nearestCosine 0.32, opt-in) the answer is "nothing".
    with Memory(projects_home) as memory:
        assert memory.search(query).hits
    with Memory(projects_home, overrides=NEAREST_ON) as memory:
        result = memory.search(query)
    assert result.nothing_relevant and result.nearest is not None
    monkeypatch.setenv("CAUSANTIC_HOME", str(projects_home))
    monkeypatch.setenv("CAUSANTIC_RELEVANCE_NEAREST_COSINE", "0.32")
    said = CliRunner().invoke(cli, ["search", query], catch_exceptions=False)
    assert said.exit_code == 0 and said.stdout.startswith("Nothing relevant in memory")


@pytest.mark.parametrize(("query", "project"), REAL)
def test_a_real_question_keeps_its_answer(projects_home: Path, query: str, project: str) -> None:
    with Memory(projects_home, overrides=NEAREST_ON) as memory:
        result = memory.search(query)
    assert result.hits and project in result.hits[0].chunk.project
