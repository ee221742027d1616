"""What the relevance figure tells whoever reads a search: on a real project's sessions (shared
corpus, real vectors) the better match shows the higher figure and no ordinary hit reads "100%",
and a question memory cannot answer gets a plain "Nothing relevant", also through the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from process_support import REAL_PROJECTS, REPO
from shared_data import require_shared

from causantic.cli.main import cli
from causantic.facade import Memory
from causantic.retrieval.relevance import relevance
from causantic.retrieval.search import SearchResult

SOUND = REPO.parent / "shared" / "corpus" / "claude-code" / REAL_PROJECTS / "-Users-dain-workspace-JSSoundRecorder"
REAL_QUESTIONS = (
    "How did we set up the Vite dev server so it works cross-platform?",
    "Which npm scripts start the dev server?",
    "vite",
)
OFF_TOPIC = (
    "recipe for banana bread",
    "zxqv",
    "Wie wird das Wetter morgen in Berlin?",
    "¿Cuál es la mejor receta de tortilla de patatas?",
    "How did we fix the Kubernetes ingress TLS certificate renewal in the payments cluster?",
)


@pytest.fixture(scope="module")
def sound_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of the JSSoundRecorder project's real sessions, with their vectors."""
    folder = require_shared(SOUND, "The JSSoundRecorder sessions of the shared corpus")
    home = tmp_path_factory.mktemp("sound-home")
    with Memory(home) as memory:
        report = memory.ingest([folder])
    assert report.errors == [] and report.vectors_added > 10
    return home


def search(home: Path, query: str) -> SearchResult:
    with Memory(home) as memory:
        return memory.search(query)


def printed_percents(home: Path, query: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[int]]:
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    result = CliRunner().invoke(cli, ["search", query], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout, [int(p) for p in re.findall(r"Relevance: (\d+)%", result.stdout)]


@pytest.mark.parametrize("query", REAL_QUESTIONS)
def test_a_real_question_shows_figures_that_tell_strong_hits_from_weak(
    sound_home: Path, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It used to print "Relevance: 100%" on several hits of one search, the right one and its neighbours alike.
    _, percents = printed_percents(sound_home, query, monkeypatch)
    assert len(percents) >= 3 and 100 not in percents
    assert percents == sorted(percents, reverse=True) and percents[0] > percents[-1]


def test_a_stronger_match_shows_a_higher_relevance(sound_home: Path) -> None:
    about_vite = search(sound_home, REAL_QUESTIONS[0])
    best = about_vite.hits[0].chunk
    assert "cross-platform" in best.content
    # the chunk's own opening words match it more closely than the question did, and than anything else
    own_words = search(sound_home, " ".join(best.content.split()[:14]))
    assert own_words.hits[0].chunk.id == best.id
    assert own_words.hits[0].relevance > about_vite.hits[0].relevance
    assert own_words.hits[0].relevance > max(h.relevance for h in own_words.hits[1:])
    # a vaguer request finds it too, with a lower figure
    vague = {h.chunk.id: h.relevance for h in search(sound_home, "dev server").hits}
    assert best.id in vague and vague[best.id] < about_vite.hits[0].relevance


@pytest.mark.parametrize("query", OFF_TOPIC)
def test_a_question_memory_cannot_answer_is_told_nothing_relevant(
    sound_home: Path, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert search(sound_home, query).nothing_relevant
    said, percents = printed_percents(sound_home, query, monkeypatch)
    assert said.startswith("Nothing relevant in memory") and percents == []


def test_even_a_word_for_word_match_does_not_read_100_percent() -> None:
    from causantic.config import RelevanceConfig

    config = RelevanceConfig()
    exact = relevance(1.0, 1.0, 0.0, 0.0, config)
    assert round(exact * 100) < 100
    # more evidence never lowers the figure; bulk and words memory never saw always do
    assert relevance(0.6, 0.5, 0.0, 0.0, config) < relevance(0.7, 0.5, 0.0, 0.0, config) < exact
    assert relevance(0.6, 0.5, 0.0, 0.0, config) < relevance(0.6, 0.8, 0.0, 0.0, config)
    assert relevance(0.6, 0.8, 0.5, 0.0, config) < relevance(0.6, 0.8, 0.0, 0.0, config)
    assert relevance(0.6, 0.8, 0.0, 0.5, config) < relevance(0.6, 0.8, 0.0, 0.0, config)
