"""The stage list is defined once, in code: the doc's table and the report's stage names follow it."""

from __future__ import annotations

import re
from pathlib import Path

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.pipeline import BREAKERS, FIGURE_ENTRIES, STAGE_NAMES, stages_table
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import Store

DOC = Path(__file__).resolve().parents[2] / "docs" / "context-engine.md"
TABLE = re.compile(r"<!-- stage-table:start[^>]*-->\n(.*?)<!-- stage-table:end -->", re.S)


def test_the_docs_stage_table_is_the_one_the_code_defines():
    found = TABLE.search(DOC.read_text(encoding="utf-8"))
    assert found, "docs/context-engine.md lost its stage-table markers"
    assert found.group(1) == stages_table(), (
        "docs/context-engine.md's stage table differs from myrm_tui/context/pipeline.py; paste "
        "`python -c 'from myrm_tui.context.pipeline import stages_table; print(stages_table())'`"
    )


def test_stage_names_are_unique_and_breakers_name_stages():
    assert len(set(STAGE_NAMES)) == len(STAGE_NAMES)
    assert set(STAGE_NAMES) >= BREAKERS


def test_a_report_times_the_listed_stages_in_their_order(tmp_path):
    model = ModelInfo(
        name="gpt-4o", provider="openai", context_window=4_000, max_output_tokens=512, supports_tools=True
    )
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        for n in range(30):
            for message in (
                {"role": "user", "content": f"question {n} " + "word " * 60},
                {"role": "assistant", "content": f"answer {n} " + "word " * 60},
            ):
                store.append_message(session, message, count_message_tokens(message, "gpt-4o"))
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        report = engine.assemble(TurnInput("sys", [], model, 512, now=0.0)).report
    names = [stage.name for stage in report.stages]
    assert report.event is not None and "compress" in names, "this session is over the window: an event runs"
    assert set(names) <= set(FIGURE_ENTRIES)
    assert names == [n for n in FIGURE_ENTRIES if n in names], "entries are written in the listed order"
    # Every stage that ran has its own time, in pipeline order, under the key the replay digest skips.
    assert report.stage_ms is not None
    timed = list(report.stage_ms)
    assert timed == [n for n in STAGE_NAMES if n in timed]
    assert {"sync", "thinking_cleanup", "media_filter", "normalize", "compress", "summarize", "encode_safe"} <= set(
        timed
    )
    assert all(ms >= 0 for ms in report.stage_ms.values())
    assert report.to_dict()["stage_ms"] == report.stage_ms
