"""Host unix sockets are out of reach of an offline sandbox (docker/podman, ssh ControlMaster, IDE
servers answer on a socket file, and a read-only mount does not stop a connect).

A real unix socket server listens in a temp HOME outside the workspace and counts connections;
every variant must leave the count at zero, while socketpair-based plumbing keeps working and a
command the user let onto the network may reach the socket again.
"""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.security.sandbox_calls import bash, turn

# ruff: noqa: E501 (the attack commands read best on one line each)

PY = sys.executable


@dataclass
class UnixServer:
    path: Path
    hits: list[int] = field(default_factory=list)
    datagrams: list[bytes] = field(default_factory=list)


@pytest.fixture
def server(monkeypatch) -> Iterator[UnixServer]:
    # Not under /tmp: the sandbox has a private /tmp, so a socket there is out of reach for a
    # trivial reason. A HOME under /var/tmp is seen by the sandbox as the real one would be.
    home = Path(tempfile.mkdtemp(prefix="myrm-sock-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(home))
    served = UnixServer(home / "agent.sock")
    stream = socket.socket(socket.AF_UNIX)
    stream.bind(str(served.path))
    stream.listen(8)
    stream.settimeout(0.1)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(home / "log.sock"))
    dgram.settimeout(0.1)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = stream.accept()
            except OSError:
                continue
            served.hits.append(1)
            conn.sendall(b"answered\n")
            conn.close()

    def receive() -> None:
        while not stop.is_set():
            try:
                served.datagrams.append(dgram.recv(64))
            except OSError:
                continue

    threads = [threading.Thread(target=accept, daemon=True), threading.Thread(target=receive, daemon=True)]
    for thread in threads:
        thread.start()
    yield served
    stop.set()
    for thread in threads:
        thread.join()
    stream.close()
    dgram.close()
    shutil.rmtree(home, ignore_errors=True)


def variants(sock: Path) -> dict[str, str]:
    log = sock.parent / "log.sock"
    return {
        "python connect": f"{PY} -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{sock}'); print(s.recv(9))\"",
        "python nonblocking cloexec": (
            f'{PY} -c "import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_STREAM|socket.SOCK_NONBLOCK'
            f"|socket.SOCK_CLOEXEC); s.setblocking(True); s.connect('{sock}'); print(s.recv(9))\""
        ),
        "python seqpacket": f"{PY} -c \"import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect('{sock}')\"",
        "curl --unix-socket": f"curl -s -m 3 --unix-socket {sock} http://x/",
        "perl IO::Socket::UNIX": f'perl -MIO::Socket::UNIX -e \'my $s = IO::Socket::UNIX->new(Peer => "{sock}") or die "no: $!"; print <$s>\'',
        "node net.connect": f"node -e \"require('net').connect('{sock}').on('data', d => process.stdout.write(d))\"",
        "symlink in /tmp": f"ln -s {sock} /tmp/s && {PY} -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('/tmp/s')\"",
        "dgram socketpair re-pointed": (
            f'{PY} -c "import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); '
            f"a.sendto(b'leak', '{log}')\""
        ),
        "dgram sendto": f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'leak', '{log}')\"",
        "io_uring setup": (
            f'{PY} -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); p = ctypes.create_string_buffer(120); '
            "fd = libc.syscall(425, 8, p); print('io_uring', 'refused' if fd < 0 else 'created', os.strerror(ctypes.get_errno()))\""
        ),
    }


async def test_a_yolo_model_cannot_reach_a_host_unix_socket(server, workspace_and_scripts):
    workspace, scripts = workspace_and_scripts
    command = variants(server.path)["python connect"]
    log = await turn(workspace, scripts, [command])
    [finished] = log.finished
    assert log.approvals == []  # nothing asked: the sandbox, not the seatbelt, stops it
    assert finished.status == "error" and "answered" not in finished.content
    assert "Permission denied" in finished.content
    assert "unix sockets cannot be created" in finished.content  # the model is told why
    assert server.hits == []


@pytest.mark.parametrize("name", list(variants(Path("/x"))))
async def test_no_variant_reaches_the_host_socket(server, tmp_path, name):
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    result = await bash(workspace, variants(server.path)[name])
    assert "answered" not in result.content, result.content
    assert server.hits == [] and server.datagrams == [], result.content
    if name == "io_uring setup":
        assert "io_uring refused" in result.content, result.content


async def test_socketpair_plumbing_still_works_inside(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    code = (
        "import socket, multiprocessing as mp\n"
        "a, b = socket.socketpair(); a.sendall(b'pair'); print(b.recv(4).decode())\n"
        "s, t = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.send(b'seq'); print(t.recv(3).decode())\n"
        "x, y = mp.Pipe(); x.send('pipe'); print(y.recv())\n"
        "print(socket.create_server(('127.0.0.1', 0)).getsockname()[0])\n"
    )
    (workspace / "plumbing.py").write_text(code)
    result = await bash(workspace, f"{PY} plumbing.py")
    assert result.status == "ok", result.content
    for expected in ("pair", "seq", "pipe", "127.0.0.1"):
        assert expected in result.content


async def test_a_command_allowed_onto_the_network_reaches_the_socket_again(server, tmp_path):
    # The filter belongs to the offline sandbox: the user's yes (or sandbox_network) lifts it.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = await bash(workspace, variants(server.path)["python connect"], sandbox_network=True)
    assert "answered" in result.content, result.content
    assert server.hits == [1]


@pytest.fixture
def workspace_and_scripts(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    return workspace.resolve(), scripts
