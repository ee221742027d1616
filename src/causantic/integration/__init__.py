"""Registering Causantic with Claude Code, and taking it out again.

- ``claude_files``: where Claude Code's settings and ``.claude.json`` live; safe JSON edits, backups.
- ``entries``: the MCP server entry and hook handlers Causantic adds, and recognising them later.
- ``install``: ``causantic init`` / ``causantic uninstall``, with a manifest of what init created.
- ``health``: after init, run the registered server and hook the way Claude Code will.
"""
