"""The seed's "incremental merge into the existing summary" is the DAG's model fold, live.

Why the fold and not the `previous=` merge prompt: the DAG never rewrites a stored summary (the
cached prefix and every node's expansion stay valid); new history becomes a new leaf, and the
leaves are merged into a deeper node by the summarizer model, whose fold prompt tells it to keep
the open blockers and drop what a later summary settled. These tests drive it through the agent's
compact command with the scripted provider as the summarizer.
"""

from __future__ import annotations

from myrm_tui.context.recall.answers import ctx_expand
from tests.agent.test_compact_summarizes import chat_agent, requests_of, summarizer_script


async def test_compact_merges_the_existing_leaf_summaries_into_a_deeper_node_written_by_the_model(
    store, workspace, tmp_path
):
    lite, lite_record = summarizer_script(tmp_path, "lite", window=16_000)
    agent, _ = chat_agent(store, workspace, tmp_path, lite=lite, turns=200)
    await agent.compact_now(None)

    folds = requests_of(lite_record, "fold")
    assert folds, "the model was asked to merge summaries"
    system, body = folds[0][0]["content"], folds[0][1]["content"]
    assert "drop each one a later summary shows resolved" in system, "the merge rule is in the prompt"
    assert body.count("Summary S") >= 2, "the existing summaries are what the model merges"
    nodes = store.summaries(agent.session_id)
    deep = [n for n in nodes if n["children"] and n["status"] == "active"]
    assert deep and all(n["model"] == lite for n in deep), "the merged node is the model's"
    merged = deep[0]
    by_handle = {n["handle"]: n for n in nodes}
    assert all(by_handle[c]["status"] == "folded" for c in merged["children"])
    prompt = agent.engine.assemble(agent.turn_input())
    shown = "\n".join(str(m["content"]) for m in prompt.messages)
    assert f"[summary {merged['handle']}" in shown
    assert not any(f"[summary {c}" in shown for c in merged["children"]), "the merged node replaces its parts"
    assert merged["children"][0] in ctx_expand(store, agent.session_id, merged["handle"]), "nothing is lost"
