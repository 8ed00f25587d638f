"""The engine's incremental view of a session: stored rows, their decided views, the rendered row cache.

Why one object: rows, views, synthetic messages and the rendered entries must change together
(a new view re-renders from its row on; a new user message re-renders the previous turn), and
every other part of the engine (arrival filter, compactor, summary area, preparation) reads them.
Rows are rendered once and cached, so the per-turn cost grows with the new rows, not with the
session; only `invalidate_from` (a compaction event, a new view) makes a suffix render again.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from myrm_tui.context.observations.fact_index import FactIndex
from myrm_tui.context.observations.pins import is_security_pin
from myrm_tui.context.pipeline import MEDIA_FILTER, NORMALIZE, THINKING_CLEANUP
from myrm_tui.context.prefix_memo import PrefixMemo
from myrm_tui.context.report import StageClock
from myrm_tui.context.rows.family import ANTHROPIC, REASONING_TOOLS, family_of
from myrm_tui.context.rows.integrity import IntegrityReport, repair_pairs
from myrm_tui.context.rows.media import has_media
from myrm_tui.context.rows.units import last_user_index
from myrm_tui.context.rows.views import REMOVED, View, parse_arguments
from myrm_tui.context.signature_scrub import scrub_boundary
from myrm_tui.context.stages.cache_optimize import message_digest
from myrm_tui.context.stages.encode_safe import encode_safe
from myrm_tui.context.stages.media_filter import strip_media
from myrm_tui.context.stages.media_resolve import MediaResolver
from myrm_tui.context.stages.normalize import normalize
from myrm_tui.context.stages.thinking_cleanup import REASONING_KEYS, clean_thinking
from myrm_tui.context.view_log import SyntheticView
from myrm_tui.context.window.config import EngineConfig
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.context.window.turn_input import RenderKey
from myrm_tui.store.event_kinds import REPLY_FIGURES
from myrm_tui.store.records import MessageRecord
from myrm_tui.store.store import Store


@dataclass
class Entry:
    """One message of the cached history part of the prompt."""

    row: int  # index into rows, or -1 for a synthetic message
    message: dict[str, Any]
    tokens: int
    anchor: int = -1  # the row index this entry renders or precedes (entries are ordered by it)
    digest: str = ""  # of `message`, for the cache-break detector (computed once)
    safe: dict[str, Any] | None = None  # `message` encode-safe (computed once: it is sent every request)
    # `message` with its vault images resolved, then encode-safe (`outgoing`); kept only when no
    # image was missing from the vault (a missing one is looked up again next request).
    resolved: dict[str, Any] | None = None
    # What `message` was rendered from (`render`): the view's or row's message object, and the
    # other inputs (media strip, earlier turn, signer, tokens). Same inputs, same rendering: a
    # re-render reuses the entry, so its message keeps its identity and everything kept for it.
    base: dict[str, Any] | None = None
    inputs: tuple[object, ...] = ()


class RenderedHistory:
    def __init__(
        self,
        store: Store,
        session_id: str,
        config: EngineConfig,
        views: dict[int, View],
        synthetic: list[SyntheticView],
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.config = config
        self.rows: list[MessageRecord] = []
        self.views = views
        self.synthetic = synthetic
        self.entries: list[Entry] = []
        # `entries`' messages, in order, kept beside them: the repair reads the list every
        # request, and building it anew walked the whole history.
        self._messages: list[dict[str, Any]] = []
        self.tokens = 0  # of `entries`: the history part of the prompt
        self.entry_of_row: dict[int, int] = {}
        # id(message) → its entry, for the per-request stages that get the prompt's messages back
        # (digests, encode-safe): what they compute per message is kept on the entry, so a request
        # pays for its new messages only. A hit is checked with `is` (`_entry_for`): ids are
        # reused once an object dies, the entry keeps its message alive.
        self._by_identity: dict[int, Entry] = {}
        # entries[: _clean_upto] need no repair (`valid_history`): each request repairs what follows.
        self._clean_upto = 0
        # Per request, only the digests past the previous request's unchanged prefix are looked up.
        self._digest_memo = PrefixMemo(self._digest_of)
        # The same for the outgoing form of the wire past its first message (`outgoing`).
        self._wire_memo = PrefixMemo(self._outgoing_of)
        self._resolver: MediaResolver | None = None  # of the `outgoing` call in progress
        self.render_key: RenderKey | None = None
        self.media_rows: list[int] = []
        self.first_user: int | None = None
        self.last_user: int | None = None
        self.system_rows: list[int] = []
        # The user's own rules stated mid-session (context/observations/pins.py): never removed, masked or summarized.
        self.pinned_rows: list[int] = []
        # The first `prefix_anchor_turns` user messages (and, above one, each one's closing answer).
        self.prefix_rows: list[int] = []
        self.anchor_turns = config.prefix_anchor_turns  # per request: `use_anchor_turns`
        # Indices of the user messages, and how many turns before the current one keep their
        # reasoning (`EngineConfig.thinking_keep_turns`; per request: `use_thinking_keep`).
        self.user_rows: list[int] = []
        self.thinking_keep = config.thinking_keep_turns
        self._user_turns = 0
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}  # tool_call_id → (name, arguments)
        # What compaction events read to keep old outputs' facts, each row scanned once (fact_index.py).
        self.facts = FactIndex()
        self._unfiltered: list[MessageRecord] = []  # synced, not yet seen by the smart filter
        self._rendered_upto = 0  # rows[: _rendered_upto] are in entries
        # Row index → its entry dropped by `invalidate_from` since the last `render`, for reuse.
        self._dropped: dict[int, Entry] = {}
        self._live_hint = 0
        # Message id → the model that wrote it, for rows with signed reasoning only (read from the
        # agent's `reply_figures` events when such a row arrives; `signer_family`).
        self._signers: dict[int, str] = {}
        self._signers_after: int | None = None  # the last `reply_figures` event read
        # Rows before this index render as earlier turns for the reasoning cleanup: a replay that
        # broke the cache scrubbed their signed blocks, and they stay scrubbed (`scrub_signatures`).
        self.scrub_before = -1

    # ------------------------------------------------------------------ rows
    def sync(self) -> list[MessageRecord]:
        """Read the rows stored since the last sync; note the anchors, calls and media they add."""
        after = self.rows[-1].id if self.rows else 0
        previous_boundary = self.reasoning_boundary()
        new = self.store.messages_after(self.session_id, after) if self.rows else self.store.messages(self.session_id)
        self._unfiltered.extend(new)
        for row in new:
            index = len(self.rows)
            self.rows.append(row)
            for call in row.message.get("tool_calls") or ():
                function = call.get("function", {})
                self.calls[call.get("id", "")] = (function.get("name", ""), parse_arguments(function.get("arguments")))
            if row.role == "user":
                self.user_rows.append(index)
                if self.first_user is None:
                    self.first_user = index
                self._note_prefix(index, row)
                if is_security_pin(row.message):
                    self.pinned_rows.append(index)
            elif row.role == "assistant":
                self._note_prefix(index, row)
            elif row.role == "system":
                self.system_rows.append(index)
            if has_media(row.message):
                self.media_rows.append(index)
        if new:
            previous_last_user = self.last_user
            self.last_user = last_user_index(self.rows)
            # Thinking cleanup depends on "before the latest user message": a new user message
            # changes how the previous turn renders, so re-render from there (the tail only).
            if previous_last_user is not None and self.last_user != previous_last_user:
                self.invalidate_from(previous_last_user)
            # With a keep window, the turn that leaves the window re-renders (older than the above).
            if 0 <= previous_boundary != self.reasoning_boundary():
                self.invalidate_from(previous_boundary)
            # The sliding visual window moved: re-render from the image that fell out of it.
            keep = self.config.media_keep
            new_media = [i for i in self.media_rows if i >= len(self.rows) - len(new)]
            if new_media and len(self.media_rows) > keep:
                fallen = self.media_rows[-keep - 1 : len(self.media_rows) - keep]
                if fallen:
                    self.invalidate_from(fallen[0])
        return new

    def take_unfiltered(self) -> list[MessageRecord]:
        """Rows synced since the smart filter last ran (`maintain` and `last_row` sync without
        filtering)."""
        rows, self._unfiltered = self._unfiltered, []
        return rows

    def index_of_id(self, message_id: int) -> int:
        """Row index of `message_id` (or where it would go): rows are ordered by id."""
        return bisect.bisect_left(self.rows, message_id, key=lambda row: row.id)

    def row_tokens(self, index: int) -> int:
        """Tokens row `index` takes in the prompt now (0 when it is left out)."""
        position = self.entry_of_row.get(index)
        return self.entries[position].tokens if position is not None else 0

    def live_from(self) -> int:
        """First row index after the human anchor that is not left out. Removal always takes
        the oldest units first, so everything between the anchor and this index is removed."""
        start = (self.first_user + 1) if self.first_user is not None else 0
        i = max(start, self._live_hint)
        while i < len(self.rows):
            view = self.views.get(self.rows[i].id)
            if view is None or view.kind != REMOVED:
                break
            i += 1
        self._live_hint = i
        return i

    def never_removed(self) -> set[int]:
        """The anchors: the first and latest user messages, stored system rows, the prefix anchor
        turns beyond the first (`EngineConfig.prefix_anchor_turns`, `use_anchor_turns`) and the security pins."""
        anchors = {i for i in (self.first_user, self.last_user) if i is not None} | set(self.system_rows)
        return anchors | set(self.prefix_rows) | set(self.pinned_rows)

    def reasoning_boundary(self) -> int:
        """Rows before this index are earlier turns for a reasoning family's cleanup: the user
        message `thinking_keep` turns before the latest (-1: every turn is inside the window)."""
        if len(self.user_rows) <= self.thinking_keep:
            return -1
        return self.user_rows[-1 - self.thinking_keep]

    def use_thinking_keep(self, turns: int | None) -> None:
        """The `thinking_keep_turns` setting of this request (None: the engine config's); a change
        re-renders from where the reasoning boundary was or now is, whichever is earlier."""
        turns = self.config.thinking_keep_turns if turns is None else turns
        if turns == self.thinking_keep:
            return
        before = self.reasoning_boundary()
        self.thinking_keep = turns
        after = self.reasoning_boundary()
        if before != after:
            self.invalidate_from(max(0, min(before, after)))

    def use_anchor_turns(self, turns: int | None) -> None:
        """The `prefix_anchor_turns` setting of this request (None: the engine config's). The
        setting can change mid-session (the engine outlives the agent a settings change
        rebuilds), so a change re-derives the prefix rows from the rows synced so far."""
        turns = self.config.prefix_anchor_turns if turns is None else turns
        if turns == self.anchor_turns:
            return
        self.anchor_turns, self.prefix_rows, self._user_turns = turns, [], 0
        for index, row in enumerate(self.rows):
            self._note_prefix(index, row)

    def _note_prefix(self, index: int, row: MessageRecord) -> None:
        """Note row `index` in `prefix_rows` when it is a prefix anchor: one of the first
        `anchor_turns` user messages, or such a turn's closing answer (`_closes_prefix_turn`)."""
        if row.role == "user":
            self._user_turns += 1
            if self._user_turns <= self.anchor_turns:
                self.prefix_rows.append(index)
        elif row.role == "assistant" and self._closes_prefix_turn(row):
            self.prefix_rows.append(index)

    def _closes_prefix_turn(self, row: MessageRecord) -> bool:
        """Whether `row` is a text answer (no tool calls) within a prefix anchor turn, when more
        than one turn is anchored: the turn's user message and the answer are kept, its tool
        traffic is not (a whole turn of outputs would hold the prompt's head forever). With one
        anchor turn (the default) only the first user message is kept, as it always was. A later
        answer in the same turn replaces an earlier one."""
        turns = self.anchor_turns
        if turns < 2 or not 1 <= self._user_turns <= turns or row.message.get("tool_calls"):
            return False
        if self.prefix_rows and self.rows[self.prefix_rows[-1]].role == "assistant":
            self.prefix_rows.pop()
        return True

    # ------------------------------------------------------------------ rendering
    def invalidate_from(self, row_index: int) -> None:
        """Forget the rendering of rows from `row_index` on (and of the synthetic messages
        placed before them); the next `render` redoes exactly that part."""
        if row_index >= self._rendered_upto:
            return
        position = len(self.entries)
        while position > 0 and self.entries[position - 1].anchor >= row_index:
            position -= 1
        for entry in self.entries[position:]:
            self.tokens -= entry.tokens
            if entry.row >= 0:
                self.entry_of_row.pop(entry.row, None)
                self._dropped[entry.row] = entry
            if self._by_identity.get(id(entry.message)) is entry:
                del self._by_identity[id(entry.message)]
        self._clean_upto = self._clean_prefix(min(position, self._clean_upto))
        del self.entries[position:]
        del self._messages[position:]
        self._rendered_upto = row_index

    def _clean_prefix(self, cut: int) -> int:
        """The longest part of the clean prefix (`_clean_upto`) that stays clean when the
        entries from `cut` on go: cut back to the start of a call's group when `cut` falls
        between a call and its results (in a clean prefix each call is followed by exactly its
        results), and to 0 when no user message would be left in it (the repair puts a user
        message first when the prefix has none). Resetting it to 0 on every invalidation made
        each new turn repair the whole history again."""
        clean = self._clean_upto
        while 0 < cut < clean and self.entries[cut].message.get("role") == "tool":
            cut -= 1
        if not any(entry.message.get("role") != "system" for entry in self.entries[:cut]):
            return 0
        return cut

    def signer_family(self, row: MessageRecord) -> str | None:
        """The provider family of the model that wrote `row`'s signed reasoning (None: no signed
        reasoning, or not recorded: a row from before `reply_figures`, or a fork parent's)."""
        if not row.message.get("thinking_blocks"):
            return None
        if row.id not in self._signers:
            for event in self.store.events(self.session_id, REPLY_FIGURES, after_id=self._signers_after):
                self._signers_after = event.id
                message_id, model = event.data.get("message_id"), event.data.get("model")
                if isinstance(message_id, int) and isinstance(model, str) and model:
                    self._signers[message_id] = model
        model = self._signers.get(row.id)
        return family_of(model) if model else None

    def scrub_signatures(self, key: RenderKey) -> int:
        """On a replay that breaks the cache (context/signature_scrub.py): the current turn's
        steps before its newest assistant message stop carrying signed reasoning, from now on.
        Returns how many rows were rendered anew (0: nothing to scrub)."""
        if key[0] != ANTHROPIC:
            return 0  # only that family is sent signed blocks back (`render` scrubs for it only)
        boundary = scrub_boundary(self.rows, self.last_user)
        if boundary is None or boundary <= self.scrub_before:
            return 0
        start = max(self.scrub_before, (self.last_user or 0) + 1)
        signed = [i for i in range(start, boundary) if self.rows[i].message.get("thinking_blocks")]
        self.scrub_before = boundary
        if not signed:
            return 0
        self.invalidate_from(signed[0])
        self.render(key)
        return len(signed)

    def render(self, key: RenderKey, clock: StageClock | None = None) -> None:
        """Render the rows not rendered yet (all of them when the model's family, vision or
        name changed): thinking cleanup, media filter and normalize, per row. `clock`: where
        each of the three stages' time goes (summed over the rows)."""
        if key != self.render_key:
            self.entries, self.entry_of_row, self.tokens, self._rendered_upto = [], {}, 0, 0
            self._messages = []
            self._by_identity, self._clean_upto, self._dropped = {}, 0, {}
            self.render_key = key
        family, vision, model = key
        synthetic_before: dict[int, list[SyntheticView]] = {}
        for syn in self.synthetic:
            synthetic_before.setdefault(syn.before_id, []).append(syn)
        media_window = set(self.media_rows[-self.config.media_keep :]) if vision else set()
        last_user = self.last_user if self.last_user is not None else -1
        # DeepSeek/Qwen-style reasoning stays on the last `thinking_keep` turns' text answers too.
        reasoning_from = self.reasoning_boundary() if family == REASONING_TOOLS else last_user
        media_ms = thinking_ms = normalize_ms = 0.0  # seconds, summed over the rows rendered
        for index in range(self._rendered_upto, len(self.rows)):
            row = self.rows[index]
            for syn in synthetic_before.get(row.id, ()):
                self._append(Entry(-1, syn.message, syn.tokens, index))
            view = self.views.get(row.id)
            if view is not None and view.kind == REMOVED:
                continue
            # Only a REMOVED view has no message (skipped above); the original stands in otherwise.
            base = view.message if view is not None and view.message is not None else row.message
            tokens = view.tokens if view is not None else row.tokens
            strip = index in self.media_rows and index not in media_window
            # The scrub is about signed blocks, which only Anthropic is sent: for the reasoning-tools
            # family "earlier" would also drop a kept turn's reasoning, which the keep window (and a
            # fresh engine, which has no scrub) keeps.
            earlier = index < reasoning_from or (family == ANTHROPIC and index < self.scrub_before)
            signer = self.signer_family(row)
            # Without reasoning keys the cleanup ignores which turn a message belongs to, so a new
            # turn leaves such a row's rendering (and all kept for it) as it was.
            reasoning = any(key in base for key in REASONING_KEYS)
            inputs = (strip, earlier if reasoning else None, signer, tokens)
            self.entry_of_row[index] = len(self.entries)
            dropped = self._dropped.get(index)
            if dropped is not None and dropped.base is base and dropped.inputs == inputs:
                self._append(dropped)  # rendered from the same inputs: the same message
                continue
            message = base
            started = time.perf_counter()
            if strip:
                message = strip_media(message, "model has no vision" if not vision else "older than the newest images")
            media_done = time.perf_counter()
            message = clean_thinking(message, family, earlier, signer)
            thinking_done = time.perf_counter()
            message = normalize(message)
            if message is not base and _shape_changed(base, message):
                tokens = count_message_tokens(message, model)
            media_ms += media_done - started
            thinking_ms += thinking_done - media_done
            normalize_ms += time.perf_counter() - thinking_done
            self._append(Entry(index, message, tokens, index, base=base, inputs=inputs))
        self._rendered_upto = len(self.rows)
        self._dropped = {}
        if clock is not None:
            clock.add(THINKING_CLEANUP, thinking_ms * 1000)
            clock.add(MEDIA_FILTER, media_ms * 1000)
            clock.add(NORMALIZE, normalize_ms * 1000)

    def _append(self, entry: Entry) -> None:
        self.entries.append(entry)
        self._messages.append(entry.message)
        self.tokens += entry.tokens
        self._by_identity[id(entry.message)] = entry

    def _entry_for(self, message: dict[str, Any]) -> Entry | None:
        """The entry that renders exactly this object (None for a message made this request:
        a repair's synthetic result, a copy with cache markers or resolved images)."""
        entry = self._by_identity.get(id(message))
        return entry if entry is not None and entry.message is message else None

    def valid_history(self, model: str) -> tuple[list[dict[str, Any]], IntegrityReport, int]:
        """The rendered history made provider-valid, and the token change the repair made
        (synthetic results added, orphans dropped), so the budget check counts what is sent."""
        rendered = self._messages  # read only: `_repaired` returns a new list
        history, integrity = self._repaired(rendered)
        delta = 0
        if integrity.dangling_repaired or integrity.orphans_dropped:
            kept = {id(m) for m in history}
            delta -= sum(e.tokens for e in self.entries if id(e.message) not in kept)
            known = {id(e.message) for e in self.entries}
            delta += sum(count_message_tokens(m, model) for m in history if id(m) not in known)
        return history, integrity, delta

    def _repaired(self, rendered: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], IntegrityReport]:
        """`repair_pairs(rendered)`, repairing only what follows the clean prefix: a prefix that
        came back unchanged pairs each of its calls with its own results, so repairing the whole
        list gives the prefix back and the rest as repaired alone (with the first message
        already checked). Repairing the whole prompt on every request grew with the session."""
        clean = self._clean_upto
        if 0 < clean <= len(rendered):
            tail, integrity = repair_pairs(rendered[clean:], first_user=False)
            history = rendered[:clean] + tail
        else:
            clean = 0
            history, integrity = repair_pairs(rendered)
        unchanged = not (integrity.dangling_repaired or integrity.orphans_dropped or integrity.first_user_inserted)
        if (
            unchanged
            and len(history) == len(rendered)
            and all(a is b for a, b in zip(history[clean:], rendered[clean:], strict=True))
            and any(m.get("role") != "system" for m in rendered)
        ):
            self._clean_upto = len(rendered)
        return history, integrity

    def digests(self, history: Sequence[dict[str, Any]]) -> list[str]:
        """Digest per prompt message; entries carry theirs, so only repaired messages hash anew."""
        return self._digest_memo.map(history)

    def _digest_of(self, message: dict[str, Any]) -> str:
        entry = self._entry_for(message)
        if entry is None:
            return message_digest(message)
        if not entry.digest:
            entry.digest = message_digest(message)
        return entry.digest

    def encode_safe(self, wire: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The outgoing messages encode-safe, no image resolved (`outgoing`)."""
        return self.outgoing(wire, None)

    def outgoing(self, wire: Sequence[dict[str, Any]], resolver: MediaResolver | None) -> list[dict[str, Any]]:
        """The messages as sent: vault images resolved (with a `resolver`: the session has
        media) and encode-safe (`stages.media_resolve`, `stages.encode_safe`). Both passes over
        the whole prompt on every request grew with the session; a rendered message never
        changes, so its outgoing form is computed once and kept on its entry, and the wire past
        its first message (the system prompt, made anew per request) goes through a
        `PrefixMemo`, so only what follows the previous request's unchanged prefix is looked up.
        A message with an image missing from the vault is resolved again on every request."""
        if resolver is not self._resolver:
            self._wire_memo.clear()  # another resolver (or none): other outgoing forms
        self._resolver = resolver
        missing = resolver.missing if resolver is not None else 0
        out = [self._outgoing_of(message) for message in wire[:1]]
        out += self._wire_memo.map(wire[1:])
        if resolver is not None and resolver.missing != missing:
            self._wire_memo.clear()  # it holds a form with a missing image: not to be reused
        return out

    def _outgoing_of(self, message: dict[str, Any]) -> dict[str, Any]:
        """One message's outgoing form, kept on its entry (`outgoing`)."""
        resolver = self._resolver
        entry = self._entry_for(message)
        if resolver is None:
            if entry is None:
                return _encode_safe_message(message)
            if entry.safe is None:
                entry.safe = _encode_safe_message(message)
            return entry.safe
        if entry is not None and entry.resolved is not None:
            return entry.resolved
        missing = resolver.missing
        resolved = _encode_safe_message(resolver.resolve(message))
        if entry is not None and resolver.missing == missing:
            entry.resolved = resolved
        return resolved


def _encode_safe_message(message: dict[str, Any]) -> dict[str, Any]:
    safe: dict[str, Any] = encode_safe(message)  # a message in, a message out
    return safe


def _shape_changed(before: dict[str, Any], after: dict[str, Any]) -> bool:
    keys = ("content", "tool_calls", "reasoning_content", "thinking_blocks")
    return any(before.get(k) != after.get(k) for k in keys)
