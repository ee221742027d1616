"""A recall answer spends its budget on the story, not on tool output: a file dump is cut to its head
and the lines that hold the query's words, a test run's dozen alike "ok … (cached)" lines become one
line and "… 10 more lines like this", and each cut says how many lines it left out; the assistant's
explanation and the edit are told whole. Search and ``--json`` keep the stored text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causantic import Memory
from causantic.cli.main import cli
from causantic.dashboard.story import story_of
from causantic.retrieval.format import told_content

SESSION = "c4ec0000-0000-4000-8000-000000000001"
QUERY = "fix resume when the checkpoint branch was deleted"
PACKAGES = "agent paths strategy session logging settings telemetry hooks git jsonutil ui".split()
TESTS_PASS = "\n".join(f"ok  \tentire.io/cli/cmd/entire/cli/{p}\t(cached)" for p in ["cli", *PACKAGES])
SOURCE = "\n".join(
    [
        "1→package cli",
        "2→",
        "3→import (",
        '4→\t"errors"',
        '5→\t"fmt"',
        '6→\t"os"',
        '7→\t"path/filepath"',
        '8→\t"github.com/go-git/go-git/v5"',
        '9→\t"github.com/spf13/cobra"',
        "10→)",
        "11→",
        "12→func resumeFromBranch(repo *git.Repository, name string) error {",
        "13→\tref, err := repo.Reference(plumbing.NewBranchReferenceName(checkpointBranch), true)",
        "14→\tif err != nil {",
        "15→\t\treturn err",
        "16→\t}",
    ]
)
EXPLANATION = (
    "Found it: resume reads the local checkpoint branch and fails when it was deleted. It should fall back "
    "to origin's copy of the checkpoint branch instead."
)
EDIT_RESULT = (
    "The file /work/cli/cmd/entire/cli/resume.go has been updated. Here's the result of running `cat -n` on a "
    "snippet of the edited file:\n"
    "13→\tref, err := repo.Reference(plumbing.NewBranchReferenceName(checkpointBranch), true)\n"
    "14→\tif errors.Is(err, plumbing.ErrReferenceNotFound) {\n"
    "15→\t\tref, err = remoteCheckpointBranch(repo)\n"
    "16→\t}"
)


def _record(n: int, kind: str, content: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = f"msg_{n}"
    return {
        "type": kind,
        "uuid": f"c4ec0000-0000-4000-8000-{n:012d}",
        "parentUuid": None if n == 1 else f"c4ec0000-0000-4000-8000-{n - 1:012d}",
        "isSidechain": False,
        "sessionId": SESSION,
        "cwd": "/work/cli",
        "timestamp": f"2026-11-02T09:{n:02d}:00.000Z",
        "message": message,
    }


def _call(n: int, name: str, data: dict[str, str], text: str = "") -> dict[str, Any]:
    said = [{"type": "text", "text": text}] if text else []
    return _record(n, "assistant", [*said, {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": data}])


def _result(n: int, text: str) -> dict[str, Any]:
    return _record(n, "user", [{"type": "tool_result", "tool_use_id": f"toolu_{n - 1}", "content": text}])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("episode-results")
    records = [
        _record(1, "user", "entire resume fails after the checkpoint branch was deleted"),
        _call(2, "Read", {"file_path": "/work/cli/cmd/entire/cli/resume.go"}, "Reading how resume finds the branch."),
        _result(3, SOURCE),
        _call(4, "Edit", {"file_path": "/work/cli/cmd/entire/cli/resume.go"}, EXPLANATION),
        _result(5, EDIT_RESULT),
        _call(6, "Bash", {"command": "go test ./..."}),
        _result(7, TESTS_PASS),
        _record(8, "assistant", [{"type": "text", "text": "Fixed: resume falls back to origin's checkpoint branch."}]),
    ]
    folder = root / "projects" / "-work-cli"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with Memory(root / "home") as memory:
        memory.ingest([folder])
    return root / "home"


def _recall(home: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    said = CliRunner().invoke(cli, ["recall", QUERY, *args], catch_exceptions=False)
    assert said.exit_code == 0, said.output
    return said.stdout


def test_a_recall_answer_tells_the_explanation_and_the_edit_not_every_ok_line(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    told = _recall(home, monkeypatch)
    assert EXPLANATION in told and "[Tool:Edit] /work/cli/cmd/entire/cli/resume.go" in told
    assert EDIT_RESULT.split("\n", 1)[1] in told  # the edited code, whole: it is the work
    # The test run: its first two lines, then what the other ten were.
    assert told.count("(cached)") == 2 and "\n… 10 more lines like this\n" in told
    # The file dump: its head, the lines that name resume or the checkpoint branch (in camelCase too),
    # and what was left out between and after.
    assert '6→\t"os"\n… 5 lines left out\n12→func resumeFromBranch(' in told
    assert f"{SOURCE.splitlines()[12]}\n… 3 lines left out" in told  # 13→ ref, err := …(checkpointBranch)…


def test_the_cut_answer_costs_fewer_tokens_and_json_keeps_the_stored_text(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(home) as memory:
        cut = memory.recall(QUERY)
    with Memory(home, overrides={"episodes.resultLines": "0", "episodes.similarLines": "0"}) as memory:
        whole = memory.recall(QUERY)
    assert cut.chunks == whole.chunks and cut.tokens < whole.tokens
    assert f", {cut.tokens:,} tokens; times in UTC):" in _recall(home, monkeypatch).split("\n", 1)[0]
    page = "\n\n".join(step.text for step in story_of(cut).steps)  # the dashboard's story
    assert TESTS_PASS not in page and "\n… 10 more lines like this" in page
    scripted = json.loads(_recall(home, monkeypatch, "--json"))
    assert any(TESTS_PASS in c["content"] for e in scripted["episodes"] for c in e["chunks"])


def test_a_small_budget_tells_the_whole_fix_from_explanation_to_passing_tests(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Told whole, the file dump and the test listing cost 571 tokens: 450 held only the first turn,
    # and the answer stopped before the fix was done.
    told = _recall(home, monkeypatch, "--max-tokens", "450")
    assert told.startswith("Recall: the story behind it, 1 episode (2 chunks,")
    assert EXPLANATION in told and "Fixed: resume falls back to origin's checkpoint branch." in told


def test_an_error_is_told_whole() -> None:
    # What went wrong is the story's turning point, and a traceback says it in its last line.
    trace = "[Error:Bash] Traceback (most recent call last):\n" + "".join(
        f'  File "/work/cli/step{n}.py", line {n}, in run\n' for n in range(12)
    )
    error = trace + "KeyError: 'checkpoint branch'"
    assert told_content(error, lambda line: False, result_lines=6, similar_lines=3) == error
