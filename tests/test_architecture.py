"""Layering rules from docs/architecture.md, checked on the import statements of every module."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
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
    "prompt_services": {"store"},  # the prompt hook's light composition root (its read-only index)
    "examples": set(),
    "entrypoints": {"hooks", "mcp", "dashboard"},  # the CLI starts the other interfaces through it
}
INTERFACES = {"cli", "mcp", "hooks", "dashboard"}
# What an interface may use: the facade and what describes its answers (retrieval's results,
# renderings and option limits, ingest's report), never services, the store or another interface.
# The prompt hook alone opens its own light read-only index (prompt_services), for its start-up time.
INTERFACE_ALLOWED = {"facade", "retrieval", "ingest", "embedding", "transcripts", "examples", "integration"}
BASE = {
    "config",
    "config_cache",
    "home",
    "sources",
    "errors",
    "files",
    "net",
    "logs",
    "processes",
    "runs",
    "ingest_runs",
    "live_session",
    "wording",
    "write_waits",
    "__init__",
    "__main__",
}


def _from_module(node: ast.ImportFrom, path: Path) -> str:
    """The absolute module of ``from … import``: ``from ..store import x`` in causantic/retrieval/a.py
    is ``causantic.store``, so a relative import cannot slip past the layer checks."""
    if node.level == 0:
        return node.module or ""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = package[:-1] if package[-1] != "__init__" else package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imported_by_name(node: ast.Call) -> str | None:
    """The literal start of ``import_module("causantic.x…")`` or ``__import__(f"causantic.x.{name}")``:
    a module loaded by name is imported all the same."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.JoinedStr) and first.values:
        first = first.values[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _package_member(name: str) -> str:
    """``name`` when it is a module or sub-package of causantic, else ``__init__`` (where it is defined)."""
    return name if (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name).is_dir() else "__init__"


def _imports(path: Path, text: str | None = None) -> set[str]:
    """The causantic layers (top-level modules and packages) the module at ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8") if text is None else text)
    found: set[str] = set()
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom):
            module = _from_module(node, path)
            # `from causantic import facade` and `from .. import store` import the named layers;
            # `from causantic import __version__` imports the package's __init__
            modules = (
                [module] if module != "causantic" else [f"causantic.{_package_member(a.name)}" for a in node.names]
            )
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.Call):
            modules = [m for m in [_imported_by_name(node)] if m]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "causantic" and len(parts) > 1 and parts[1]:
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
            bad -= {"prompt_services"} if layer == "hooks" else set()
        else:
            bad = used - ALLOWED.get(layer, set())
        if bad:
            problems.append(f"{path.relative_to(PACKAGE)} imports {sorted(bad)}")
    assert not problems, "\n".join(problems)


def test_the_import_reader_sees_relative_imports_and_modules_loaded_by_name() -> None:
    """A planted ``from ..retrieval import search`` in the store, or a dashboard loaded by name, was
    invisible to these checks: only absolute ``causantic.…`` import statements were read."""
    planted = "\n".join(
        [
            "from ..retrieval import search",
            "from .. import mcp",
            "from . import keyword",
            "from causantic import __version__",
            "import importlib",
            'importlib.import_module("causantic.dashboard.app")',
            'importlib.import_module(f"causantic.hooks.{name}")',
        ]
    )
    assert _imports(PACKAGE / "store" / "planted.py", planted) == {
        "retrieval",
        "mcp",
        "store",
        "__init__",
        "hooks",
        "dashboard",
    }


def test_the_base_modules_import_only_each_other() -> None:
    """config, errors, home, runs and the rest sit below every layer (which is why the layers may all
    import them): one that imported a layer would pull it into everything. Two exceptions, at the top:
    the package root hands out ``Memory``, and ``python -m causantic`` starts the CLI."""
    above = {"__init__": {"facade"}, "__main__": {"cli"}}
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer not in BASE:
            continue
        bad = _imports(path) - BASE - above.get(layer, set())
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
    assert _loaded_by_importing(module, ("numpy", "faiss", "onnxruntime", "sklearn", "lancedb")) == []


def _loaded_by_importing(module: str, libraries: tuple[str, ...]) -> list[str]:
    """Which of ``libraries`` importing ``module`` loads, in a fresh interpreter."""
    code = f"import sys, {module}; print(' '.join(m for m in {libraries!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"},
    )
    return out.stdout.split()


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
    web_or_heavy = ("starlette", "uvicorn", "jinja2", "numpy", "lancedb", "sklearn")
    assert _loaded_by_importing("causantic.cli.dashboard_commands", web_or_heavy) == []


# ---- the sealed store (docs/architecture.md, "The store seam") ------------------------------------

# What code above store/ may import from it: the values that cross the seam, the seam's own types,
# the text features scoring reads (kept per chunk by the store), and the two text functions the
# keyword index is built from (ingest fills the identifier column
# with identifier_terms; relevance weighs the same query_terms the index matches). Pure text and
# frozen records: nothing here opens a database or builds a query.
STORE_SEAM: dict[str, set[str] | None] = {
    "causantic.store.records": None,  # any name
    "causantic.store.protocol": None,
    "causantic.store.fts": {"identifier_terms", "query_terms"},
    # the text features the store keeps per chunk, computed on the fly for rows written before it did;
    # and the size of a write whose features it computes in a second process (ingest's streamed batches)
    "causantic.store.features": {
        "bulk_share",
        "stem",
        "word_stems",
        "OUTPUT_MARKERS",
        "split_tool_output",
        "PARALLEL_FEATURE_CHARS",
    },
}
# The composition root: the one module that constructs the SQLite store and vector index.
STORE_BUILDERS = {"services.py", "prompt_services.py"}  # the second: the prompt hook's, light on purpose
SQL_TEXT = re.compile(
    r"\b(SELECT\b.+\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|VIRTUAL)"
    r"|BEGIN\s+IMMEDIATE|COMMIT|ROLLBACK|PRAGMA|WHERE|ORDER\s+BY|LIKE|MATCH)\b",
    re.S,
)


def _outside_store() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith("store/"):
            yield relative, ast.parse(path.read_text(encoding="utf-8"))


def test_nothing_above_the_store_imports_past_its_seam() -> None:
    problems = []
    for relative, tree in _outside_store():
        if relative in STORE_BUILDERS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (module := _from_module(node, PACKAGE / relative)):
                modules = [(module, {a.name for a in node.names})]
                if module == "causantic.store":
                    modules = [(f"causantic.store.{a.name}", set()) for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [(a.name, set()) for a in node.names]
            else:
                continue
            for module, names in modules:
                if module != "causantic.store" and not module.startswith("causantic.store."):
                    continue
                allowed = STORE_SEAM.get(module, set())
                if module not in STORE_SEAM or (allowed is not None and not names <= allowed):
                    problems.append(f"{relative}:{node.lineno} imports {module} {sorted(names)}")
    assert not problems, "\n".join(problems)


def test_no_sqlite_connection_or_sql_text_outside_the_store() -> None:
    problems = []
    for relative, tree in _outside_store():
        for node in ast.walk(tree):
            # Store methods raise StoreError, never sqlite3.Error, so nothing above needs the module.
            if isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names):
                problems.append(f"{relative}:{node.lineno} imports sqlite3")
            elif isinstance(node, ast.ImportFrom) and node.module == "sqlite3":
                problems.append(f"{relative}:{node.lineno} imports from sqlite3")
            elif isinstance(node, ast.Attribute) and node.attr == "conn":
                problems.append(f"{relative}:{node.lineno} touches a connection (.conn)")
            elif isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany", "executescript"):
                # SQL in lower case reads as prose to SQL_TEXT; running a statement is SQL in any case
                problems.append(f"{relative}:{node.lineno} runs a statement (.{node.attr})")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.search(node.value):
                problems.append(f"{relative}:{node.lineno} holds SQL text {node.value[:60]!r}")
    assert not problems, "\n".join(problems)


def test_the_sqlite_classes_implement_the_seam_and_it_lists_only_what_is_used_above() -> None:
    """Every protocol method exists on the SQLite class and is called by some module above store/,
    so the seam a second backend implements is exactly what the product needs."""
    from causantic.store.memory import MemoryStore
    from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
    from causantic.store.vectors import VectorIndex

    above = "\n".join(ast.unparse(tree) for _, tree in _outside_store())
    problems = []
    for protocol, implementation in ((MemoryStoreProtocol, MemoryStore), (VectorIndexProtocol, VectorIndex)):
        names = [n for n in vars(protocol) if not n.startswith("_")]
        assert len(names) > 10, protocol
        for name in names:
            if not hasattr(implementation, name) and name not in ("fts_enabled", "model_id"):
                problems.append(f"{implementation.__name__} lacks {name}")
            if not re.search(rf"\.{name}\b", above):
                problems.append(f"{protocol.__name__}.{name} is used by nothing above the store")
    assert not problems, "\n".join(problems)
