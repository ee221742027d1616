"""Layering rules from docs/architecture.md, checked on the import statements of every module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "causantic"

# What each layer may import from causantic (besides itself, config and errors).
ALLOWED: dict[str, set[str]] = {
    "transcripts": set(),
    "store": set(),
    "embedding": set(),
    "cluster": set(),
    "ingest": {"transcripts", "store", "embedding", "cluster"},
    "retrieval": {"store", "ingest", "cluster", "embedding", "transcripts"},
    "services": {"store", "embedding", "retrieval", "ingest", "cluster"},
    "facade": {"services", "embedding", "retrieval", "ingest"},  # Memory: the library's door, over services
    "examples": set(),
}
INTERFACES = {"cli", "mcp", "hooks", "integration", "dashboard"}
BASE = {"config", "config_cache", "home", "errors", "files", "__init__", "__main__"}  # config_cache, home: config


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
            allowed = {
                "services",
                "retrieval",
                "ingest",
                "embedding",
                "cluster",
                "transcripts",
                "examples",
                *INTERFACES,
            }
            bad = used - allowed
            if "store" in used:
                bad.add("store (interfaces go through services)")
        else:
            bad = used - ALLOWED.get(layer, set())
        if bad:
            problems.append(f"{path.relative_to(PACKAGE)} imports {sorted(bad)}")
    assert not problems, "\n".join(problems)


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


def test_the_dashboard_imports_no_other_interface_and_only_the_cli_launches_it() -> None:
    """The web layer stands on the services alone (like the CLI and MCP); `causantic dashboard`
    is the one module outside it that imports it, as `causantic serve` launches the MCP server."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer, used = _layer(path), _imports(path)
        relative = path.relative_to(PACKAGE).as_posix()
        if layer == "dashboard":
            bad = used & (INTERFACES - {"dashboard"} | {"store"})
            if bad:
                problems.append(f"{relative} imports {sorted(bad)}")
        elif "dashboard" in used and relative != "cli/dashboard_commands.py":
            problems.append(f"{relative} imports the dashboard")
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
