from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from causantic.cluster import STEADY_TERMS, distinct_labels, scored_terms, steady_label, tokenize


def cluster_terms(texts_by_cluster: Mapping[Hashable, Sequence[str]], **options: Any) -> dict[Hashable, list[str]]:
    """Each cluster's most distinctive terms, best first."""
    return {key: [term for term, _ in found] for key, found in scored_terms(texts_by_cluster, **options).items()}


def cluster_labels(texts_by_cluster: Mapping[Hashable, Sequence[str]], **options: Any) -> dict[Hashable, str]:
    """Each cluster's label as ingest names a new topic (ingest/topics.py: no earlier label to keep)."""
    scored = scored_terms(texts_by_cluster, terms=STEADY_TERMS, **options)
    return {key: steady_label("", found) for key, found in scored.items()}


PYTEST = [
    "[User]\nThe fixture in conftest.py leaks a tmp_path between tests",
    "[Assistant]\nI'll make the fixture function-scoped in conftest.py so pytest gives each test a tmp_path",
    "[Tool:Bash]\npytest tests/store -k fixture -x",
    "[Result:Bash]\n3 passed in 0.4s, the conftest.py fixture now yields a fresh tmp_path",
]
DOCKER = [
    "[User]\nThe docker compose stack fails: postgres is unhealthy",
    "[Assistant]\nThe healthcheck in docker-compose.yml runs before postgres listens; add start_period",
    "[Tool:Bash]\ndocker compose up -d postgres && docker compose ps",
    "[Result:Bash]\npostgres healthy; the docker-compose.yml healthcheck passes now",
]
NOISE = [
    "[Assistant]\nLet me check the session 550e8400-e29b-41d4-a716-446655440000 and commit 3f9a2c1d0be7",
    "[Tool:Read]\n/tmp/notes.txt 12 34 5678",
]


def test_tokenize_keeps_code_identifiers_whole() -> None:
    terms = tokenize("Call cluster_vectors(minClusterSize=4) from src/causantic/cluster/density.py")
    assert {"cluster_vectors", "minClusterSize", "density.py", "causantic"} <= set(terms)


def test_tokenize_splits_attribute_chains_but_not_file_names() -> None:
    assert tokenize("np.linalg.norm in config.json") == ["np", "linalg", "norm", "config.json"]


def test_tokenize_drops_uuids_hashes_numbers_markers_and_stop_words() -> None:
    text = (
        "[User]\n[Assistant]\n[Tool:Bash]\n[Result:Bash]\n...[truncated]\n"
        "The 550e8400-e29b-41d4-a716-446655440000 "
        "at 3f9a2c1d0be7 took 1234 ms, 0x1F, toolu_01A2b3C4d5E6 and req_011CY4p6wvSLjiJyWSJ2VXzB then"
    )
    assert tokenize(text) == ["took", "ms"]


def test_tokenize_lowercases_words_but_keeps_identifier_spelling() -> None:
    assert tokenize("HDBSCAN Clusters ClusterManager MAX_TOKENS") == [
        "hdbscan",
        "clusters",
        "ClusterManager",
        "MAX_TOKENS",
    ]


def test_each_cluster_is_labelled_by_a_few_of_its_distinctive_terms() -> None:
    labels = cluster_labels({"tests": PYTEST, "infra": DOCKER}, background=NOISE)
    assert set(labels) == {"tests", "infra"}
    for label, expected in (
        (labels["tests"], {"conftest.py", "fixture", "tmp_path", "pytest"}),
        (labels["infra"], {"docker", "postgres", "compose", "docker-compose.yml", "healthcheck", "yml"}),
    ):
        terms = label.split(", ")
        assert 2 <= len(terms) <= 4
        assert set(terms) <= expected, label


def test_labels_never_contain_uuids_hashes_or_rendering_markers() -> None:
    noisy = {
        0: [
            f"[Tool:Bash]\nrun {u} 9f86d081884c7d65 flaky retry"
            for u in (
                "550e8400-e29b-41d4-a716-446655440000",
                "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
                "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
            )
        ],
        1: ["[Assistant]\nthe migration adds an index", "[User]\nrun the migration index script"],
    }
    for terms in cluster_terms(noisy).values():
        for term in terms:
            assert not re.search(r"[0-9a-f]{8}|Tool|Bash|Assistant|User", term), term


def test_a_term_from_a_single_text_does_not_name_a_cluster() -> None:
    texts = ["refactor the parser", "refactor the lexer", "zeppelin zeppelin zeppelin zeppelin"]
    assert "zeppelin" not in cluster_terms({0: texts, 1: ["unrelated words here"]})[0]


def test_a_cluster_without_usable_terms_gets_an_empty_label() -> None:
    assert cluster_labels({0: ["[User]", "12 34"], 1: []}) == {0: "", 1: ""}


def test_tokenize_drops_home_folders_user_names_and_top_level_domains() -> None:
    assert tokenize("/home/alex/projects/app.js and /Users/dain/workspace/site see pris.ly/d/client") == [
        "app.js",
        "site",
        "pris",
        "client",
    ]


def test_a_file_and_the_word_it_is_named_after_count_as_one_term() -> None:
    texts = ["update the README.md readme", "the readme and README.md again", "README.md readme intro"]
    terms = cluster_terms({0: texts, 1: ["something else entirely", "else again"]}, terms=4)[0]
    assert len([t for t in terms if t.lower().startswith("readme")]) == 1


def test_tool_acknowledgements_lend_no_label_their_filler() -> None:
    """Every TodoWrite, Write and Edit result says it worked in the same words; a topic of a todo app
    was labelled 'todo, app, successfully'."""
    ack = (
        "[Result:TodoWrite] Todos have been modified successfully. Ensure that you continue to use the todo "
        "list to track your progress. Please proceed with the current tasks if applicable\n"
        "[Result:Edit] The file /src/app.js has been updated successfully."
    )
    assert not {"successfully", "ensure", "proceed", "applicable", "continue"} & set(tokenize(ack))


def test_a_label_names_no_folder_that_only_says_where_code_sits() -> None:
    # Every session of a project reads files under ~/projects/<name>/ and writes to /tmp: those
    # folders named the largest topic of the real corpus ("spotter, spotter_web, projects").
    spotter = [
        f"[Tool:Edit] /home/USER/projects/spotter/lib/spotter_web/live/session_live_{n}.ex\n"
        f"[Result:Bash] wrote /tmp/spotter_{n}.log; node_modules/phoenix/priv/static/phoenix.js rebuilt"
        for n in range(6)
    ]
    other = ["[User]\nThe docker compose stack fails: postgres is unhealthy"] * 3
    terms = cluster_terms({"spotter": spotter, "docker": other}, terms=8)["spotter"]
    assert "spotter_web" in terms
    assert not {"projects", "tmp", "node_modules", "lib", "home"} & set(terms), terms
    assert "projects" in tokenize("Which projects use phoenix?")  # the word itself stays


def test_a_word_cut_short_by_truncation_is_no_term() -> None:
    assert tokenize("the telemetry note shows This ma …[truncated]") == ["telemetry", "note", "shows"]


def test_a_long_listing_gives_its_file_names_but_not_its_permissions_owner_or_group() -> None:
    listing = (
        "[Result:Bash]\ntotal 24\ndrwxr-xr-x   5 alex  staff   160 Sep  3 10:00 todo-app\n"
        "-rw-r--r--@  1 alex  staff  1204 Sep  3 10:00 README.md\n"
    )
    # A topic of five real projects was labelled "drwxr, staff, xr" (benchmarks/topics.py).
    assert tokenize(listing) == ["total", "todo", "app", "README.md"]
    assert tokenize("The staff rota and a drwxr typo") == ["staff", "rota", "drwxr", "typo"]


def test_two_topics_with_one_best_label_are_told_apart_by_their_next_terms() -> None:
    scored = {
        "big": [("telemetry", 0.9), ("maps", 0.8), ("enabled", 0.7), ("opt-out", 0.2)],
        "small": [("telemetry", 0.9), ("maps", 0.8), ("enabled", 0.7), ("sentry", 0.5), ("dsn", 0.4)],
        "other": [("docker", 0.9), ("compose", 0.8), ("postgres", 0.7)],
    }
    names = {key: steady_label("", found) for key, found in scored.items()}
    assert names["big"] == names["small"]  # what a user saw: two topics of one name in the list

    named = distinct_labels(names, scored, ["big", "small", "other"])

    assert named == {
        "big": "telemetry, maps, enabled",  # the larger keeps its label
        "small": "telemetry, sentry, dsn",
        "other": "docker, compose, postgres",
    }


def test_a_topic_with_no_other_terms_keeps_the_label_it_shares() -> None:
    scored = {1: [("enabled", 0.9), ("maps", 0.8)], 2: [("enabled", 0.9), ("maps", 0.8)]}
    names = {key: steady_label("", found) for key, found in scored.items()}
    assert distinct_labels(names, scored, [1, 2]) == {1: "enabled, maps", 2: "enabled, maps"}


def test_folders_and_branch_names_in_paths_name_no_topic_when_the_prose_can() -> None:
    """Every tool call of a worktree's session names its folders and branch: a real topic was labelled
    'alex, ent, summaries' from '.worktrees/alex/ent-108-add-ai-summaries/' (benchmarks/topics.py)."""
    root = "/Users/alex/workspace/cli/.worktrees/alex/ent-108-add-ai-summaries/cmd/entire/cli"
    summaries = [
        f"[Tool:Read] {root}/summarize.go\n[Result:Read] func Summarize(transcript) builds the prompt for Claude",
        f"[Tool:Edit] {root}/summarize.go\n[Assistant] The summarize prompt now trims the transcript first",
        f"[Tool:Bash] cd {root} && go test ./...\n[Result:Bash] ok; the prompt and the transcript trim pass",
        "[User] on alex/ent-108-add-ai-summaries the prompt is too long for a big transcript",
    ]
    other = ["[User]\nThe docker compose stack fails: postgres is unhealthy"] * 3
    terms = cluster_labels({"summaries": summaries, "docker": other})["summaries"].split(", ")
    assert not {"alex", "worktrees", "ent", "add", "ai", "summaries", "cmd", "entire", "cli"} & set(terms), terms
    assert {"prompt", "transcript"} <= set(terms), terms


def test_a_topic_named_only_in_paths_still_gets_their_words() -> None:
    listing = [f"[Result:Bash] ./spotter_web/live/page_{n}/ and ./spotter_web/live/" for n in range(3)]
    other = ["[User]\nThe docker compose stack fails: postgres is unhealthy"] * 3
    assert cluster_labels({"spotter": listing, "docker": other})["spotter"] == "live, spotter_web"


def test_a_shell_command_s_programs_and_options_name_no_topic_when_the_prose_can() -> None:
    """Every command of a real session began with a `cd` into its worktree, and its topic (HTML export
    work) was labelled 'cd, develop, worktree' among the whole corpus's topics, 'cd, git, branch'
    among five projects' (benchmarks/topics.py)."""
    tree = "/Users/randlee/Documents/github/claude-history-worktrees/feature/phase10-html-quality"
    export = [
        f"[Tool:Bash] cd {tree} && git log --oneline -5\n[Result:Bash] c8017b3 add collapse controls to the export",
        f"[Tool:Bash] cd {tree}/src && go test ./pkg/export/... 2>&1 | tail -3\n[Result:Bash] ok  export (cached)",
        f"[Tool:Bash] cd {tree} && git status --short | head\n[Assistant] The export's collapse headers are in.",
        f"[Tool:Bash] cd {tree} && ls -la && grep -n collapse export.go\n[Result:Bash] 12: collapse headers",
    ]
    other = ["[User]\nThe docker compose stack fails: postgres is unhealthy"] * 3
    terms = cluster_labels({"export": export, "docker": other})["export"].split(", ")
    assert not {"cd", "git", "ls", "la", "grep", "tail", "head", "oneline", "short"} & set(terms), terms
    assert {"export", "collapse"} <= set(terms), terms


def test_a_command_s_arguments_still_name_a_topic() -> None:
    runs = [
        "[Tool:Bash] uv run pytest tests/test_billing.py -x\n[Result:Bash] 1 failed",
        "[Tool:Bash] uv run pytest tests/test_billing.py -k rounding\n[Result:Bash] 1 failed",
        "[Tool:Bash] uv run pytest tests/test_billing.py --lf\n[Result:Bash] 1 passed",
    ]
    other = ["[User]\nThe docker compose stack fails: postgres is unhealthy"] * 3
    terms = cluster_terms({"billing": runs, "docker": other}, terms=4)["billing"]
    assert {"pytest", "test_billing.py"} <= set(terms), terms
    assert "uv" not in terms, terms  # the program: every text uses it, as often as pytest


def test_the_status_lines_of_the_agent_s_own_tools_name_no_topic() -> None:
    """Claude Code answers every edit in the same words; they labelled topics 'knip, step, edited' and
    'v2.md, updated, say' among five real projects' (benchmarks/topics.py)."""
    edit = (
        "[Tool:Edit] /repo/src/{name}\n[Result:Edit] The file /repo/src/{name} has been updated. Here's the "
        "result of running `cat -n` on a snippet of the edited file:\n   12→const retries = backoff(limit)"
    )
    edits = [edit.format(name=f"{name}.ts") for name in ("queue", "worker", "retry")]
    todos = [
        "[Result:TodoWrite] Todos have been modified successfully. Ensure that you continue to use the todo list "
        "to track your progress. Please proceed with the current tasks if applicable\n[Assistant] backoff next"
    ] * 2
    other = ["[User]\nThe docker compose stack fails: postgres is unhealthy"] * 3
    terms = cluster_labels({"retries": edits + todos, "docker": other})["retries"].split(", ")
    assert not {"updated", "edited", "snippet", "running", "todos", "track", "progress", "modified"} & set(terms)
    assert "backoff" in terms, terms
