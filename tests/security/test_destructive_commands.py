"""Whole-folder deletions hidden in code that runs code ask first, even in yolo, by their shape
(an alias, a trap, sed's `e`, vim's `!`, a makefile on stdin, an archiver that deletes, a move out
of the workspace, git rm -r / stash -u, a container's command, fork loops); ordinary commands that
look alike do not ask."""

from __future__ import annotations

import pytest

from myrm_tui.agent.permissions.seatbelt import destructive_reason
from tests.security.sandbox_calls import turn

ATTACKS = {
    "alias in bash -O": "bash -O expand_aliases -c 'alias x=\"rm -rf\"\nx data'",
    "alias other name": "shopt -s expand_aliases; alias clean='rm -r -f'; clean data",
    "trap EXIT": "trap 'rm -rf data' EXIT; echo hi",
    "trap signal list": "trap -- 'find data -delete' INT TERM EXIT",
    "sed 1e": "sed '1e rm -rf data' notes.txt",
    "sed address e": "sed -n '/x/e rm -fr data' notes.txt",
    "sed s///e": "echo 'rm -rf data' | sed 's/.*/&/e'",
    "sed -e e": "sed -e '$e rm -rf data' notes.txt",
    "vim -c !": "vim -c '!rm -rf data' -c q",
    "vim +!": "vim '+!rm -rf data' +q notes.txt",
    "vim system()": "vim -es -c 'call system(\"rm -rf data\")' -c q",
    "nvim --cmd": "nvim --headless --cmd '!rm -rf data'",
    "make -f /dev/stdin": "make -f /dev/stdin <<'EOF'\nall:\n\trm -rf data\nEOF",
    "make -f - herestring": "make -f - <<< $'all:\\n\\t@rm -rf data'",
    "make --eval": "make --eval='x: ; rm -rf data' x",
    "tar --remove-files": "tar --remove-files -czf /tmp/data.tgz data",
    "zip -m": "zip -qrm /tmp/d.zip data",
    "mv to /tmp": "mv data /tmp/x",
    "mv -t home": "mv -t ~/trash data",
    "mv to parent": "mv data ../elsewhere",
    "git rm -r": "git rm -rq data",
    "git rm --recursive": "git rm --recursive -f data",
    "git stash -u": "git stash -u",
    "git stash push --include-untracked": "git stash push --include-untracked -m wip",
    "git stash --all": "git stash --all",
    "docker run rm": "docker run --rm -v $PWD:/w alpine rm -rf /w/data",
    "docker run sh -c": "docker run -v $PWD:/w -w /w alpine sh -c 'rm -rf data'",
    "podman exec": "podman exec -it box rm -rf /w/data",
    "perl fork loop": "perl -e 'fork while 1'",
    "python fork loop": "python3 -c 'import os\nwhile True:\n    os.fork()'",
    "shell background loop": "while true; do sleep 100 & done",
}
HARMLESS = (
    "sed -i 's/foo/bar/g' src/app.py",
    "sed -n '/^def /p' src/app.py",
    "sed 's/e/E/' notes.txt",
    "sed -e 's/version = .*/version = \"1.2\"/' pyproject.toml",
    "sed '/^$/d; s/[[:space:]]*$//' notes.txt",
    "vim -c 'set number' notes.txt",
    "nvim --headless -c 'qa'",
    "make test",
    "make -j4 -f Makefile.ci build",
    "tar -czf dist.tgz dist",
    "tar -xzf vendor.tgz -C vendor",
    "zip -r release.zip build",
    "mv old.txt new.txt",
    "mv src/a.py src/b.py",
    "mv build/*.whl dist/",
    "git rm --cached -r .idea",
    "git rm old.txt",
    "git stash",
    "git stash pop",
    "git stash list",
    "docker run --rm alpine ls -la /",
    "docker run --rm -v $PWD:/w python:3.12 python -m pytest",
    "docker build -t app .",
    "trap 'echo cleanup' EXIT",
    "trap - EXIT",
    "alias ll='ls -la'",
    "python3 -c 'for i in range(3): print(i)'",
    "perl -ne 'print if /x/' notes.txt",
    "while true; do make test && break; sleep 5; done",
    'for f in *.py; do python -m py_compile "$f" & done; wait',
)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_each_shape_asks(name):
    assert destructive_reason(ATTACKS[name]), ATTACKS[name]


@pytest.mark.parametrize("command", HARMLESS)
def test_ordinary_commands_do_not_ask(command):
    assert destructive_reason(command) is None


async def test_yolo_asks_before_each_and_nothing_is_deleted_on_a_no(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "data").mkdir(parents=True)
    (workspace / "data" / "keep.txt").write_text("precious\n")
    (workspace / "notes.txt").write_text("x\n")
    scripts = tmp_path / "s"
    scripts.mkdir()
    chosen = ["trap EXIT", "sed 1e", "make -f /dev/stdin", "tar --remove-files", "mv to /tmp", "alias in bash -O"]
    log = await turn(workspace, scripts, [ATTACKS[name] for name in chosen], approve=False)
    assert len(log.approvals) == len(chosen)
    assert all(a.destructive for a in log.approvals)
    assert [f.status for f in log.finished] == ["denied"] * len(chosen)
    assert (workspace / "data" / "keep.txt").read_text() == "precious\n"
