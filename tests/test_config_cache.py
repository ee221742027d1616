"""The cached configuration the read commands and the prompt hook use: the same values as a full
load, without pydantic once cached, seeing every change of its inputs, and never holding a secret."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from causantic.config import config_keys, load_config
from causantic.config_cache import CACHE_FILE, cached_config, read_config


def _values(config: object) -> dict[str, object]:
    """Every key's value, read by attribute as the code reads it."""
    out: dict[str, object] = {}
    for dotted in config_keys():
        section, key = dotted.split(".")
        out[dotted] = getattr(getattr(config, _snake(section)), _snake(key))
    return out


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


@pytest.fixture
def configured(causantic_home: Path, tmp_path: Path) -> Path:
    """A user file and a project file that change values of several types, tuples among them."""
    causantic_home.mkdir(parents=True)
    (causantic_home / "config.json").write_text(
        json.dumps({"retrieval": {"mmrLambda": 0.5, "fusion": "rrf"}, "redaction": {"extraPatterns": ["ACME-\\d+"]}})
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "causantic.config.json").write_text(json.dumps({"traversal": {"maxDepth": 12}}))
    return project


def test_the_cached_copy_reads_as_the_validated_configuration(configured: Path) -> None:
    full = load_config(cwd=configured)
    first = read_config(configured)  # loaded in full and cached
    cached = read_config(configured)  # read back from the cache
    assert not hasattr(cached, "model_dump")  # the copy, not the pydantic model
    assert _values(first) == _values(cached) == _values(full)
    assert cached.redaction.extra_patterns == ("ACME-\\d+",)  # a tuple, as validated (hashable)
    assert cached.graph.topic_shift_patterns == full.graph.topic_shift_patterns
    assert cached.traversal.max_depth == 12 and cached.retrieval.fusion == "rrf"


def test_a_changed_file_or_variable_is_seen_at_once(configured: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert read_config(configured).traversal.max_depth == 12
    (configured / "causantic.config.json").write_text(json.dumps({"traversal": {"maxDepth": 345}}))
    assert read_config(configured).traversal.max_depth == 345
    monkeypatch.setenv("CAUSANTIC_TRAVERSAL_MAX_DEPTH", "7")
    assert read_config(configured).traversal.max_depth == 7


def test_a_cached_read_loads_no_pydantic(configured: Path) -> None:
    read_config(configured)
    probe = (
        "import sys; from pathlib import Path; from causantic.config_cache import read_config\n"
        f"config = read_config(Path({str(configured)!r}))\n"
        "print(config.traversal.max_depth, 'pydantic' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["12", "False"]


def test_a_team_database_url_is_never_written_to_the_cache(
    causantic_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_STORAGE_POSTGRES_URL", "postgresql://alice:s3cret-pw@db.example/team")
    hook = cached_config(None, ("prompt_memory",))  # the prompt hook's read: no crash on the secret
    assert hook.section("prompt_memory").enabled is False
    config = read_config()
    assert config.storage.postgres_url is not None
    assert config.storage.postgres_url.get_secret_value().endswith("@db.example/team")  # the full model
    cache = causantic_home / "cache" / CACHE_FILE
    assert not cache.exists() or "s3cret-pw" not in cache.read_text()


def test_an_invalid_configuration_raises_and_is_not_cached(configured: Path, causantic_home: Path) -> None:
    from causantic.errors import ConfigError

    (configured / "causantic.config.json").write_text(json.dumps({"retrieval": {"mmrLambda": 3}}))
    for _ in range(2):
        with pytest.raises(ConfigError, match="mmr"):
            read_config(configured)


def test_a_damaged_cache_file_is_rewritten_from_a_full_load(configured: Path, causantic_home: Path) -> None:
    read_config(configured)
    cache = causantic_home / "cache" / CACHE_FILE
    entries = json.loads(cache.read_text())["entries"]
    del entries[0]["sections"]
    cache.write_text(json.dumps({"entries": entries}))
    assert read_config(configured).traversal.max_depth == 12
    cache.write_text("{not json")
    assert read_config(configured).traversal.max_depth == 12
    assert read_config(configured).traversal.max_depth == 12  # and cached again
    assert "sections" in json.loads(cache.read_text())["entries"][0]
