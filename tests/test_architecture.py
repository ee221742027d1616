"""Layering rules from docs/architecture.md, checked on the import statements of every module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "causantic"

# What each layer may import from causantic (besides itself and BASE).
ALLOWED: dict[str, set[str]] = {
    "transcripts": set(),
    "store": set(),
    "embedding": set(),
    "cluster": set(),
    "ingest": {"transcripts", "store", "embedding", "cluster"},
    "retrieval": {"store", "ingest", "cluster", "embedding", "transcripts"},
    "services": {"store", "embedding", "retrieval", "ingest", "cluster"},
    "facade": {"services", "store", "embedding", "retrieval", "ingest"},  # Memory: the one door, over services
    "integration": {"facade", "embedding"},  # installs the hooks and server into Claude Code, Codex, Gemini
    "examples": set(),
    "entrypoints": {"hooks", "mcp", "dashboard"},  # the CLI starts the other interfaces through it
}
INTERFACES = {"cli", "mcp", "hooks", "dashboard"}
# What an interface may use: the facade and what describes its answers (retrieval's results,
# renderings and option limits, ingest's report), never services, the store or another interface.
INTERFACE_ALLOWED = {"facade", "retrieval", "ingest", "embedding", "transcripts", "examples", "integration"}
BASE = {"config", "errors", "files", "logs", "runs", "__init__", "__main__"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("causantic"):
            parts = node.module.split(".")
            found.add(parts[1] if len(parts) > 1 else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "causantic" and len(parts) > 1:
                    found.add(parts[1])
    return found


def _layer(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def test_every_layer_imports_only_the_layers_before_it() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer in BASE:
            continue
        used = _imports(path) - BASE - {layer}
        if layer in INTERFACES:
            bad = used - INTERFACE_ALLOWED - ({"entrypoints"} if layer == "cli" else set())
        else:
            bad = used - ALLOWED.get(layer, set())
        if bad:
            problems.append(f"{path.relative_to(PACKAGE)} imports {sorted(bad)}")
    assert not problems, "\n".join(problems)


def test_no_interface_imports_another_and_none_reaches_below_the_facade() -> None:
    """No exceptions: the CLI starts the MCP server, the dashboard and the hooks through
    ``causantic.entrypoints``, and what several interfaces share lives below them all."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer not in INTERFACES:
            continue
        crossing = _imports(path) & ((INTERFACES - {layer}) | {"services", "store"})
        if crossing:
            problems.append(f"{path.relative_to(PACKAGE)} imports {sorted(crossing)}")
    assert not problems, "\n".join(problems)


def test_only_the_facade_and_services_open_the_store() -> None:
    openers = {
        _layer(path)
        for path in PACKAGE.rglob("*.py")
        if "services" in _imports(path) and _layer(path) not in {"services"}
    }
    assert openers <= {"facade"}, f"services used outside the facade by {sorted(openers - {'facade'})}"


@pytest.mark.parametrize(
    "module", ["causantic.cli.main", "causantic.services", "causantic.retrieval.search", "causantic.facade"]
)
def test_importing_an_entry_point_loads_no_heavy_library(module: str) -> None:
    code = (
        f"import sys, {module}; heavy = [m for m in ('numpy', 'faiss', 'onnxruntime', 'sklearn', 'lancedb')"
        " if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"


def test_only_the_entry_points_launch_an_interface() -> None:
    """``causantic.entrypoints`` is the one module outside the MCP server, the dashboard and the hooks
    that imports them (``causantic serve``, ``causantic dashboard``, ``causantic hook``)."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer, used = _layer(path), _imports(path)
        launched = used & ({"mcp", "dashboard", "hooks"} - {layer})
        if launched and layer != "entrypoints":
            problems.append(f"{path.relative_to(PACKAGE).as_posix()} imports {sorted(launched)}")
    assert not problems, "\n".join(problems)


def test_importing_the_dashboard_command_loads_no_web_or_heavy_library() -> None:
    code = (
        "import sys, causantic.cli.dashboard_commands; print([m for m in ('starlette', 'uvicorn', 'jinja2',"
        " 'numpy', 'lancedb', 'sklearn') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"
