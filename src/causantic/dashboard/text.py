"""Turning stored text and numbers into what a page shows: sections, highlights, times, sizes.

Chunk text is stored as rendered sections (``[User]``, ``[Assistant]``, ``[Tool:Bash] …``,
``[Result:Read] …``; see :mod:`causantic.ingest.render`). Pages show each kind differently: prompts
and answers as prose, tool calls as one compact line, tool results folded. What is shown is what the
CLI and the MCP tools show: :func:`~causantic.retrieval.format.shown_content` (a run of calls of one
tool as one line, acknowledgements left out), then split here. Everything returned as markup is
escaped first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from markupsafe import Markup, escape

from causantic.retrieval.format import relevance_percent, shown_content, span, when_utc

_SECTION_START = re.compile(r"^\[(User|Assistant|Tool:[^\]\n]+|Result:[^\]\n]+)\]", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Section:
    kind: str  # user, assistant, tool, result, text
    label: str  # "User", "Bash", ...
    text: str

    @property
    def first_line(self) -> str:
        line = next((ln for ln in self.text.splitlines() if ln.strip()), "")
        return line.strip()[:160]


def sections(content: str) -> list[Section]:
    """Split chunk text, as every interface shows it (:func:`shown_content`), at section markers
    that start a line; text before the first is kept."""
    content = shown_content(content)
    marks = [m for m in _SECTION_START.finditer(content) if m.start() == 0 or content[m.start() - 1] == "\n"]
    out: list[Section] = []
    if not marks or marks[0].start() > 0:
        head = content[: marks[0].start() if marks else len(content)].strip("\n")
        if head.strip():
            out.append(Section("text", "", head))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(content)
        body = content[mark.end() : end].strip("\n").removeprefix(" ")
        name = mark.group(1)
        if name in ("User", "Assistant"):
            out.append(Section(name.lower(), name, body))
        else:
            kind, _, tool = name.partition(":")
            out.append(Section(kind.lower(), tool, body))
    return out


def highlight(text: str, terms: list[str]) -> Markup:
    """``text`` escaped, with every case-insensitive occurrence of ``terms`` at the start of a word in
    ``<mark>`` (so "test" marks "tests", and "the" never marks the middle of "other")."""
    if not terms:
        return escape(text)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in terms) + ")", re.IGNORECASE)
    out: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        out.append(str(escape(text[last : match.start()])))
        out.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def short_time(iso_text: str | None) -> str:
    """'2026-05-01T10:20:30.000000Z' -> '2026-05-01 10:20 UTC' (a dash when there is none).

    Every time a page shows goes through this or :func:`time_span`, so each says its zone: stored
    times are UTC, and a reader in another zone must not take them for local times."""
    return when_utc(iso_text, "–")


def time_span(start: str | None, end: str | None, *, with_date: bool = True) -> str:
    """'2026-05-01 10:20 – 11:05 UTC' (the end's date only when it differs); without ``with_date``
    (under a heading that gives the day) '10:20 – 11:05 UTC'."""
    if not start or not end:
        return short_time(start or end)
    shown = span(start, end)
    return f"{shown if with_date else shown[len('2026-05-01 ') :]} UTC"


def percent(value: float | None) -> str:
    return "–" if value is None else f"{relevance_percent(value)}%"


_BACKTICKED = re.compile(r"`([^`\n]+)`")


def commands(message: str) -> Markup:
    """A message with its `backticked` commands as <code>, everything escaped."""
    return Markup(_BACKTICKED.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(message))))


def project_href(name: str) -> str:
    """A project's page."""
    return "/project?" + urlencode({"name": name})


def names_linked(message: str, meant: Sequence[str], known: Sequence[str], href: Callable[[str], str]) -> Markup:
    """``message`` escaped (an unknown project's), the project names it offers each a link to
    ``href(name)``: those it guesses ("did you mean A or B?", ``meant``) and those it lists ("known: A,
    B and 5 more", ``known``, whose "5 more" opens the Projects page). Words to retype, they were. A
    message worded otherwise is left as it is."""

    def said(names: Sequence[str], joint: str) -> str:
        return joint.join(str(escape(name)) for name in names)

    def linked(names: Sequence[str], joint: str) -> str:
        return joint.join(f'<a href="{escape(href(name))}">{escape(name)}</a>' for name in names)

    out = str(escape(message))
    if meant:
        out = out.replace(f"did you mean {said(meant, ' or ')}?", f"did you mean {linked(meant, ' or ')}?", 1)
    if known:
        listed = re.compile(r"(known(?: projects)?: )" + re.escape(said(known, ", ")) + r"( and (\d+) more\b)?")
        out = listed.sub(
            lambda m: (
                m.group(1)
                + linked(known, ", ")
                + (f' and <a href="/projects">{m.group(3)} more</a>' if m.group(2) else "")
            ),
            out,
            count=1,
        )
    return Markup(out)


def gist(content: str, limit: int = 140) -> str:
    """One line saying what a chunk holds: its first section's kind and first words."""
    for section in sections(content):
        if section.first_line:
            label = {
                "user": "User",
                "assistant": "Assistant",
                "tool": section.label,
                "result": f"{section.label} result",
            }.get(section.kind, "")
            line = f"{label}: {section.first_line}" if label else section.first_line
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""
