"""The environment a bash command gets: the user's, minus what looks like a secret.

Why strip rather than allow-list: builds and test suites need the variables the user set up
(JAVA_HOME, GOPATH, NODE_OPTIONS, their own project settings); a short allow-list would break them
silently. Secrets are recognisable by name (…_API_KEY, …_TOKEN, PGPASSWORD, AWS_SECRET_…) and by
value (a URL with a password in it). A model that runs `echo $OPENAI_API_KEY` would otherwise
copy the key into the transcript and the store. The user names any variable that must pass
anyway in `shell_env_passthrough`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from myrm_tui.llm.provider_keys import PROVIDER_KEYS

# A name is secret when one of its _-separated parts is one of these words…
SECRET_PARTS = frozenset(
    {
        "KEY",
        "KEYS",
        "APIKEY",
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWORDS",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "COOKIE",
        "PRIVATE",
        "PAT",
        "PWD",
    }
)
# …or a part ends with one of these (PGPASSWORD, DJANGOSECRET), or it is a provider key.
SECRET_PART_SUFFIXES = ("PASSWORD", "PASSWD", "SECRET", "APIKEY")
# Values that carry a password whatever the name: scheme://user:password@host (the user may be
# empty, as in redis://:password@host).
_URL_WITH_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Commands must not wait for a pager or a password prompt that nobody will ever answer.
NON_INTERACTIVE_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class CommandEnv:
    env: dict[str, str]
    withheld: tuple[str, ...]  # names removed as secrets, sorted


def looks_secret(name: str, value: str) -> bool:
    if name in {var for _, var, _ in PROVIDER_KEYS}:
        return True
    parts = [p for p in re.split(r"[_\-.]+", name.upper()) if p]
    if len(parts) == 1 and parts[0] == "PWD":
        return False  # the shell's current directory
    if any(p in SECRET_PARTS or p.endswith(SECRET_PART_SUFFIXES) for p in parts):
        return True
    return bool(_URL_WITH_PASSWORD.match(value))


def passthrough_names(setting: str) -> frozenset[str]:
    """Variable names from the `shell_env_passthrough` setting (commas or spaces between them);
    anything that is not a variable name is ignored."""
    return frozenset(n for n in re.split(r"[\s,]+", setting or "") if _NAME.match(n))


def command_env(
    source: Mapping[str, str], passthrough: frozenset[str] = frozenset(), extra: Mapping[str, str] | None = None
) -> CommandEnv:
    env: dict[str, str] = {}
    withheld: list[str] = []
    for name, value in source.items():
        if name not in passthrough and looks_secret(name, value):
            withheld.append(name)
            continue
        env[name] = value
    env.update(NON_INTERACTIVE_ENV)
    env.update(extra or {})
    return CommandEnv(env, tuple(sorted(withheld)))


def mentioned(command: str, names: tuple[str, ...]) -> list[str]:
    """The withheld names the command refers to (so its result can say why they are empty)."""
    return [n for n in names if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", command)]
