"""benchmarks/coding.py on a split of its own: ``--queries FILE --transcripts DIR`` needs no ../shared.

The held-out split's sessions are not in the corpus, so whoever runs it names their folder; this runs
the script as a subprocess on two written sessions, as that run would, and reads its ``--json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from transcript_files import write_session

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "coding.py"

LOGIN = "5e55a000-0000-4000-8000-000000000001"
EXPORT = "5e55b000-0000-4000-8000-000000000002"


def _split(tmp_path: Path) -> tuple[Path, Path]:
    transcripts = tmp_path / "transcripts"
    write_session(
        transcripts,
        "/home/dev/shop",
        LOGIN,
        [
            (
                "Users bounce between /login and /account forever after signing in.",
                "The session cookie "
                "from the old domain is still sent; the redirect guard sees it as expired and sends them back.",
            ),
            ("Clear it then.", "Cleared the stale cookie on sign-in and the guard now checks the new one."),
        ],
    )
    write_session(
        transcripts,
        "/home/dev/shop",
        EXPORT,
        [
            (
                "Finance wants the monthly report as a spreadsheet.",
                "Added a CSV writer for the report rows with a header line and ISO dates.",
            ),
        ],
        day=3,
    )
    queries = tmp_path / "split.jsonl"
    rows = [
        {"id": "q1", "query": "fix the login redirect loop", "relevant_sessions": [LOGIN], "verbatim": True},
        {"id": "q2", "query": "export the monthly report as CSV", "relevant_sessions": [EXPORT], "verbatim": True},
    ]
    queries.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return queries, transcripts


@pytest.mark.slow
def test_a_split_outside_the_corpus_is_scored_from_its_own_transcripts(tmp_path: Path) -> None:
    queries, transcripts = _split(tmp_path)
    out = tmp_path / "result.json"
    run = subprocess.run(
        [
            sys.executable,
            str(BENCHMARK),
            "--queries",
            str(queries),
            "--transcripts",
            str(transcripts),
            "--store",
            str(tmp_path / "store"),
            "--search-only",
            "--timing-rounds",
            "0",
            "--variants",
            "default,keyword",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "2 sessions" in run.stderr  # only the split's own transcripts were ingested
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["n_queries"] == 2
    assert result["search_variants"]["default"]["r1"] == 100.0
    assert set(result["search_variants"]) == {"default", "keyword"}
    assert "nan" not in run.stdout  # untimed, and no query by meaning: a dash, not nan


@pytest.mark.slow
def test_an_answer_of_the_right_sessions_turns_in_order_counts_as_its_story(tmp_path: Path) -> None:
    # Recall answers each query with its session's chunks, all of them matches: "tells story" (some
    # chunk no match) says no story, while the answer is the session from its request on, in order.
    queries, transcripts = _split(tmp_path)
    out = tmp_path / "result.json"
    run = subprocess.run(
        [sys.executable, str(BENCHMARK), "--queries", str(queries), "--transcripts", str(transcripts)]
        + ["--store", str(tmp_path / "store"), "--timing-rounds", "0", "--variants", "default", "--json", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    recall = json.loads(out.read_text(encoding="utf-8"))["recall"]
    assert recall["tells_story"] == 0.0
    assert recall["relevant_story"] == 100.0 and recall["on_relevant"] == 100.0
    assert "relevant story" in run.stdout and "on relevant" in run.stdout
    # Each answer opens on its right session; of its first 500 tokens the heading is not the session's.
    assert recall["first_relevant"] == 100.0 and 80.0 < recall["lead_on_relevant"] < 100.0
    assert "first relevant" in run.stdout and "first 500 on rel." in run.stdout


@pytest.mark.slow
def test_here_asks_from_the_folder_of_the_project_that_made_the_commit(tmp_path: Path) -> None:
    queries, transcripts = _split(tmp_path)
    out, details = tmp_path / "result.json", tmp_path / "details.jsonl"
    run = subprocess.run(
        [sys.executable, str(BENCHMARK), "--queries", str(queries), "--transcripts", str(transcripts), "--here"]
        + ["--store", str(tmp_path / "store"), "--timing-rounds", "0", "--variants", "default", "--json", str(out)]
        + ["--details", str(details)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "asked from the folder of the project that made the commit (--here)" in run.stdout
    assert json.loads(out.read_text(encoding="utf-8"))["here"] == "own"
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    assert {r["first_relevant"] for r in rows if r["kind"] in ("recall", "predict")} == {True}


def test_a_missing_split_folder_is_named(tmp_path: Path) -> None:
    queries, _ = _split(tmp_path)
    run = subprocess.run(
        [sys.executable, str(BENCHMARK), "--queries", str(queries), "--transcripts", str(tmp_path / "absent")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert f"Not found: {tmp_path / 'absent'}" in run.stderr
