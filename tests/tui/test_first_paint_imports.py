"""The first frame needs neither the agent's turn loop nor the context engine: importing the app
module must not load them (they load with the warm-up or on first use; docs/tui-benchmarks.md,
"Issue 17"). Not a timing: which modules are in `sys.modules`."""

from __future__ import annotations

import subprocess
import sys

DEFERRED = ("myrm_tui.agent.agent", "myrm_tui.agent.tools", "myrm_tui.context.engine", "myrm_tui.agent.undo")


def test_app_module_does_not_import_the_agent_or_the_engine():
    code = f"import sys, myrm_tui.tui.app; print(','.join(m for m in {DEFERRED!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_agent_package_still_exports_agent_on_use():
    from myrm_tui import agent
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.cache import AgentCache

    assert agent.Agent is Agent and agent.AgentCache is AgentCache
