"""stdin/stdout as the protocol's streams, with stdout kept for the protocol alone.

Why: every byte on stdout must be a JSON-RPC message, and a stray `print` (a library's notice),
a child process that inherits fd 1 (a worker, a hook) or a warning would corrupt the stream the
editor parses and end the session. So the protocol gets its own duplicate of fd 1, and fd 1
itself (with `sys.stdout`) is pointed at stderr, which editors keep as the agent's log.
"""

from __future__ import annotations

import asyncio
import os
import sys

from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES

# One JSON-RPC message is one line, and a prompt with an embedded file can be large: the SDK's own
# limit for its stdio reader.
STDIN_LINE_LIMIT = DEFAULT_STDIO_BUFFER_LIMIT_BYTES


async def protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """(reader of stdin, writer of the protocol's stdout); from here on fd 1 is stderr."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=STDIN_LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    # A StreamReaderProtocol gives the writer the flow control (drain) a pipe needs.
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), protocol_out
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)
