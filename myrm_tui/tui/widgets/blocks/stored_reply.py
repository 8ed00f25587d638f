"""A finished reply loaded from the store, drawn as ONE widget from pre-rendered lines.

Why not Textual's Markdown: it is a tree of ~20-50 block widgets per reply, and every mount of
such a tree relayouts the whole transcript (one reflow of a 50-turn window cost 200-500 ms on a
2-core box), so "load earlier" and resume paid that per batch, several times over. Here the
reply is rendered by Rich's Markdown into lines once per width (thread-safe: no app state is read
while rendering, the colours are taken from the theme up front) and the widget only hands those
lines to the compositor: mounting a batch of replies is one cheap layout.

What the user sees stays close to the Markdown widget (same text, theme colours for headings and
inline code, highlighted fences without a foreign background). A click on the reply swaps in the
full Markdown widget (`Activated`), for what only it does: selecting text block by block, links.
"""

from __future__ import annotations

import functools
import io
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown
from rich.segment import Segment
from rich.style import Style
from rich.syntax import ANSISyntaxTheme, Syntax, SyntaxTheme
from rich.text import Text
from rich.theme import Theme
from textual import events
from textual.app import App
from textual.color import Color
from textual.geometry import Region, Size
from textual.highlight import HighlightTheme
from textual.message import Message
from textual.strip import Strip
from textual.style import Style as ContentStyle
from textual.widget import Widget

from myrm_tui.tui.css import sibling_css


@dataclass(frozen=True)
class ReplyPalette:
    """The theme colours a stored reply needs, read once on the UI thread (rendering may run in a
    worker thread, which must not read the app's theme while it changes)."""

    theme: Theme
    fence_background: str
    fence_theme: SyntaxTheme


def reply_palette(variables: dict[str, str], dark: bool = True) -> ReplyPalette:
    """Rich styles named like Rich's Markdown expects them, coloured from the app theme's
    variables the way Textual's Markdown CSS and its code highlighter colour them ($markdown-h1-color,
    inline code on $warning 10%, fences on black 10% with Textual's HighlightTheme)."""
    background = _parse(variables.get("background", "")) or Color(0, 0, 0)

    def colour(name: str, under: Color = background, alpha: float = 1.0) -> str | None:
        parsed = _parse(variables.get(name, ""))
        return None if parsed is None else (under + parsed.multiply_alpha(alpha)).hex6

    styles: dict[str, Style | str] = {}
    for level in range(1, 7):
        name = f"markdown-h{level}"
        text_style = variables.get(f"{name}-text-style", "bold")
        flags = [flag for flag in text_style.split() if flag in {"bold", "italic", "underline", "reverse", "dim"}]
        styles[f"markdown.h{level}"] = Style.parse(" ".join(flags) or "none") + Style(color=colour(f"{name}-color"))
    code_background = _parse(variables.get("warning", ""))
    inline_under = background + code_background.multiply_alpha(0.1) if code_background else background
    styles["markdown.code"] = Style(color=colour("text-warning", inline_under, 0.95), bgcolor=inline_under.hex6)
    styles["markdown.h1.border"] = Style(color=colour("primary"))
    styles["markdown.block_quote"] = Style(color=colour("text-muted"))
    styles["markdown.hr"] = Style(color=colour("secondary"))
    styles["markdown.link"] = Style(color=colour("text-accent"), underline=True)
    styles["markdown.link_url"] = Style(color=colour("text-accent"), underline=True)
    styles["markdown.item.bullet"] = Style(bold=True)
    fence_under = background + (Color(0, 0, 0, 0.1) if dark else Color(255, 255, 255, 0.3))
    return ReplyPalette(Theme(styles), fence_under.hex6, _fence_theme(variables, fence_under))


def _parse(value: str) -> Color | None:
    try:
        return Color.parse(value) if value else None
    except Exception:  # a variable that is not a plain colour (e.g. "auto 87%")
        return None


def _fence_theme(variables: dict[str, str], under: Color) -> SyntaxTheme:
    """Textual's code highlighting colours (HighlightTheme, what the Markdown widget's fences use),
    resolved against the theme and blended on the fence background, as a Rich syntax theme."""
    token_styles: dict[Any, Style] = {}  # by pygments token type
    for token, text in HighlightTheme.STYLES.items():
        try:
            parsed = ContentStyle.parse(text, variables=variables)
        except Exception:  # a style this theme cannot resolve: Rich's plain text for that token
            continue
        foreground = parsed.foreground
        color = None
        if foreground is not None:
            solid = under.get_contrast_text(foreground.a) if foreground.auto else under + foreground
            color = solid.hex6
        token_styles[token] = Style(
            color=color, bold=parsed.bold or None, italic=parsed.italic or None, underline=parsed.underline or None
        )
    return ANSISyntaxTheme(token_styles)


class _Fence(CodeBlock):
    """A fence coloured like the Markdown widget's (the palette's highlight colours on its fence
    background, not Rich's code theme), cropped rather than wrapped like the widget's."""

    def __init__(self, lexer_name: str, palette: ReplyPalette) -> None:
        super().__init__(lexer_name, "default")
        self.palette = palette

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> _Fence:
        assert isinstance(markdown, _ReplyMarkdown)
        return cls((token.info or "").partition(" ")[0] or "text", markdown.palette)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Syntax(
            str(self.text).rstrip(),
            _lexer(self.lexer_name),
            theme=self.palette.fence_theme,
            word_wrap=False,
            padding=(1, 2),
            background_color=self.palette.fence_background,
        )


class _Heading(Heading):
    """H1 and H2 with the extra blank line above them that the Markdown widget's margins give."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.tag in ("h1", "h2"):
            yield Text()
        yield from super().__rich_console__(console, options)


@functools.lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | str:
    """One lexer per fence language: Rich's Syntax looks the name up (and Pygments compiles the
    lexer's patterns) for every fence it draws, ~9 ms each on this box; a streamed reply draws
    its live fence every frame. Lexers keep no state between calls, so threads may share one.
    An unknown name is handed on as it is (Syntax then draws the code unhighlighted)."""
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)  # as Syntax asks for it
    except ClassNotFound:
        return name


class _ReplyMarkdown(Markdown):
    elements: ClassVar = {**Markdown.elements, "heading_open": _Heading, "fence": _Fence, "code_block": _Fence}

    def __init__(self, text: str, palette: ReplyPalette, tokens: list[Token] | None = None) -> None:
        """Rich's `__init__` with its defaults, minus building a parser per reply (~3 ms: linkify's
        patterns) and minus the parse when `tokens` (a streamed block's) are given."""
        self.markup = text
        self.parsed = tokens if tokens is not None else _thread_parser().parse(text)
        self.code_theme = self.inline_code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.palette = palette


def markdown_parser() -> MarkdownIt:
    """The parser Rich's Markdown uses (CommonMark plus tables and strikethrough): a streamed
    reply is split into blocks with it, so each block renders exactly as in the whole text."""
    return MarkdownIt().enable("strikethrough").enable("table")


_PARSERS = threading.local()  # one parser per thread (replies render in worker threads too)


def _thread_parser() -> MarkdownIt:
    parser: MarkdownIt | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = markdown_parser()
    return parser


# One read of the theme's variables per theme; keyed by the Theme object too, since a theme file
# edited on disk is registered again under the same name.
_PALETTES: dict[tuple[str, int], ReplyPalette] = {}


def palette_of(app: App[object]) -> ReplyPalette:
    """The palette of `app`'s current theme (UI thread only: it reads the app's CSS variables)."""
    key = (app.theme, id(app.current_theme))
    palette = _PALETTES.get(key)
    if palette is None:
        palette = _PALETTES[key] = reply_palette(app.get_css_variables(), app.current_theme.dark)
    return palette


def estimated_rows(text: str, width: int) -> int:
    """Rows a reply will take, roughly (each source line wrapped, plus the trailing blank row): only
    for layout before the real lines exist, never drawn."""
    width = max(1, width)
    return sum(max(1, -(-len(line) // width)) for line in text.splitlines()) + 1


def render_reply(text: str, width: int, palette: ReplyPalette) -> list[list[Segment]]:
    """`text` as Markdown, wrapped to `width` cells: one list of segments per line. Pure (its own
    Console), so it may run in a worker thread."""
    lines = render_markdown(text, width, palette)
    while lines and is_blank(lines[-1]):
        lines.pop()
    # one blank row after the reply, as the Markdown widget's last block leaves (its bottom margin)
    return [*lines, []] if lines else lines


def is_blank(line: list[Segment]) -> bool:
    """A row with no visible text (a fence's padding row counts: the reply's end trims it)."""
    return not any(segment.text.strip() for segment in line)


def render_markdown(
    text: str, width: int, palette: ReplyPalette, tokens: list[Token] | None = None
) -> list[list[Segment]]:
    """The rows of `text` (or of its `tokens`, parsed already) as Markdown, untrimmed. Pure, like
    `render_reply`."""
    console = Console(
        width=max(1, width),
        theme=palette.theme,
        color_system="truecolor",
        force_terminal=True,
        legacy_windows=False,
        highlight=False,
        emoji=False,
        markup=False,
        file=io.StringIO(),  # never written to: only render_lines is used
    )
    options = console.options.update(width=max(1, width))
    return console.render_lines(_ReplyMarkdown(text, palette, tokens), options, pad=False)


class StoredReply(Widget):
    """The reply's Markdown as pre-rendered lines (per content width, cached)."""

    DEFAULT_CSS = sibling_css(__file__)

    class Activated(Message):
        """The user clicked the reply: swap in the full Markdown widget."""

        def __init__(self, reply: StoredReply) -> None:
            super().__init__()
            self.reply = reply

    def __init__(self, source: str, palette: ReplyPalette | None = None, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.source = source  # the text drawn (already passed through for_terminal by the caller)
        self._palette = palette
        self._lines: dict[int, list[list[Segment]]] = {}
        self._lock = threading.Lock()
        # the lines as drawn for `_strips_key` (width, base style), each made when first painted:
        # a long reply's first paint then costs the rows on screen, not all of them
        self._strips: list[Strip | None] = []
        self._rows: list[list[Segment]] = []  # the rendered lines `_strips` are made from
        self._strips_key: tuple[int, Style] | None = None
        self._blank = Strip.blank(0)
        self._deferred = False  # laid out at an estimated height until rendered (`defer`)

    def palette(self) -> ReplyPalette:
        if self._palette is None:
            self._palette = palette_of(self.app)
        return self._palette

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        """Lines rendered for the old theme keep its colours: render again."""
        with self._lock:
            self._palette = None
            self._lines = {}
        self._strips_key = None
        self.refresh(layout=True)

    def prepare(self, width: int, palette: ReplyPalette) -> None:
        """Render for `width` ahead of mounting (from a worker thread): the mount then only lays out."""
        self._palette = palette
        self._render_for(width)
        self._deferred = False

    def adopt(self, width: int, lines: list[list[Segment]], palette: ReplyPalette) -> None:
        """Take `lines` as the rendering for `width` (a streamed reply's, rendered block by block
        as it arrived): the finished reply is not rendered a second time."""
        self._palette = palette
        with self._lock:
            self._lines = {width: lines}
        self._deferred = False

    def _render_for(self, width: int) -> list[list[Segment]]:
        with self._lock:
            lines = self._lines.get(width)
            if lines is None:
                assert self._palette is not None
                lines = render_reply(self.source, width, self._palette)
                self._lines = {width: lines}  # one width at a time: a resize drops the old one
            return lines

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """As wide as it is given, like a paragraph (Widget's default measures `render()`, empty here)."""
        return container.width

    def defer(self) -> None:
        """Lay out at an estimated height until `prepare` rendered the lines (a resumed window's
        older replies, rendered in a thread after the first paint; the view is anchored to the
        bottom then, so their true heights arriving later do not move what the user sees)."""
        self._deferred = True

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self._deferred and width not in self._lines:
            return estimated_rows(self.source, width)
        self.palette()
        return len(self._render_for(width))

    def render_lines(self, crop: Region) -> list[Strip]:
        """Width and base style once per pass: both walk the DOM (`content_size` finds the widget in
        the compositor's full map), which per line cost more than the lines themselves."""
        width = max(0, self._size.width - self.styles.gutter.width)
        style = self.rich_style
        if self._strips_key != (width, style):
            self.palette()
            if self._deferred:  # painted before its thread got to it: its true height from now on
                self._deferred = False
                self.call_later(self.refresh, layout=True)
            self._rows = self._render_for(width)
            self._strips = [None] * len(self._rows)
            self._strips_key = (width, style)
            self._blank = Strip.blank(width, style)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        if y >= len(self._strips) or self._strips_key is None:
            return self._blank
        strip = self._strips[y]
        if strip is None:
            width, style = self._strips_key
            strip = self._strips[y] = Strip(self._rows[y]).apply_style(style).extend_cell_length(width, style)
        return strip

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Activated(self))
