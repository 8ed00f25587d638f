"""The pass over a whole long output that lifts its one-off facts into the summary."""

from __future__ import annotations

import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.filters.notable import LINE_CHARS, NotableLine, notable_lines, note_line, note_weight
from myrm_tui.context.summary.extractive import extractive_summary
from myrm_tui.context.summary.schema import FIELD_CAPS, FileChange, StructuredSummary, enforce_caps
from myrm_tui.context.summary.source import summarizer_messages
from myrm_tui.context.window.tokens import count_message_tokens
from tests.context.summary.summary_helpers import assistant, call, tool, user
from tests.hypothesis_profiles import examples

FACT = "2025-03-14T10:30:07.412Z WARN  [config.loader] override applied queue_shard=eu-7 (source=env)"


def request_log(lines: int, fact_at: int | None = None) -> str:
    out = [
        f"2025-03-14T10:{i % 60:02d}:00Z INFO  [http] GET /api/v1/items/{i} status=200 duration_ms={i % 97}"
        for i in range(lines)
    ]
    if fact_at is not None:
        out.insert(fact_at, FACT)
    return "\n".join(out)


def records(n: int, extra_at: int | None = None) -> str:
    rows = [{"id": i, "status": "open", "amount": i * 1.5, "owner": {"name": f"u{i}"}} for i in range(n)]
    if extra_at is not None:
        rows[extra_at]["note"] = "refund approved by finance ticket FIN-2291"
    return json.dumps({"data": rows, "page": {"limit": n}}, indent=2)


def test_a_fact_in_the_middle_of_a_request_log_is_found_without_its_timestamp():
    found = notable_lines(request_log(400, fact_at=200), 3)
    assert [n.text for n in found] == ["WARN [config.loader] override applied queue_shard=eu-7 (source=env)"]
    assert found[0].index == 200


def test_a_field_only_one_record_has_is_found_but_not_the_container_keys():
    found = [n.text for n in notable_lines(records(300, extra_at=150), 3)]
    # The page's own field (`limit`) is a one-off too, and rightly so; `"data": [` and
    # `"page": {` open containers and say nothing.
    assert found == ['"note": "refund approved by finance ticket FIN-2291"', '"limit": 300']


def test_repetitive_output_without_a_break_and_short_outputs_say_nothing():
    assert notable_lines(request_log(400), 3) == []
    # A ten-line config file: every key occurs once, so "occurs once" means nothing there.
    config = "\n".join(f"key_{i} = {i}".replace(" = ", "=") for i in range(10))
    assert notable_lines(config, 3) == []


def test_secret_keys_are_never_lifted():
    text = request_log(300, fact_at=100).replace("queue_shard=eu-7", "db_password=hunter2-x")
    assert notable_lines(text, 3) == []


def test_best_first_then_in_output_order_and_lines_are_cut():
    lines = request_log(300).split("\n")
    lines.insert(50, "INFO plain one-off region=eu-west-3")
    lines.insert(250, "ERROR failed to apply migration_id=0042 " + "x" * 400)
    found = notable_lines("\n".join(lines), 1)
    assert len(found) == 1 and found[0].text.startswith("ERROR failed to apply migration_id=0042")
    assert len(found[0].text) == LINE_CHARS
    both = notable_lines("\n".join(lines), 5)
    assert [n.index for n in both] == [50, 250]


def test_skip_head_and_tail_leave_out_what_an_excerpt_shows():
    text = request_log(300, fact_at=2)
    assert notable_lines(text, 3) and notable_lines(text, 3, skip_head=600) == []


def test_a_huge_output_is_scanned_in_bounded_time():
    text = request_log(60_000, fact_at=30_000)  # ~5 MB, past the scan cap
    started = time.perf_counter()
    notable_lines(text, 2)
    assert time.perf_counter() - started < 5.0


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.text(alphabet='ab=_ "{}:[]x1', max_size=30), max_size=80), st.integers(0, 5))
def test_properties(lines, limit):
    text = "\n".join(lines)
    found = notable_lines(text, limit)
    assert len(found) <= limit
    assert [n.index for n in found] == sorted(n.index for n in found)
    assert all(len(n.text) <= LINE_CHARS for n in found)


def build_session(output: str) -> list[dict]:
    return [
        user("Run the CI target and tell me why the deploy config differs."),
        assistant("", call("c1", "bash", command="make ci")),
        tool("c1", output),
        assistant("CI passed; an env override changed the queue shard."),
    ]


def test_the_extractive_summary_keeps_the_fact_from_the_middle_of_the_output():
    messages = build_session(request_log(400, fact_at=200))
    source = sum(count_message_tokens(m) for m in messages)
    summary = extractive_summary(messages, ids=[10, 11, 12, 13], source_tokens=source)
    assert any("queue_shard=eu-7" in f and "msg:12" in f for f in summary.key_findings), summary.key_findings


def test_the_summarizer_reads_the_fact_with_the_excerpt_and_stays_small():
    messages = build_session(request_log(400, fact_at=200))
    text = summarizer_messages(messages)[2]["content"]
    assert "queue_shard=eu-7" in text and "notable lines among them" in text
    assert len(text) < 1_000
    plain = summarizer_messages(build_session(request_log(400)))[2]["content"]
    assert "notable" not in plain


def test_decisions_written_as_such_are_kept_with_their_handle():
    messages = [
        user("Which API version do we pin?"),
        assistant(
            "Checked the callers.\n"
            + "The billing client calls the v2 endpoints in many places.\n" * 40
            + "\nDecision: pin api_version=v2.3 because billing depends on it."
        ),
        user("ok, and the queue?"),
        assistant("Looking.\n- We'll keep the mail queue as is for now."),
    ]
    source = sum(count_message_tokens(m) for m in messages)
    summary = extractive_summary(messages, ids=[1, 2, 3, 4], source_tokens=source)
    assert summary.decisions[0].startswith("Decision: pin api_version=v2.3") and "msg:2" in summary.decisions[0]
    assert summary.decisions[1].startswith("We'll keep the mail queue") and "msg:4" in summary.decisions[1]


def test_a_short_edit_keeps_the_files_new_value_until_a_later_write_replaces_it():
    """A changed setting is the fact a later turn asks for; the re-read that showed it is gone
    once summarized (the bench's re-read config file, carrier 4)."""
    messages = [
        user("Bump the port in config/app.toml."),
        assistant("", call("c1", "file_edit", path="config/app.toml", old="port=4821", new="port=5000")),
        tool("c1", "edited config/app.toml: replaced 1 occurrence at line 3"),
        assistant("", call("c2", "file_read", path="config/app.toml")),
        tool("c2", "[server]\nport=5000\n"),
        assistant("", call("c3", "file_edit", path="src/a.py", old="x = 1", new="x = 1\n" + "y = 2\n" * 3)),
        tool("c3", "edited src/a.py: replaced 1 occurrence at line 9"),
        assistant("Done: the port is 5000."),
    ]
    source = sum(count_message_tokens(m) for m in messages)
    files = {f.path: f.change for f in extractive_summary(messages, source_tokens=source).files_modified}
    assert files == {"config/app.toml": "edit; now: port=5000", "src/a.py": "edit"}
    rewritten = [*messages[:-1], assistant("", call("c4", "file_write", path="config/app.toml", content="[s]\n"))]
    rewritten.append(tool("c4", "wrote config/app.toml"))
    files = {f.path: f.change for f in extractive_summary(rewritten, source_tokens=source).files_modified}
    assert files["config/app.toml"] == "write", "a whole-file write makes the edit's value stale"


def test_a_value_the_user_states_in_passing_is_kept_as_a_standing_fact():
    ask = (
        "Can you look at why test_parse fails on CI? By the way, ops told me the value to use is "
        "NEEDLE-0a1b2c3d4e region=eu-west-3 - keep that in mind. And my password=hunter2 is irrelevant."
    )
    messages = [user(ask), assistant("The parser drops the last row; fixed.")]
    summary = extractive_summary(messages, ids=[7, 8], source_tokens=10_000)
    assert summary.constraints_and_preferences == [
        "user stated: By the way, ops told me the value to use is NEEDLE-0a1b2c3d4e region=eu-west-3 - keep "
        "that in mind. (msg:7)"
    ]


def test_a_command_echo_and_a_pages_ordinary_fields_are_not_findings():
    lines = ["$ make ci PACKAGE=ledger"] + [f"step {i} ok elapsed_ms={i}" for i in range(60)]
    lines.insert(30, "WARN [config.loader] override applied port=4821 (source=env)")
    messages = [
        user("run ci"),
        assistant("", call("c1", "bash", command="make ci PACKAGE=ledger 2>&1")),
        tool("c1", "\n".join(lines)),
        assistant("CI passed."),
    ]
    summary = extractive_summary(messages, source_tokens=10_000)
    assert summary.key_findings == ["bash: WARN [config.loader] override applied port=4821 (source=env)"]


def test_an_excerpts_notes_are_weighed_so_a_pages_ordinary_field_is_not_a_finding():
    """Notes carried by a spilled output's excerpt have no score of their own: each one is
    weighed by what it says (an error, a concrete value), and when an output has more notes than
    findings the ordinary one is left out. (They used to be weighed by their `key=value` pairs,
    the bench's needle syntax.)"""
    notes = [
        note_line(NotableLine(40, '"note": "api moved to v3.10.21"', 3)),
        note_line(NotableLine(900, '"limit": 720,', 3)),
        note_line(NotableLine(950, '"replica": "db-7.prod",', 3)),
        note_line(NotableLine(990, '"error": "quota exceeded for tenant acme"', 5)),
    ]
    assert (
        note_weight('"error": "quota exceeded"')
        > note_weight('"note": "api moved to v3.10"')
        > note_weight('"limit": 720,')
    )
    excerpt = "[\n" + "\n".join(notes) + "\n]"
    messages = [
        user("fetch the orders"),
        assistant("", call("c1", "bash", command="curl -s localhost:8000/api/v1/orders | jq .")),
        tool("c1", excerpt),
        assistant("Fetched."),
    ]
    summary = extractive_summary(messages, source_tokens=10_000)
    findings = " ".join(summary.key_findings)
    assert '"note": "api moved to v3.10.21"' in findings and "quota exceeded" in findings
    assert '"limit": 720' not in findings


def test_a_capped_file_list_keeps_one_entry_per_path():
    cap = FIELD_CAPS["files_modified"]
    files = [FileChange(f"src/f{i}.py", "edit") for i in range(cap)] + [FileChange("src/f3.py", "write")]
    capped = enforce_caps(StructuredSummary(files_modified=files)).files_modified
    assert len(capped) == cap and capped[0].path == "src/f0.py", "the oldest file survives the duplicate"
    assert [f for f in capped if f.path == "src/f3.py"] == [FileChange("src/f3.py", "write")]


def test_a_long_run_lists_its_newest_findings_and_reads_only_the_outputs_it_lists():
    """A summary lists the newest MAX_FINDINGS findings at any scale: those are the same whether
    the older outputs are read or not, and an event reading all ~40 outputs of a run for
    findings it then dropped was a third of a leaf's time (benchmark B1)."""
    from myrm_tui.context.summary.extractive import MAX_FINDINGS

    runs = MAX_FINDINGS + 6
    messages = [user("Check each shard's config loader.")]
    for n in range(runs):
        messages += [assistant("", call(f"c{n}", "bash", command=f"check shard {n}")), tool(f"c{n}", f"shard {n}")]
    ids = list(range(100, 100 + len(messages)))
    asked: list[int] = []

    def kept(message_id: int) -> list[str]:
        asked.append(message_id)
        return [f"shard {message_id} override queue=eu-{message_id}"]  # one named line per output

    source = sum(count_message_tokens(m) for m in messages)
    summary = extractive_summary(messages, ids=ids, source_tokens=source * 4, kept=kept)
    results = ids[2::2]  # every tool row's id, oldest first
    newest = results[-MAX_FINDINGS:]
    assert [f.split("queue=eu-")[1].split(" ")[0] for f in summary.key_findings] == [str(i) for i in newest]
    assert sorted(asked) == newest, "outputs whose findings are not listed were read for them"
