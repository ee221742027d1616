"""A topic keeps its id and its name across reclusters while it stays the same topic: sessions of
another project, added later, bring their own topics without renaming the ones a person has learnt.
(Term scores are relative to all topics, so new topics used to shift old labels.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli_stdout
from transcript_files import write_session

from causantic.cluster import steady_label

ORCHARD = [(f"apple banana cherry damson elderberry fig ({n})", f"Planted the orchard row {n}.") for n in range(8)]
ENGINE = [(f"piston crankshaft gasket valve camshaft ({n})", f"Rebuilt the engine part {n}.") for n in range(8)]
# Another project's topic that also speaks of apples: "apple" becomes less distinctive of the orchard.
BAKERY = [(f"apple pie with cinnamon and nutmeg crust ({n})", f"Baked the apple pie batch {n}.") for n in range(8)]


def _topics() -> dict[int, tuple[str, int]]:
    return {t["id"]: (t["label"], t["size"]) for t in json.loads(cli_stdout("clusters", "--json"))["topics"]}


def test_topics_keep_their_ids_and_names_when_another_project_s_sessions_arrive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    first, later = tmp_path / "first", tmp_path / "later"
    write_session(first, "/work/farm", "cccccccc-0000-4000-8000-000000000001", ORCHARD)
    write_session(first, "/work/garage", "cccccccc-0000-4000-8000-000000000002", ENGINE)
    write_session(later, "/work/bakery", "cccccccc-0000-4000-8000-000000000003", BAKERY)
    cli_stdout("batch-ingest", str(first))
    cli_stdout("cluster")
    before = _topics()
    assert len(before) == 2 and "apple" in next(label for label, _ in before.values())

    cli_stdout("batch-ingest", str(later))
    assert "2 of them kept their ids" in cli_stdout("cluster")
    after = _topics()
    assert len(after) == 3
    assert {i: after[i] for i in before} == before  # same ids, same names, same sizes


def test_a_name_changes_once_its_words_no_longer_describe_the_topic() -> None:
    scored = [("login", 4.0), ("token", 3.0), ("refresh", 2.0), ("cookie", 1.5), ("session", 0.5)]
    assert steady_label("cookie, login, token", scored) == "cookie, login, token"  # still scores well
    assert steady_label("session, login, token", scored) == "login, token, refresh"  # a term faded
    assert steady_label("dark, theme, toggle", scored) == "login, token, refresh"  # other words now
    assert steady_label("", scored) == "login, token, refresh"  # a new topic
