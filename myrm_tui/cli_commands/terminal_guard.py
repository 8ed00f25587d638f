"""Give the terminal back in a usable state, however the full-screen app ends.

Why a supervising parent: Textual restores the terminal on a normal exit and on Python
exceptions, but a process killed by a signal (a native crash, the OOM killer, `kill -9`) runs no
cleanup at all and leaves the user's terminal in the alternate screen with mouse tracking on,
where typing prints escape codes (`reset` is not enough; `tput rmcup` is). So `myrm` forks before
the app starts: the child runs the app; the parent only waits, and if the child did not exit
cleanly it restores the terminal modes it saved and says what happened. The fork happens before
any thread exists, and the parent imports nothing more.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable

from myrm_tui.cli_commands.common import err

# Every mode a full-screen Textual app may have switched on, switched off again. Terminals ignore
# a reset for a mode they never had on, so sending all of them is safe.
RESTORE_SEQUENCE = (
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l"  # mouse tracking and its encodings
    "\x1b[?2004l"  # bracketed paste
    "\x1b[?1004l"  # focus in/out reports
    "\x1b[<u"  # kitty keyboard protocol: pop the flags the app pushed
    "\x1b[?25h"  # show the cursor
    "\x1b[?7h"  # line wrap back on (full-screen apps turn it off)
    "\x1b[?1049l"  # leave the alternate screen
)


def restore_terminal(saved_attrs: list | None) -> None:
    """Switch the app's terminal modes off and put back the line discipline saved at start."""
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(RESTORE_SEQUENCE)
            tty.flush()
    except OSError:
        return
    if saved_attrs is not None:
        try:
            import termios

            with open("/dev/tty") as tty_in:
                termios.tcsetattr(tty_in.fileno(), termios.TCSADRAIN, saved_attrs)
        except (OSError, ImportError):
            pass


def _saved_terminal_attrs() -> list | None:
    try:
        import termios

        return termios.tcgetattr(sys.stdin.fileno())
    except (OSError, ImportError, ValueError, AttributeError):
        return None


def describe_death(status: int) -> str | None:
    """How a child ended, when that was not a normal exit; None for a normal exit."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown signal"
        return f"signal {number}, {name}"
    return None


def run_supervised(app_main: Callable[[], int]) -> int:
    """Run `app_main` in a forked child when stdin is a terminal; restore the terminal if the
    child dies abnormally. Without a terminal (tests, pipes) or fork, run it directly."""
    if not hasattr(os, "fork") or not sys.stdin.isatty() or os.environ.get("MYRM_NO_SUPERVISOR"):
        return app_main()
    saved = _saved_terminal_attrs()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: the app itself
        code = 1
        try:
            code = app_main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except KeyboardInterrupt:
            code = 130
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return _wait_for_app(pid, saved)


def _wait_for_app(pid: int, saved: list | None) -> int:
    # The app handles keys itself; the parent must not die of a Ctrl+C sent before raw mode, and
    # a SIGTERM/SIGHUP sent to the parent goes on to the app so it can clean up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            return 1
        except InterruptedError:
            continue
    death = describe_death(status)
    if death is None:
        return os.waitstatus_to_exitcode(status)
    restore_terminal(saved)
    err(
        f"myrm stopped unexpectedly ({death}). Your sessions are kept: `myrm --continue` resumes the "
        "last one. If it keeps happening, run `myrm doctor`."
    )
    return 128 + os.WTERMSIG(status)
