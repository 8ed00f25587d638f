"""The engine's knobs, all proportional to the effective budget so a model switch rescales them.

One ladder (fractions of the effective prompt budget B = window − output reserve − margin):
monitor 40% → light 50% → full 70% → emergency 90%. Every tier that rewrites history brings the
prompt down to `target_ratio` in one batch, so the next event is far away and the prompt prefix
stays byte-stable in between (the cache strategy).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineConfig:
    monitor_ratio: float = 0.40
    light_ratio: float = 0.50
    full_ratio: float = 0.70
    emergency_ratio: float = 0.90
    # After a light/full/emergency event the prompt is brought down to this share of B: at the
    # light threshold, so several turns fit before the next event. Tuned on the 800-turn
    # coding replay at 64k (docs/context-engine.md): lower targets make events rarer but the
    # prompt smaller, so each turn's new content is a larger share of it; 0.50 was the best
    # prefix stability for the cost.
    target_ratio: float = 0.50
    # When the head of the prompt must change anyway (the fenced pass was not enough, or whole
    # units must be left out: a full cache break), go further down so such events are rare.
    removal_target_ratio: float = 0.35
    # An emergency (90%: growth outran the cheaper tiers, or they were deferred while the cache
    # was warm) goes as far down as a removal would, so the next emergency is many turns away.
    # Measured on the bench's 400-turn sessions: 3-5% lower cost, R_verbatim unchanged at 64k.
    emergency_target_ratio: float = 0.35
    # Omission markers are kept one per removal (the older ones stay byte-identical); when they
    # add up to more than this share of B they are merged into one.
    marker_cap_ratio: float = 0.08
    # Each summary node keeps the newest user/assistant messages verbatim up to this share of B
    # in tokens (`summary.quotes`): typed facts and decisions stay readable without a recall
    # call. Folds re-select under the same cap. Nodes of different depths do not fold together,
    # so the summary area is about (tree depth + 1) × this share plus headers: 10-25 % of B on
    # the bench's 400-turn sessions (16 % before quotes).
    quote_ratio: float = 0.04
    # The same share once model summaries stand for what is removed (`SummaryDag.model_written`):
    # a body a model wrote, and the auditor accepted, carries the user's stated values and the
    # decisions word for word, so a quote block beside it repeated them; at 4 % of B per node it
    # also kept the summary area over its fold pressure line, and each event paid for more model
    # folds. Measured on chatty-400 `oracle` (docs/benchmarks.md, "Chat cost"): 0 against 0.04,
    # 32k 827 -> 685 kU and R_verbatim 0.944 -> 0.961, 64k 937 -> 897 (0.978 -> 0.983); 0.01
    # cost more than either end (763 kU at 32k, R_verbatim 0.950): a small block still crossed
    # the pressure line. Extractive summaries (no model, or a failed one) keep `quote_ratio`.
    model_quote_ratio: float = 0.0
    # A summary body from the fake summarizers (replay) may use at most this share of B and must
    # be smaller than what it covers, else the node falls back to the extractive summary. Model
    # summaries are checked by the auditor (strictly smaller than their source) and the schema's
    # field caps instead.
    max_node_ratio: float = 0.10
    # All summary nodes together may use at most this share of B; above it the oldest touching
    # nodes fold pairwise, whatever their depths (a 32k session with fragmented removal once
    # grew 50 small nodes, 94 % of B, and ran out of room).
    summary_cap_ratio: float = 0.25
    # The fresh tail (newest turns, verbatim) may use up to this share of the window.
    tail_ratio: float = 0.10
    # New tool outputs above this share of B are filtered when they arrive (a real excerpt
    # keeping failures, errors and summaries, plus the handle to the rest); a 64k window →
    # ~2.3k tokens. New content per turn is what the provider cannot have cached, so this is
    # the main lever on prefix stability and cost. File reads get a larger allowance so the
    # model does not fall into read → truncate → re-read loops.
    ingest_filter_ratio: float = 0.04
    file_read_filter_ratio: float = 0.30
    # Those two allowances shrink with the room left (B minus the prompt before the new rows):
    # one output may take at most this share of it (`arrival_budget.py`), so near the limit a
    # smaller output is excerpted instead of pushing the preflight into removing older turns.
    arrival_room_ratio: float = 0.25
    # A file read may take up to half of the room: more would force a compaction at once, and
    # less than that would often cut a read the model needs whole (read → cut → re-read).
    file_read_room_ratio: float = 0.5
    # Outputs at or under this share of B are never filtered on arrival (an excerpt and its
    # header would save almost nothing); no adaptive allowance goes below it.
    arrival_floor_ratio: float = 0.015
    # All tool outputs of one turn (since the latest user message; file reads excepted, they have
    # their own allowance) may add up to this share of B, at most `turn_output_cap` tokens (the
    # seed's 15k turn aggregate at large windows); above it the biggest new ones are excerpted.
    turn_output_ratio: float = 0.12
    turn_output_cap: int = 15_000
    # During the light tier, old outputs above this share of B are filtered too. Equal to the
    # ingest allowance: everything else above it was filtered on arrival, so this only catches
    # old file reads (exempt on arrival) and costs no work at events on other outputs (B1 p95).
    light_filter_ratio: float = 0.04
    # Anything larger than this many characters goes to the vault before anything else looks
    # at it (a 1 MB log must never be tokenised per turn).
    hard_cap_chars: int = 100_000
    # A single message (even the human anchor) above this share of B is shown as an excerpt
    # with its handle, so one item can never push the prompt over budget.
    max_item_ratio: float = 0.35
    # Anti-thrash: a tier whose last two runs each saved less than this share of B is skipped.
    min_save_ratio: float = 0.02
    # Post-compaction reread: at most this many recently modified files, this many tokens.
    reread_max_files: int = 5
    reread_max_tokens: int = 50_000
    reread_max_ratio: float = 0.10
    # Sliding visual window: media stays on this many newest media-bearing messages.
    media_keep: int = 2
    # Consecutive exceptions before a stage is disabled for the session.
    breaker_threshold: int = 3
    # After a compaction, restate the human anchor (the objective) after the newest message
    # (`objective_note.py`); the `restate_objective` setting overrides it per request. Off: on the
    # 400-turn coding replay it costs +1.4% (the note is sent uncached) and no retention figure
    # moves (the anchor is never removed); docs/context-engine.md, "Objective restated".
    restate_objective: bool = False
    # The cache-TTL prune tier: a light/full tier deferred while the provider cache was warm runs
    # once the cache has gone cold (an idle gap past the TTL: the prefix is re-billed anyway).
    # Off: deferred tiers wait until the emergency threshold (the bench's "without" arm).
    cache_ttl_prune: bool = True
    # The economic trigger (`compaction_interval.py`): below the emergency threshold, an event runs
    # once the tokens re-read above the last event's floor, at the cache-read price, cost as much
    # as re-writing that floor once. The ratio is Anthropic's cache write ÷ cache read (1.25 / 0.1;
    # OpenAI's plain input ÷ cached is 10). Gated to slowly growing sessions (growth per user turn
    # under `compaction_interval.SLOW_GROWTH_TOKENS`): ungated it cost coding 64k prefix stability
    # (0.918 → 0.891) and tool-storm 64k 5 % more. Gated, on the 400-turn oracle replays: chatty
    # 32k 958 → 750 kU, 64k 1,532 → 1,321 (R_verbatim 1.000 both); coding and tool-storm figures
    # unchanged (the gate stays shut); docs/benchmarks.md, "Economic trigger, gated".
    economic_trigger: bool = True
    # Compaction ahead of the turn (`ladder.decide_ahead`, run from the agent's idle step): a
    # removal the next request is certain to run (the prompt already at the emergency threshold,
    # or the economic trigger due with the next request) runs while the user reads, not inside
    # that request. Off: events run only when a request reaches them.
    compact_ahead: bool = True
    # Also the removal the next turn is likely to need: the prompt plus the largest growth of a
    # recent user turn reaches the emergency threshold. It takes the events out of the requests
    # (B1 p95 / p99 35-65 -> 11-13 ms on the grid) but runs them earlier than needed: on the
    # held-out fact sessions (G1, `null`, seeds 1-9) R_verbatim 0.541
    # -> 0.532 at 32k and 0.694 -> 0.690 at 64k, prefix share and cost worse in both, so it is
    # off (docs/benchmarks.md, "Compaction ahead of the turn"; docs/latency.md).
    compact_ahead_on_growth: bool = False
    # The safety net's event while the model answers (`ContextEngine.pay_owed`; the setting of the
    # same name): a request that crosses the emergency threshold but still fits the budget goes
    # out as it is, and the event it set off runs on the same history while the model answers it,
    # before anything reads the next rows, so the next request's prompt is the one it would have
    # been. It takes every event out of the requests (B1 p95 / p99 13.8 / 22.1 -> 4.7 / 9.5 ms on
    # coding-800 at 64k) and keeps more (G1 held-out R_verbatim 0.688 -> 0.693 at 64k, 0.542 ->
    # 0.550 at 32k), but the crossing request re-reads the whole old prefix and its new output is
    # written to the cache twice: +4.4 % / +6.1 % cost on priced models (same G1 runs), which
    # would take coding 64k past B5's 0.8x the best peer. So it is off; turn it on where input
    # tokens are free (the embedded model, a local server with prefix caching) or latency matters
    # more than 5 % of the bill (docs/latency.md, "The safety net's event while the model answers").
    compact_while_answering: bool = False
    # The compact command's least span (tokens of the messages before the latest exchange that it
    # would summarize). A summary node has a fixed cost, its header, handle and footer, and an
    # extractive body lists what the span did: a one-message span of 71 tokens came out as a
    # 166-token node (the prompt grew by 95); spans of file reads measured 760 -> +60 tokens and
    # 1,400 -> -258 (32k and 200k windows alike), so the break-even is near 900-1,000. Below
    # 1,500 the command would grow the prompt or save under ~15 %, and a model-written summary
    # would also cost a call: it says so and changes nothing.
    min_manual_compact_tokens: int = 1_500
    write_read_price_ratio: float = 12.5
    # How far an economic event removes once model summaries stand for what it removes (the
    # newest leaf a model was asked to write was written by it and accepted by the auditor,
    # `SummaryDag.model_written`): a smaller floor, so a slow chat re-reads fewer tokens
    # between events. Extractive summaries keep the emergency's 35 %: they carry less of what
    # the turns said. Measured on the 400-turn chatty replays with the capable-model `oracle`
    # (docs/benchmarks.md, "Chat cost").
    economic_target_ratio: float = 0.05
    # The fresh tail such an event keeps (share of the window; at least the newest unit): the
    # model summaries stand for the rest, and a slow chat's tail at 10 % of a 64k window was
    # 6,400 tokens re-read on every request of the interval.
    economic_tail_ratio: float = 0.03
    # Prefix anchor turns (Comis's `compactionPrefixAnchorTurns`): the first this many user turns
    # are never removed (above one, each with its closing text answer, not its tool traffic).
    # 1 = the first user message only; measured against 2 in docs/context-engine.md.
    prefix_anchor_turns: int = 1
    # Removal takes focus units (the intent's paths, modules, symbols) last within each band of
    # this many removal groups (`intent.py:focus_last_in_band`); 0 = off. Whole-list focus-last
    # cut R_verbatim 0.364 → 0.335 on the 400-turn replay; the band bounds how far it reorders.
    removal_focus_band: int = 0
    # File reads on arrival bounded only by the room left (`file_read_room_ratio` of it), not by
    # the fixed `file_read_filter_ratio` share of B: the seed's full exemption, measured in
    # docs/context-engine.md. The hard cap (vault above `hard_cap_chars`) applies either way.
    file_read_exempt: bool = False
    # Comis's age windows (its `thinkingKeepTurns`, `evictionMinAge`, `observationKeepWindow`),
    # each a setting of the same name; the defaults were measured on a replay they were not tuned
    # on (docs/context-engine.md, "Age windows and file protection").
    # Reasoning (`reasoning_content`) of text answers stays for this many turns before the current
    # one (DeepSeek/Qwen-style families; tool-call turns always keep theirs, their APIs need it).
    # 0: a turn's reasoning leaves once the next user message arrives; each kept turn re-renders
    # one more turn of the prompt's tail when it ages out (a cache miss on those tokens).
    thinking_keep_turns: int = 0
    # A tool output younger than this many user turns is never deduplicated, superseded,
    # excerpted or masked below the emergency tier (the 90 % safety net may still).
    eviction_min_age: int = 0
    # The newest this many tool outputs stay verbatim below the emergency tier (never excerpted,
    # masked or dropped as stale status output).
    observation_keep_window: int = 0
    # File reads and edits protected (the seed's tool protection whitelist): below the emergency
    # tier, a `file_read` output of the file's current version (no later write, edit or bash
    # change to that path) up to this share of B is never excerpted or masked, and a
    # `file_write`/`file_edit` argument is never cut below `edit_keep_chars` (head and tail, with
    # the handle). Above the share (a 5 MB file is in the vault already, `hard_cap_chars`) the
    # read is masked like any output: its stub names the path, size and the handle. Measured on
    # the 120-turn coding replay (seed 2, 32k, oracle; docs/context-engine.md): read protection
    # moved no figure; every edit bound cost retention (the edits' text takes the room older
    # turns had): R_verbatim 0.841 with the old plain 300-character head, 0.841 at 300 head and
    # tail with reads protected (cost 644 kU against 646), 0.818 at 800, 0.795 at 1,500, 0.773
    # at 4,000. So 300: the bound that keeps an edit's head and tail at no retention cost.
    file_protect_ratio: float = 0.15
    edit_keep_chars: int = 300


DEFAULT_CONFIG = EngineConfig()

# Quote caps are set in characters (selection must not tokenise each candidate): English chat
# text averages about four characters per token with o200k/cl100k; the node's real token count
# is measured afterwards, so a denser text only makes a node somewhat larger, never unbounded.
QUOTE_CHARS_PER_TOKEN = 4

# Prompt-cache lifetimes by provider family, seconds. Anthropic's default ephemeral cache is
# 5 minutes; OpenAI keeps prefixes ~5–10 minutes; DeepSeek and Gemini's implicit caches last
# about an hour. Unknown providers get the shortest (never assume a warm cache too long).
CACHE_TTL_S = {
    "anthropic": 300,
    "openai": 600,
    "deepseek": 3600,
    "gemini": 3600,
    "default": 300,
}
