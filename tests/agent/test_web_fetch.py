"""web_fetch against a real HTTP server on loopback: saved pages become Markdown, and the limits
hold (a 50 MB body, a body that trickles, redirect loops and chains, binary bodies, non-http
schemes, private addresses). Then the tool inside the agent: who is asked, when, and what a
headless run says; a big page goes to the vault and stays searchable.

The server is loopback, which web_fetch refuses by default; each test that reaches it says so
with `web_fetch_allow_private = true`, the user's explicit allowance.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import Notice, ToolFinished
from myrm_tui.agent.permissions.rules import RuleError, call_for, parse_rule, rule_set, suggest_rules
from myrm_tui.agent.tools.base import ToolContext, ToolError
from myrm_tui.agent.tools.html_markdown import html_to_markdown
from myrm_tui.agent.tools.web_fetch import FETCH_MAX_BYTES, MAX_REDIRECTS, WebFetch
from myrm_tui.settings.settings import PermissionLists, RuleEntry
from tests.agent.agent_helpers import drive, settings_for
from tests.hypothesis_profiles import examples

PAGES = Path(__file__).resolve().parents[2] / "bench" / "web_pages"
BIG_BODY = 50 * 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[str]  # set per server

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.seen.append(self.path)  # type: ignore[attr-defined]
        path = self.path
        if path.startswith("/page/"):
            self._send(200, (PAGES / path.removeprefix("/page/")).read_bytes())
        elif path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(BIG_BODY))
            self.end_headers()
            block = b"x" * 65535 + b"\n"
            try:
                for _ in range(BIG_BODY // len(block)):
                    self.wfile.write(block)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                self.wfile.write(b"first line arrived\n")
                self.wfile.flush()
                for _ in range(1000):
                    time.sleep(0.1)
                    self.wfile.write(b".")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif path == "/loop-a":
            self._send(302, b"", headers={"Location": "/loop-b"})
        elif path == "/loop-b":
            self._send(302, b"", headers={"Location": "/loop-a"})
        elif path.startswith("/chain/"):
            left = int(path.rsplit("/", 1)[1])
            if left == 0:
                self._send(200, b"<html><body><main><p>end of the chain</p></main></body></html>")
            else:
                self._send(301, b"", headers={"Location": f"/chain/{left - 1}"})
        elif path == "/to-file":
            self._send(302, b"", headers={"Location": "file:///etc/passwd"})
        elif path == "/png":
            self._send(200, PNG, "image/png")
        elif path == "/lying-binary":
            self._send(200, b"<html>\x00\x00\x00binary</html>", "text/html")
        elif path == "/json":
            self._send(200, json.dumps({"name": "quiver", "version": "2.4.0"}).encode(), "application/json")
        elif path == "/latin1":
            self._send(
                200,
                "<html><head><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>".encode(
                    "latin-1"
                ),
                "text/html; charset=iso-8859-1",
            )
        elif path == "/meta-charset":
            body = (
                '<html><head><meta charset="windows-1252"><title>Quotes</title></head>'
                "<body><p>\u201csmart\u201d quotes</p></body></html>"
            ).encode("cp1252")
            self._send(200, body, "text/html")
        elif path == "/huge-page":
            paragraphs = "".join(
                f"<p>Paragraph {i}: the harbour ferry timetable changes on weekdays.</p>" for i in range(4000)
            )
            self._send(
                200,
                (
                    f"<html><body><main><h1>Huge</h1>{paragraphs}"
                    "<p>needle-kestrel-4471 sits at the very end</p></main></body></html>"
                ).encode(),
            )
        elif path == "/missing":
            self._send(404, b"<html><body><main><h1>Not found</h1><p>No such page.</p></main></body></html>")
        else:
            self._send(404, b"no route")


@dataclasses.dataclass
class Server:
    base: str
    seen: list[str]


@pytest.fixture
def server() -> Iterator[Server]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}", httpd.seen)  # type: ignore[attr-defined]
    finally:
        httpd.shutdown()
        httpd.server_close()


def _ctx(workspace: Path, store, **values) -> ToolContext:
    values.setdefault("web_fetch_allow_private", True)
    return ToolContext(workspace=workspace, settings=settings_for(**values), vault=store.vault)


async def fetch(url: str, ctx: ToolContext):
    return await WebFetch().run({"url": url}, ctx)


# ------------------------------------------------------------------ pages to Markdown


async def test_saved_docs_page_becomes_markdown_without_chrome(server, workspace, store):
    result = await fetch(f"{server.base}/page/docs.html", _ctx(workspace, store))
    text = result.content
    assert result.status == "ok"
    assert text.startswith(f"[web_fetch {server.base}/page/docs.html · 200 · text/html")
    assert "title: Connection pools — tidepool 3.2 documentation" in text
    assert "# Connection pools" in text and "## Pool timeouts" in text
    assert "limits = tidepool.Limits(max_connections=50, max_keepalive=10, keepalive_expiry=30.0)" in text
    assert "| `max_keepalive` | 20 | Idle connections kept for reuse. |" in text
    for chrome in ("Edit this page", "Toggle Light", "Retries and backoff", "G-TRACKING42", "Copyright"):
        assert chrome not in text, chrome
    # links point somewhere the model can fetch next
    assert f"]({server.base}/page/api/errors.html#tidepool.PoolTimeout)" in text


async def test_github_like_readme_keeps_headings_code_language_and_table(server, workspace, store):
    text = (await fetch(f"{server.base}/page/readme.html", _ctx(workspace, store))).content
    assert "# quiver" in text and "## Usage" in text and "## Contributing" in text
    assert "```python\nfrom dataclasses import dataclass\nimport quiver\n\n@dataclass" in text
    assert "| environment | `APP_WORKERS=8` | highest |" in text
    for chrome in ("Sign in", "Automate any workflow", "Go to file", "fix: env prefix", "featureFlags"):
        assert chrome not in text, chrome


async def test_news_article_drops_ads_banner_and_paywall(server, workspace, store):
    text = (await fetch(f"{server.base}/page/article.html", _ctx(workspace, store))).content
    assert "## What changes for riders" in text
    assert '> "We are funding buses at 3 a.m.' in text
    assert "- N4: Harbour terminal to the hospital campus, every 15 minutes" in text
    for chrome in ("We use cookies", "Advertisement", "Refinance", "You have read 3 of 5", "__INITIAL_STATE__"):
        assert chrome not in text, chrome


async def test_json_and_declared_or_sniffed_charsets(server, workspace, store):
    ctx = _ctx(workspace, store)
    assert '{"name": "quiver", "version": "2.4.0"}' in (await fetch(f"{server.base}/json", ctx)).content
    latin = (await fetch(f"{server.base}/latin1", ctx)).content
    assert "title: Café" in latin and "crème brûlée" in latin
    assert "\u201csmart\u201d quotes" in (await fetch(f"{server.base}/meta-charset", ctx)).content


async def test_an_error_status_is_an_error_result_with_the_page(server, workspace, store):
    result = await fetch(f"{server.base}/missing", _ctx(workspace, store))
    assert result.status == "error"
    assert "· 404 ·" in result.content and "No such page." in result.content


# ------------------------------------------------------------------ limits


async def test_a_50_mb_body_is_cut_at_the_cap_not_read_whole(server, workspace, store):
    result = await fetch(f"{server.base}/big", _ctx(workspace, store))
    assert f"{FETCH_MAX_BYTES:,} bytes" in result.content
    assert "cut at 5 MB: the rest was not read" in result.content
    assert len(result.content) < FETCH_MAX_BYTES + 1000


async def test_a_body_that_trickles_stops_at_the_timeout_with_what_arrived(server, workspace, store):
    started = time.monotonic()
    result = await fetch(f"{server.base}/slow", _ctx(workspace, store, web_fetch_timeout=1.0))
    assert time.monotonic() - started < 30, "the server trickles for 100 s; the fetch must not follow it"
    assert "first line arrived" in result.content
    assert "stopped at web_fetch_timeout" in result.content


async def test_redirect_loop_is_named(server, workspace, store):
    with pytest.raises(ToolError, match="redirect loop: .*/loop-a → .*/loop-b → .*/loop-a"):
        await fetch(f"{server.base}/loop-a", _ctx(workspace, store))


async def test_redirect_chains_are_capped_and_followed_within_the_cap(server, workspace, store):
    ctx = _ctx(workspace, store)
    ok = await fetch(f"{server.base}/chain/{MAX_REDIRECTS}", ctx)
    assert "end of the chain" in ok.content and f"redirected from {server.base}/chain/{MAX_REDIRECTS}" in ok.content
    with pytest.raises(ToolError, match=f"more than {MAX_REDIRECTS} redirects"):
        await fetch(f"{server.base}/chain/{MAX_REDIRECTS + 1}", ctx)


async def test_a_redirect_to_another_scheme_is_refused(server, workspace, store):
    with pytest.raises(ToolError, match="only fetches http:// and https://"):
        await fetch(f"{server.base}/to-file", _ctx(workspace, store))


async def test_binary_bodies_are_refused_by_type_and_by_bytes(server, workspace, store):
    ctx = _ctx(workspace, store)
    with pytest.raises(ToolError, match="not a text page .image/png"):
        await fetch(f"{server.base}/png", ctx)
    with pytest.raises(ToolError, match="not a text page"):
        await fetch(f"{server.base}/lying-binary", ctx)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "javascript:alert(1)",
        "gopher://127.0.0.1:70/",
        "//example.com/no-scheme",
        "https://user:pw@example.com/",
    ],
)
async def test_only_plain_http_urls(url, workspace, store):
    with pytest.raises(ToolError):
        await fetch(url, _ctx(workspace, store))


# ------------------------------------------------------------------ private addresses


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "169.254.169.254",
        "10.1.2.3",
        "192.168.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "0.0.0.0",
        "100.64.0.1",
    ],
)
async def test_private_addresses_are_refused_by_default(host, workspace, store):
    ctx = _ctx(workspace, store, web_fetch_allow_private=False)
    with pytest.raises(ToolError, match="web_fetch_allow_private"):
        await fetch(f"http://{host}:9/latest/meta-data/", ctx)


async def test_the_loopback_server_gets_no_request_unless_allowed(server, workspace, store):
    with pytest.raises(ToolError, match="loopback"):
        await fetch(f"{server.base}/page/docs.html", _ctx(workspace, store, web_fetch_allow_private=False))
    assert server.seen == [], "the address is checked before connecting"


# ------------------------------------------------------------------ rules


def test_webfetch_rules_parse_and_match_hosts_exactly():
    assert parse_rule("WebFetch(domain:Docs.Python.org.)").pattern == "domain:docs.python.org"
    for bad in (
        "WebFetch(docs.python.org)",
        "WebFetch(domain:)",
        "WebFetch(domain:a b)",
        "WebFetch(domain:http://x.org)",
        "WebFetch(domain:x.org/path)",
    ):
        with pytest.raises(RuleError):
            parse_rule(bad)
    rules = rule_set(allow=[("WebFetch(domain:docs.python.org)", "u"), ("WebFetch(domain:*.example.org)", "u")])
    ws = Path("/tmp")

    def allowed(url: str) -> bool:
        return rules.judge(call_for("web_fetch", {"url": url}, ws)).allowed

    assert allowed("https://docs.python.org/3/")
    assert allowed("https://DOCS.python.org./x")
    assert not allowed("https://docs.python.org.evil.com/")
    assert not allowed("https://evildocs.python.org/")
    assert allowed("https://a.b.example.org/") and not allowed("https://example.org/")
    assert not allowed("https://notexample.org/")
    assert suggest_rules(call_for("web_fetch", {"url": "https://Docs.python.org/3/"}, ws)) == (
        "WebFetch(domain:docs.python.org)",
    )


# ------------------------------------------------------------------ in the agent


def _agent(store, workspace: Path, script, url: str, **values) -> Agent:
    model = script({"tool_calls": [{"id": "c1", "name": "web_fetch", "arguments": {"url": url}}]}, {"text": "read it"})
    session = store.create_session(model=model)
    rules = values.pop("rules", None)
    headless = values.pop("headless", False)
    settings = settings_for(model, web_fetch_allow_private=True, **values)
    if rules is not None:
        settings = dataclasses.replace(settings, permissions=rules)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, headless=headless)


@pytest.mark.parametrize("policy", ["ask", "auto-edit", "yolo"])
async def test_every_policy_asks_while_the_network_is_not_allowed(policy, server, store, workspace, script):
    agent = _agent(store, workspace, script, f"{server.base}/page/docs.html", approval=policy)
    log = await drive(agent, "read the docs", approve=True)
    assert [a.tool for a in log.approvals] == ["web_fetch"]
    assert log.approvals[0].offered_rules == ("WebFetch(domain:127.0.0.1)",)
    assert "not the bash sandbox" in log.approvals[0].sandbox
    finished = log.of(ToolFinished)[0]
    assert finished.ok and "# Connection pools" in finished.content


async def test_a_no_is_stored_and_nothing_is_fetched(server, store, workspace, script):
    agent = _agent(store, workspace, script, f"{server.base}/page/docs.html")
    log = await drive(agent, "read the docs", approve=False)
    assert log.of(ToolFinished)[0].status == "denied"
    assert server.seen == []


async def test_sandbox_network_lets_yolo_fetch_without_asking(server, store, workspace, script):
    agent = _agent(store, workspace, script, f"{server.base}/page/docs.html", approval="yolo", sandbox_network=True)
    log = await drive(agent, "read the docs", approve=False)
    assert log.approvals == [] and log.of(ToolFinished)[0].ok


async def test_an_allow_rule_for_the_host_runs_without_asking(server, store, workspace, script):
    rules = PermissionLists(allow=(RuleEntry("WebFetch(domain:127.0.0.1)", "config.toml:3"),))
    agent = _agent(store, workspace, script, f"{server.base}/page/readme.html", rules=rules)
    log = await drive(agent, "read the readme", approve=False)
    assert log.approvals == [] and "# quiver" in log.of(ToolFinished)[0].content


async def test_a_deny_rule_refuses_even_in_yolo_with_network(server, store, workspace, script):
    rules = PermissionLists(deny=(RuleEntry("WebFetch(domain:127.0.0.1)", "config.toml:4"),))
    agent = _agent(
        store, workspace, script, f"{server.base}/page/docs.html", approval="yolo", sandbox_network=True, rules=rules
    )
    log = await drive(agent, "read", approve=True)
    assert log.approvals == [] and log.of(ToolFinished)[0].status == "denied"
    assert server.seen == []


async def test_headless_yolo_refuses_and_names_what_would_allow_it(server, store, workspace, script):
    agent = _agent(store, workspace, script, f"{server.base}/page/docs.html", approval="yolo", headless=True)
    log = await drive(agent, "read", approve=True)
    result = log.of(ToolFinished)[0]
    assert result.status == "denied" and server.seen == []
    told = " ".join(n.text for n in log.of(Notice))
    assert "WebFetch(domain:HOST)" in told and "sandbox_network" in told
    assert "--approve yolo" not in told, "yolo is what ran; naming it again would be a lie"


async def test_a_huge_page_is_spilled_to_the_vault_and_searchable(server, store, workspace, script):
    agent = _agent(
        store,
        workspace,
        script,
        f"{server.base}/huge-page",
        approval="yolo",
        sandbox_network=True,
        tool_output_cap=4000,
    )
    log = await drive(agent, "read", approve=False)
    finished = log.of(ToolFinished)[0]
    assert finished.vault_handle is not None and len(finished.content) < 6000
    whole = store.vault.read_bytes(finished.vault_handle).decode()
    assert "needle-kestrel-4471 sits at the very end" in whole
    hits = store.search(agent.session_id, "needle-kestrel-4471")
    assert hits, "the spilled page is indexed with the result that names it"


def test_approval_request_names_the_url(server, workspace, store):
    preview = WebFetch().preview({"url": f"{server.base}/page/docs.html"}, _ctx(workspace, store))
    assert preview.summary == f"fetch {server.base}/page/docs.html (network, from myrm itself)"


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*"<>/=\"' abcdiv&;#\n", "<article>", "</main>", "<nav>", "<pre>", "<table><tr><td>", "<script>", "<!--"]
        ),
        max_size=120,
    ).map("".join)
)
# An unclosed comment: the stdlib parser hands its tail back as text; a browser shows nothing.
@example("<!--<script>")
@example("&#<script>")
@example("a<!-->b<!--->c<!-- never closed <script>x</script>")
def test_any_html_converts_without_raising(html):
    title, text = html_to_markdown(html, base_url="https://example.org/a/")
    assert isinstance(title, str) and isinstance(text, str)
    assert "<script>" not in text


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/", "http://localhost:3000/x", "http://[::1]/", "http://10.0.0.8/"]
)
async def test_an_address_it_would_refuse_is_refused_without_asking(url, store, workspace, script):
    """Before: the user was asked to allow a fetch of a loopback or private address, and a yes
    ended in the refusal anyway."""
    model = script({"tool_calls": [{"id": "c1", "name": "web_fetch", "arguments": {"url": url}}]}, {"text": "no"})
    session = store.create_session(model=model)
    settings = settings_for(model, web_fetch_allow_private=False, approval="ask")
    agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)
    log = await drive(agent, "read it", approve=True)
    assert log.approvals == [], "nobody is asked about a fetch that cannot happen"
    result = log.of(ToolFinished)[0]
    assert result.status == "error" and "web_fetch_allow_private" in result.content
