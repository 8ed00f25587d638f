"""Property: fork-by-reference histories equal a naive model that copies lists on fork."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.store import Store
from tests.hypothesis_profiles import examples

# An operation is ("append", session pick) or ("fork", session pick, message pick).
operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 50)),
        st.tuples(st.just("fork"), st.integers(0, 50), st.integers(0, 50)),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_histories_match_copying_model(ops):
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder)) as store:
        root = store.create_session("m")
        model: dict[str, list[int]] = {root.id: []}  # session -> message ids, copied on fork
        order = [root.id]
        for n, op in enumerate(ops):
            session_id = order[op[1] % len(order)]
            if op[0] == "append":
                row = store.append_message(session_id, {"role": "user", "content": f"#{n}"}, tokens=1)
                model[session_id].append(row.id)
            elif model[session_id]:
                history = model[session_id]
                at = history[op[2] % len(history)]
                child = store.fork(session_id, at_message=at)
                model[child.id] = history[: history.index(at) + 1]
                order.append(child.id)
        for session_id, expected in model.items():
            assert [r.id for r in store.messages(session_id)] == expected
            if expected:
                middle = expected[len(expected) // 2]
                after = [r.id for r in store.messages_after(session_id, middle)]
                assert after == [i for i in expected if i > middle]
