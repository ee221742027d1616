"""Causantic: long-term, local, episodic memory for AI coding agents.

Importing the package is cheap on purpose: heavy libraries (numpy, faiss, onnxruntime,
scikit-learn) load inside the functions that need them, so hooks and `--help` stay fast.
"""

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ loads it on first use
    from causantic.facade import Memory as Memory

__version__ = "0.1.0"


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """A package's ``__getattr__`` (PEP 562) that imports each name's module, ``homes[name]`` within
    ``package``, on first use and keeps the name in the package, so importing the package alone
    stays cheap (a hook needing one small module does not load the others)."""

    def load(name: str) -> object:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return load


# ``from causantic import Memory`` loads the facade on first use, so importing the package (as every
# hook and `causantic --help` does) stays cheap.
__getattr__ = lazy_names(__name__, {"Memory": "facade"})
