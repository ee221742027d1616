"""The README and docs/architecture.md name configuration keys and give their defaults: both must be
config.py's. docs/measurements.md is a record of runs (values then, keys since removed) and is left out."""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path

import pytest

from causantic.config import Config, config_keys

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/architecture.md")

# `section.key`, optionally `section.key=value`; a number right after it ("`key` (0.35)", "`key`, 10,000",
# "`key` = 400", "`key` (50%)") is read as the default the text gives.
_SECTIONS = "|".join(sorted({key.split(".")[0] for key in config_keys()}, key=len, reverse=True))
_KEY = re.compile(rf"`({_SECTIONS})\.([a-z][A-Za-z]*)(?:=[^`]*)?`(?P<after>[^`\n]{{0,30}})")
_STATED = re.compile(r"^\s*[(,=]?\s*(?P<number>-?\d[\d,]*(?:\.\d+)?|\.\d+)(?P<percent>\s*%)?(?![\w.])")
_ENV = re.compile(r"\bCAUSANTIC_[A-Z_]+[A-Z]\b")
_NOT_CONFIG_ENV = {"CAUSANTIC_HOME"}
_FILE_ENDINGS = {"py", "md", "json", "jsonl", "toml", "db"}  # `sources.py` is a module, not a key


def doc_problems(name: str, text: str) -> list[str]:
    """Keys the text names that config.py lacks, and defaults it states that config.py's differ from."""
    from causantic.config import _env_key

    keys = config_keys()
    problems = []
    for match in _KEY.finditer(text):
        key = f"{match.group(1)}.{match.group(2)}"
        if match.group(2) in _FILE_ENDINGS:
            continue
        line = text.count("\n", 0, match.start()) + 1
        if key not in keys:
            problems.append(f"{name}:{line}: `{key}` is not a configuration key")
            continue
        stated = _STATED.match(match.group("after"))
        default = keys[key][0]
        if stated is None or isinstance(default, bool) or not isinstance(default, int | float):
            continue
        value = float(stated.group("number").replace(",", "")) / (100 if stated.group("percent") else 1)
        if not math.isclose(value, default, rel_tol=1e-9, abs_tol=1e-12):
            problems.append(f"{name}:{line}: `{key}` is said to be {stated.group('number')}, its default is {default}")
    for match in _ENV.finditer(text):
        variable = match.group(0)
        key = _env_key(variable)
        if variable not in _NOT_CONFIG_ENV and (key is None or key not in keys):
            line = text.count("\n", 0, match.start()) + 1
            problems.append(f"{name}:{line}: {variable} sets no configuration key")
    return problems


@pytest.mark.parametrize("name", DOCS)
def test_the_docs_name_only_configuration_keys_and_give_their_defaults(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert _KEY.search(text), f"{name} names no configuration key: is the pattern still right?"
    assert doc_problems(name, text) == []


def test_a_wrong_default_or_a_missing_key_in_the_docs_is_found() -> None:
    text = (
        "Prompts get `promptMemory.maxTokens` (300) and `episodes.sideShare` (0.5) and "
        "`promptMemory.minCoverage` (40%) of `retrieval.mmrLamda`; set CAUSANTIC_RETRIEVAL_MMR_LAMBDAS=0.5.\n"
    )
    assert doc_problems("x.md", text) == [
        "x.md:1: `episodes.sideShare` is said to be 0.5, its default is 0.35",
        "x.md:1: `promptMemory.minCoverage` is said to be 40, its default is 0.5",
        "x.md:1: `retrieval.mmrLamda` is not a configuration key",
        "x.md:1: CAUSANTIC_RETRIEVAL_MMR_LAMBDAS sets no configuration key",
    ]


def test_defaults_restated_below_the_configuration_are_its_defaults() -> None:
    """The store opens without loading pydantic, so its connections wait a default of their own when
    a caller passes none (tests, the prompt hook's migration); ingest links agents by time within the
    configured gap's default when the gap is 0. Each must stay the configuration's default."""
    from causantic.ingest.chunker import LONG_LINE_CHARS
    from causantic.ingest.plan import _DEFAULT_LINK_WINDOW
    from causantic.store import sqlite
    from causantic.store.memory import MemoryStore
    from causantic.store.vectors import VectorIndex

    config = Config()
    waits = {
        f"{where.__qualname__}(busy_timeout_ms)": inspect.signature(where).parameters["busy_timeout_ms"].default
        for where in (sqlite.connect, MemoryStore.__init__, VectorIndex.__init__)
    }
    assert waits == dict.fromkeys(waits, config.storage.busy_timeout_ms)
    assert _DEFAULT_LINK_WINDOW.total_seconds() == config.graph.time_gap_minutes * 60
    assert LONG_LINE_CHARS == config.chunking.long_line_chars
