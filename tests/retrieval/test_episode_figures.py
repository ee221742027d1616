"""One figure per chunk: a match an episode tells says the relevance search prints for it. On a real
project's sessions (shared corpus, real vectors) search's figures never rise down its list, so a
match ranked below a weaker one reads lower there than its own score; recall and predict printed the
own score, and the same chunk read 16% in search and 13% in recall. Weakly related is judged on that
figure too, as search labels it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from process_support import REAL_PROJECTS, REPO
from shared_data import require_shared

from causantic.facade import Memory
from causantic.retrieval.format import render_episodes

SAMPLE = REPO.parent / "shared" / "corpus" / "claude-code" / REAL_PROJECTS
SAMPLE /= "-Users-dain-workspace-claude-code-log-sample"
# Questions whose answers tell a match that search ranks below a weaker one.
QUESTIONS = ("how did we fix the failing browser tests after the refactoring", "browser tests")

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def sample_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = require_shared(SAMPLE, "The claude-code-log sample sessions of the shared corpus")
    home = tmp_path_factory.mktemp("figures-home")
    with Memory(home) as memory:
        report = memory.ingest([folder])
    assert report.errors == [] and report.vectors_added > 10
    return home


@pytest.mark.parametrize("kind", ["recall", "predict"])
def test_an_episode_says_the_figure_search_prints_for_its_match(sample_home: Path, kind: str) -> None:
    compared = differs = 0
    with Memory(sample_home) as memory:
        for question in QUESTIONS:
            answer = getattr(memory, kind)(question)
            # recall and predict look at maxEpisodes x 4 hits: search's list as long, whose figures they say
            result = memory.search(question, limit=20)
            printed = {h.chunk.id: round(r * 100) for h, r in zip(result.hits, result.shown_relevance, strict=True)}
            own = {h.chunk.id: round(h.relevance * 100) for h in result.hits}
            text = render_episodes(answer)
            for episode in answer.episodes:
                best = max((c for c in episode.chunks if c.is_hit), key=lambda c: c.relevance or 0.0)
                assert f"best match {printed[best.chunk.id]}%" in text
                for member in episode.chunks:
                    if member.is_hit:
                        compared += 1
                        differs += printed[member.chunk.id] != own[member.chunk.id]
                        assert round((member.relevance or 0.0) * 100) == printed[member.chunk.id]
            headings = re.findall(r"best match (\d+)%(, weakly related)?", text)
            assert all(bool(weak) == (int(figure) < 10) for figure, weak in headings)
    assert differs  # the answers do tell a match whose own score is not the figure search prints
    assert compared >= 4
