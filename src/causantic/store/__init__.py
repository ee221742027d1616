"""Storage: SQLite (chunks, edges, projects, keyword index, vectors) and a derived ANN index file.

- ``sqlite``: opening connections with the right pragmas; the one transaction helper.
- ``migrations``: numbered schema migrations.
- ``fts``: safe FTS5 query building and identifier expansion for the keyword index.
- ``records``: the frozen row values the store takes and returns.
- ``memory``: :class:`MemoryStore`, every SQL statement the product runs.
- ``vectors``: :class:`VectorIndex`, chunk embeddings in SQLite and their faiss ANN index.
"""
