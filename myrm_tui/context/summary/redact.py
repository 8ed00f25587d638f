"""Redaction of secrets and (by policy) personal data before a summary, note or export is stored.

Why before storing: a summary outlives the messages it covers in the prompt and is sent to the
provider on every later turn; a key pasted once must not ride along forever. Originals stay in
the store (lossless), only the derived text is scrubbed.

Why typed placeholders (`[REDACTED:aws_access_key]`) rather than masks: the model still knows
*what* was there (a key was configured, an email was given), which is what a summary needs.

What is deliberately NOT redacted: git hashes, UUIDs, sha256 hex, file paths, version strings and
base64 data URLs. A coding agent needs those verbatim, and an entropy detector would eat them, so
detection is by format (provider prefixes, structure, context words), never by randomness alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PLACEHOLDER = "[REDACTED:{kind}]"


@dataclass(frozen=True)
class RedactionPolicy:
    """Credentials are always worth removing; PII is a choice (a devops session may need the
    email of a git author), so each PII class can be turned off."""

    credentials: bool = True
    emails: bool = True
    phones: bool = True
    credit_cards: bool = True


DEFAULT_POLICY = RedactionPolicy()
CREDENTIALS_ONLY = RedactionPolicy(emails=False, phones=False, credit_cards=False)


@dataclass(frozen=True)
class RedactionResult:
    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class RedactedObject:
    value: Any
    counts: dict[str, int] = field(default_factory=dict)


_B64 = r"A-Za-z0-9+/"
# Data URLs (inline images, files) are never scanned: their base64 may contain any short pattern.
_DATA_URL = re.compile(r"data:[\w.+/-]+(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=]+")  # no \s: a span must not swallow the next word

# (kind, pattern, group to replace or 0 for the whole match). Order matters: the most specific
# first (sk-ant before sk-, PEM blocks before anything that could match inside them).
_CREDENTIALS: list[tuple[str, re.Pattern[str], int]] = [
    ("private_key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                               r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"), 0),
    ("url_password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@"), 1),
    ("anthropic_key", re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}"), 0),
    ("stripe_key", re.compile(r"(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("openai_key", re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0),
    ("aws_access_key", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"), 0),
    ("aws_secret_key", re.compile(rf"(?i)aws_?secret\w*[\"']?\s*[:=]\s*[\"']?([{_B64}]{{40}})(?![{_B64}])"), 1),
    ("github_token", re.compile(r"(?<![\w])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})"), 0),
    ("gitlab_token", re.compile(r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}"), 0),
    ("slack_token", re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("google_api_key", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}"), 0),
    ("huggingface_token", re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{30,}"), 0),
    ("npm_token", re.compile(r"(?<![\w-])npm_[A-Za-z0-9]{36}"), 0),
    ("jwt", re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0),
    ("bearer_token", re.compile(r"(?i)(?:\bbearer|authorization:\s*token)\s+([A-Za-z0-9\-._~+/]{16,}=*)"), 1),
    ("basic_auth", re.compile(r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/]{12,}=*)"), 1),
    # .env style: a KEY whose name ends in a secret word (MAX_TOKENS is not one), any value that
    # is not a reference ($VAR, ${VAR}) or code (os.environ[...], get_token()).
    ("env_secret", re.compile(
        r"(?m)\b(?:export\s+)?[A-Z0-9_]*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|APIKEY|ACCESS_KEY|"
        r"PRIVATE_KEY|CREDENTIALS|AUTH_KEY)\s*[=:]\s*[\"']?((?!\$)[^\s\"'#()\[\]{},;]{3,}+)(?![(\[{])"), 1),
    # JSON/YAML fields whose key ends in a secret word.
    ("json_secret", re.compile(
        r"(?i)[\"']?[\w-]*(?:password|passwd|secret|api_?key|access_?token|auth_?token|client_secret)[\"']?"
        r"\s*:\s*[\"']((?!\$\{)[^\"'\s]{4,})[\"']"), 1),
]

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
# International (+CC …) or North-American (3-3-4 with separators) numbers; bare digit runs are
# never phones (they are ids, ports, timestamps).
_PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}"
                    r"|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4})(?![\w-])")
# Card numbers start with a real issuer prefix (Visa 4, Mastercard 51-55/22-27, Amex 34/37,
# Discover 6011/65) and pass Luhn; epoch-millisecond timestamps and ids fail one or the other.
_CARD = re.compile(r"(?<![\w.-])(?:4|5[1-5]|2[2-7]|3[47]|6011|65)\d{0,3}(?:[ -]?\d){9,15}(?![\w-])")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2 == 1:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 13 <= len(digits) <= 19 and luhn_ok(digits)


def _email(match: re.Match[str]) -> bool:
    # user@host:path is an scp/ssh remote (git@github.com:org/repo.git), not a person's address.
    return not match.string.startswith(":", match.end())


def _phone(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 10 <= len(digits) <= 15


def _protected_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _DATA_URL.finditer(text)]


def _sub(text: str, kind: str, pattern: re.Pattern[str], group: int, counts: Counter[str],
         accept: Callable[[re.Match[str]], bool] | None = None) -> str:
    protected = _protected_spans(text)
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        start, end = m.span(group)
        if any(a <= start < b for a, b in protected) or (accept and not accept(m)):
            continue
        if "[REDACTED:" in m.group(group):
            continue
        out.append(text[pos:start])
        out.append(PLACEHOLDER.format(kind=kind))
        pos = end
        counts[kind] += 1
    if pos == 0:
        return text
    out.append(text[pos:])
    return "".join(out)


def redact(text: str, policy: RedactionPolicy = DEFAULT_POLICY) -> RedactionResult:
    """Replace secrets (and PII the policy asks for) by typed placeholders."""
    if not text:
        return RedactionResult(text or "", {})
    counts: Counter[str] = Counter()
    if policy.credentials:
        for kind, pattern, group in _CREDENTIALS:
            text = _sub(text, kind, pattern, group, counts)
    if policy.emails:
        text = _sub(text, "email", _EMAIL, 0, counts, _email)
    if policy.credit_cards:
        text = _sub(text, "credit_card", _CARD, 0, counts, _card)
    if policy.phones:
        text = _sub(text, "phone", _PHONE, 0, counts, _phone)
    return RedactionResult(text, dict(counts))


def redact_obj(value: Any, policy: RedactionPolicy = DEFAULT_POLICY) -> RedactedObject:
    """Redact every string inside a JSON-like value (dict keys are kept, values scanned)."""
    counts: Counter[str] = Counter()

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            result = redact(v, policy)
            counts.update(result.counts)
            return result.text
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple):
            return tuple(walk(x) for x in v)
        return v

    return RedactedObject(walk(value), dict(counts))


def redact_summary(summary: Any, policy: RedactionPolicy = DEFAULT_POLICY) -> tuple[Any, dict[str, int]]:
    """A StructuredSummary with every text field redacted, and the counts."""
    counts: Counter[str] = Counter()

    def one(text: str) -> str:
        result = redact(text, policy)
        counts.update(result.counts)
        return result.text

    return summary.map_text(one), dict(counts)
