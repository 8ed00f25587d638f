"""What the agent says when the sandbox stands between a command and what it asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from myrm_tui.agent.sandbox.status import SandboxStatus

if TYPE_CHECKING:  # the approvals module imports this package; the type is only named here
    from myrm_tui.agent.permissions.approvals import Refusal


def no_sandbox_reason(status: SandboxStatus) -> str:
    """Why a command must ask when a configured sandbox cannot start (even in yolo; a headless
    run then refuses it): what is wrong, what to install, and the explicit way out."""
    return (
        f"bash has no sandbox here ({status.problem.rstrip('.')}); install or fix bubblewrap, or set "
        'sandbox = "off" in your user config (or MYRM_SANDBOX=off) to run commands without one'
    )


def headless_network_refusal(summary: str) -> Refusal:
    """What a headless run says when a command asks for the network: no flag of `myrm run`
    grants it (yolo does not), only a person's yes or the `sandbox_network` setting."""
    from myrm_tui.agent.permissions.approvals import Refusal

    return Refusal(
        for_model=(
            f"not run: {summary} asks for network access, which needs a person's yes, and this "
            "headless run has nobody to ask. Do not retry it; tell the user what you needed the "
            "network for."
        ),
        for_user=(
            f"not run: {summary} — the command asks for network access, which the sandbox only "
            "allows after a person's yes; set sandbox_network = true (MYRM_SANDBOX_NETWORK=1) to "
            "allow the network for every command."
        ),
    )
