"""Claude Code hooks: small, fast and fail-open.

Claude Code runs ``python -m causantic.hooks <name>`` (or ``causantic hook <name>``) with one JSON
object on stdin. Every hook exits 0 whatever happens, logs under ``<home>/logs/`` and records its
last run in ``<home>/hook-status.json``; none loads the embedding model or the vector index itself.

- ``event``: the stdin JSON as one frozen value; a missing field is empty, never an error.
- ``status``: owner-only files: the hook log, ``hook-status.json`` (atomic), lock files.
- ``briefing``: the session-start memory briefing of a project, cached per session.
- ``claude_md``: the opt-in memory block between fixed markers in an existing CLAUDE.md.
- ``ingest``: pre-compact / session-end spawn a detached worker, which ingests the transcript.
- ``runner``: one entry point per hook name; catches everything, exits 0.
"""
