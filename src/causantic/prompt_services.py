"""The prompt hook's composition root: the light read-only index, and nothing else.

Claude Code waits for the user-prompt-submit hook on every prompt, and :mod:`causantic.services`
(with the configuration's validation, the full store and the search stack behind it) cost that hook
more than its search. So the hook deliberately bypasses the services and the ``Memory`` facade: it
opens :class:`~causantic.store.prompt_index.PromptIndex` here, the second (and only other) place
that constructs a store. A store written by an older version is migrated first, once, by opening
it the full way, as any other entry point would.
"""

from __future__ import annotations

from pathlib import Path

from causantic.store.prompt_index import PromptIndex, StaleSchema


def open_prompt_index(db_path: Path) -> PromptIndex:
    """The read-only index over the store at ``db_path`` (use as a context manager)."""
    try:
        return PromptIndex(db_path)
    except StaleSchema:
        from causantic.store.memory import MemoryStore

        MemoryStore(db_path).close()
        return PromptIndex(db_path)
