"""Claude Code hooks: small, fast and fail-open.

Claude Code runs ``python -m causantic.hooks <name>`` (or ``causantic hook <name>``) with one JSON
object on stdin. Every hook exits 0 whatever happens, logs under ``<home>/logs/`` and records its
last run in ``<home>/hook-status.json``; none loads the embedding model or the vector index itself.

- ``stdin``: reading the stdin without hanging; ``event``: the stdin JSON as one frozen value; a
  missing field is empty, never an error.
- ``runner``: one entry point per hook name; catches everything, exits 0.
- ``briefing``: the session-start memory briefing of a project, cached per session.
- ``claude_md``: the opt-in memory block between fixed markers in an existing CLAUDE.md.
- ``ingest``: pre-compact / session-end spawn a detached worker, which ingests the transcript.
- ``prompt_memory``: the user-prompt-submit hook, relevant past work added to a prompt (over the
  light read-only index of ``causantic.prompt_services``); ``warm``: the warm process that answers
  it over a unix socket, so a prompt does not wait for imports.
- ``chunk_text``: a chunk's text split into its speakers' sections, for the hooks that quote chunks.

The hook log and ``hook-status.json`` are kept below every interface, in ``causantic.logs`` and
``causantic.runs``, as the CLI, the MCP server and the dashboard read them too.
"""
