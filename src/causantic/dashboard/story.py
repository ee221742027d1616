"""The one adapter from an episodic answer (recall / predict) to what the search page draws.

Pages never read :class:`~causantic.retrieval.episodes.EpisodeAnswer` directly: when its shape
changes, only :func:`story_of` changes. A story is its steps in the order the answer gives them, each saying
where it came from (project, session, agent, time) and how relevant it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from causantic.retrieval.format import episode_title, episodes_headline, left_out_before, left_out_within
from causantic.wording import sentence

if TYPE_CHECKING:
    from causantic.facade import StoredChunk
    from causantic.retrieval.episodes import EpisodeAnswer


@dataclass(frozen=True, slots=True)
class Step:
    chunk: StoredChunk
    relevance: float | None  # None: no percentage per step; each episode's heading gives its best match's
    new_session: bool  # the first step of an episode (pages draw a divider)
    is_hit: bool  # a search match, rather than the context around one
    text: str  # the chunk's text as the episode tells it (tool results cut: format.told_content)
    # The first step of an episode: its heading as recall's text gives it, saying its times are UTC
    # ('Episode 2 of 3 · billing · session 9a9e0000 (Claude Code) · 2026-11-02 09:00 – 09:06 UTC · best match 43%').
    heading: str = ""
    # '… 9 chunks left out …': the first step of an episode continuing the one before it (the session's
    # chunks between), or a step of a long turn told from its request after the chunks left out before it
    left_out: str = ""


@dataclass(frozen=True, slots=True)
class Story:
    steps: list[Step]
    how: str  # one line: what the answer holds, as the CLI's heading says it, then its notes
    nothing_relevant: bool
    notes: tuple[str, ...] = ()  # as the answer's: said beside 'Nothing relevant' as the CLI says them


def story_of(answer: EpisodeAnswer) -> Story:
    steps = [
        Step(
            member.chunk,
            None,
            position == 0,
            member.is_hit,
            member.text,
            episode_title(answer, index, " UTC") if position == 0 else "",
            left_out_before(answer, index) if position == 0 else left_out_within(episode, position),
        )
        for index, episode in enumerate(answer.episodes)
        for position, member in enumerate(episode.chunks)
    ]
    # The CLI's and the MCP text's heading, word for word ('Recall: the story behind it, 2 episodes,
    # best first (7 chunks, 2,361 tokens)'); it said '7 steps' and the episodes' count apart.
    how = episodes_headline(answer) + "."
    if answer.notes:  # clauses the text tells after a dash: here a sentence of their own
        how += " " + sentence("; ".join(answer.notes))
    return Story(steps, how, answer.nothing_relevant, tuple(answer.notes))
