"""The one settings schema: every configurable value, its type, default and help.

Config files, `MYRM_*` environment variables, `myrm doctor` and the TUI settings screen are all
read from SETTINGS, so a value is declared once; the few CLI flags that set a value (`--model`,
`--approve`, ...) are declared in cli.py and checked against SETTINGS when applied
(env_layer.apply_flags: an unknown key is a programming error). The typed attributes
of Settings are generated too, into settings/typed_values.py: after changing SETTINGS, run
`python -m myrm_tui.settings.gen_typed` (tests/settings/test_typed_values.py says when it is due).
"""

from __future__ import annotations

from myrm_tui.settings.setting_spec import FREE, NEEDS_TRUST, TIGHTEN_ONLY, USER_ONLY, SettingSpec

# A list of tool names as the registry spells them (letters, digits, `_`, `-`, `.` for MCP
# servers), separated by commas or spaces: the `protected_tools` setting.
TOOL_NAME = r"[A-Za-z][\w.-]{0,63}"
TOOL_NAME_LIST = rf"\s*(?:{TOOL_NAME}(?:[,\s]+{TOOL_NAME})*)?[,\s]*"
# The `window_cap` setting (llm/models/capability_class.py): a word, or a window of at least 1000 tokens
# (less leaves no room for the fixed prompt prefix and an answer).
WINDOW_CAP = r"\s*(?:auto|off|[1-9][0-9]{3,8})\s*"


SETTINGS: tuple[SettingSpec, ...] = (
    # model, lite_model and api_base keep the NEEDS_TRUST default: they pick who receives the
    # prompt, the code in it and the user's key (and who bills for it).
    SettingSpec(
        "model",
        str,
        "",
        "Main model, a litellm name (e.g. anthropic/claude-sonnet-4-5) or "
        "local/smollm2. Empty: the first provider with an API key, else the local model.",
    ),
    # Empty (automatic) and "off" are the sentinels of llm/models/lite.py (LITE_AUTO, LITE_OFF).
    SettingSpec(
        "lite_model",
        str,
        "",
        "Cheaper model for summaries. Empty: automatic (the main provider's small model when the "
        'main model is a large one and its key is set); "off": the main model.',
    ),
    # Off by default: measured in docs/context-engine.md ("When summaries are written"), the wait
    # before a removal is several summarizer calls in a row, while summaries prepared between
    # steps and after turns cover most removals without a pause.
    SettingSpec(
        "summary_wait",
        bool,
        False,
        "Before old turns are removed, wait for the summarizer "
        "model to write the summaries still missing (else they are extracted without a model).",
        section="advanced",
        from_workspace=FREE,
    ),
    # auto follows the engine default (EngineConfig.restate_objective), measured in
    # docs/context-engine.md ("Objective restated after a compaction").
    SettingSpec(
        "restate_objective",
        str,
        "auto",
        "After older turns are summarized, restate the session's first request (and the newest summary's "
        "blockers and next steps) at the end of the prompt: auto (the engine default), on, off.",
        choices=("auto", "on", "off"),
        section="advanced",
        from_workspace=FREE,
    ),
    # Both spend money on requests nobody asked for (agent/cache_warmth.py; cost against savings in
    # docs/benchmarks.md, "Idle gaps"): off by default, and a workspace file needs trust to turn them on.
    SettingSpec(
        "cache_preheat",
        bool,
        False,
        "When a session opens and after a compaction between turns, send the prompt the next message "
        "starts with once, with a 1-token answer, so the provider's prompt cache is warm before your "
        "next message (TUI only).",
        section="advanced",
    ),
    SettingSpec(
        "cache_keepalive",
        bool,
        False,
        "While you are idle, resend the last request (1-token answer) just before the provider's cache "
        "lifetime runs out, at most 12 times per pause (TUI only). Pays off for pauses under ~45 min.",
        section="advanced",
    ),
    # A paid, uncached model call per big output (agent/turn/arrival_summary.py): off by default, and a
    # workspace file needs trust to turn it on.
    SettingSpec(
        "arrival_summary",
        bool,
        False,
        "Send a big tool output that no filter understands (a log, prose; over ~5k tokens) to the "
        "summarizer model (the lite model if set) and show the agent its summary with the head and tail; "
        "the whole output stays in the vault. One extra model call per such output.",
        section="advanced",
    ),
    SettingSpec(
        "api_base", str, "", "Custom OpenAI-compatible endpoint for the main model (Ollama, vLLM, LM Studio…)."
    ),
    SettingSpec(
        "prompt_mode",
        str,
        "full",
        "System prompt: full (the default), lean (shorter guidance), naked (no guidance), search (look-ups: "
        "only file_read, grep, glob and the ctx_* tools are offered).",
        choices=("full", "lean", "naked", "search"),
        from_workspace=FREE,
    ),
    SettingSpec(
        "approval",
        str,
        "ask",
        "Which tool calls need a yes: ask (bash and writes), "
        "auto-edit (bash only), yolo (none but destructive commands), deny (refuse all).",
        choices=("ask", "auto-edit", "yolo", "deny"),
        from_workspace=TIGHTEN_ONLY,
        strictness=("deny", "ask", "auto-edit", "yolo"),
    ),
    SettingSpec(
        "max_steps", int, 50, "Most model calls in one turn before the agent stops.", from_workspace=FREE, minimum=1
    ),
    SettingSpec(
        "max_output_tokens", int, 4096, "Output tokens reserved and requested per call.", from_workspace=FREE, minimum=1
    ),
    # 120 s: long enough for a test suite or a build, short enough that a hung command is noticed.
    SettingSpec(
        "bash_timeout",
        float,
        120.0,
        "Seconds before a bash command's process group is killed.",
        section="tools",
        from_workspace=FREE,
        above=0,
    ),
    # 600 s: a full test suite or a release build fits; a longer job belongs in `background: true`.
    # It caps bash_timeout too, so a workspace file (bash_timeout is free there) cannot make every
    # call hang for an hour. USER_ONLY: a repository must not lift it.
    SettingSpec(
        "bash_timeout_max",
        float,
        600.0,
        "The longest timeout a bash command may get, whatever the model asks for or bash_timeout says.",
        section="tools",
        from_workspace=USER_ONLY,
        above=0,
    ),
    # 30k chars (~8k tokens): above this a tool output goes to the vault with a head+tail preview.
    SettingSpec(
        "tool_output_cap",
        int,
        30_000,
        "Characters of a tool output kept inline; the rest is stored in the vault and previewed.",
        section="tools",
        from_workspace=FREE,
        minimum=1,
    ),
    SettingSpec(
        "allow_outside_workspace",
        bool,
        False,
        "Let file tools touch paths outside the workspace root.",
        section="tools",
        from_workspace=TIGHTEN_ONLY,
        strictness=(False, True),
    ),
    # workspace-write: builds, tests and installs into the workspace keep working while nothing
    # outside it (and not .git/.myrm or the shell's startup files) can be changed by a command.
    SettingSpec(
        "sandbox",
        str,
        "workspace-write",
        "Where bash commands may write (bubblewrap on Linux): "
        "workspace-write (the workspace and a private /tmp), read-only (only the private /tmp), "
        "off (no sandbox; approvals are the only guard). When bwrap cannot run, every command asks "
        "first (even in yolo) and headless runs refuse bash, until this is set to off.",
        choices=("workspace-write", "read-only", "off"),
        section="tools",
        from_workspace=TIGHTEN_ONLY,
        strictness=("read-only", "workspace-write", "off"),
    ),
    SettingSpec(
        "sandbox_network",
        bool,
        False,
        "Let sandboxed bash commands use the network. When false, "
        "a command that asks for the network (network: true) needs a yes, even in yolo.",
        section="tools",
        from_workspace=TIGHTEN_ONLY,
        strictness=(False, True),
    ),
    # The sandbox's hidden paths (agent/sandbox/hidden.py lists the defaults): USER_ONLY, so a
    # workspace file can never un-hide a credential store, trusted or not.
    SettingSpec(
        "sandbox_hide",
        str,
        "",
        "More paths sandboxed commands cannot read, separated by commas (absolute or ~/…); an entry "
        "starting with ! un-hides one of the defaults (~/.ssh, ~/.aws, ~/.netrc, ~/.git-credentials, "
        "gh/docker/kube configs, shell histories, other workspaces' .myrm, /etc/shadow…), "
        'e.g. "~/.config/rclone, !~/.npmrc".',
        section="tools",
        from_workspace=USER_ONLY,
        pattern=r"\s*(?:!?\s*[~/][^,]*(?:,\s*!?\s*[~/][^,]*)*)?[,\s]*",
        pattern_words="paths separated by commas, each absolute or starting with ~ (! to un-hide)",
    ),
    # 1024 tasks (processes and threads) per call: peaks sampled from a pids cgroup here were 1 for
    # `pytest -q`, 18 for `xargs -P 16`, 33 for a 32-thread pool; `make -j` or a thread per core on a
    # 64-core machine stays in the low hundreds, while a fork bomb reaches 1024 within a second and
    # stops there.
    SettingSpec(
        "sandbox_max_processes",
        int,
        1024,
        "Most processes and threads one sandboxed bash call may run at once (0: no limit).",
        section="tools",
        from_workspace=USER_ONLY,
        minimum=0,
    ),
    # 0 = half of this machine's memory: a big build fits, and the desktop and myrm keep the rest.
    SettingSpec(
        "sandbox_max_memory_mb",
        int,
        0,
        "Memory (MiB) one sandboxed bash call may use: the whole call when myrm can make a cgroup "
        "(as root, usually), each process otherwise; 0: half of this machine's memory.",
        section="tools",
        from_workspace=USER_ONLY,
        minimum=0,
    ),
    SettingSpec(
        "shell_env_passthrough",
        str,
        "",
        "Environment variables passed to bash commands although "
        "they look like secrets (names with KEY, TOKEN, SECRET, PASSWORD…, provider keys), "
        'separated by commas or spaces, e.g. "GITHUB_TOKEN, NPM_TOKEN".',
        section="tools",
    ),
    # 20 s: a Python or Node server already installed starts in under 2 s here (bench/mcp_overhead.py);
    # `uvx`/`npx` fetching a package on first use needs more, and a server that has not answered
    # in 20 s is more likely hung than slow (Codex's default is 10 s, users raise it for uvx).
    SettingSpec(
        "mcp_startup_timeout",
        float,
        20.0,
        "Seconds an MCP server may take to start and list its "
        "tools; then it is stopped and /mcp shows why (per server: startup_timeout_sec).",
        section="tools",
        shapes_agent=False,
        from_workspace=FREE,
        above=0,
    ),
    # 120 s, like bash_timeout: a tool doing real work (a search, a build) fits; a hung one is noticed.
    SettingSpec(
        "mcp_tool_timeout",
        float,
        120.0,
        "Seconds an MCP tool call may take before it is abandoned with an error (per server: tool_timeout_sec).",
        section="tools",
        shapes_agent=False,
        from_workspace=FREE,
        above=0,
    ),
    SettingSpec(
        "mcp_trust_read_only",
        bool,
        False,
        "Let MCP tools that the server marks read-only "
        "(readOnlyHint) run without asking. The hint comes from the server, so it is off by default.",
        section="tools",
        from_workspace=TIGHTEN_ONLY,
        strictness=(False, True),
    ),
    # 30 s: a docs page or a README arrives in well under a second; a server that trickles a page
    # for longer is stalling the turn (the whole fetch, redirects included, must end by then).
    SettingSpec(
        "web_fetch_timeout",
        float,
        30.0,
        "Seconds a web_fetch call may take in all, redirects included; then it stops with what arrived so far.",
        section="tools",
        from_workspace=FREE,
        above=0,
    ),
    SettingSpec(
        "web_fetch_allow_private",
        bool,
        False,
        "Let web_fetch reach loopback, private-network and "
        "link-local addresses (localhost, 10.x, 192.168.x, cloud metadata at 169.254.169.254). Off: a "
        "page or a model cannot make myrm probe your machine or network.",
        section="tools",
        from_workspace=TIGHTEN_ONLY,
        strictness=(False, True),
    ),
    # off by default: thinking costs output tokens and time, and a provider's own default is the
    # behaviour users already know; the setting names the effort the user asks for.
    SettingSpec(
        "reasoning_effort",
        str,
        "off",
        "Reasoning (thinking) effort for models that support it "
        "(the model registry says which): off sends nothing (the provider's default), low, medium, "
        "high are passed through litellm (Anthropic: a thinking budget; OpenAI: reasoning_effort). "
        'Per model: reasoning_effort under [models."NAME"].',
        choices=("off", "low", "medium", "high"),
        from_workspace=FREE,
    ),
    # 600 s: a long answer from a slow hosted model or the CPU model fits; a server trickling
    # tokens cannot hold a turn longer than this (the deadline is for the whole call, not a chunk).
    SettingSpec(
        "llm_timeout",
        float,
        600.0,
        "Seconds a model call may take in all, first token to "
        "last, retries included; then it is abandoned and what arrived is kept.",
        section="advanced",
        from_workspace=FREE,
        above=0,
    ),
    # 300 s: a reasoning model thinking before it streams, or the CPU model reading a full window,
    # answers well within it; a server that accepted the request and went silent is given up on
    # (and retried while llm_timeout allows) in half the time llm_timeout would take.
    SettingSpec(
        "llm_first_token_timeout",
        float,
        300.0,
        "Seconds to wait for the first streamed token of an answer before that attempt is abandoned.",
        section="advanced",
        from_workspace=FREE,
        above=0,
    ),
    # 4 tries: enough to ride out a short rate-limit burst without hanging the user for minutes.
    # At most 20: a typo such as 400 would otherwise keep a failing provider busy for hours.
    SettingSpec(
        "llm_max_attempts",
        int,
        4,
        "Tries for a transient provider failure.",
        section="advanced",
        from_workspace=FREE,
        minimum=1,
        maximum=20,
    ),
    SettingSpec(
        "local_threads",
        int,
        0,
        "CPU threads for the embedded model; 0 = all cores.",
        section="advanced",
        from_workspace=FREE,
        minimum=0,
    ),
    # NEEDS_TRUST: a protected output stays in every prompt for good, so a cloned repository must not
    # be able to keep its own tool outputs (a prompt injection among them) in view; only widening is
    # possible (session_note is always protected), so there is nothing for a workspace to tighten.
    SettingSpec(
        "protected_tools",
        str,
        "session_note",
        "Tools whose outputs are never masked or excerpted when older history is compacted, comma-separated "
        "(session_note always is). Each one stays whole in every prompt, so list only small, critical outputs.",
        section="advanced",
        from_workspace=NEEDS_TRUST,
        pattern=TOOL_NAME_LIST,
        pattern_words="tool names separated by commas",
    ),
    # "auto": oldest first on a model with a prompt cache (the cached prefix is cut once), least
    # relevant to the current task first on one without (context/observations/relevance_policy.py).
    SettingSpec(
        "eviction_order",
        str,
        "auto",
        "Which history a full context leaves out first: recency = the oldest turns, relevance = "
        "those least related to the current request; auto = relevance only for models without prompt caching.",
        choices=("auto", "recency", "relevance"),
        section="advanced",
        from_workspace=FREE,
    ),
    # The next three shape what compaction keeps in the prompt, like eviction_order, not what runs
    # or where data goes: FREE. Each default is EngineConfig's (a test compares), measured on the
    # 400-turn 32k replays (docs/context-engine.md, "Seed-audit engine rows").
    # 1: 2 was a near tie: cached cost −2.7 % (coding) / −0.5 % (tool-storm), but R_verbatim −0.010
    # and uncached cost +3.2 % on coding. At most 4: each anchored turn holds the prompt's head for good.
    SettingSpec(
        "prefix_anchor_turns",
        int,
        1,
        "How many of the session's first requests are never left out of the prompt (above 1, each with "
        "its closing answer, not its tool calls); 1 = the first request only.",
        section="advanced",
        from_workspace=FREE,
        minimum=1,
        maximum=4,
    ),
    # 0 (off): a band of 4 cut cached cost 3.5 % (coding) / 1.8 % (tool-storm) and raised R_verbatim
    # 0.015 on tool-storm, but lowered it 0.010 on coding (the whole-list version: 0.364 → 0.335).
    # At most 16: wider bands approach that whole-list reordering, which fragmented the summaries.
    SettingSpec(
        "removal_focus_band",
        int,
        0,
        "When old turns are left out, defer those about the current task's files and symbols within "
        "groups of this many turns; 0 = off (oldest first).",
        section="advanced",
        from_workspace=FREE,
        minimum=0,
        maximum=16,
    ),
    # Off: no figure moved on either replay (their reads fit the 30 % share already), so the
    # tested default stays; a read over 100k characters goes to the vault either way.
    SettingSpec(
        "file_read_exempt",
        bool,
        False,
        "Bound a file read shown whole only by half the room left in the prompt, not also by 30 % of the "
        "context budget; a file over 100k characters is still stored in the vault and previewed.",
        section="advanced",
        from_workspace=FREE,
    ),
    # Off, as EngineConfig (where the figures are): it takes the compaction out of the request
    # that crosses the safety net, but that request goes out whole, ~5 % more tokens on a priced
    # model. Needs trust: a cloned repository must not raise the user's bill.
    SettingSpec(
        "compact_while_answering",
        bool,
        False,
        "When a request crosses the 90 % safety net but still fits, send it whole and compact while the "
        "model answers (the request goes out without the compaction's 10-35 ms of CPU; on a priced model "
        "about 5 % more tokens, the old prefix read once more; on a local model the output that crossed is "
        "read twice, a cost where prompt reading is slow, as on a CPU).",
        section="advanced",
    ),
    # Comis's age windows (context/window/config.py, where each is explained): they shape what compaction
    # keeps, like the three above, so FREE; each default is EngineConfig's (a test compares),
    # measured on a replay they were not tuned on (docs/context-engine.md, "Age windows and file
    # protection"). At most 50 turns / 200 outputs: past that a window holds most of a long
    # session, and compaction below the emergency has nothing left to work on.
    SettingSpec(
        "thinking_keep_turns",
        int,
        0,
        "How many turns before the current one keep the model's reasoning on their text answers "
        "(DeepSeek, Qwen, GLM, Kimi); 0 = only the current turn's. Tool-call turns always keep theirs.",
        section="advanced",
        from_workspace=FREE,
        minimum=0,
        maximum=50,
    ),
    SettingSpec(
        "eviction_min_age",
        int,
        0,
        "A tool output younger than this many turns is never excerpted, masked or replaced by a later "
        "identical one when history is compacted (only the 90 % safety net may); 0 = no minimum age.",
        section="advanced",
        from_workspace=FREE,
        minimum=0,
        maximum=50,
    ),
    SettingSpec(
        "observation_keep_window",
        int,
        0,
        "The newest this many tool outputs stay word for word when history is compacted (only the "
        "90 % safety net may cut them); 0 = no such window.",
        section="advanced",
        from_workspace=FREE,
        minimum=0,
        maximum=200,
    ),
    # It can only lower the window, but a cloned repository setting it to the minimum would make
    # every prompt compact hard and drop history the user relies on: NEEDS_TRUST (the default).
    SettingSpec(
        "window_cap",
        str,
        "auto",
        "The most context window myrm plans with: auto = by model class (local models 32,768 tokens, "
        "small ones such as -mini, Haiku or Flash 128,000, others their full window; a model's own "
        'context_window setting wins); "off" = the full window; or a number of tokens.',
        section="advanced",
        pattern=WINDOW_CAP,
        pattern_words='"auto", "off" or a number of tokens (at least 1000)',
    ),
    SettingSpec(
        "theme", str, "myrm-dark", "TUI theme name.", section="appearance", shapes_agent=False, from_workspace=FREE
    ),
    SettingSpec(
        "animations",
        bool,
        True,
        "Spinners and smooth scrolling in the TUI.",
        section="appearance",
        shapes_agent=False,
        from_workspace=FREE,
    ),
)

SPECS_BY_KEY: dict[str, SettingSpec] = {s.key: s for s in SETTINGS}
