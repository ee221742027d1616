"""A hit that clears the relevance floor but reads under format.WEAK_RELEVANCE is listed as weakly
related, never counted among "relevant" ones: in the CLI's text and --json, and the MCP tool's text and
structured content alike (the dashboard: tests/dashboard/test_http_pages.py).

On the bundled example project without vectors (keyword-only), "invoice test" finds 2 chunks of the
invoice session at about 30% and 2 others at 8% (they hold "test" only); "freeze" finds 2 at 4%.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from process_support import EXAMPLES

from causantic.cli.main import cli
from causantic.facade import Memory
from causantic.mcp.server import build_server
from causantic.retrieval.format import hits_summary, is_weak, relevance_percent

WEAK_RELEVANCE = 0.10  # format.WEAK_RELEVANCE, as the headings below word it
MIXED = "Found 4 memory chunks ("
MIXED_TAIL = "), 2 relevant and 2 weakly related (relevance under 10%, in one line each)"
ALL_WEAK = "Found 2 weakly related memory chunks ("
ALL_WEAK_TAIL = "), none reaching 10% relevance"


@pytest.fixture(scope="module")
def acme_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("weak-hits")
    with Memory(home) as memory:
        report = memory.ingest([EXAMPLES], embed=False)
    assert report.errors == [] and report.chunks_added == 6
    return home


@pytest.fixture
def home(acme_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CAUSANTIC_HOME", str(acme_home))
    return acme_home


def _headers(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("[Project: ")]


def _check_text(text: str) -> None:
    heading = text.splitlines()[0]
    assert heading.startswith(MIXED) and MIXED_TAIL in heading, heading
    headers = _headers(text)
    assert len(headers) == 4
    assert ["| weakly related] " in h for h in headers] == [False, False, True, True], headers
    # Beside relevant hits, a weak one costs a line (its header and the start of its text), not its whole
    # text: the last two lines of the answer are the two weak hits.
    assert text.rstrip("\n").splitlines()[-2:] == headers[2:]
    assert all(len(h) < 400 for h in headers[2:])


def test_the_cli_lists_weak_hits_apart_from_relevant_ones(home: Path) -> None:
    run = CliRunner()
    mixed = run.invoke(cli, ["search", "invoice test"], catch_exceptions=False)
    _check_text(mixed.stdout)
    weak = run.invoke(cli, ["search", "freeze"], catch_exceptions=False).stdout.splitlines()[0]
    assert weak.startswith(ALL_WEAK) and ALL_WEAK_TAIL in weak and "relevant memory chunk" not in weak, weak

    out = json.loads(run.invoke(cli, ["search", "invoice test", "--json"], catch_exceptions=False).stdout)
    assert (out["weak"], out["weak_below"]) == (2, WEAK_RELEVANCE)
    told = int(mixed.stdout.split(MIXED, 1)[1].split(" token", 1)[0].replace(",", ""))
    assert told < out["tokens"], (told, out["tokens"])  # the heading counts what the text tells; --json all of it
    assert [h["relevance"] < WEAK_RELEVANCE for h in out["hits"]] == [False, False, True, True]


def test_the_mcp_search_tool_says_the_same(home: Path) -> None:
    async def ask() -> list[Any]:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return [await client.call_tool("search", {"query": q}) for q in ("invoice test", "freeze")]

    mixed, weak = anyio.run(ask)
    _check_text(mixed.content[0].text)
    assert weak.content[0].text.startswith(ALL_WEAK) and ALL_WEAK_TAIL in weak.content[0].text.splitlines()[0]


def test_a_hit_reading_10_percent_is_never_called_under_10_percent() -> None:
    # The CLI showed "Relevance: 10% | weakly related" beside "(relevance under 10%)" for a 9.6% hit.
    assert (relevance_percent(0.096), is_weak(0.096)) == (10, False)
    assert (relevance_percent(0.094), is_weak(0.094)) == (9, True)
    assert hits_summary([0.3, 0.096, 0.094]).endswith("2 relevant and 1 weakly related (relevance under 10%)")
