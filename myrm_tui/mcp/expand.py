"""`${VAR}` and `${VAR:-default}` in server entries, expanded from the environment at start.

Why at start and not when the file is read: the expanded values are often credentials
(`"Authorization": "Bearer ${GITHUB_TOKEN}"`); keeping them out of the settings value keeps them
out of `myrm doctor`, the trust dialog and anything else that prints configuration. Why a
variable that is missing fails the server instead of expanding to "": an empty token turns into a
confusing 401 from the server, a named missing variable is one clear sentence.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from myrm_tui.settings.sections.mcp_servers import McpServerConfig

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingVariable(ValueError):
    """A `${VAR}` without a default names a variable that is not set."""


def expand(text: str, env: Mapping[str, str], where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise MissingVariable(
            f"${{{name}}} in {where} is not set in the environment; export it or write ${{{name}:-default}}"
        )

    return _REFERENCE.sub(replace, text)


def expanded(config: McpServerConfig, env: Mapping[str, str]) -> McpServerConfig:
    """The entry with every reference in command, args, env, cwd, url and headers replaced;
    `bearer_token_env_var` becomes an Authorization header. Raises MissingVariable."""

    def pairs(items: tuple[tuple[str, str], ...], what: str) -> tuple[tuple[str, str], ...]:
        return tuple((key, expand(value, env, f"{what}.{key}")) for key, value in items)

    headers = pairs(config.headers, "headers")
    if config.bearer_token_env_var:
        token = env.get(config.bearer_token_env_var)
        if not token:
            raise MissingVariable(
                f"bearer_token_env_var names {config.bearer_token_env_var}, which is not set in the environment"
            )
        headers = (*[(k, v) for k, v in headers if k.lower() != "authorization"], ("Authorization", f"Bearer {token}"))
    return dataclasses.replace(
        config,
        command=expand(config.command, env, "command"),
        args=tuple(expand(arg, env, f"args[{i}]") for i, arg in enumerate(config.args)),
        env=pairs(config.env, "env"),
        cwd=expand(config.cwd, env, "cwd"),
        url=expand(config.url, env, "url"),
        headers=headers,
    )
