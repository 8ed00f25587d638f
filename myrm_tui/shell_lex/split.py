"""Lexer tokens grouped into simple commands (`Command`): compound commands are flattened, and
words that are not commands (`for` lists, `case` patterns, `[[ ]]` operands, function names)
are skipped, their command substitutions kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from myrm_tui.shell_lex.lexer import Lexer, Op, Redirect, Word

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
# Reserved words that only introduce or close a compound command; the next word is a command.
_PREFIX_WORDS = frozenset(
    {"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "fi", "done", "esac", "time", "coproc"}
)


@dataclass
class Command:
    words: list[Word] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    piped_from: Command | None = None
    background: bool = False
    function: str | None = None  # set inside a function body: the function's name

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


# -- splitting into simple commands ------------------------------------------------------------


def split_commands(text: str) -> list[Command]:
    """Every simple command of `text` in order (compound commands are flattened)."""
    return _Splitter(Lexer(text).run()).run()


class _Splitter:
    """Groups tokens into simple commands. Tracks just enough structure to skip words that are
    not commands: `for`/`select` lists, `case` patterns, `[[ ]]` tests, function names."""

    def __init__(self, tokens: list[Word | Op | Redirect]):
        self.tokens = tokens
        self.commands: list[Command] = []
        self.current = Command()
        self.previous: Command | None = None
        self.skip_until_separator = False
        self.expect_pattern = False  # inside `case ... in`, before a pattern's `)`
        self.case_depth = 0
        self.brace_depth = 0
        self.functions: list[tuple[str, int]] = []  # (name, brace depth its body opened at)
        self.function_pending: str | None = None

    def finish(self, piped: bool = False, background: bool = False) -> None:
        current = self.current
        if current.words or current.redirects or current.assignments:
            current.background = background
            if self.functions:
                current.function = self.functions[-1][0]
            self.commands.append(current)
            self.previous = current if piped else None
        elif not piped:
            self.previous = None
        self.current = Command(piped_from=self.previous if piped else None)

    def _note_substitutions(self, word: Word) -> None:
        """A skipped word (a for list, a [[ ]] operand) can still run command substitutions."""
        if word.substitutions:
            holder = Command(words=[Word(raw=":", text=":"), word])
            self.commands.append(holder)

    def run(self) -> list[Command]:
        tokens = self.tokens
        index = 0
        pending: Redirect | None = None
        while index < len(tokens):
            token = tokens[index]
            index += 1
            if isinstance(token, Redirect):
                self.current.redirects.append(token)
                pending = token
                continue
            if isinstance(token, Word):
                if pending is not None and pending.target is None:
                    pending.target = token
                    if pending.op == "<<<":
                        pending.body = token.text
                    pending = None
                    continue
                pending = None
                index = self._word(token, index)
                continue
            pending = None
            index = self._operator(token.text, index)
        self.finish()
        return self.commands

    def _word(self, token: Word, index: int) -> int:
        if self.expect_pattern:
            if token.raw == "esac":
                self.case_depth -= 1
                self.expect_pattern = False
            else:
                self._note_substitutions(token)
            return index
        if self.skip_until_separator:
            if token.raw == "]]":
                self.skip_until_separator = False
            self._note_substitutions(token)
            return index
        current = self.current
        if not current.words:
            plain = token.raw == token.text and not token.dynamic
            if plain and token.text in _PREFIX_WORDS:
                if token.text == "{":
                    if self.function_pending is not None:
                        self.functions.append((self.function_pending, self.brace_depth))
                        self.function_pending = None
                    self.brace_depth += 1
                elif token.text == "}":
                    self.brace_depth -= 1
                    if self.functions and self.functions[-1][1] == self.brace_depth:
                        self.functions.pop()
                elif token.text == "esac":
                    self.case_depth = max(0, self.case_depth - 1)
                return index
            if plain and token.text in ("for", "select", "[["):
                self.skip_until_separator = True
                return index
            if plain and token.text == "case":
                # `case WORD in`: skip to `in`, then patterns until `)`.
                while index < len(self.tokens):
                    nxt = self.tokens[index]
                    index += 1
                    if isinstance(nxt, Word):
                        self._note_substitutions(nxt)
                        if nxt.raw == "in":
                            break
                self.case_depth += 1
                self.expect_pattern = True
                return index
            if plain and token.text == "function":
                name = self.tokens[index] if index < len(self.tokens) else None
                if isinstance(name, Word):
                    self.function_pending = name.text
                    index += 1
                return index
            if _ASSIGNMENT.match(token.text) and not token.raw.startswith(("'", '"')):
                current.assignments.append(token)
                return index
        current.words.append(token)
        return index

    def _operator(self, op: str, index: int) -> int:
        tokens = self.tokens
        if self.expect_pattern:
            if op == ")":
                self.expect_pattern = False
            return index  # `(` and `|` inside a pattern
        if op == "(" and len(self.current.words) == 1 and not self.current.redirects:
            nxt = tokens[index] if index < len(tokens) else None
            if isinstance(nxt, Op) and nxt.text == ")":
                self.function_pending = self.current.words[0].text  # `name () { ...; }`
                self.current = Command(piped_from=self.current.piped_from)
                return index + 1
        if op == "(" and self.function_pending is not None and not self.current.words:
            nxt = tokens[index] if index < len(tokens) else None
            if isinstance(nxt, Op) and nxt.text == ")":
                return index + 1  # `function name () { ...; }`
        self.skip_until_separator = False
        if op in ("|", "|&"):
            self.finish(piped=True)
        elif op == "&":
            self.finish(background=True)
        else:
            self.finish()
            if op in (";;", ";&", ";;&") and self.case_depth:
                self.expect_pattern = True
        return index
