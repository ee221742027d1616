"""Vector health (issue 18, item 4): chunks without vectors are noticed, reported and repaired.

Vectors live in SQLite beside their chunks; the ``vectors/`` folder holds only the derived ANN index.
So losing that folder loses no vector, and a chunk whose vector row is missing is found by the same
query that finds a new chunk: ``embed`` and the next ingest add it, search notes the share meanwhile.
"""

from __future__ import annotations

import shutil

from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.indexing import embedding_text
from causantic.ingest.service import embed_pending, ingest_paths
from causantic.retrieval.search import SearchRequest
from causantic.services import open_services


def test_lost_vectors_are_noted_by_search_and_restored_by_embed_and_ingest() -> None:
    with open_services(Config()) as services:
        report = ingest_paths(services, [SESSIONS_DIR], workers=1)
        assert report.vectors_added == 6 and report.seconds >= report.embed_seconds > 0
        shutil.rmtree(services.vectors.folder, ignore_errors=True)  # the old failure: rm -rf <home>/vectors
        assert services.vectors.count() == 6
        lost = sorted(services.vectors.ids())[:4]
        services.vectors.delete(lost)

        result = services.searcher.search(SearchRequest("rate limiting with redis"))
        assert result.mode == "hybrid"
        assert any("4 of 6 chunks (67%) have no vector" in note for note in result.notes), result.notes

        assert embed_pending(services) == 4
        assert ingest_paths(services, [SESSIONS_DIR], workers=1).vectors_added == 0
        services.vectors.delete(lost[:1])
        assert ingest_paths(services, [SESSIONS_DIR], workers=1, force=True).vectors_added == 1
        assert services.vectors.health(fresh=True).missing == 0
        assert not any("no vector" in n for n in services.searcher.search(SearchRequest("redis")).notes)


def test_the_embedding_text_keeps_words_and_drops_payloads() -> None:
    chunk = (
        "[User]\nwhy does the parser test fail?\n[Tool:Bash] pytest -q tests/test_parser.py\n"
        "[Result:Bash] " + "E   AssertionError " * 40 + "\n" + "=" * 60 + "\n"
        "[Assistant]\nThe fixture opens the database before the migration runs.\n"
        "The fixture opens the database before the migration runs."
    )

    text = embedding_text(chunk, tool_result_chars=50)

    assert "why does the parser test fail?" in text and "[Tool:Bash] pytest -q tests/test_parser.py" in text
    assert len(text.split("[Result:Bash]")[1].split("\n")[0]) <= 50
    assert "=" * 60 not in text
    assert text.count("The fixture opens the database") == 1


def test_stats_and_hook_status_warn_about_chunks_without_vectors() -> None:
    from click.testing import CliRunner

    from causantic.cli.main import cli
    from causantic.runs import record

    with open_services(Config()) as services:
        ingest_paths(services, [SESSIONS_DIR], workers=1)
        services.vectors.delete(sorted(services.vectors.ids())[:2])
    record("session-end", success=True, started=0.0, outcome="ingested")
    runner = CliRunner()

    stats = runner.invoke(cli, ["stats"])
    status = runner.invoke(cli, ["hook", "status"])
    as_json = runner.invoke(cli, ["stats", "--json"])

    assert stats.exit_code == status.exit_code == as_json.exit_code == 0
    assert "2 chunks have no vector" in stats.stderr and "causantic embed" in stats.stderr
    assert "2 of 6 chunks have no vector" in status.stderr
    assert '"chunks_without_vectors": 2' in as_json.stdout
