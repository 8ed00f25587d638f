"""The environment a bash command gets: the user's, minus what looks like a secret.

Why strip rather than allow-list: builds and test suites need the variables the user set up
(JAVA_HOME, GOPATH, NODE_OPTIONS, their own project settings); a short allow-list would break them
silently. Secrets are recognisable by name (…_API_KEY, …_TOKEN, PGPASSWORD, AWS_SECRET_…) and by
value (a URL with a password in it). A model that runs `echo $OPENAI_API_KEY` would otherwise
copy the key into the transcript and the store. The user names any variable that must pass
anyway in `shell_env_passthrough`.
"""

from __future__ import annotations

import ctypes
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from myrm_tui.llm.models.provider_keys import PROVIDER_KEYS
from myrm_tui.redact import CREDENTIALS_ONLY, redact

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
# …or a part ends with one of these (PGPASSWORD, DJANGOSECRET, AWS_SECRETKEY, X_SESSIONTOKEN; not a
# bare TOKEN suffix: TIKTOKEN_CACHE_DIR is a folder), or it is a provider key.
SECRET_PART_SUFFIXES = (
    "PASSWORD",
    "PASSWD",
    "SECRET",
    "APIKEY",
    "SECRETKEY",
    "ACCESSKEY",
    "PRIVATEKEY",
    "SIGNINGKEY",
    "MASTERKEY",
    "ENCRYPTIONKEY",
    "SESSIONTOKEN",
    "ACCESSTOKEN",
    "AUTHTOKEN",
    "REFRESHTOKEN",
    "BEARERTOKEN",
    "APITOKEN",
    "SECURITYTOKEN",
)
# Whole parts that name a credential-bearing address: a DSN (Sentry's holds its key), a webhook URL
# (Slack, Discord: whoever has it can post), a connection string.
SECRET_ADDRESS_PARTS = frozenset({"DSN", "DSNS", "WEBHOOK", "WEBHOOKS", "CONNSTR", "CONNECTIONSTRING"})
_CONNECTION_STRING_NAME = re.compile(r"CONN(?:ECTION)?_?STR(?:ING)?")
# Values that carry a password whatever the name: scheme://user:password@host anywhere in the
# value (the user may be empty, as in redis://:password@host; the scheme may be compound, as in
# jdbc:postgresql://; the password may hold a `/`), a long token as the user part
# (https://<key>@sentry.io/1), `password=` in a key=value connection string.
_URL_WITH_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.:-]*://[^/@\s:]*:[^@\s]+@")
_URL_WITH_TOKEN_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.:-]*://[A-Za-z0-9_\-]{16,}@")
_PASSWORD_FIELD = re.compile(r"(?i)(?:^|[;\s])(?:password|pwd|passwd)\s*=\s*[^;\s]+")
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
    if any(p in SECRET_PARTS or p in SECRET_ADDRESS_PARTS or p.endswith(SECRET_PART_SUFFIXES) for p in parts):
        return True
    if _CONNECTION_STRING_NAME.search(name.upper()):
        return True
    return secret_value(value)


def secret_value(value: str) -> bool:
    """The value itself is a credential, whatever its name: a URL or connection string with a
    password or key in it, or a key of a known format (redact.py's credential detectors: provider
    prefixes, private key blocks, JWTs…)."""
    if not value:
        return False
    if _URL_WITH_PASSWORD.search(value) or _URL_WITH_TOKEN_USER.search(value) or _PASSWORD_FIELD.search(value):
        return True
    return redact(value, CREDENTIALS_ONLY).total > 0


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


# prctl(2) option: whether this process may be dumped, and so whether processes of the same user
# may open its /proc/PID/environ, mem, maps… (linux/prctl.h).
_PR_SET_DUMPABLE = 4


def shield_own_environ() -> bool:
    """Make myrm's own /proc entries unreadable to the commands it starts.

    Why: filtering the child's environment is not enough while the child can read the parent's:
    `cat /proc/$PPID/environ` prints the provider keys myrm was started with. A non-dumpable
    process's /proc files belong to root, so a process of the same (non-root) user can no longer
    open them. What it does not stop: a command running as root (root may read any process), and
    it also stops the user's own debugger or py-spy from attaching to myrm. The flag is reset for
    every program myrm starts (execve), so children are unaffected. Returns whether it is set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
