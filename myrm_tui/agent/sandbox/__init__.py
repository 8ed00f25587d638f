"""The bash sandbox: bubblewrap (`bwrap`) on Linux, so a command can only write where it should,
read no secrets, reach nothing it was not allowed to, and use bounded resources.

Why bwrap: it is a small setuid-free tool (user namespaces) that distributions ship, it needs no
daemon and no root, and it starts in milliseconds. What a sandboxed command gets (the exact mounts
are in plan.py, docs/security.md lists them):

- the whole file system read-only, a private empty /tmp and /run, a minimal /dev, its own /proc
  (an empty /run and /tmp also hide the daemon sockets there: docker, D-Bus, ssh-agent, X11);
  toolchains that live under /tmp are bound back read-only (toolchains.py);
- the workspace writable (`workspace-write`) or read-only too (`read-only`);
- the protected paths inside the workspace (.myrm/, .git/, see protected_paths) read-only; a
  missing one is covered by an empty read-only folder for the call, so it cannot be created;
- credential stores, shell histories, other workspaces' stores and /etc/shadow hidden
  (hidden.py; the user's `sandbox_hide` setting adds or removes paths);
- no network (its own network namespace: not even the host's loopback) and no unix sockets that
  could reach host services by path (a seccomp filter, seccomp.py) unless the user allowed the
  network (the `sandbox_network` setting, or a yes to a call that asked for it);
- git that never runs hooks (git_env.py);
- a process and memory limit per call (limits.py);
- its own PID namespace and --die-with-parent: when the call ends, or myrm dies, every process
  it started dies with it, however it was detached (`&`, nohup, setsid, double fork);
- no capabilities, even when myrm runs as root (root in a namespace could otherwise remount /).

Where bwrap is missing or cannot start a filtered sandbox, `sandbox_status` says so (at start, in
`myrm doctor`, in the status bar); every bash call then asks first, even in yolo, and a headless
run refuses it, until the user sets `sandbox = "off"` themselves.
"""

from __future__ import annotations

from myrm_tui.agent.sandbox.plan import SandboxPlan, plan_for
from myrm_tui.agent.sandbox.probe import INSTALL_HINT, PROBE_TIMEOUT_S, BwrapProbe, probe_bwrap
from myrm_tui.agent.sandbox.refusals import headless_network_refusal, no_sandbox_reason
from myrm_tui.agent.sandbox.status import MODES, SandboxStatus, sandbox_status

__all__ = [
    "INSTALL_HINT",
    "MODES",
    "PROBE_TIMEOUT_S",
    "BwrapProbe",
    "SandboxPlan",
    "SandboxStatus",
    "headless_network_refusal",
    "no_sandbox_reason",
    "plan_for",
    "probe_bwrap",
    "sandbox_status",
]
