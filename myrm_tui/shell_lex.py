"""A small bash lexer and command splitter, enough to see which programs a command line runs.

Why our own: the deny-list must judge the words bash will execute, not the characters of the
line. `grep 'rm -r' .` runs grep; `r''m -rf x` runs rm. shlex knows neither `$(...)`, backticks,
heredocs nor `$'...'`, and the one real bash parser on PyPI is GPL. This lexer is lenient: it
never raises, and an unterminated quote simply runs to the end (bash would refuse to run it).

What it produces: a flat list of simple commands (`Command`), each with its words after quote
removal, its redirections, the previous pipeline stage, and the bodies of every command and
process substitution found in it, which the caller analyses recursively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
# Control operators, longest first (the lexer takes the first that matches).
_CONTROL_OPS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRECT_OPS = ("&>>", "<<<", "<<-", "&>", ">>", "<<", "<>", ">|", "<&", ">&", "<", ">")
# Reserved words that only introduce or close a compound command; the next word is a command.
_PREFIX_WORDS = frozenset(
    {"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "fi", "done", "esac", "time", "coproc"}
)
_ANSI_C = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


@dataclass
class Word:
    raw: str = ""
    text: str = ""  # after quote removal; expansions kept as written (`$X`, `$(cmd)`)
    dynamic: bool = False  # holds an expansion whose value is only known at run time
    substitutions: list[str] = field(default_factory=list)  # bodies of $(...), `...`, <(...), >(...)
    process_subst: bool = False  # the word is a <(...) or >(...)

    @property
    def has_command_subst(self) -> bool:
        return bool(self.substitutions)


@dataclass
class Redirect:
    op: str
    target: Word | None = None
    body: str | None = None  # heredoc or here-string text


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


@dataclass
class _Op:
    text: str


# -- lexing ------------------------------------------------------------------------------------


def _matching(text: str, start: int, open_: str, close: str) -> int:
    """Index just past the `close` that balances the `open_` before `start`, honouring quotes
    and nested substitutions; len(text) when unbalanced."""
    depth = 1
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if ch == '"':
            i = _end_of_double(text, i + 1)
            continue
        if ch == "`":
            i = _end_of_backtick(text, i + 1)
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _end_of_double(text: str, i: int) -> int:
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            return i + 1
        if text.startswith("$(", i):
            i = _matching(text, i + 2, "(", ")")
            continue
        if ch == "`":
            i = _end_of_backtick(text, i + 1)
            continue
        i += 1
    return len(text)


def _end_of_backtick(text: str, i: int) -> int:
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i + 1
        i += 1
    return len(text)


def _ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_C:
            out.append(_ANSI_C[nxt])
            i += 2
        elif nxt == "x":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
            out.append(chr(int(digits.group(), 16)) if digits else "x")
            i += 2 + (len(digits.group()) if digits else 0)
        elif nxt in "uU":
            digits = re.match(r"[0-9a-fA-F]{1,8}" if nxt == "U" else r"[0-9a-fA-F]{1,4}", body[i + 2 :])
            try:
                out.append(chr(int(digits.group(), 16)) if digits else nxt)
            except (ValueError, OverflowError):
                out.append("\ufffd")
            i += 2 + (len(digits.group()) if digits else 0)
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert digits is not None
            out.append(chr(int(digits.group(), 8) & 0xFF))
            i += 1 + len(digits.group())
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


class _Lexer:
    """Turns a command line into Words and _Ops; heredoc bodies are attached to their Redirect."""

    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.tokens: list[Word | _Op | Redirect] = []
        self._pending_heredocs: list[tuple[Redirect, str, bool]] = []  # (redirect, delimiter, strip tabs)
        self._word: Word | None = None

    # word building
    def _cur(self) -> Word:
        if self._word is None:
            self._word = Word()
        return self._word

    def _end_word(self) -> None:
        if self._word is not None:
            self.tokens.append(self._word)
            self._word = None

    def _add(self, raw: str, text: str | None = None, dynamic: bool = False) -> None:
        word = self._cur()
        word.raw += raw
        word.text += raw if text is None else text
        word.dynamic = word.dynamic or dynamic

    def run(self) -> list[Word | _Op | Redirect]:
        text = self.text
        while self.i < len(text):
            ch = text[self.i]
            if ch in " \t":
                self._end_word()
                self.i += 1
            elif ch == "\n":
                self._end_word()
                self.tokens.append(_Op("\n"))
                self.i += 1
                self._read_heredocs()
            elif ch == "#" and self._word is None:
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif ch == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2  # line continuation
                else:
                    self._add(text[self.i : self.i + 2], text[self.i + 1 : self.i + 2])
                    self.i += 2
            elif ch == "'":
                end = text.find("'", self.i + 1)
                end = len(text) if end < 0 else end
                self._add(text[self.i : end + 1], text[self.i + 1 : end])
                self.i = end + 1
            elif text.startswith("$'", self.i):
                end = self.i + 2
                while end < len(text) and text[end] != "'":
                    end += 2 if text[end] == "\\" else 1
                self._add(text[self.i : end + 1], _ansi_c(text[self.i + 2 : min(end, len(text))]))
                self.i = end + 1
            elif ch == '"':
                self._double_quoted()
            elif ch == "$" or ch == "`":
                self._expansion()
            elif ch in "<>" and text.startswith("(", self.i + 1) and self._word is None:
                end = _matching(text, self.i + 2, "(", ")")
                word = self._cur()
                word.raw += text[self.i : end]
                word.text += text[self.i : end]
                word.dynamic = True
                word.process_subst = True
                word.substitutions.append(text[self.i + 2 : max(self.i + 2, end - 1)])
                self.i = end
            elif self._operator():
                continue
            else:
                self._add(ch)
                self.i += 1
        self._end_word()
        return self.tokens

    def _double_quoted(self) -> None:
        text = self.text
        start = self.i
        self.i += 1
        out: list[str] = []
        while self.i < len(text) and text[self.i] != '"':
            ch = text[self.i]
            if ch == "\\" and self.i + 1 < len(text):
                nxt = text[self.i + 1]
                out.append(nxt if nxt in '$`"\\' else ("" if nxt == "\n" else "\\" + nxt))
                self.i += 2
            elif ch == "$" or ch == "`":
                before = self.i
                subs = self._scan_expansion()
                out.append(text[before : self.i])
                self._cur().substitutions.extend(subs)
                self._cur().dynamic = True
            else:
                out.append(ch)
                self.i += 1
        self.i += 1
        word = self._cur()
        word.raw += text[start : self.i]
        word.text += "".join(out)

    def _expansion(self) -> None:
        before = self.i
        subs = self._scan_expansion()
        raw = self.text[before : self.i]
        if raw == "$":
            self._add("$")
            return
        self._add(raw, dynamic=True)
        self._cur().substitutions.extend(subs)

    def _scan_expansion(self) -> list[str]:
        """Advance past one `$...` or backtick expansion; returns the command substitution bodies
        it runs (its own, or those nested in `$((...))` and `${...}`)."""
        text = self.text
        if text[self.i] == "`":
            end = _end_of_backtick(text, self.i + 1)
            body = text[self.i + 1 : max(self.i + 1, end - 1)].replace("\\`", "`")
            self.i = end
            return [body]
        if text.startswith("$((", self.i):
            end = _matching(text, self.i + 2, "(", ")")
            body = text[self.i + 3 : max(self.i + 3, end - 2)]
            self.i = end
            return nested_substitutions(body)
        if text.startswith("$(", self.i):
            end = _matching(text, self.i + 2, "(", ")")
            body = text[self.i + 2 : max(self.i + 2, end - 1)]
            self.i = end
            return [body]
        if text.startswith("${", self.i):
            end = _matching(text, self.i + 2, "{", "}")
            body = text[self.i + 2 : max(self.i + 2, end - 1)]
            self.i = end
            return nested_substitutions(body)
        match = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])").match(text, self.i)
        self.i = match.end() if match else self.i + 1
        return []

    def _operator(self) -> bool:
        text = self.text
        # An fd number right before a redirection belongs to the operator (`2>&1`).
        word = self._word
        for op in _REDIRECT_OPS:
            if text.startswith(op, self.i):
                if word is not None and not word.raw.isdigit() and not re.fullmatch(r"\{\w+\}", word.raw):
                    self._end_word()
                self._word = None  # an fd prefix is dropped
                self.i += len(op)
                redirect = Redirect(op)
                self.tokens.append(redirect)
                if op in ("<<", "<<-"):
                    self._heredoc_start(redirect, strip_tabs=op == "<<-")
                return True
        for op in _CONTROL_OPS:
            if text.startswith(op, self.i):
                self._end_word()
                self.tokens.append(_Op(op))
                self.i += len(op)
                return True
        return False

    def _heredoc_start(self, redirect: Redirect, strip_tabs: bool) -> None:
        text = self.text
        while self.i < len(text) and text[self.i] in " \t":
            self.i += 1
        match = re.compile(r"""(?:'[^']*'|"[^"]*"|\\.|[^\s;&|<>()])+""").match(text, self.i)
        delimiter = match.group() if match else ""
        self.i = match.end() if match else self.i
        plain = re.sub(r"""['"\\]""", "", delimiter)
        redirect.target = Word(raw=delimiter, text=plain)
        self._pending_heredocs.append((redirect, plain, strip_tabs))

    def _read_heredocs(self) -> None:
        text = self.text
        for redirect, delimiter, strip_tabs in self._pending_heredocs:
            lines: list[str] = []
            while self.i < len(text):
                end = text.find("\n", self.i)
                line = text[self.i :] if end < 0 else text[self.i : end]
                self.i = len(text) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                lines.append(line)
            redirect.body = "\n".join(lines)
        self._pending_heredocs = []


def nested_substitutions(text: str) -> list[str]:
    """Command substitution bodies inside text that is not itself a command (arithmetic, a
    parameter expansion's default)."""
    if "$(" not in text and "`" not in text:
        return []
    return [sub for token in _Lexer(text).run() if isinstance(token, Word) for sub in token.substitutions]


# -- splitting into simple commands ------------------------------------------------------------


def split_commands(text: str) -> list[Command]:
    """Every simple command of `text` in order (compound commands are flattened)."""
    return _Splitter(_Lexer(text).run()).run()


class _Splitter:
    """Groups tokens into simple commands. Tracks just enough structure to skip words that are
    not commands: `for`/`select` lists, `case` patterns, `[[ ]]` tests, function names."""

    def __init__(self, tokens: list[Word | _Op | Redirect]):
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
            if isinstance(nxt, _Op) and nxt.text == ")":
                self.function_pending = self.current.words[0].text  # `name () { ...; }`
                self.current = Command(piped_from=self.current.piped_from)
                return index + 1
        if op == "(" and self.function_pending is not None and not self.current.words:
            nxt = tokens[index] if index < len(tokens) else None
            if isinstance(nxt, _Op) and nxt.text == ")":
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


# -- static expansion ---------------------------------------------------------------------------

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand_static(text: str, variables: dict[str, str], substitute) -> str | None:
    """`text` with `$NAME`, `${NAME}`, `${NAME:-word}`, `$(...)` and backticks replaced by what
    they are known to produce, or None if any of them is unknown. `substitute(body)` returns a
    command substitution's output when it can be known without running it, else None."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if text.startswith("$(", i) and not text.startswith("$((", i):
            end = _matching(text, i + 2, "(", ")")
            value = substitute(text[i + 2 : max(i + 2, end - 1)])
            if value is None:
                return None
            out.append(value)
            i = end
        elif ch == "`":
            end = _end_of_backtick(text, i + 1)
            value = substitute(text[i + 1 : max(i + 1, end - 1)])
            if value is None:
                return None
            out.append(value)
            i = end
        elif ch == "$":
            match = _VAR.match(text, i)
            if match is None:
                return None
            name = match.group(1) or match.group(4)
            if name in variables:
                out.append(variables[name])
            elif match.group(2) and match.group(2).lstrip(":") == "-":
                out.append(match.group(3) or "")  # ${unset:-default}
            else:
                return None
            i = match.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def expand_braces(word: str) -> list[str]:
    """One level of brace expansion (`{rm,-rf,/}` → rm -rf /; `r{m,}` → rm r); nested or
    sequence braces are left as they are."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", word)
    if match is None:
        return [word]
    head, tail = word[: match.start()], word[match.end() :]
    return [head + part + tail for part in match.group(1).split(",")]


def printf_escapes(text: str) -> str:
    """What printf/echo -e make of backslash escapes (the same table as $'...')."""
    return _ansi_c(text)
