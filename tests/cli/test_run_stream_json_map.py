"""`myrm run --output-format stream-json` follows an llm_map: the progress `myrm run` prints on
stderr arrives on stdout as `map_progress` lines (docs/commands.md, Streamed JSON), with the
figures a program needs (done, failed, total, tokens and cost so far) and the map's tool call id.
"""

from __future__ import annotations

import json

from tests.cli.test_llm_map_run import item_model, map_call

ITEMS = 5
PRICE_PER_TOKEN = 1e-5  # the item model's price (user config): the map's cost is then above zero


def test_stream_json_carries_the_map_progress(myrm, script, tmp_path):
    lite, _ = item_model(tmp_path)
    prices = f"input_cost_per_token = {PRICE_PER_TOKEN}\noutput_cost_per_token = {PRICE_PER_TOKEN}\n"
    (myrm.config_dir / "config.toml").write_text(f'[models."{lite}"]\n{prices}', encoding="utf-8")
    model = script(map_call([f"item {i}" for i in range(ITEMS)]), {"text": "Done."})
    result = myrm(
        "run", "--output-format", "stream-json", "--model", model, "count them", env={"MYRM_LITE_MODEL": lite}
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    types = [line["type"] for line in lines]
    ((call_id, name),) = [(line["id"], line["name"]) for line in lines if line["type"] == "tool_call"]
    assert name == "llm_map"

    progress = [line for line in lines if line["type"] == "map_progress"]
    assert len(progress) >= 2 and all(p["id"] == call_id and p["name"] == "llm_map" for p in progress)
    # between the map's call and its result, in order
    first, last = types.index("map_progress"), len(types) - 1 - types[::-1].index("map_progress")
    assert types.index("tool_call") < first and last < types.index("tool_result")
    assert progress[0]["done"] == 0 and progress[0]["total"] == ITEMS
    done = [p["done"] for p in progress]
    assert done == sorted(done)
    end = progress[-1]
    assert (end["done"], end["failed"], end["total"], end["note"]) == (ITEMS, 0, ITEMS, "finished")
    assert end["tokens"] > 0 and end["cost"] > 0
    assert end["tokens"] >= max(p["tokens"] for p in progress)
    # stderr keeps the human-readable line
    assert f"⟫map llm_map: {ITEMS} of {ITEMS} · 0 failed" in result.stderr
