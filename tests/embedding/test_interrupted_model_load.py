"""Ctrl-C while the model's packages initialise is an interrupt, not a missing install.

CPython reports a KeyboardInterrupt that arrives while an extension module initialises as
``ImportError('initialization failed')`` caused by the interrupt (seen with numpy and onnxruntime
under load); the user who pressed Ctrl-C was told "Embedding needs onnxruntime and numpy: pip
install …" and the command exited 1 instead of 130. The finder below raises exactly that chain.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from types import ModuleType

import pytest

from causantic.embedding import DEFAULT_MODEL, Embedder, get_spec
from causantic.embedding.models import locate
from causantic.errors import ModelUnavailable


class _FailingImport(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, interrupted: bool) -> None:
        self.name, self.interrupted = name, interrupted

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if fullname != self.name:
            return None
        if self.interrupted:
            raise ImportError("initialization failed") from KeyboardInterrupt()
        raise ImportError(f"No module named {fullname!r}")


@pytest.fixture
def embedder() -> Embedder:
    spec = get_spec(DEFAULT_MODEL)
    return Embedder(spec, locate(spec))


@pytest.mark.parametrize("package", ["onnxruntime", "tokenizers"])
def test_ctrl_c_while_a_package_initialises_stops_the_command(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    monkeypatch.delitem(sys.modules, package, raising=False)
    monkeypatch.setattr(sys, "meta_path", [_FailingImport(package, interrupted=True), *sys.meta_path])
    with pytest.raises(KeyboardInterrupt):
        embedder.load()


def test_a_package_really_missing_still_says_what_to_install(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "onnxruntime", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_FailingImport("onnxruntime", interrupted=False), *sys.meta_path])
    with pytest.raises(ModelUnavailable, match="Embedding needs onnxruntime and numpy: pip install"):
        embedder.load()
