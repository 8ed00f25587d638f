"""`myrm` with no command: resolve settings and the session, then hand over to the TUI."""

from __future__ import annotations

from myrm_tui.cli_commands.common import (
    EXIT_CRASH,
    EXIT_OK,
    EXIT_USAGE,
    bootstrap,
    config_notices,
    err,
    model_problem,
    onboarding_message,
    open_store,
    resolve_model,
)
from myrm_tui.cli_commands.output import say


def tui_command(
    *, model: str | None, session: str | None, continue_last: bool, approve: str | None, trust: bool = False
) -> int:
    if session and continue_last:
        err("error: use either --session ID or --continue, not both.")
        return EXIT_USAGE
    from myrm_tui.settings.trust import ACCEPT_ANY

    flags = {"model": model, "approval": approve}
    context = bootstrap(flags, accept_workspace=ACCEPT_ANY if trust else None)
    if context is None:
        return EXIT_USAGE
    resolved = resolve_model(context.settings)
    if resolved is None:
        err(onboarding_message())
        return EXIT_USAGE
    settings, _source = resolved
    # The unknown-model refusal (exit 2, before any session exists) comes after the first frame:
    # checking a registry name imports litellm, seconds the user would stare at an empty terminal.
    session_id = None
    if session:
        from myrm_tui.store.store import StoreError

        store = open_store(context.workspace)
        if store is None:
            return EXIT_USAGE
        try:
            session_id = store.get_session(session).id  # a prefix becomes the full id here
        except StoreError as exc:
            err(f"error: {exc}")
            return EXIT_USAGE
        finally:
            store.close()
    from myrm_tui.cli_commands.terminal_guard import run_supervised

    def app_main() -> int:
        from myrm_tui.cli_commands.trust import trust_prompt_for
        from myrm_tui.tui.app import run_app
        from myrm_tui.tui.resume_hint import resume_hint

        outcome = run_app(
            workspace=context.workspace,
            settings=settings,
            session_id=session_id,
            continue_last=continue_last,
            trust_prompt=trust_prompt_for(context, flags),
            config_notices=config_notices(context),
            model_check=lambda: model_problem(settings),
        )
        if outcome.refusal is not None:
            err(f"error: {outcome.refusal}")
            return EXIT_USAGE
        hint = resume_hint(outcome.resumable)  # the terminal is back to normal here: the line stays visible
        if outcome.crash is not None:  # a crash never reads as a quit: said on stderr, non-zero exit
            from myrm_tui.tui.crash_report import crash_message

            err(crash_message(outcome.crash, hint))
            return EXIT_CRASH
        if hint:
            say(hint)
        return EXIT_OK

    return run_supervised(app_main)
