"""Whether a resumed session's stored model may be kept without the user's config naming it.

Why a question of its own: the model a session was stored with is a row of `.myrm/sessions.db`,
and that file can come with `git clone` (settings/model_choice.py has the rule). A stored name is
kept by itself only when reaching it needs nothing of the user's but a provider key: a model of
litellm's bundled map (its provider's own endpoint, the user's own key), an installed embedded
model, or a test provider's where they are on (llm/fake_providers/switch.py). An open-catalogue name
(`ollama/...`, `openrouter/...`, `hosted_vllm/...`) is not: it is a guess at a server the user may
not run, and the user's config or `--model` must name it.
"""

from __future__ import annotations


def built_in_model(model: str) -> bool:
    from myrm_tui.llm.fake_providers.switch import enabled, is_test_model

    if is_test_model(model):
        return enabled()
    if model.startswith("local/"):
        from myrm_tui.llm.local.provider import local_model_names

        return model in local_model_names()
    from myrm_tui.llm.models import registry

    return registry.in_map(model) or registry.info(model).known
