"""`myrm` with no command: resolve settings and the session, then hand over to the TUI."""

from __future__ import annotations

from myrm_tui.cli_commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    bootstrap,
    err,
    onboarding_message,
    open_store,
    resolve_model,
)


def tui_command(*, model: str | None, session: str | None, continue_last: bool, approve: str | None) -> int:
    if session and continue_last:
        err("error: use either --session ID or --continue, not both.")
        return EXIT_USAGE
    context = bootstrap({"model": model, "approval": approve})
    if context is None:
        return EXIT_USAGE
    resolved = resolve_model(context.settings)
    if resolved is None:
        err(onboarding_message())
        return EXIT_USAGE
    settings, _source = resolved
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
    from myrm_tui.tui.app import run_app

    run_app(workspace=context.workspace, settings=settings, session_id=session_id, continue_last=continue_last)
    return EXIT_OK
