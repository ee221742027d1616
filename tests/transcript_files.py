"""Transcripts for tests that need sessions of their own words, written as each agent lays out and
writes its real files (Claude Code: ``<projects>/<cwd with dashes>/<session id>.jsonl``; Codex CLI's
rollouts; Gemini CLI's chat recordings)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

# A session told in two episodes with turns between them left out: the fix, four turns about something
# else, then the fix again (recall of GAP_QUERY says GAP_LINE between its two episodes).
GAP_QUERY = "how did we fix the nightly billing deploy migration lock timeout"
GAP_LINE = "… 4 chunks of this session between these episodes left out …"
GAP_TURNS = [
    ("the nightly billing deploy fails with a migration lock timeout", "The runner holds the migration lock."),
    ("so the billing migration lock timeout comes from the runner?", "Yes: it waits on old pods draining."),
    ("rename the css class on the settings page", "Renamed it to settings-panel."),
    ("bump the eslint version", "Bumped eslint to 9."),
    ("tidy the readme badges", "The badges sit on one line now."),
    ("add a favicon", "Added favicon.ico."),
    ("back to the nightly billing deploy migration lock timeout", "Fixed: the runner releases the lock first."),
    ("does the nightly billing deploy pass now", "Yes, the migration lock timeout is gone."),
]


def write_session(
    folder: Path,
    cwd: str,
    session_id: str,
    texts: list[tuple[str, str]],
    day: int = 2,
    moves: dict[int, str] | None = None,
) -> Path:
    """A Claude Code transcript of (prompt, answer) turns in ``cwd``; ``moves``: the folder its
    records name from that turn on (the agent ran `cd` into it), by turn number. Its file lies in
    the folder of the session's first ``cwd``, as Claude Code keeps it."""
    lines = []
    parent = None
    first = cwd
    for n, (prompt, answer) in enumerate(texts):
        cwd = (moves or {}).get(n, cwd)
        stamp = f"2026-11-{day:02d}T09:{n % 60:02d}:00.000Z"
        for kind, body in (("user", prompt), ("assistant", answer)):
            uuid = f"{session_id[:8]}-0000-4000-8000-{2 * n + (kind == 'assistant'):012d}"
            content: Any = body if kind == "user" else [{"type": "text", "text": body}]
            message: dict[str, Any] = {"role": kind, "content": content}
            if kind == "assistant":
                message["id"] = f"msg_{uuid[-8:]}"
            lines.append(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "type": kind,
                    "cwd": cwd,
                    "sessionId": session_id,
                    "uuid": uuid,
                    "timestamp": stamp,
                    "message": message,
                }
            )
            parent = uuid
    path = folder / first.strip("/").replace("/", "-") / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_messages(path: Path, session_id: str, cwd: str, messages: list[tuple[str, object]]) -> Path:
    """A Claude Code transcript at ``path`` of (role, content) messages in ``cwd``, each content as
    Claude Code records it (a prompt's text, or blocks: text, tool calls, tool results), a minute apart."""
    records = [
        {
            "parentUuid": f"{session_id}-{i - 1}" if i else None,
            "isSidechain": False,
            "type": role,
            "message": {"role": role, "content": content},
            "uuid": f"{session_id}-{i}",
            "sessionId": session_id,
            "cwd": cwd,
            "timestamp": f"2026-03-02T10:{i:02d}:00.000Z",
        }
        for i, (role, content) in enumerate(messages)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_codex_rollout(
    sessions: Path, cwd: str, thread: str, texts: list[tuple[str, str]], moves: dict[int, str] | None = None
) -> Path:
    """A Codex CLI rollout of (prompt, answer) turns in ``cwd``, where Codex keeps it
    (``<sessions>/YYYY/MM/DD/rollout-<time>-<thread>.jsonl``); ``moves``: the folder a turn's
    ``turn_context`` names from that turn on, by turn number (as :func:`write_session`'s)."""
    records: list[dict[str, Any]] = [
        {"timestamp": "2026-11-02T09:00:00Z", "type": "session_meta", "payload": {"id": thread, "cwd": cwd}}
    ]
    for n, (prompt, answer) in enumerate(texts):
        if moves:
            cwd = moves.get(n, cwd)
            records.append(
                {"timestamp": f"2026-11-02T09:{n % 60:02d}:00Z", "type": "turn_context", "payload": {"cwd": cwd}}
            )
        for kind, role, body in (("input_text", "user", prompt), ("output_text", "assistant", answer)):
            records.append(
                {
                    "timestamp": f"2026-11-02T09:{n % 60:02d}:{30 if role == 'assistant' else 0:02d}Z",
                    "type": "response_item",
                    "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": body}]},
                }
            )
    path = sessions / "2026" / "11" / "02" / f"rollout-2026-11-02T09-00-00-{thread}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def write_pi_session(
    sessions: Path,
    cwd: str,
    session_id: str,
    texts: list[tuple[str, str]],
    *,
    forked_from: Path | None = None,
    copied: int = 0,
) -> Path:
    """A Pi session of (prompt, answer) turns in ``cwd``, where Pi keeps it
    (``<sessions>/--<cwd with dashes>--/<time>_<id>.jsonl``): a header, then message entries linked
    by ``id``/``parentId``. With ``forked_from`` (a Pi session file), a fork as ``/fork`` writes it
    (pi-mono ``SessionManager.createBranchedSession``): the header names that file
    (``parentSession``) and the entries open with its first ``copied`` turns, their ids kept."""
    header: dict[str, Any] = {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-11-02T10:00:00Z"}
    header["cwd"] = cwd
    lines: list[dict[str, Any]] = [header]
    if forked_from is not None:
        header["parentSession"] = str(forked_from)
        lines += [json.loads(line) for line in forked_from.read_text().splitlines()[1 : 1 + 2 * copied]]
    parent = lines[-1]["id"] if len(lines) > 1 else None
    for n, (prompt, answer) in enumerate(texts):
        for k, (role, body) in enumerate((("user", prompt), ("assistant", answer))):
            entry = f"{session_id[-4:]}{2 * n + k:04x}"
            stamp = f"2026-11-02T10:{n % 60:02d}:{30 * k:02d}Z"
            message = {"role": role, "content": [{"type": "text", "text": body}]}
            lines.append({"type": "message", "id": entry, "parentId": parent, "timestamp": stamp, "message": message})
            parent = entry
    path = sessions / f"--{cwd.strip('/').replace('/', '-')}--" / f"2026-11-02T10-00-00-000Z_{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_gemini_log(
    chats: Path, cwd: str, session_id: str, steps: list[dict[str, Any]], *, parent: str | None = None
) -> Path:
    """A Gemini CLI session as its chat recording writes one since April 2026: a header line, then
    each message appended again in full every time it changes, ``$set`` updates after each message,
    and ``$rewindTo`` when the user rewinds. ``steps`` are written in order: ``{"user": text}``
    (``read_in``: the text of a file its @reference read in; ``hook``: a hook's added context);
    ``{"gemini": text, "calls": [call, ...]}`` (written three times: as said, with its token counts,
    with its finished calls), each call ``{"name", "args", "output"}`` plus ``agentId`` for a
    sub-agent's run; ``{"rewind": n}`` rewinds to the n-th message written (0 the first). With
    `parent`, the file is a sub-agent's, under ``chats/<parent>/``."""
    lines: list[dict[str, Any]] = [
        {
            "sessionId": session_id,
            "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
            "startTime": "2026-11-03T10:00:00.000Z",
            "lastUpdated": "2026-11-03T10:00:00.000Z",
            **({"kind": "subagent", "directories": [cwd]} if parent else {}),
        }
    ]
    ids: list[str] = []
    for n, step in enumerate(steps):
        stamp = f"2026-11-03T10:{n:02d}:00.000Z"
        if "rewind" in step:
            lines.append({"$rewindTo": ids[step["rewind"]]})
            continue
        uid = f"{session_id[:8]}-m{n}"
        ids.append(uid)
        if "user" in step:
            said = {"id": uid, "timestamp": stamp, "type": "user", "content": [{"text": step["user"]}]}
            if "read_in" in step:  # an @reference: the file's text is read into the content
                said |= {"content": [*said["content"], {"text": step["read_in"]}], "displayContent": step["user"]}
            if "hook" in step:  # a hook's additionalContext, appended as Gemini CLI does
                said["content"] = [*said["content"], {"text": f"<hook_context>{step['hook']}</hook_context>"}]
            lines.append(said)
        else:
            said = {"id": uid, "timestamp": stamp, "type": "gemini", "content": step["gemini"], "model": "g-3"}
            tokens = {"input": 100, "output": 10, "cached": 0, "total": 110}
            calls = [
                {
                    "id": f"{uid}-{call['name']}-{k}",
                    "name": call["name"],
                    "args": call["args"],
                    "result": [{"functionResponse": {"name": call["name"], "response": {"output": call["output"]}}}],
                    "status": "success",
                    "timestamp": f"2026-11-03T10:{n:02d}:30.000Z",
                    **({"agentId": call["agentId"]} if "agentId" in call else {}),
                }
                for k, call in enumerate(step.get("calls", []))
            ]
            lines += [said, {**said, "tokens": tokens}, {**said, "tokens": tokens, "toolCalls": calls}]
        lines.append({"$set": {"lastUpdated": stamp}})
    folder = chats / parent if parent else chats
    name = f"{session_id}.jsonl" if parent else f"session-2026-11-03T10-00-{session_id[:8]}.jsonl"
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def git_checkout(folder: Path, url: str) -> Path:
    """A checkout at ``folder`` whose remote origin is ``url`` (what `git clone` leaves in .git/config)."""
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "config").write_text(
        f'[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n\turl = {url}\n'
        '\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n',
        encoding="utf-8",
    )
    return folder
