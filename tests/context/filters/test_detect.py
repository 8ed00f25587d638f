"""Command-line parsing and content sniffing."""

from __future__ import annotations

import json

import pytest

from myrm_tui.context.filters import detect_command, sniff_content, split_command_line


@pytest.mark.parametrize(
    ("line", "tool", "args"),
    [
        ("pytest -x", "pytest", ("-x",)),
        ("cd pkg && PYTHONPATH=. uv run pytest -x 2>&1 | tail -50", "pytest", ("-x",)),
        ("python3 -m pytest tests/ -q", "pytest", ("tests/", "-q")),
        ("/work/venv/bin/python -m pytest", "pytest", ()),
        ("poetry run py.test", "pytest", ()),
        ("python -m unittest -v", "unittest", ("-v",)),
        ("git -C repo --no-pager log --oneline -5", "git", ("log", "--oneline", "-5")),
        ("git -c color.ui=never diff HEAD~1", "git", ("diff", "HEAD~1")),
        ("git grep -n TODO", "grep", ("-n", "TODO")),
        ("sudo -u bob env A=1 timeout 60 cargo test", "cargo", ("test",)),
        ("time make -j4 all", "make", ("-j4", "all")),
        ("echo start; make all", "make", ("all",)),
        ("gcc -Wall -c x.c -o x.o 2> err.txt", "cc", ("-Wall", "-c", "x.c", "-o", "x.o")),
        ("npm install 2>&1 > /tmp/x.log", "npm", ("install",)),
        ("CI=1 npx jest --ci", "jest", ("--ci",)),
        ("uv pip install requests", "pip", ("install", "requests")),
        ("pip3 install -r requirements.txt", "pip", ("install", "-r", "requirements.txt")),
        ("docker buildx build -t app .", "docker-build", ("buildx", "build", "-t", "app", ".")),
        ("docker compose build web", "docker-build", ("compose", "build", "web")),
        ("ls -la | head", "ls", ("-la",)),
        ("find . -name '*.py' | sort", "find", (".", "-name", "*.py")),
        ("grep -rn 'a b' src | head -100", "grep", ("-rn", "a b", "src")),
        ('cd "my dir" && rg foo', "grep", ("foo",)),
        ("git log | grep fix", "git", ("log",)),  # the producer decides the shape, not the filter
        ("cargo build\nls -R", "ls", ("-R",)),
    ],
)
def test_detect_command(line: str, tool: str, args: tuple[str, ...]) -> None:
    cmd = detect_command(line)
    assert cmd is not None
    assert (cmd.tool, cmd.args) == (tool, args)


@pytest.mark.parametrize("line", ["", "   ", "cat foo.json", "./run.sh", "echo hi | tail", 'unterminated "quote'])
def test_unknown_commands_give_none(line: str) -> None:
    assert detect_command(line) is None


def test_split_respects_quotes_and_removes_redirections() -> None:
    chains = split_command_line("A=1 echo 'x && y' 2>/dev/null && sort < in.txt | uniq -c >> out")
    assert chains == [[["A=1", "echo", "x && y"]], [["sort"], ["uniq", "-c"]]]


def test_subcommand_skips_options() -> None:
    cmd = detect_command("npm --silent install left-pad")
    assert cmd is not None and cmd.sub == "install"


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("json", json.dumps({"a": [1, 2, 3], "b": {"c": "d"}}, indent=2)),
        ("json", json.dumps([{"id": i} for i in range(50)])),
        ("html", "<!DOCTYPE html>\n<html><head><title>x</title></head>\n<body><div>hi</div></body></html>"),
        ("xml", '<?xml version="1.0"?>\n<root>\n  <item id="1"/>\n  <item id="2"/>\n</root>'),
        ("log", "\n".join(f"2024-05-01T10:00:{i:02d}Z INFO worker started job {i}" for i in range(20))),
        ("log", "\n".join(f"[{lvl}] message {i}" for i, lvl in enumerate(["INFO", "WARN", "ERROR"] * 5))),
        ("csv", "id,name,score\n" + "\n".join(f"{i},n{i},{i * 3}" for i in range(30))),
        ("tsv", "id\tname\n" + "\n".join(f"{i}\tn{i}" for i in range(30))),
        ("csv", 'id,comment\n1,"hello, world"\n2,"a, b, c"\n3,plain\n'),
        ("yaml", "---\nname: app\nservices:\n  web:\n    image: nginx\n    ports:\n      - 80\n"),
        ("yaml", "name: app\nversion: 3\nservices:\n  web:\n    image: nginx\n  db:\n    image: postgres\n"),
        ("markdown", "# Title\n\nIntro text.\n\n## Install\n\nRun it.\n\n## Usage\n\nMore.\n"),
        ("code", "import os\nimport sys\n\n\ndef main():\n    return 0\n\n\nclass A:\n    pass\n"),
        ("code", 'use std::io;\n\nfn main() {\n    println!("x");\n}\n\npub struct S {\n    a: i32,\n}\n'),
        ("code", 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(1)\n}\n'),
    ],
)
def test_sniff_content(kind: str, text: str) -> None:
    assert sniff_content(text) == kind


@pytest.mark.parametrize(
    "text",
    [
        "",
        "just some words\nand more words\nnothing structured here at all\n",
        "{not json at all",
        "Hello: this is a sentence, with commas; and more\nAnother line entirely different\nok\n",
    ],
)
def test_sniff_plain_text_is_none(text: str) -> None:
    assert sniff_content(text) is None
