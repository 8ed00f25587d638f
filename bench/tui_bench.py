"""T1 and T2 of docs/benchmarks.md ("Definitions"): how fast the TUI starts, streams and stays with long sessions.

Why subprocesses for start-up and for the long-session rows: start-up is only honest from a
fresh interpreter (import caches, page cache aside), and RSS only means something per process
(CPython rarely hands memory back, so sizes measured one after another in one process would
inherit each other's peak). Streaming runs in-process under `App.run_test`, where the bench can
watch the event loop directly.

Why every figure comes with a baseline from the same run: this is a shared 2-core box whose
absolute times drift with whatever else runs; ratios against `python -c pass`, an idle loop or
an empty session measured minutes apart stay comparable.

Run from the repository root: `python -m bench.tui_bench [--quick]`. Nothing here asserts a
timing; tests/bench/test_tui_bench_smoke.py only checks the structure of the output.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Self

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "bench" / "results"
# One venv per peer: elia pins a pre-1.0 Textual, oterm a current one; they cannot share.
PEER_VENVS = REPO_ROOT / "bench" / ".tui-venv"

# --- workload constants ------------------------------------------------------------------------
# 10 runs: enough for a median and a (rough) p95 while keeping T1 under a couple of minutes even
# though every run waits for the litellm warm-up (3-8 s here).
START_RUNS = 10
# One terminal size for every headless figure (a common 120×40), so runs and rows compare.
HEADLESS_SIZE = (120, 40)
# A child that has not painted in this long is hung, not slow.
CHILD_TIMEOUT_S = 180.0
# Seconds of the coding answer streamed at each nominal rate (bench/tui_stream.py).
STREAM_SECONDS = 10.0
# The loop probe's period: 10 ms resolves a 16 ms (60 fps) frame without itself loading the loop.
PROBE_INTERVAL_S = 0.010
# The T2 target (docs/benchmarks.md, "Definitions"): no frame (and so no input) waits longer than this.
FRAME_BUDGET_MS = 50.0
# During the stream, one keypress every 200 ms: a fast typist, measured while the reply renders.
STREAM_KEY_PERIOD_S = 0.2
# Idle loop baseline measured in the same process before the stream starts.
IDLE_BASELINE_S = 2.0
# Stored messages of the long-session rows; 0 is the empty-session baseline of the same run.
SESSION_SIZES = (0, 100, 500, 2000)
KEY_SAMPLES = 30
# Gap between key samples so each one starts from an idle loop (not queued behind the last).
KEY_GAP_S = 0.03
# Page-ups per size: few enough that the 50 mounted turns never reach the top (which would load
# earlier turns and measure that instead).
SCROLL_SAMPLES = 10
# "Load earlier" page-ups per size (each reveals one batch of stored turns), measured after the
# ordinary page-ups; the first is the one a user meets first.
LOAD_SAMPLES = 5
# A key whose effect has not shown in this long is reported as lost, not waited for forever.
KEY_TIMEOUT_S = 10.0

DRIVER_OUT_ENV = "BENCH_TUI_OUT"
DRIVER_SPAWN_ENV = "BENCH_TUI_T_SPAWN"


def now() -> float:
    """CLOCK_MONOTONIC: one clock shared by parent and child processes (perf_counter is not
    guaranteed to be), so a child can measure from the moment its parent spawned it."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


# --- small statistics --------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile: no interpolation, so with few samples p95 is simply the slowest
    run (every summary also reports n, so a reader knows)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100.0 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def summary(values: Sequence[float]) -> dict[str, float | int | None]:
    values = [v for v in values if v is not None]
    return {
        "n": len(values),
        "median": statistics.median(values) if values else None,
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "min": min(values) if values else None,
        "max": max(values) if values else None,
    }


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def fmt(value: Any, digits: int = 0) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def print_table(title: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    rows = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")


def rss_mb() -> float:
    """Resident set size from /proc (no psutil dependency): statm's second field, in pages."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def child_env(home: Path) -> dict[str, str]:
    """A private HOME/XDG tree: peers and myrm write configs and databases on first start, and a
    benchmark must never touch the real user's."""
    env = dict(os.environ)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "MYRM_CONFIG_DIR": str(home / "myrm-config"),
            "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p),
            "TEXTUAL_ANIMATIONS": "none",
            "OLLAMA_HOST": "http://127.0.0.1:9",
        }
    )
    return env


# --- T1: start-up ------------------------------------------------------------------------------

# The child program, passed with `python -c` so the same text runs under a peer's venv (which
# has neither myrm nor this bench). It only hooks Textual's public-ish seams: the first
# compositor refresh of the active screen is "first frame painted" (headless: composed and
# rendered, not written), the first frame with a focused text input is "ready to type", and for
# myrm the chat screen's `ready` event (engine warm-up done) is "ready to send".
START_DRIVER = textwrap.dedent("""
    import json, os, sys, time
    def now():
        return time.clock_gettime(time.CLOCK_MONOTONIC)
    T_MAIN = now()
    out = {"t_spawn": float(os.environ["BENCH_TUI_T_SPAWN"]), "t_main": T_MAIN}
    kind, workdir = sys.argv[1], sys.argv[2]
    heavy = ("litellm", "openai", "tiktoken", "httpx", "llama_cpp")

    def loaded():
        # "name" when fully imported, "name (importing)" while another thread is still in its
        # import: both mean the import competes with painting for the GIL
        names = []
        for name in heavy:
            module = sys.modules.get(name)
            if module is not None:
                busy = getattr(getattr(module, "__spec__", None), "_initializing", False)
                names.append(name + (" (importing)" if busy else ""))
        return names

    def write():
        with open(os.environ["BENCH_TUI_OUT"], "w") as fh:
            json.dump(out, fh)

    painted = None
    if kind in ("myrm", "myrm-warmup-after-paint"):
        from pathlib import Path
        import myrm_tui.tui.app as appmod
        from myrm_tui.settings import Settings
        from myrm_tui.tui.screens.chat.screen import ChatScreen
        base = appmod.MyrmApp
        def make(cls):
            return cls(Path(workdir), Settings().with_values(model=sys.argv[3]))
        if kind == "myrm-warmup-after-paint":
            # what-if row: the engine warm-up (litellm import) held back until the first frame
            # with the prompt focused, instead of starting in on_mount and competing for the GIL
            import threading
            from myrm_tui.tui.session.chat_session import ChatSession
            painted = threading.Event()
            original_warm_up = ChatSession.warm_up
            def held_warm_up(self, model):
                painted.wait(60)
                original_warm_up(self, model)
            ChatSession.warm_up = held_warm_up
    elif kind == "elia":
        from elia_chat.app import Elia as base
        from elia_chat.config import LaunchConfig
        from elia_chat.database.database import create_database
        import asyncio
        asyncio.run(create_database())
        ChatScreen = None
        def make(cls):
            return cls(LaunchConfig())
    elif kind == "oterm":
        from oterm.app.oterm import OTerm as base
        ChatScreen = None
        def make(cls):
            return cls()
    else:
        raise SystemExit("unknown app " + kind)
    out["t_imported"] = now()
    out["heavy_after_import"] = loaded()

    from textual.screen import Screen
    from textual.widgets import Input, TextArea
    original_refresh = Screen._compositor_refresh

    def inputs_ready(app):
        focused = app.focused
        return focused is not None and isinstance(focused, (Input, TextArea))

    def refresh(self):
        original_refresh(self)
        app = self.app
        if self is not app.screen:
            return
        t = now()
        if "t_first_frame" not in out:
            out["t_first_frame"] = t
            out["heavy_at_first_frame"] = loaded()
            out["first_screen"] = type(self).__name__
        if "t_input" not in out and inputs_ready(app):
            out["t_input"] = t
            out["heavy_at_input"] = loaded()
            if painted is not None:
                painted.set()
        app.bench_check()

    Screen._compositor_refresh = refresh

    import inspect
    css_path = getattr(base, "CSS_PATH", None)
    if css_path:
        # Textual resolves a relative CSS_PATH next to the file of the running class; ours lives
        # in `-c` text with no file, so anchor the base class's paths at its own module.
        here = os.path.dirname(inspect.getfile(base))
        paths = css_path if isinstance(css_path, (list, tuple)) else [css_path]
        css_path = [p if os.path.isabs(str(p)) else os.path.join(here, str(p)) for p in paths]

    class Bench(base):
        if css_path:
            CSS_PATH = css_path

        def bench_check(self):
            if "t_input" not in out:
                return
            if ChatScreen is not None:
                screen = self.screen
                if not (isinstance(screen, ChatScreen) and screen.ready.is_set()):
                    return
                out.setdefault("t_warm", now())
                out["model_resolved"] = screen.chat.model
            if not out.get("exiting"):
                out["exiting"] = True
                self.exit()

        def on_ready(self, event=None):
            out["t_ready_event"] = now()
            self.set_interval(0.002, self.bench_check)
            # a peer whose first screen has no text input (oterm with no chats) is not waited
            # for forever; myrm's warm-up gets the longer leash
            self.set_timer(5.0 if ChatScreen is None else 120.0, self.give_up)

        def give_up(self):
            out["gave_up"] = True
            self.exit()

    app = make(Bench)
    app.run(headless=True, size=(120, 40))
    out["t_exit"] = now()
    write()
""")

START_MILESTONES = ("t_main", "t_imported", "t_first_frame", "t_ready_event", "t_input", "t_warm")


@dataclass
class StartRow:
    app: str
    status: str  # ok | not installed | failed: ...
    runs: list[dict[str, Any]] = field(default_factory=list)

    def ms(self, milestone: str) -> dict[str, Any]:
        values = [(r[milestone] - r["t_spawn"]) * 1000 for r in self.runs if milestone in r]
        return summary(values)


def peer_python(name: str) -> Path | None:
    python = PEER_VENVS / name / "bin" / "python"
    return python if python.is_file() else None


def start_once(python: Path | str, kind: str, extra: Sequence[str] = ()) -> dict[str, Any]:
    """One cold start in a fresh process; raises RuntimeError with the child's stderr tail."""
    with tempfile.TemporaryDirectory(prefix="tui-start-") as tmp:
        home = Path(tmp)
        work = home / "ws"
        work.mkdir()
        out_file = home / "out.json"
        env = child_env(home)
        env[DRIVER_OUT_ENV] = str(out_file)
        t_spawn = now()
        env[DRIVER_SPAWN_ENV] = repr(t_spawn)
        proc = subprocess.run(
            [str(python), "-c", START_DRIVER, kind, str(work), *extra],
            env=env,
            cwd=str(work),
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        t_end = now()
        if proc.returncode != 0 or not out_file.is_file():
            tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-3:]
            raise RuntimeError(f"exit {proc.returncode}: {' / '.join(tail)[:300]}")
        data = json.loads(out_file.read_text())
        data["t_process_end"] = t_end
        return data


def scripted_model(directory: Path, turns: list[dict[str, Any]]) -> str:
    path = directory / "script.json"
    path.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    return f"scripted/{path}"


def measure_start(runs: int, peers: Sequence[str], log: Callable[[str], None], what_if: bool = True) -> list[StartRow]:
    with tempfile.TemporaryDirectory(prefix="tui-script-") as tmp:
        return _measure_start(Path(tmp), runs, peers, log, what_if)


def _measure_start(
    script_dir: Path, runs: int, peers: Sequence[str], log: Callable[[str], None], what_if: bool
) -> list[StartRow]:
    rows: list[StartRow] = []
    model = scripted_model(script_dir, [{"text": "ok"}])
    candidates: list[tuple[str, Path | str | None, str]] = [
        ("myrm", sys.executable, "myrm"),
        ("myrm, warm-up after paint (what-if)", sys.executable, "myrm-warmup-after-paint"),
    ]
    if not what_if:
        candidates.pop()
    candidates += [(name, peer_python(name), name) for name in peers]
    for label, python, kind in candidates:
        if python is None:
            rows.append(StartRow(label, f"not installed (no {PEER_VENVS.name}/{label} venv)"))
            continue
        row = StartRow(label, "ok")
        for index in range(runs):
            try:
                row.runs.append(start_once(python, kind, [model] if kind.startswith("myrm") else []))
            except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
                row.status = f"failed: {exc}"
                break
            log(f"  T1 {label} run {index + 1}/{runs}")
        rows.append(row)
    return rows


def measure_import(runs: int) -> dict[str, Any]:
    """Wall time of `python -c <stmt>` for the interpreter alone, Textual's App, and our app
    module; plus whether importing the app module pulled in litellm (it must not)."""
    statements = {
        "python -c pass": "pass",
        "import textual.app": "import textual.app",
        "import myrm_tui.tui.app": "import myrm_tui.tui.app",
    }
    with tempfile.TemporaryDirectory(prefix="tui-import-") as tmp:
        return _measure_import(child_env(Path(tmp)), runs, statements)


def _measure_import(env: dict[str, str], runs: int, statements: dict[str, str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for label, stmt in statements.items():
        times = []
        for _ in range(runs):
            t0 = now()
            subprocess.run(
                [sys.executable, "-c", stmt], env=env, check=True, cwd=str(REPO_ROOT), stdin=subprocess.DEVNULL
            )
            times.append((now() - t0) * 1000)
        result[label] = summary(times)
    probe = (
        "import sys, myrm_tui.tui.app; "
        "print(','.join(m for m in ('litellm','openai','tiktoken','httpx','llama_cpp') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], env=env, check=True, capture_output=True, text=True, cwd=str(REPO_ROOT)
    ).stdout.strip()
    result["heavy_modules_after_import"] = [m for m in loaded.split(",") if m]
    return result


# --- T2: streaming ----------------------------------------------------------------------------


def markdown_section(i: int) -> str:
    """One section of a coding answer: a heading, prose with inline code, a list, a Python fence
    and a table (5 top-level blocks)."""
    return (
        f"## Step {i}: tidy `module_{i}.py`\n\n"
        f"The function `load_{i}` reads the file twice; caching the parsed result keeps the second call "
        f"cheap. This matters when **step {i}** runs inside a loop over many inputs.\n\n"
        f"- keep the public name `load_{i}`\n- move parsing into `_parse_{i}`\n- add a test for the empty file\n\n"
        f"```python\ndef load_{i}(path):\n    text = path.read_text()\n    return _parse_{i}(text)\n\n\n"
        f"def _parse_{i}(text):\n    return [line.split('=') for line in text.splitlines() if line]\n```\n\n"
        f"| case | before | after |\n|---|---|---|\n| cold | {i + 12} ms | {i + 3} ms |\n"
        f"| warm | {i + 5} ms | {i + 1} ms |\n\n"
    )


def markdown_reply(chars: int, seed: int = 0) -> str:
    """A reply shaped like a coding answer (`markdown_section` repeated) cut to `chars`;
    deterministic so runs compare."""
    parts: list[str] = []
    i = seed
    while sum(len(p) for p in parts) < chars:
        parts.append(markdown_section(i))
        i += 1
    return "".join(parts)[:chars].rstrip() + "\n"


class GcClock:
    """Durations of the garbage collector's passes, by generation: a full (gen 2) pass walks
    every live object, and with litellm loaded that is millions of them, so it shows up as a
    frame-sized stall that no widget code explains."""

    def __init__(self) -> None:
        self.passes: list[tuple[int, float, float]] = []  # (generation, ms, end time)
        self._start = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = now()
        else:
            end = now()
            self.passes.append((int(info.get("generation", -1)), (end - self._start) * 1000, end))

    def __enter__(self) -> Self:
        import gc

        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        import gc

        gc.callbacks.remove(self._callback)

    def report(self) -> dict[str, Any]:
        return {f"gen{g}": summary([ms for gen, ms, _ in self.passes if gen == g]) for g in (0, 1, 2)}


class FrameClock:
    """Times every Screen refresh pass (layout + compositor update): one pass is one frame's
    work on the UI thread; headless skips only the terminal write."""

    def __init__(self) -> None:
        self.durations: list[float] = []
        self.cpu: list[float] = []  # each frame's CPU on the UI thread, ms: its work without the wait for a core
        self.ends: list[float] = []  # when each frame finished (to place stalls in time)
        self.observe: Callable[[], None] | None = None  # called after each frame (bench/tui_stream.py)
        self.frames = 0
        # optional probe read right after each frame: lets a key sample find the first frame
        # that showed its effect, even when that frame ran before the sampler woke up
        self.watch: Callable[[], object] | None = None
        self.seen: list[tuple[float, object]] = []
        self._original: Any = None

    def install(self) -> None:
        from textual.screen import Screen

        original = self._original = Screen._on_timer_update
        clock = self

        def timed(screen: Any) -> None:
            start, cpu = now(), time.thread_time()
            original(screen)
            end = now()
            clock.cpu.append((time.thread_time() - cpu) * 1000)
            clock.durations.append((end - start) * 1000)
            clock.ends.append(end)
            clock.frames += 1
            if clock.watch is not None:
                clock.seen.append((end, clock.watch()))
            if clock.observe is not None:
                clock.observe()

        Screen._on_timer_update = timed  # type: ignore[method-assign]

    def uninstall(self) -> None:
        if self._original is not None:
            from textual.screen import Screen

            Screen._on_timer_update = self._original  # type: ignore[method-assign]
            self._original = None


async def loop_probe(stop: asyncio.Event, lateness: list[float], stamps: list[float] | None = None) -> None:
    """How late a 10 ms sleep wakes up: any handler, layout or render that blocks the loop shows
    here, which is exactly what delays a keypress or the next frame. `stamps` gets each
    sample's wake-up time, so a stall can be placed in a phase of the turn."""
    while not stop.is_set():
        start = now()
        await asyncio.sleep(PROBE_INTERVAL_S)
        woke = now()
        lateness.append((woke - start - PROBE_INTERVAL_S) * 1000)
        if stamps is not None:
            stamps.append(woke)


async def key_latency(app: Any, prompt: Any, frames: FrameClock, char: str) -> tuple[float, float] | None:
    """Post one key as the terminal driver would; (ms until the prompt's text changed, ms until
    the next frame after that was rendered). None if it never showed."""
    from textual import events

    before_text = prompt.text
    frames.seen.clear()
    frames.watch = lambda: prompt.text
    try:
        start = now()
        event = events.Key(char, char)
        event.set_sender(app)
        app.post_message(event)
        deadline = start + KEY_TIMEOUT_S
        while prompt.text == before_text:
            if now() > deadline:
                return None
            await asyncio.sleep(0.0005)
        changed = now()
        while True:
            shown = next((end for end, text in frames.seen if text != before_text), None)
            if shown is not None:
                return (changed - start) * 1000, (shown - start) * 1000
            if now() > deadline:
                return None
            await asyncio.sleep(0.0005)
    finally:
        frames.watch = None


async def scroll_latency(transcript: Any, frames: FrameClock) -> float | None:
    """Page the transcript up (what PageUp or the wheel does) and time until a frame showed the
    new offset; None when it cannot scroll (an empty session)."""
    before = transcript.scroll_y
    frames.seen.clear()
    frames.watch = lambda: transcript.scroll_y
    try:
        start = now()
        transcript.scroll_page_up(animate=False)
        deadline = start + KEY_TIMEOUT_S
        while now() < deadline:
            shown = next((end for end, y in frames.seen if y != before), None)
            if shown is not None:
                return (shown - start) * 1000
            await asyncio.sleep(0.0005)
        return None
    finally:
        frames.watch = None


async def load_earlier_latency(transcript: Any, frames: FrameClock) -> float | None:
    """The page-up that reaches the top of the mounted turns, so earlier stored replies load
    ("load earlier"): ms until a frame shows them with the view kept on the old place. None
    when no turns are hidden."""
    if not transcript.hidden_turns:
        return None
    transcript.scroll_to(y=min(transcript.scroll_y, transcript.size.height), animate=False)
    await asyncio.sleep(0.2)  # settle: the sample starts one page below the top
    before = transcript.hidden_turns
    frames.seen.clear()
    frames.watch = lambda: (transcript.hidden_turns, transcript.scroll_y)
    try:
        start = now()
        transcript.scroll_page_up(animate=False)
        deadline = start + KEY_TIMEOUT_S
        while now() < deadline:
            shown = next((end for end, (hidden, y) in frames.seen if hidden != before and y > 0), None)
            if shown is not None:
                return (shown - start) * 1000
            await asyncio.sleep(0.0005)
        return None
    finally:
        frames.watch = None


async def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = now() + timeout
    while not predicate():
        if now() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


# --- T2: long sessions (one child process per size) -----------------------------------------


def seed_session(store: Any, model: str, messages: int) -> str | None:
    """`messages` stored messages: user questions and markdown answers of ~12 blocks each (a
    typical agent reply: heading, paragraphs, list, code fence, table), in one session."""
    if messages <= 0:
        return None
    session = store.create_session(model, "long session")
    for i in range(messages):
        if i % 2 == 0:
            message = {"role": "user", "content": f"Question {i // 2}: how do I speed up step {i // 2}?"}
        else:
            message = {"role": "assistant", "content": markdown_reply(900, seed=i)}
        store.append_message(session.id, message, len(message["content"]) // 4)
    return session.id


async def session_child(messages: int, samples: int) -> dict[str, Any]:
    from myrm_tui.settings import Settings
    from myrm_tui.store import Store
    from myrm_tui.tui.app import MyrmApp
    from myrm_tui.tui.screens.chat.screen import ChatScreen

    with tempfile.TemporaryDirectory(prefix="tui-session-") as tmp:
        root = Path(tmp)
        os.environ["MYRM_CONFIG_DIR"] = str(root / "config")
        model = scripted_model(root, [{"text": "ok"}])
        workspace = root / "ws"
        workspace.mkdir()
        store = Store.open(workspace)
        t_seed = now()
        sid = seed_session(store, model, messages)
        seed_s = now() - t_seed
        rss_before = rss_mb()
        frames = FrameClock()
        painted: dict[str, float] = {}
        from textual.screen import Screen

        original = Screen._compositor_refresh

        def refresh(screen: Any) -> None:
            original(screen)
            if isinstance(screen, ChatScreen) and "t" not in painted:
                painted["t"] = now()

        Screen._compositor_refresh = refresh  # type: ignore[method-assign]
        frames.install()  # before mount: each screen binds its refresh timer then
        app = MyrmApp(workspace, Settings().with_values(model=model), session_id=sid, store=store, watch_themes=False)
        try:
            t_start = now()
            async with app.run_test(size=HEADLESS_SIZE):
                screen = app.chat_screen
                await wait_for(lambda: "t" in painted, CHILD_TIMEOUT_S, "first paint")
                await wait_for(screen.ready.is_set, CHILD_TIMEOUT_S, "engine warm-up")
                await wait_for(lambda: app.focused is screen.prompt, 30, "prompt focus")
                await asyncio.sleep(0.3)  # let the mount's trailing layout settle
                frames.durations.clear()
                keys: list[tuple[float, float]] = []
                lost = 0
                for index in range(samples):
                    sample = await key_latency(app, screen.prompt, frames, "abcdefghij"[index % 10])
                    if sample is None:
                        lost += 1
                    else:
                        keys.append(sample)
                    await asyncio.sleep(KEY_GAP_S)
                scrolls: list[float] = []
                if screen.transcript.max_scroll_y > 0:
                    for _ in range(min(samples, SCROLL_SAMPLES)):
                        took = await scroll_latency(screen.transcript, frames)
                        if took is not None:
                            scrolls.append(took)
                        await asyncio.sleep(KEY_GAP_S)
                loads: list[float] = []
                loads_lost = 0  # a load whose batch never showed with the view kept (a bug, not a slow load)
                for _ in range(LOAD_SAMPLES):
                    if not screen.transcript.hidden_turns:
                        break
                    took = await load_earlier_latency(screen.transcript, frames)
                    if took is None:
                        loads_lost += 1
                        break
                    loads.append(took)
                    await asyncio.sleep(KEY_GAP_S)
                nodes = len(list(screen.walk_children(with_self=True)))
                mounted_turns = len(screen.mounted_turns())
                hidden = screen.hidden_turns
                rss_after = rss_mb()
        finally:
            Screen._compositor_refresh = original  # type: ignore[method-assign]
            frames.uninstall()
            store.close()
    return {
        "messages": messages,
        "seed_s": seed_s,
        "resume_to_paint_ms": (painted["t"] - t_start) * 1000,
        "key_to_text_ms": summary([k[0] for k in keys]),
        "key_to_frame_ms": summary([k[1] for k in keys]),
        "keys_lost": lost,
        "scroll_to_frame_ms": summary(scrolls),
        "load_earlier_ms": summary(loads),
        "first_load_earlier_ms": loads[0] if loads else None,
        "load_earlier_lost": loads_lost,
        "dom_nodes": nodes,
        "mounted_turns": mounted_turns,
        "hidden_turns": hidden,
        "rss_before_app_mb": rss_before,
        "rss_mb": rss_after,
    }


def measure_sessions(sizes: Sequence[int], samples: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="tui-child-") as tmp:
            out = Path(tmp) / "row.json"
            env = child_env(Path(tmp))
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bench.tui_bench",
                    "--child-session",
                    str(size),
                    "--samples",
                    str(samples),
                    "--out",
                    str(out),
                ],
                env=env,
                cwd=str(REPO_ROOT),
                capture_output=True,
                text=True,
                timeout=CHILD_TIMEOUT_S * 2,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            if proc.returncode != 0 or not out.is_file():
                tail = (proc.stderr or "").strip().splitlines()[-3:]
                rows.append({"messages": size, "status": f"failed: {' / '.join(tail)[:300]}"})
            else:
                row = json.loads(out.read_text())
                row["status"] = "ok"
                rows.append(row)
        log(f"  T2 session with {size} messages done")
    base = next((r for r in rows if r.get("messages") == 0 and r["status"] == "ok"), None)
    for row in rows:
        if row["status"] == "ok" and base is not None:
            row["key_to_frame_vs_empty"] = ratio(row["key_to_frame_ms"]["median"], base["key_to_frame_ms"]["median"])
            row["rss_vs_empty"] = ratio(row["rss_mb"], base["rss_mb"])
    return rows


# --- report -----------------------------------------------------------------------------------


def print_report(result: dict[str, Any]) -> None:
    imports = result.get("imports")
    if imports:
        base = imports["python -c pass"]["median"]
        print_table(
            "T1 imports (wall ms of `python -c STMT`, includes interpreter start)",
            ["statement", "median", "p95", "× python -c pass"],
            [
                [k, fmt(v["median"]), fmt(v["p95"]), fmt(ratio(v["median"], base), 1)]
                for k, v in imports.items()
                if isinstance(v, dict)
            ],
        )
        print(f"heavy modules after `import myrm_tui.tui.app`: {imports['heavy_modules_after_import'] or 'none'}")
    start = result.get("start")
    if start:
        myrm = next((r for r in start if r["app"] == "myrm" and r["status"] == "ok"), None)
        rows = []
        for row in start:
            ms = row.get("ms", {})
            if row["status"] != "ok":
                rows.append([row["app"], row["status"], "", "", "", "", "", ""])
                continue
            paint = ms["t_first_frame"]
            rows.append(
                [
                    row["app"],
                    f"ok (n={paint['n']})",
                    fmt(ms["t_imported"]["median"]),
                    f"{fmt(paint['median'])} / {fmt(paint['p95'])}",
                    f"{fmt(ms['t_input']['median'])} / {fmt(ms['t_input']['p95'])}",
                    f"{fmt(ms['t_warm']['median'])} / {fmt(ms['t_warm']['p95'])}",
                    fmt(ratio(paint["median"], myrm["ms"]["t_first_frame"]["median"]) if myrm else None, 2),
                    ",".join(row.get("heavy_at_first_frame") or []) or "none",
                ]
            )
        print_table(
            "T1 start (ms from spawn, median / p95; headless 120×40)",
            [
                "app",
                "runs",
                "imported",
                "first frame",
                "input focused",
                "engine warm",
                "first frame × myrm",
                "heavy modules at first frame",
            ],
            rows,
        )
    if result.get("stream_rates"):
        from bench.tui_stream import print_rates

        print_rates(result["stream_rates"])
    sessions = result.get("sessions")
    if sessions:
        print_sessions(sessions)
    if result.get("refresh"):
        print_refresh(result["refresh"])
    paint = result.get("first_paint")
    if paint:
        print_table(
            f"First paint in tmux 120×40 (ms from spawn to text on the pane, poll {fmt(paint.get('poll_ms'))} ms)",
            ["app", "n", "median", "p95", "× bare"],
            [
                [
                    "bare Textual app, one Input",
                    paint["bare_ms"]["n"],
                    fmt(paint["bare_ms"]["median"]),
                    fmt(paint["bare_ms"]["p95"]),
                    "1.00",
                ],
                [
                    "myrm",
                    paint["myrm_ms"]["n"],
                    fmt(paint["myrm_ms"]["median"]),
                    fmt(paint["myrm_ms"]["p95"]),
                    fmt(paint["myrm_vs_bare"], 2),
                ],
                *(
                    [
                        [
                            "myrm, chat screen shown (status line)",
                            paint["myrm_chat_ms"]["n"],
                            fmt(paint["myrm_chat_ms"]["median"]),
                            fmt(paint["myrm_chat_ms"]["p95"]),
                            fmt(paint["myrm_chat_ms"]["median"] / paint["bare_ms"]["median"], 2)
                            if paint["myrm_chat_ms"]["median"] and paint["bare_ms"]["median"]
                            else "—",
                        ]
                    ]
                    if paint.get("myrm_chat_ms")
                    else []
                ),
            ]
            if paint.get("bare_ms")
            else [],
        )
        print(f"status: {paint['status']}")


def print_refresh(rows: list[dict[str, Any]]) -> None:
    print_table(
        "Context ring refresh after one model call (ms, median / p95): fresh read vs following the session",
        ["stored events", "fresh read (before)", "followed read (now)", "first read", "mismatches"],
        [
            [
                f"{row['events']:,}",
                f"{fmt(row['fresh_read_ms']['median'], 2)} / {fmt(row['fresh_read_ms']['p95'], 2)}",
                f"{fmt(row['followed_read_ms']['median'], 2)} / {fmt(row['followed_read_ms']['p95'], 2)}",
                fmt(row["first_read_ms"], 1),
                row["mismatches"],
            ]
            for row in rows
        ],
    )


def print_sessions(sessions: list[dict[str, Any]]) -> None:
    rows = []
    for row in sessions:
        if row["status"] != "ok":
            rows.append([row["messages"], row["status"], "", "", "", "", "", "", "", ""])
            continue
        rows.append(
            [
                row["messages"],
                fmt(row["resume_to_paint_ms"]),
                f"{fmt(row['key_to_text_ms']['median'], 1)} / {fmt(row['key_to_text_ms']['p95'], 1)}",
                f"{fmt(row['key_to_frame_ms']['median'], 1)} / {fmt(row['key_to_frame_ms']['p95'], 1)}",
                fmt(row.get("key_to_frame_vs_empty"), 2),
                f"{fmt(row['scroll_to_frame_ms']['median'], 1)} / {fmt(row['scroll_to_frame_ms']['p95'], 1)}",
                f"{fmt(row.get('first_load_earlier_ms'), 1)} / {fmt(row.get('load_earlier_ms', {}).get('median'), 1)}"
                f" / {fmt(row.get('load_earlier_ms', {}).get('p95'), 1)}"
                + (f" ({row['load_earlier_lost']} lost)" if row.get("load_earlier_lost") else ""),
                f"{row['mounted_turns']} (+{row['hidden_turns']} hidden)",
                row["dom_nodes"],
                f"{fmt(row['rss_mb'])} ({fmt(row.get('rss_vs_empty'), 2)}×)",
            ]
        )
    print_table(
        "T2 long sessions (one process per size; key = a letter typed into the prompt)",
        [
            "messages",
            "resume → paint ms",
            "key → text ms (med / p95)",
            "key → frame ms (med / p95)",
            "key × empty",
            "page-up → frame ms (med / p95)",
            "page-up into older turns ms (first / median / p95)",
            "turns mounted",
            "DOM nodes",
            "RSS MB (× empty)",
        ],
        rows,
    )


def environment() -> dict[str, Any]:
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    versions = {}
    for name in ("textual", "rich", "litellm"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:  # noqa: BLE001 - informational only
            versions[name] = None
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg": load,
        "versions": versions,
        "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    quick = args.quick
    parts = set(args.only.split(",")) if args.only else {"imports", "start", "stream", "sessions", "refresh"}
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.silent else (lambda m: None)
    runs = args.runs or (1 if quick else START_RUNS)
    result: dict[str, Any] = {
        "command": "python -m bench.tui_bench " + " ".join(args.argv),
        "quick": quick,
        "environment": environment(),
    }
    if "imports" in parts:
        log("T1 imports…")
        result["imports"] = measure_import(runs)
    if "start" in parts:
        log("T1 start…")
        peers = [] if args.no_peers else ["elia", "oterm"]
        rows = measure_start(runs, peers, log, what_if=not args.no_what_if)
        result["start"] = []
        for row in rows:
            data = {"app": row.app, "status": row.status, "runs": row.runs}
            if row.runs:
                data["ms"] = {m: row.ms(m) for m in START_MILESTONES}
                data["heavy_at_first_frame"] = sorted({m for r in row.runs for m in r.get("heavy_at_first_frame", [])})
            result["start"].append(data)
    if "stream" in parts:
        log("T2 streaming…")
        from bench.tui_stream import LONG_REPLY_BLOCKS, STREAM_RATES, measure_rates

        seconds = args.stream_seconds or (1.0 if quick else STREAM_SECONDS)
        rates = (STREAM_RATES[0],) if quick else STREAM_RATES
        long_blocks = 0 if quick or args.no_long_reply else LONG_REPLY_BLOCKS
        idle_s = min(IDLE_BASELINE_S, seconds)
        rated = measure_rates(seconds, rates, long_blocks, max(1, args.repeat), idle_s, log)
        result["stream_rates"] = rated
        result["stream"] = rated["replies"]["coding answer"][str(rates[0])]  # the 200 tok/s row, as before
    if "sessions" in parts:
        log("T2 long sessions…")
        sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else ((0, 100) if quick else SESSION_SIZES)
        samples = args.samples or (5 if quick else KEY_SAMPLES)
        result["sessions"] = measure_sessions(sizes, samples, log)
    if "refresh" in parts:
        log("context refresh at 0 / 2k / 20k stored events…")
        from bench.tui_context_refresh import EVENT_COUNTS, REFRESH_SAMPLES, measure_refresh

        counts = EVENT_COUNTS[:2] if quick else EVENT_COUNTS
        if args.event_counts:
            counts = tuple(int(s) for s in args.event_counts.split(","))
        result["refresh"] = measure_refresh(counts, 10 if quick else REFRESH_SAMPLES, summary, log)
    if "first_paint" in parts:  # opt-in: needs tmux, and a terminal-visible paint is what it times
        log("first paint in tmux, bare Textual app vs myrm…")
        from bench.tui_first_paint import measure_first_paint

        result["first_paint"] = measure_first_paint(runs, child_env, scripted_model, summary, log)
    return result


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.tui_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 start run, 1 s stream, sizes 0 and 100")
    parser.add_argument(
        "--only", default="", help="comma list of: imports,start,stream,sessions,refresh,first_paint (tmux, opt-in)"
    )
    parser.add_argument("--runs", type=int, default=0, help=f"start-up runs (default {START_RUNS})")
    parser.add_argument("--stream-seconds", type=float, default=0.0, help="seconds of the coding answer at each rate")
    parser.add_argument("--repeat", type=int, default=1, help="streaming runs per rate and reply (medians reported)")
    parser.add_argument("--no-long-reply", action="store_true", help="skip the 300-block reply")
    parser.add_argument("--sizes", default="", help="comma list of stored-message counts")
    parser.add_argument("--event-counts", default="", help="comma list of stored events for refresh (0,2000,20000)")
    parser.add_argument("--samples", type=int, default=0, help=f"keypresses per size (default {KEY_SAMPLES})")
    parser.add_argument("--no-peers", action="store_true", help="skip elia/oterm")
    parser.add_argument(
        "--no-what-if",
        action="store_true",
        help="skip the what-if row (warm-up after paint)",
    )
    parser.add_argument("--out", default="", help="JSON path (default bench/results/tui_bench[_quick].json)")
    parser.add_argument("--silent", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--child-session", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    args.argv = list(argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.child_session is not None:
        row = asyncio.run(session_child(args.child_session, args.samples or KEY_SAMPLES))
        Path(args.out).write_text(json.dumps(row), encoding="utf-8")
        return 0
    result = run(args)
    out = Path(args.out) if args.out else RESULTS_DIR / ("tui_bench_quick.json" if args.quick else "tui_bench.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=lambda o: asdict(o)), encoding="utf-8")
    print_report(result)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
