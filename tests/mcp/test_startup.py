"""Start-up stays light: the server module loads the SDK and SQLite, not the vector or model stack."""

from __future__ import annotations

import subprocess
import sys

from process_support import subprocess_env

HEAVY = ("numpy", "faiss", "lancedb", "onnxruntime", "tokenizers", "sklearn")


def test_importing_the_server_loads_no_heavy_library() -> None:
    code = f"import sys, causantic.mcp.server; print([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), check=True
    )
    assert done.stdout.strip() == "[]"


def test_importing_the_hooks_entry_point_loads_neither_the_sdk_nor_heavy_libraries() -> None:
    code = f"import sys, causantic.hooks.runner; print([m for m in {(*HEAVY, 'mcp', 'rich')!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), check=True
    )
    assert done.stdout.strip() == "[]"
