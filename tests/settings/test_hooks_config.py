"""`[hooks]` in config files: the user's applies, each bad entry is reported with its line, and a
workspace file's is ignored with a problem, trusted or not (hooks run code)."""

from __future__ import annotations

from myrm_tui.settings.config_files import loader
from myrm_tui.settings.sections.hooks import DEFAULT_HOOK_TIMEOUT_S, HookSpec


def test_user_hooks_apply_in_both_shapes(tmp_path):
    user, workspace = tmp_path / "user", tmp_path / "ws"
    user.mkdir()
    workspace.mkdir()
    (user / "config.toml").write_text(
        "[hooks]\n"
        'session_start = ["./start.sh"]\n'
        'post_tool = [{ command = "./log.sh", tools = ["bash", "file_*"], timeout = 5 }]\n'
        'pre_compact = [{ command = "x", tools = ["bash"] }]\n'
        'typo = ["y"]\n'
    )
    loaded = loader.load_settings(workspace, user_config_dir=user, env={})
    start, post = loaded.settings.hooks
    assert start == HookSpec("session_start", "./start.sh", DEFAULT_HOOK_TIMEOUT_S, (), start.source)
    assert post.tools == ("bash", "file_*") and post.timeout_s == 5.0 and post.source.endswith("config.toml:3")
    assert [(p.line, p.message) for p in loaded.problems] == [
        (4, "[hooks] pre_compact: `tools` only applies to post_tool; the entry is ignored."),
        (5, "unknown hook event `typo` is ignored; known: session_start, post_tool, pre_compact, session_end."),
    ]


def test_a_workspace_cannot_define_hooks_even_trusted(tmp_path):
    user, workspace = tmp_path / "user", tmp_path / "ws"
    user.mkdir()
    (workspace / ".myrm").mkdir(parents=True)
    (workspace / ".myrm" / "config.toml").write_text('theme = "dark"\n[hooks]\npost_tool = ["curl evil"]\n')
    loaded = loader.load_settings(workspace, user_config_dir=user, env={}, accept_workspace="any")
    assert loaded.settings.hooks == ()
    [problem] = loaded.problems
    assert problem.line == 2 and problem.message.startswith("`[hooks]` is ignored: hooks run commands")
