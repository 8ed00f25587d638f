"""The `myrm` command line: flags and help only; each command body lives in cli_commands/.

Why so thin and lazy: `myrm --help` and shell completion must answer instantly, so nothing
heavy (litellm, Textual, the store) is imported until a command actually runs.
Annotations stay evaluated (no `from __future__ import annotations`) because typer reads them.
"""

from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from myrm_tui import __version__
from myrm_tui.cli_commands.output import say
from myrm_tui.settings.schema import SPECS_BY_KEY

if TYPE_CHECKING:  # the pool's module loads only when a run starts a worker
    from myrm_tui.llm.local.client import LocalWorkers

# Built from the settings schema so the choices live in one place; mypy wants literal members.
Approval = Enum("Approval", {c.replace("-", "_"): c for c in SPECS_BY_KEY["approval"].choices}, type=str)  # type: ignore[misc]


# A screenful: `myrm models` without --search is a sample, --search narrows it.
DEFAULT_MODELS_LIMIT = 30
# Click's plain help, not typer's rich panels: the rich panels print a type for every option,
# `<bool>` next to flags such as --json and even --help, which take no value.
HELP_MARKUP = None


class RunOutput(StrEnum):
    text = "text"
    json = "json"
    stream_json = "stream-json"


class ExportFormat(StrEnum):
    md = "md"
    json = "json"


app = typer.Typer(
    name="myrm",
    help="A terminal chat agent whose context engine keeps long sessions in the window, cheap and lossless.",
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=HELP_MARKUP,
)
sessions_app = typer.Typer(
    help="List, read, export and recover the sessions stored in this workspace.",
    no_args_is_help=True,
    rich_markup_mode=HELP_MARKUP,
)
app.add_typer(sessions_app, name="sessions")

MODEL_HELP = "Model to use (litellm name, e.g. anthropic/claude-sonnet-4-5, or local/smollm2)."
APPROVE_HELP = "Which tool calls may run without a yes: ask, auto-edit, yolo, deny."

# Options shared by several commands, declared once (typer reads them from the annotations).
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)]
ApproveOpt = Annotated[Approval | None, typer.Option("--approve", help=APPROVE_HELP)]
ContinueOpt = Annotated[bool, typer.Option("--continue", "-c", help="Use the most recent session.")]
SessionOpt = Annotated[str | None, typer.Option("--session", "-s", help="Use this session (id or prefix).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
TrustOpt = Annotated[
    bool,
    typer.Option(
        "--trust",
        help="Accept this workspace's .myrm/config.toml for "
        "this run only, settings that need trust included "
        "(`myrm trust` remembers it).",
    ),
]


def _named(ctx: typer.Context, parameter: str) -> bool:
    """Whether the user gave `parameter` (on the command line or in the environment), not its
    default: `--output-format text` beside `--json` is a contradiction, the default is not. By
    the source's name: typer ships its own copy of click, whose enum is not `click.core`'s."""
    source = ctx.get_parameter_source(parameter)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _version(value: bool) -> None:
    if value:
        say(f"myrm {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    model: ModelOpt = None,
    session: SessionOpt = None,
    continue_last: ContinueOpt = False,
    approve: ApproveOpt = None,
    trust: TrustOpt = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Without a command: open the full-screen chat in this workspace."""
    if ctx.invoked_subcommand is not None:
        return
    from myrm_tui.cli_commands.tui import tui_command

    raise typer.Exit(
        tui_command(
            model=model,
            session=session,
            continue_last=continue_last,
            approve=approve.value if approve else None,
            trust=trust,
        )
    )


@app.command("run")
def run(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(metavar="PROMPT", help="What to ask; `-` reads it from stdin.")],
    model: ModelOpt = None,
    session: SessionOpt = None,
    continue_last: ContinueOpt = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object at the end instead of streaming the answer.")
    ] = False,
    output_format: Annotated[
        RunOutput,
        typer.Option(
            "--output-format",
            help="text (the answer streams), json (= --json), or stream-json "
            "(one JSON event per line; docs/commands.md).",
        ),
    ] = RunOutput.text,
    approve: ApproveOpt = None,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", min=1, metavar="N", help="Most model calls in this turn.")
    ] = None,
    compact: Annotated[
        bool,
        typer.Option(
            "--compact",
            help="After the turn, summarize everything outside the "
            "latest exchange (originals stay one ctx_expand away).",
        ),
    ] = False,
    trust: TrustOpt = False,
    fork: Annotated[
        bool,
        typer.Option(
            "--fork",
            help="Continue in a new fork of the --session/--continue session (e.g. while another myrm is writing it).",
        ),
    ] = False,
    image: Annotated[
        list[str] | None,
        typer.Option(
            "--image",
            metavar="PATH",
            help="Attach an image (PNG, JPEG, GIF, WebP; "
            "at most 5 MB); repeatable. `@shot.png` in the prompt "
            "attaches too.",
        ),
    ] = None,
) -> None:
    """Run one turn headless: the answer streams to stdout, tool activity to stderr.

    Exit codes: 0 done, 1 the turn failed, 2 usage or configuration error, 130 interrupted.
    """
    try:
        from myrm_tui.cli_commands.run.command import run_command
        from myrm_tui.cli_commands.run.early_worker import pool_of

        code = run_command(
            prompt,
            local_workers=pool_of(ctx.obj),
            model=model,
            session=session,
            continue_last=continue_last,
            json_out=json_out or output_format is RunOutput.json,
            stream_json=output_format is RunOutput.stream_json,
            text_named=output_format is RunOutput.text and _named(ctx, "output_format"),
            approve=approve.value if approve else None,
            max_steps=max_steps,
            compact=compact,
            trust=trust,
            fork=fork,
            images=image or [],
        )
    except KeyboardInterrupt:  # Ctrl+C before the turn started (imports, opening the store)
        code = 130
    raise typer.Exit(code)


@app.command("acp")
def acp(model: ModelOpt = None, approve: ApproveOpt = None, trust: TrustOpt = False) -> None:
    """Serve the Agent Client Protocol on stdin/stdout, for editors such as Zed (docs/acp.md)."""
    from myrm_tui.cli_commands.acp import acp_command

    raise typer.Exit(acp_command(model=model, approve=approve.value if approve else None, trust=trust))


@sessions_app.command("list")
def sessions_list(json_out: JsonOpt = False) -> None:
    """Sessions of this workspace, most recently updated first."""
    from myrm_tui.cli_commands.sessions import list_command

    raise typer.Exit(list_command(json_out))


@sessions_app.command("show")
def sessions_show(session: Annotated[str, typer.Argument(help="Session id or unique prefix.")]) -> None:
    """Print a session's transcript as plain text."""
    from myrm_tui.cli_commands.sessions import show_command

    raise typer.Exit(show_command(session))


@sessions_app.command("recover")
def sessions_recover(
    force: Annotated[
        bool, typer.Option("--force", help="Rebuild even when PRAGMA quick_check finds no damage.")
    ] = False,
) -> None:
    """Copy what a damaged sessions.db still holds into a new one; the old file is kept."""
    from myrm_tui.cli_commands.recover import recover_command

    raise typer.Exit(recover_command(force))


@sessions_app.command("export")
def sessions_export(
    session: Annotated[str, typer.Argument(help="Session id or unique prefix.")],
    fmt: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="md (readable) or json (as stored).")
    ] = ExportFormat.md,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to this file instead of stdout.")] = None,
) -> None:
    """Export a session as Markdown or as the exact stored JSON."""
    from myrm_tui.cli_commands.sessions import export_command

    raise typer.Exit(export_command(session, fmt.value, out))


@app.command("models")
def models(
    search: Annotated[str, typer.Option("--search", help="Only models whose name contains this text.")] = "",
    limit: Annotated[int, typer.Option("--limit", help="Most rows to show.")] = DEFAULT_MODELS_LIMIT,
    json_out: JsonOpt = False,
) -> None:
    """Known models: window, max output, features and price per 1M tokens."""
    from myrm_tui.cli_commands.models import models_command

    raise typer.Exit(models_command(search, limit, json_out))


@app.command("replay")
def replay(
    session_file: Annotated[
        Path,
        typer.Argument(
            help="Recorded session (JSON lines: turns and probes).", exists=True, dir_okay=False, readable=True
        ),
    ],
    window: Annotated[int, typer.Option("--window", min=1024, help="Model window in tokens.")],
    summarizer: Annotated[
        str,
        typer.Option(
            "--summarizer",
            help="Summarizer model: a benchmark fake (null, head, oracle) or a model name; docs/replay-format.md.",
        ),
    ] = "null",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the output lines here instead of stdout.")
    ] = None,
    max_output: Annotated[int, typer.Option("--max-output", min=1, help="Output tokens reserved per call.")] = 4096,
) -> None:
    """Run a recorded session through the real agent; print each turn's exact prompt
    (formats: docs/replay-format.md)."""
    from myrm_tui.cli_commands.replay import replay_command

    raise typer.Exit(replay_command(session_file, window, summarizer, out, max_output))


@app.command("trust")
def trust_workspace(
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Forget every trusted version of this workspace's config file.")
    ] = False,
) -> None:
    """Trust this workspace's .myrm/config.toml as it is now (an edited file asks again)."""
    from myrm_tui.cli_commands.trust import trust_command

    raise typer.Exit(trust_command(revoke=revoke))


@app.command("undo")
def undo(
    session: SessionOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Restore without asking.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Also overwrite files changed since the turn wrote them.")
    ] = False,
) -> None:
    """Restore the files the last turn changed (default: the latest session); a preview first."""
    from myrm_tui.cli_commands.undo import undo_command

    raise typer.Exit(undo_command(session=session, yes=yes, force=force))


@app.command("doctor")
def doctor(
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also load the embedded local model in a child process and decode a test prompt "
            "(10-40 s on two cores).",
        ),
    ] = False,
) -> None:
    """Check config, keys, models, the store and offline tokenizers; exit 1 if myrm cannot run."""
    from myrm_tui.cli_commands.doctor.command import doctor_command

    raise typer.Exit(doctor_command(deep=deep))


def main(early: "LocalWorkers | None" = None) -> None:
    """The typer command line (the `myrm` script enters at entry.main). `early`: the embedded
    model's worker pool `myrm run` started before typer loaded, handed to the run command."""
    from myrm_tui import log_redaction

    log_redaction.install()  # before anything logs: no log line carries a credential
    try:
        app(prog_name="myrm", obj=early)
    except KeyboardInterrupt:  # Ctrl+C before a turn started (e.g. while imports load)
        raise SystemExit(130) from None
