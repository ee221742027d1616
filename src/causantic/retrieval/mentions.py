"""Where in a chunk the query's words were found: in the work, or only in what a tool printed.

A coding session's chunks hold two kinds of text (:mod:`causantic.ingest.render`): what the people
and the agent said and did (``[User]``, ``[Assistant]``, ``[Tool:Edit] path``, ``[Tool:Bash] git
commit -m ...``) and what tools printed back (``[Result:Bash]``, ``[Result:Grep]``). Shell and search
output often merely *lists* work done elsewhere: ``git log``, a changelog diff, search results, a PR
list.
A chunk whose match to the query lies only in such output mentions the work; the chunk where the
query's words are in the prompt, the agent's words or its tool calls is where the work happened.

This module measures that share; the search pipeline demotes by it (``retrieval.mentionPenalty``),
for every fused candidate: a listing left unmeasured further down keeps its full score and rises
above the demoted ones (and the work) once many sessions list the same thing. A chunk without
listing output costs nothing: the store keeps no own stems for it (:func:`own_stem_words`). Chat
transcripts (no tool sections) always score 0, so their ranking is unchanged.

The other side of the same question: a chunk that calls an editing tool (``[Tool:Edit] path``,
``[Tool:apply_patch]``) is where files were changed, the work itself rather than talk about it
(:func:`edits_files`; ``retrieval.workEvidence``). And a chunk that only talks after the work began
(:func:`retells`; ``retrieval.talkPenalty``): a later part of a turn that calls no tool (the agent's
report, its summary, its explanation of what it did), or a chunk of an agent that retells the
conversation (Claude Code's compaction summary). It names the work again in the words of the
request; the chunk that asked for it and the chunks that acted on it are the work.
"""

from __future__ import annotations

import functools
import re

from causantic.retrieval.relevance import QueryProfile
from causantic.store.features import split_tool_output, word_stems
from causantic.store.records import StoredChunk


def listing_share(profile: QueryProfile, words: frozenset[str], own: frozenset[str]) -> float:
    """The share (0-1) of the query's matched weight that the chunk holds only in tool output, from its
    stems already split: ``words`` all of them, ``own`` those of its own words (:func:`own_stem_words`).

    0 when the chunk matches nothing, has no listing output, or holds every matched word in its own
    words; 1 when every query word it matches appears only in what a tool printed."""
    if own is words:  # nothing listed (own_stem_words hands the stems back): most chunks, measured for nothing
        return 0.0
    found = profile.coverage_of(words)
    if found <= 0:
        return 0.0
    return max(0.0, found - profile.coverage_of(own)) / found


def own_stem_words(chunk: StoredChunk, stems: frozenset[str]) -> frozenset[str]:
    """The stems of the chunk's own words, without what listing tools printed in it: what the
    chunk says of the work, not what it merely lists. ``stems``: all of the chunk's stems, already
    split for scoring, returned as they are when no listing tool printed in the chunk (most chunks),
    so they are not split twice."""
    features = chunk.features
    if features is None:
        return word_stems(split_tool_output(chunk.content)[0])  # a row written before features were kept
    return stems if features.own_stems is None else frozenset(features.own_stems.split())


def edits_files(chunk: StoredChunk, tools: tuple[str, ...]) -> bool:
    """Whether the chunk calls one of the editing ``tools`` (a ``[Tool:NAME]`` line opening with one of
    them, ``retrieval.workTools``): the session changed files here, it did not only talk about it."""
    return "[Tool:" in chunk.content and _tool_call(tools).search(chunk.content) is not None


@functools.lru_cache(maxsize=8)
def _tool_call(tools: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(map(re.escape, tools))
    return re.compile(rf"^\[Tool:(?:{names})\]", re.MULTILINE)


def retells(chunk: StoredChunk, agents: tuple[str, ...]) -> bool:
    """Whether the chunk talks about work rather than asks for it or does it: a later part of a turn
    (``part`` > 0: the request and the agent's first response opened the turn in part 0) that calls
    no tool, or any chunk of one of ``agents`` (``retrieval.retellingAgents``: Claude Code's compaction,
    whose summary retells the conversation before it). A chat turn that fits in one chunk (LoCoMo's
    all do) is never counted; a long reply without tool calls is, in its later parts, and so is the
    tail of a request too long for one chunk (the chunk does not say whose words it continues)."""
    if chunk.agent in agents:
        return True
    return chunk.part > 0 and ("[Tool:" not in chunk.content or _ANY_TOOL_CALL.search(chunk.content) is None)


_ANY_TOOL_CALL = re.compile(r"^\[Tool:", re.MULTILINE)
