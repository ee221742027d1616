"""Coding queries mined from the corpus's own commits: (commit subject -> the session that committed it).

``benchmarks/coding.py --mined`` reads them at benchmark time from ``../shared/corpus`` (nothing of the
corpus is copied into the repository). A session where the agent ran ``git commit -m "…"`` (or the
heredoc form ``-m "$(cat <<'EOF' …``, ``-am``, ``--message=``; Claude Code's Bash, Codex's
``exec_command``/``shell``, Gemini's ``run_shell_command``) did the work its commit subject names, so
the subject is a "how did we do X?" question whose answer is that session.

The question is the subject with its Conventional-Commits type removed and a scope kept as a word
(``feat(hooks): add X`` -> ``hooks: add X``), as the dev set's README does. Only files that
``corpus/sources.tsv`` classes as real recorded sessions are mined (hand-made fixtures are not work).

To score finding the work rather than the mention, :func:`mention_chunks` names the chunks of the
answer session that only repeat the subject: those where it stands in a tool call or a tool's output
(the commit command itself, ``git log``, the commit's own ``[branch abc123] subject`` line), and a
commit command cut before its message shows. Scoring drops them from the hits before sessions are
ranked; a query is "words differ" when no remaining chunk of its sessions holds the subject at all.
"""

from __future__ import annotations

import bisect
import csv
import re
import shlex
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_GIT_COMMIT = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?commit\b")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", ";;"})
_CONVENTIONAL = re.compile(
    r"^(?:feat|fix|docs|chore|refactor|test|tests|perf|build|ci|style|revert)(?:\(([^)]*)\))?!?:\s*",
    re.IGNORECASE,
)
_SECTION = re.compile(r"^\[(User|Assistant|Tool:[^\]\n]*|Result:[^\]\n]*|Error:[^\]\n]*)\]", re.MULTILINE)
_SHELL_KEYS = ("command", "cmd")
MIN_QUERY_WORDS = 2  # a one-word subject ("wip", "fixes") names no work to find


@dataclass(frozen=True, slots=True)
class MinedCommit:
    subject: str  # the commit message's first line, as the agent wrote it
    query: str  # the subject without its Conventional-Commits type
    sessions: frozenset[str]  # every session that ran a commit with this subject
    project: str  # <kind>/<owner__repo> of the corpus folder


def query_of(subject: str) -> str:
    """The subject as a person would search for it: ``feat(x): y`` -> ``x: y``, ``fix: y`` -> ``y``."""
    match = _CONVENTIONAL.match(subject)
    if match is None:
        return subject.strip()
    rest = subject[match.end() :].strip()
    return f"{match.group(1).strip()}: {rest}" if match.group(1) else rest


def commit_subjects(command: str) -> list[str]:
    """The subject (first message line) of each ``git commit -m`` in a shell command, in order."""
    subjects: list[str] = []
    for match in _GIT_COMMIT.finditer(command):
        message = _message_after(command[match.end() :])
        if message is None:
            continue
        subject = _first_line(message)
        if subject and not subject.startswith("$"):
            subjects.append(subject)
    return subjects


def _message_after(rest: str) -> str | None:
    """The ``-m`` value of the commit whose arguments start ``rest``; None when it has none."""
    lexer = shlex.shlex(rest, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = iter(lexer)
        for token in tokens:
            if token in _SEPARATORS or token == "git":
                return None  # the command ended (or the next git command began) without -m
            if token in ("-m", "--message") or (
                token.startswith("-") and not token.startswith("--") and token.endswith("m")
            ):
                return next(tokens, None)
            if token.startswith("--message="):
                return token.removeprefix("--message=")
            if token.startswith("-m") and len(token) > 2:
                return token[2:]
    except ValueError:  # an unclosed quote further on: read the first line of the -m value plainly
        plain = re.search(r"(?:^|\s)-[a-z]*m\s+[\"']([^\"'\n]+)", rest)
        return plain.group(1) if plain else None
    return None


def _first_line(message: str) -> str:
    if message.startswith("$(cat <<"):  # "$(cat <<'EOF'\nsubject\n…\nEOF\n)": the body after the marker line
        message = message.split("\n", 1)[1] if "\n" in message else ""
    return next((line.strip() for line in message.splitlines() if line.strip()), "")


def shell_commands(tool_input: dict[str, Any]) -> Iterator[str]:
    """The shell text of a tool call: Claude Code's and Gemini's ``command``, Codex's ``cmd`` or argv."""
    for key in _SHELL_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            yield value
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            yield value[-1] if len(value) >= 3 and value[-2] in ("-c", "-lc") else " ".join(value)


def real_files(corpus: Path) -> frozenset[Path]:
    """The files ``sources.tsv`` classes as whole real recorded sessions."""
    with (corpus / "sources.tsv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return frozenset(
        (corpus / r["kind"] / r["dest"] / r["relpath"]).resolve() for r in rows if _is_real(r.get("class") or "")
    )


def _is_real(kind: str) -> bool:
    """A whole recorded session ("real", "real (sanitized …)"), not an excerpt of one record."""
    return kind == "real" or kind.startswith("real (")


def mine(corpus: Path) -> tuple[list[MinedCommit], Counter[str]]:
    """Every commit subject run in a real session of ``corpus``, with the sessions that ran it.

    Also returns counts of what was passed over (so a report can say why the set is the size it is).
    """
    from causantic.transcripts.discovery import discover, read_session
    from causantic.transcripts.model import ToolCall

    real = real_files(corpus)
    sessions_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    first_subject: dict[tuple[str, str], str] = {}
    skipped: Counter[str] = Counter()
    for files in discover(corpus):
        for session in read_session(files)[0]:
            if not any(path.resolve() in real for path in session.files):
                skipped["sessions not real"] += 1
                continue
            project = "/".join(session.files[0].resolve().relative_to(corpus.resolve()).parts[:2])
            calls = (
                block
                for transcript in (session.main, *session.subagents)
                if transcript is not None
                for message in transcript.messages
                for block in message.blocks
                if isinstance(block, ToolCall)
            )
            for call in calls:
                for command in shell_commands(call.input):
                    for subject in commit_subjects(command):
                        query = query_of(subject)
                        if len(query.split()) < MIN_QUERY_WORDS:
                            skipped["subjects of one word"] += 1
                            continue
                        key = (project, " ".join(query.lower().split()))
                        sessions_of[key].add(session.session_id)
                        first_subject.setdefault(key, subject)
    mined = [
        MinedCommit(first_subject[key], query_of(first_subject[key]), frozenset(ids), key[0])
        for key, ids in sorted(sessions_of.items())
    ]
    return mined, skipped


def normalised(text: str) -> str:
    return " ".join(text.lower().split())


def sections(content: str) -> Iterator[tuple[str, str]]:
    """A chunk's rendered sections as (label, text): ``User``, ``Assistant``, ``Tool:Bash``, ``Result:Bash``…
    Text before the first label (a prompt carried over) is labelled ``User``."""
    marks = list(_SECTION.finditer(content))
    if not marks or marks[0].start() > 0:
        yield "User", content[: marks[0].start() if marks else len(content)]
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(content)
        yield mark.group(1), content[mark.end() : end]


def mention_chunks(query: str, subject: str, chunks: Iterable[tuple[str, str]]) -> tuple[frozenset[str], bool]:
    """Of a session's chunks (id, content): those that only mention the commit, and whether any other
    chunk still holds the query's words verbatim (False: the "words differ" split)."""
    wanted = normalised(query)
    head = normalised(subject)[:24]
    ignored: set[str] = set()
    verbatim = False
    for chunk_id, content in chunks:
        mention = False
        holds = False
        for label, text in sections(content):
            flat = normalised(text)
            in_tool = label.startswith(("Tool:", "Result:", "Error:"))
            if wanted in flat:
                holds = True
                mention = mention or in_tool
            # The commit command itself, also when the tool line was cut before its message shows.
            if label.startswith("Tool:") and (commit := _GIT_COMMIT.search(flat)):
                mention = mention or head in flat or _cut_before_message(flat[commit.end() :])
        if mention:
            ignored.add(chunk_id)
        elif holds:
            verbatim = True
    return frozenset(ignored), verbatim


def _cut_before_message(after_commit: str) -> bool:
    """Whether a rendered ``git commit`` line was cut (``…[truncated]``) before any message words."""
    if "…[truncated]" not in after_commit:
        return False
    words = after_commit.split("…[truncated]")[0]
    words = re.sub(r"\$\(cat <<\S*|(?:^|\s)-{1,2}[\w-]+(?:=\S*)?|[\"'…]", " ", words)
    return len(words.strip()) < 8


def commits_here(content: str, subject: str) -> bool:
    """Whether a chunk holds the commit of ``subject``: its command, or git's ``[branch abc1234] subject``."""
    head = normalised(subject)[:24]
    for label, text in sections(content):
        flat = normalised(text)
        if label.startswith("Tool:") and _GIT_COMMIT.search(flat) and head in flat:
            return True
        if label.startswith("Result:") and f"] {head}" in flat:
            return True
    return False


def work_pieces(
    sessions: dict[str, list[tuple[str, str]]], commits: Sequence[MinedCommit]
) -> tuple[dict[str, str], dict[str, frozenset[str]]]:
    """Each committing session (its chunks as (id, content), in time order) cut after each of its
    commits, at the last chunk holding it (a commit retried after a failed hook ends at the retry).
    Returns every chunk's piece (``<session>#<n>``) and, by subject, the pieces its commit closed."""
    ends: dict[tuple[str, str], int] = {}
    for commit in commits:
        for session in commit.sessions & sessions.keys():
            at = [i for i, (_, content) in enumerate(sessions[session]) if commits_here(content, commit.subject)]
            if at:
                ends[(commit.subject, session)] = at[-1]
    cuts = {s: sorted({i for (_, t), i in ends.items() if t == s}) for s in sessions}
    units = {
        chunk_id: f"{s}#{bisect.bisect_left(cuts[s], i)}"
        for s, chunks in sessions.items()
        for i, (chunk_id, _) in enumerate(chunks)
    }
    closed: dict[str, set[str]] = defaultdict(set)
    for (subject, session), i in ends.items():
        closed[subject].add(f"{session}#{cuts[session].index(i)}")
    return units, {subject: frozenset(pieces) for subject, pieces in closed.items()}
