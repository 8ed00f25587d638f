"""`myrm trust`: the user's word that this workspace's config file may apply in full.

Why a command: `myrm run` never asks a question, so headless users need a way to decide once,
after reading the file. What is trusted is the exact content that was read and listed here (by
its sha256); an edited file asks again. `--revoke` forgets the workspace.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.common import EXIT_OK, EXIT_USAGE, CommandContext, bootstrap, err, resolve_model
from myrm_tui.settings.settings import Settings
from myrm_tui.settings.trust import WorkspaceTrust

if TYPE_CHECKING:  # the TUI (Textual) is imported only when the TUI starts
    from myrm_tui.tui.screens.trust import TrustPrompt


def _say(text: str) -> None:
    """stdout, with the file's own text (keys, paths) shown as escapes, never obeyed (output.py)."""
    output.say(text)


def trust_command(*, revoke: bool = False) -> int:
    from myrm_tui.settings import trust as T
    from myrm_tui.settings.paths import user_config_dir

    context = bootstrap(quiet=True)  # the listing below says what matters here
    if context is None:
        return EXIT_USAGE
    user_dir = user_config_dir()
    state = context.loaded.workspace_trust
    assert state is not None  # the loader always describes the workspace file
    if revoke:
        try:
            forgotten = T.revoke_trust(user_dir, context.workspace)
        except T.TrustStoreError as exc:
            err(f"error: {exc}")
            return EXIT_USAGE
        _say(
            f"Forgot {forgotten} trusted version(s) of {state.config_file}; it asks again next time."
            if forgotten
            else f"{context.workspace} was not trusted; nothing to forget."
        )
        return EXIT_OK
    if state.state == T.NO_FILE:
        _say(f"No readable {state.config_file}; nothing to trust.")
        return EXIT_OK
    if state.state == T.NOTHING_TO_TRUST and not state.overridden:
        _say(f"{state.config_file} only sets values that apply without trust; nothing to do.")
        _print_still_ignored(context, state)
        return EXIT_OK
    if state.state == T.TRUSTED:
        _say(
            f"{state.config_file} (sha256 {state.short_digest()}…) is already trusted "
            f"(since {state.trusted_at}); these apply:"
        )
        _print_entries(state)
        _print_still_ignored(context, state)
        return EXIT_OK
    assert state.digest is not None
    try:
        store = T.record_trust(user_dir, context.workspace, state.digest)
    except (T.TrustStoreError, OSError) as exc:
        err(f"error: cannot record the trust decision: {exc}")
        return EXIT_USAGE
    _say(f"Trusted {state.config_file} as it is now (sha256 {state.short_digest()}…); these settings now apply:")
    _print_entries(state)
    _print_still_ignored(context, state)
    _say(f"Recorded in {store}. If the file changes, myrm asks again; `myrm trust --revoke` forgets it.")
    return EXIT_OK


def _print_entries(state: WorkspaceTrust) -> None:
    for entry in state.entries:
        _say(f"  {entry}")
    for entry in state.overridden:
        _say(f"  {entry}  (your environment or flags override it in this shell)")


def _print_still_ignored(context: CommandContext, state: WorkspaceTrust) -> None:
    """What trust does not change: values a workspace file may only tighten, approval keys."""
    notes = [p for p in context.loaded.problems if p.file == str(state.config_file) and p.message != state.notice()]
    if notes:
        _say("Still ignored (trust does not change these):")
        for problem in notes:
            _say(f"  {problem}")


def trust_prompt_for(context: CommandContext, flags: Mapping[str, Any]) -> TrustPrompt | None:
    """The TUI's trust question for this workspace, or None when there is nothing to decide."""
    state = context.loaded.workspace_trust
    if state is None or not state.needs_decision:
        return None
    from myrm_tui.tui.screens.trust import TrustPrompt

    return TrustPrompt(state, lambda choice: settle_choice(choice, context.workspace, flags, state))


def settle_choice(
    choice: str, workspace: Path, flags: Mapping[str, Any], state: WorkspaceTrust, user_dir: Path | None = None
) -> tuple[Settings | None, str]:
    """Act on the dialog's answer: the settings to use from now on (None: unchanged) and a line
    for the user. Only the content that was shown is accepted: if the file changed meanwhile,
    nothing from it applies."""
    from myrm_tui.settings import trust as T
    from myrm_tui.settings.config_files.loader import load_settings
    from myrm_tui.settings.paths import user_config_dir

    if choice not in (T.ONCE, T.ALWAYS) or state.digest is None:
        return None, "The workspace values that need trust stay ignored; `myrm trust` applies them later."
    note = "Trusted for this session; myrm asks again next time."
    if choice == T.ALWAYS:
        try:
            T.record_trust(user_dir or user_config_dir(), workspace, state.digest)
            note = "Trusted; this version of the file will not ask again (`myrm trust --revoke` forgets it)."
        except (T.TrustStoreError, OSError) as exc:
            note = f"Trusted for this session only; the decision could not be saved: {exc}"
    loaded = load_settings(workspace, flags, user_config_dir=user_dir, accept_workspace=state.digest)
    if loaded.workspace_trust is None or not loaded.workspace_trust.applied:
        return None, "The file changed after it was shown, so nothing in it was applied; restart myrm to review it."
    from myrm_tui.cli_commands.filter_setup import with_filters

    # The workspace's output filters ride on the new settings: the session's next turn uses them.
    loaded, _ = with_filters(workspace, loaded, state.digest, user_dir)
    resolved = resolve_model(loaded.settings)
    return (resolved[0] if resolved else loaded.settings), note
