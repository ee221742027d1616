"""What the prompt-memory hook did on recent prompts, in the words every interface shows.

``causantic hook status``, the MCP ``hook-status`` tool and the dashboard's overview read the runs
``causantic.runs`` keeps and show these lines; each interface only indents (and the CLI wraps)
them. The figures behind them are in ``HookStatusOut`` (``--json``).
"""

from __future__ import annotations

from dataclasses import dataclass

from causantic.retrieval.format import counted, short_session, when_utc
from causantic.runs import PROMPT_HOOK, HookRun, InjectedMoment

PROMPTS_HEADING = "Recent prompts (newest first): memory added or not, and why"


@dataclass(frozen=True, slots=True)
class PromptLine:
    """One line of what the prompt hook did on a prompt, as every interface words it."""

    text: str
    level: int  # 0: the prompt and whether memory was added; 1: why, per scope searched; 2: a moment added
    moment: InjectedMoment | None = None  # level 2: the moment (the dashboard links its session)


def recent_prompts(runs: dict[str, HookRun]) -> list[HookRun]:
    """The prompt hook's last run and the ones before it that completed, newest first (a failed run
    says so in the hooks' table)."""
    last = runs.get(PROMPT_HOOK)
    return [r for r in (last, *last.get("earlier", [])) if not r.get("error")] if last else []


def added_text(run: HookRun) -> str:
    """Whether a prompt got memory: 'memory added: 2 past moments' or 'no memory added'."""
    injected = run.get("injected", [])
    return f"memory added: {counted(len(injected), 'past moment')}" if injected else "no memory added"


def explain_prompt(run: HookRun) -> list[PromptLine]:
    """One prompt's memory, plainly: added or not, why in each scope searched, and each moment added
    with its own figures (the coverage gate holds for each scope's best match, the relevance bar for
    every moment). ``causantic hook status``, the MCP ``hook-status`` tool and the dashboard's
    overview all show these lines; only the indentation and wrapping are theirs."""
    injected = run.get("injected", [])
    where = f", project {run['project']}" if run.get("project") else ""
    lines = [PromptLine(f"{when_utc(run.get('lastRun'))}{where}: {added_text(run)}.", 0)]
    outcome = run.get("outcome", "")
    if injected and ": " in outcome:  # "added N past moments, C characters: <why per scope>"
        outcome = outcome.split(": ", 1)[1]
    lines += [PromptLine(part, 1) for part in outcome.split("; ") if part]
    for i, m in enumerate(injected, 1):
        scope = "other project " if m.get("otherProject") else ""
        text = (
            f"{i}. {scope}{m['project']}, session {short_session(m['sessionId'])} ({m['date'][:10]}): relevance "
            f"{m['relevance']:.0%}, covers {m['coverage']:.0%} of the prompt's words"
        )
        lines.append(PromptLine(text, 2, m))
    return lines
