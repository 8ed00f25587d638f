"""The vaulted-result card: a spilled tool result (and a subagent's spilled answer) shows its
size, handle, what the model got, the hint the model was given, and opens the whole text."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, TextArea

from myrm_tui.context.rows.ingest import spill_marker
from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.tool_output import ToolOutputScreen
from myrm_tui.tui.transcript.vaulted_result import vaulted_result
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from myrm_tui.tui.widgets.blocks.vault_card import VaultCard
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until

LINES = 20_000
REAL_CHARS = sum(len(str(i)) + 1 for i in range(1, LINES + 1))  # `seq 1 20000`, spilled to the vault
HANDLE = "vault://0123456789abcdef"
SPILLED = spill_marker(108_894, 20_000, HANDLE, "log") + "\n1\n2\n3\n4\n5\n6\n[… 19,980 lines …]\n20000"


async def _run_and_open(pilot, app, key: str) -> tuple[VaultCard, ToolBlock, ToolOutputScreen]:
    await type_text(pilot, "count")
    await pilot.press("enter")
    await wait_until(pilot, lambda: not app.chat_screen.turn_running and app.chat_screen.query(VaultCard), what="card")
    card, block = app.chat_screen.query_one(VaultCard), app.chat_screen.query_one(ToolBlock)
    card.focus()
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, ToolOutputScreen), what="viewer")
    viewer = app.screen
    assert isinstance(viewer, ToolOutputScreen)
    await wait_until(pilot, lambda: viewer.loaded is not None, what="output loaded")
    return card, block, viewer


async def test_a_spilled_bash_output_shows_the_card_and_its_key_opens_the_whole_output(workspace, store, script):
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": f"seq 1 {LINES}"}}]}, {"text": "counted"}
    )
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store)
    async with app.run_test(size=SIZE) as pilot:
        card, block, viewer = await _run_and_open(pilot, app, "o")
        stored = store.messages(app.chat.session_id)
        sent = next(r.message["content"] for r in stored if r.message.get("role") == "tool")
        text = card.text()
        assert block.vault_handle is not None
        assert f"{REAL_CHARS:,} chars · {LINES:,} lines" in text and block.vault_handle in text
        assert "model got  " in text and "excerpt" in text
        hint = sent.splitlines()[0].split(" · ", 2)[2].rstrip("]")
        assert f"model hint {hint}" in text and "file_read(" in hint, "the hint the model was given, verbatim"
        assert "\n1\n2\n" in text, "the head of what the model got"
        assert viewer.loaded is not None and viewer.loaded.total_chars == REAL_CHARS
        assert viewer.query_one(TextArea).document.line_count == LINES + 1


@pytest.mark.slow
async def test_the_card_key_is_remappable_and_the_button_opens_too(workspace, store, script):
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": f"seq 1 {LINES}"}}]}, {"text": "ok"}
    )
    settings = Settings(keymap={"vault_card.open_full": "w"}).with_values(model=model, approval="yolo")
    app = MyrmApp(workspace, settings, store=store)
    async with app.run_test(size=SIZE) as pilot:
        card, _, _ = await _run_and_open(pilot, app, "w")
        assert "open full text (w)" in card.text()
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolOutputScreen), what="closed")
        card.query_one("#open-full", Button).press()
        await wait_until(pilot, lambda: isinstance(app.screen, ToolOutputScreen), what="viewer from the button")


def test_only_a_vaulted_result_gets_a_card_and_a_subagent_answer_names_its_size():
    assert vaulted_result("12 passed") is None
    assert vaulted_result("[output 9 chars → log excerpt; no vault available for the rest]\nx") is None
    tool = vaulted_result(SPILLED)
    assert tool is not None and (tool.handle, tool.total_chars, tool.total_lines) == (HANDLE, 108_894, 20_000)
    assert tool.tier == "log excerpt" and tool.hint.startswith(f'file_read("{HANDLE}"') and tool.head == "1\n2\n3\n4"

    from myrm_tui.agent.subagent.handover import Handover
    from myrm_tui.agent.subagent.result import HEAD_CHARS, TAIL_CHARS, distill

    class _Vault:  # the handle only: what goes into it is the vault's own tests' concern
        def put(self, text, suffix=""):
            return HANDLE

    answer = "".join(f"line {i}\n" for i in range(3_000))
    distilled = distill(
        "[subagent s1 · done]",
        answer,
        Handover(),
        full_text=answer,
        vault=_Vault(),  # type: ignore[arg-type]  # a stand-in: only put() is called
        count=lambda t: len(t) // 4,
    )
    sub = vaulted_result(distilled.content)
    assert sub is not None and sub.handle == HANDLE and sub.total_chars == len(answer.rstrip())
    assert sub.tier.startswith("subagent") and sub.hint.startswith("read it with ctx_expand")
    assert len(answer) > HEAD_CHARS + TAIL_CHARS


class _CardHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolBlock("c1", "bash", {"command": "pytest -q"})

    def on_mount(self) -> None:
        self.query_one(ToolBlock).finish("ok", SPILLED, 2.5)


def test_vault_card_snapshot(snap_compare):
    assert snap_compare(_CardHost(), terminal_size=(100, 14))
