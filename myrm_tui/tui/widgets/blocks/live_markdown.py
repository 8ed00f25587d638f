"""A streamed reply's Markdown, rendered as it arrives at a cost per frame that does not grow with
the reply.

Why not Textual's Markdown widget fed by its MarkdownStream: every append re-parses from the start
of the last block, concatenates the whole source, and mounts one widget per new block (a table is
a tree of them), and each mount relayouts the transcript; a long reply therefore cost more per
frame the longer it got (docs/tui-benchmarks.md). Here the reply is rows of segments, like a
stored reply (widgets/stored_reply.py), built block by block:

- The text is split into top-level blocks with the parser Rich's Markdown uses. CommonMark closes
  a block when a line starts the next one (a closed code fence closes itself), so every block but
  the last is finished: it is rendered once and its rows are kept.
- Only the last block, the live one, is parsed and rendered again, once per frame.
- A live block that grows long (a long code fence, a long paragraph or one very long line, a long
  list; a fence sooner, its rendering costs far more per character) is cut into pieces at safe
  places: the rows of the pieces before the last are kept, and only the last piece is rendered
  again. Those rows are provisional (a piece is rendered on its own: a fence's highlighting or a
  paragraph's wrapping can differ at a cut); when the block ends, it is rendered once whole, so
  the finished rows are those of the whole text.

Separators and trimming follow Rich's Markdown and `render_reply`, so the rows of a finished reply
are the rows `render_reply` gives for its whole text (tests/tui/test_live_markdown.py checks it).
Rich decides the blank row before a block from the block before it (none after a rule) and from
the block's own inner elements (a list brings its own), so a block after another is rendered
behind a one-row dummy paragraph whose row is then dropped: it gets the blank row the whole text
would give it. The document's trailing blank rows are dropped, and one blank row follows the reply.

Pure and used from one thread at a time (the widget runs it in a worker thread, one frame after
another); nothing here reads app state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token
from rich.segment import Segment

from myrm_tui.tui.constants import LIVE_BLOCK_CHARS, LIVE_BLOCK_KEEP_CHARS, LIVE_FENCE_CHARS, LIVE_FENCE_KEEP_CHARS
from myrm_tui.tui.widgets.blocks.stored_reply import ReplyPalette, is_blank, markdown_parser, render_markdown

Row = list[Segment]
# The blank row between blocks and after the reply: one object, so a frame can tell by identity
# which rows it sent before (rows are never mutated).
_BLANK: Row = []

_NEWLINE = re.compile("\n")
# Where a long paragraph may be cut: after whitespace, before a letter (a piece that started with
# "-", "#", "1." or ">" would render as a list, a heading or a quote on its own).
_PARAGRAPH_CUT = re.compile(r"\s(?=[^\W\d_])")


@dataclass(frozen=True)
class Frame:
    """What changed since the previous frame: its first `keep` rows stay, `rows` follow them."""

    keep: int
    rows: list[Row]
    width: int


@dataclass
class _Block:
    source: str
    body: list[Row]  # the rendered rows (with the blank row before them), trailing blank rows removed
    trailing: list[Row]  # those blank rows: drawn only when another block follows
    rule: bool  # it ends with a horizontal rule (Rich puts no blank row after one)


@dataclass
class _Parsed:
    source: str
    tokens: list[Token]
    starts: list[int]  # index in `tokens` of each top-level block's first token
    line_offsets: list[int]  # character offset of each line's start in `source`


def _split_trailing(rows: list[Row]) -> tuple[list[Row], list[Row]]:
    end = len(rows)
    while end and is_blank(rows[end - 1]):
        end -= 1
    return rows[:end], rows[end:]


def _is_fence_closer(line: str, opener: str) -> bool:
    """`line` (without its newline) closes a fence opened by `opener` (its first line)."""
    marker = opener.lstrip(" ")[:1]
    run = len(opener.lstrip(" ")) - len(opener.lstrip(" ").lstrip(marker))
    stripped = line.strip()
    return len(line) - len(line.lstrip(" ")) < 4 and len(stripped) >= run and stripped == marker * len(stripped)


class LiveMarkdown:
    """The rows of a streamed reply, advanced frame by frame (see the module docstring)."""

    def __init__(self, palette: ReplyPalette) -> None:
        self.palette = palette
        self.width = 0
        # Markdown characters parsed and rendered so far: tests check that a frame's share does not
        # grow with the reply
        self.parsed_chars = 0
        self.rendered_chars = 0
        self._parser = markdown_parser()
        self._dummy = self._parser.parse("x")  # a one-row paragraph: see the module docstring
        self._blocks: list[_Block] = []
        self._stable: list[Row] = []  # rows up to the last finished block's body: they never change
        self._tail = ""  # the live block's source, from its first line
        self._cut = 0  # `_tail[:_cut]` is drawn as `_head`, its provisional pieces
        self._head: list[Row] = []
        self._context = ""  # what makes `_tail[_cut:]` parse as the rest of the block (a fence's first line)
        self._live: list[Row] = []  # the rows of `_tail[_cut:]`, trailing blank rows removed
        self._sent: list[Row] = []  # the rows after `_stable` in the last frame
        self._sent_stable = 0  # len(`_stable`) in the last frame

    @property
    def blocks(self) -> int:
        """Finished blocks so far."""
        return len(self._blocks)

    def advance(self, text: str, width: int, *, final: bool = False) -> Frame:
        """Add `text` (already made safe for the terminal) and return the rows that changed.
        `final`: the reply ended, the live block is finished too."""
        keep_all = width == self.width
        if not keep_all:
            self._rerender(width)
        self._tail += text
        self._settle(final)
        volatile: list[Row] = []
        if self._live or self._head:
            if self._blocks:
                volatile += self._blocks[-1].trailing
            volatile += self._head
            volatile += self._live
        if self._stable or volatile:
            volatile.append(_BLANK)  # the blank row after the reply
        keep = self._sent_stable if keep_all else 0
        if keep_all:
            fresh = self._stable[self._sent_stable :] + volatile
            same = 0
            if len(self._stable) == self._sent_stable:
                for old, new in zip(self._sent, volatile, strict=False):
                    if old is not new:
                        break
                    same += 1
            keep += same
            rows = fresh[same:]
        else:
            rows = self._stable + volatile
        self._sent, self._sent_stable = volatile, len(self._stable)
        return Frame(keep, rows, width)

    def rows(self) -> list[Row]:
        """Every row as the last frame left them."""
        return [*self._stable, *self._sent]

    # blocks ----------------------------------------------------------------------------------

    def _parse(self, source: str) -> _Parsed:
        self.parsed_chars += len(source)
        tokens = self._parser.parse(source)
        starts = [i for i, token in enumerate(tokens) if token.level == 0 and token.nesting >= 0 and token.map]
        offsets = [0, *(match.end() for match in _NEWLINE.finditer(source))]
        return _Parsed(source, tokens, starts, offsets)

    def _render(self, source: str, tokens: list[Token] | None = None, *, lead: bool = False) -> list[Row]:
        """The rows of `source` (or of its `tokens`). `lead`: it starts a block after another, so
        it gets the blank row above it the whole text would give it (module docstring)."""
        if tokens is None:
            tokens = self._parse(source).tokens
        self.rendered_chars += len(source)
        if lead and self._blocks and not self._blocks[-1].rule:
            return render_markdown(source, self.width, self.palette, [*self._dummy, *tokens])[1:]
        return render_markdown(source, self.width, self.palette, tokens)

    def _commit(self, source: str, tokens: list[Token] | None = None) -> None:
        if tokens is None:
            tokens = self._parse(source).tokens
        body, trailing = _split_trailing(self._render(source, tokens, lead=True))
        if self._blocks:
            self._stable += self._blocks[-1].trailing
        self._stable += body
        tops = [token for token in tokens if token.level == 0 and token.nesting >= 0]
        self._blocks.append(_Block(source, body, trailing, bool(tops) and tops[-1].type == "hr"))

    def _rerender(self, width: int) -> None:
        """A new width: every finished block is rendered again, the live block is cut afresh."""
        self.width = width
        blocks, self._blocks, self._stable = self._blocks, [], []
        for block in blocks:
            self._commit(block.source)
        self._cut, self._head, self._context, self._live = 0, [], "", []
        self._sent, self._sent_stable = [], 0

    def _settle(self, final: bool) -> None:
        """Commit every finished block of the tail; cut and render the live one."""
        parsed = self._parse(self._context + self._tail[self._cut :])
        shift = self._cut - len(self._context)  # tail offset = parsed offset + shift
        starts = parsed.starts
        if not starts:  # only blank lines so far (a cut tail always holds its block's start)
            self._live = []
            if final:
                self._finish_live(None)
            return
        last = len(starts) - 1
        if last == 0 and parsed.tokens[starts[0]].type == "fence" and self._fence_closed(parsed, 0):
            last = 1  # a closed fence is finished: nothing after it can extend it
        if last > 0:
            for index in range(min(last, len(starts))):
                begin = parsed.tokens[starts[index]].map[0]  # type: ignore[index]  # starts have maps
                start = 0 if index == 0 else parsed.line_offsets[begin] + shift
                end = self._block_end(parsed, index, shift)
                source = self._tail[start:end]
                if index == 0 and self._cut:  # drawn in pieces so far: rendered once whole now
                    self._commit(source)
                else:
                    stop = starts[index + 1] if index + 1 < len(starts) else len(parsed.tokens)
                    self._commit(source, parsed.tokens[starts[index] : stop])
            rest = self._block_end(parsed, min(last, len(starts)) - 1, shift)
            self._tail, self._cut, self._head, self._context = self._tail[rest:], 0, [], ""
            if last >= len(starts):  # nothing live after a closed fence
                self._live = []
                if final:
                    self._finish_live(None)
                return
            parsed = self._parse(self._tail)
            shift = 0
        fence = parsed.tokens[parsed.starts[0]].type == "fence"
        limit = LIVE_FENCE_CHARS if fence else LIVE_BLOCK_CHARS
        if not final and len(self._tail) - self._cut > limit and self._cut_live(parsed, shift):
            parsed = self._parse(self._context + self._tail[self._cut :])
        if final:
            self._finish_live(parsed)
            return
        if self._cut:  # the rest of a cut block: no blank row above it
            rows = self._render(parsed.source, parsed.tokens)
            if self._context:  # the rest of a fence: its top padding row belongs to the first piece
                rows = rows[1:]
        else:
            rows = self._render(parsed.source, parsed.tokens, lead=True)
        self._live = _split_trailing(rows)[0]

    def _block_end(self, parsed: _Parsed, index: int, shift: int) -> int:
        """Where block `index` of `parsed` ends in the tail: where the next one starts, or the end."""
        if index + 1 < len(parsed.starts):
            line = parsed.tokens[parsed.starts[index + 1]].map[0]  # type: ignore[index]
            return parsed.line_offsets[line] + shift
        token_map = parsed.tokens[parsed.starts[index]].map
        assert token_map is not None
        if token_map[1] < len(parsed.line_offsets):
            return parsed.line_offsets[token_map[1]] + shift
        return len(self._tail)

    def _fence_closed(self, parsed: _Parsed, index: int) -> bool:
        token_map = parsed.tokens[parsed.starts[index]].map
        assert token_map is not None
        first, stop = token_map
        offsets = parsed.line_offsets
        if stop - first < 2 or stop >= len(offsets):  # the closing line must be complete
            return False
        opener = parsed.source[offsets[first] : offsets[first + 1] - 1]
        closer = parsed.source[offsets[stop - 1] : offsets[stop] - 1]
        return _is_fence_closer(closer, opener)

    def _finish_live(self, parsed: _Parsed | None) -> None:
        """The reply ended: the live block is finished."""
        if self._tail[self._cut :].strip() or self._head:
            if self._cut or parsed is None:
                self._commit(self._tail)
            else:
                self._commit(self._tail, parsed.tokens)
        self._tail, self._cut, self._head, self._context, self._live = "", 0, [], "", []

    # pieces of a long live block ------------------------------------------------------------

    def _cut_live(self, parsed: _Parsed, shift: int) -> bool:
        """Move the cut of the long live block forward, rendering the piece it passes once.
        False when the block has no safe place to cut (a table, a quote): it is rendered whole."""
        kind = parsed.tokens[parsed.starts[0]].type
        limit = len(self._tail) - (LIVE_FENCE_KEEP_CHARS if kind == "fence" else LIVE_BLOCK_KEEP_CHARS)
        start = self._cut
        if kind == "fence":
            context = self._context
            if not context:  # the first cut: the opening line parses every later piece as code
                begin = parsed.line_offsets[parsed.tokens[parsed.starts[0]].map[0]] + shift  # type: ignore[index]
                context = self._tail[begin : self._tail.find("\n", begin) + 1]
                start = begin + len(context)
            cut = self._tail.rfind("\n", start, limit) + 1
            if cut <= start or not context.endswith("\n"):
                return False
            if self._context:  # a later piece: the first one has the top padding row
                rows = self._render(self._context + self._tail[start:cut])[1:]
            else:
                rows = self._render(self._tail[:cut], lead=True)
            if rows and is_blank(rows[-1]):
                rows = rows[:-1]  # the bottom padding row: the last piece has it
            self._context = context
        elif kind == "paragraph_open":
            cut = 0
            for match in _PARAGRAPH_CUT.finditer(self._tail, start + 1, limit):
                cut = match.end()
            if cut <= start:
                cut = limit if self._tail[limit : limit + 1].isalnum() else 0  # one long word
            if cut <= start:
                return False
            rows = _split_trailing(self._render(self._tail[start:cut], lead=not start))[0]
        elif kind in ("bullet_list_open", "ordered_list_open"):
            items = [
                parsed.line_offsets[token.map[0]] + shift
                for token in parsed.tokens
                if token.type == "list_item_open" and token.level == 1 and token.map
            ]
            cuts = [offset for offset in items if start < offset <= limit]
            if not cuts:
                return False
            cut = cuts[-1]
            rows = _split_trailing(self._render(self._tail[start:cut], lead=not start))[0]
        else:
            return False
        self._head += rows
        self._cut = cut
        return True
