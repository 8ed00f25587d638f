"""An item's answer read as JSON and checked against the call's schema.

Why jsonschema (the reference validator, already a dependency of the MCP SDK) and not a subset
of our own: the schema comes from the model, and a validator that silently ignores a keyword it
does not know would pass outputs the caller asked to be refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# How much of a refusal the retry and the failure row quote: enough to see the bad part.
ERROR_CHARS = 300
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


@dataclass(frozen=True)
class Checked:
    value: Any = None
    error: str | None = None  # None: `value` satisfies the schema


def schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a usable JSON Schema, or None."""
    from jsonschema import exceptions, validators

    if not isinstance(schema, dict):
        return 'output_schema must be a JSON Schema object, e.g. {"type": "object", ...}.'
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        return f"output_schema is not a valid JSON Schema: {_short(exc.message)}"
    return None


def check_output(text: str, schema: dict[str, Any]) -> Checked:
    """The answer's JSON value if it satisfies `schema`; else the reason, worded for a retry."""
    from jsonschema import validators

    raw = text.strip()
    fenced = _FENCE.match(raw)  # models wrap JSON in a code fence even when told not to
    if fenced:
        raw = fenced.group(1).strip()
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return Checked(error=f"the answer is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})")
    validator = validators.validator_for(schema)(schema)
    problems = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if problems:
        first = problems[0]
        where = "/".join(str(p) for p in first.absolute_path) or "the top level"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Checked(error=f"at {where}: {_short(first.message)}{more}")
    return Checked(value=value)


def _short(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= ERROR_CHARS else flat[: ERROR_CHARS - 1] + "…"
