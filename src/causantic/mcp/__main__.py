"""`python -m causantic.mcp`: the stdio server Claude Code starts (no CLI imports on the way)."""

from causantic.mcp.server import run

run()
