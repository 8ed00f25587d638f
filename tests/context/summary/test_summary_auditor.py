"""Zero-LLM audit: structure, entity retention against the chunk, size against the chunk."""

from __future__ import annotations

from dataclasses import replace

from myrm_tui.context.summary.auditor import DEFAULT_MIN_RETENTION, audit, extract_entities
from myrm_tui.context.summary.prompts import transcript
from myrm_tui.context.summary.schema import StructuredSummary, summary_from_dict
from myrm_tui.context.window.tokens import count_message_tokens
from tests.context.summary.summary_helpers import GOOD_SUMMARY, session_chunk

CHUNK = session_chunk()
SOURCE = transcript(CHUNK, list(range(100, 111)))
SOURCE_TOKENS = sum(count_message_tokens(m) for m in CHUNK)


def good() -> StructuredSummary:
    return summary_from_dict(GOOD_SUMMARY)


def test_entities_of_the_chunk_are_the_identifiers_an_agent_needs():
    values = {e.value for e in extract_entities(SOURCE)}
    for expected in (
        "src/api/upload.py",
        "tests/test_upload.py",
        "ZeroDivisionError",
        "EmptyUploadError",
        "UploadValidator",
        "handle_upload",
        "MAX_UPLOAD_BYTES",
        "3f9c2ab1",
        "HTTP 500",
    ):
        assert expected in values, expected
    assert not values & {"the", "file", "Fixed"}


def test_entity_kinds_cover_urls_uuids_codes_env_and_ports():
    text = (
        "GET https://api.example.com/v2/users?id=7 failed with status 503; run id "
        "123e4567-e89b-12d3-a456-426614174000, error E1234 from TS2345, DATABASE_URL unset, "
        "server on localhost:8080, parse_config_v2 and HttpClient2 involved; bump 1.2.3, e.g. this."
    )
    kinds = {(e.kind, e.value) for e in extract_entities(text)}
    for item in (
        ("url", "https://api.example.com/v2/users?id=7"),
        ("http", "HTTP 503"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
        ("code", "E1234"),
        ("code", "TS2345"),
        ("env", "DATABASE_URL"),
        ("port", ":8080"),
        ("ident", "parse_config_v2"),
        ("ident", "HttpClient2"),
    ):
        assert item in kinds, item
    assert not any(v in ("1.2.3", "e.g") for _, v in kinds)


def test_a_faithful_summary_passes():
    result = audit(good(), source_text=SOURCE, source_tokens=SOURCE_TOKENS)
    assert result.ok, result.problems
    assert result.retained_share >= DEFAULT_MIN_RETENTION
    assert 0 < result.summary_tokens < SOURCE_TOKENS


def test_missing_goal_and_active_task_are_reported_as_instructions():
    result = audit(replace(good(), user_goal="", active_task=""), source_text=SOURCE, source_tokens=SOURCE_TOKENS)
    assert not result.ok
    assert any(p.startswith("user_goal is empty") for p in result.problems)
    assert any("active_task is empty" in p and "verbatim" in p for p in result.problems)
    assert result.feedback().startswith("Fix these problems")


def test_list_caps_are_enforced_by_the_audit():
    result = audit(
        replace(good(), next_steps=[f"step {i}" for i in range(7)], blocked_items=["a", "b", "c", "d"]),
        source_text=SOURCE,
        source_tokens=SOURCE_TOKENS,
    )
    assert "next_steps has 7 items; keep at most 5" in " ".join(result.problems)
    assert "blocked_items has 4 items; keep at most 3" in " ".join(result.problems)


def test_a_vague_summary_fails_retention_and_names_what_to_keep():
    vague = StructuredSummary(
        user_goal="Fix a bug in the upload code.",
        active_task=GOOD_SUMMARY["active_task"],
        completed_actions=["looked at the code", "ran the tests", "fixed it"],
    )
    result = audit(vague, source_text=SOURCE, source_tokens=SOURCE_TOKENS)
    assert not result.ok and result.retained_share < DEFAULT_MIN_RETENTION
    problem = next(p for p in result.problems if "key identifiers" in p)
    assert "src/api/upload.py" in problem and "ZeroDivisionError" in problem
    assert result.missing[0] in problem


def test_retention_threshold_is_configurable():
    vague = StructuredSummary(user_goal="Fix the upload bug.", active_task="add MAX_UPLOAD_BYTES")
    assert not audit(vague, source_text=SOURCE, source_tokens=SOURCE_TOKENS).ok
    assert audit(vague, source_text=SOURCE, source_tokens=SOURCE_TOKENS, min_retention=0.0).ok


def test_a_summary_not_smaller_than_its_chunk_is_rejected():
    result = audit(good(), source_text=SOURCE, source_tokens=50)
    assert not result.ok and any("not smaller" in p for p in result.problems)


def test_density_is_measured_against_the_chunk_not_the_history():
    # A 20k-token chunk: a ~250-token summary is fine (about 1%), a 20-token one is too sparse,
    # whatever the size of the whole session (which the audit never sees).
    filler = " ".join(f"word{i % 50}" for i in range(100))
    ok = audit(replace(good(), key_findings=[filler] * 2), source_text=SOURCE, source_tokens=20_000)
    assert not any("sparse" in p for p in ok.problems), ok.problems
    tiny = StructuredSummary(user_goal="upload fix", active_task="MAX_UPLOAD_BYTES")
    result = audit(tiny, source_text="", source_tokens=20_000)
    assert any("too sparse" in p for p in result.problems)
    bloated = audit(replace(good(), key_findings=[filler] * 12), source_text="", source_tokens=3_000)
    assert any("compress to under" in p for p in bloated.problems)


def test_condensed_depth_needs_a_narrative_not_an_active_task():
    node = StructuredSummary(user_goal="Ship the upload fix", narrative="1. fixed handle_upload 2. tests pass")
    assert audit(node, source_text="", source_tokens=1_000, depth=1).ok
    empty = StructuredSummary(user_goal="Ship the upload fix")
    assert any("narrative is empty" in p for p in audit(empty, source_text="", source_tokens=1_000, depth=2).problems)
