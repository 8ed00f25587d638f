"""kept_facts: the one-off facts a masked output's stub keeps (a fact mid-output survives a mask)."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.filters.kept_facts import MASK_FACTS, kept_facts
from myrm_tui.context.filters.notable import LINE_CHARS, NotableLine, note_line
from tests.hypothesis_profiles import examples


def build_log(lines: int, extra: str | None = None, seed: int = 3) -> str:
    rng = random.Random(seed)
    out = [
        f"2025-03-14T10:{i % 60:02d}:07.412Z INFO  [http] GET /api/items status=200 ms={rng.randrange(1, 90)}"
        for i in range(lines)
    ]
    if extra is not None:
        out.insert(lines // 2, extra)
    return "\n".join(out)


def test_a_fact_in_the_middle_of_a_repetitive_log_is_kept():
    log = build_log(300, "2025-03-14T10:30:07.412Z WARN  [config.loader] override applied port=4821 (source=env)")
    kept = kept_facts(log)
    assert len(kept) == 1 and "override applied port=4821" in kept[0]
    assert kept[0].startswith("… kept: ")


def test_the_one_record_with_an_extra_field_in_a_json_page_is_kept():
    records = [{"id": 100 + i, "sku": f"SKU-{i:04d}", "status": "paid"} for i in range(200)]
    records[97]["note"] = "migrated from legacy region=eu-west-3"
    kept = kept_facts(json.dumps({"data": records}, indent=2))
    assert any("region=eu-west-3" in line for line in kept)


def test_an_excerpt_keeps_its_heaviest_notes():
    """Every note was a break of its output; when there are more than a stub keeps, warnings and
    errors go first, then lines carrying a value, and a page's ordinary field is the one left out
    (it used to be weighed by how many `key=value` pairs a note held: the bench's needle syntax)."""
    notes = [
        note_line(NotableLine(5905, '"note": "moved to eu-west-3"', 3)),
        note_line(NotableLine(11747, '"limit": 719,', 3)),
        note_line(NotableLine(12001, '"status": "failed: quota exceeded"', 5)),
        note_line(NotableLine(13020, '"replica": "db-7.prod"', 3)),
    ]
    excerpt = '[output 243,053 chars → json excerpt shown]\n{\n  "data": [\n' + "\n".join(notes)
    kept = kept_facts(excerpt)
    assert len(kept) == MASK_FACTS == 3
    assert kept[0] == '… kept: "status": "failed: quota exceeded" …', "the error first"
    assert '… kept: "note": "moved to eu-west-3" …' in kept
    assert all("limit" not in line for line in kept), "the page's ordinary field stays out"


def test_plain_or_short_outputs_keep_nothing():
    assert kept_facts("") == []
    assert kept_facts("All checks passed!\n3 files checked") == []
    assert kept_facts(build_log(300)) == [], "nothing breaks the pattern"


def test_a_secret_is_never_kept():
    log = build_log(300, "2025-03-14T10:30:07.412Z WARN  [auth] fallback api_key=sk-live-abcdefabcdefabcdef01")
    assert all("sk-live" not in line for line in kept_facts(log))


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.text(min_size=0, max_size=400), max_size=12), st.integers(0, 2**16))
def test_bounded_whatever_the_output(extras, seed):
    log = build_log(60, seed=seed)
    lines = log.split("\n")
    for i, extra in enumerate(extras):
        lines.insert((i * 7) % len(lines), extra)
    kept = kept_facts("\n".join(lines))
    assert len(kept) <= MASK_FACTS
    assert all("\n" not in line and len(line) <= LINE_CHARS + len("… kept:  …") for line in kept)


def test_a_tight_excerpt_of_a_log_full_of_errors_keeps_the_one_off_fact_first():
    """Hundreds of ERROR lines rank as important as the note; the note is still the first kept."""
    from myrm_tui.context.filters import filter_output

    rng = random.Random(5)
    lines = ["$ make ci PACKAGE=ledgerline"]
    for i in range(400):
        level = "ERROR" if i % 3 == 0 else "DEBUG"
        lines.append(
            f"2025-03-14T10:{i % 60:02d}:20.654Z {level} [queue.consumer] pool size={rng.randrange(30)} idle=4"
        )
    lines.insert(201, "2025-03-14T10:03:07.412Z WARN  [config.loader] override applied max_retries=4 (source=env)")
    result = filter_output("\n".join(lines), tool="bash", arguments={"command": "make ci 2>&1"}, budget_chars=1500)
    assert result is not None and len(result.text) <= 1500
    assert "override applied max_retries=4" in result.text
