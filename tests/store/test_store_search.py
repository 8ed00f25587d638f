"""Session search: FTS5 word + trigram indexes, kept in the message insert's transaction."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from myrm_tui.store import Store, StoreError, VaultError
from myrm_tui.store.constants import SNIPPET_CLOSE, SNIPPET_MAX_CHARS, SNIPPET_OPEN
from myrm_tui.store.database import log_sql, schema, search_index
from myrm_tui.store.search import parse_query, quote

FILLER_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]


def filler(n_words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = [rng.choice(FILLER_WORDS) for _ in range(n_words)]
    return "\n".join(" ".join(words[i : i + 12]) for i in range(0, len(words), 12))


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def handles(hits) -> list[str]:
    return [hit.handle for hit in hits]


def raw(workspace: Path) -> sqlite3.Connection:
    return sqlite3.connect(workspace / ".myrm" / "sessions.db")


@pytest.fixture
def session(store: Store) -> str:
    return store.create_session("m", "search").id


# --- what is found -----------------------------------------------------------------------------


def test_needle_in_a_user_sentence_with_stemming_and_snippet(store: Store, session: str):
    store.append_message(session, user("hello there"), 1)
    target = store.append_message(
        session, user("The staging database connections failed twice after the migration."), 1
    )
    store.append_message(session, {"role": "assistant", "content": "Let me look at the logs."}, 1)
    hits = store.search(session, "database connection failing")
    assert handles(hits)[:1] == [f"msg:{target.id}"]
    hit = hits[0]
    assert hit.message_id == target.id and hit.role == "user" and hit.tool is None
    assert hit.created_at == pytest.approx(target.created_at)
    assert f"{SNIPPET_OPEN}database{SNIPPET_CLOSE}" in hit.snippet
    assert f"{SNIPPET_OPEN}failed{SNIPPET_CLOSE}" in hit.snippet  # porter: failing ~ failed


def test_empty_and_blank_queries_return_nothing(store: Store, session: str):
    store.append_message(session, user("anything at all"), 1)
    assert store.search(session, "") == []
    assert store.search(session, "   \n\t ") == []


def test_needle_in_the_middle_of_a_long_tool_output(store: Store, session: str):
    output = filler(20_000, seed=1)  # ~120 KB
    middle = len(output) // 2
    output = output[:middle] + " segfault at 0xdeadbeef in worker_loop " + output[middle:]
    store.append_message(
        session,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "make"}'},
                }
            ],
        },
        1,
    )
    record = store.append_message(session, {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": output}, 1)
    for query in ("segfault", "0xdeadbeef", "worker_loop", "DEADBEEF"):
        hits = store.search(session, query)
        assert handles(hits)[:1] == [f"msg:{record.id}"], query
        assert hits[0].tool == "bash" and hits[0].role == "tool"
        assert len(hits[0].snippet) <= SNIPPET_MAX_CHARS
        assert query.lower() in hits[0].snippet.lower()


def test_needle_inside_a_big_minified_json(store: Store, session: str):
    rows = [{"id": i, "name": f"user{i}", "tags": ["x", "y"], "score": i * 0.5} for i in range(8_000)]
    rows[4_321]["token"] = "sk-live-NEEDLE-77aa"
    blob = json.dumps(rows, separators=(",", ":"))
    assert len(blob) > 300_000 and "\n" not in blob
    record = store.append_message(
        session, {"role": "tool", "tool_call_id": "c", "name": "http_get", "content": blob}, 1
    )
    store.append_message(session, user("unrelated sk-live tokens chatter"), 1)
    hits = store.search(session, "sk-live-NEEDLE-77aa")
    assert handles(hits)[0] == f"msg:{record.id}"
    assert "sk-live-NEEDLE-77aa" in hits[0].snippet
    assert len(hits[0].snippet) <= SNIPPET_MAX_CHARS


def test_identifiers_with_punctuation_and_substrings(store: Store, session: str):
    ids = {}
    for key, text in {
        "needle": "the marker NEEDLE-3fa9 was printed",
        "camel": "rename parseHttpRequestHeaderValue before release",
        "path": "edit src/myrm_tui/store/search.py line 40",
        "call": "it fails in foo.bar_baz(qux=1) only",
        "cpp": "port the C++ templates",
    }.items():
        ids[key] = f"msg:{store.append_message(session, user(text), 1).id}"
    assert handles(store.search(session, "NEEDLE-3fa9"))[:1] == [ids["needle"]]
    assert handles(store.search(session, "needle-3FA9"))[:1] == [ids["needle"]]
    assert handles(store.search(session, "3fa9"))[:1] == [ids["needle"]]
    assert handles(store.search(session, "RequestHeader"))[:1] == [ids["camel"]]
    assert handles(store.search(session, "store/search.py"))[:1] == [ids["path"]]
    assert handles(store.search(session, "bar_baz(qux"))[:1] == [ids["call"]]
    assert handles(store.search(session, "C++"))[:1] == [ids["cpp"]]


def test_non_latin_text(store: Store, session: str):
    zh = store.append_message(session, user("我们的数据库连接失败了，请检查配置文件"), 1)
    ru = store.append_message(session, user("Привет! База данных упала ночью."), 1)
    # Chinese inside tool-call arguments arrives \u-escaped from most providers.
    call = store.append_message(
        session,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c9",
                    "type": "function",
                    "function": {"name": "grep", "arguments": json.dumps({"pattern": "配置文件路径"})},
                }
            ],
        },
        1,
    )
    assert "\\u" in call.message["tool_calls"][0]["function"]["arguments"]
    assert handles(store.search(session, "数据库"))[:1] == [f"msg:{zh.id}"]
    assert handles(store.search(session, "连接失败"))[:1] == [f"msg:{zh.id}"]
    assert handles(store.search(session, "数据"))[:1] == [f"msg:{zh.id}"]  # 2 chars: LIKE fallback
    assert handles(store.search(session, "配置文件路径"))[:1] == [f"msg:{call.id}"]
    assert handles(store.search(session, "привет"))[:1] == [f"msg:{ru.id}"]
    assert handles(store.search(session, "БАЗА ДАННЫХ"))[:1] == [f"msg:{ru.id}"]
    assert "данных" in store.search(session, "данных")[0].snippet


@pytest.mark.parametrize(
    "query",
    [
        'foo-bar "baz',
        "C++",
        "NOT",
        "AND OR",
        '"',
        '""',
        "*",
        "(",
        ")",
        "col:val",
        "NEAR(a b)",
        "^x",
        "a AND",
        "- -",
        "'; DROP TABLE messages; --",
        "\x00bad",
        "{}",
        "🚀",
        "\\",
        "%_%",
        "   NOT   AND  ",
    ],
)
def test_queries_with_fts_syntax_never_raise(store: Store, session: str, query: str):
    store.append_message(session, user('do NOT delete foo-bar "baz" and C++ {} ^x %_% 🚀 col:val'), 1)
    hits = store.search(session, query)  # must not raise
    assert all(hit.handle.startswith("msg:") for hit in hits)
    with raw(store.root.parent) as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 1


def test_syntax_like_queries_find_literal_text(store: Store, session: str):
    target = store.append_message(session, user('please do NOT delete foo-bar "baz" (yet)'), 1)
    store.append_message(session, user("something else entirely"), 1)
    for query in ('foo-bar "baz', "NOT", '"baz"', "(yet)", "delete AND"):
        assert handles(store.search(session, query))[:1] == [f"msg:{target.id}"], query


def test_query_parsing_is_pure_quoting():
    parsed = parse_query('  foo-bar   "baz  C++ ** ')
    assert parsed is not None
    assert parsed.phrase == 'foo-bar "baz C++ **'
    assert parsed.terms == ("foo-bar", '"baz', "C++")
    assert quote('"baz') == '"""baz"'
    assert parse_query(" \t") is None


def test_messages_matching_all_terms_rank_first(store: Store, session: str):
    only_one = store.append_message(session, user("the cache was warm"), 1)
    both = store.append_message(session, user("the cache invalidation bug is back"), 1)
    only_other = store.append_message(session, user("an invalidation notice"), 1)
    hits = handles(store.search(session, "cache invalidation"))
    assert hits[0] == f"msg:{both.id}"
    assert set(hits) == {f"msg:{both.id}", f"msg:{only_one.id}", f"msg:{only_other.id}"}


def _pytest_failure(key: str, value: str) -> str:
    """A `pytest -v` run with one failing test: the key is named by the test's id on the
    progress, header and summary lines, and stands alone only on the assert line."""
    passed = "".join(f"test_app.py::test_case_{i} PASSED [{i:3d}%]\n" for i in range(40))
    return (
        passed
        + f"test_app.py::test_{key}_matches_the_runbook FAILED [100%]\n\n"
        + "=" * 30
        + " FAILURES "
        + "=" * 30
        + "\n"
        + f"{'_' * 20} test_{key}_matches_the_runbook {'_' * 20}\n\n"
        + f"    def test_{key}_matches_the_runbook():\n"
        + f'>       assert SETTINGS["{key}"] == "{value}"\n'
        + f"E       AssertionError: assert 'other' == '{value}'\n\n"
        + f"FAILED test_app.py::test_{key}_matches_the_runbook - AssertionError\n"
    )


def test_snippet_shows_where_an_identifier_stands_alone_not_its_first_mention(store: Store, session: str):
    """The snippet is the spot where the key is a whole token (the assert line with its value),
    not the first line whose test id merely contains it."""
    store.append_message(
        session,
        {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": _pytest_failure("lease_ring", "v-4417")},
        1,
    )
    hit = store.search(session, "lease_ring")[0]
    assert "v-4417" in hit.snippet
    assert f'SETTINGS["{SNIPPET_OPEN}lease_ring{SNIPPET_CLOSE}"]' in hit.snippet


def test_snippet_shows_the_spot_holding_the_most_query_words(store: Store, session: str):
    """A long document uses one word of the query early; the snippet goes to the sentence that
    holds both words, not to that first word."""
    text = (
        "The ingest workers read batches from the queue and hand them to the writers.\n"
        + filler(120, seed=3)
        + "\nEvents older than the ingest window of 47 minutes are dropped on arrival.\n"
        + filler(60, seed=4)
    )
    store.append_message(session, user(text), 1)
    hit = store.search(session, "ingest window")[0]
    assert "47 minutes" in hit.snippet


def test_a_row_with_the_words_together_outranks_rows_with_them_apart(store: Store, session: str):
    """bm25 favours short rows that use the words separately; the long document that holds the
    query as a phrase (here once, and stemmed: "windows" for "window") must still rank first."""
    doc = store.append_message(
        session,
        user(
            filler(400, seed=1) + "\nLate events fall outside the ingest windows (47 minutes).\n" + filler(400, seed=2)
        ),
        1,
    )
    for i in range(12):
        store.append_message(session, user(f"window {i}: resize the window, then ingest the new ingest batch"), 1)
    hits = store.search(session, "ingest window", limit=3)
    assert handles(hits)[0] == f"msg:{doc.id}"
    assert "47 minutes" in hits[0].snippet
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_limit_is_respected(store: Store, session: str):
    for i in range(30):
        store.append_message(session, user(f"repeated keyword number {i}"), 1)
    assert len(store.search(session, "keyword", limit=7)) == 7
    assert len(store.search(session, "keyword", limit=0)) == 1


def test_lone_surrogates_in_output_are_indexed(store: Store, session: str):
    text = "binary junk \udcff\udcfe then READABLE-MARK tail"
    record = store.append_message(session, {"role": "tool", "tool_call_id": "c", "name": "bash", "content": text}, 1)
    assert handles(store.search(session, "READABLE-MARK")) == [f"msg:{record.id}"]
    assert store.messages(session)[0].message["content"] == text


def test_images_are_indexed_as_a_marker_not_base64(store: Store, session: str):
    payload = "data:image/png;base64," + "QUJDRA" * 5000
    record = store.append_message(
        session,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is on this screenshot?"},
                {"type": "image_url", "image_url": {"url": payload}},
            ],
        },
        1,
    )
    assert handles(store.search(session, "screenshot")) == [f"msg:{record.id}"]
    assert store.search(session, "QUJDRA") == []
    with raw(store.root.parent) as conn:
        text = conn.execute("SELECT text FROM messages_fts WHERE rowid = ?", (record.id,)).fetchone()[0]
    assert text == "what is on this screenshot?\n[image]"


# --- visibility --------------------------------------------------------------------------------


def test_fork_sees_parent_prefix_but_not_later_parent_messages(store: Store, session: str):
    before = store.append_message(session, user("shared ancestry-marker-one"), 1)
    fork_point = store.append_message(session, user("shared ancestry-marker-two"), 1)
    child = store.fork(session, at_message=fork_point.id).id
    after = store.append_message(session, user("parent-only ancestry-marker-three"), 1)
    own = store.append_message(child, user("child-only ancestry-marker-four"), 1)
    grandchild = store.fork(child, at_message=own.id).id

    child_hits = set(handles(store.search(child, "ancestry-marker")))
    assert child_hits == {f"msg:{before.id}", f"msg:{fork_point.id}", f"msg:{own.id}"}
    assert store.search(child, "parent-only") == []
    parent_hits = set(handles(store.search(session, "ancestry-marker")))
    assert parent_hits == {f"msg:{before.id}", f"msg:{fork_point.id}", f"msg:{after.id}"}
    assert set(handles(store.search(grandchild, "ancestry-marker"))) == child_hits
    # Exactly what messages() shows.
    assert child_hits == {f"msg:{r.id}" for r in store.messages(child)}


def test_other_sessions_are_invisible(store: Store, session: str):
    other = store.create_session("m", "other").id
    store.append_message(other, user("private-needle in another session"), 1)
    handle = store.vault.put("other session spill with vault-private-needle\n")
    store.index_artifact(other, handle)
    store.append_message(session, user("nothing here"), 1)
    assert store.search(session, "private-needle") == []
    assert store.search(session, "vault-private-needle") == []
    assert store.search(other, "vault-private-needle")[0].handle == handle
    with pytest.raises(StoreError, match="not part of session"):
        store.session_artifact(session, handle)
    with pytest.raises(StoreError, match="not part of session"):
        store.history_message(session, store.messages(other)[0].id)


def test_workspace_scope_reaches_every_session_of_the_store_and_no_other(store: Store, session: str, tmp_path: Path):
    other = store.create_session("m", "other").id
    theirs = store.append_message(other, user("workspace-needle in another session"), 1)
    handle = store.vault.put("other session spill with workspace-vault-needle\n")
    store.index_artifact(other, handle)
    named = store.vault.put("named, never indexed\n")
    store.append_message(other, user(f"see {named}"), 1)
    fork = store.fork(other).id
    forked = store.append_message(fork, user("workspace-needle in a fork"), 1)
    assert store.search(session, "workspace-needle") == []
    wide = store.search(session, "workspace-needle", scope="workspace")
    assert {(hit.handle, hit.session_id) for hit in wide} == {(f"msg:{theirs.id}", other), (f"msg:{forked.id}", fork)}
    [spill] = store.search(session, "workspace-vault-needle", scope="workspace")
    assert (spill.handle, spill.session_id) == (handle, other)
    assert store.history_message(session, theirs.id, scope="workspace") == theirs
    assert store.session_artifact(session, handle, scope="workspace").indexed
    assert not store.session_artifact(session, named, scope="workspace").indexed
    # A deleted session's rows leave the workspace too.
    store.delete_session(fork)
    assert {hit.session_id for hit in store.search(session, "workspace-needle", scope="workspace")} == {other}
    with pytest.raises(StoreError, match="not part of session"):
        store.history_message(session, forked.id, scope="workspace")

    # Another workspace is another `.myrm/`: nothing of this store is visible from it.
    elsewhere_root = tmp_path / "elsewhere"
    elsewhere_root.mkdir()
    with Store.open(elsewhere_root) as elsewhere:
        assert elsewhere.root != store.root
        away = elsewhere.create_session("m").id
        assert elsewhere.search(away, "workspace-needle", scope="workspace") == []
        with pytest.raises(StoreError):
            elsewhere.history_message(away, theirs.id, scope="workspace")
        with pytest.raises(VaultError):
            elsewhere.session_artifact(away, handle, scope="workspace")


def test_unknown_session_is_a_store_error(store: Store):
    with pytest.raises(StoreError, match="no session"):
        store.search("nope", "x")


# --- artifacts ---------------------------------------------------------------------------------


def test_needle_in_a_spilled_one_megabyte_artifact(store: Store, session: str):
    body = filler(190_000, seed=7)
    middle = len(body) // 2
    body = body[:middle] + "\nTraceback: KeyError 'SPILL-NEEDLE-42' in resolver\n" + body[middle:]
    assert len(body) > 1_000_000
    handle = store.vault.put(body)
    store.append_message(
        session,
        {"role": "tool", "tool_call_id": "c", "name": "bash", "content": f"[output spilled: {handle}]"},
        1,
    )
    info = store.index_artifact(session, handle)
    assert info.handle == handle and info.indexed and not info.binary and not info.truncated
    assert info.indexed_chars == len(body) and info.size_bytes == len(body.encode())
    hits = store.search(session, "SPILL-NEEDLE-42")
    assert hits[0].handle == handle and hits[0].message_id is None and hits[0].role == "artifact"
    assert "SPILL-NEEDLE-42" in hits[0].snippet and len(hits[0].snippet) <= SNIPPET_MAX_CHARS
    assert store.search(session, "KeyError resolver")[0].handle == handle  # word index too
    # Idempotent, and a second link does not duplicate hits.
    store.index_artifact(session, handle)
    assert handles(store.search(session, "SPILL-NEEDLE-42")).count(handle) == 1


def test_artifact_text_can_be_passed_and_binary_is_skipped(store: Store, session: str):
    text = "given text with GIVEN-NEEDLE\n"
    handle = store.vault.put(text)
    assert store.index_artifact(session, handle, text).indexed_chars == len(text)
    assert store.search(session, "GIVEN-NEEDLE")[0].handle == handle
    blob = store.vault.put(b"\x89PNG\x00\x01 BINARY-NEEDLE \x00" * 100)
    info = store.index_artifact(session, blob)
    assert info.binary and info.indexed_chars == 0
    assert store.search(session, "BINARY-NEEDLE") == []
    assert store.session_artifact(session, blob).binary


def test_artifact_index_is_capped(store: Store, session: str, monkeypatch):
    monkeypatch.setattr("myrm_tui.store.artifact_access.ARTIFACT_INDEX_MAX_CHARS", 1_000)
    body = "early-marker " + "z " * 2_000 + " late-marker"
    handle = store.vault.put(body)
    info = store.index_artifact(session, handle)
    assert info.truncated and info.indexed_chars == 1_000
    assert store.search(session, "early-marker")[0].handle == handle
    assert store.search(session, "late-marker") == []


def test_bad_artifact_handles(store: Store, session: str):
    with pytest.raises(VaultError):
        store.index_artifact(session, "vault://../../etc/passwd")
    with pytest.raises(VaultError):
        store.index_artifact(session, "vault://abcdef123456")
    handle = store.vault.put("x")
    with pytest.raises(StoreError, match="no session"):
        store.index_artifact("missing", handle)


def test_artifacts_follow_fork_points(store: Store, session: str):
    store.append_message(session, user("start"), 1)
    early = store.vault.put("early artifact ART-EARLY\n")
    store.index_artifact(session, early)
    named = store.append_message(
        session, {"role": "tool", "tool_call_id": "c", "name": "bash", "content": f"spilled to {early}"}, 1
    )
    child = store.fork(session, at_message=named.id).id
    late = store.vault.put("late artifact ART-LATE\n")
    store.index_artifact(session, late)
    store.append_message(session, user(f"later spill {late}"), 1)
    assert handles(store.search(child, "ART-EARLY")) == [early]
    assert store.search(child, "ART-LATE") == []
    assert handles(store.search(session, "ART-LATE")) == [late]
    assert store.session_artifact(child, early).indexed
    with pytest.raises(StoreError):
        store.session_artifact(child, late)


def test_artifact_named_by_a_message_is_reachable_without_index(store: Store, session: str):
    handle = store.vault.put("never indexed\n")
    with pytest.raises(StoreError):
        store.session_artifact(session, handle)
    store.append_message(
        session,
        {"role": "tool", "tool_call_id": "c", "name": "bash", "content": f"full output at {handle}"},
        1,
    )
    info = store.session_artifact(session, handle)
    assert not info.indexed and info.linked_at is None and info.size_bytes == len("never indexed\n")


# --- index consistency -------------------------------------------------------------------------


def _assert_index_consistent(db: Path) -> None:
    """Every message has exactly one word row and is findable through the trigram index."""
    conn = sqlite3.connect(db)
    try:
        ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
        fts = [r[0] for r in conn.execute("SELECT rowid FROM messages_fts ORDER BY rowid")]
        assert fts == ids
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        conn.execute("INSERT INTO messages_tri(messages_tri) VALUES ('integrity-check')")
        for mid, text in conn.execute("SELECT rowid, text FROM messages_fts ORDER BY rowid").fetchall():
            probe = text[:40]
            if len(probe) < 3:
                continue
            found = conn.execute(
                "SELECT rowid FROM messages_tri WHERE messages_tri MATCH ? AND rowid = ?", (quote(probe), mid)
            ).fetchall()
            assert found == [(mid,)], f"msg:{mid} is missing from the trigram index"
    finally:
        conn.close()


def test_sigkill_during_appends_leaves_the_index_consistent(workspace: Path, kill_writer: ModuleType, child_env):
    with Store.open(workspace) as store:
        session = store.create_session("m", "kill").id
    rng = random.Random(99)
    assert kill_writer.__file__ is not None
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, kill_writer.__file__, str(workspace), session],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            text=True,
        )
        try:
            assert proc.stdout is not None and proc.stderr is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
            time.sleep(rng.uniform(0.05, 0.3))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        _assert_index_consistent(workspace / ".myrm" / "sessions.db")
    with Store.open(workspace) as store:
        history = store.messages(session)
        assert len(history) >= 10
        # Every surviving row, the last one (whatever the kill interrupted) included, is searchable.
        for record in (history[0], history[len(history) // 2], history[-1]):
            hits = handles(store.search(session, _kill_writer_probe(record.seq, record.role), limit=50))
            assert f"msg:{record.id}" in hits


def _kill_writer_probe(seq: int, role: str) -> str:
    """A substring only the kill writer's message at `seq` contains (see kill_writer.make_message)."""
    if role == "tool":
        return f"[{seq}] tool output"
    if role == "assistant":
        return f"f{seq}.py"
    return f"message {seq} —"


def test_delete_session_removes_its_index_rows(store: Store, session: str):
    keep = store.append_message(session, user("keep DELETE-PROBE here"), 1)
    doomed = store.create_session("m", "doomed").id
    store.append_message(doomed, user("gone DELETE-PROBE soon"), 1)
    handle = store.vault.put("doomed artifact DELETE-PROBE\n")
    store.index_artifact(doomed, handle)
    store.delete_session(doomed)
    _assert_index_consistent(store.db_path)
    assert handles(store.search(session, "DELETE-PROBE")) == [f"msg:{keep.id}"]
    with raw(store.root.parent) as conn:
        assert conn.execute("SELECT count(*) FROM artifact_links").fetchone()[0] == 0


def test_migration_two_backfills_a_version_one_database(workspace: Path):
    root = workspace / ".myrm"
    root.mkdir()
    conn = sqlite3.connect(root / "sessions.db")
    schema._v1_initial(conn)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO sessions (id, title, created_at, updated_at, model) VALUES ('s1', '', 1, 1, 'm')")
    old = {"role": "user", "content": "an OLD-ROW-NEEDLE from before search existed"}
    conn.execute(
        "INSERT INTO messages (session_id, seq, role, message_json, tokens, created_at) VALUES (?, 0, 'user', ?, 1, 1)",
        ("s1", json.dumps(old)),
    )
    conn.commit()
    conn.close()
    with Store.open(workspace) as store:
        assert handles(store.search("s1", "OLD-ROW-NEEDLE")) == ["msg:1"]
        assert handles(store.search("s1", "before search existed")) == ["msg:1"]
        new = store.append_message("s1", user("a NEW-ROW-NEEDLE"), 1)
        assert handles(store.search("s1", "NEW-ROW-NEEDLE")) == [f"msg:{new.id}"]
    _assert_index_consistent(root / "sessions.db")
    with raw(workspace) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.latest_version() >= 2


def test_without_trigram_support_search_degrades_then_heals(workspace: Path, monkeypatch):
    monkeypatch.setattr(search_index, "trigram_supported", lambda: False)
    with Store.open(workspace) as store:
        session = store.create_session("m").id
        ids = {
            "needle": store.append_message(session, user("marker NEEDLE-3fa9 printed"), 1).id,
            "camel": store.append_message(session, user("call parseHttpRequestHeader now"), 1).id,
            "zh": store.append_message(session, user("我们的数据库连接失败了"), 1).id,
        }
        handle = store.vault.put("degraded artifact with DEGRADED-ART-NEEDLE inside\n")
        store.index_artifact(session, handle)
        assert not search_index.has_table(store._db(), "messages_tri")
        assert handles(store.search(session, "NEEDLE-3fa9"))[:1] == [f"msg:{ids['needle']}"]
        assert handles(store.search(session, "RequestHeader"))[:1] == [f"msg:{ids['camel']}"]
        assert handles(store.search(session, "数据库"))[:1] == [f"msg:{ids['zh']}"]
        assert handles(store.search(session, "DEGRADED-ART-NEEDLE")) == [handle]
        assert store.search(session, 'C++ "x') == []
    monkeypatch.undo()
    # A capable SQLite opening the file adds and back-fills the trigram tables.
    with Store.open(workspace) as store:
        assert search_index.has_table(store._db(), "messages_tri")
        found = (
            store._db()
            .execute("SELECT rowid FROM messages_tri WHERE messages_tri MATCH ?", (quote("RequestHeader"),))
            .fetchall()
        )
        assert found == [(ids["camel"],)]
        art = (
            store._db()
            .execute("SELECT count(*) FROM artifacts_tri WHERE artifacts_tri MATCH ?", (quote("DEGRADED-ART"),))
            .fetchone()[0]
        )
        assert art == 1
        assert handles(store.search(session, "RequestHeader"))[:1] == [f"msg:{ids['camel']}"]
    _assert_index_consistent(workspace / ".myrm" / "sessions.db")


def test_read_only_store_searches_but_cannot_index(workspace: Path):
    with Store.open(workspace) as store:
        session = store.create_session("m").id
        record = store.append_message(session, user("visible READONLY-NEEDLE"), 1)
        handle = store.vault.put("artifact READONLY-ART\n")
    with Store.open(workspace, read_only=True) as viewer:
        assert handles(viewer.search(session, "READONLY-NEEDLE")) == [f"msg:{record.id}"]
        with pytest.raises(StoreError, match="read-only"):
            viewer.index_artifact(session, handle)
        assert viewer.search(session, "READONLY-ART") == []


# --- speed (`perf` marker: wall-clock budgets, deselected by default; `pytest -m perf`) ---------


@pytest.mark.perf
def test_indexing_a_one_megabyte_artifact_is_fast(store: Store, session: str):
    handle = store.vault.put(filler(190_000, seed=7))
    started = time.perf_counter()
    info = store.index_artifact(session, handle)
    elapsed = time.perf_counter() - started
    assert info.indexed
    assert elapsed < 10, f"indexing took {elapsed:.2f} s"


@pytest.mark.perf  # a speed budget on the wall clock: `pytest -m perf` runs it
def test_search_over_five_thousand_messages_is_fast(store: Store, session: str):
    rng = random.Random(5)
    vocabulary = FILLER_WORDS + ["error", "timeout", "commit", "branch", "deploy", "retry", "socket"]
    with store._lock, store._write() as conn:  # one transaction: setup speed, same index path
        for i in range(5_000):
            words = " ".join(rng.choice(vocabulary) for _ in range(40))
            if i == 2_500:
                words += " PERF-NEEDLE-xyz"
            message = (
                user(words) if i % 2 else {"role": "tool", "tool_call_id": f"c{i}", "name": "bash", "content": words}
            )
            log_sql.insert_message(conn, session, message, 1, time.time())
    queries = ["PERF-NEEDLE-xyz", "error timeout", "socket retry deploy", "missing-word", "数据库"]
    store.search(session, "warm up")
    for query in queries:
        started = time.perf_counter()
        hits = store.search(session, query)
        elapsed = time.perf_counter() - started
        assert elapsed < 0.5, f"search {query!r} took {elapsed * 1000:.0f} ms"
        if query == "PERF-NEEDLE-xyz":
            assert len(hits) == 1
        elif query in ("error timeout", "socket retry deploy"):
            assert len(hits) == 10


@pytest.mark.perf  # a speed budget on the wall clock: `pytest -m perf` runs it
def test_common_word_in_many_big_outputs_stays_fast(store: Store, session: str):
    """snippet() over a 200 KB output matching on every line costs ~0.3 s; ten such hits must
    not make one search take seconds."""
    line = "compiling module output ok\n"
    with store._lock, store._write() as conn:
        for i in range(12):
            content = line * (200_000 // len(line)) + f"finished build {i}\n"
            log_sql.insert_message(
                conn,
                session,
                {"role": "tool", "tool_call_id": f"c{i}", "name": "bash", "content": content},
                1,
                time.time(),
            )
    started = time.perf_counter()
    hits = store.search(session, "compiled outputs")  # stems: compil*, output
    elapsed = time.perf_counter() - started
    assert len(hits) == 10
    assert elapsed < 1.0, f"took {elapsed:.2f} s"
    assert all(SNIPPET_OPEN in hit.snippet and len(hit.snippet) <= SNIPPET_MAX_CHARS for hit in hits)
