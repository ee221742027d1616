"""Retrieval: everything that reads memory back.

- ``listing``: projects, sessions and statistics.
"""
