"""Configuration: defaults, files, environment, precedence and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from causantic.config import config_keys, load_config
from causantic.errors import ConfigError


def test_defaults_follow_the_design_documents() -> None:
    config = load_config()
    assert config.retrieval.mmr_lambda == 0.7
    assert config.retrieval.rrf_k == 5
    assert config.clustering.min_cluster_size == 4
    assert config.clustering.threshold == 0.09
    assert config.traversal.max_depth == 50
    assert config.tokens.mcp_max_response == 20_000
    assert config.graph.time_gap_minutes == 30


def test_the_last_source_wins_key_by_key(causantic_home: Path, tmp_path: Path) -> None:
    causantic_home.mkdir(parents=True)
    (causantic_home / "config.json").write_text(json.dumps(
        {"retrieval": {"mmrLambda": 0.5, "rrfK": 30}, "traversal": {"maxDepth": 10}}))
    (tmp_path / "causantic.config.json").write_text(json.dumps({"retrieval": {"mmrLambda": 0.6}}))
    config = load_config(cwd=tmp_path, environ={"CAUSANTIC_TRAVERSAL_MAX_DEPTH": "20"})
    assert config.retrieval.mmr_lambda == 0.6  # project file beats user file
    assert config.retrieval.rrf_k == 30  # user file beats defaults
    assert config.traversal.max_depth == 20  # environment beats both


def test_an_environment_variable_reaches_a_two_word_section() -> None:
    config = load_config(environ={"CAUSANTIC_CLUSTER_EXPANSION_MAX_SIBLINGS": "7"})
    assert config.cluster_expansion.max_siblings == 7


def test_an_out_of_range_value_names_the_key() -> None:
    with pytest.raises(ConfigError, match="mmr_lambda|mmrLambda"):
        load_config(environ={"CAUSANTIC_RETRIEVAL_MMR_LAMBDA": "3"})


def test_an_unknown_key_in_a_file_lists_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / "causantic.config.json").write_text(json.dumps({"retrieval": {"mmrLamda": 0.5}}))
    with pytest.raises(ConfigError, match="unknown key 'retrieval.mmrLamda'.*mmrLambda"):
        load_config(cwd=tmp_path)


def test_broken_json_says_which_file(tmp_path: Path) -> None:
    (tmp_path / "causantic.config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="causantic.config.json: not valid JSON"):
        load_config(cwd=tmp_path)


def test_every_key_has_a_description() -> None:
    keys = config_keys()
    assert "retrieval.mmrLambda" in keys and "clustering.minClusterSize" in keys
    assert all(description for _, description in keys.values())
