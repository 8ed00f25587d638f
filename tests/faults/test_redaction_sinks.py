"""Every sink of `myrm_tui.sinks.SINKS`, driven through its real code path with every secret of
the corpus: 0 leaks; and every near-miss comes out verbatim.

A driver puts a secret where it really arrives (a user message, a bash command, a failing tool
output, a session note, a written file, a setting, a provider error, a log call) in a real
store, runs the code that makes the copy (compaction, footer, marker, export, doctor, `run`'s
stderr, classify, logging), and returns what left. Each secret is tagged, and the tag must come
out too: a sink that dropped the text altogether would otherwise pass without redacting
anything.

Before this suite, notes and commands went verbatim into summary footers, markers and
`context_synthetic`; `/export` and the sessions screen wrote raw Markdown; doctor printed
`api_base` with its password; `run` echoed tool arguments as given.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui import log_redaction, sinks
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.redact import redact
from myrm_tui.store import Store
from tests.faults.secret_corpus import NearMiss, Secret, corpus, near_misses, public_key_material
from tests.hypothesis_profiles import examples

CORPUS = corpus()
NEAR = near_misses() + public_key_material()
MODEL_FOR_TOKENS = "gpt-4o"
WINDOW_TOKENS = 16_384
FILLER_TURNS = 8  # ~2,000 tokens: more than the fresh tail of WINDOW_TOKENS holds


class World:
    """One real store shared by the suite: one session per carried text, compacted once (the
    copies every sink makes are read from it), and a scratch folder per driver call."""

    def __init__(self, root: Path, model: str):
        self.root = root
        self.model = model
        self.workspace = root / "ws"
        (self.workspace / ".git").mkdir(parents=True)
        self.store = Store.open(self.workspace)
        self._sessions: dict[tuple[str, str], str] = {}
        self._scratch = iter(range(1_000_000))

    def scratch(self) -> Path:
        path = self.root / f"scratch-{next(self._scratch)}"
        path.mkdir()
        return path

    def session(self, tag: str, text: str) -> str:
        """The compacted session whose old turn carries `text` everywhere it usually goes."""
        key = (tag, text)
        if key not in self._sessions:
            self._sessions[key] = self._carrier(tag, text)
        return self._sessions[key]

    def rows(self, tag: str, text: str):
        return self.store.messages(self.session(tag, text))

    def masked(self, tag: str, text: str) -> str:
        """A session whose old, large tool output (first line: `text`, from a command carrying
        `text`) the "full" tier masks behind a placeholder."""
        key = ("masked " + tag, text)
        if key not in self._sessions:
            self._sessions[key] = self._masked(tag, text)
        return self._sessions[key]

    def _add(self, session_id: str, message: dict) -> None:
        self.store.append_message(session_id, message, count_message_tokens(message, MODEL_FOR_TOKENS))

    def _fillers(self, session_id: str) -> None:
        for i in range(FILLER_TURNS):
            self._add(session_id, {"role": "user", "content": f"filler question {i} " + "lorem ipsum " * 60})
            self._add(session_id, {"role": "assistant", "content": f"filler answer {i} " + "dolor sit " * 60})

    def _compact(self, session_id: str, tier: str) -> None:
        """The agent's real compaction (extractive summaries, no model call)."""
        from myrm_tui.agent.agent import Agent
        from myrm_tui.settings.settings import Settings

        agent = Agent(
            store=self.store,
            session_id=session_id,
            workspace=self.workspace,
            settings=Settings().with_values(model=self.model),
        )
        event = agent.engine.compact(agent.turn_input(trigger="manual"), tier=tier)
        assert event is not None, "the carrier turn must leave the prompt"

    def _masked(self, tag: str, text: str) -> str:
        session_id = self.store.create_session(model=self.model, title="masked").id
        self._add(session_id, {"role": "user", "content": "start: look at the service"})
        self._add(session_id, {"role": "assistant", "content": "ok"})
        self._add(session_id, {"role": "user", "content": "run it"})
        self._add(
            session_id,
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "m1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": f"{tag} {text}"})},
                    }
                ],
            },
        )
        noise = "\n".join(f"line {i} of the service log" for i in range(600))
        self._add(
            session_id, {"role": "tool", "tool_call_id": "m1", "name": "bash", "content": f"{tag} {text}\n{noise}"}
        )
        self._fillers(session_id)
        self._compact(session_id, "full")
        return session_id

    def _carrier(self, tag: str, text: str) -> str:
        """anchor turn, then the turn carrying `text` (ask, bash command, note, file write,
        failing tool output, assistant text), then filler turns that keep it out of the fresh
        tail; then compaction that removes the turn."""
        store = self.store
        session_id = store.create_session(model=self.model, title=f"{tag} {text}").id
        (self.workspace / "conf.txt").write_text(f"{tag} {text}\n", encoding="utf-8")

        def add(message: dict) -> None:
            self._add(session_id, message)

        def call(call_id: str, name: str, args: dict) -> dict:
            return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}

        add({"role": "user", "content": "start: set up the deployment"})
        add({"role": "assistant", "content": "ok"})
        add({"role": "user", "content": f"{tag} {text}"})
        add(
            {
                "role": "assistant",
                "content": f"{tag} {text}",
                "tool_calls": [
                    call("c1", "bash", {"command": f"{tag} {text}"}),
                    call("c2", "session_note", {"text": f"{tag} {text}"}),
                    call("c3", "file_write", {"path": "conf.txt", "content": f"{tag} {text}\n"}),
                ],
            }
        )
        add({"role": "tool", "tool_call_id": "c1", "name": "bash", "content": f"Error: {tag} {text}"})
        add({"role": "tool", "tool_call_id": "c2", "name": "session_note", "content": "noted"})
        add({"role": "tool", "tool_call_id": "c3", "name": "file_write", "content": "wrote conf.txt"})
        self._fillers(session_id)
        self._compact(session_id, "emergency")
        return session_id


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("sinks")
    # A scripted model whose window is small enough that the filler turns fill the fresh tail
    # (10 % of it) and large enough that the summary area holds whole nodes, not one-line briefs.
    script = root / "script.json"
    script.write_text(json.dumps({"turns": [], "context_window": WINDOW_TOKENS}), encoding="utf-8")
    w = World(root, f"scripted/{script}")
    yield w
    w.store.close()


def _texts(value: object) -> str:
    """Every string inside a stored summary, one per line (what a prompt would show)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_texts(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return "\n".join(_texts(v) for v in value)
    return ""


# -- drivers: (world, tag, text) -> every output of the sink ---------------------------------------


def drive_summary_body(world: World, tag: str, text: str) -> list[str]:
    """Extractive nodes made by compaction, and a node written by a model that copied the secret
    into its summary (client.summarize through the scripted provider)."""
    from myrm_tui.context.summary.client import stream_call, summarize
    from myrm_tui.context.summary.schema import StructuredSummary

    extractive = [_texts(n["content"]) for n in world.store.summaries(world.session(tag, text))]
    flat = " ".join(text.split())
    written = StructuredSummary(
        user_goal=f"{tag} {text}",
        active_task=f"{tag} {text}",
        key_findings=[f"{tag} {flat}"],
        next_steps=[f"{tag} use {text}"],
    )
    script = world.scratch() / "summarizer.json"
    script.write_text(json.dumps({"turns": [{"text": written.to_json()}] * 3}), encoding="utf-8")
    # A summary must be smaller than its chunk; the reply answers the ask, so the summary need
    # not carry it as open (the auditor wants an open ask kept, and this one is mostly a key).
    messages = [
        {"role": "user", "content": f"{tag} {text} " + "context " * 3000},
        {"role": "assistant", "content": "Noted."},
    ]
    outcome = asyncio.run(
        summarize(
            messages,
            model=f"scripted/{script}",
            window=32_000,
            call=stream_call(f"scripted/{script}"),
            min_retention=0.0,
        )
    )
    assert not outcome.summary.fallback, outcome.failure
    return [*extractive, _texts(outcome.summary.to_dict())]


def drive_summary_footer(world: World, tag: str, text: str) -> list[str]:
    from myrm_tui.context.compaction.node_footer import leaf_footer
    from myrm_tui.context.summary.footer import footer_from_records

    rows = world.rows(tag, text)
    return [footer_from_records(rows).render(), leaf_footer(rows)]


def drive_session_note(world: World, tag: str, text: str) -> list[str]:
    from myrm_tui.context.compaction.markers import session_notes

    return session_notes(world.rows(tag, text))


def drive_omission_marker(world: World, tag: str, text: str) -> list[str]:
    from myrm_tui.context.compaction.markers import omission_marker

    return [omission_marker(world.rows(tag, text)[2:8])]  # the carrier turn, as a marker covers it


def drive_view_placeholder(world: World, tag: str, text: str) -> list[str]:
    """The placeholders `context_views` keeps for a masked output: tool, argument, first line."""
    views, _synthetic = world.store.load_context_views(world.masked(tag, text))
    masked = [str(v["message"].get("content")) for v in views if v["kind"] == "masked"]
    assert masked, "the old output must be masked"
    return masked


def drive_synthetic_row(world: World, tag: str, text: str) -> list[str]:
    """What `context_synthetic` holds after compaction: the summary view and the reread."""
    _views, synthetic = world.store.load_context_views(world.session(tag, text))
    assert {s["kind"] for s in synthetic} >= {"summary", "reread"}
    return [s["message"]["content"] for s in synthetic]


def drive_objective_note(world: World, tag: str, text: str) -> list[str]:
    """The anchor restated at the end of the prompt after a compaction, the anchor carrying `text`."""
    from dataclasses import replace

    from myrm_tui.agent.agent import Agent
    from myrm_tui.settings.settings import Settings

    session_id = world.store.create_session(model=world.model, title="objective").id
    world._add(session_id, {"role": "user", "content": f"start: {tag} {text} then deploy"})
    world._add(session_id, {"role": "assistant", "content": "ok"})
    world._fillers(session_id)
    world._compact(session_id, "emergency")
    agent = Agent(
        store=world.store,
        session_id=session_id,
        workspace=world.workspace,
        settings=Settings().with_values(model=world.model),
    )
    prompt = agent.engine.assemble(replace(agent.turn_input(), restate_objective=True))
    note = prompt.messages[-1]["content"]
    assert "session's objective" in note, "the compacted session's prompt must end with the objective note"
    return [note]


def drive_session_title(world: World, tag: str, text: str) -> list[str]:
    """Titles made by `myrm run` and by the TUI from a first prompt."""
    from myrm_tui.cli_commands.run.command import _choose_session
    from myrm_tui.settings.settings import Settings
    from myrm_tui.tui.session.chat_session import ChatSession

    prompt = f"{tag} {text}"
    run_id = _choose_session(world.store, None, False, world.model, prompt)
    tui_id = ChatSession(world.store, Settings(), world.workspace, model=world.model).ensure_session(prompt).id
    return [world.store.get_session(run_id).title, world.store.get_session(tui_id).title]


def drive_export(world: World, tag: str, text: str) -> list[str]:
    """`myrm sessions export` (md, json) and the TUI's /export and sessions screen; the
    session's title carries the text too (a user may name a session anything)."""
    from myrm_tui.transcripts.export import export_session
    from myrm_tui.tui.screens.sessions import export_markdown

    session_id = world.session(tag, text)
    record = world.store.get_session(session_id)
    rows = world.store.messages(session_id)
    tui = export_markdown(world.store, session_id, world.scratch() / "export.md").read_text(encoding="utf-8")
    return [export_session(record, rows, "md").text, export_session(record, rows, "json").text, tui]


def drive_doctor(world: World, tag: str, text: str) -> list[str]:
    from myrm_tui.cli_commands.doctor.command import settings_lines
    from myrm_tui.settings.settings import Settings

    base = Settings().with_values(model=world.model, api_base=f"{tag} {text}")
    with_models = dataclasses.replace(
        base, models={"openai/custom": {"api_base": f"{tag} {text}", "context_window": 8192}}
    )
    return ["\n".join(settings_lines(with_models))]


def drive_cli_output(world: World, tag: str, text: str) -> list[str]:
    """The CLI's one door (cli_commands/output.py): stdout, stderr lines, a question, a JSON listing."""
    from myrm_tui.cli_commands import output

    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        output.say(f"{tag} {text}")
        output.err(f"warning: {tag} {text}")
        output.ask(f"{tag} {text}?")
        output.json_out([{"title": f"{tag} {text}"}])
    return [stdout.getvalue(), stderr.getvalue()]


def drive_run_echo(world: World, tag: str, text: str) -> list[str]:
    """`myrm run`'s stderr lines for a tool call and its failure, for each argument shape."""
    from myrm_tui.agent.events import ToolFinished, ToolStarted
    from myrm_tui.cli_commands.run.command import RunReport

    report = RunReport(session_id="s", model=world.model, stream_text=False)
    stderr = io.StringIO()
    with redirect_stderr(stderr):
        report.handle(ToolStarted("c1", "bash", {"command": f"{tag} {text}"}))
        report.handle(ToolFinished("c1", "bash", False, f"Error: {tag} {text}", 0.1, 1, status="error"))
        report.handle(ToolStarted("c2", "file_write", {"content": f"{tag} {text}"}))
    return stderr.getvalue().splitlines()


def drive_provider_error(world: World, tag: str, text: str) -> list[str]:
    """A provider's error text quoted in a typed error, and an endpoint quoted in one."""
    from litellm.exceptions import BadRequestError

    from myrm_tui.llm.classify import classify

    bad_request = BadRequestError(f"{tag} {text}", model="openai/x", llm_provider="openai")
    unreachable = ConnectionRefusedError(111, "Connect call failed")
    return [
        classify(bad_request, "openai/x").user_text(),
        classify(unreachable, "openai/x", api_base=f"{tag} {text}").user_text(),
    ]


def drive_log(world: World, tag: str, text: str) -> list[str]:
    """Records of myrm's and litellm's loggers (message, arguments, traceback) and log files."""
    from myrm_tui.log_files import append_log

    log_redaction.install()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    loggers = [logging.getLogger("myrm_tui.faults"), logging.getLogger("LiteLLM")]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
    try:
        loggers[0].warning("%s", f"{tag} {text}")
        loggers[1].error(f"{tag} {text}")
        try:
            raise RuntimeError(f"{tag} {text}")
        except RuntimeError:
            loggers[0].exception("failed")
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
            logger.propagate = True
    folder = world.scratch()
    os.environ["MYRM_LOG_DIR"] = str(folder)
    try:
        path = append_log("faults.log", f"{tag} {text}")
    finally:
        del os.environ["MYRM_LOG_DIR"]
    assert path is not None
    return [stream.getvalue(), path.read_text(encoding="utf-8")]


DRIVERS: dict[str, Callable[[World, str, str], list[str]]] = {
    "summary_body": drive_summary_body,
    "summary_footer": drive_summary_footer,
    "session_note": drive_session_note,
    "omission_marker": drive_omission_marker,
    "view_placeholder": drive_view_placeholder,
    "synthetic_row": drive_synthetic_row,
    "objective_note": drive_objective_note,
    "session_title": drive_session_title,
    "export": drive_export,
    "doctor": drive_doctor,
    "cli_output": drive_cli_output,
    "run_echo": drive_run_echo,
    "provider_error": drive_provider_error,
    "log": drive_log,
}


def test_every_sink_has_a_driver():
    """A sink added to the list without a test fails here."""
    assert set(DRIVERS) == {s.name for s in sinks.SINKS}
    assert len({s.name for s in sinks.SINKS}) == len(sinks.SINKS)


@pytest.mark.slow
@pytest.mark.parametrize("sink", [s.name for s in sinks.SINKS])
def test_no_secret_of_the_corpus_leaks_through_the_sink(sink: str, world: World):
    leaks: dict[str, list[str]] = {}
    missing: list[str] = []
    for item in CORPUS:
        tag = f"tag-{item.name}"
        outputs = DRIVERS[sink](world, tag, item.text)
        assert outputs, sink
        for output in outputs:
            found = item.leaks_in(output)
            if found:
                leaks.setdefault(item.name, []).extend(found[:2])
            if tag not in output:
                missing.append(f"{item.name}: {output[:120]!r}")
    assert not leaks, f"{sink} leaked {len(leaks)}/{len(CORPUS)} formats: {leaks}"
    assert not missing, f"{sink} dropped the carrier instead of redacting it: {missing[:3]}"


@pytest.mark.slow
@pytest.mark.parametrize("sink", [s.name for s in sinks.SINKS])
def test_near_misses_come_out_of_the_sink_unredacted(sink: str, world: World):
    """Nothing is redacted, and the near-miss is there verbatim unless the sink clipped the
    line it is on (a footer line, a title, a summary field have caps of their own)."""
    eaten = []
    for item in NEAR:
        for output in DRIVERS[sink](world, "nm", item.text):
            shown = (item.keep, json.dumps(item.keep)[1:-1])  # as written, or escaped inside JSON
            if "[REDACTED:" in output or (not any(k in output for k in shown) and "…" not in output):
                eaten.append(f"{item.name}: {output[:160]!r}")
    assert not eaten, f"{sink} redacted what a coding agent needs: {eaten}"


def test_notes_stay_verbatim_in_their_own_message(world: World):
    """The model wrote its notes for itself: redaction happens when a note leaves its call."""
    item = next(s for s in CORPUS if s.name == "anthropic_key")
    rows = world.rows("note", item.text)
    carrier = next(r for r in rows if r.role == "assistant" and r.message.get("tool_calls"))
    arguments = json.loads(carrier.message["tool_calls"][1]["function"]["arguments"])
    assert arguments["text"] == f"note {item.text}"
    assert rows[2].message["content"] == f"note {item.text}", "the stored log is lossless"


# -- the redactor itself: properties over the corpus ---------------------------------------------

SEPARATORS = st.sampled_from([" ", "\n", "\t", " | ", "\n\n", ": "])
PROSE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ.,!?()0123456789", max_size=60)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CORPUS), PROSE, PROSE, SEPARATORS, SEPARATORS)
def test_a_secret_is_caught_whatever_prose_surrounds_it(item: Secret, before: str, after: str, left: str, right: str):
    out = redact(before + left + item.text + right + after).text
    assert not item.leaks_in(out)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(st.sampled_from([s.text for s in CORPUS]), st.sampled_from([n.text for n in NEAR]), PROSE),
        min_size=1,
        max_size=6,
    ),
    SEPARATORS,
)
def test_redaction_is_idempotent(pieces: list[str], separator: str):
    """Sinks redact what earlier sinks already redacted (a note in a footer in a summary in an
    export): a second pass must change nothing, or cached prompts would drift."""
    once = redact(separator.join(pieces)).text
    assert redact(once).text == once


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(NEAR), PROSE, SEPARATORS)
def test_a_near_miss_survives_next_to_prose(item: NearMiss, prose: str, separator: str):
    assert item.keep in redact(prose + separator + item.text).text


def test_corpus_covers_the_formats_named_in_the_issue():
    names = {s.name for s in CORPUS}
    for required in (
        "url_password_with_at",
        "lowercase_db_password",
        "mysql_p",
        "pem_rsa_pkcs1_no_end",
        "pem_rsa_pkcs1_no_markers",
        "slack_webhook",
        "azure_account_key",
        "yaml_token",
        "url_query_api_key",
    ):
        assert required in names
    assert len(CORPUS) >= 60


if __name__ == "__main__":  # figures for the closing note: formats × sinks
    print(f"{len(CORPUS)} formats × {len(sinks.SINKS)} sinks; near-misses {len(NEAR)}", file=sys.stderr)
