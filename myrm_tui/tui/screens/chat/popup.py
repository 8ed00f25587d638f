"""The prompt's completion popup: slash commands (built-in and custom) or workspace paths for @file.

Fed on every edit of the prompt; the workspace is listed once, in a thread, the first time a path
is completed.
"""

from __future__ import annotations

from myrm_tui.tui.constants import POPUP_MAX_ROWS
from myrm_tui.tui.prompt import completion as completing
from myrm_tui.tui.prompt.fuzzy import fuzzy_filter
from myrm_tui.tui.prompt.slash_commands import popup_order, with_custom
from myrm_tui.tui.screens.chat.commands import ChatCommands
from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.widgets.completion_popup import Choice, CompletionPopup


class PopupFeed:
    def __init__(self, screen: ChatParts, commands: ChatCommands) -> None:
        self.screen = screen
        self.commands = commands
        self._files: list[str] | None = None  # workspace paths for @file, listed once

    def update(self, popup: CompletionPopup) -> None:
        """Offer slash commands or workspace paths for the token at the cursor."""
        prompt = self.screen.prompt
        row, column = prompt.cursor_location
        request = completing.completion_at(prompt.text, row, column)
        if request is None:
            popup.close()
            return
        if request.kind == "slash":
            self.commands.reload()
            by_name = {c.name: c for c in with_custom(self.commands.slash())}
            names = popup_order(request.query, list(by_name))  # all of them: the popup scrolls
            choices = [Choice(n, f"{n} {by_name[n].args}".rstrip() + f"  — {by_name[n].help}") for n in names]
            if len(choices) == 1 and choices[0].value == request.query:
                choices = []  # fully typed: nothing left to offer
            popup.offer(request, choices)
        elif self._files is None:
            self.screen.run_worker(
                lambda: self._list_files(popup), thread=True, exclusive=True, group="list-files", exit_on_error=False
            )
        else:
            paths = fuzzy_filter(request.query, self._files, POPUP_MAX_ROWS)
            popup.offer(request, [Choice(p, p) for p in paths])

    def _list_files(self, popup: CompletionPopup) -> None:
        files = completing.list_workspace_files(self.screen.chat.workspace)
        self.screen.app.call_from_thread(self._files_listed, files, popup)

    def _files_listed(self, files: list[str], popup: CompletionPopup) -> None:
        self._files = files
        self.update(popup)
