"""Structural trimmers (no command, or a command without a compressor like `cat`)."""

from __future__ import annotations

import json
import re

from tests.context.filters.conftest import filtered


def test_json_skeleton_minified(needle: str) -> None:
    payload = {
        "status": "error",
        "error": {"code": 502, "message": f"upstream failed {needle}"},
        "data": {
            "items": [
                {"id": i, "attributes": {"name": f"n{i}", "tags": ["a", "b"], "deep": {"deeper": {"deepest": i}}}}
                for i in range(500)
            ]
        },
        **{f"extra_{k}": k for k in range(30)},
    }
    text = json.dumps(payload, separators=(",", ":"))
    budget = 2500
    result = filtered(text, budget, "curl -s http://localhost/api", tool="bash")
    assert result.kind == "json"
    assert '"status": "error",' in result.text
    assert needle in result.text  # a top-level error message is a depth-2 scalar
    assert "… 494 more items …" in result.text
    assert re.search(r"… \d+ more keys …", result.text)  # 33 top-level keys > 12
    assert "… object with 3 keys …" in result.text  # depth limit reached inside `attributes`
    assert '"id": 499' not in result.text


def test_json_pretty_input_same_skeleton() -> None:
    rows = [{"id": i, "name": f"row {i}"} for i in range(300)]
    result = filtered(json.dumps(rows, indent=4), 1200, tool="file_read")
    assert result.kind == "json"
    assert "array of 300 items" in result.text
    assert '"id": 0,' in result.text


def test_yaml_outline(needle: str) -> None:
    services = "".join(
        f"  svc{i}:\n    image: img{i}\n    env:\n" + "".join(f"      - K{k}=v{k}\n" for k in range(20))
        for i in range(30)
    )
    text = f"version: '3'\nname: {needle}\nservices:\n{services}"
    result = filtered(text, 1500, tool="file_read")
    assert result.kind == "yaml"
    assert f"name: {needle}" in result.text
    assert "services:" in result.text and "  svc0:" in result.text
    assert "      - K19=v19" not in result.text  # list items past 6 are cut
    assert "  svc29:" not in result.text  # children past 12 are cut


def test_csv_header_and_samples(needle: str) -> None:
    rows = ["id,name,amount,status"] + [f"{i},name{i},{i * 1.5},ok" for i in range(2000)]
    rows.append(f"2000,{needle},0,failed")
    text = "\n".join(rows)
    result = filtered(text, 900, "cat data.csv")
    assert result.kind == "csv"
    assert result.text.splitlines()[1] == "id,name,amount,status" or "id,name,amount,status" in result.text
    assert "2,001 rows × 4 columns" in result.text
    assert "0,name0,0.0,ok" in result.text
    assert needle in result.text  # the last row


def test_html_outline_keeps_title_and_counts(needle: str) -> None:
    body = "\n".join(f'    <div class="card">\n      <p>card {i}</p>\n    </div>' for i in range(300))
    text = (
        f"<!DOCTYPE html>\n<html>\n  <head>\n    <title>{needle} dashboard</title>\n  </head>\n"
        f"  <body>\n    <h1>Overview</h1>\n{body}\n  </body>\n</html>\n"
    )
    result = filtered(text, 1200, tool="web_fetch")
    assert result.kind == "html"
    assert needle in result.text and "<h1>Overview</h1>" in result.text
    assert "div ×300" in result.text and "p ×300" in result.text


def test_xml_outline() -> None:
    items = "\n".join(f'  <item id="{i}">\n    <name>n{i}</name>\n  </item>' for i in range(400))
    text = f'<?xml version="1.0"?>\n<catalog>\n{items}\n</catalog>\n'
    result = filtered(text, 800, tool="file_read")
    assert result.kind == "xml"
    assert "<catalog>" in result.text and "item ×400" in result.text


def test_log_levels_errors_and_tail(needle: str) -> None:
    lines = []
    for i in range(3000):
        level = "INFO" if i % 100 else "WARNING"
        lines.append(f"2024-05-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z {level} worker: processed batch {i}")
    lines[1500] = f"2024-05-01T10:25:00Z ERROR worker: database unreachable {needle}"
    lines.insert(1501, "Traceback (most recent call last):")
    lines.insert(1502, '  File "worker.py", line 12, in run')
    lines.insert(1503, "ConnectionError: refused")
    text = "\n".join(lines)
    result = filtered(text, 2000, tool="file_read")
    assert result.kind == "log"
    assert "levels: INFO 2,970, WARNING 29, ERROR 1" in result.text
    assert needle in result.text and "ConnectionError: refused" in result.text
    assert "processed batch 2999" in result.text  # the tail


def test_markdown_outline(needle: str) -> None:
    sections = "\n\n".join(
        f"## Section {i}\n\nFirst line of section {i}.\n"
        + "\n".join(f"Body line {k} of section {i}." for k in range(30))
        for i in range(20)
    )
    text = f"# Guide {needle}\n\nIntro.\n\n{sections}\n"
    result = filtered(text, 2500, tool="file_read")
    assert result.kind == "markdown"
    assert f"# Guide {needle}" in result.text
    for i in range(20):
        assert f"## Section {i}" in result.text
    assert "Body line 29 of section 10." not in result.text


def test_code_outline_with_line_ranges(needle: str) -> None:
    body = "\n".join(f"def function_{i}(x):\n    y = x + {i}\n    z = y * 2\n    return z\n" for i in range(200))
    text = (
        "import os\nimport sys\n"
        + "".join(f"import mod{i}\n" for i in range(20))
        + f"\n\nclass {needle}:\n    def method(self):\n        return 1\n\n\n{body}"
    )
    result = filtered(text, 3000, tool="file_read")
    assert result.kind == "code"
    assert f"class {needle}:" in result.text
    assert "def function_0(x):" in result.text
    assert re.search(r"… \d+ lines? omitted \(lines \d+–\d+", result.text)  # ranges to recall
    assert "import mod19" not in result.text  # imports past 8 are summarised
    assert "22 imports" in result.text
