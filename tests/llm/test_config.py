"""LLMConfig: validated at construction, from the environment and from files, key never shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pagewarden.llm import LLMConfig, LLMConfigError

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz012345"


def test_constructor_positional_and_defaults() -> None:
    config = LLMConfig("http://127.0.0.1:8080/v1/", "qwen")
    assert config.base_url == "http://127.0.0.1:8080/v1"
    assert config.model == "qwen"
    assert config.temperature == 0
    assert config.format_retries == 2
    assert config.structured_output == "auto"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"base_url": "ftp://x/v1", "model": "m"}, "base_url"),
        ({"base_url": "not a url", "model": "m"}, "base_url"),
        ({"base_url": "http://h/v1", "model": "  "}, "model"),
        ({"base_url": "http://h/v1", "model": "m", "timeout": 0}, "timeout"),
        ({"base_url": "http://h/v1", "model": "m", "retries": -1}, "retries"),
        ({"base_url": "http://h/v1", "model": "m", "structured_output": "xml"}, "structured_output"),
        ({"base_url": "http://h/v1", "model": "m", "concurency": 3}, "concurency"),
        ({"model": "m"}, "base_url"),
        ({"base_url": "http://h/v1", "model": "m", "backoff": 9, "backoff_max": 1}, "backoff"),
    ],
)
def test_bad_config_is_a_clear_error_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(LLMConfigError) as info:
        LLMConfig(**kwargs)
    assert field in str(info.value)


def test_key_never_appears_in_repr_or_errors() -> None:
    config = LLMConfig("http://h/v1", "m", api_key=KEY)
    assert KEY not in repr(config) and KEY not in str(config)
    assert config.secret_key() == KEY
    with pytest.raises(LLMConfigError) as info:
        LLMConfig("http://h/v1", "m", api_key=KEY, timeout="soon")
    assert KEY not in str(info.value)


def test_from_env_reads_pagewarden_then_openai_variables() -> None:
    env = {"PAGEWARDEN_LLM_MODEL": "gpt-x", "OPENAI_BASE_URL": "http://proxy:4000/v1", "OPENAI_API_KEY": KEY}
    config = LLMConfig.from_env(env)
    assert (config.model, config.base_url, config.secret_key()) == ("gpt-x", "http://proxy:4000/v1", KEY)
    env["PAGEWARDEN_LLM_BASE_URL"] = "http://127.0.0.1:9/v1"
    env["PAGEWARDEN_LLM_API_KEY"] = "other-key"
    env["PAGEWARDEN_LLM_TIMEOUT"] = "7.5"
    config = LLMConfig.from_env(env)
    assert (config.base_url, config.secret_key(), config.timeout) == (
        "http://127.0.0.1:9/v1",
        "other-key",
        7.5,
    )
    assert LLMConfig.from_env({"PAGEWARDEN_LLM_MODEL": "m"}).base_url == "https://api.openai.com/v1"


def test_from_env_without_model_says_what_to_set() -> None:
    assert not LLMConfig.env_configured({"OPENAI_API_KEY": KEY})
    with pytest.raises(LLMConfigError) as info:
        LLMConfig.from_env({"OPENAI_API_KEY": KEY})
    assert "PAGEWARDEN_LLM_MODEL" in str(info.value)
    with pytest.raises(LLMConfigError) as info:
        LLMConfig.from_env({"PAGEWARDEN_LLM_MODEL": "m", "PAGEWARDEN_LLM_TIMEOUT": "-1"})
    assert "timeout" in str(info.value)


def test_from_yaml_and_json_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LLM_KEY", KEY)
    yaml_file = tmp_path / "llm.yaml"
    yaml_file.write_text(
        "llm:\n  base_url: http://127.0.0.1:8080/v1\n  model: local\n  api_key_env: MY_LLM_KEY\n"
        "  cache_dir: cache\n  structured_output: json_object\n",
        encoding="utf-8",
    )
    config = LLMConfig.from_file(yaml_file)
    assert config.secret_key() == KEY
    assert config.cache_dir == tmp_path / "cache"
    assert config.structured_output == "json_object"
    json_file = tmp_path / "llm.json"
    json_file.write_text(
        json.dumps({"base_url": "http://h/v1", "model": "m", "retries": 1}), encoding="utf-8"
    )
    assert LLMConfig.from_file(json_file).retries == 1
    # The environment can point at a file and override parts of it.
    env = {"PAGEWARDEN_LLM_CONFIG": str(json_file), "PAGEWARDEN_LLM_MODEL": "other"}
    config = LLMConfig.from_env(env)
    assert (config.model, config.retries) == ("other", 1)


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("base_url: [unclosed\n", encoding="utf-8")
    with pytest.raises(LLMConfigError, match="not valid YAML"):
        LLMConfig.from_file(broken)
    listy = tmp_path / "list.yaml"
    listy.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(LLMConfigError, match="mapping"):
        LLMConfig.from_file(listy)
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("base_url: http://h/v1\nmodel: m\ntemprature: 1\n", encoding="utf-8")
    with pytest.raises(LLMConfigError, match="temprature: is not a known setting"):
        LLMConfig.from_file(unknown)
    missing_env = tmp_path / "env.yaml"
    missing_env.write_text("base_url: http://h/v1\nmodel: m\napi_key_env: PAGEWARDEN_TEST_UNSET_KEY\n")
    with pytest.raises(LLMConfigError, match="PAGEWARDEN_TEST_UNSET_KEY is not set"):
        LLMConfig.from_file(missing_env)
    with pytest.raises(LLMConfigError, match="cannot read"):
        LLMConfig.from_file(tmp_path / "absent.yaml")


def test_cost_accounting() -> None:
    assert LLMConfig("http://h/v1", "m").cost(1000, 1000) is None
    priced = LLMConfig("http://h/v1", "m", prompt_price=0.5, completion_price=1.5)
    assert priced.cost(2000, 1000) == pytest.approx(2.5)
