"""`@path` attaches a file (as file_read shows it) or a folder (as glob lists it) to the message:
what is found, what is refused, what the model receives (the scripted provider records its
requests), what is stored (a big file: excerpt + vault handle, indexed with the message), what the
transcript shows (one line, not the content), and the same through `myrm run` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import UserMessageStored
from myrm_tui.agent.user_input.attachments import (
    MAX_FILES_PER_MESSAGE,
    TEXT_ATTACH_MAX_BYTES,
    AttachmentError,
    attachment_chips,
    attachment_label,
    attachment_of,
    file_refs,
    load_attachment,
    load_attachments,
    message_content,
)
from myrm_tui.tui.transcript.history import UserItem, build_history
from tests.agent.agent_helpers import drive, settings_for

REPO_ROOT = Path(__file__).resolve().parents[2]


def _load(ref: str, workspace: Path, **values):
    return load_attachment(ref, workspace, workspace, settings_for(**values))


# ------------------------------------------------------------------ finding references


def test_refs_name_existing_files_and_folders_only(workspace: Path):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    (workspace / "README.md").write_text("# readme\n")
    (workspace / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    text = (
        "see @src/app.py, then @README.md. and the folder @src/ — but not @shot.png, "
        "not @missing.py, not me@example.com, not @dataclass, and @src/app.py again"
    )
    assert file_refs(text, workspace) == ["src/app.py", "README.md", "src/"]


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=80))
def test_refs_never_raise_and_only_name_existing_paths(tmp_path_factory, text):
    base = tmp_path_factory.getbasetemp()
    for ref in file_refs(text, base):
        assert (base / Path(ref).expanduser()).exists()  # `@~/x` names a file under the home folder


def test_an_at_word_naming_no_users_home_is_no_reference_and_no_crash(workspace: Path):
    """`Path.expanduser` raises for `~someone` when there is no such user (found by the property
    test above as `@~`-words); a message with `@~draft` must still send."""
    assert file_refs("see @~no-such-user-xyz/notes.md and @~nobody_here", workspace) == []
    with pytest.raises(AttachmentError, match="no such user"):
        _load("~no-such-user-xyz/notes.md", workspace)


# ------------------------------------------------------------------ loading


def test_a_text_file_attaches_as_file_read_shows_it(workspace: Path):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\n\nprint(os.getcwd())\n")
    attached = _load("src/app.py", workspace)
    assert attached.text == (
        '<attached_file path="src/app.py">\n[src/app.py · lines 1-3 of 3]\n'
        "import os\n\nprint(os.getcwd())\n</attached_file>"
    )
    assert attachment_of(attached.text) == ("file", "src/app.py")


def test_a_folder_attaches_its_listing(workspace: Path):
    (workspace / "pkg" / "sub").mkdir(parents=True)
    (workspace / "pkg" / "a.py").write_text("")
    (workspace / "pkg" / "sub" / "b.py").write_text("")
    attached = _load("pkg/", workspace)
    assert attached.kind == "folder" and attached.name == "pkg/"
    assert attached.body.splitlines() == ["[pkg/ · listing]", "pkg/a.py", "pkg/sub/", "pkg/sub/b.py"]


def test_refusals_say_why(workspace: Path, tmp_path: Path):
    (workspace / "blob.bin").write_bytes(b"\x00\x01binary")
    with pytest.raises(AttachmentError, match="binary file"):
        _load("blob.bin", workspace)
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n")
    (workspace / "link.txt").symlink_to(secret)
    for ref in ("../secret.txt", str(secret)):
        with pytest.raises(AttachmentError, match="outside the workspace"):
            _load(ref, workspace)
    with pytest.raises(AttachmentError, match="link.txt is a symbolic link"):  # never followed
        _load("link.txt", workspace)
    assert "outside" in _load(str(secret), workspace, allow_outside_workspace=True).text
    big = workspace / "huge.log"
    with big.open("wb") as handle:
        handle.truncate(TEXT_ATTACH_MAX_BYTES + 1)
    with pytest.raises(AttachmentError, match="over the 10.0 MB attachment limit"):
        _load("huge.log", workspace)
    (workspace / "x.txt").write_text("x")
    with pytest.raises(AttachmentError, match=f"at most {MAX_FILES_PER_MESSAGE}"):
        load_attachments(["x.txt"] * (MAX_FILES_PER_MESSAGE + 1), workspace, workspace, settings_for())


def test_chips_count_what_the_model_gets(workspace: Path):
    (workspace / "small.py").write_text("x = 1\n" * 50)
    (workspace / "big.log").write_text("".join(f"line {i} ok\n" for i in range(20_000)))
    files = [_load("small.py", workspace), _load("big.log", workspace)]
    small, big = attachment_chips(files, 30_000)
    assert small.startswith("attached small.py, ") and small.endswith(" tokens")
    assert big.startswith("attached big.log, ") and big.endswith("(an excerpt; the whole is in the vault)")
    assert float(big.split(", ")[1].split("k")[0]) < 20, "the excerpt is counted, not the 200k-char file"


# ------------------------------------------------------------------ through the agent


def _requests(record: Path) -> list[list[dict]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


async def test_the_model_receives_the_file_and_the_transcript_shows_one_line(store, workspace, script, tmp_path):
    (workspace / "README.md").write_text("# Project\nRun `make dev` to start.\n")
    record = tmp_path / "requests.jsonl"
    model = script({"text": "it says make dev"}, record=str(record))
    session = store.create_session(model=model)
    agent = Agent(store=store, session_id=session.id, settings=settings_for(model), workspace=workspace)
    text = "what does @README.md say?"
    files = load_attachments(file_refs(text, workspace), workspace, workspace, agent.settings)
    log = await drive(agent, message_content(text, [], files))
    user = [m for m in _requests(record)[0] if m["role"] == "user"][-1]
    assert user["content"][0] == {"type": "text", "text": text}
    assert "Run `make dev` to start." in user["content"][1]["text"]
    assert log.of(UserMessageStored)[0].text == text, "the typed text, without the file"
    items = [i for i in build_history(store.messages(session.id)).items if isinstance(i, UserItem)]
    assert items[0].text.startswith(text + "\n[attached README.md, ")
    assert "make dev" not in items[0].text


async def test_a_big_file_is_stored_as_excerpt_plus_handle_and_indexed(store, workspace, script, tmp_path):
    lines = [f"entry {i}: the ferry left on time" for i in range(8000)]
    lines[7990] = "entry 7990: ERROR pelican-lighthouse-5521 the ferry sank"
    (workspace / "ferry.log").write_text("\n".join(lines) + "\n")
    record = tmp_path / "requests.jsonl"
    model = script({"text": "seen"}, record=str(record))
    session = store.create_session(model=model)
    agent = Agent(
        store=store, session_id=session.id, settings=settings_for(model, tool_output_cap=5000), workspace=workspace
    )
    files = load_attachments(["ferry.log"], workspace, workspace, agent.settings)
    await drive(agent, message_content("check @ferry.log", [], files))
    sent = [m for m in _requests(record)[0] if m["role"] == "user"][-1]["content"][1]["text"]
    assert len(sent) < 6000 and "vault://" in sent
    assert "pelican-lighthouse-5521" in sent, "the smart filter keeps the error line"
    handle = sent.split("full: ", 1)[1].split(" ", 1)[0]
    whole = store.vault.read_bytes(handle).decode()
    assert "entry 7999: the ferry left on time" in whole and whole.count("\n") == 8000
    assert store.search(session.id, "entry 7999"), "the whole file is searchable"
    stored = store.messages(session.id)[0].message["content"][1]["text"]
    label = attachment_label(stored)
    assert label is not None
    assert stored == sent and label.endswith("(an excerpt; the whole is in the vault)")


# ------------------------------------------------------------------ myrm run


def _myrm(workspace: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env.update(MYRM_CONFIG_DIR=str(config), PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "myrm_tui", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
def test_myrm_run_attaches_and_says_so(tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "README.md").write_text("# Demo\nThe answer is 42.\n")
    (tmp_path / "outside.txt").write_text("private\n")
    record = tmp_path / "requests.jsonl"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "42"}], "record": str(record)}))
    result = _myrm(workspace, tmp_path / "config", "run", "--model", f"scripted/{script}", "summarise @README.md")
    assert result.returncode == 0, result.stderr
    assert "attached README.md, " in result.stderr and " tokens" in result.stderr
    sent = [m for m in _requests(record)[0] if m["role"] == "user"][-1]["content"]
    assert "The answer is 42." in sent[1]["text"]
    refused = _myrm(workspace, tmp_path / "config", "run", "--model", f"scripted/{script}", "read @../outside.txt")
    assert refused.returncode == 2 and "outside the workspace" in refused.stderr
    assert len(_requests(record)) == 1, "nothing was sent for the refused attachment"
