"""The providers that exist for tests, benchmarks and `myrm replay` only, and the switch that
turns them on.

Why off by default: `scripted/<path>` answers with the text and tool calls of a script file
anywhere on disk (and can write every request to another file); `replay/` and
`replay-summarizer/` answer from in-process state. A model name reaches myrm from places a
repository writes: a session stored in a committed `.myrm/sessions.db`, a custom command's
front matter, a workspace config. Were these providers always on, a cloned repository could ship
a script and have the agent act on it. So they exist only where someone switched them on: the
test suite (`tests/conftest.py`), the bench (`bench/__init__.py`) and `myrm replay` (in its own
process, `enable_in_this_process`). Everywhere else a test model is refused before a session is
created, with a sentence naming the switch, and each provider refuses a call by itself too.

Why an environment variable: the suite and the bench start `myrm` subprocesses, which inherit
it. Its name does not start with `MYRM_` (that prefix is the settings' environment layer, which
test helpers strip to keep the developer's own settings out of a run).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENV_VAR = "ENABLE_MYRM_TEST_PROVIDERS"
ON = "1"
# The model-name prefixes of the test providers (scripted.PROVIDER, recorded.PROVIDER,
# replay_summarizers.PROVIDER, each followed by "/").
PREFIXES = ("scripted/", "replay/", "replay-summarizer/")


def enabled(env: Mapping[str, str] | None = None) -> bool:
    return (os.environ if env is None else env).get(ENV_VAR) == ON


def enable_in_this_process() -> None:
    """`myrm replay` serves its recorded turns through `replay/` in its own process."""
    os.environ[ENV_VAR] = ON


def is_test_model(model: str) -> bool:
    return model.startswith(PREFIXES)


def disabled_problem(model: str) -> str | None:
    """One sentence when `model` names a test provider that is off here, else None."""
    if not is_test_model(model) or enabled():
        return None
    return (
        f"{model!r} is a model of a test provider: {switch_sentence(model.split('/', 1)[0])}; "
        "pick a real model with --model or `model` in your config."
    )


def switch_sentence(provider: str) -> str:
    """Short (a provider error's text is clipped when shown): what the switch is and who sets it."""
    return f"{provider}/ exists only with {ENV_VAR}={ON}, set by myrm's tests, bench and `myrm replay`"


def refuse_if_disabled(provider: str, model: str) -> None:
    """Raise the provider's own refusal when the switch is off: litellm's NotFoundError, so the
    call fails once, with the sentence, and is not retried. `model` is the name litellm hands a
    custom provider (with or without its `provider/` prefix)."""
    if enabled():
        return
    from myrm_tui.llm.litellm_module import load_litellm

    full = model if model.startswith(provider + "/") else f"{provider}/{model}"
    raise load_litellm().NotFoundError(switch_sentence(provider), model=full, llm_provider=provider)
