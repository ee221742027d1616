"""Writing Claude Code's JSON files: any value comes out as its JSON, and what did not change keeps its text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.integration.claude_files import JsonFile, render, write_json

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=5), values, max_size=5)
layouts = st.sampled_from([2, 4, "\t"])


def source(value: Any, indent: int | str, compact: bool) -> tuple[str, Any]:
    """``value`` written as a person might: indented, with its inner arrays and objects on one line."""
    if not compact:
        return json.dumps(value, indent=indent, ensure_ascii=False), value
    pad = indent if isinstance(indent, str) else " " * indent
    inner = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items()]
    return ("{\n" + ",\n".join(inner) + "\n}") if inner else "{}", value


@settings(max_examples=150, deadline=None)
@given(objects, objects, layouts, st.booleans())
def test_any_change_writes_exactly_the_new_value_and_no_change_writes_the_same_text(
    before: dict[str, Any], after: dict[str, Any], indent: int | str, compact: bool
) -> None:
    from causantic.integration.claude_files import _spans

    text, value = source(before, indent, compact)
    place = [(text, value, _spans(text, 0)[0])]
    assert render(value, place, indent) == text
    assert json.loads(render(after, place, indent)) == after


def test_an_added_key_leaves_the_users_one_line_arrays_on_one_line(tmp_path: Any) -> None:
    path = tmp_path / "settings.json"
    text = '{\n  "permissions": { "allow": ["Bash(make test)"] },\n  "model": "opus"\n}\n'
    path.write_text(text, encoding="utf-8")
    file = JsonFile(path, json.loads(text), 2, True, text)
    write_json(file, {**json.loads(text), "hooks": {"SessionEnd": [{"hooks": []}]}})
    written = path.read_text(encoding="utf-8")
    assert written.startswith('{\n  "permissions": { "allow": ["Bash(make test)"] },\n  "model": "opus",\n  "hooks": {')
