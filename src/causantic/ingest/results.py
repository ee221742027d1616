"""What of a tool result is kept: the text :mod:`render` puts after its ``[Result:…]`` label.

- A long result keeps its head (``chunking.toolResultMaxChars``). A command's output (a shell
  tool's, or a background command's read later) keeps its last lines too
  (``chunking.toolResultTailChars``), after a line saying how many were left out: a run says how it
  ended there (pytest's counts, a traceback's error, an exit code), and the head of a test run is
  only its banner.
- A result that says nothing its call line does not is not kept: an empty output, and the fixed
  acknowledgements of tools that only record something (Codex CLI's ``update_plan``: "Plan
  updated"; TodoWrite's reminder; an edit's "updated successfully").
- ExitPlanMode's approval is kept without the copy of the plan Claude Code appends to it: the plan is
  kept whole with the call (:mod:`render`).

Redaction runs on every part kept before it is cut (:func:`redact.redact_head`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from causantic.ingest.redact import REDACT_MARGIN, head_of, redact_head, tail_of
from causantic.sources import SPAWN_TOOLS
from causantic.transcripts import without_trailing_reminders
from causantic.transcripts.model import ToolResult
from causantic.wording import counted, stored_gap

# Tools whose result is a command's output, which ends with how the command ended: Claude Code's Bash
# (and BashOutput, TaskOutput: a background command's output read later), Codex CLI's shell,
# exec_command, shell_command and write_stdin, Gemini CLI's run_shell_command, Cursor's
# run_terminal_cmd, Copilot CLI's and Pi's bash.
COMMAND_TOOLS = frozenset(
    {
        "Bash",
        "BashOutput",
        "TaskOutput",
        "bash",
        "shell",
        "local_shell",
        "exec_command",
        "shell_command",
        "write_stdin",
        "run_shell_command",
        "run_terminal_cmd",
    }
)

# Results that only acknowledge what the call line already says.
_ACKNOWLEDGEMENT = re.compile(
    r"Plan updated\.?"  # Codex CLI update_plan
    r"|Todos have been modified successfully\..*"  # Claude Code TodoWrite
    r"|The file \S.* has been (?:updated|created) successfully\.|File (?:created|written|edited) successfully\.?"
    r"(?: at: \S.*)?"  # Claude Code Edit, Write, MultiEdit; Gemini CLI write_file, replace
    r"|Successfully (?:created and wrote to new file|overwrote file|modified file): \S.*"
)
# Claude Code's answer to an approved ExitPlanMode: what follows its first sentence is an
# instruction to the model and a copy of the plan.
_PLAN_APPROVED = "User has approved your plan."


def kept_result(block: ToolResult, tool: str, *, head: int, tail: int, redact: Callable[[str], str]) -> str:
    """The text ``block`` (a result of ``tool``) is kept by, redacted; empty when it says nothing
    worth keeping. ``head`` 0 keeps all of it; ``tail`` counts only for :data:`COMMAND_TOOLS`."""
    tail = tail if tool in COMMAND_TOOLS and head > 0 else 0
    start, end, length, newlines = _body(block, head + REDACT_MARGIN + 1, tail + REDACT_MARGIN if tail else 0, tool)
    if not block.is_error and _ACKNOWLEDGEMENT.fullmatch(start):
        return ""
    if tool == "ExitPlanMode" and start.startswith(_PLAN_APPROVED):
        return _PLAN_APPROVED
    if tail == 0 or length <= head + tail:
        return redact_head(start, head + tail, redact)
    shown = head_of(redact(start[: head + REDACT_MARGIN]), head).rstrip()
    last = tail_of(redact(end[-(tail + REDACT_MARGIN) :]), tail)
    lines = newlines() + 1 - (shown.count("\n") + 1) - (last.count("\n") + 1)
    left_out = counted(lines, "line") if lines > 0 else counted(max(length - len(shown) - len(last), 1), "character")
    return f"{shown}\n{stored_gap(left_out)}\n{last}"


def _body(block: ToolResult, chars: int, tail: int, tool: str) -> tuple[str, str, int, Callable[[], int]]:
    """A result's text, without the reminders Claude Code appends, nor a sub-agent result's id and
    usage lines, stripped: (its start, its end, its length, a count of its line breaks). The start
    and end are the whole text, except for an output left in its file (:class:`ToolResult` ``long``):
    then its first ``chars`` and last ``tail`` characters, found from the head and tail read of it
    without decoding the rest (line breaks are counted a window at a time). When those cannot tell
    (reminders reaching past the tail, an output all blank, a sub-agent's result), the output is
    decoded whole, as one in the line is."""
    if block.long is not None and tool not in SPAWN_TOOLS and chars > REDACT_MARGIN + 1:
        long = block.long
        lead = len(block.text) - len(block.text.lstrip())
        end = without_trailing_reminders(block.tail).rstrip()
        stop = long.length - len(block.tail) + len(end)  # where the text ends in the output
        if (
            lead + chars <= len(block.text) < long.length - len(block.tail)
            and end
            and not end.endswith("</system-reminder>")
            and stop - lead >= chars
            and len(end) >= tail
        ):

            def newlines() -> int:
                count = position = 0
                for window in long.windows():
                    count += window.count("\n", max(lead - position, 0), max(stop - position, 0))
                    position += len(window)
                return count

            return block.text[lead : lead + chars], end, stop - lead, newlines
    body = without_trailing_reminders(block.whole()).strip()
    if tool in SPAWN_TOOLS:
        body = _AGENT_ID_LINE.sub("", _USAGE_TAIL.sub("", body)).strip()
    return body, body, len(body), lambda: body.count("\n")


# Claude Code adds to a sub-agent's result the id to resume it by and, at the end, its usage figures
# ("agentId: a2898e3 (for resuming to continue this agent's work if needed)", "<usage>total_tokens:
# 76365 …</usage>"): noise to a reader, and indexed tokens no one searches for. Sub-agent linking reads
# the id from the transcript (:mod:`causantic.ingest.subagents`), not from this rendering.
_AGENT_ID_LINE = re.compile(r"^agentId: [\w-]+(?: \(.*\))?$\n?", re.MULTILINE)
_USAGE_TAIL = re.compile(r"<usage>[^<]*</usage>\s*\Z")
