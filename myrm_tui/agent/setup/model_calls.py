"""How a call to a configured model is made: one function for the main model and the summarizer.

Why one function: the summarizer used to build its own `CallSettings` and passed the endpoint
only when it was the main model, so a lite model declared with `[models."X"].api_base` (an
Ollama or vLLM box) was sent to litellm's default endpoint with whatever key was set: the
session's content went to a provider the user never chose. Every call now takes its endpoint
(and everything else that decides where the request goes) from the model's resolved
`ModelInfo`, the same way for every purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

from myrm_tui.llm.call_settings import CallSettings, local_model_extra
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.settings.settings import Settings

# Summaries are extractive notes, not prose: sampling adds nothing but variance between attempts.
SUMMARY_TEMPERATURE = 0.0
# The summary client retries with the auditor's feedback itself; the transport retries once.
SUMMARY_TRANSPORT_ATTEMPTS = 2
# What one summarizer call may write: the client asks for ~1,200 tokens (chunking.DEFAULT_TARGET_TOKENS)
# and caps each request below this.
SUMMARY_MAX_OUTPUT_TOKENS = 2_048


def model_info_for(settings: Settings, model: str) -> ModelInfo:
    """Registry facts for `model` with the user's `[models."X"]` overrides. The `api_base`
    setting is the endpoint of the MAIN model only (README): another model (the lite model)
    gets the endpoint its own `[models."X"]` entry declares, or none."""
    from myrm_tui.agent.setup.build import resolve_model_info

    if model == settings.model:
        return resolve_model_info(settings)
    return resolve_model_info(settings.with_values(model=model, api_base=""))


def call_settings_for(
    settings: Settings,
    info: ModelInfo,
    *,
    session_id: str | None = None,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    max_attempts: int | None = None,
) -> CallSettings:
    """The call settings of `info`'s model: its endpoint, the user's timeouts and retries, and
    the parameters only the embedded model reads. Purpose-specific values (output cap,
    temperature, attempts) are the only things a caller chooses."""
    max_out = max_output_tokens if max_output_tokens is not None else int(settings.max_output_tokens)
    cap = info.output_cap()  # the registry's limit, or the user's `[models."X"] max_output_tokens`
    if cap is not None:
        max_out = min(max_out, cap)
    return CallSettings(
        max_output_tokens=max_out,
        temperature=temperature,
        api_base=info.api_base or None,
        timeout_s=float(settings.llm_timeout),
        first_token_timeout_s=float(settings.llm_first_token_timeout),
        max_attempts=int(max_attempts if max_attempts is not None else settings.llm_max_attempts),
        prompt_cache_key=session_id,
        extra=local_model_extra(info.name, int(settings.local_threads)),
    )


@dataclass(frozen=True)
class LiteChoice:
    """The lite model summaries go to first (None: the main model) and why, for doctor and the
    settings screen: the effective value of `lite_model`, which is empty by default."""

    model: str | None
    why: str


def lite_model_for(settings: Settings, main: ModelInfo) -> LiteChoice:
    """The `lite_model` setting resolved against the main model: "off" means the main model, a
    name is used as given, and empty (the default) picks the main provider's small model
    (llm/models/lite.py) when all of these hold, else the main model: a key for that provider is
    set (never a model the user cannot pay for), the small model costs less per input token than
    the main one (the main model is a large one), and both go to the same endpoint (a main model
    served from `api_base` or its own `[models."X"] api_base` is not the provider's own)."""
    from myrm_tui.llm.models.lite import LITE_OFF, has_key, provider_small_model

    value = settings.lite_model.strip()
    if value.lower() == LITE_OFF:
        return LiteChoice(None, "main model (lite_model = off)")
    if value:
        return LiteChoice(value, "configured")
    small = provider_small_model(main.provider)
    if small is None or small == main.name:
        return LiteChoice(None, f"main model (no smaller {main.provider} model to choose)")
    if not has_key(main.provider):
        return LiteChoice(None, f"main model (no {main.provider} API key for {small})")
    info = model_info_for(settings, small)
    if (info.api_base or None) != (main.api_base or None):
        return LiteChoice(None, f"main model (it has its own endpoint; {small} would not)")
    # A price the registry does not list (0) is no evidence either way: the name differs and the
    # provider's small model is the cheap one by construction, so only a known price refuses.
    if main.input_cost_per_token and not info.input_cost_per_token < main.input_cost_per_token:
        return LiteChoice(None, f"main model (not larger than {small})")
    return LiteChoice(small, f"automatic: {main.provider}'s small model, main model {main.name} is a large one")


def effective_lite_model(settings: Settings, main_model: str) -> LiteChoice:
    """`lite_model_for` by the main model's name: what doctor and the settings screen show."""
    return lite_model_for(settings, model_info_for(settings, main_model))


@dataclass(frozen=True)
class SummaryRoute:
    """One model the summary chain may ask, with everything its calls need."""

    model: str
    window: int
    settings: CallSettings
    why: str


def summary_routes(settings: Settings, main: ModelInfo) -> list[SummaryRoute]:
    """The summarizer chain, in order: the lite model when configured and able, then the main
    model; empty when neither can write summaries (extractive only). A failing or rejected lite
    model hands the chunk to the main model before the extractive body is used."""
    from myrm_tui.context.summary.client import summarizer_chain

    lite = lite_model_for(settings, main).model
    lite_info = model_info_for(settings, lite) if lite else None
    routes = []
    for model, why in summarizer_chain(main.name, lite, main, lite_info):
        info = lite_info if (lite_info is not None and model == lite and model != main.name) else main
        call = call_settings_for(
            settings,
            info,
            max_output_tokens=SUMMARY_MAX_OUTPUT_TOKENS,
            temperature=SUMMARY_TEMPERATURE,
            max_attempts=SUMMARY_TRANSPORT_ATTEMPTS,
        )
        routes.append(SummaryRoute(model, info.context_window, call, why))
    return routes
