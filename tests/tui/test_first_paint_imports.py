"""The first frame needs neither the agent's turn loop nor the context engine: importing the app
module must not load them (they load with the warm-up or on first use; docs/tui-benchmarks.md,
"Issue 17"). After the first frame, the warm-up, the first message and the idle keep-alive load
only what the selected model's calls use: never litellm for the user's own OpenAI-compatible
server or the embedded model (issue 27). Not a timing: which modules are in `sys.modules`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]  # the checkout under test, not an installed copy
DEFERRED = ("myrm_tui.agent.agent", "myrm_tui.agent.tools", "myrm_tui.context.engine", "myrm_tui.agent.undo.rewind")


def test_app_module_does_not_import_the_agent_or_the_engine():
    code = f"import sys, myrm_tui.tui.app; print(','.join(m for m in {DEFERRED!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_agent_package_still_exports_agent_on_use():
    from myrm_tui import agent
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.session_runtime import SessionRuntime

    assert agent.Agent is Agent and agent.SessionRuntime is SessionRuntime


# What the `myrm` launch must not have loaded when it starts the app: the store and SQLite, the
# built-in output filters, the LLM layer and litellm (the unknown-model check runs behind the
# first frame), tomlkit (only for saving settings) and the shell lexer (only for Bash rules).
NOT_BEFORE_THE_APP = (
    "sqlite3",
    "myrm_tui.store.store",
    "myrm_tui.context.filters.smart",
    "myrm_tui.llm.stream",
    "litellm",
    "tomlkit",
    "myrm_tui.shell_lex",
)

LAUNCH = """
import sys
import myrm_tui.tui.app as app_module
from myrm_tui.cli_commands.plain_launch import launch_if_plain

def fake_run_app(**kwargs):
    print("loaded:" + ",".join(m for m in {modules!r} if m in sys.modules))
    return app_module.AppOutcome(resumable=None, refusal={refusal!r})

app_module.run_app = fake_run_app
raise SystemExit(launch_if_plain(["--model", {model!r}]))
"""


def _launch(tmp_path, model: str, refusal: str | None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "MYRM_CONFIG_DIR": str(tmp_path / "config"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "MYRM_NO_SUPERVISOR": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])),
    }
    code = LAUNCH.format(modules=NOT_BEFORE_THE_APP, refusal=refusal, model=model)
    work = tmp_path / "ws"
    work.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=work)


def test_the_launch_starts_the_app_before_loading_the_store_the_filters_or_the_llm_layer(tmp_path):
    result = _launch(tmp_path, "anthropic/claude-sonnet-4-5", None)  # a registry name: checked after paint
    assert result.returncode == 0, result.stderr
    assert "loaded:\n" in result.stdout, result.stdout


def test_a_model_refused_behind_the_first_frame_exits_2_with_one_error_line(tmp_path):
    result = _launch(tmp_path, "gpt-9", "Unknown model 'gpt-9': not in the model registry.")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["error: Unknown model 'gpt-9': not in the model registry."], result.stderr
    assert not (tmp_path / "ws" / ".myrm").exists(), "no store was created"


# The chat as the `myrm` launch runs it (the first frame first, the real settings loader), with
# the opt-in preheat and keep-alive on, against the user's own OpenAI-compatible server. It prints
# which of HEAVY each stage had loaded, and what the first message itself imported (on the UI loop).
HEAVY = ("litellm", "tiktoken", "httpx", "httpcore")
OWN_SERVER_CHAT = """
import asyncio, json, sys, time
from pathlib import Path

from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.store import event_kinds
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.session.cache_keepalive import CacheKeepAlive
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage


async def until(pilot, predicate, what):
    deadline = time.monotonic() + 120
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        await pilot.pause(0.02)


def loaded():
    return sorted(m for m in {heavy!r} if m in sys.modules)


async def main(workspace):
    app = MyrmApp(workspace, load_settings(workspace).settings, watch_themes=False, paint_first=True)
    out = {{}}
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: app.chat_opened and app.chat_screen.ready.is_set(), "the warm-up")
        await until(pilot, lambda: app.chat.preheat_probe is not None, "the preheat at open")
        out["warm"] = loaded()
        before = {{m.split(".")[0] for m in sys.modules}}
        screen = app.chat_screen
        screen.send_message("hi", draft=None)
        await until(pilot, lambda: screen.turns_ended == 1, "the first reply")
        out["first_imported"] = sorted({{m.split(".")[0] for m in sys.modules}} - before)
        out["reply"] = [r.text for r in screen.query(AssistantMessage)]
        out["first"] = loaded()
        agent, driver = app.chat.current_agent, CacheKeepAlive(app)
        usage = lambda: app.chat.store.events(app.chat.session_id, kind=event_kinds.USAGE)
        purposes = lambda: [e.data.get("purpose") for e in usage()]
        real_clock = agent.engine.clock
        idle = [24 * 3600.0]  # a day idle: a keep-alive is due
        agent.engine.clock = lambda: real_clock() + idle[0]
        # Poll as the app's timer does, until a keep-alive went out: a poll while the turn's
        # after-work still runs (the agent busy, a compaction) sends nothing, and when the turn's
        # upkeep compacted after its last request the first probe is a preheat, which restarts
        # the cache's clock: another idle day passes before the next poll.
        deadline = time.monotonic() + 120
        while "cache_keepalive" not in purposes():
            assert time.monotonic() < deadline, "timed out waiting for the idle driver's probe: " + repr(
                dict(
                    purposes=purposes(),
                    turn_running=screen.turn_running,
                    compacting=screen.compacting,
                    busy=agent.busy,
                    next_agent_is_agent=app.chat.next_agent() is agent,
                    sending=getattr(driver._warmth, "_sending", None),
                    workers=[(w.name, w.state.name) for w in app.workers],
                )
            )
            sent = len(purposes())
            driver._poll()
            settle = time.monotonic() + 2
            while len(purposes()) == sent and time.monotonic() < settle:
                await pilot.pause(0.05)
            if len(purposes()) > sent:
                idle[0] += 24 * 3600.0
        out["purposes"] = purposes()
        out["kept"] = loaded()
    print("RESULT " + json.dumps(out))


asyncio.run(main(Path(sys.argv[1])))
"""


@pytest.mark.slow
def test_the_chat_with_the_users_own_server_never_imports_litellm(tmp_path):
    """Issue 27: the warm-up imported litellm (6-8 s on 2 cores) for every model, and the first
    message waits for the warm-up, so the first message to a server on loopback waited for an
    import it never used. The warm-up, the preheat at open, the first message and the idle
    keep-alive now go through the OpenAI-compatible client only; the warm-up also loads what the
    first message would otherwise load on the UI loop (the tokenizer, httpx)."""
    from tests.faults.fake_openai_server import answer, running_fake_openai

    with running_fake_openai() as server:
        server.default = answer("Hello from ", "your server.")
        out = _run_chat(
            tmp_path,
            OWN_SERVER_CHAT,
            'model = "openai/llama3"\ncache_preheat = true\ncache_keepalive = true\n\n'
            f'[models."openai/llama3"]\napi_base = "{server.api_base}"\ncontext_window = 8192\n'
            "supports_prompt_caching = true\n",
        )
        assert out["reply"] == ["Hello from your server."]
        # Open, the message, (a preheat when the turn's upkeep compacted after it,) idle.
        assert out["purposes"] in (
            ["cache_preheat", None, "cache_keepalive"],
            ["cache_preheat", None, "cache_preheat", "cache_keepalive"],
        ), out["purposes"]
        assert len(server.requests) >= 3  # the preheat, the message, the keep-alive: all to this server
    assert "litellm" not in out["warm"] + out["first"] + out["kept"], out
    assert out["warm"] == ["httpcore", "httpx", "tiktoken"], "the warm-up loads what the first call needs"
    assert not set(out["first_imported"]) & set(HEAVY), out["first_imported"]


# The warm-up alone (no message: the embedded model's worker starts with the first call).
WARM_UP_ONLY = """
import asyncio, json, sys, time
from pathlib import Path

from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.tui.app import MyrmApp


async def main(workspace):
    app = MyrmApp(workspace, load_settings(workspace).settings, watch_themes=False, paint_first=True)
    async with app.run_test(size=(110, 40)) as pilot:
        deadline = time.monotonic() + 120
        while not (app.chat_opened and app.chat_screen.ready.is_set()):
            assert time.monotonic() < deadline, "timed out waiting for the warm-up"
            await pilot.pause(0.02)
        out = {{"warm": sorted(m for m in {heavy!r} if m in sys.modules), "model": app.chat.model}}
    print("RESULT " + json.dumps(out))


asyncio.run(main(Path(sys.argv[1])))
"""


def test_the_warm_up_for_the_embedded_model_does_not_import_litellm(tmp_path):
    """`local/smollm2` is called through its worker's own client (llm/local/provider.py), never
    litellm: the warm-up (10 s with litellm on a loaded 2-core box, 1 s without) loads the
    tokenizer only."""
    out = _run_chat(tmp_path, WARM_UP_ONLY, 'model = "local/smollm2"\n')
    assert out["model"] == "local/smollm2"
    assert out["warm"] == ["tiktoken"], out


def _run_chat(tmp_path: Path, child: str, config_toml: str) -> dict:
    """Run `child` (formatted with HEAVY) in a fresh interpreter, in a new workspace whose user
    config is `config_toml`; returns the JSON it printed after `RESULT `."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(config_toml, encoding="utf-8")
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env.update(
        {
            "HOME": str(tmp_path),
            "MYRM_CONFIG_DIR": str(config),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "MYRM_NO_SUPERVISOR": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH", ""), str(REPO_ROOT)])),
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", child.format(heavy=HEAVY), str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(json.loads(result.stdout.rsplit("RESULT ", 1)[-1]))
