"""benchmarks/_commits.py: commit subjects read from shell commands, queries, and which chunks only mention."""

from __future__ import annotations

from pathlib import Path

from benchmark_scripts import load_benchmark
from shared_data import require_shared

REPO = Path(__file__).resolve().parents[2]
CORPUS = (REPO / ".." / "shared" / "corpus").resolve()


commits = load_benchmark("_commits.py")


def test_subjects_of_plain_heredoc_and_combined_commands() -> None:
    heredoc = "git add a.go && git commit -m \"$(cat <<'EOF'\nfeat(x): add y\n\nbody line\nEOF\n)\""
    assert commits.commit_subjects(heredoc) == ["feat(x): add y"]
    assert commits.commit_subjects('git add . && git commit --no-verify -m "fix: exclude files\n\n- why"') == [
        "fix: exclude files"
    ]
    assert commits.commit_subjects("git commit -am 'Update npm in container' && git push") == [
        "Update npm in container"
    ]
    assert commits.commit_subjects('git commit -m "first subject" -m "second paragraph"') == ["first subject"]
    assert commits.commit_subjects('cd /repo && git -C sub commit --message="tidy the loader"') == ["tidy the loader"]


def test_commands_without_a_message_give_no_subject() -> None:
    assert commits.commit_subjects("git commit --amend --no-edit && git push") == []
    assert commits.commit_subjects("git log --oneline -5") == []
    # a -m further on belongs to the next command, not to this commit
    assert commits.commit_subjects("git commit --amend --no-edit; echo -m 'not a subject'") == []


def test_an_unclosed_quote_later_still_gives_the_subject() -> None:
    assert commits.commit_subjects("git commit -m \"Add the harness\"\npython - <<'PY'\nprint('x)\nPY") == [
        "Add the harness"
    ]


def test_codex_and_gemini_commands_are_read() -> None:
    assert list(commits.shell_commands({"cmd": "git status"})) == ["git status"]
    assert list(commits.shell_commands({"command": ["bash", "-lc", "git commit -m 'a b'"]})) == ["git commit -m 'a b'"]
    assert list(commits.shell_commands({"command": "git diff", "description": "see"})) == ["git diff"]


def test_query_drops_the_conventional_type_and_keeps_the_scope() -> None:
    assert commits.query_of("feat(hooks): add HookSessionEnd type") == "hooks: add HookSessionEnd type"
    assert commits.query_of("fix: handle array content") == "handle array content"
    assert commits.query_of("Phase 7: mark complete") == "Phase 7: mark complete"


def test_mentions_are_the_commit_and_tool_output_not_the_prose() -> None:
    chunks = [
        ("work", "[User]\nmake the loader lazy\n\n[Tool:Edit] loader.py\n\n[Assistant]\nDone."),
        ("commit", "[Tool:Bash] git add . && git commit -m 'fix: make the loader lazy'\n\n[Result:Bash] ok"),
        ("log", "[Tool:Bash] git log --oneline\n\n[Result:Bash] abc123 fix: make the loader lazy"),
    ]
    ignored, verbatim = commits.mention_chunks("make the loader lazy", "fix: make the loader lazy", chunks)
    assert ignored == {"commit", "log"}
    assert verbatim  # the user's prompt still holds the words
    ignored, verbatim = commits.mention_chunks("lazy loader import", "fix: lazy loader import", chunks)
    assert ignored == set()
    assert not verbatim


def test_a_commit_line_cut_before_its_message_is_a_mention() -> None:
    cut = "[Tool:Bash] git add a/very/long/list/of/paths && git commit -m … …[truncated]"
    ignored, _ = commits.mention_chunks("tidy things up", "tidy things up", [("c", cut), ("w", "[User]\nhi")])
    assert ignored == {"c"}
    other = '[Tool:Bash] git add . && git commit -m "fix: repair the streaming service so that …[truncated]'
    ignored, _ = commits.mention_chunks("tidy things up", "tidy things up", [("c", other), ("w", "[User]\nhi")])
    assert ignored == set()  # another commit's message shows: not this commit


def test_a_session_is_cut_after_each_of_its_commits() -> None:
    chunks = [
        ("a", "[User]\nadd the parser"),
        ("b", "[Tool:Bash] git commit -m 'Add the parser'\n\n[Result:Bash] hook failed"),
        ("c", "[Tool:Bash] git commit -m 'Add the parser'\n\n[Result:Bash] [main 1a2b3c4] Add the parser"),
        ("d", "[User]\nnow the docs"),
        ("e", "[Tool:Bash] git commit -am 'Document the parser'"),
        ("f", "[User]\nthanks"),
    ]
    mined = [
        commits.MinedCommit("Add the parser", "Add the parser", frozenset({"s"}), "p"),
        commits.MinedCommit("Document the parser", "Document the parser", frozenset({"s"}), "p"),
    ]
    units, closed = commits.work_pieces({"s": chunks}, mined)
    assert [units[c] for c, _ in chunks] == ["s#0", "s#0", "s#0", "s#1", "s#1", "s#2"]  # the retry ends piece 0
    assert closed == {"Add the parser": {"s#0"}, "Document the parser": {"s#1"}}


def test_mined_from_the_corpus_real_sessions_only() -> None:
    corpus = require_shared(CORPUS / "sources.tsv", "The transcript corpus").parent
    mined, skipped = commits.mine(corpus)
    assert len(mined) >= 50
    projects = {m.project for m in mined}
    assert "codex/blackgirlbytes__entire-token-costs-benchmark-tests" in projects  # other agents than Claude Code
    assert skipped["sessions not real"] > 0  # hand-made fixtures are passed over
    by_query = {m.query: m for m in mined}
    assert by_query["restore StepCount/FilesTouched guard for ACTIVE sessions in PostCommit"].sessions == {
        "c010174c-a7cd-4bcc-b7d4-61258d6c463f"
    }  # the dev set's dev001, found independently
