"""Configuration: defaults, files, environment, precedence and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from causantic.config import Config, ConfigWarning, config_keys, load_config
from causantic.errors import ConfigError


def test_defaults_follow_the_design_documents() -> None:
    config = load_config()
    assert config.retrieval.mmr_lambda == 0.7
    assert config.retrieval.rrf_k == 5
    assert config.clustering.min_cluster_size == 4
    assert config.clustering.threshold == 0.09
    assert config.traversal.max_depth == 50
    assert config.tokens.mcp_max_response == 10_000
    assert config.graph.time_gap_minutes == 30


def test_the_defaults_help_names_are_the_configured_defaults() -> None:
    """--limit and max_tokens said 'default: retrieval.defaultLimit', a key an agent cannot look up;
    they give the number, which must be the configuration's."""
    from causantic.retrieval import options

    config = Config()
    assert options.RESULTS == config.retrieval.default_limit and f"(default {options.RESULTS})" in options.LIMIT.help
    assert options.ANSWER_TOKENS == config.tokens.mcp_max_response
    assert options.EPISODE_TOKENS == config.episodes.max_tokens
    assert "(default 10000)" in options.MAX_TOKENS.help and "(default 2500)" in options.EPISODE_MAX_TOKENS.help


def test_the_last_source_wins_key_by_key(causantic_home: Path, tmp_path: Path) -> None:
    causantic_home.mkdir(parents=True)
    (causantic_home / "config.json").write_text(
        json.dumps({"retrieval": {"mmrLambda": 0.5, "rrfK": 30}, "traversal": {"maxDepth": 10}})
    )
    (tmp_path / "causantic.config.json").write_text(json.dumps({"retrieval": {"mmrLambda": 0.6}}))
    config = load_config(cwd=tmp_path, environ={"CAUSANTIC_TRAVERSAL_MAX_DEPTH": "20"})
    assert config.retrieval.mmr_lambda == 0.6  # project file beats user file
    assert config.retrieval.rrf_k == 30  # user file beats defaults
    assert config.traversal.max_depth == 20  # environment beats both


def test_an_environment_variable_reaches_a_two_word_section() -> None:
    config = load_config(environ={"CAUSANTIC_CLUSTER_EXPANSION_MAX_SIBLINGS": "7"})
    assert config.cluster_expansion.max_siblings == 7


def test_a_variable_set_to_nothing_counts_as_unset(tmp_path: Path) -> None:
    """`CAUSANTIC_CLUSTER_EXPANSION_ENABLED=` stopped every command: "unable to interpret" a boolean."""
    (tmp_path / "causantic.config.json").write_text(json.dumps({"traversal": {"maxDepth": 10}}))
    config = load_config(
        cwd=tmp_path,
        environ={"CAUSANTIC_CLUSTER_EXPANSION_ENABLED": "", "CAUSANTIC_TRAVERSAL_MAX_DEPTH": " "},
    )
    assert config.cluster_expansion.enabled == Config().cluster_expansion.enabled
    assert config.traversal.max_depth == 10  # the file's value stands


def test_an_out_of_range_value_names_the_key() -> None:
    with pytest.raises(ConfigError, match="mmr_lambda|mmrLambda"):
        load_config(environ={"CAUSANTIC_RETRIEVAL_MMR_LAMBDA": "3"})


def test_an_unknown_key_in_a_file_is_ignored_with_a_warning_naming_it(tmp_path: Path) -> None:
    (tmp_path / "causantic.config.json").write_text(
        json.dumps({"retrieval": {"mmrLamda": 0.5}, "llm": {"enableLabelling": True}})
    )
    with pytest.warns(ConfigWarning) as caught:
        config = load_config(cwd=tmp_path)
    messages = [str(w.message) for w in caught]
    assert any("'retrieval.mmrLamda'" in m and "did you mean 'retrieval.mmrLambda'" in m for m in messages)
    assert any("'llm.enableLabelling'" in m for m in messages)
    assert config.retrieval.mmr_lambda == Config().retrieval.mmr_lambda


def test_a_key_of_the_earlier_implementation_moves_to_its_new_name(tmp_path: Path) -> None:
    (tmp_path / "causantic.config.json").write_text(json.dumps({"recency": {"decayFactor": 0.3}}))
    with pytest.warns(ConfigWarning, match="'recency.decayFactor' is now 'retrieval.recencyDecayFactor'"):
        config = load_config(cwd=tmp_path)
    assert config.retrieval.recency_decay_factor == 0.3


def test_a_config_file_of_the_earlier_implementation_never_stops_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "causantic.config.json").write_text(
        json.dumps({"recency": {"decayFactor": 0.3}, "semanticIndex": {"enabled": False}})
    )
    monkeypatch.chdir(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "causantic", "stats", "--json"], capture_output=True, text=True, check=False, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert "causantic: warning:" in run.stderr and "'semanticIndex.enabled'" in run.stderr
    assert json.loads(run.stdout)["chunk_count"] == 0


def test_broken_json_says_which_file(tmp_path: Path) -> None:
    (tmp_path / "causantic.config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="causantic.config.json: not valid JSON"):
        load_config(cwd=tmp_path)


def test_every_key_has_a_description() -> None:
    keys = config_keys()
    assert "retrieval.mmrLambda" in keys and "clustering.minClusterSize" in keys
    assert all(description for _, description in keys.values())


def test_every_key_is_read_by_the_code() -> None:
    """A key nothing reads promises a setting that does nothing: each one is read as an attribute
    (``config.graph.time_gap_minutes``) somewhere in the package, outside its own declaration."""
    import ast

    from pydantic import BaseModel

    package = Path(__file__).resolve().parents[1] / "src" / "causantic"
    read = {
        node.attr
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
    }
    unread = []
    for section_name, section_field in Config.model_fields.items():
        section = section_field.annotation
        assert isinstance(section, type) and issubclass(section, BaseModel)
        unread += [f"{section_name}.{key}" for key in section.model_fields if key not in read]
    assert not unread, f"keys nothing reads: {unread}"
