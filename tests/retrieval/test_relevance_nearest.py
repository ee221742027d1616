"""An everyday question asked of a memory of many real projects gets a plain "Nothing relevant"
(search, CLI and MCP), while a real question keeps its answer and a vague request in a project's own
words still finds its session: some chunk among a thousand shares a word or two with any question
("keyboard", "team"), but nothing in memory is near it (``relevance.nearestCosine``); the vague
request has nothing near either, but memory knows each of its words well (``relevance.knownChunks``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from process_support import REAL_PROJECTS, REPO, McpProcess, subprocess_env
from shared_data import require_shared

from causantic.cli.main import cli
from causantic.facade import Memory

CLAUDE_CODE = REPO.parent / "shared" / "corpus" / "claude-code"
PROJECTS = CLAUDE_CODE / REAL_PROJECTS
# Four of the claude-code-log sample's real projects (its four largest left out: the store still holds
# over a thousand chunks, and each question below is answered as over all eight, in a third less time).
SAMPLE_PROJECTS = ("-Users-dain-workspace-JSSoundRecorder", "-experiments-ideas", "-experiments-worktrees",
                   "-src-experiments-claude_p")  # fmt: skip
CODING_PROJECT = CLAUDE_CODE / "entireio__cli"  # the coding dev set's project (benchmarks/coding.py)
EVERYDAY = (
    "What is a good mechanical keyboard for typing all day?",
    "What time is the team standup tomorrow?",
    "Which noise cancelling headphones are best for an open office?",
)
# Developers' questions about stacks none of these projects use (benchmarks/relevance_floor.py OTHER_STACKS,
# UNKNOWN_PROJECTS): each shares "build", "config", "memory" or "CI" with some chunk, and its nearest chunk
# (0.33 and 0.33 in this store of 1,018 chunks) was near enough at 0.32 for a weak hit to be shown
# (relevance.largeNearestCosine).
OTHER_STACKS = (
    "What did we change in the Webpack 5 module federation config for the shell app?",
    "Why did the Terraform plan keep recreating the RDS instance in staging?",
)
REAL = (
    ("How did we set up the Vite dev server so it works cross-platform?", "JSSoundRecorder"),
    ("Which npm scripts start the dev server?", "JSSoundRecorder"),
)
# A vague request of the coding dev set (dev007): its nearest chunk is far (0.27 in this store), yet
# the session that did the work is found.
VAGUE = "Will this get properly redacted?"
VAGUE_SESSION = "595f7a87-dd6e-4eb7-943a-b2b009259be7"
# A query of the coding dev set (dev018) asked of the project that made the commit: in that project's
# few hundred chunks nothing is near it (0.31), in the whole memory something is.
NARROWED = ("added a section about general capabilities", "devenv/cli")
CHECK_OFF = {"relevance.nearestCosine": "-1", "relevance.largeNearestCosine": "-1"}

pytestmark = pytest.mark.slow  # ingests real projects with their vectors (~1,000 chunks, ~40 s)


@pytest.fixture(scope="module")
def projects_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of real projects of the claude-code-log sample and the coding dev set's project, with vectors."""
    require_shared(PROJECTS, "The real projects of the shared corpus")
    folders = [
        *(PROJECTS / name for name in SAMPLE_PROJECTS),
        require_shared(CODING_PROJECT, "The coding dev set's project in the shared corpus"),
    ]
    home = tmp_path_factory.mktemp("projects-home")
    with Memory(home) as memory:
        report = memory.ingest(folders)
        stats = memory.stats()
        assert report.errors == [] and stats.chunk_count > 1000
    return home


@pytest.mark.parametrize("query", EVERYDAY)
def test_an_everyday_question_is_told_nothing_relevant(
    projects_home: Path, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the query's nearest chunk counting, a weak hit sharing a word or two clears the floor;
    # with it (the default in a store this size) the answer is "nothing".
    with Memory(projects_home, overrides=CHECK_OFF) as memory:
        assert memory.search(query).hits
    with Memory(projects_home) as memory:
        result = memory.search(query)
    assert result.nothing_relevant and result.nearest is not None
    monkeypatch.setenv("CAUSANTIC_HOME", str(projects_home))
    for command in ("search", "recall"):
        said = CliRunner().invoke(cli, [command, query], catch_exceptions=False)
        assert said.exit_code == 0 and said.stdout.startswith("Nothing relevant in memory"), command
        if command == "search":  # and says why: the matches clear the floor; nothing near the question hides them
            assert "nothing in memory is near this question" in said.stdout, said.stdout


@pytest.mark.parametrize("query", OTHER_STACKS)
def test_a_question_about_another_stack_is_told_nothing_relevant(projects_home: Path, query: str) -> None:
    with Memory(projects_home) as memory:
        answer = memory.recall(query)
        result = memory.search(query)
    assert result.nothing_relevant and answer.nothing_relevant


def test_the_mcp_tools_say_nothing_relevant_in_words(projects_home: Path) -> None:
    with McpProcess(env=subprocess_env(CAUSANTIC_HOME=str(projects_home))) as served:
        answers = [served.call(tool, {"query": EVERYDAY[0]}) for tool in ("search", "recall")]
    for answer in answers:
        assert not answer.is_error and answer.content[0].text.startswith("Nothing relevant in memory")


@pytest.mark.parametrize(("query", "project"), REAL)
def test_a_real_question_keeps_its_answer(projects_home: Path, query: str, project: str) -> None:
    with Memory(projects_home) as memory:
        result = memory.search(query)
    assert result.hits and project in result.hits[0].chunk.project


def test_a_vague_request_in_the_projects_words_finds_its_session(projects_home: Path) -> None:
    with Memory(projects_home) as memory:
        result = memory.search(VAGUE)
    sessions = list(dict.fromkeys(h.chunk.session_id for h in result.hits))
    assert result.nearest is not None and result.nearest < memory.config.relevance.nearest_cosine
    assert VAGUE_SESSION in sessions[:5]


def test_a_project_filter_never_hides_what_the_whole_memory_shows(
    projects_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether a question is about memory at all is judged on the whole memory, filter or not: the
    # project's nearest chunk alone once hid every hit the unfiltered search showed.
    query, project = NARROWED
    with Memory(projects_home) as memory:
        whole = memory.search(query)
        narrowed = memory.search(query, project=project)
    assert whole.hits and narrowed.hits and narrowed.nearest == whole.nearest
    assert {h.chunk.project for h in narrowed.hits} == {project}
    monkeypatch.setenv("CAUSANTIC_HOME", str(projects_home))
    said = CliRunner().invoke(cli, ["recall", query, "--project", project], catch_exceptions=False)
    assert said.exit_code == 0 and not said.stdout.startswith("Nothing relevant"), said.stdout


@pytest.mark.parametrize("query", EVERYDAY)
def test_an_everyday_question_asked_of_one_project_is_told_nothing_relevant(projects_home: Path, query: str) -> None:
    with Memory(projects_home) as memory:
        assert memory.search(query, project=NARROWED[1]).nothing_relevant


@pytest.mark.parametrize("query", (*EVERYDAY, *OTHER_STACKS, "ValueError: too many values to unpack"))
def test_keyword_search_has_the_same_floor_as_hybrid(projects_home: Path, query: str) -> None:
    # Keyword mode once scored its hits with an assumed cosine: every one read 2-5% and cleared the
    # floor, so a question hybrid told "nothing relevant" got ten weak chunks (3,000 tokens and more).
    with Memory(projects_home) as memory:
        hybrid = memory.search(query)
        keyword = memory.search(query, mode="keyword")
    assert hybrid.nothing_relevant
    assert keyword.mode == "keyword-only" and keyword.nothing_relevant, [h.relevance for h in keyword.hits]


@pytest.mark.parametrize(("query", "project"), REAL)
def test_keyword_search_keeps_a_real_answer_and_its_order(projects_home: Path, query: str, project: str) -> None:
    with Memory(projects_home) as memory:
        keyword = memory.search(query, mode="keyword")
    with Memory(projects_home, overrides={"relevance.floor": "0"}) as memory:  # the floor decides what shows,
        unscored = memory.search(query, mode="keyword", limit=50, max_tokens=200_000)  # not the order
    assert keyword.hits and project in keyword.hits[0].chunk.project
    shown = [h.chunk.id for h in keyword.hits]
    assert shown == [h.chunk.id for h in unscored.hits if h.chunk.id in set(shown)]
