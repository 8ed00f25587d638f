"""`myrm run` against the user's own OpenAI-compatible server, as the README describes it: the
real `myrm` entry point in a subprocess, talking over loopback to a real llama.cpp server (the
README recipe) or to a scripted HTTP server that records every request (headers and body).

Before: with no OPENAI_API_KEY exported, the README's local-server recipe retried four times
over 10-17 s and ended with "openai failed on its side (HTTP 500) … send again in a moment";
a declared `max_output_tokens = 2048` was shown by `myrm models` but every request asked for
`max_tokens: 4096`, which vLLM and llama.cpp servers refuse.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.fake_openai_server import FakeOpenAI, answer, error, running_fake_openai

PROVIDERS_DOC = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
# A real key of another provider, set while the local server is used: it must never reach it.
ANTHROPIC_KEY = "sk-ant-real-key-of-another-provider-0002"
OPENAI_KEY = "sk-openai-test-key-for-the-server-0003"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with running_fake_openai() as fake:
        fake.default = answer("Hello from your server.")
        yield fake


def readme_recipe() -> str:
    """The manual's config block for a local server (the first ```toml block of "Real providers",
    docs/providers.md, which the README's quick start links through docs/models.md)."""
    section = PROVIDERS_DOC.read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert block is not None, "docs/providers.md has a toml block"
    return block.group(1)


def write_config(myrm, text: str) -> None:
    (myrm.config_dir / "config.toml").write_text(text, encoding="utf-8")


@pytest.mark.slow
@pytest.mark.llama
def test_the_readme_local_server_recipe_runs_as_written_without_a_key(myrm, llama_server):
    recipe = readme_recipe()
    config = tomllib.loads(recipe)
    (declared,) = config["models"]
    assert config["model"] == declared and "api_key" not in recipe
    written_base = config["models"][declared]["api_base"]
    write_config(myrm, recipe.replace(written_base, llama_server.api_base))
    result = myrm("run", "Say hello in one short sentence.", env={"ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the server's answer is printed"
    assert "retry" not in result.stderr and "HTTP 500" not in result.stderr


def test_a_keyless_server_gets_a_placeholder_never_another_providers_key(myrm, server):
    write_config(
        myrm,
        f'model = "openai/llama3"\n\n[models."openai/llama3"]\napi_base = "{server.api_base}"\ncontext_window = 8192\n',
    )
    result = myrm("run", "hello", env={"ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from your server.\n"
    (request,) = server.requests
    assert request["authorization"] == "Bearer myrm-no-key"
    assert ANTHROPIC_KEY not in json.dumps(request)


def test_a_declared_max_output_tokens_is_what_every_request_asks_for(myrm, server):
    write_config(
        myrm,
        f'model = "openai/qwen-local"\n\n[models."openai/qwen-local"]\napi_base = "{server.api_base}"\n'
        "context_window = 32768\nmax_output_tokens = 2048\n",
    )
    listed = myrm("models", "--search", "qwen-local")
    assert re.search(r"openai/qwen-local\s+yes\s+32,768\s+2,048", listed.stdout), listed.stdout
    result = myrm("run", "hello", env={"OPENAI_API_KEY": OPENAI_KEY})
    assert result.returncode == 0, result.stderr
    (request,) = server.requests
    assert json.loads(request["body"])["max_tokens"] == 2048


def test_a_hosted_model_without_its_key_is_one_config_error_before_anything_is_sent(myrm, server):
    result = myrm("run", "--model", "openai/gpt-4o", "hello", env={"ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "OPENAI_API_KEY" in lines[0] and "not set" in lines[0]
    assert "retry" not in result.stderr
    assert myrm("sessions", "list").stdout.count("openai/gpt-4o") == 0, "no session was created"


def test_errors_of_a_local_server_name_its_address(myrm, server):
    server.default = error(500, "CUDA out of memory")
    write_config(
        myrm,
        f'model = "openai/llama3"\nllm_max_attempts = 1\n\n[models."openai/llama3"]\napi_base = "{server.api_base}"\n',
    )
    result = myrm("run", "hello", env={"OPENAI_API_KEY": OPENAI_KEY})
    assert result.returncode == 1
    assert f"The server at 127.0.0.1:{server.port} failed on its side" in result.stderr
    assert "openai failed" not in result.stderr
