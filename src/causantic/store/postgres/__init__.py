"""Team memory on PostgreSQL + pgvector: a second implementation of the store seam.

Needs the ``postgres`` extra (psycopg, pgvector); nothing here is imported unless
``storage.backend`` is ``postgres``.
"""
