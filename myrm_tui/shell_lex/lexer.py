"""The bash lexer: a command line into words (after quote removal), operators and redirections.

Lenient by design (see shell_lex): it never raises, and an unterminated quote runs to the end of
the line. Heredoc bodies are attached to their redirection; the bodies of command and process
substitutions are kept on the word for the caller to analyse recursively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from myrm_tui.shell_lex.scan import ansi_c, end_of_backtick, matching_close

# Control operators, longest first (the lexer takes the first that matches).
_CONTROL_OPS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRECT_OPS = ("&>>", "<<<", "<<-", "&>", ">>", "<<", "<>", ">|", "<&", ">&", "<", ">")


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
class Op:
    text: str


class Lexer:
    """Turns a command line into Words and Ops; heredoc bodies are attached to their Redirect."""

    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.tokens: list[Word | Op | Redirect] = []
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

    def run(self) -> list[Word | Op | Redirect]:
        text = self.text
        while self.i < len(text):
            ch = text[self.i]
            if ch in " \t":
                self._end_word()
                self.i += 1
            elif ch == "\n":
                self._end_word()
                self.tokens.append(Op("\n"))
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
                self._add(text[self.i : end + 1], ansi_c(text[self.i + 2 : min(end, len(text))]))
                self.i = end + 1
            elif ch == '"':
                self._double_quoted()
            elif ch == "$" or ch == "`":
                self._expansion()
            elif ch in "<>" and text.startswith("(", self.i + 1) and self._word is None:
                end = matching_close(text, self.i + 2, "(", ")")
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
            end = end_of_backtick(text, self.i + 1)
            body = text[self.i + 1 : max(self.i + 1, end - 1)].replace("\\`", "`")
            self.i = end
            return [body]
        if text.startswith("$((", self.i):
            end = matching_close(text, self.i + 2, "(", ")")
            body = text[self.i + 3 : max(self.i + 3, end - 2)]
            self.i = end
            return nested_substitutions(body)
        if text.startswith("$(", self.i):
            end = matching_close(text, self.i + 2, "(", ")")
            body = text[self.i + 2 : max(self.i + 2, end - 1)]
            self.i = end
            return [body]
        if text.startswith("${", self.i):
            end = matching_close(text, self.i + 2, "{", "}")
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
                self.tokens.append(Op(op))
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
    return [sub for token in Lexer(text).run() if isinstance(token, Word) for sub in token.substitutions]
