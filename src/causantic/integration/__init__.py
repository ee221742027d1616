"""Registering Causantic with Claude Code (its MCP server with other agents too), and taking it out.

- ``claude_files``: where Claude Code's settings and ``.claude.json`` live; safe JSON edits, backups.
- ``entries``: the MCP server entry and hook handlers Causantic adds, and recognising them later.
- ``install``: ``causantic init`` / ``causantic uninstall``, with a manifest of what init created.
- ``agents``: the same MCP server in Codex CLI's, Gemini CLI's, Copilot CLI's, Cursor's and Factory
  Droid's files, where those agents are installed.
- ``health``: after init, run the registered server and hook the way Claude Code will.
"""
