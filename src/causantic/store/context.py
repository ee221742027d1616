"""Context a chunk lacks, kept beside it as keyword-search fields: its session's task and project,
and the files its turn touched.

A chunk deep in a long session rarely repeats what the session is about ("fix tests" in the opening
prompt, then forty chunks of Go test output) or which files the turn's earlier calls opened. The
store keeps two short texts per chunk that the keyword index holds in columns of their own, each
weighted in BM25 by a configuration key (``retrieval.keywordSessionWeight``,
``retrieval.keywordFilesWeight``):

- ``context_session``: the session's title (its first real prompt, 200 characters at most) and the
  project's name;
- ``context_files``: the names of the files the turn's file tools (``Read``, ``Edit``, ``Write``...)
  named and of the paths in its shell commands.

Both come from what the store already holds (the session's title, the project, the tool-call lines
of the turn's chunks, as :mod:`causantic.ingest.render` writes them), so rows written before the
columns existed are filled from the store alone (:func:`causantic.store.migrations.context_updates`).
Pure text, no database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from causantic.store.records import ChunkRecord, Project

# Tool-call lines: ``[Tool:Name] what it named`` at a line start (ingest.render's one line per call).
_TOOL_CALL = re.compile(r"^\[Tool:([^\]\n]+)\] ([^\n]+)", re.MULTILINE)
# Tools whose summary is one file path (Claude Code, Codex, Gemini CLI).
_FILE_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "read_file", "write_file", "replace"})
# Tools whose summary is a shell command: its path-like words count (``pytest tests/test_x.py``).
_SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "run_shell_command"})
# A word with a slash, or a file name with an extension, in a shell command.
_PATH_WORD = re.compile(r"(?:[\w.@~+-]*/)+[\w.@+-]+|[\w@+-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b")
FILES_MOST = 40  # paths kept per turn: a turn that touched hundreds is not about each one


def turn_files(contents: Iterable[str]) -> list[str]:
    """The distinct paths a turn's chunks name in their tool calls, in order."""
    found: dict[str, None] = {}
    for content in contents:
        if "[Tool:" not in content:
            continue
        for name, named in _TOOL_CALL.findall(content):
            if name in _FILE_TOOLS:
                paths = [named.strip()]
            elif name in _SHELL_TOOLS:
                paths = _PATH_WORD.findall(named)
            else:
                continue
            for path in paths:
                path = path.strip("./")
                if path and len(found) < FILES_MOST:
                    found.setdefault(path, None)
    return list(found)


def session_text(title: str | None, project_name: str) -> str:
    """The ``context_session`` value: the session's title and its project's name."""
    return f"{title or ''} {project_name}".strip()


def files_text(paths: Iterable[str]) -> str:
    """The ``context_files`` value: each file's name without folder or extension, once, one space
    apart ('' when none: filled, but empty). The folders and extensions (``cmd/entire/cli``, ``go``)
    are the same in most of a project's chunks: kept, they made the field a third of the text's size
    on the coding set (every chunk of a turn holds it) while saying little; the names say which
    files (``manual_commit_git``), and the text itself still holds the paths its calls named."""
    return " ".join(dict.fromkeys(stem for path in paths if (stem := PurePosixPath(path).stem)))


def chunk_context(chunks: Sequence[ChunkRecord], title: str | None, project: Project) -> dict[str, tuple[str, str]]:
    """Each chunk's (context_session, context_files) by id; a turn's files come from every chunk of it
    in ``chunks`` (a sub-agent's turns are its own)."""
    by_turn: dict[tuple[str, int], list[str]] = {}
    for chunk in chunks:
        by_turn.setdefault((chunk.agent, chunk.turn_index), []).append(chunk.content)
    files = {turn: files_text(turn_files(contents)) for turn, contents in by_turn.items()}
    session = session_text(title, project.name)
    return {c.id: (session, files[(c.agent, c.turn_index)]) for c in chunks}
