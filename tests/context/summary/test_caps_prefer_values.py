"""enforce_caps: a capped list keeps the items stating a value before merely newer plain ones."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.summary.schema import FIELD_CAPS, FileChange, StructuredSummary, enforce_caps


def test_a_fold_keeps_the_file_whose_new_value_it_states_over_newer_plain_edits():
    cap = FIELD_CAPS["files_modified"]
    files = [FileChange("config/a.toml", "edit; now: port=4821")]
    files += [FileChange(f"src/m{i}.py", "edit") for i in range(cap + 5)]
    kept = enforce_caps(StructuredSummary(files_modified=files)).files_modified
    assert len(kept) == cap
    assert kept[0].path == "config/a.toml", "kept, and still in its place (oldest first)"
    assert kept[1:] == files[-(cap - 1) :]


def test_findings_prefer_a_stated_value_to_a_pages_ordinary_field():
    cap = FIELD_CAPS["key_findings"]
    findings = ["bash: WARN override applied region=eu-west-3 (msg:5)"] + [f'bash: "limit": {i},' for i in range(cap)]
    kept = enforce_caps(StructuredSummary(key_findings=findings)).key_findings
    assert kept[0] == findings[0] and len(kept) == cap


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 99)), max_size=40))
def test_caps_properties(spec):
    cap = FIELD_CAPS["completed_actions"]
    items = [f"step {i} {'port=' + str(n) if valued else 'plain ' + str(n)}" for i, (valued, n) in enumerate(spec)]
    kept = enforce_caps(StructuredSummary(completed_actions=items)).completed_actions
    assert len(kept) == min(cap, len(items))
    positions = [items.index(item) for item in kept]
    assert positions == sorted(positions), "order kept"
    valued = [item for item in items if "port=" in item]
    assert set(valued[-cap:]) <= set(kept), "the newest valued items are never cut for plain ones"
    if len(items) > cap and len(valued) < cap:
        plain = [item for item in items if "port=" not in item]
        assert [item for item in kept if "port=" not in item] == plain[len(plain) - (cap - len(valued)) :]
