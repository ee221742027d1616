"""A turn's messages as compact text sections, in the order they happened.

What gets indexed is what a person would want to find again: the prompt, the assistant's words,
one line per tool call (``[Tool:Bash] pytest -q``) and the head of each tool result. Text the
harness injected into a user message (IDE wrappers, system reminders, command caveats, Causantic's
own briefing) and the reminders Claude Code appends to tool results are left out; Claude Code's
instruction to its compaction agent reads as one line, which opens the summary's first section (a
chunk of that line alone would be the same in every session, and such chunks form a topic). Thinking
blocks are left out entirely (seed 001: removing them improved topic detection by +0.063 AUC, and
they often restate the prompt); the chunk only records that the turn had them.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from causantic.ingest.longtext import WindowedText, cleaned_long_text
from causantic.ingest.redact import REDACT_MARGIN, redact_head
from causantic.sources import SPAWN_TOOLS
from causantic.transcripts import COMPACTION_LINE, without_injected, without_trailing_reminders
from causantic.transcripts.model import TextBlock, ThinkingBlock, ToolCall, ToolResult, Turn

# The input field that says most about a call, per tool; others fall back to compact JSON.
_SUMMARY_FIELDS = (
    "command",
    "cmd",  # Codex CLI exec_command
    "file_path",
    "absolute_path",  # Gemini CLI read_file (older versions)
    "path",
    "dir_path",  # Gemini CLI list_directory
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
    "notebook_path",
    "skill",
    "subject",
    "recipient",
)


# Claude Code adds to a sub-agent's result the id to resume it by and, at the end, its usage figures
# ("agentId: a2898e3 (for resuming to continue this agent's work if needed)", "<usage>total_tokens:
# 76365 …</usage>"): noise to a reader, and indexed tokens no one searches for. Sub-agent linking reads
# the id from the transcript (:mod:`causantic.ingest.subagents`), not from this rendering.
_AGENT_ID_LINE = re.compile(r"^agentId: [\w-]+(?: \(.*\))?$\n?", re.MULTILINE)
_USAGE_TAIL = re.compile(r"<usage>[^<]*</usage>\s*\Z")

PROMPT_HEAD_CHARS = 2_000
HUGE_TEXT_CHARS = 1 << 20  # a text this long is cleaned in windows and labelled in a section of its own


@dataclass(frozen=True, slots=True)
class Section:
    """One rendered piece of a turn, with where it came from."""

    text: str
    message_uuid: str
    timestamp: datetime | None
    tool_call_id: str | None = None  # set on a tool-call line
    tool_result_id: str | None = None  # set on a tool-result section
    long: WindowedText | None = None  # a pasted text of many megabytes (``text`` is then empty)
    # The message whose line opens the section (the compaction line), named by each of its pieces: a
    # store written when that message's whole text was chunked holds parts naming it, which are
    # updated in place only when the new parts name it too (a part naming fewer messages than the
    # stored one reads as an earlier copy of the turn and is left alone).
    opened_by: str | None = None


@dataclass(frozen=True, slots=True)
class RenderedTurn:
    turn_index: int
    prompt: str  # the head of the turn's prompt (what topic-shift gating reads), not all of it
    sections: tuple[Section, ...]
    has_thinking: bool
    tool_use_count: int
    anchor: str  # the first message uuid: a stable identity for the turn


def render_turn(
    turn: Turn, *, tool_result_max_chars: int, tool_input_max_chars: int, redact: Callable[[str], str]
) -> RenderedTurn:
    sections: list[Section] = []
    tool_names: dict[str, str] = {}
    has_thinking = False
    tool_uses = 0
    speaker = ""
    opening: Section | None = None  # the compaction line, held for the section that follows it
    for message in turn.messages:
        if message.is_meta:
            continue
        for block in message.blocks:
            text = ""
            call_id = result_id = None
            if isinstance(block, ThinkingBlock):
                has_thinking = True
                continue
            if isinstance(block, TextBlock):
                role = "User" if message.role == "user" else "Assistant"
                # IDE wrappers, reminders, caveats and Causantic's own briefing are not memory.
                if block.long is not None or len(block.text) > HUGE_TEXT_CHARS:
                    # A pasted bundle: cleaned window by window, held as UTF-8 windows, chunked from them.
                    long = cleaned_long_text(block.long or block.text, redact, injected=message.role == "user")
                    if len(long) > HUGE_TEXT_CHARS:
                        if speaker != role:  # its label in a section of its own, not glued to the text
                            sections.append(Section(f"[{role}]", message.uuid, message.timestamp))
                            speaker = role
                        sections.append(Section("", message.uuid, message.timestamp, long=long))
                        continue
                    body = long[:]
                else:
                    body = without_injected(block.text) if message.role == "user" else block.text.strip()
                    if body == turn.prompt:  # the same text as the turn's prompt: hold one copy, not two
                        body = turn.prompt
                    body = redact(body) if body else body
                if not body:
                    continue
                text = body if speaker == role else f"[{role}]\n{body}"
                speaker = role
                if body == COMPACTION_LINE and message.role == "user" and opening is None:
                    opening = Section(text, message.uuid, message.timestamp)
                    continue
            elif isinstance(block, ToolCall):
                tool_uses += 1
                tool_names[block.id] = block.name
                text = f"[Tool:{block.name}] {_summarise(block, tool_input_max_chars, redact)}".rstrip()
                call_id = block.id
                speaker = "Tool"
            elif isinstance(block, ToolResult):
                name = tool_names.get(block.tool_use_id, "tool")
                label = "Error" if block.is_error else "Result"
                body = _result_head(block, tool_result_max_chars + REDACT_MARGIN + 1, name)
                text = f"[{label}:{name}] {redact_head(body, tool_result_max_chars, redact)}".rstrip()
                result_id = block.tool_use_id
                speaker = "Tool"
            if text:
                if opening is not None:  # the line and the summary's start make one section
                    text, opened_by, opening = f"{opening.text}\n{text}", opening.message_uuid, None
                else:
                    opened_by = None
                sections.append(Section(text, message.uuid, message.timestamp, call_id, result_id, opened_by=opened_by))
    if opening is not None:  # no answer followed
        sections.append(opening)
    anchor = turn.messages[0].uuid if turn.messages else f"turn-{turn.index}"
    # Only the prompt's start is kept: a plan holds every rendered turn until it is written, and a
    # prompt that is one pasted 50 MB line would otherwise stay in memory twice.
    prompt = turn.prompt[:PROMPT_HEAD_CHARS]
    return RenderedTurn(turn.index, prompt, tuple(sections), has_thinking, tool_uses, anchor)


def _result_head(block: ToolResult, chars: int, tool: str) -> str:
    """The text a tool result is kept by: without the reminders Claude Code appends, nor a sub-agent
    result's id and usage lines, stripped; of an output left in its file (:class:`ToolResult`
    ``long``), its first ``chars`` characters only, as many as :func:`redact_head` reads, found from
    its head and tail without decoding the rest. When those cannot tell (reminders reaching past the
    tail, an output all blank, a sub-agent's result), the output is decoded whole, as one in the line
    is."""
    if block.long is not None and tool not in SPAWN_TOOLS and chars > REDACT_MARGIN + 1:
        lead = len(block.text) - len(block.text.lstrip())
        end = without_trailing_reminders(block.tail).rstrip()
        if (
            lead + chars <= len(block.text) < block.long.length - len(block.tail)
            and end
            and not end.endswith("</system-reminder>")
            and block.long.length - len(block.tail) + len(end) - lead >= chars
        ):
            return block.text[lead : lead + chars]
    body = without_trailing_reminders(block.whole()).strip()
    if tool in SPAWN_TOOLS:
        body = _AGENT_ID_LINE.sub("", _USAGE_TAIL.sub("", body)).strip()
    return body


def _summarise(call: ToolCall, limit: int, redact: Callable[[str], str]) -> str:
    """One line saying what the call did, redacted in full before it is cut to ``limit``."""
    data = call.input if isinstance(call.input, dict) else {}
    if call.name in SPAWN_TOOLS:
        kind = (
            data.get("subagent_type") or data.get("agent_type") or data.get("agent_name") or data.get("name") or "agent"
        )
        what = data.get("description") or ""
        prompt = str(data.get("prompt") or data.get("message") or "")
        head = f"{kind}: {what}" if what else str(kind)  # Codex CLI's spawn_agent has no description
        return redact_head(f"{head} — {prompt}" if prompt.strip() else head, limit, redact)
    if call.name == "SendMessage":  # an agent-team message: its words are what a search must find
        broadcast = "all" if data.get("type") == "broadcast" else ""
        to = _text(data.get("recipient")) or _text(data.get("to")) or broadcast
        summary, body = _text(data.get("summary")), _text(data.get("content")) or _text(data.get("message"))
        text = f"to {to}" + (f": {summary}" if summary else "") + (f" — {body}" if body else "")
        return redact_head(" ".join(text.split()), limit, redact)
    if call.name == "TodoWrite" and (todos := _todos(data.get("todos"))):
        # The list as words: its JSON spent the line on keys, ids and each item's second wording
        # (activeForm), so a cut line showed one item; these words are what a search should find.
        return redact_head(" ".join(todos.split()), limit, redact)
    if call.name == "update_plan" and (steps := _todos(data.get("plan"), "step")):  # Codex CLI's to-do list
        explanation = _text(data.get("explanation"))
        return redact_head(" ".join((f"{explanation} — {steps}" if explanation else steps).split()), limit, redact)
    if (patch := _patch_files(data.get("input"))) is not None:  # Codex CLI's apply_patch: the files it changed
        return redact_head(patch, limit, redact)
    if (argv := _argv(data.get("command"))) is not None:  # Codex CLI's shell: ["bash", "-lc", "git status"]
        return redact_head(" ".join(argv.split()), limit, redact)
    if questions := _questions(data.get("questions")):  # AskUserQuestion, Gemini CLI's ask_user
        return redact_head(" ".join(questions.split()), limit, redact)
    if call.name == "wait_agent" and isinstance(targets := data.get("targets"), list):  # Codex CLI: spawned agents
        return redact_head(", ".join(str(t) for t in cast("list[object]", targets)), limit, redact)
    if call.name == "write_stdin" and data.get("session_id") is not None:  # Codex CLI: input to a running command
        chars = _text(data.get("chars"))
        return redact_head(f"session {data['session_id']}" + (f": {chars}" if chars else ""), limit, redact)
    for key in _SUMMARY_FIELDS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            extra = data.get("pattern") if key == "path" and data.get("pattern") else None
            text = f"{value} {extra}" if extra else value
            return redact_head(" ".join(text.split()), limit, redact)
    if not data:
        return ""
    return redact_head(json.dumps(data, ensure_ascii=False, separators=(",", ":")), limit, redact)


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _todos(value: object, key: str = "content") -> str:
    """A TodoWrite list (an update_plan's: ``key`` "step") as ``item (status); item (status)``;
    empty when it holds no item."""
    items = cast("list[object]", value) if isinstance(value, list) else []
    out: list[str] = []
    for item in items:
        fields = cast("dict[str, object]", item) if isinstance(item, dict) else {}
        content = _text(fields.get(key))
        if content:
            status = (_text(fields.get("status")) or "pending").replace("_", " ")
            out.append(f"{content} ({status})")
    return "; ".join(out)


def _questions(value: object) -> str:
    """Questions put to the user as ``question (option / option)``; empty when there are none."""
    items = cast("list[object]", value) if isinstance(value, list) else []
    out: list[str] = []
    for item in items:
        fields = cast("dict[str, object]", item) if isinstance(item, dict) else {}
        asked = _text(fields.get("question")) or _text(fields.get("header"))
        if asked:
            options = cast("list[object]", fields.get("options")) if isinstance(fields.get("options"), list) else []
            labels = [
                label
                for o in options
                if (label := _text(cast("dict[str, object]", o).get("label")) if isinstance(o, dict) else _text(o))
            ]
            out.append(asked + (f" ({' / '.join(labels)})" if labels else ""))
    return "; ".join(out)


_PATCH_OPERATIONS = {"*** Add File: ": "add", "*** Update File: ": "update", "*** Delete File: ": "delete"}
_SHELLS = frozenset({"bash", "zsh", "sh", "fish", "pwsh", "powershell", "cmd"})


def _patch_files(value: object) -> str | None:
    """An apply_patch body as ``update a.py; add b.py``; None when ``value`` is no patch."""
    if not isinstance(value, str) or not value.lstrip().startswith("*** Begin Patch"):
        return None
    out: list[str] = []
    for line in value.splitlines():
        for marker, verb in _PATCH_OPERATIONS.items():
            if line.startswith(marker):
                out.append(f"{verb} {line[len(marker) :].strip()}")
        if line.startswith("*** Move to: ") and out:
            out[-1] += f" → {line[len('*** Move to: ') :].strip()}"
    return "; ".join(out) or "patch"


def _argv(value: object) -> str | None:
    """A command given as a list of words: the script of ``[shell, "-lc", script]``, else the words
    joined as a shell would read them; None when ``value`` is not such a list."""
    if not isinstance(value, list) or not value or not all(isinstance(w, str) for w in value):
        return None
    words = cast("list[str]", value)
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in ("-lc", "-c", "/c", "-Command"):
        return words[2]
    return shlex.join(words)
