"""Build the wheel, install it (not editable) into a fresh venv, and use it as a user would.

Why: an editable install reads files straight from the repository, so a data file the wheel
forgets (the themes once were) only shows on a real install. This runs in CI after the tests:
`myrm --help`, `myrm doctor --deep` (which decodes a real prompt on the embedded model), one
`myrm run` on the embedded model, and the full-screen app started in tmux, all from a workspace
outside the repository with the installed package only.

Usage: python scripts/wheel_smoke.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Start-up of the installed app on a busy 2-core machine (imports, first paint).
SCREEN_TIMEOUT_S = 180.0
# One answer from the embedded model, including its load.
RUN_TIMEOUT_S = 300


def step(title: str) -> None:
    print(f"\n== {title}", flush=True)


def run(
    command: list[str], *, cwd: Path, env: dict[str, str], timeout: float = RUN_TIMEOUT_S, expect: int = 0
) -> subprocess.CompletedProcess[str]:
    print("$ " + " ".join(command), flush=True)
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    sys.stdout.write(done.stdout)
    sys.stdout.write(done.stderr)
    if done.returncode != expect:
        raise SystemExit(f"wheel smoke: `{' '.join(command)}` exited {done.returncode}, expected {expect}")
    return done


def build_wheel(dist: Path) -> Path:
    step("build the wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(ROOT)], check=True)
    wheels = sorted(dist.glob("myrm_tui-*.whl"))
    if not wheels:
        raise SystemExit("wheel smoke: no wheel was built")
    return wheels[-1]


def install(wheel: Path, venv: Path) -> Path:
    step(f"install {wheel.name} into a fresh venv (not editable)")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[local]"], check=True)
    return venv / "bin"


def tmux_app(bin_dir: Path, workspace: Path, env: dict[str, str]) -> None:
    step("the full-screen app in tmux")
    if shutil.which("tmux") is None:
        raise SystemExit("wheel smoke: tmux is not installed")
    name = f"myrm-wheel-{uuid.uuid4().hex[:8]}"
    exit_file = workspace / ".exit-code"
    # Variables go in the command: a running tmux server gives new sessions its own environment.
    command = (
        f"cd {workspace} && env MYRM_CONFIG_DIR={env['MYRM_CONFIG_DIR']} TERM=xterm-256color "
        f"{bin_dir / 'myrm'} --model local/smollm2; echo $? > {exit_file}; sleep 30"
    )
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command],
        check=True,
        env={**env, "TERM": "xterm-256color"},
    )
    try:
        screen = ""
        deadline = time.monotonic() + SCREEN_TIMEOUT_S
        while time.monotonic() < deadline and "Message myrm" not in screen:
            time.sleep(0.3)
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True, check=False
            ).stdout
        print(screen)
        if "Message myrm" not in screen:
            raise SystemExit("wheel smoke: the app never painted its prompt")
        if "Theme file skipped" in screen or "is not installed" in screen:
            raise SystemExit("wheel smoke: the installed app did not find its themes")
        subprocess.run(["tmux", "send-keys", "-t", name, "C-q"], check=True)
        deadline = time.monotonic() + SCREEN_TIMEOUT_S
        while time.monotonic() < deadline and not exit_file.exists():
            time.sleep(0.2)
        code = exit_file.read_text().strip() if exit_file.exists() else "none"
        if code != "0":
            raise SystemExit(f"wheel smoke: the app exited with {code}")
        print("app started, painted and quit with 0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="myrm-wheel-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        wheel = build_wheel(base / "dist")
        bin_dir = install(wheel, base / "venv")
        workspace = base / "workspace"
        workspace.mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update({"MYRM_CONFIG_DIR": str(base / "config"), "PATH": f"{bin_dir}:{env.get('PATH', '')}"})

        step("the package comes from the wheel, with its themes")
        probe = (
            "import myrm_tui, pathlib; from myrm_tui.tui.theming.theme_files import shipped_theme_dir, load_themes; "
            "d = shipped_theme_dir(); t = load_themes([d]); "
            "print(pathlib.Path(myrm_tui.__file__).parent); print(d); print(sorted(t.themes)); "
            "assert 'site-packages' in str(d) and len(t.themes) >= 4 and not t.problems, t.problems"
        )
        run([str(bin_dir / "python"), "-c", probe], cwd=workspace, env=env)

        step("myrm --help")
        run([str(bin_dir / "myrm"), "--help"], cwd=workspace, env=env)
        step("myrm doctor --deep")
        doctor = run([str(bin_dir / "myrm"), "doctor", "--deep"], cwd=workspace, env=env)
        if "local model local/smollm2 answers" not in doctor.stdout:
            raise SystemExit("wheel smoke: doctor did not test the embedded model")
        step("myrm run on the embedded model")
        answer = run(
            [str(bin_dir / "myrm"), "run", "--model", "local/smollm2", "What is the capital of France?"],
            cwd=workspace,
            env=env,
        )
        if not answer.stdout.strip():
            raise SystemExit("wheel smoke: the embedded model answered nothing")
        tmux_app(bin_dir, workspace, env)
        print("\nwheel smoke: all steps passed")
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
