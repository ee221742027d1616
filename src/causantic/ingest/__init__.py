"""Ingestion: typed transcripts into chunks and causal edges in the stores.

- ``render``: a turn's messages as compact text sections (thinking left out, tool calls as one line).
- ``redact``: secrets replaced before any text is stored or indexed.
- ``chunker``: turn-based, code-block-aware packing of sections into chunks.
- ``tokens``: approximate token counts (a leaf module, cheap to import).
- ``edges``: the causal graph rules along one stream and across sessions (within-chain, cross-session).
- ``streams``: one agent's transcript as chunk records, and which of its chunks holds a call, a
  result, a message or a moment.
- ``subagents``: which sub-agent streams to keep (stubs and warm-ups are skipped), which call started
  each one, and brief/debrief edges (the ambient rule for agents no call started).
- ``teams``: agent teams — teammates and their names, team-spawn/team-report/peer-message edges.
- ``plan``: one session group's chunks and edges, computed without touching a store (runs in workers).
- ``pipeline``: writing plans to the store, idempotently and crash-safely; batch ingest.
- ``rules``: the version of these rules, recorded per file: a file read under older rules is read again.
"""
