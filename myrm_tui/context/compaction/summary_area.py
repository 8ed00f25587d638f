"""The summary area of the prompt: what stands in for the rows a compaction event removes.

Why apart from the compactor: the compactor decides *what* leaves the prompt; this part decides
what stands in for it (leaf nodes with their quotes, same-depth folds, the squeeze fold that caps
the summary area, the post-compaction reread). It reads the history's rows and views and writes
only through the summary DAG.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from myrm_tui.context.compaction.breaker import StageBreakers
from myrm_tui.context.compaction.dag import SUMMARY_KIND, SUMMARY_KINDS, SummaryDag
from myrm_tui.context.compaction.markers import omission_marker
from myrm_tui.context.compaction.node_footer import leaf_footer
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.observations.fact_context import FactContext, kept_lines
from myrm_tui.context.pipeline import POST_COMPACTION_REREAD, SUMMARIZE
from myrm_tui.context.rows.views import REMOVED
from myrm_tui.context.stages.post_compaction_reread import build_reread
from myrm_tui.context.view_log import SyntheticView
from myrm_tui.context.window.budget import Budget
from myrm_tui.context.window.tokens import count_message_tokens, count_text_tokens_by_line
from myrm_tui.store.records import MessageRecord

FileReader = Callable[[str], "str | None"]
# Same-depth fold rounds per event: a deep tree folds level by level.
MAX_FOLD_ROUNDS = 8
# Squeeze folds per event at most (each joins two nodes; a runaway tree shrinks over events).
MAX_SQUEEZE_FOLDS = 32


class SummaryArea:
    """The summary messages of the prompt; reads the history, writes through the summary DAG."""

    def __init__(
        self, history: RenderedHistory, dag: SummaryDag, breakers: StageBreakers, file_reader: FileReader | None
    ):
        self.history = history
        self.dag = dag
        self.breakers = breakers
        self.config = history.config
        self.file_reader = file_reader

    def rebuild(
        self,
        event_id: int,
        model: str,
        tail_start: int,
        budget: Budget,
        changed: Sequence[int],
        *,
        room: int | None = None,
    ) -> list[SyntheticView]:
        """Existing summary views stay byte-identical; each run of newly removed rows becomes a
        leaf summary node; same-depth runs of nodes fold into deeper ones (four at a time, two
        when summaries take more than their share of B), then the oldest touching nodes fold
        while all summaries exceed their cap. Then the post-compaction reread. `room`: the
        tokens left for all synthetic messages once the event's views apply; when the summary
        area needs more, the reread is dropped and the area shrinks (`_fit_summaries`)."""
        # In session order, not creation order: a message protected at one event (the latest
        # user message) is removed at a later one, so its leaf is created after nodes that come
        # after it; folds look for neighbours that touch, and only session order shows them.
        # (Rendering places each view by `before_id`, so the order here changes no prompt byte.)
        summaries = sorted((s for s in self.history.synthetic if s.kind in SUMMARY_KINDS), key=self._summary_position)
        newly_removed = [i for i in changed if self.history.views[self.history.rows[i].id].kind == REMOVED]
        runs: list[list[int]] = []
        for i in newly_removed:
            if runs and i == runs[-1][-1] + 1:
                runs[-1].append(i)
            else:
                runs.append([i])

        # Summary texts are counted line by line (the same figures): a fold's text is its
        # children's lines, counted already (`count_text_tokens_by_line`).
        def count(message: dict[str, Any]) -> int:
            return count_message_tokens(message, model, count_text_tokens_by_line)

        def count_text(text: str) -> int:
            return count_text_tokens_by_line(text, model)

        runs = [segment for run in runs for segment in self._split_by_prepared(run)]
        # Once per event: which share applies reads every stored node (`SummaryDag.model_written`).
        quotes = self.quote_tokens(budget)
        facts = FactContext(self.history.rows, index=self.history.facts)  # for this event's leaves
        for run in runs:
            after = run[-1] + 1
            if after < len(self.history.rows):

                def leaf(run: list[int] = run, after: int = after) -> SyntheticView | None:
                    return self.dag.leaf(
                        [self.history.rows[i] for i in run],
                        self.history.rows[after].id,
                        event_id,
                        count,
                        count_text,
                        quote_tokens=quotes,
                        max_tokens=self.max_node_tokens(budget),
                        kept=kept_lines(facts, run),
                    )

                summaries.append(
                    self.breakers.run(SUMMARIZE, leaf, None)
                    or self._bare_marker(
                        [self.history.rows[i] for i in run], self.history.rows[after].id, event_id, model
                    )
                )
        summaries.sort(key=self._summary_position)
        pressure_at = budget.prompt_limit * self.config.marker_cap_ratio
        summaries = self._fold_while(
            summaries, budget, event_id, count, MAX_FOLD_ROUNDS, squeeze=False, pressure_at=pressure_at, quotes=quotes
        )
        # Hard cap: summaries must never crowd out the conversation (fragmented removal can leave
        # many small nodes of mixed depths that no same-depth fold ever joins).
        summaries = self._fold_while(
            summaries,
            budget,
            event_id,
            count,
            MAX_SQUEEZE_FOLDS,
            squeeze=True,
            pressure_at=budget.prompt_limit * self.config.summary_cap_ratio,
            quotes=quotes,
        )
        reread = (
            self.breakers.run(
                POST_COMPACTION_REREAD,
                lambda: build_reread(
                    self.history.rows,
                    self.file_reader,
                    max_files=self.config.reread_max_files,
                    max_tokens=min(
                        self.config.reread_max_tokens, int(budget.prompt_limit * self.config.reread_max_ratio)
                    ),
                    count=count,
                ),
                None,
            )
            if tail_start < len(self.history.rows)
            else None
        )
        if room is not None and sum(v.tokens for v in summaries) + (reread[1] if reread else 0) > room:
            reread = None  # the model can read its files again; the summaries' handles are unique
            summaries = self._fit_summaries(summaries, max(0, room), budget, event_id, count, quotes)
        out = list(summaries)
        if reread is not None:
            out.append(SyntheticView(self.history.rows[tail_start].id, "reread", reread[0], reread[1], event_id))
        return out

    def warm(self, indices: Sequence[int], model: str, budget: Budget) -> None:
        """Work out, and forget, what a leaf for these rows would say (`event_warmup.py`): the
        scans behind it are remembered by what they read, so the event that removes the rows
        finds them done. The caller leaves out rows a prepared summary stands for (the event
        activates it)."""
        rows = [self.history.rows[i] for i in indices]

        def count_text(text: str) -> int:
            return count_text_tokens_by_line(text, model)

        facts = FactContext(self.history.rows, index=self.history.facts)
        self.dag.extractive(rows, count_text, max_tokens=self.max_node_tokens(budget), kept=kept_lines(facts, indices))
        leaf_footer(rows, self.quote_tokens(budget), count_text)

    def _summary_position(self, view: SyntheticView) -> int:
        return self.history.index_of_id(view.covers[0] if view.covers else view.before_id)

    def _fit_summaries(
        self,
        summaries: list[SyntheticView],
        room: int,
        budget: Budget,
        event_id: int,
        count: Callable[[dict[str, Any]], int],
        quotes: int,
    ) -> list[SyntheticView]:
        """Shrink the summary area to `room` tokens, or as far as it goes: the oldest nodes
        first become one line each (handle and covered ids, `SummaryDag.brief`); if the lines
        alone are still too many, touching nodes fold (no round limit: each fold removes a
        line) and the result becomes one line too. What is left is one line per group of
        touching nodes, and groups are only split by messages that stay in the prompt."""
        summaries = self._brief_oldest(summaries, room, count)
        if sum(v.tokens for v in summaries) > room and len(summaries) > 1:
            summaries = self._fold_while(
                summaries, budget, event_id, count, len(summaries), squeeze=True, pressure_at=room, quotes=quotes
            )
            summaries = self._brief_oldest(summaries, room, count)
        return summaries

    def _brief_oldest(
        self, summaries: list[SyntheticView], room: int, count: Callable[[dict[str, Any]], int]
    ) -> list[SyntheticView]:
        out = list(summaries)
        total = sum(v.tokens for v in out)
        for i, view in enumerate(out):
            if total <= room:
                break
            brief = self.dag.brief(view, count)
            total += brief.tokens - view.tokens
            out[i] = brief
        return out

    def _fold_while(
        self,
        summaries: list[SyntheticView],
        budget: Budget,
        event_id: int,
        count: Callable[[dict[str, Any]], int],
        rounds: int,
        *,
        squeeze: bool,
        pressure_at: float,
        quotes: int,
    ) -> list[SyntheticView]:
        """Fold up to `rounds` times. Same-depth folds run while anything qualifies (with
        pressure above `pressure_at` tokens); squeeze folds run only while above it."""
        known: dict[str, dict[str, Any]] = {}  # stored nodes read by the rounds so far
        for _ in range(rounds):
            over = sum(v.tokens for v in summaries) > pressure_at
            if squeeze and (len(summaries) < 2 or not over):
                break

            def fold(views: list[SyntheticView] = summaries, pressure: bool = over) -> list[SyntheticView]:
                return self.dag.fold(
                    views,
                    self.history.index_of_id,
                    pressure=pressure,
                    event_id=event_id,
                    count=count,
                    quote_tokens=quotes,
                    max_tokens=self.max_node_tokens(budget),
                    squeeze=squeeze,
                    known=known,
                )

            folded = self.breakers.run(SUMMARIZE, fold, summaries)
            if len(folded) == len(summaries):
                break
            summaries = folded
        return summaries

    def quote_tokens(self, budget: Budget) -> int:
        """Tokens of verbatim quotes one summary node may keep (`summary.quotes`): the model
        share once model summaries stand for what is removed (`SummaryDag.model_written`, as
        the economic target reads it), since extractive leaves and merged folds then sit
        beside model bodies that carry the stated values; else `quote_ratio`."""
        if self.config.model_quote_ratio != self.config.quote_ratio and self.dag.model_written():
            return self.model_quote_tokens(budget)
        return int(budget.prompt_limit * self.config.quote_ratio)

    def model_quote_tokens(self, budget: Budget) -> int:
        """Tokens of quotes a node may keep beside a body a model wrote (`model_quote_ratio`)."""
        return int(budget.prompt_limit * self.config.model_quote_ratio)

    def max_node_tokens(self, budget: Budget) -> int:
        """The largest summary body one node may carry (a bigger one falls back to extractive)."""
        return int(budget.prompt_limit * self.config.max_node_ratio)

    def prepared_blocks(self) -> dict[int, int]:
        """Row ranges with a summary prepared in the background: start index → end (exclusive)."""
        blocks = {}
        for node in self.history.store.summaries(self.history.session_id, status="prepared"):
            if node["children"]:
                continue  # a prepared fold: it stands for nodes, not for rows
            start, end = self.history.index_of_id(node["first_id"]), self.history.index_of_id(node["last_id"]) + 1
            if start < len(self.history.rows) and self.history.rows[start].id == node["first_id"]:
                blocks[start] = end
        return blocks

    def _split_by_prepared(self, run: list[int]) -> list[list[int]]:
        """A removed run (consecutive row indices) cut at the edges of prepared summaries, so
        each prepared range gets its own node and the rest gets the extractive one."""
        blocks = self.prepared_blocks()
        out: list[list[int]] = []
        plain: list[int] = []
        i, last = run[0], run[-1]
        while i <= last:
            end = blocks.get(i)
            if end is not None and end - 1 <= last:
                if plain:
                    out.append(plain)
                    plain = []
                out.append(list(range(i, end)))
                i = end
            else:
                plain.append(i)
                i += 1
        if plain:
            out.append(plain)
        return out

    def _bare_marker(
        self, covered: Sequence[MessageRecord], before_id: int, event_id: int, model: str
    ) -> SyntheticView:
        """When the summary stage is disabled (its breaker is open): the deterministic marker."""
        message = {"role": "user", "content": omission_marker(covered)}
        return SyntheticView(
            before_id,
            SUMMARY_KIND,
            message,
            count_message_tokens(message, model),
            event_id,
            (covered[0].id, covered[-1].id),
        )
