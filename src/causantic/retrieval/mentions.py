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
above the demoted ones (and the work) once many sessions list the same thing. A substring test
keeps chunks without listing output cheap. Chat transcripts (no tool sections) always score 0, so
their ranking is unchanged.
"""

from __future__ import annotations

import functools
import re

from causantic.retrieval.relevance import QueryProfile, word_stems

# A section opens at a line starting with its marker; continuation lines belong to it.
_SECTION = re.compile(r"^\[(?:User|Assistant|Tool:[^\]\n]*|Result:[^\]\n]*|Error:[^\]\n]*)\]", re.MULTILINE)
# Output that lists things: shell output (git log, gh pr list, a changelog diff), search results and
# fetched pages. A file the agent read (Read) or a sub-agent's report (Task) is the work's own
# material, not a mention of it: counting those demoted the right session on the coding set.
_LISTING_TOOLS = ("Bash", "Grep", "Glob", "WebSearch", "WebFetch")
_OUTPUT_MARKERS = tuple(f"[{label}:{tool}]" for label in ("Result", "Error") for tool in _LISTING_TOOLS)


def split_tool_output(text: str) -> tuple[str, str]:
    """(the chunk's own words, what listing tools printed): sections split at their markers; the
    output of other tools (a file read, a sub-agent's report) counts as the chunk's own."""
    starts = [m.start() for m in _SECTION.finditer(text)]
    if not starts:
        return text, ""
    own = [text[: starts[0]]]
    output: list[str] = []
    for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
        section = text[begin:end]
        (output if section.startswith(_OUTPUT_MARKERS) else own).append(section)
    return "".join(own), "".join(output)


@functools.lru_cache(maxsize=1024)
def own_word_stems(text: str) -> frozenset[str]:
    """:func:`word_stems` of the chunk's own words (:func:`split_tool_output`), kept for the texts
    asked most recently: a search weighs the opening prompts of its candidates' sessions, and the
    same sessions' openings come back query after query (1,752 distinct in 5,641 over 100 real
    queries at 100k chunks), while the stems' own cache turns over with the candidates."""
    return word_stems(split_tool_output(text)[0])


def mention_share(profile: QueryProfile | None, text: str) -> float:
    """The share (0-1) of the query's matched weight that the chunk holds only in tool output.

    0 when the chunk matches nothing, has no tool output, or holds every matched word in its own
    words; 1 when every query word it matches appears only in what a tool printed.
    """
    if profile is None or not profile.terms or not any(marker in text for marker in _OUTPUT_MARKERS):
        return 0.0  # the substring test first: most chunks hold no listing output at all
    own, output = split_tool_output(text)
    if not output:
        return 0.0
    found = profile.coverage_of(word_stems(text))  # already split when the chunk was scored
    if found <= 0:
        return 0.0
    return max(0.0, found - profile.coverage_of(word_stems(own))) / found
