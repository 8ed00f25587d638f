"""The seccomp filter an offline sandbox runs under: no unix sockets that could reach the host.

Why: a network namespace cuts TCP, UDP and abstract unix sockets, but a unix socket bound to a
path is reached through the file system, and the sandbox sees the host's files (read-only is no
help: connecting to a socket file is not a write). Docker and podman sockets, an ssh
ControlMaster, gpg-agent, IDE and editor servers all answer there. Landlock cannot refuse a
pathname connect on the kernels we run on, and seccomp cannot read the path a connect names, so
the filter refuses to create the socket in the first place:

- `socket(AF_UNIX, …)` fails with EACCES (a program sees "Permission denied");
- `socketpair(AF_UNIX, SOCK_DGRAM)` fails too: a datagram pair can later `connect` or `sendto` any
  socket path. Stream and seqpacket pairs keep working (already connected, they cannot be
  pointed elsewhere), and many tools need them (Python's socketpair, subprocess plumbing);
- `io_uring_setup/enter/register` fail with ENOSYS: io_uring can create and connect sockets
  without any syscall the filter sees; callers fall back to plain syscalls;
- the 32-bit compat ABI has its own numbers, and i386's `socketcall` multiplexer hides the
  socket family behind a pointer, so it is refused whole; x32 calls (a high bit on the x86_64
  number) are refused whole.

The program is classic BPF assembled here with `struct`: a few dozen instructions, no library.
bwrap loads it (`--seccomp FD`) just before it runs the command, after its own setup, so bwrap
itself is not filtered; nothing in the sandbox can remove a filter once loaded.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = 32-bit word at offset k of seccomp_data
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]. Both
# supported machines are little-endian, so an argument's low 32 bits (an int, as the kernel
# reads it) are at 16 + 8 * i.
_NR, _ARCH = 0, 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


AF_UNIX = 1
SOCK_DGRAM = 2
SOCK_TYPE_MASK = 0xF  # SOCK_NONBLOCK and SOCK_CLOEXEC ride in the same argument
X32_SYSCALL_BIT = 0x40000000
# io_uring_setup, io_uring_enter, io_uring_register: one number on every architecture.
IO_URING = (425, 426, 427)


@dataclass(frozen=True)
class Abi:
    """One system-call ABI the filter knows: its audit arch and its socket call numbers."""

    audit_arch: int
    socket: int
    socketpair: int
    socketcall: int | None = None  # i386's multiplexer: refused whole
    x32_bit: bool = False  # x86_64: numbers with the x32 bit are another ABI, refused whole


# machine (platform.machine()) -> native ABI, then the compat ABIs the kernel may also run.
ABIS: dict[str, tuple[Abi, ...]] = {
    "x86_64": (Abi(0xC000003E, 41, 53, x32_bit=True), Abi(0x40000003, 359, 360, socketcall=102)),
    "aarch64": (Abi(0xC00000B7, 198, 199), Abi(0x40000028, 281, 288)),
}
ABIS["amd64"] = ABIS["x86_64"]
ABIS["arm64"] = ABIS["aarch64"]


class _Program:
    """A tiny assembler: instructions with symbolic forward jumps, resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, jt, jf, k) in enumerate(self.code):
            out += struct.pack("<HBBI", code, self._offset(index, jt), self._offset(index, jf), k & 0xFFFFFFFF)
        return bytes(out)

    def _offset(self, index: int, target: object) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[str(target)] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp jump to {target} out of range")
        return offset


def _abi_block(program: _Program, abi: Abi, tag: str) -> None:
    deny_socket, deny_uring = "deny-socket", "deny-uring"
    program.op(_LD_W_ABS, _NR)
    if abi.x32_bit:
        program.op(_JGE, X32_SYSCALL_BIT, deny_socket, 0)
    if abi.socketcall is not None:
        program.op(_JEQ, abi.socketcall, deny_socket, 0)
    for number in IO_URING:
        program.op(_JEQ, number, deny_uring, 0)
    program.op(_JEQ, abi.socket, f"{tag}-socket", 0)
    program.op(_JEQ, abi.socketpair, f"{tag}-pair", 0)
    program.op(_RET, RET_ALLOW)
    program.label(f"{tag}-socket")
    program.op(_LD_W_ABS, _arg_low(0))
    program.op(_JEQ, AF_UNIX, deny_socket, 0)
    program.op(_RET, RET_ALLOW)
    program.label(f"{tag}-pair")
    program.op(_LD_W_ABS, _arg_low(0))
    program.op(_JEQ, AF_UNIX, 0, "allow")
    program.op(_LD_W_ABS, _arg_low(1))
    program.op(_AND, SOCK_TYPE_MASK)
    program.op(_JEQ, SOCK_DGRAM, deny_socket, 0)
    program.op(_RET, RET_ALLOW)


def filter_for(machine: str) -> bytes | None:
    """The assembled filter for this machine's ABIs, or None for a machine it does not know
    (the caller then runs no sandbox rather than an unfiltered one)."""
    abis = ABIS.get(machine.lower())
    if abis is None:
        return None
    program = _Program()
    program.op(_LD_W_ABS, _ARCH)
    for index, abi in enumerate(abis):
        program.op(_JEQ, abi.audit_arch, f"abi{index}", 0)
    # An ABI this filter was not written for: its numbers mean other calls, so refuse them all.
    program.op(_RET, RET_ERRNO | errno.EPERM)
    for index, abi in enumerate(abis):
        program.label(f"abi{index}")
        _abi_block(program, abi, f"abi{index}")
    program.label("allow")
    program.op(_RET, RET_ALLOW)
    program.label("deny-socket")
    program.op(_RET, RET_ERRNO | errno.EACCES)
    program.label("deny-uring")
    program.op(_RET, RET_ERRNO | errno.ENOSYS)
    return program.assemble()


def machine() -> str:
    return platform.machine()


def unsupported_problem(name: str) -> str:
    return (
        f"the sandbox's unix-socket filter knows no system calls for this machine ({name or 'unknown'}; "
        f"known: {', '.join(sorted(k for k in ABIS if k in ('x86_64', 'aarch64')))}), and a sandbox "
        'without it would let commands reach host services; set sandbox = "off" to run bash without one.'
    )


def filter_fd(program: bytes) -> int:
    """A file descriptor holding `program` at offset 0, for bwrap's `--seccomp FD` (the caller
    passes it to the child and closes it after the spawn)."""
    fd = os.memfd_create("myrm-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
