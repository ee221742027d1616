"""benchmarks/answer_content.py: a rendered answer's lines sorted by what they are."""

from __future__ import annotations

import pytest
from benchmark_scripts import BENCHMARKS, load_benchmark

from causantic.store.features import word_stems

ANSWER = """Recall: the story behind it, 1 episode (1 chunk, 90 tokens):

== Episode 1 of 1 · cli · session c4ec0000 (Claude Code) · 2026-11-02 09:01 · best match 56% ==

[1/1 | Date: 2026-11-02 09:01 | match]
[User]
why does resume fail

[Tool:Bash] go test ./...

[Result:Bash] ok  \tentire.io/cli/resume\t(cached)
ok  \tentire.io/cli/agent\t(cached)
… 10 more lines like this

[Assistant]
Fixed."""


def test_each_line_of_an_answer_counts_for_its_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports coding.py's query loader
    kinds = load_benchmark("answer_content.py").kinds_of(ANSWER, word_stems("resume"))
    assert kinds["user"] == len("[User]\nwhy does resume fail\n\n")
    assert kinds["tool call:Bash"] == len("[Tool:Bash] go test ./...\n\n")
    assert kinds["elision"] == len("… 10 more lines like this\n")
    assert kinds["assistant"] == len("[Assistant]\nFixed.\n")
    results = "[Result:Bash] ok  \tentire.io/cli/resume\t(cached)\nok  \tentire.io/cli/agent\t(cached)\n"
    assert kinds["tool result:Bash"] == len(results) + 1  # and the blank line after the elision
    assert kinds["split: result lines with query words"] == len(results.split("\n")[0]) + 1
    assert sum(v for k, v in kinds.items() if not k.startswith("split: ")) == len(ANSWER) + 1
