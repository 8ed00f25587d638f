"""Nothing a cloned repository wrote reaches the terminal as a control sequence.

The attack: an untrusted clone puts escape sequences (OSC 52 clipboard write, CSI clear screen,
C1 CSI, a bidi override) in every name the CLI quotes: an unknown setting key, a
`[models."…"]` name, a `[keymap]` id, an `.mcp.json` server name, an output filter's file name
and the workspace folder's own name. `myrm doctor` and `myrm models` printed them raw. Every CLI
line now leaves through cli_commands/output.py (redact, then for_terminal), and the last test
here fails when a CLI module writes to stdout or stderr any other way.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.escape_attacks import ATTACKS, inert
from tests.security.clone_cli import REPO_ROOT, Clone

# Every attack that can stand in a file name (no "/"), and a bare right-to-left override.
PAYLOAD = "".join(text for text in ATTACKS.values() if "/" not in text) + "\u202e"
# What the user must see instead: the sequences, spelled out.
VISIBLE = ("\\x1b]52;c;", "\\x1b[2J", "\\x9b2J", "\\u202e")
CLI_FILES = sorted([REPO_ROOT / "myrm_tui" / "cli.py", REPO_ROOT / "myrm_tui" / "__main__.py"]) + sorted(
    (REPO_ROOT / "myrm_tui" / "cli_commands").glob("*.py")
)
THE_DOOR = REPO_ROOT / "myrm_tui" / "cli_commands" / "output.py"


def q(text: str) -> str:
    """A TOML/JSON quoted string (\\u escapes: TOML forbids raw control characters in strings)."""
    return json.dumps(text)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Clone:
    base = tmp_path_factory.mktemp("clone")
    root = base / f"project{PAYLOAD}"
    (root / ".git").mkdir(parents=True)
    (root / ".myrm" / "filters").mkdir(parents=True)
    (root / ".myrm" / "config.toml").write_text(
        f"{q('theme_' + PAYLOAD)} = 1\n"
        f"[models.{q('evil' + PAYLOAD)}]\ncontext_window = 8000\n"
        f'[keymap]\n{q("chat." + PAYLOAD)} = "ctrl+q"\n',
        encoding="utf-8",
    )
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {f"srv{PAYLOAD}": {"command": "true"}}}))
    (root / ".myrm" / "filters" / f"f{PAYLOAD}.toml").write_text('[filter]\nmatch = "x"\n')
    config = base / "user-config"
    config.mkdir()
    return Clone(root, config)


def assert_inert(result, *must_show: str) -> None:
    for stream in (result.stdout, result.stderr):
        assert inert(stream), [c for c in stream if not inert(c)][:10]
    both = result.stdout + result.stderr
    for visible in must_show:
        assert visible in both, (visible, both[-3000:])


def test_doctor_shows_every_hostile_name_as_escapes(hostile: Clone):
    result = hostile.myrm("doctor")
    assert_inert(result, *VISIBLE)
    for name in ("theme_", "evil", "chat.", "srv", "project"):  # each place is shown, escaped
        assert f"{name}\\x1b]52;c;" in result.stdout, name


@pytest.mark.parametrize("args", [["models", "--search", "evil"], ["models", "--search", "evil", "--json"]])
def test_models_shows_a_hostile_model_name_as_escapes(hostile: Clone, args: list[str]):
    result = hostile.myrm(*args)
    assert result.returncode == 0, result.stderr
    assert "evil" in result.stdout
    assert_inert(result)


@pytest.mark.parametrize("args", [["trust"], ["sessions", "list"], ["run", "hello"]])
def test_trust_sessions_and_run_notices_stay_inert(hostile: Clone, args: list[str]):
    result = hostile.myrm(*args, test_providers=True)
    assert_inert(result, "\\x1b]52;c;")


STREAMS = ("sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__")
# Calls that may be handed a standard stream: `myrm run --json` wraps both to see what was written
# (every write still comes through the door).
MAY_TAKE_A_STREAM = ("_StreamWatch",)


def _writes_outside_the_door(path: Path) -> list[str]:
    """Calls that write to stdout/stderr directly: print(), typer/click echo, sys.std*.write, or a
    standard stream handed to something that will write to it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        handed = [ast.unparse(a) for a in [*node.args, *(k.value for k in node.keywords)]]
        if name not in MAY_TAKE_A_STREAM and any(arg in STREAMS for arg in handed):
            found.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}: {name}(…{STREAMS}…)")
        writes = name in ("print", "typer.echo", "click.echo", "typer.secho", "click.secho") or name.startswith(
            ("sys.stdout.", "sys.stderr.", "sys.__stdout__.", "sys.__stderr__.")
        )
        if writes and not name.endswith((".flush", ".isatty", ".fileno")):
            found.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}: {name}(…)")
    return found


def test_no_cli_module_writes_around_the_door():
    """A new print() in a CLI module would skip redaction and escaping: use output.say/err."""
    assert THE_DOOR in CLI_FILES
    found = [line for path in CLI_FILES if path != THE_DOOR for line in _writes_outside_the_door(path)]
    assert found == []
