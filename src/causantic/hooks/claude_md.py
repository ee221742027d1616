"""The opt-in memory block in a project's CLAUDE.md.

Only with ``hooks.claudeMd`` set to true, and only in a CLAUDE.md that already exists (the project
root's, else ``.claude/CLAUDE.md``): this never creates a file. The block sits between fixed
markers (the earlier Causantic's, so an old block is taken over rather than duplicated); text
outside them is never touched. HTML comments are stripped before Claude reads the file, so the
markers cost no context.
"""

from __future__ import annotations

import os
from pathlib import Path

from causantic.files import atomic_write

START = "<!-- MEMORY_START -->"
END = "<!-- MEMORY_END -->"


def find_claude_md(project_root: str) -> Path | None:
    root = Path(project_root)
    if not root.is_absolute() or not root.is_dir():
        return None
    return next((p for p in (root / "CLAUDE.md", root / ".claude" / "CLAUDE.md") if p.is_file()), None)


def render_block(briefing: str) -> str:
    return f"{START}\n## Memory Context\n\n{briefing.strip()}\n{END}"


def update_claude_md(path: Path, briefing: str) -> bool:
    """Put the block in ``path`` (replacing an earlier one); True if the file changed."""
    path = path.resolve()  # a symlinked CLAUDE.md keeps its link; its target is updated
    text = path.read_text(encoding="utf-8")
    block = render_block(briefing)
    start = text.find(START)
    end = text.find(END, start + len(START)) if start >= 0 else -1
    if start >= 0 and end >= 0:
        updated = text[:start] + block + text[end + len(END) :]
    else:
        updated = text.rstrip("\n") + ("\n\n" if text.strip() else "") + block + "\n"
    if updated == text:
        return False
    atomic_write(path, updated, mode=os.stat(path).st_mode & 0o777)
    return True
