"""`myrm doctor` shows which model writes summaries: the automatic lite model (the main
provider's small one when its key is set), or the main model and why."""

from __future__ import annotations

KEY = {"ANTHROPIC_API_KEY": "sk-ant-test-key"}


def summaries_line(output: str) -> str:
    lines = [line for line in output.splitlines() if "summaries (lite_model):" in line]
    assert len(lines) == 1, output
    return lines[0]


def test_doctor_names_haiku_for_sonnet_with_an_anthropic_key(myrm):
    result = myrm("doctor", env={**KEY, "MYRM_MODEL": "anthropic/claude-sonnet-4-5"})

    line = summaries_line(result.stdout)
    assert "anthropic/claude-haiku-4-5" in line and "automatic" in line


def test_doctor_says_the_main_model_when_lite_model_is_off(myrm):
    env = {**KEY, "MYRM_MODEL": "anthropic/claude-sonnet-4-5", "MYRM_LITE_MODEL": "off"}

    line = summaries_line(myrm("doctor", env=env).stdout)

    assert line.endswith("summaries (lite_model): main model (lite_model = off)")


def test_doctor_never_names_a_model_whose_key_is_missing(myrm):
    line = summaries_line(myrm("doctor", env={"MYRM_MODEL": "openai/gpt-5.2", **KEY}).stdout)

    assert line.endswith("summaries (lite_model): main model (no openai API key for openai/gpt-5-mini)")


def test_doctor_shows_a_configured_lite_model_as_configured(myrm):
    env = {**KEY, "MYRM_MODEL": "anthropic/claude-sonnet-4-5", "MYRM_LITE_MODEL": "openai/gpt-4.1-mini"}

    line = summaries_line(myrm("doctor", env=env).stdout)

    assert "openai/gpt-4.1-mini (configured)" in line


def test_doctor_keeps_the_main_model_when_it_is_the_small_model_already(myrm):
    line = summaries_line(myrm("doctor", env={**KEY, "MYRM_MODEL": "anthropic/claude-haiku-4-5"}).stdout)

    assert line.endswith("summaries (lite_model): main model (no smaller anthropic model to choose)")


def test_a_dated_name_of_the_small_model_is_not_a_large_model(myrm):
    """Same price as the small model: nothing to save, so no second model."""
    env = {**KEY, "MYRM_MODEL": "anthropic/claude-haiku-4-5-20251001"}

    line = summaries_line(myrm("doctor", env=env).stdout)

    assert line.endswith("summaries (lite_model): main model (not larger than anthropic/claude-haiku-4-5)")


def test_a_main_model_on_its_own_endpoint_gets_no_automatic_lite_model(myrm):
    """`api_base` moves the main model only: the small model would go to the provider itself,
    a destination the user did not choose for this session."""
    env = {**KEY, "MYRM_MODEL": "anthropic/claude-sonnet-4-5", "MYRM_API_BASE": "http://127.0.0.1:9/v1"}

    line = summaries_line(myrm("doctor", env=env).stdout)

    assert line.endswith("main model (it has its own endpoint; anthropic/claude-haiku-4-5 would not)")
