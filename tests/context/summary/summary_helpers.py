"""Shared builders for the summary tests: a realistic coding-session chunk and store rows."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store.records import MessageRecord

# The llama.cpp server's context; the summarizer is told this window, so chunks are capped to fit.
LLAMA_N_CTX = 4096
DUMMY_API_KEY = "sk-local-test-key-0123456789"
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str = "", *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def tool(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def session_chunk() -> list[dict[str, Any]]:
    """A small but realistic span: ask, read, failing test, edit, passing test, answer."""
    return [
        user(
            "The upload endpoint returns HTTP 500 when the file is empty. Fix it in "
            "src/api/upload.py and keep the UploadValidator API unchanged. Use pytest."
        ),
        assistant("Reading the handler.", call("c1", "file_read", path="src/api/upload.py")),
        tool(
            "c1",
            "def handle_upload(request):\n    data = request.files['file'].read()\n"
            "    size = len(data)\n    ratio = 100 / size\n    return UploadValidator(data).check()\n" * 8,
        ),
        assistant("", call("c2", "bash", command="pytest tests/test_upload.py -q")),
        tool(
            "c2",
            "Error: 1 failed\nZeroDivisionError: division by zero in handle_upload\n"
            "FAILED tests/test_upload.py::test_empty_file - ZeroDivisionError\n" + "trace line\n" * 30,
        ),
        assistant(
            "Guarding the empty case.",
            call(
                "c3",
                "file_edit",
                path="src/api/upload.py",
                old="ratio = 100 / size",
                new="if size == 0:\n        raise EmptyUploadError()\n    ratio = 100 / size",
            ),
        ),
        tool("c3", "edited src/api/upload.py (1 replacement)"),
        assistant("", call("c4", "bash", command="pytest tests/test_upload.py -q")),
        tool("c4", "12 passed in 0.41s"),
        assistant(
            "Fixed: empty uploads now raise EmptyUploadError (HTTP 400) instead of a "
            "ZeroDivisionError; tests/test_upload.py passes (12 tests). Commit 3f9c2ab1 is ready."
        ),
        user("Great. Now also add a MAX_UPLOAD_BYTES limit read from the environment."),
    ]


GOOD_SUMMARY: dict[str, Any] = {
    "user_goal": "Fix the upload endpoint so empty files do not cause HTTP 500.",
    "active_task": "Great. Now also add a MAX_UPLOAD_BYTES limit read from the environment.",
    "completed_actions": [
        "file_read src/api/upload.py: found ratio = 100 / size in handle_upload",
        "pytest tests/test_upload.py: failed with ZeroDivisionError",
        "file_edit src/api/upload.py: raise EmptyUploadError when size == 0",
        "pytest tests/test_upload.py: 12 passed",
    ],
    "key_findings": ["handle_upload divides by the file size; UploadValidator must keep its API"],
    "errors_and_fixes": ["ZeroDivisionError in handle_upload -> guard size == 0 with EmptyUploadError"],
    "files_modified": [{"path": "src/api/upload.py", "change": "empty-file guard raising EmptyUploadError"}],
    "decisions": ["Return HTTP 400 via EmptyUploadError for empty uploads"],
    "constraints_and_preferences": ["keep the UploadValidator API unchanged", "use pytest"],
    "resolved_questions": [],
    "pending_user_asks": ["add a MAX_UPLOAD_BYTES limit read from the environment"],
    "active_state": "tests/test_upload.py passing; commit 3f9c2ab1 ready",
    "artifacts": ["commit 3f9c2ab1"],
    "blocked_items": [],
    "next_steps": ["read MAX_UPLOAD_BYTES from the environment in src/api/upload.py"],
}


def good_answer() -> str:
    return "```json\n" + json.dumps(GOOD_SUMMARY, indent=1) + "\n```"


def rows_of(
    messages: list[dict[str, Any]], tokens: list[int] | None = None, first_id: int = 100
) -> list[MessageRecord]:
    return [
        MessageRecord(
            id=first_id + i,
            session_id="s1",
            seq=i,
            role=m["role"],
            message=m,
            tokens=tokens[i] if tokens else count_message_tokens(m),
            created_at=T0 + 60 * i,
            tool_call_id=m.get("tool_call_id"),
        )
        for i, m in enumerate(messages)
    ]
