"""Whether bash commands really run in the sandbox, and the words that say so.

Why apart from the probe: the configured mode (a setting) and what this machine can do (the
probe) combine into one answer that the status bar, `myrm doctor`, the start notice and the
bash tool all read; a headless run refuses bash when a configured sandbox cannot start.
"""

from __future__ import annotations

from dataclasses import dataclass

from myrm_tui.agent.sandbox.probe import BwrapProbe, probe_bwrap

MODES = ("workspace-write", "read-only", "off")


@dataclass(frozen=True)
class SandboxStatus:
    mode: str  # the configured mode
    active: bool  # commands are really wrapped in bwrap
    probe: BwrapProbe | None
    problem: str  # why a configured sandbox is not active ("" when active or off)

    @property
    def broken(self) -> bool:
        """A sandbox is configured (not "off") but cannot run here."""
        return self.mode != "off" and not self.active

    def badge(self) -> str | None:
        """A few words for the status bar when bash is not in the default sandbox."""
        if self.mode == "off":
            return "sandbox off"
        if not self.active:
            return "no sandbox"
        if self.mode == "read-only":
            return "sandbox read-only"
        return None

    def start_notice(self) -> str | None:
        """The sentence said once at start when a configured sandbox cannot run."""
        if not self.broken:
            return None
        return (
            f"bash runs without a sandbox: {self.problem} Commands can write anywhere you can and "
            'reach the network; each one asks first, even in yolo. Set `sandbox = "off"` in your '
            "user config to make that explicit."
        )


def sandbox_status(mode: str) -> SandboxStatus:
    if mode == "off":
        return SandboxStatus("off", False, None, "")
    if mode not in MODES:
        # An unknown mode fails closed to the strictest sandbox, never to none.
        mode = "read-only"
    probe = probe_bwrap()
    return SandboxStatus(mode, probe.works, probe, probe.problem)
