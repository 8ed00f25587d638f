"""A real MCP server for the tests, written with the official SDK's server API (MCPServer).

Run as `python mcp_test_server.py stdio` or `python mcp_test_server.py http PORT` (streamable
HTTP on 127.0.0.1). `--hang-at-start` sleeps before serving (a server that never answers the
handshake). Its tools cover what a client must survive: a 1 MB result, a tool that raises, one
that hangs, an image, a resource link, a structured result, a tool list that changes, a crash.
"""

from __future__ import annotations

import asyncio
import os
import struct
import sys
import time
import zlib

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import ResourceLink, ToolAnnotations

# The line the big result carries in its middle, so a test can find it in the vault and the index.
NEEDLE = "ZEBRA-NEEDLE-4242"
BIG_CHARS = 1_000_000

server = MCPServer("myrm-test-server", version="1.0")


def tiny_png() -> bytes:
    """A valid 1x1 PNG (so a reader of the stored bytes sees a real image)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def big(size: int = BIG_CHARS) -> str:
    """Return about `size` characters of numbered lines, with a marker line in the middle."""
    lines = []
    count = max(1, size // 40)
    for index in range(count):
        lines.append(NEEDLE if index == count // 2 else f"row {index:07d}: filler text for the big result")
    return "\n".join(lines)


@server.tool()
def boom() -> str:
    """Always fails."""
    raise ValueError("the boom tool exploded on purpose")


@server.tool()
async def hang() -> str:
    """Never returns."""
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool()
def image() -> Image:
    """A 1x1 PNG."""
    return Image(data=tiny_png(), format="png")


@server.tool()
def report_link() -> ResourceLink:
    """A link to the test report resource (not its content)."""
    return ResourceLink(type="resource_link", uri="test://report", name="report", mime_type="text/plain")


@server.resource("test://report", mime_type="text/plain")
def report() -> str:
    return "the report says: all green"


@server.tool()
def weather(city: str) -> dict:
    """Structured result."""
    return {"city": city, "celsius": 21}


@server.tool()
def env_probe(name: str) -> str:
    """Whether an environment variable is visible to this server."""
    return "set" if os.environ.get(name) else "unset"


@server.tool()
async def add_tool(ctx: Context, remove: str = "") -> str:
    """Add a tool named `late_tool` (and remove the tool named `remove`, if any) and announce that
    the tool list changed."""

    def late_tool() -> str:
        """Appeared after the start."""
        return "late"

    server.add_tool(late_tool)
    if remove:
        server.remove_tool(remove)
    await ctx.notify_tools_changed()
    return "added late_tool" + (f", removed {remove}" if remove else "")


@server.tool()
def crash() -> str:
    """Exit the whole server process at once."""
    sys.stderr.write("test server: crashing on request\n")
    sys.stderr.flush()
    os._exit(3)


def main() -> None:
    args = sys.argv[1:]
    sys.stderr.write(f"test server: starting ({' '.join(args)}) pid {os.getpid()}\n")
    sys.stderr.flush()
    if "--hang-at-start" in args:
        time.sleep(3600)
    if args and args[0] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(args[1]))
    else:
        server.run()


if __name__ == "__main__":
    main()
