"""The version of ingest's rules: what chunks, edges and titles are made from the same transcript.

Every file's mark records the version it was read under (``store.mark_files``). A file read under an
older version counts as changed, so a plain ingest (``causantic batch-ingest``, the hooks') reads it
again and memory converges to what today's rules make (:func:`causantic.ingest.pipeline.ingest`:
chunks are updated in place by their stable ids, chunks these rules no longer make are dropped, and
only chunks whose text changed are embedded again). Files marked before versions were recorded
count as version 0, the oldest.

History (what each version changed, so a release note can say why memory was re-read):

- 1 (25 November 2026): Codex CLI and Gemini CLI tool calls rendered as readable lines instead of
  raw JSON; Claude Code's compaction instruction reduced to one line; prompt-suggestion agents
  skipped; Task/Agent results without their trailing ``agentId`` and ``<usage>`` lines; every copy
  of a session filed under the project it was first stored in.
- 2 (25 November 2026): the conversation's records that Claude Code's compaction agent file holds
  before its instruction (a tool result the compaction cut into, hook notes) read as the main
  conversation's, in the turn they belong to, not as a chunk of the compaction; ``/compact`` with
  words kept as the user's prompt (``/compact keep the auth work``).
- 3 (25 November 2026): Gemini CLI's JSON-lines sessions (its format since April 2026) replayed as
  Gemini CLI replays them: each message once, in its last version (a reply was kept once per time
  it was written: three or more copies), what the user rewound left out, and each prompt as the
  user typed it (``displayContent``, without a hook's ``<hook_context>``); a Gemini CLI
  sub-agent's file joins its parent's session, linked to the ``invoke_agent`` call that ran it; the
  records a sub-agent's own compaction file holds before its instruction join that sub-agent's
  conversation, not the main one; the turns a Codex CLI user rolled back (``thread_rolled_back``,
  to edit an earlier prompt) left out, as Codex leaves them out of the thread; a forked Codex agent
  without the copy of its parent's conversation its rollout opens with; a Codex or Gemini sub-agent
  stored as a session of its own (read without its parent's file) dropped once it is read as its
  parent session's stream.
- 4 (25 November 2026): what the user rewound past kept, for every agent alike, as a ``rewound``
  stream beside the main line, linked from where it branched off (Claude Code's ``/rewind`` had it
  told inline as part of the conversation; Codex and Gemini rewinds had it dropped); a Codex user
  fork read with the session it forked, without the copy of that session's turns it opens with,
  linked by a ``forked-from`` edge; Copilot CLI, Cursor, Factory Droid and Pi sessions read
  (before: files in another format).
- 5 (25 November 2026): a Pi fork (its header names the session it came from: ``parentSession``)
  read with that session, without the copy of its entries it opens with, linked by a
  ``forked-from`` edge; a Codex or Pi fork ingested without the session it forked reads that
  session's file too when it is where the agent keeps it (before: the copied turns were stored
  twice, once in each session); a Copilot CLI sub-agent's work (events naming an ``agentId`` or a
  ``parentToolCallId``) kept as a sub-agent stream linked to the ``task`` call that ran it (before:
  told on the main line as the main agent's), and that call rendered as a spawn (``explore: <what>
  — <prompt>``); Cursor's older text transcripts (``agent-transcripts/<id>.txt``) read.
- 6 (25 November 2026): a Claude Code session none of whose records names a cwd filed under its
  folder's name (``~/.claude/projects/-Users-dev-shop``) wherever ``~/.claude`` lives, as Cursor's
  workspaces are: by the folder's whole path, a moved or copied ``~/.claude`` (a new machine, a
  restored backup, a team member's home) made a second project of every such folder, and a
  sub-agent's file read without its session's file a project of its own; the project an older
  release made at the folder's whole path takes the key when its sessions are read again (two such
  projects of one folder merged), Cursor's too; a Codex fork whose session's rollout lies in another
  sessions tree than its own (a copy of another machine's, a backup), found in the same run or
  ingested before from there, read with that session, without its copy of the session's turns
  (before: stored twice, once in each session).
"""

from __future__ import annotations

# Bump by one with any change that alters what is made from the same transcript (chunk text or
# boundaries, which streams are kept, edges, titles). Then every stored file is read again once on
# the next ingest: a full read of the user's transcripts (the 64.8 MB claude-code corpus: 5.5-5.9 s
# against 0.9-1.4 s when every file is skipped), embedding only the chunks whose text changed (137
# of 3,064 from the release before VERSION 1). A change that only affects how stored chunks are
# searched or shown needs no bump.
VERSION = 6
