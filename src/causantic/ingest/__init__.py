"""Ingestion: typed transcripts into chunks and causal edges in the stores.

- ``render``: a turn's messages as compact text sections (thinking left out, tool calls as one line).
- ``redact``: secrets replaced before any text is stored or indexed.
- ``chunker``: turn-based, code-block-aware packing of sections into chunks.
- ``edges``: the causal graph rules (within-chain, cross-session, brief/debrief).
- ``plan``: one session group's chunks and edges, computed without touching a store (runs in workers).
- ``pipeline``: writing plans to the store, idempotently and crash-safely; batch ingest.
"""
