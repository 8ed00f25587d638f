"""MCP server entries, in the shapes users already have: Codex's `[mcp_servers.NAME]` tables in
`config.toml` and Claude Code's `.mcp.json` (`{"mcpServers": {NAME: {...}}}`).

Why stdlib only: the settings loader reads these at every start, and the SDK import costs half a
second; parsing never needs it. Why problems instead of exceptions: a typo in one server entry
must not stop myrm or the other servers (the loader reports each problem with file and line).
Why in settings and not in mcp/: the loader reads them, and settings sit below every other layer
(the MCP client, which starts the servers, sits above the agent).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

STDIO = "stdio"
HTTP = "http"
USER = "user"
WORKSPACE = "workspace"

# `.mcp.json` "type" values: Claude Code writes "stdio" and "http"; "streamable-http" is the
# transport's name in the SDK and in other clients' files. SSE is the deprecated transport the
# SDK still ships; it is refused with a clear sentence rather than half-supported.
_JSON_TYPES = {"stdio": STDIO, "http": HTTP, "streamable-http": HTTP, "streamable_http": HTTP}
# Keys of a `[mcp_servers.NAME]` table (Codex's names; `headers` as Claude Code spells it).
_TOML_KEYS = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "http_headers",
        "headers",
        "bearer_token_env_var",
        "startup_timeout_sec",
        "tool_timeout_sec",
        "enabled",
        "enabled_tools",
        "disabled_tools",
    }
)
_JSON_KEYS = frozenset({"type", "command", "args", "env", "cwd", "url", "headers", "disabled"})


@dataclass(frozen=True)
class McpServerConfig:
    """One configured server. `source` is the file it came from and `scope` user or workspace
    (workspace entries only exist here once the user trusted the file). Mappings are stored as
    sorted pairs: the value is frozen and compares equal when the file says the same thing, so a
    re-read config does not restart a server that did not change."""

    name: str
    transport: str  # STDIO or HTTP
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    bearer_token_env_var: str = ""
    startup_timeout: float | None = None  # None: the `mcp_startup_timeout` setting
    tool_timeout: float | None = None  # None: the `mcp_tool_timeout` setting
    enabled: bool = True
    enabled_tools: tuple[str, ...] | None = None  # None: every tool the server lists
    disabled_tools: tuple[str, ...] = ()
    source: str = field(default="", compare=False)
    scope: str = field(default=USER, compare=False)

    def summary(self) -> str:
        """What runs or where it connects, in one line (trust dialog, doctor, /mcp). Environment
        and header values are not shown, only their names: they may be credentials; so may a
        URL's password or `?token=`, or an argument (`--api-key sk-…`): those are redacted."""
        from myrm_tui.redact import CREDENTIALS_ONLY, redact

        if self.transport == STDIO:
            text = redact(shlex.join([self.command, *self.args]), CREDENTIALS_ONLY).text
            if self.env:
                text += f"  (env: {', '.join(name for name, _ in self.env)})"
            return text
        text = redact(self.url, CREDENTIALS_ONLY).text
        names = [name for name, _ in self.headers]
        if self.bearer_token_env_var:
            names.append(f"Authorization from ${self.bearer_token_env_var}")
        if names:
            text += f"  (headers: {', '.join(names)})"
        return text

    def as_written(self) -> str:
        """Everything the entry asks for, values included as the file spells them (`${VAR}`
        unexpanded): what a user is asked to trust for a workspace server, where an environment
        value like `${OPENAI_API_KEY}` or a header sent to a stranger's URL is the point."""
        if self.transport == STDIO:
            text = shlex.join([self.command, *self.args])
            if self.cwd:
                text += f"  (in {self.cwd})"
            if self.env:
                text += f"  (env: {', '.join(f'{k}={v}' for k, v in self.env)})"
            return text
        parts = [f"{k}: {v}" for k, v in self.headers]
        if self.bearer_token_env_var:
            parts.append(f"Authorization: Bearer ${self.bearer_token_env_var}")
        return self.url + (f"  (headers: {'; '.join(parts)})" if parts else "")

    def offers(self, tool: str) -> bool:
        """Whether the server's tool `tool` is offered to the model (enabled/disabled lists)."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools


@dataclass(frozen=True)
class EntryProblem:
    """Something wrong with one entry; `server` is None for a problem with the whole file."""

    server: str | None
    message: str


@dataclass
class _Reader:
    """Validates one entry's fields, collecting problems (each names the entry and the key)."""

    where: str  # `[mcp_servers.git]` or `mcpServers.git`
    server: str
    problems: list[EntryProblem] = field(default_factory=list)

    def problem(self, message: str) -> None:
        self.problems.append(EntryProblem(self.server, f"{self.where}: {message}"))

    def text(self, table: Mapping[str, Any], key: str) -> str:
        value = table.get(key, "")
        if not isinstance(value, str):
            self.problem(f"`{key}` must be text, not {value!r}; it is ignored.")
            return ""
        return value

    def texts(self, table: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem(f"`{key}` must be a list of texts, not {value!r}; it is ignored.")
            return None
        return tuple(value)

    def pairs(self, table: Mapping[str, Any], key: str) -> tuple[tuple[str, str], ...]:
        value = table.get(key, {})
        if not isinstance(value, Mapping):
            self.problem(f'`{key}` must be a table of texts (NAME = "value"); it is ignored.')
            return ()
        good = []
        for name, item in value.items():
            if isinstance(item, str) and isinstance(name, str) and name:
                good.append((name, item))
            else:
                self.problem(f"`{key}.{name}` must be text, not {item!r}; it is ignored.")
        return tuple(sorted(good))

    def seconds(self, table: Mapping[str, Any], key: str) -> float | None:
        if key not in table:
            return None
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            self.problem(f"`{key}` must be a number of seconds above 0, not {value!r}; the setting applies.")
            return None
        return float(value)

    def flag(self, table: Mapping[str, Any], key: str, default: bool) -> bool:
        value = table.get(key, default)
        if not isinstance(value, bool):
            self.problem(f"`{key}` must be true or false, not {value!r}; {str(default).lower()} applies.")
            return default
        return value

    def unknown(self, table: Mapping[str, Any], known: frozenset[str]) -> None:
        for key in table:
            if key not in known:
                self.problem(f"unknown key `{key}` is ignored (known: {', '.join(sorted(known))}).")

    def endpoint(self, command: str, url: str, transport: str | None) -> str | None:
        """The transport, or None after a problem (exactly one of command and url)."""
        if transport is None:
            if command and url:
                self.problem(
                    "set either `command` (a local server) or `url` (a remote one), not both; the server is skipped."
                )
                return None
            transport = STDIO if command else HTTP if url else None
        if transport is None:
            self.problem("needs `command` (a local server) or `url` (a remote one); the server is skipped.")
            return None
        if transport == STDIO and not command.strip():
            self.problem("a stdio server needs a `command`; the server is skipped.")
            return None
        if transport == HTTP and not url.lower().startswith(("http://", "https://")):
            self.problem(f"`url` must start with http:// or https://, not {url!r}; the server is skipped.")
            return None
        return transport


def server_from_toml(
    name: str, table: Any, *, source: str = "", scope: str = USER
) -> tuple[McpServerConfig | None, list[EntryProblem]]:
    """One `[mcp_servers.NAME]` table (Codex's keys)."""
    reader = _Reader(f"[mcp_servers.{name}]", name)
    if not isinstance(table, Mapping):
        reader.problem("write the server as a table: [mcp_servers.NAME] with `command` or `url`.")
        return None, reader.problems
    reader.unknown(table, _TOML_KEYS)
    command, url = reader.text(table, "command"), reader.text(table, "url")
    transport = reader.endpoint(command, url, None)
    headers = dict(reader.pairs(table, "headers"))
    headers.update(reader.pairs(table, "http_headers"))
    token_var = reader.text(table, "bearer_token_env_var")
    if transport is None:
        return None, reader.problems
    config = McpServerConfig(
        name=name,
        transport=transport,
        command=command,
        args=reader.texts(table, "args") or (),
        env=reader.pairs(table, "env"),
        cwd=reader.text(table, "cwd"),
        url=url,
        headers=tuple(sorted(headers.items())),
        bearer_token_env_var=token_var,
        startup_timeout=reader.seconds(table, "startup_timeout_sec"),
        tool_timeout=reader.seconds(table, "tool_timeout_sec"),
        enabled=reader.flag(table, "enabled", True),
        enabled_tools=reader.texts(table, "enabled_tools"),
        disabled_tools=reader.texts(table, "disabled_tools") or (),
        source=source,
        scope=scope,
    )
    return config, reader.problems


def servers_from_mcp_json(
    text: str, *, source: str = "", scope: str = USER
) -> tuple[list[McpServerConfig], list[EntryProblem]]:
    """Every server of an `.mcp.json` file (Claude Code's shape)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [EntryProblem(None, f"not valid JSON ({exc}); no server in it is used until it is fixed.")]
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        return [], [EntryProblem(None, 'expected {"mcpServers": {"NAME": {...}}}; no server in it is used.')]
    configs: list[McpServerConfig] = []
    problems: list[EntryProblem] = []
    for name, entry in data["mcpServers"].items():
        config, found = _server_from_json(name, entry, source=source, scope=scope)
        problems += found
        if config is not None:
            configs.append(config)
    return configs, problems


def _server_from_json(
    name: str, entry: Any, *, source: str, scope: str
) -> tuple[McpServerConfig | None, list[EntryProblem]]:
    reader = _Reader(f"mcpServers.{name}", name)
    if not isinstance(entry, Mapping):
        reader.problem('write the server as an object: {"command": ...} or {"type": "http", "url": ...}.')
        return None, reader.problems
    reader.unknown(entry, _JSON_KEYS)
    kind = entry.get("type")
    transport = None
    if kind is not None:
        transport = _JSON_TYPES.get(kind) if isinstance(kind, str) else None
        if transport is None:
            why = (
                "the SSE transport is deprecated and not supported; use the server's streamable HTTP "
                'URL with "type": "http"'
                if kind == "sse"
                else f"unknown type {kind!r} (use stdio or http)"
            )
            reader.problem(f"{why}; the server is skipped.")
            return None, reader.problems
    command, url = reader.text(entry, "command"), reader.text(entry, "url")
    transport = reader.endpoint(command, url, transport)
    if transport is None:
        return None, reader.problems
    config = McpServerConfig(
        name=name,
        transport=transport,
        command=command,
        args=reader.texts(entry, "args") or (),
        env=reader.pairs(entry, "env"),
        cwd=reader.text(entry, "cwd"),
        url=url,
        headers=reader.pairs(entry, "headers"),
        enabled=not reader.flag(entry, "disabled", False),
        source=source,
        scope=scope,
    )
    return config, reader.problems
