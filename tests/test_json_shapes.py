"""One JSON shape per result: a key is one kind of value in every answer a script reads.

`sessions` was a list of sessions in `list-sessions --json` and a count in `stats --json`, `ingest
--json` and `forget --json` (so were `chunks`, `projects` and `agents`; `earlier` was a count in
`reconstruct` and a list in `hook status`, `preview` a list in `forget` and a string in its chunks,
`skipped_lines` an object in `ingest` and a count in `stats`): a script that read one answer broke on
the next. The rule (causantic.retrieval.output):
a plural noun is those things, a list (or an object of them keyed by name); a number of them says so
(`session_count`), or is a participle (`chunks_added`). Two walks keep it: every result model's fields,
and every CLI command's real `--json` answer on a small real memory. The MCP tools answer in text
only, with no structured content (tests/mcp/test_stdio_server.py checks it), and the dashboard
serves HTML: neither has JSON keys of its own.
"""

from __future__ import annotations

import json
import re
import types
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import click
import pytest
from click.testing import CliRunner
from process_support import EXAMPLES
from pydantic import BaseModel
from transcript_files import git_checkout, write_session

from causantic.cli.main import cli
from causantic.facade import Memory
from causantic.retrieval import output

# A key whose value may differ in kind, and why: each is one meaning in every answer.
MIXED = {
    "id": {"number", "string"},  # an object's own id: a topic's number, a chunk's or a model's name
    "members": {"list", "object"},  # team members: listed by name (a session's), keyed by name with figures
}
TEMPLATE = "git@github.com:acme/starter-template.git"  # two projects from it are joined as clones: one to split
# Each command with --json, and what it is run with on the memory below (a destructive one previews).
JSON_RUNS: dict[str, list[str]] = {
    "batch-ingest": ["batch-ingest", "{sessions}"],
    "cluster": ["cluster"],
    "clusters": ["clusters"],
    "config": ["config"],
    "embed": ["embed"],
    "forget": ["forget", "acme-shop"],
    "hook status": ["hook", "status"],
    "ingest": ["ingest", "{sessions}"],
    "list-projects": ["list-projects"],
    "list-sessions": ["list-sessions", "acme-shop"],
    "merge-projects": ["merge-projects", "billing", "acme-shop"],
    "models": ["models"],
    "predict": ["predict", "rate limiting"],
    "prune": ["prune", "--before", "2030-01-01"],
    "recall": ["recall", "rate limiting"],
    "reconstruct": ["reconstruct", "acme-shop"],
    "reconstruct --full": ["reconstruct", "acme-shop", "--full"],
    "reindex": ["reindex", "--yes"],
    "search": ["search", "rate limiting"],
    "split-project": ["split-project", "{blog}"],
    "team leave": ["team", "leave"],
    "stats": ["stats"],
    "vacuum": ["vacuum"],
}
NEEDS_TEAM = {"team init", "team join", "team status"}  # a PostgreSQL server: their models are walked below instead
DOCS = Path(__file__).resolve().parents[1] / "docs" / "json.md"
DOC_ROW = re.compile(r"^\| `causantic ([a-z -]+) --json` \| (?:`(\w+)`|\(none\)) \| (.+) \|$", re.MULTILINE)


def _kinds(annotation: Any) -> set[str]:
    """The JSON kinds a field's annotation allows, null left out."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return set().union(*(_kinds(a) for a in get_args(annotation)))
    if origin is Literal:
        return set().union(*(_kinds(type(a)) for a in get_args(annotation)))
    if annotation is type(None):
        return set()
    if origin in (list, tuple) or annotation in (list, tuple):
        return {"list"}
    if origin is dict or annotation is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return {"object"}
    return {bool: {"bool"}, int: {"number"}, float: {"number"}, str: {"string"}}[annotation]


def _nested(annotation: Any) -> Iterator[type[BaseModel]]:
    """The result models inside an annotation (a list's items, a map's values, an option's value)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in get_args(annotation):
        yield from _nested(arg)


def _kind(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    return {int: "number", float: "number", str: "string", list: "list", dict: "object"}[type(value)]


def _conflicts(seen: dict[str, dict[str, set[str]]]) -> list[str]:
    """Each key whose kinds differ (beyond MIXED), with where each kind was seen."""
    return [
        f"{key}: " + "; ".join(f"{kind} in {', '.join(sorted(where)[:4])}" for kind, where in sorted(kinds.items()))
        for key, kinds in sorted(seen.items())
        if len(kinds) > 1 and not set(kinds) <= MIXED.get(key, set())
    ]


def _model_keys() -> dict[str, dict[str, set[str]]]:
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    models = [m for m in vars(output).values() if isinstance(m, type) and issubclass(m, output.Out)]
    done: set[type[BaseModel]] = set()
    while models:
        model = models.pop()
        if model in done:
            continue
        done.add(model)
        model.model_rebuild()
        for name, field in model.model_fields.items():
            for kind in _kinds(field.annotation):
                seen[name][kind].add(f"{model.__name__}.{name}")
            models += _nested(field.annotation)
    return seen


def test_a_key_is_one_kind_of_value_in_every_result_model() -> None:
    seen = _model_keys()
    assert not _conflicts(seen), "\n".join(_conflicts(seen))
    # The keys that were counts in some answers and lists in others: a list wherever they appear now.
    for key in ("sessions", "chunks", "projects", "topics", "agents", "preview_chunks", "earlier_runs"):
        assert dict(seen[key]).keys() == {"list"}, (key, dict(seen[key]))
    for key in ("session_count", "chunk_count", "project_count", "agent_count", "topic_count", "earlier_count"):
        assert dict(seen[key]).keys() == {"number"}, (key, dict(seen[key]))


def _commands(group: click.Group, ctx: click.Context, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from _commands(command, ctx, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def test_every_command_with_json_is_walked_below() -> None:
    with click.Context(cli) as ctx:
        with_json = {name for name, command in _commands(cli, ctx) if any(p.name == "as_json" for p in command.params)}
    walked = {name.split(" --")[0] for name in JSON_RUNS}
    assert with_json == walked | NEEDS_TEAM, "add the new command to JSON_RUNS (or NEEDS_TEAM)"


def _documented() -> dict[str, tuple[str, list[str]]]:
    """docs/json.md's table: each command's model ('' for none) and top-level keys ('as `ingest`': that row's)."""
    rows = {command: (model, keys) for command, model, keys in DOC_ROW.findall(DOCS.read_text(encoding="utf-8"))}
    out = {}
    for command, (model, keys) in rows.items():
        same = re.fullmatch(r"as `([a-z -]+)`", keys)
        out[command] = (model, re.findall(r"`([a-z_]+)`", rows[same[1]][1] if same else keys))
    return out


def test_the_docs_list_each_commands_model_and_its_keys() -> None:
    documented = _documented()
    assert documented.keys() == {name.split(" --")[0] for name in JSON_RUNS} | NEEDS_TEAM
    for command, (model, keys) in documented.items():
        if model:  # config's keys are the settings' names
            assert keys == list(getattr(output, model).model_fields), command


@pytest.fixture
def memory_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A real memory: the bundled examples (acme-shop), a project to merge (billing) and two clones of
    one template joined as one project, of which one folder can be split out."""
    sessions = tmp_path / "sessions"
    write_session(sessions / "b", "/home/dev/billing", "b0000001-0000-4000-8000-000000000001", [("the invoice", "ok")])
    shop = git_checkout(tmp_path / "code" / "shop", TEMPLATE)
    blog = git_checkout(tmp_path / "code" / "blog", TEMPLATE)
    for n, (folder, said) in enumerate(((shop, "the cart total"), (blog, "the rss feed")), start=2):
        write_session(sessions / f"t{n}", str(folder), f"0000000{n}-0000-4000-8000-00000000000{n}", [(said, "ok")])
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAUSANTIC_CLUSTERING_MIN_CLUSTER_SIZE", "2")  # the examples are few: topics of two
    with Memory() as memory:
        assert memory.ingest([EXAMPLES, sessions]).errors == []
    return {"sessions": str(sessions), "blog": str(blog)}


def _walk(value: Any, answer: str, seen: dict[str, dict[str, set[str]]], where: str = "") -> None:
    if isinstance(value, list):
        for item in value:
            _walk(item, answer, seen, f"{where}[].")
    elif isinstance(value, dict):
        for key, item in value.items():
            if answer == "config" and where and key in ("value", "default"):
                continue  # a setting's value is whatever that setting holds
            if (kind := _kind(item)) is not None:
                seen[key][kind].add(f"{answer}:{where}{key}")
            _walk(item, answer, seen, f"{where}{key}.")


def test_a_key_is_one_kind_of_value_in_every_commands_json(memory_home: dict[str, str]) -> None:
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    documented = _documented()
    for answer, args in JSON_RUNS.items():
        done = CliRunner().invoke(cli, [a.format(**memory_home) for a in args] + ["--json"], catch_exceptions=False)
        assert done.exit_code == 0, (answer, done.output)
        printed = json.loads(done.stdout)
        model, keys = documented[answer.split(" --")[0]]
        assert not model or list(printed) == keys, answer  # the model docs/json.md names, all of it
        _walk(printed, answer, seen)
    assert not _conflicts(seen), "\n".join(_conflicts(seen))
    # The answers held what the walk is for: lists of sessions and chunks, and counts of them.
    assert {"list", "number"} <= seen["session_count"].keys() | seen["sessions"].keys()
    assert seen["sessions"].keys() == seen["chunks"].keys() == seen["projects"].keys() == {"list"}
    assert "stats:session_count" in seen["session_count"]["number"]
    assert {"merge-projects:sessions", "split-project:sessions"} <= seen["sessions"]["list"]
