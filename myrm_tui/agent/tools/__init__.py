"""The agent's tools: one module per concern, offered to the model through `registry`."""

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.registry import ToolRegistry, default_tools

__all__ = ["ApprovalPreview", "Tool", "ToolContext", "ToolError", "ToolRegistry", "ToolResult", "default_tools"]
