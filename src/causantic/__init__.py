"""Causantic: long-term, local, episodic memory for AI coding agents.

Importing the package is cheap on purpose: heavy libraries (numpy, faiss, onnxruntime,
scikit-learn) load inside the functions that need them, so hooks and `--help` stay fast.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ loads it on first use
    from causantic.facade import Memory as Memory

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # ``from causantic import Memory`` loads the facade on first use, so importing the package
    # (as every hook and `causantic --help` does) stays cheap.
    if name == "Memory":
        from causantic.facade import Memory

        return Memory
    raise AttributeError(f"module 'causantic' has no attribute {name!r}")
