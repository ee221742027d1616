"""Storage: SQLite (chunks, edges, projects, keyword index, vectors) and a derived ANN index file;
team memory on PostgreSQL in ``postgres/``. Every SQL statement the product runs lives below here.

The seam the layers above use:

- ``protocol``: what they may ask of memory (:class:`MemoryStoreProtocol`, :class:`VectorIndexProtocol`);
- ``records``: the frozen row values the stores take and return;
- ``features``: a chunk's text features, which scoring reads; ``fts``: keyword-index text preparation
  and safe FTS5 query building.

Behind it:

- ``base``: :class:`SqlStore`, the statements SQLite and PostgreSQL run alike; ``common``: the
  decisions that do not depend on the database; ``rows``: chunk rows read back as records.
- ``memory``: :class:`MemoryStore`, the SQLite store; ``keyword``: its BM25 search over FTS5;
  ``vectors``: :class:`VectorIndex`, chunk embeddings in SQLite and their faiss ANN index.
- ``sqlite``: opening connections with the right pragmas; the one transaction helper.
- ``migrations``: numbered schema migrations.
- ``prompt_index``: the prompt hook's read-only, light door into the SQLite file.
- ``postgres``: the same seam on PostgreSQL + pgvector (team memory).
"""
