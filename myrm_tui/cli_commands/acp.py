"""`myrm acp`: serve the Agent Client Protocol on stdin/stdout for an editor (myrm_tui/acp/).

The workspace is the one holding the folder the editor names in its first session/new (an editor
may start the process anywhere), settled exactly as `myrm run` settles it: its settings (a
repository's config only when trusted, or with --trust for this process), the model, its key,
and the store. What would stop a run does not stop the server (an editor shows little of a
process that exits at once): it is the error of that session/new, so the editor shows the
sentence. stdout belongs to the protocol; notes go to stderr, which editors keep as the agent's
log.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from myrm_tui.cli_commands.common import (
    EXIT_OK,
    bootstrap,
    built_in_model,
    err,
    model_problem,
    onboarding_message,
    open_store,
    resolve_model,
    with_value,
)

if TYPE_CHECKING:
    from myrm_tui.acp.server import Workspace
    from myrm_tui.mcp.manager import McpManager
    from myrm_tui.settings.sections.mcp_servers import McpServerConfig
    from myrm_tui.settings.settings import Settings


def acp_command(*, model: str | None, approve: str | None, trust: bool) -> int:
    from myrm_tui.acp.server import serve

    flags = {"model": model, "approval": approve}
    asyncio.run(serve(lambda cwd: _open_workspace(cwd, flags, trust)))
    return EXIT_OK


def _open_workspace(cwd: Path, flags: dict[str, str | None], trust: bool) -> Workspace | str:
    """The workspace holding `cwd` (the folder the editor names in session/new), settled as `myrm
    run` settles it, or the sentence that says why sessions cannot start there. The process
    moves into it first: settings, hooks and tools read the workspace from the current folder,
    exactly as when `myrm` is started there."""
    from myrm_tui.acp.server import Workspace
    from myrm_tui.settings.trust import ACCEPT_ANY
    from myrm_tui.store.workspace import find_workspace_root

    try:
        os.chdir(find_workspace_root(cwd))
    except OSError as exc:
        return f"cannot work in {cwd}: {exc.strerror or exc}"
    context = bootstrap(flags, accept_workspace=ACCEPT_ANY if trust else None)
    if context is None:
        return "a flag of `myrm acp` is invalid (the agent's log, stderr, says which)"
    workspace_trust = context.loaded.workspace_trust
    if workspace_trust is not None and workspace_trust.needs_decision:
        return workspace_trust.run_refusal()  # nobody can answer the trust dialog here either
    resolved = resolve_model(context.settings)
    if resolved is None:
        return onboarding_message()
    settings = resolved[0]
    problem = _model_refusal(settings, context.workspace)
    if problem is not None:
        return problem
    store = open_store(context.workspace)
    if store is None:
        return f"cannot open the session store in {context.workspace / '.myrm'} (the agent's log, stderr, says why)"
    loaded = context.settings
    return Workspace(
        root=context.workspace,
        settings=settings,
        store=store,
        settings_for_session=lambda stored: _session_settings(loaded, settings, stored),
        mcp_for=lambda chosen, editors: _mcp_servers(chosen, context.workspace, editors),
    )


def _session_settings(loaded: Settings, settings: Settings, session_model: str | None) -> Settings:
    """A loaded session keeps its own model unless this launch named one, or the user could not
    have chosen it (settings.model_choice: a stored model is data from `.myrm/sessions.db`)."""
    from myrm_tui.settings.model_choice import choose_model

    chosen = choose_model(loaded, session_model, fallback=lambda: settings.model or None, built_in=built_in_model)
    if chosen is not None and chosen.notice:
        err(f"note: {chosen.notice}")
    if chosen is None or chosen.model == settings.model:
        return settings
    return with_value(settings, "model", chosen.model, chosen.source)


def _model_refusal(settings: Settings, workspace: Path) -> str | None:
    """What `myrm run` refuses before a turn (an unknown model, a missing key, a window too small
    for the fixed prompt), in one sentence."""
    from myrm_tui.agent.setup.window_check import window_problem
    from myrm_tui.llm.models.check import check_model

    missing = check_model(settings.model, settings.models, settings.api_base or None).key_problem()
    return model_problem(settings) or missing or window_problem(settings, workspace)


def _mcp_servers(settings: Settings, workspace: Path, editors: Mapping[str, McpServerConfig]) -> McpManager | None:
    """The session's MCP servers: myrm's configured ones and those the editor passed (whose names
    acp/client_mcp.py kept apart); None without any, so the SDK is never imported."""
    if not settings.mcp_servers and not editors:
        return None
    from myrm_tui.mcp.manager import McpManager

    return McpManager(
        {**editors, **settings.mcp_servers},
        workspace=workspace,
        startup_timeout=float(settings.mcp_startup_timeout),
        tool_timeout=float(settings.mcp_tool_timeout),
    )
