"""Example Claude Code sessions shipped with the package (written by scripts/make_example_sessions.py).

Used when a machine has no ``~/.claude/projects`` yet, so the quick start still shows memory at work.
"""

from pathlib import Path

SESSIONS_DIR = Path(__file__).resolve().parent / "sessions"
