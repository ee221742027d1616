"""Telling what a user typed apart from what Claude Code injected into a user record.

Claude Code writes several kinds of text as `user` records that nobody typed as a prompt: the
local-command caveat, slash-command wrappers (``<command-name>/clear</command-name>``), command
output (``<local-command-stdout>``), ``!`` shell-mode input and output (``<bash-input>``,
``<bash-stdout>``), hook reminders (``<system-reminder>``), background-task notices
(``<task-notification>``), IDE context (``<ide_opened_file>``), compaction summaries and the
instructions Claude Code gives its own agents (compaction, prompt suggestion). This module owns that
knowledge; :mod:`reader` uses it to set ``Message.is_meta`` and :mod:`turns` to extract a
turn's prompt. Nothing here looks at JSON.

Two deliberate exceptions:

- A slash command **with arguments** (``/review fix the flaky test``) is the user's request, so it
  reads as the prompt ``"/review fix the flaky test"``. A bare command (``/clear``) and Claude Code's
  own local commands (``/model sonnet``), whose arguments are settings that never reach the model,
  are injected. ``/compact keep the auth work`` is a prompt: its words are the user's instruction to
  the compaction, and the main transcript records them alone in the command's own record (marot
  ``spotter`` ``ae4a77f8``: "and continue with the reamining tasks"), while the compaction agent
  gets them mixed with PreCompact hook output (see below).
- ``<teammate-message>`` is the prompt of an agent-team member (and of the lead when a teammate
  reports back), so it stays prompt text: team linking looks for it in turn prompts.

Claude Code's instruction to its compaction agent (``acompact-…`` streams: "Your task is to create a
detailed summary of the conversation so far…", 5–9 kB of boilerplate) reads as one line,
:data:`COMPACTION_LINE`: the line keeps the message a turn's prompt, so the summary that answers it
is remembered under it. Its "Additional Instructions" go too: they mix the words given to
``/compact`` with PreCompact hook output (a workflow primer of 3 kB in marot ``spotter``), which
cannot be told apart there; the words are kept from the ``/compact`` command's own record in the
main transcript, as the user's prompt.

Causantic's own output is injected text too: its session-start briefing (which Claude Code may
echo into the transcript as hook output) and the memory block it can keep in a CLAUDE.md. Memory
must never feed on itself, so both are recognised here by the fixed text they open or are fenced
with (:data:`BRIEFING_OPENING`, :data:`MEMORY_BLOCK_START`/``END``; the hooks use the same constants).
"""

from __future__ import annotations

import re

# Elements whose whole content is injected by the harness (see the module docstring).
_INJECTED_TAGS = (
    "system-reminder",
    "local-command-caveat",
    "local-command-stdout",
    "local-command-stderr",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "task-notification",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "user-prompt-submit-hook",
    "user-memory-input",
)
_TAG_ALTERNATION = "|".join(re.escape(tag) for tag in _INJECTED_TAGS)
_INJECTED_ELEMENT = re.compile(rf"<({_TAG_ALTERNATION})(?:\s[^>]*)?>.*?</\1\s*>", re.DOTALL)
_UNCLOSED_AT_START = re.compile(rf"\s*<(?:{_TAG_ALTERNATION})(?:\s[^>]*)?>")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)

# Built-in commands handled by Claude Code itself; their arguments are settings, not prompts.
# Prompt-type built-ins (/init, /review, /pr-comments, /security-review) are left out on purpose.
# /compact is not one: its words tell the compaction what to keep (the module docstring).
_LOCAL_COMMANDS = frozenset(
    """add-dir agents allowed-tools approved-tools bashes bug clear config context cost
    doctor effort exit export fast feedback help hooks ide install-github-app keybindings login
    logout mcp memory migrate-installer model output-style permissions plugin privacy-settings quit
    release-notes resume rewind sandbox stats status statusline tasks terminal-setup theme todos
    upgrade usage vim""".split()
)
_COMPACT_SUMMARY_PREFIX = "This session is being continued from a previous conversation"
# Claude Code's instruction to its compaction agent (seen in 2.1.29, 2.1.39) and what it becomes (docstring).
COMPACTION_PROMPT_OPENING = "Your task is to create a detailed summary of the conversation so far"
COMPACTION_LINE = "[Compaction of the conversation above]"
# Claude Code's instruction to its prompt-suggestion agent (``aprompt_suggestion-…`` streams).
SUGGESTION_PROMPT_OPENING = "[SUGGESTION MODE:"

# Causantic's own injected text (see the module docstring).
BRIEFING_OPENING = "Memory of earlier coding-agent sessions in this project"
# What briefings of earlier versions opened with: transcripts recorded then still hold them.
_EARLIER_BRIEFING_OPENINGS = ("Memory of earlier Claude Code sessions in this project",)
MEMORY_BLOCK_START = "<!-- MEMORY_START -->"
MEMORY_BLOCK_END = "<!-- MEMORY_END -->"
_MEMORY_BLOCK = re.compile(re.escape(MEMORY_BLOCK_START) + r".*?" + re.escape(MEMORY_BLOCK_END), re.DOTALL)
# Hook output as older Claude Code versions echo it: "SessionStart:startup hook success: <stdout>".
_HOOK_ECHO = re.compile(
    r"\s*(?:SessionStart|SessionEnd|UserPromptSubmit|PreToolUse|PostToolUse|Stop|SubagentStop|PreCompact"
    r"|Notification)(?::[a-z_]+)? hook (?:success|additional context):"
)
# Claude Code appends a reminder to some tool results (e.g. Read's malware notice).
_TRAILING_REMINDER = re.compile(r"\s*<system-reminder>(?:(?!<system-reminder>).)*?</system-reminder>\s*\Z", re.DOTALL)
_INTERRUPT_PREFIX = "[Request interrupted"
_INJECTED_HEAD_CHARS = 65_536  # how much of a long text is read first to tell it is no injected text
OPENING_CHARS = 4_096  # enough of a text to tell whether it opens as a whole injected message


def without_injected(text: str) -> str:
    """`text` with every injected part removed; a slash command with arguments becomes "/name args"."""
    s = text.strip()
    if not s:
        return ""
    if MEMORY_BLOCK_START in s:
        s = _MEMORY_BLOCK.sub("", s).strip()
    special = _special_form(s)
    if special is not None:
        return special
    if "<" not in s:
        return s
    s = _INJECTED_ELEMENT.sub("", s).strip()
    if opens_unclosed_element(s):
        # Trigger: an injected element that was never closed (cut output). Why: its tail is still
        # harness output. Outcome: the whole remainder counts as injected.
        return ""
    return s


def _special_form(s: str) -> str | None:
    """What a stripped text opening as a whole injected message (hook echo, briefing, caveat, compact
    summary, task notification, slash command) reduces to; None for any other text."""
    if _HOOK_ECHO.match(s) or s.startswith((BRIEFING_OPENING, *_EARLIER_BRIEFING_OPENINGS)):
        return ""
    head = s[:200].lower()
    if head.startswith("caveat:") and "messages below" in head:
        return ""
    if s.startswith(COMPACTION_PROMPT_OPENING):
        return COMPACTION_LINE
    if s.startswith(_COMPACT_SUMMARY_PREFIX) or s.startswith("<task-notification>"):
        # A task notification ends with a harness-written instruction ("Read the output file…").
        return ""
    if s.startswith(("<command-name>", "<command-message>", "<command-args>")):
        args_match = _COMMAND_ARGS.search(s)
        args = args_match.group(1).strip() if args_match else ""
        if not args:
            return ""
        name_match = _COMMAND_NAME.search(s)
        name = name_match.group(1).strip() if name_match else ""
        if name.lstrip("/") in _LOCAL_COMMANDS:
            return ""
        if name and not name.startswith("/"):
            name = "/" + name
        return f"{name} {args}".strip()
    return None


def opens_plainly(head: str) -> bool:
    """True when, for any text opening with `head` (its first :data:`OPENING_CHARS` characters or
    more), :func:`without_injected` only removes injected elements and memory blocks
    (:func:`injected_elements_removed`) and strips the ends, unless what is left opens with an
    unclosed element (:func:`opens_unclosed_element`): no whole-message form such as a slash
    command or a compaction summary. Lets a pasted 50 MB text be cleaned window by window."""
    s = head.strip()
    return len(s) >= 256 and MEMORY_BLOCK_START not in head and _special_form(s) is None


def injected_elements_removed(text: str) -> str:
    """`text` without its injected elements and memory blocks, nothing else changed (not stripped)."""
    if MEMORY_BLOCK_START in text:
        text = _MEMORY_BLOCK.sub("", text)
    return _INJECTED_ELEMENT.sub("", text) if "<" in text else text


def opens_unclosed_element(text: str) -> bool:
    """True when `text` opens (after whitespace) with an injected element that is never closed."""
    return _UNCLOSED_AT_START.match(text) is not None


def is_injected(text: str) -> bool:
    """True when `text` is non-empty and consists only of harness-injected content.

    Interruption markers ("[Request interrupted by user]") are not injected text: they record
    something the user did, and :func:`prompt_text_of` drops them instead.
    """
    if len(text) > _INJECTED_HEAD_CHARS and MEMORY_BLOCK_START not in text[:_INJECTED_HEAD_CHARS]:
        # A pasted 50 MB line: text left after removing the injected parts of its head is text left
        # in the whole (the head ends where an element it opens is cut, which counts as injected),
        # and only the head is copied.
        if without_injected(text[:_INJECTED_HEAD_CHARS]):
            return False
    return bool(text.strip()) and not without_injected(text)


def prompt_text_of(text: str) -> str:
    """The part of one user text block that is a prompt: injected content and a leading
    interruption marker removed, surrounding whitespace stripped ("" when nothing is left)."""
    s = without_injected(text)
    if s.startswith(_INTERRUPT_PREFIX):
        end = s.find("]")
        s = s[end + 1 :].strip() if end >= 0 else ""
    return s


def without_trailing_reminders(text: str) -> str:
    """A tool result's text without the ``<system-reminder>`` notes Claude Code appends to it."""
    while text.rstrip().endswith("</system-reminder>"):
        cut = _TRAILING_REMINDER.sub("", text, count=1)
        if cut == text:
            break
        text = cut
    return text
