"""A hook planted anywhere under the workspace never runs: not in the sandbox (however deep the
repository, whether it existed or the command created it) and not in myrm's own git calls on the
host. Evidence: the file a hook would create, checked on the host."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.security.sandbox_calls import bash, turn

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def _repo(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run([*GIT, "init", "-q", str(path)], check=True)


def _plant(repo: str, evidence: Path) -> str:
    return (
        f"mkdir -p {repo}/.git/hooks && printf '#!/bin/sh\\ntouch {evidence}\\n' > {repo}/.git/hooks/pre-commit "
        f"&& chmod +x {repo}/.git/hooks/pre-commit"
    )


def _commit(repo: str) -> str:
    return f"git -C {repo} -c user.name=t -c user.email=t@e commit -q --allow-empty -m x"


async def test_a_hook_planted_deeper_than_the_scan_never_runs(tmp_path):
    workspace = tmp_path / "ws"
    deep = "a/b/c/d/vendored"
    _repo(workspace / deep)
    scripts = tmp_path / "s"
    scripts.mkdir()
    evidence = workspace / "hook-ran"
    # Planted by a script the model wrote (a file the seatbelt cannot read), then run.
    (workspace / "setup.sh").write_text(_plant(deep, evidence) + "\n")
    log = await turn(workspace, scripts, ["sh setup.sh", _commit(deep)])
    assert [f.status for f in log.finished] == ["ok", "ok"], [f.content for f in log.finished]
    assert not evidence.exists()


async def test_a_hook_under_a_skipped_folder_or_in_a_repo_made_by_the_call_never_runs(tmp_path):
    workspace = tmp_path / "ws"
    _repo(workspace / "node_modules" / "pkg")
    workspace.mkdir(exist_ok=True)
    for repo in ("node_modules/pkg", "fresh"):
        evidence = workspace / f"ran-{repo.replace('/', '-')}"
        made = f"git init -q {repo} && " if repo == "fresh" else ""
        result = await bash(workspace, f"{made}{_plant(repo, evidence)} && {_commit(repo)}")
        assert result.status == "ok", result.content
        assert not evidence.exists(), repo


async def test_myrm_own_git_on_the_host_runs_no_planted_hook_or_fsmonitor(tmp_path):
    # A repository whose config was changed before myrm ran (a command without the sandbox, or a
    # checkout): the checkpoint snapshot before each bash call must not run what it names.
    workspace = tmp_path / "ws"
    _repo(workspace)
    evidence = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "hooks"
    hook.mkdir()
    for name in ("pre-commit", "post-index-change", "reference-transaction"):
        (hook / name).write_text(f"#!/bin/sh\ntouch {evidence}\n")
        (hook / name).chmod(0o755)
    subprocess.run(["git", "-C", str(workspace), "config", "core.fsmonitor", f"touch {evidence}; true"], check=True)
    subprocess.run(["git", "-C", str(workspace), "config", "core.hooksPath", str(hook)], check=True)
    (workspace / "a.txt").write_text("x\n")
    scripts = tmp_path / "s"
    scripts.mkdir()
    log = await turn(workspace, scripts, ["echo y > a.txt"])
    assert [f.status for f in log.finished] == ["ok"]
    assert not evidence.exists()


async def test_myrm_own_git_on_the_host_runs_no_filter_the_repository_config_names(tmp_path):
    """A `.git/config` with a clean filter and a `.gitattributes` that applies it to every path:
    the checkpoint snapshot before a bash call (`git add -A`, on the host, outside the sandbox)
    must not run it. The attack pass used this to list the user's hidden config folder from the
    host, and chained it with a write into .git/config."""
    workspace = tmp_path / "ws"
    _repo(workspace)
    evidence = tmp_path / "filter-ran"
    for key, value in (("filter.x.clean", f"sh -c 'touch {evidence}; cat'"), ("filter.x.process", f"touch {evidence}")):
        subprocess.run(["git", "-C", str(workspace), "config", key, value], check=True)
    (workspace / ".gitattributes").write_text("* filter=x\n")
    (workspace / "a.txt").write_text("x\n")
    scripts = tmp_path / "s"
    scripts.mkdir()
    log = await turn(workspace, scripts, ["echo changed > a.txt"])
    assert [f.status for f in log.finished] == ["ok"], [f.content for f in log.finished]
    assert not evidence.exists()
