"""The prompt's placeholder, in a module of its own.

Why apart from widgets/prompt.py: the start screen (screens/start.py) shows the same line in the
first frame, and importing the prompt widget (completion, user prompts, history) costs ~40 ms that
the first paint should not wait for.
"""

from __future__ import annotations

PLACEHOLDER = "Message myrm…  (Enter send · Ctrl+J newline · / commands · @ files · F1 keys)"
