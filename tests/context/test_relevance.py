"""BM25 relevance, the eviction-order policy, and relevance-first removal in the planner."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.observations.relevance import bm25_scores, least_relevant_first, tokenize
from myrm_tui.context.observations.relevance_policy import (
    EVICTION_ORDERS,
    RECENCY,
    RELEVANCE,
    eviction_order,
    keeps_prompt_cache,
)
from myrm_tui.context.rows.units import split_units
from myrm_tui.context.rows.views import REMOVED
from myrm_tui.context.stages.compress import EMERGENCY, _Planner, plan_compaction
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.settings.schema import SPECS_BY_KEY
from tests.context.plan_helpers import call, plan_input, tool_unit
from tests.hypothesis_profiles import examples


def model(name: str = "openai/gpt-4o", caching: bool = True) -> ModelInfo:
    return ModelInfo(name, "p", 32_000, 1024, True, supports_prompt_caching=caching)


# -- the scorer ------------------------------------------------------------------------------
def test_tokenize_splits_paths_and_modules_into_their_parts():
    assert tokenize("See src/App.py and pkg.mod_x (a)") == ["see", "src", "app", "py", "and", "pkg", "mod_x"]


def test_a_document_with_the_query_terms_scores_higher_and_rare_terms_weigh_more():
    docs = [tokenize(t) for t in ("the parser fails on tabs", "the weather is nice", "the the the")]
    scores = bm25_scores(tokenize("parser tabs"), docs)
    assert scores[0] > 0 and scores[1] == 0 and scores[2] == 0
    common = bm25_scores(["the"], docs)
    assert max(common) < scores[0]


def test_an_empty_query_or_corpus_scores_nothing():
    assert bm25_scores([], [["a", "b"]]) == [0.0]
    assert bm25_scores(["x"], []) == []


def test_least_relevant_first_puts_the_matching_text_last_and_keeps_ties_in_order():
    texts = ["grep output about parser.py", "ls of docs", "weather", "parser.py body, parser tokens"]
    order = least_relevant_first("fix the parser in parser.py", texts)
    assert order[:2] == [1, 2]  # the two unrelated ones, oldest first
    assert order[-1] == 3 and order[-2] == 0  # the most relevant is evicted last


@given(st.lists(st.text(max_size=60), max_size=12), st.text(max_size=40))
def test_least_relevant_first_is_a_permutation(texts, query):
    order = least_relevant_first(query, texts)
    assert sorted(order) == list(range(len(texts)))


@given(st.lists(st.text(alphabet="abc xyz", max_size=30), max_size=10))
def test_with_no_query_the_order_is_oldest_first(texts):
    assert least_relevant_first("", texts) == list(range(len(texts)))


# -- the policy ------------------------------------------------------------------------------
def test_auto_ranks_by_relevance_only_without_a_prompt_cache():
    assert eviction_order("auto", model(caching=True)) == RECENCY
    assert eviction_order("auto", model(caching=False)) == RELEVANCE
    # The embedded model's worker keeps llama.cpp's KV cache: an append-only prompt pays there too.
    assert keeps_prompt_cache(model("local/smollm2", caching=False))
    assert eviction_order("auto", model("local/smollm2", caching=False)) == RECENCY


def test_the_setting_overrides_the_model_either_way():
    assert eviction_order("relevance", model(caching=True)) == RELEVANCE
    assert eviction_order("recency", model(caching=False)) == RECENCY
    assert eviction_order("nonsense", model(caching=False)) == RELEVANCE  # unknown = auto


def test_the_setting_offers_exactly_the_engine_orders():
    spec = SPECS_BY_KEY["eviction_order"]
    assert spec.choices == EVICTION_ORDERS and spec.default == "auto"


# -- the planner -----------------------------------------------------------------------------
FILLER = "lorem ipsum dolor sit amet " * 40


def session() -> list[dict]:
    """Anchor, an old read of the parser, two unrelated newer outputs, the question, a tail unit."""
    return [
        {"role": "user", "content": "help me with this repository"},
        *tool_unit("c1", "file_read", {"path": "notes/todo.txt"}, "parser tokenizer grammar tabs " + FILLER),
        *tool_unit("c2", "bash", {"command": "date"}, "weather report " + FILLER),
        *tool_unit("c3", "bash", {"command": "uptime"}, "load average " + FILLER),
        {"role": "user", "content": "why does the tokenizer choke on tabs in the grammar"},
        *tool_unit("c4", "bash", {"command": "true"}, "ok"),
    ]


def removed(plan, inp) -> set[int]:
    return {i for i, r in enumerate(inp.rows) if (v := plan.views.get(r.id)) is not None and v.kind == REMOVED}


def removal_only(messages, eviction=RECENCY) -> set[int]:
    """What the emergency's removal step alone takes when exactly one old unit must go."""
    probe = plan_input(messages, tier=EMERGENCY, target=0)
    inp = plan_input(messages, tier=EMERGENCY, target=probe.total - 200, eviction=eviction)
    planner = _Planner(inp)
    planner.remove_units()
    return removed(planner.plan, inp)


def test_relevance_eviction_removes_the_unrelated_newer_unit_and_keeps_the_relevant_old_one():
    assert removal_only(session(), RECENCY) == {1, 2}  # the oldest unit: the tokenizer notes
    assert removal_only(session(), RELEVANCE) == {3, 4}  # the weather, not the tokenizer notes


def test_relevance_eviction_keeps_the_unit_the_question_names_and_recency_ignores_it():
    messages = session()
    messages[7] = {"role": "user", "content": "look at notes/todo.txt again"}  # the path unit 1 read
    assert removal_only(messages, RECENCY) == {1, 2}  # oldest first, as on a caching model
    assert removal_only(messages, RELEVANCE) == {3, 4}


unit_bodies = st.lists(
    st.tuples(st.sampled_from(["parser", "weather", "grammar", "disk", ""]), st.integers(0, 2)), min_size=1, max_size=8
)


@settings(max_examples=examples(60), deadline=None)
@given(unit_bodies, st.sampled_from([RECENCY, RELEVANCE]), st.floats(0.0, 1.0), st.booleans())
def test_removal_takes_whole_units_only_and_never_the_anchors_or_the_tail(bodies, eviction, share, with_block):
    messages: list[dict] = [{"role": "user", "content": "start"}]
    for n, (word, calls) in enumerate(bodies):
        if calls == 0:
            messages.append({"role": "assistant", "content": f"{word} " + FILLER[: 50 * (n + 1)]})
            continue
        ids = [f"c{n}_{k}" for k in range(calls)]
        messages.append({"role": "assistant", "content": "", "tool_calls": [call(i, "bash", {}) for i in ids]})
        messages += [{"role": "tool", "tool_call_id": i, "name": "bash", "content": f"{word} {FILLER}"} for i in ids]
    messages += [{"role": "user", "content": "about the parser grammar"}, {"role": "assistant", "content": "ok"}]
    probe = plan_input(messages, tier=EMERGENCY, target=0)
    blocks = (
        {split_units(probe.rows)[1].start: split_units(probe.rows)[-3].end} if with_block and len(bodies) > 2 else {}
    )
    inp = plan_input(messages, tier=EMERGENCY, target=int(probe.total * share), eviction=eviction, blocks=blocks)
    gone = removed(plan_compaction(inp), inp)
    for unit in inp.units:
        inside = {i for i in range(unit.start, unit.end) if i in gone}
        assert not inside or len(inside) == unit.end - unit.start  # a call and its results together
    assert not gone & set(inp.protected)
    assert all(i < inp.tail_start for i in gone)
