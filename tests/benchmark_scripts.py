"""The scripts under ``benchmarks/`` loaded as modules, so a test can call what a benchmark computes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(script: str) -> ModuleType:
    """``benchmarks/<script>`` as module ``bench_<name>`` (registered, so its dataclasses resolve)."""
    spec = importlib.util.spec_from_file_location(f"bench_{Path(script).stem.lstrip('_')}", BENCHMARKS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
