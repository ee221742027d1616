"""Text renderings of retrieval results, shared by the CLI, the MCP tools and the hooks.

A chunk's text is shown through :func:`shown_content`, which folds a run of calls of one tool
(``[Tool:Read] a.py`` eight times over) into one line: the listing says which files were opened,
and shown in full it buries the words around it. A result that only acknowledges its call (TodoWrite's
"Todos have been modified successfully. Ensure that you continue to use the todo list…") is left
out: the call line says what was done. This is only how a person or an agent reads a result;
``--json`` carries the stored text unchanged. Every interface (CLI,
MCP text, dashboard) shows chunk text through this one function; a recall or predict answer through
:func:`told_content`, which also cuts each tool result to what the story needs.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING

from causantic.sources import SOURCE_NAMES, SPAWN_TOOLS
from causantic.wording import counted as counted  # where the interfaces' renderers find it beside the rest

if TYPE_CHECKING:  # annotations only: the CLI's small commands import this module for when()
    from causantic.retrieval.episodes import Episode, EpisodeAnswer, EpisodeChunk
    from causantic.retrieval.search import Hit, SearchResult
    from causantic.store.records import StoredChunk

NOTHING_RELEVANT = "Nothing relevant in memory"
# A hit that cleared relevance.floor but reads under this is listed as weakly related, not as
# relevant: below it, off-topic questions' hits are as strong (2-8% on the whole Claude Code corpus,
# the reason relevance.farFloor is 0.1), while a right hit's median reads 20% (docs/measurements.md,
# "Relevance floor"). Wording, not selection: what is shown is still relevance.floor's choice.
WEAK_RELEVANCE = 0.10
WEAK_MARK = "weakly related"
ONE_LINE_CHARS = 160  # a weak hit listed in one line beside relevant ones: its header and this much of its text
ELSEWHERE_NAMED = 3  # other projects a note of relevant matches elsewhere names (elsewhere_note)
# Said once in a text answer's heading: the times in it (stored times are UTC) are not the reader's own
# zone. Beside each time it cost ten hits' answer ten tokens; the dashboard says ' UTC' by its times.
TIMES_ZONE = "times in UTC"
DATES_ZONE = "dates in UTC"  # the same, for an answer that gives days alone (a project's, a topic's span)
TOOL_RUN_MIN = 3  # consecutive calls of one tool folded into one line from this many on
# Calls whose line is what was said, not a listing: a sub-agent's task, a message to a teammate.
_NEVER_FOLDED = SPAWN_TOOLS | {"SendMessage"}
# A section that starts a speaker's words or a tool's line (ingest.render's labels); a section without
# one continues the labelled one before it (a result with a blank line in it, a second paragraph).
_LABELLED = re.compile(r"\[(?:User|Assistant|(?:Tool|Result|Error):[^\]\s]+)\]")
# A tool's result; an error ([Error:Bash]) is told whole: what went wrong is the story's turning point,
# and a traceback says it in its last lines.
_RESULT_LABEL = re.compile(r"\[Result:([^\]\s]+)\]")
_DIGITS = re.compile(r"\d+")
_TOOL_CALL = re.compile(r"\[Tool:([^\]\s]+)\](?: (.*))?")  # one rendered call: ingest.render's "[Tool:Name] what"
# A terminal's colour and cursor codes in a tool's output (ESC [ 0 m, ESC ] … BEL): they recolour the
# reader's terminal, reach the model as noise through MCP, and a web page draws them as '▯[0m'.
_TERMINAL_CODE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# Results that say only "it worked", in the words Claude Code's tools use (the commonest tool results
# in the corpus): shown, each buries the turn's words under a line that tells nothing the call did not.
_ACKNOWLEDGEMENT = re.compile(
    r"\[Result:(?:"
    r"TodoWrite\] Todos have been modified successfully\..*"
    r"|Write\] File created successfully at: \S.*"
    r"|Edit\] The file \S.* has been updated successfully\."
    r")",
    re.DOTALL,
)


def when(iso_text: str | None, missing: str = "?") -> str:
    """'2026-05-01T10:20:30.000000Z' -> '2026-05-01 10:20'; ``missing`` when there is no time."""
    return iso_text[:16].replace("T", " ") if iso_text else missing


def when_utc(iso_text: str | None, missing: str = "?") -> str:
    """'2026-05-01T10:20:30.000000Z' -> '2026-05-01 10:20 UTC': :func:`when` saying its zone, where a
    time stands alone (stored times are UTC, and a reader elsewhere must not take them for local)."""
    return f"{when(iso_text)} UTC" if iso_text else missing


# A time-ordered UUID (version 7, as Codex CLI names its threads): its first 48 bits are the
# millisecond it was made, so its first 8 characters change only every 65 seconds.
_TIME_ORDERED_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def short_session(session_id: str) -> str:
    """How answers name a session: the first 8 characters of its id (reconstruct, forget and
    list-sessions take them as a prefix); of a time-ordered UUID the first 13, its whole millisecond
    ('019a085e-52e1'): two Codex sessions started within a minute both read '019a085e', and
    reconstruct refused that prefix as two sessions'."""
    return session_id[:13] if _TIME_ORDERED_UUID.fullmatch(session_id) else session_id[:8]


@dataclass(frozen=True, slots=True)
class Reread:
    """The transcript files the next ingest reads again (ingested under older ingest rules, or
    unmarked by a migration), and of them those outside the agents' folders, by folder: a plain
    `causantic batch-ingest` and the hooks read only the agents' folders, so those stay as they are
    until their folder is ingested again."""

    files: int
    elsewhere: tuple[tuple[str, int], ...] = ()  # (folder, files), most files first

    def __bool__(self) -> bool:
        return bool(self.files)


REREAD_FOLDERS_NAMED = 3  # folders of files outside the agents' folders a note names


def reread_note(reread: Reread) -> str:
    """What the next ingest will read again, as `causantic stats` and the dashboard's overview say it:
    files ingested under older ingest rules (:mod:`causantic.ingest.rules`). Files read from other
    folders than the agents' are read again only when those folders are ingested again: the note
    names them and the command, where it said a plain batch-ingest would (and stats said so after it)."""
    files = reread.files
    head = f"{counted(files, 'transcript file')} {'was' if files == 1 else 'were'} ingested under older ingest rules"
    outside = sum(n for _, n in reread.elsewhere)
    them = "it" if files == 1 else "them"
    if not outside:
        return f"{head}; the next `causantic batch-ingest` (or a hook's ingest) reads {them} again."
    named = [folder for folder, _ in reread.elsewhere[:REREAD_FOLDERS_NAMED]]
    more = len(reread.elsewhere) - len(named)
    command = f"`causantic batch-ingest {' '.join(named)}`" + (f" (and {counted(more, 'more folder')})" if more else "")
    if outside == files:
        return f"{head}, outside the agents' folders: {command} reads {them} again."
    inside = files - outside
    return (
        f"{head}: the next `causantic batch-ingest` (or a hook's ingest) reads {inside} of them again, and "
        f"{command} the {outside} from outside the agents' folders."
    )


def mixes_stores(chunks: list[StoredChunk]) -> bool:
    """An answer from team memory and the local store at once: its local chunks are then marked."""
    return any(c.user is None for c in chunks) and any(c.user is not None for c in chunks)


def byte_size(num_bytes: float) -> str:
    """A size as people read it: "0 B", "512 B", "16.5 MB" (powers of 1,000)."""
    value = float(num_bytes)
    for unit in ("B", "KB", "MB"):
        if value < 1000:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def span(start: str, end: str) -> str:
    """'2026-05-01 10:20 – 11:05'; the end's date only when it differs, one time when both are the same."""
    first, last = when(start), when(end)
    if last == first:
        return first
    return f"{first} – {last[11:] if last[:10] == first[:10] else last}"


def day_span(start: str | None, end: str | None) -> str:
    """'2026-05-01 – 2026-05-03'; one date when both fall on the same day."""
    first, last = (start or "?")[:10], (end or "?")[:10]
    return first if first == last else f"{first} – {last}"


def chunk_header(
    chunk: StoredChunk,
    relevance: float | None = None,
    position: str | None = None,
    *,
    marker: str | None = None,
    mixed: bool = False,
    placed: bool = False,
    day: str | None = None,
) -> str:
    """One chunk's header line; ``mixed`` (:func:`mixes_stores`): say which chunks are local only;
    ``placed``: a heading above already names its project, session and source, so only its time is
    said, and its date only when it is not ``day`` (the date, 'YYYY-MM-DD', its episode starts on)."""
    parts = [position] if position else []
    if placed:
        stamp = when(chunk.start_time)
        parts.append(stamp[11:] if day is not None and stamp[:10] == day else stamp)
    else:
        parts += [
            f"Project: {chunk.project}",
            f"Session: {short_session(chunk.session_id)}",
            f"Date: {when(chunk.start_time)}",
            f"Source: {chunk.source}",
        ]
    if chunk.agent != "main":
        parts.append(f"Agent: {chunk.agent}")
    if chunk.user is not None:
        parts.append(f"User: {chunk.user}")
    elif mixed:
        parts.append("Local (not shared)")
    if relevance is not None:
        parts.append(f"Relevance: {relevance_percent(relevance)}%")
    if marker:
        parts.append(marker)
    return "[" + " | ".join(parts) + "]"


def relevance_percent(relevance: float) -> int:
    """The whole percent people read for a relevance (0-1)."""
    return round(max(0.0, min(relevance, 1.0)) * 100)


def is_weak(shown_relevance: float) -> bool:
    """A hit worth listing but not worth calling relevant (:data:`WEAK_RELEVANCE`), judged on the
    percent people read: a 9.6% hit reads "10%" and must not be called "under 10%"."""
    return relevance_percent(shown_relevance) < relevance_percent(WEAK_RELEVANCE)


def weak_count(shown_relevance: list[float]) -> int:
    """How many hits are only weakly related (:func:`is_weak`): the last ones, as shown relevance
    never rises down the list."""
    return sum(1 for r in shown_relevance if is_weak(r))


def hit_header(hit: Hit, shown_relevance: float, *, mixed: bool = False) -> str:
    """A search hit's header line: a weak hit says so beside its figure."""
    return chunk_header(hit.chunk, shown_relevance, marker=WEAK_MARK if is_weak(shown_relevance) else None, mixed=mixed)


def render_hit(hit: Hit, shown_relevance: float, *, mixed: bool = False) -> str:
    return f"{hit_header(hit, shown_relevance, mixed=mixed)}\n{shown_content(hit.chunk.content)}"


def shown_content(content: str) -> str:
    """A chunk's text for reading: a result that only acknowledges its call is left out, and each
    run of :data:`TOOL_RUN_MIN` or more consecutive calls of one tool becomes one line,
    ``[Tool:Read] ×7 in /repo/src/: a.py, b.py, …``. A sub-agent's task (a spawn call) and a message
    to a teammate (SendMessage) are what was said, not a listing, so they are never folded. A terminal's
    colour codes are left out (the stored text keeps them)."""
    # ingest.render's sections, as the chunker joined them; an acknowledgement goes before runs are
    # found, so three files written one after the other fold like three files read.
    content = _TERMINAL_CODE.sub("", content)
    sections = [s for s in content.split("\n\n") if not _ACKNOWLEDGEMENT.fullmatch(s)] or [content]
    out: list[str] = []
    for name, group in groupby(((s, _call(s)) for s in sections), key=lambda sc: sc[1][0] if sc[1] else None):
        run = list(group)
        if name is not None and len(run) >= TOOL_RUN_MIN:
            out.append(_folded(name, [call[1] for _, call in run if call]))
        else:
            out.extend(section for section, _ in run)
    return "\n\n".join(out)


def told_content(
    content: str,
    holds_query: Callable[[str], bool],
    *,
    result_lines: int,
    similar_lines: int,
    whole_results: Collection[str] = (),
) -> str:
    """A chunk's text as an episode tells it: :func:`shown_content`, and each tool result (not an
    error, nor one of ``whole_results``' tools) cut to what a reader of the story needs
    (:func:`_result_told`). Measured on the coding dev set (``benchmarks/answer_content.py``), tool
    results were 39% of recall's tokens, two thirds of them lines without a query word (a file's
    imports, a listing of passing test packages), while the turns that led to a match got 6%."""
    shown = shown_content(content)
    groups: list[list[str]] = []  # a labelled section and the unlabelled ones that continue it
    for section in shown.split("\n\n"):
        if not groups or _LABELLED.match(section):
            groups.append([section])
        else:
            groups[-1].append(section)
    out: list[str] = []
    for group in groups:
        text = "\n\n".join(group)
        result = _RESULT_LABEL.match(text)
        if result is not None and result.group(1) not in whole_results:
            text = "\n".join(_result_told(text.split("\n"), holds_query, result_lines, similar_lines))
        out.append(text)
    return "\n\n".join(out)


def _result_told(lines: list[str], holds_query: Callable[[str], bool], head: int, similar: int) -> list[str]:
    """A tool result's lines, cut. Lines alike (:func:`_shape`: the same first and last word and as
    many words, numbers aside, as a test runner's ``ok  pkg  (cached)`` lines) that come ``similar``
    or more times are told by the first of them (a package named like the query is no more of the
    story than the others); of the other lines the first ``head`` are kept (0: all), then up to
    ``head`` more that hold a query word. Each gap says what it left out: '… 10 more lines like
    this' when they are all like the line above it, else '… 12 lines left out'. A gap of one line
    shows the line: its marker would cost as much."""
    shapes = [_shape(line) for line in lines]
    seen = Counter(s for s in shapes if s is not None)
    first = {s: shapes.index(s) for s in seen}
    alike = [s is not None and similar > 0 and seen[s] >= similar and first[s] != i for i, s in enumerate(shapes)]
    keep = [not a for a in alike]
    if head:
        kept = set([i for i, k in enumerate(keep) if k][:head])
        asked = [i for i, line in enumerate(lines) if not alike[i] and i not in kept and holds_query(line)]
        kept.update(asked[:head])
        keep = [i in kept for i in range(len(lines))]
    out: list[str] = []
    i = 0
    while i < len(lines):
        if keep[i]:
            out.append(lines[i])
            i += 1
            continue
        end = i
        while end < len(lines) and not keep[end]:
            end += 1
        if end - i == 1:
            out.append(lines[i])
        elif i > 0 and all(alike[j] and shapes[j] == shapes[i - 1] for j in range(i, end)):
            out.append(f"… {end - i} more lines like this")
        else:
            out.append(f"… {counted(end - i, 'line')} left out")
        i = end
    return out


def _shape(line: str) -> tuple[str, ...] | None:
    """What makes lines alike: first word, last word and word count, digits aside, and the second
    word too when the first has no letter (``--- PASS: TestA (0.00s)`` is not like ``--- FAIL: TestB
    (0.01s)``); None for a line of fewer than two words (a blank line, a lone number)."""
    words = _DIGITS.sub("0", line).split()
    if len(words) < 2:
        return None
    second = "" if any(c.isalpha() for c in words[0]) else words[1]
    return (words[0], second, words[-1], str(len(words)))


def _call(section: str) -> tuple[str, str] | None:
    """(tool, what it named) when ``section`` is one tool-call line, else None."""
    match = _TOOL_CALL.fullmatch(section)
    if match is None or match.group(1) in _NEVER_FOLDED:
        return None
    return match.group(1), match.group(2) or ""


def _folded(name: str, named: list[str]) -> str:
    """``[Tool:Read] ×3 in /repo/src/: a.py, b.py, c.py``: the folder the paths share said once."""
    distinct = [n for n in dict.fromkeys(named) if n]
    where = ""
    if len(distinct) > 1 and all(n.startswith("/") and " " not in n for n in distinct):
        common = os.path.commonpath(distinct)
        if common != "/":
            where = f" in {common}/"
            distinct = [n[len(common) + 1 :] for n in distinct]
    # Every name listed, none cut: the one a search matched may be anywhere in the run (the text
    # shown does not know the query), and the list is still far shorter than a line per call.
    listing = ", ".join(distinct)
    return f"[Tool:{name}] ×{len(named)}{where}" + (f": {listing}" if listing else "")


def over_budget_note(matches: int, smallest: int, budget: int) -> str:
    """Matches ranked above everything shown but each larger than the whole token budget: said, so a
    small budget never passes off a weaker answer (or none) as the best memory holds."""
    them = "it" if matches == 1 else "them"
    return (
        f"{counted(matches, 'better match', 'better matches')} left out, larger than the {budget:,}-token "
        f"budget (the smallest needs {smallest:,}): a larger budget (max tokens) shows {them}"
    )


def nothing_relevant(notes: list[str] | tuple[str, ...]) -> str:
    return f"{NOTHING_RELEVANT}" + (f" ({'; '.join(notes)})" if notes else "") + "."


def elsewhere_note(asked: str, projects: Sequence[str], shown_relevance: Sequence[float]) -> str | None:
    """'relevant matches in other projects: blog (65%), docs (12%); ask without project to see
    them', of an answer kept to the project ``asked`` that holds nothing relevant; ``projects`` and
    ``shown_relevance`` are an unfiltered search's hits'. None when no other project's hit is relevant."""
    best: dict[str, float] = {}
    for project, shown in zip(projects, shown_relevance, strict=True):
        if project != asked and not is_weak(shown):
            best[project] = max(best.get(project, 0.0), shown)
    if not best:
        return None
    ranked = sorted(best.items(), key=lambda item: -item[1])[:ELSEWHERE_NAMED]
    listed = ", ".join(f"{project} ({relevance_percent(shown)}%)" for project, shown in ranked)
    more = f" and {len(best) - len(ranked)} more" if len(best) > len(ranked) else ""
    return f"relevant matches in other projects: {listed}{more}; ask without project to see them"


def hits_summary(shown_relevance: list[float], aside: str = "", *, lines: bool = False) -> str:
    """How many hits, and how many of them are only weakly related: '8 memory chunks (``aside``), 5
    relevant and 3 weakly related (relevance under 10%)'. The CLI, the MCP text and the dashboard
    all say this; the weak hits are the last ones (shown relevance never rises down the list).
    ``lines``: the weak ones beside relevant ones are listed in one line each (:func:`in_one_line`)."""
    weak = weak_count(shown_relevance)
    strong = len(shown_relevance) - weak
    bracket = f" ({aside})" if aside else ""
    if not weak:
        return counted(strong, "relevant memory chunk") + bracket
    if not strong:
        return f"{counted(weak, WEAK_MARK + ' memory chunk')}{bracket}, none reaching {WEAK_RELEVANCE:.0%} relevance"
    return (
        f"{counted(len(shown_relevance), 'memory chunk')}{bracket}, {strong} relevant and {weak} {WEAK_MARK} "
        f"(relevance under {WEAK_RELEVANCE:.0%}{', in one line each' if lines else ''})"
    )


def in_one_line(shown_relevance: Sequence[float]) -> list[bool]:
    """Which hits a text answer lists in one line each: the weakly related ones of an answer that
    also holds a relevant one. Told whole they cost as much as the relevant one (an agent's search
    read 1 relevant hit and 4 at 4%, ~1,400 tokens); alone, weak hits are all there is and are told
    whole, marked weakly related."""
    weak = [is_weak(r) for r in shown_relevance]
    return weak if not all(weak) else [False] * len(weak)


def one_line(hit: Hit, shown_relevance: float, *, mixed: bool = False) -> str:
    """A weak hit in one line: its header and the start of its text (:data:`ONE_LINE_CHARS`)."""
    text = " ".join(shown_content(hit.chunk.content).split())
    if len(text) > ONE_LINE_CHARS:
        text = text[: ONE_LINE_CHARS - 1].rstrip() + "…"
    return f"{hit_header(hit, shown_relevance, mixed=mixed)} {text}"


def shown_tokens(result: SearchResult) -> int:
    """What a text answer's hits cost as told: whole, or in one line (:func:`in_one_line`)."""
    from causantic.ingest.tokens import approx_tokens
    from causantic.retrieval.search import hit_cost

    mixed = mixes_stores([h.chunk for h in result.hits])
    return sum(
        approx_tokens(one_line(h, r, mixed=mixed)) if brief else hit_cost(h.chunk)
        for h, r, brief in zip(result.hits, result.shown_relevance, in_one_line(result.shown_relevance), strict=True)
    )


def search_heading(result: SearchResult) -> str:
    """'Found 10 relevant memory chunks (3,650 tokens, hybrid; times in UTC)', then any notes: the
    text answer's, whose weak hits beside relevant ones take one line each (:func:`in_one_line`)."""
    head = "Found " + search_summary(result, zone=True, lines=True)
    return head + (f" — {'; '.join(result.notes)}" if result.notes else "")


def search_summary(result: SearchResult, *, zone: bool = False, lines: bool = False) -> str:
    """'10 relevant memory chunks (3,650 tokens, hybrid)': the heading's count, as the dashboard says it
    too; ``zone``: the text's, which says the hits' times are UTC (:data:`TIMES_ZONE`); ``lines``: the
    text's, whose weak hits beside relevant ones take one line each, and count so."""
    tokens = shown_tokens(result) if lines else result.tokens
    aside = f"{counted(tokens, 'token')}, {result.mode}" + (f"; {TIMES_ZONE}" if zone else "")
    return hits_summary(result.shown_relevance, aside, lines=lines and any(in_one_line(result.shown_relevance)))


def render_search(result: SearchResult) -> str:
    """The text answer: each hit whole, or in one line (:func:`in_one_line`), in ranked order; the
    lines of consecutive weak hits together, parts apart by '---'."""
    if result.nothing_relevant:
        return nothing_relevant(result.notes)
    mixed = mixes_stores([h.chunk for h in result.hits])
    told = zip(result.hits, result.shown_relevance, in_one_line(result.shown_relevance), strict=True)
    parts: list[str] = []
    for brief, run in groupby(told, key=lambda item: item[2]):
        if brief:
            parts.append("\n".join(one_line(h, r, mixed=mixed) for h, r, _ in run))
        else:
            parts += [render_hit(h, r, mixed=mixed) for h, r, _ in run]
    return search_heading(result) + ":\n\n" + "\n\n---\n\n".join(parts)


def episodes_heading(answer: EpisodeAnswer) -> str:
    return episodes_headline(answer, zone=True) + (f" — {'; '.join(answer.notes)}" if answer.notes else "")


def episodes_headline(answer: EpisodeAnswer, *, zone: bool = False) -> str:
    """'Recall: the story behind it, 3 episodes, best first (7 chunks, 2,361 tokens)': the
    text's heading without its notes (the dashboard tells them as a sentence of their own, and its
    episodes' times say ' UTC'); ``zone``: the text's, which says its times are UTC once
    (:data:`TIMES_ZONE`)."""
    what = "the story behind it" if answer.kind == "recall" else "what came next"
    weak = all(is_weak(e.relevance) for e in answer.episodes)  # then no match reaches the weak line
    noun = f"{WEAK_MARK} episode" if weak else "episode"
    head = (
        f"{answer.kind.capitalize()}: {what}, {counted(len(answer.episodes), noun)}{_order_said(answer)} "
        f"({counted(len(answer.chunks), 'chunk')}, {counted(answer.tokens, 'token')}"
        + (f"; {TIMES_ZONE})" if zone else ")")
    )
    if answer.mode == "chain":
        head += " — chain walk"
    return head


def _order_said(answer: EpisodeAnswer) -> str:
    """How the heading says the episodes' order: ' in time order' (``episodes.order`` time, or best
    first where that is time order too), ', best first', or nothing for one episode."""
    starts = [e.start for e in answer.episodes]
    if answer.order == "time" or (len(starts) > 1 and starts == sorted(starts)):
        return " in time order"
    return ", best first" if len(starts) > 1 else ""


def _one_place(answer: EpisodeAnswer, index: int) -> bool:
    """An episode within one session (always, but in the chain walk's): its heading names the place."""
    return len({(c.chunk.project, c.chunk.session_id, c.chunk.source) for c in answer.episodes[index].chunks}) == 1


def episode_heading(answer: EpisodeAnswer, index: int) -> str:
    return f"== {episode_title(answer, index)} =="


def episode_title(answer: EpisodeAnswer, index: int, zone: str = "") -> str:
    """'Episode 2 of 3 · billing · session 9a9e0000 (Claude Code) · 2026-11-02 09:00 – 09:06 · best
    match 43%': the text's episode heading, and the dashboard's (which gives ``zone`` ' UTC')."""
    return titled(answer.episodes[index], index, len(answer.episodes), _one_place(answer, index), zone)


def titled(episode: Episode, index: int, count: int, one_place: bool, zone: str = "") -> str:
    """:func:`episode_title` of an episode told ``index``-th of ``count``; the episodes' assembly
    charges its budget what this prints."""
    first, last = episode.chunks[0].chunk, episode.chunks[-1].chunk
    sessions = list(dict.fromkeys(short_session(c.chunk.session_id) for c in episode.chunks))
    if one_place:
        sessions[0] += f" ({SOURCE_NAMES.get(first.source, first.source)})"
    return (
        f"Episode {index + 1} of {count} · {first.project} · session {', '.join(sessions)} · "
        f"{span(first.start_time, last.end_time)}{zone} · {episode_match(episode.relevance)}"
    )


def chunks_left_out(answer: EpisodeAnswer, index: int) -> int:
    """Chunks of the session left out between an episode and the one told before it when both are
    of one session, whichever came first (an answer told best first may tell a session's earlier
    episode after its best one); 0 otherwise, when they overlap (two agents' streams; episodes that
    touch are told as one), and when another episode the answer tells lies between them."""
    if index == 0:
        return 0
    told, this = answer.episodes[index - 1], answer.episodes[index]
    session = this.chunks[0].chunk.session_id
    if told.span is None or this.span is None:  # set only for a session told in more than one episode
        return 0
    if told.chunks[0].chunk.session_id != session:
        return 0
    first, second = sorted((told.span, this.span))
    between = (
        e.span
        for e in answer.episodes
        if e is not told and e is not this and e.span is not None and e.chunks[0].chunk.session_id == session
    )
    if any(first[1] < span[0] and span[1] < second[0] for span in between):
        return 0
    return max(second[0] - first[1] - 1, 0)


def left_out_before(answer: EpisodeAnswer, index: int) -> str:
    """'… 5 chunks of this session between these episodes left out …' before an episode of the
    session of the one told before it, else '': two headings of one session read as one story told
    twice, or as if nothing happened between them."""
    left = chunks_left_out(answer, index)
    return f"… {counted(left, 'chunk')} of this session between these episodes left out …" if left else ""


def left_out_within(episode: Episode, position: int) -> str:
    """'… 9 chunks left out …' before a chunk of an episode that does not follow the one told before
    it (a long turn told from its request, then the match's neighbourhood), else ''."""
    left = episode.gaps[position] if episode.gaps else 0
    return f"… {counted(left, 'chunk')} left out …" if left else ""


def episode_match(relevance: float) -> str:
    """'best match 43%', or 'best match 4%, weakly related': how well each episode answers the
    question, the later ones beside the first (the text and the dashboard say it alike)."""
    return f"best match {relevance_percent(relevance)}%" + (f", {WEAK_MARK}" if is_weak(relevance) else "")


def chunk_heading(answer: EpisodeAnswer, index: int, position: int) -> str:
    episode = answer.episodes[index]
    return member_heading(
        episode.chunks[position],
        f"{position + 1}/{len(episode.chunks)}",
        mixed=mixes_stores(answer.chunks),
        placed=_one_place(answer, index),
        day=when(episode.start)[:10],
    )


def member_heading(member: EpisodeChunk, position: str, *, mixed: bool, placed: bool, day: str | None = None) -> str:
    """'[1/7 | 13:11 | match]': an episode's chunk heading (``position`` '1/7'), its date said only
    when it is not ``day``, the day its episode's heading starts on; the episodes' assembly charges
    its budget what this prints."""
    return chunk_header(
        member.chunk,
        position=position,
        marker="match" if member.is_hit else None,
        mixed=mixed,
        # The episode's heading names its project, session, source and date: said again on every chunk
        # they were 8.5% of recall's text on the coding dev set ("Date: 2026-…" another 1.8%).
        placed=placed,
        day=day,
    )


def render_episodes(answer: EpisodeAnswer) -> str:
    if answer.nothing_relevant:
        return nothing_relevant(answer.notes)
    return f"{episodes_heading(answer)}:\n\n{episodes_body(answer)}"


def episodes_body(answer: EpisodeAnswer) -> str:
    """The episodes as :func:`render_episodes` prints them below its heading: what the heading's
    token count counts (:attr:`EpisodeAnswer.tokens`)."""
    blocks: list[str] = []
    for i, episode in enumerate(answer.episodes):
        blocks += [gap for gap in (left_out_before(answer, i),) if gap]
        blocks.append(episode_heading(answer, i))
        for j, member in enumerate(episode.chunks):
            blocks += [gap for gap in (left_out_within(episode, j),) if gap]
            blocks.append(f"{chunk_heading(answer, i, j)}\n{member.text}")
    return "\n\n".join(blocks)
