"""The summary DAG, engine side: runs of removed history become summary nodes, and runs of
same-depth nodes fold into deeper ones.

Why nodes instead of plain markers: a node has a short stable handle (`S12`), a header built
from stored columns (depth, coverage, time range, trust), a deterministic footer (files, tools,
errors, handles: node_footer.py) and links to what it covers, so `ctx_expand("S12")` walks back
to the originals in one call. The body comes from, in order of preference: a summary a model prepared
ahead of the event (`prepared_summaries.py`: after turns, between steps, the compact command), the
test-only fake summarizer, or the extractive fallback (no model, always available), so removing
history never waits for, or depends on, a model. Condensed nodes the same way: prepared by a
model from their children (`prepare_fold`), else the children's fields merged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from myrm_tui.context.compaction.node_footer import fold_footer, leaf_footer
from myrm_tui.context.compaction.summarizers import Summarizer
from myrm_tui.context.observations.fact_context import KeptLines
from myrm_tui.context.summary.condense import (
    FoldRun,
    SummaryNode,
    find_fold_run,
    mark_superseded,
    oldest_touching_pair,
    open_items,
)
from myrm_tui.context.summary.extractive import extractive_summary
from myrm_tui.context.summary.quotes import strip_quotes
from myrm_tui.context.summary.schema import (
    LIST_FIELDS,
    TEXT_FIELDS,
    StructuredSummary,
    body_text,
    enforce_caps,
    render,
    summary_from_dict,
)
from myrm_tui.context.summary.source import summarizer_messages
from myrm_tui.context.view_log import SyntheticView
from myrm_tui.redact import redact_summary
from myrm_tui.store.records import MessageRecord
from myrm_tui.store.store import Store

SUMMARY_KIND = "summary"
# The one-line form of a node (`SummaryDag.brief`): same handle, same coverage, no body.
SUMMARY_BRIEF_KIND = "summary_brief"
SUMMARY_KINDS = frozenset({SUMMARY_KIND, SUMMARY_BRIEF_KIND})
SHRINK_ROUNDS = 6  # halvings: 1/64 of the lists is left after the last one
# Node statuses that still stand for history (prepared → active → folded); "discarded" does not.
LIVE_STATUSES = frozenset({"prepared", "active", "folded"})
# The `model` a stored node names when no model wrote its body (a failed call's fallback).
EXTRACTIVE_MODEL = "extractive"
# Used when the caller gives no budget share (tests, tools): a node body above this is refused.
DEFAULT_MAX_NODE_TOKENS = 4_000


def _fits(text: str, source_tokens: int, max_tokens: int, count_text: Callable[[str], int]) -> bool:
    """A summary must be smaller than what it stands for and than its share of the budget: a
    summarizer that echoes its input (or worse) would otherwise fill the prompt with nodes
    that no later event can shrink."""
    tokens = count_text(text)
    return tokens < source_tokens and tokens <= max_tokens


def _leaf_content(
    rows: Sequence[MessageRecord],
    fake: Summarizer | None,
    source_tokens: int,
    count_text: Callable[[str], int],
    max_tokens: int,
    kept: KeptLines | None = None,
) -> StructuredSummary:
    messages = [r.message for r in rows]
    if fake is not None:
        text = fake(summarizer_messages(messages))
        if _fits(text, source_tokens, max_tokens, count_text):
            return StructuredSummary(narrative=text)
    # Extractive items are capped in characters; dense text (CJK) would make them huge in tokens.
    return extractive_summary(
        messages, ids=[r.id for r in rows], source_tokens=min(source_tokens, max_tokens), count=count_text, kept=kept
    )


def _shrink_to(content: StructuredSummary, max_tokens: int, count_text: Callable[[str], int]) -> StructuredSummary:
    """`content` with its lists halved (newest kept) and texts cut until its body fits
    `max_tokens`: item caps are in characters, and dense text (CJK) makes them costly in tokens."""
    for _ in range(SHRINK_ROUNDS):
        if count_text(body_text(content)) <= max_tokens:
            return content
        changes: dict[str, Any] = {
            name: getattr(content, name)[len(getattr(content, name)) // 2 :] for name in LIST_FIELDS
        }
        changes.update({name: getattr(content, name)[: len(getattr(content, name)) // 2] for name in TEXT_FIELDS})
        content = replace(content, **changes)
    return content


def _merged_content(children: Sequence[StructuredSummary], fake_text: str | None) -> StructuredSummary:
    """A condensed node without a model: the children's fields in order (reversed decisions
    marked SUPERSEDED), capped; the newest active task and state win; blockers and next steps
    of every child stay unless a later child settled them (`condense.open_items`)."""
    if fake_text is not None:
        return StructuredSummary(narrative=fake_text)
    marked = mark_superseded(children)
    blocked, steps = open_items(marked)
    concatenated: dict[str, Any] = {
        name: [item for c in marked for item in getattr(c, name)]
        for name in (
            "completed_actions",
            "key_findings",
            "errors_and_fixes",
            "files_modified",
            "decisions",
            "constraints_and_preferences",
            "resolved_questions",
            "pending_user_asks",
            "artifacts",
        )
    }
    merged = StructuredSummary(
        user_goal=next((c.user_goal for c in marked if c.user_goal), ""),
        active_task=next((c.active_task for c in reversed(marked) if c.active_task), ""),
        active_state=next((c.active_state for c in reversed(marked) if c.active_state), ""),
        fallback=any(c.fallback for c in marked),
        **concatenated,
        blocked_items=blocked,
        next_steps=steps,
    )
    return enforce_caps(merged)


def merge_summaries(bodies: Sequence[StructuredSummary]) -> StructuredSummary:
    """The fields of `bodies` (in session order) merged as a fold without a model merges them:
    a fork's summary made of its parent's nodes (`agent/fork_cover.py`) reads like a fold."""
    return _merged_content(bodies, None)


def _message_counter(count: Callable[[dict[str, Any]], int]) -> Callable[[str], int]:
    return lambda text: count({"role": "user", "content": text})


class SummaryDag:
    def __init__(self, store: Store, session_id: str, *, fake: Summarizer | None = None) -> None:
        self.store = store
        self.session_id = session_id
        self.fake = fake
        # `model_written`'s answer until this DAG stores a node (the only write that can change
        # it: status changes keep a node among LIVE_STATUSES). It read every stored node, and an
        # event, the economic trigger and each idle step ask. Another process writing nodes into
        # this session is not seen until the next node stored here: it only moves a ratio.
        self._model_written: bool | None = None

    def model_written(self) -> bool:
        """Whether the newest leaf a model was asked to write (prepared, active, or folded into a
        deeper node since) was written by it, not extracted after it failed: the summaries then
        carry what the turns they stand for said. Leaves no model was asked about (stored without
        a `model`: no summarizer, or a chunk below the smallest worth a call, extracted at the
        event) say nothing either way. Counting them, and leaving folded leaves out, made a chat's
        economic target flip back to the emergency's 35 % after most events (the last few removed
        turns, too small for a call, were the newest leaf; or the model's leaves were folded), so
        the next event waited for the next prepared leaf instead of its rent-or-buy point."""
        if self._model_written is None:
            leaves = [
                n
                for n in self.store.summaries(self.session_id)
                if not n["children"] and n.get("status") in LIVE_STATUSES and n.get("model")
            ]
            newest = max(leaves, key=lambda n: n["last_id"], default=None)
            self._model_written = newest is not None and str(newest["model"]) != EXTRACTIVE_MODEL
        return self._model_written

    def prepared_for(self, first_id: int, last_id: int) -> dict[str, Any] | None:
        """A summary a model prepared in the background for exactly this range, if any."""
        for node in self.store.summaries(self.session_id, status="prepared"):
            if node["first_id"] == first_id and node["last_id"] == last_id and not node["children"]:
                return node
        return None

    def prepared_fold(self, handles: Sequence[str]) -> dict[str, Any] | None:
        """A condensed node a model prepared for the first two or more of `handles` (in order),
        the longest such, if any: a fold run may have grown by a node since it was predicted."""
        if len(handles) < 2:
            return None
        best = None
        for node in self.store.summaries(self.session_id, status="prepared"):
            children = node["children"]
            fits = len(children) >= 2 and list(handles[: len(children)]) == children
            if fits and (best is None or len(children) > len(best["children"])):
                best = node
        return best

    def leaf(
        self,
        rows: Sequence[MessageRecord],
        before_id: int,
        event_id: int,
        count: Callable[[dict[str, Any]], int],
        count_text: Callable[[str], int],
        *,
        quote_tokens: int = 0,
        max_tokens: int = DEFAULT_MAX_NODE_TOKENS,
        kept: KeptLines | None = None,
    ) -> SyntheticView:
        """The node (and its prompt view) standing for `rows`, which were just left out.
        `kept`: by message id, output lines its extractive findings list first; asked only when
        no prepared node stands for `rows`, and only for the outputs whose findings the leaf
        lists (finding them reads every later message)."""
        prepared = self.prepared_for(rows[0].id, rows[-1].id)
        if prepared is not None:
            self.store.set_summary_status(self.session_id, prepared["handle"], "active")
            node = {**prepared, "status": "active"}
        else:
            source_tokens = sum(r.tokens for r in rows)
            content = _leaf_content(rows, self.fake, source_tokens, count_text, max_tokens, kept)
            content, _ = redact_summary(content)
            node = self._store_node(
                content,
                depth=0,
                first_id=rows[0].id,
                last_id=rows[-1].id,
                covered_count=len(rows),
                time_range=(rows[0].created_at, rows[-1].created_at),
                footer=leaf_footer(rows, quote_tokens, count_text),
                children=[],
                count=count,
            )
        return self._view(node, before_id, event_id)

    def extractive(
        self,
        rows: Sequence[MessageRecord],
        count_text: Callable[[str], int],
        *,
        max_tokens: int = DEFAULT_MAX_NODE_TOKENS,
        kept: KeptLines | None = None,
    ) -> StructuredSummary:
        """The extractive body of a leaf for `rows`, redacted: what the event would write."""
        source_tokens = sum(r.tokens for r in rows)
        content = _leaf_content(rows, None, source_tokens, count_text, max_tokens, kept)
        redacted: StructuredSummary = redact_summary(content)[0]
        return redacted

    def prepare(
        self,
        rows: Sequence[MessageRecord],
        content: StructuredSummary,
        count: Callable[[dict[str, Any]], int],
        *,
        model: str = "",
        quote_tokens: int = 0,
    ) -> dict[str, Any]:
        """Store a leaf for `rows` (not yet in the prompt: status prepared), written by `model`
        (or by the extractive fallback after a model failed: `model` "extractive")."""
        return self._store_node(
            content,
            depth=0,
            first_id=rows[0].id,
            last_id=rows[-1].id,
            covered_count=len(rows),
            time_range=(rows[0].created_at, rows[-1].created_at),
            footer=leaf_footer(rows, quote_tokens, _message_counter(count)),
            children=[],
            count=count,
            status="prepared",
            model=model,
        )

    def prepare_fold(
        self,
        children: Sequence[dict[str, Any]],
        depth: int,
        content: StructuredSummary,
        count: Callable[[dict[str, Any]], int],
        *,
        model: str = "",
        quote_tokens: int = 0,
        max_tokens: int = DEFAULT_MAX_NODE_TOKENS,
    ) -> dict[str, Any]:
        """Store a model-written condensed node for `children` (stored nodes, in session order),
        not yet in the prompt (status prepared): the next event that folds exactly these
        children (or a run they begin) activates it instead of merging their fields."""
        content, _ = redact_summary(_shrink_to(content, max_tokens, _message_counter(count)))
        return self._store_node(
            content,
            depth=depth,
            first_id=children[0]["first_id"],
            last_id=children[-1]["last_id"],
            covered_count=sum(c["covered_count"] for c in children),
            time_range=(children[0]["time_start"], children[-1]["time_end"]),
            footer=fold_footer(children, quote_tokens, _message_counter(count)),
            children=[c["handle"] for c in children],
            count=count,
            status="prepared",
            model=model,
        )

    def fold(
        self,
        views: Sequence[SyntheticView],
        row_index: Callable[[int], int],
        *,
        pressure: bool,
        event_id: int,
        count: Callable[[dict[str, Any]], int],
        quote_tokens: int = 0,
        max_tokens: int = DEFAULT_MAX_NODE_TOKENS,
        squeeze: bool = False,
        known: dict[str, dict[str, Any]] | None = None,
    ) -> list[SyntheticView]:
        """Fold the deepest qualifying run of same-depth summary views into one deeper node (or,
        with `squeeze`, the oldest two touching nodes of any depth); returns the new list of
        summary views (unchanged when nothing qualifies). `known`: nodes already read by handle,
        kept by the caller across the rounds of one event (a stored node changes only in its
        status, which a fold does not read); every round read every node again, half of them
        to find nothing left to fold."""
        nodes = []
        by_handle = {}
        known = {} if known is None else known
        for view in views:
            node = known.get(view.handle) or self.store.get_summary(self.session_id, view.handle)
            if node is None:
                return list(views)
            known[view.handle] = node
            by_handle[view.handle] = (view, node)
            nodes.append(
                SummaryNode(
                    view.handle, node["depth"], row_index(node["first_id"]), row_index(node["last_id"]) + 1, view.tokens
                )
            )
        run = oldest_touching_pair(nodes) if squeeze else find_fold_run(nodes, pressure=pressure)
        if run is None:
            return list(views)
        prepared = self.prepared_fold([n.id for n in run.nodes])
        if prepared is not None:
            # Written by a model in the background from exactly these children.
            run = FoldRun(run.nodes[: len(prepared["children"])], prepared["depth"])
        children = [by_handle[n.id][1] for n in run.nodes]
        if prepared is not None:
            self.store.set_summary_status(self.session_id, prepared["handle"], "active")
            node = {**prepared, "status": "active"}
        else:
            node = self._merged_node(children, run.depth, count, quote_tokens, max_tokens)
        known[node["handle"]] = node
        for child in children:
            self.store.set_summary_status(self.session_id, child["handle"], "folded")
        last_view = by_handle[run.nodes[-1].id][0]
        folded = {n.id for n in run.nodes}
        out: list[SyntheticView] = []
        for view in views:
            if view.handle in folded:
                if view.handle == run.nodes[-1].id:
                    out.append(self._view(node, last_view.before_id, event_id))
                continue
            out.append(view)
        return out

    def _merged_node(
        self,
        children: Sequence[dict[str, Any]],
        depth: int,
        count: Callable[[dict[str, Any]], int],
        quote_tokens: int,
        max_tokens: int,
    ) -> dict[str, Any]:
        """A condensed node without a model (the fake summarizer's text, or the merged fields)."""
        child_content = [from_json_dict(c["content"]) for c in children]
        fake_text = None
        if self.fake is not None:
            fake_text = self.fake([{"role": "user", "content": strip_quotes(c["rendered"])} for c in children])
            child_tokens = sum(c["tokens"] for c in children)
            if not _fits(fake_text, child_tokens, max_tokens, _message_counter(count)):
                fake_text = None  # an oversized fold summary: merge the children's fields instead
        content, _ = redact_summary(
            _shrink_to(_merged_content(child_content, fake_text), max_tokens, _message_counter(count))
        )
        return self._store_node(
            content,
            depth=depth,
            first_id=children[0]["first_id"],
            last_id=children[-1]["last_id"],
            covered_count=sum(c["covered_count"] for c in children),
            time_range=(children[0]["time_start"], children[-1]["time_end"]),
            footer=fold_footer(children, quote_tokens, _message_counter(count)),
            children=[c["handle"] for c in children],
            count=count,
        )

    def _store_node(
        self,
        content: StructuredSummary,
        *,
        depth: int,
        first_id: int,
        last_id: int,
        covered_count: int,
        time_range: tuple[float, float],
        footer: str,
        children: list[str],
        count: Callable[[dict[str, Any]], int],
        status: str = "active",
        model: str = "",
    ) -> dict[str, Any]:
        self._model_written = None  # a new leaf may be the newest one a model was asked about
        # The handle is S<n> with n the next number of this session; render with it.
        handle = self.store.next_summary_handle(self.session_id)
        rendered = render(
            content, handle=handle, depth=depth, covered_count=covered_count, time_range=time_range, footer=footer
        )
        node = self.store.add_summary(
            self.session_id,
            {
                "depth": depth,
                "first_id": first_id,
                "last_id": last_id,
                "covered_count": covered_count,
                "children": children,
                "time_start": time_range[0],
                "time_end": time_range[1],
                "tokens": count({"role": "user", "content": rendered}),
                "fallback": content.fallback,
                "status": status,
                "content": content.to_dict(),
                "rendered": rendered,
                "model": model,
            },
        )
        if node["handle"] != handle:  # numbering moved (another writer): render again, exactly
            rendered = rendered.replace(f"[summary {handle}", f"[summary {node['handle']}").replace(
                f'ctx_expand("{handle}")', f'ctx_expand("{node["handle"]}")'
            )
            node = {**node, "rendered": rendered}
        return node

    def brief(self, view: SyntheticView, count: Callable[[dict[str, Any]], int]) -> SyntheticView:
        """The one-line form of a summary view: its handle and the ids it covers, nothing
        else. The last resort of the summary area (see `SummaryArea._fit_summaries`): a
        node's body, footer and quotes can outgrow the room a tight window leaves, its handle
        cannot, and `ctx_expand` still walks back from it to every original."""
        if view.kind == SUMMARY_BRIEF_KIND:
            return view
        node = self.store.get_summary(self.session_id, view.handle) if view.handle else None
        if node is not None:
            first, last, covered, depth = node["first_id"], node["last_id"], node["covered_count"], node["depth"]
        elif view.covers is not None:
            first, last, covered, depth = view.covers[0], view.covers[1], 0, 0
        else:
            return view
        message = {"role": "user", "content": brief_text(view.handle, first, last, covered, depth)}
        return replace(view, kind=SUMMARY_BRIEF_KIND, message=message, tokens=count(message))

    @staticmethod
    def _view(node: dict[str, Any], before_id: int, event_id: int) -> SyntheticView:
        message = {"role": "user", "content": node["rendered"]}
        return SyntheticView(
            before_id,
            SUMMARY_KIND,
            message,
            node["tokens"],
            event_id,
            (node["first_id"], node["last_id"]),
            node["handle"],
        )


def brief_text(handle: str, first_id: int, last_id: int, covered: int, depth: int) -> str:
    """One line, built only from stored numbers (no model or user text, so nothing to wrap or
    redact); it keeps the `[summary S12` opening so readers of the prompt (and the tests'
    reachability check) treat it as the node it stands for."""
    what = f"{covered} messages" if covered else "messages"
    name = f"[summary {handle} · depth={depth} · brief" if handle else "[omitted"
    tail = f'ctx_expand("{handle}")' if handle else f'ctx_expand("msg:{first_id}")'
    return f"{name} · {what} msg:{first_id} … msg:{last_id} left out to fit the window · full text: {tail}]"


def from_json_dict(data: dict[str, Any]) -> StructuredSummary:
    """A stored node's content (a dict already): read directly, not written out as JSON and
    parsed back with the model-answer parser (a character scan per child per fold)."""
    return summary_from_dict(data, fallback=bool(data.get("fallback")))
