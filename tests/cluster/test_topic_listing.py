"""`causantic clusters` as people read it: an aligned table whose project names stay whole and apart,
piped or on a terminal, and a block per topic on a narrow terminal, the names wrapping under
themselves. Scripts get the names as a list (--json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from causantic.cli import output
from causantic.cli.main import cli

pytestmark = pytest.mark.slow  # embeds and clusters real sessions

# Sessions of one repository (entireio/cli) recorded in five people's checkouts: five projects
# sharing topics, so a topic lists several project names.
SESSIONS = [
    f"entireio__cli/{path}/full.jsonl"
    for path in (
        "c9/883595c929/0",
        "8c/fa910f8ef9/3",
        "eb/ea74eff5e0/0",
        "68/e0ff0d6706/0",
        "dc/49cb8a2a42/0",
        "c6/39a44ea03d/0",
        "6c/3e73767733/0",
        "a8/95cb11d3ba/0",
        "42/527c9c20c8/1",
        "04/0b015eb1c2/0",
        "30/e81e82f6ba/0",
        "a4/7cfcb669b1/0",
        "48/b429896bcb/0",
        "5d/755497c182/0",
    )
]


@pytest.fixture(scope="module")
def topics_home(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("topics") / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CAUSANTIC_HOME", str(home))
        ingested = CliRunner().invoke(cli, ["ingest", *(str(corpus_dir / s) for s in SESSIONS)])
        assert ingested.exit_code == 0, ingested.output
        assert CliRunner().invoke(cli, ["cluster"]).exit_code == 0
    return home


def _clusters(home: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    result = CliRunner().invoke(cli, ["clusters", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_topics_list_their_projects_as_names_for_scripts(topics_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topics = json.loads(_clusters(topics_home, monkeypatch, "--json"))["topics"]
    assert any(len(t["projects"]) >= 2 for t in topics), "the test sessions should share a topic across projects"
    assert all(isinstance(t["projects"], list) and all(t["projects"]) for t in topics)


def test_piped_the_table_is_aligned_and_names_are_apart(topics_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topics = json.loads(_clusters(topics_home, monkeypatch, "--json"))["topics"]
    shared = next(t for t in topics if len(t["projects"]) >= 2)
    *lines, left_out = _clusters(topics_home, monkeypatch).splitlines()
    assert left_out.endswith("belong to no topic.")  # said once, under the table
    assert ", ".join(shared["projects"]) in next(ln for ln in lines if ln.startswith(f"{shared['id']:>3} "))
    # Every column rule at the same place on every row: one line a topic, no row folded.
    rules = {tuple(m.start() for m in re.finditer("[┃│╇]", ln)) for ln in lines if "━" not in ln}
    assert len(rules) == 1 and len(lines) == len(topics) + 2
    assert re.search(r"│ \d{4}-\d\d-\d\d +│ \d{4}-\d\d-\d\d +│", lines[2]), "first and last as days"


def test_on_a_60_column_terminal_each_topic_is_a_block_whose_names_wrap_under_themselves(
    topics_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = json.loads(_clusters(topics_home, monkeypatch, "--json"))["topics"]
    monkeypatch.setattr(output.console, "width", 60)
    lines = [ln.rstrip() for ln in _clusters(topics_home, monkeypatch).splitlines()]
    assert all(len(ln) <= 60 for ln in lines)
    starts = [i for i, ln in enumerate(lines) if ln.startswith("projects  ")]
    assert len(starts) == len(topics)
    for topic, start in zip(topics, starts, strict=True):
        end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" " * 10)), len(lines))
        value = " ".join(ln.strip() for ln in lines[start:end]).removeprefix("projects").strip()
        assert value == ", ".join(topic["projects"])  # whole names, wrapped at the spaces between them
