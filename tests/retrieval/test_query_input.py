"""Queries at the CLI boundary: nothing to look for is refused clearly; "-" queries pass after "--"."""

from __future__ import annotations

import pytest
from process_support import causantic

from causantic.errors import InvalidQuery, checked_query
from causantic.examples import SESSIONS_DIR


@pytest.mark.parametrize("query", ["", "   ", "\t\n", "a\x00b", "\ud800", "x\ufffd"])
def test_queries_with_nothing_to_look_for_are_refused(query: str) -> None:
    with pytest.raises(InvalidQuery):
        checked_query(query)


def test_the_cli_refuses_an_empty_query_and_takes_a_dash_query_after_double_dash() -> None:
    assert causantic("ingest", "--no-embed", str(SESSIONS_DIR)).returncode == 0
    for command in ("search", "recall", "predict"):
        done = causantic(command, "  ")
        assert done.returncode == 1 and "is empty" in done.stderr and "Relevance" not in done.stdout
    dashed = causantic("search", "--", "--search-all flag")
    assert dashed.returncode == 0, dashed.stderr
    assert "No such option" in causantic("search", "--search-all flag").stderr
    assert 'goes after "--"' in causantic("search", "--help").stdout
