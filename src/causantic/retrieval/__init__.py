"""Retrieval: everything that reads memory back, over the store's protocols (never SQL, never an
interface). The interfaces reach it through :class:`~causantic.facade.Memory`, and import from it
only the result values, renderings and option limits.

Answers:

- ``search``: the search pipeline (keyword + vectors, fused, re-scored, diversified); ``ranking``,
  ``relevance``, ``feedback``, ``term_feedback``, ``mentions`` and ``expansion`` are its parts.
- ``episodes``: recall/predict, the story around the best hits; ``chains``: the older chain walk
  (``episodes.mode = "chain"``).
- ``reconstruct``: a project's sessions in time order (timeline or text).
- ``moments``: the past moments the prompt-memory hook adds to a prompt; ``prompt_report``: what it
  added, and why not.
- ``listing``: projects, sessions, topics and store statistics; ``browse``: the dashboard's pages of
  sessions and topics; ``topic_map``: the 2-D map of topics.
- ``forget``: deleting chosen chunks after a preview.
- ``federated``: one answer from team memory and the local store beside it.

Shared by every interface:

- ``format``: the text renderings; ``output``: the one JSON shape per answer; ``options``: the
  limits, defaults and help of the options every interface offers.
- ``blas``: keeps numpy's BLAS on one thread in a process that searches.
"""
