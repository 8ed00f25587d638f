"""Line patterns shared by several filters (compiled once; all linear-time, no nested `.*`)."""

from __future__ import annotations

import re

# A line a developer looks at first. Word-bounded so `errorHandler` or `failover` do not count;
# `0 errors`-style summaries do match, which is fine: summaries are worth keeping too.
IMPORTANT = re.compile(
    r"\b(?:error|errors|err!|fail|failed|failure|failures|fatal|panic|panicked|exception|traceback|"
    r"assert(?:ion)?(?:error)?|denied|refused|timed out|timeout|segmentation fault|abort(?:ed)?|"
    r"cannot|could not|unable to|not found|no such file|undefined reference)\b",
    re.IGNORECASE,
)
WARNING = re.compile(r"\b(?:warn|warning|warnings|deprecat\w*)\b", re.IGNORECASE)
# `file.c:12:5: error: ...` / `src/x.rs:3:1: warning: ...` (gcc, clang, tsc-like, eslint-unix).
DIAGNOSTIC = re.compile(
    r"^(?P<loc>[^\s:][^:\n]{0,300}?:\d+(?::\d+)?):\s+(?P<sev>fatal error|error|warning|note|remark)\b"
)
# Progress bars and spinners: runs of bar glyphs or `NN%` counters.
PROGRESS = re.compile(r"[━█▉▊▋▌▍▎▏░▒▓■□#=>\-]{12,}|^\s*\d{1,3}(?:\.\d+)?%|\[\s*\d{1,3}%\]\s*$|[⠁-⣿]")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
