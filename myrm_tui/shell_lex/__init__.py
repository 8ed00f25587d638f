"""A small bash lexer and command splitter, enough to see which programs a command line runs.

Why our own: the deny-list must judge the words bash will execute, not the characters of the
line. `grep 'rm -r' .` runs grep; `r''m -rf x` runs rm. shlex knows neither `$(...)`, backticks,
heredocs nor `$'...'`, and the one real bash parser on PyPI is GPL. This lexer is lenient: it
never raises, and an unterminated quote simply runs to the end (bash would refuse to run it).

What it produces: a flat list of simple commands (`Command`), each with its words after quote
removal, its redirections, the previous pipeline stage, and the bodies of every command and
process substitution found in it, which the caller analyses recursively.

The pieces: `scan` (where quotes and brackets end), `lexer` (words, operators, redirections),
`split` (grouping them into simple commands), `expand` (static expansion). Callers import from
the package, whose names are these.
"""

from __future__ import annotations

from myrm_tui.shell_lex.expand import expand_braces, expand_static, printf_escapes
from myrm_tui.shell_lex.lexer import Redirect, Word, nested_substitutions
from myrm_tui.shell_lex.split import Command, split_commands

__all__ = [
    "Command",
    "Redirect",
    "Word",
    "expand_braces",
    "expand_static",
    "nested_substitutions",
    "printf_escapes",
    "split_commands",
]
