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

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
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
_DATA_URL = re.compile(
    r"data:[\w.+/-]+(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=]+"
)  # no \s: a span must not swallow the next word

# A line break as it appears in text, or escaped inside a JSON string (tool arguments, exports).
_NL = r"(?:\r?\n|\\r?\\n)"
# Lines that continue a key body: base64 of at least 16 chars (a full PEM line is 64 or 70), or
# any base64 ending in padding, on the next line or after a space (a summary or a flattened
# quote joins lines); or an RFC 1421 header (Proc-Type:, DEK-Info:) and its blank line. A short
# unpadded last line (at most 11 bytes of a key) is the price of never eating the next word of
# prose.
# (One way to split any run of blanks, so a long run after a BEGIN line cannot backtrack.)
_KEY_LINES = (
    rf"(?:(?:{_NL}{{1,2}}[ \t]*|[ \t]+)(?:[{_B64}]{{16,}}={{0,2}}|[{_B64}]{{1,15}}={{1,2}})"
    rf"|{_NL}{{1,2}}[A-Za-z-]+:[^\r\n\\]*)*"
)
# DER private keys start with fixed bytes whatever the key, so their base64 starts with fixed
# text: PKCS#1 RSA (SEQUENCE, INTEGER 0, INTEGER modulus), PKCS#8 (INTEGER 0 then an algorithm
# id, at each SEQUENCE header length), encrypted PKCS#8 (PBES2), SEC1 EC (INTEGER 1, OCTET
# STRING) and OpenSSH ("openssh-key-v1"). Public keys and certificates start otherwise.
_DER_KEY_START = (
    r"(?:MII[A-Za-z0-9+/]{3}IBAAK|MII[A-Za-z0-9+/]{3}IBADAN|MI[GH][A-Za-z0-9+/]AgEAM"
    r"|MC[A-Za-z0-9+/]CAQAw|MII[A-Za-z0-9+/]{3}B[A-Za-z0-9+/]BgkqhkiG9w0BBQ0"
    r"|M[A-Za-z0-9+/]{2}CAQEE|MIG[A-Za-z0-9+/]AgEBB|b3BlbnNzaC1rZXktdjE)"
)
# Names that mark a value as secret in config, code and YAML (lower or upper case). A name must
# END with one: `token_count`, `password_policy` and `max_tokens` are not secrets.
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|secret|secret_?key|api_?key|apikey|access_?key|"
    r"private_?key|access_?token|auth_?token|refresh_?token|bearer_?token|token|client_?secret)"
)
# Values that are words of a config language, not secrets (`password: null`).
_NOT_A_VALUE = r"(?:true|false|null|none|nil|yes|no|required|optional)\b"
# One char of a value written inline (`token: ab12…`): stops at quotes, brackets, separators.
_INLINE_VALUE = r"[^\s\"'`,;()\[\]{}<>\\]"
# Command-line clients that take a password glued to -p (`mysql -uroot -pS3cret`).
_MYSQL_CLIENTS = r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb|mariadb-dump)"
# A quoted or bare shell word (the value of a flag).
_SHELL_WORD = r"(?:'[^'\n]+'|\"[^\"\n]+\"|[^\s\"'\\]+)"

# (kind, pattern, group to replace or 0 for the whole match). Order matters: the most specific
# first (sk-ant before sk-, PEM blocks before anything that could match inside them, URLs before
# the `key = value` forms that would otherwise take a URL as their value).
# Each pattern's last field: words one of which every match of it contains, looked for in the
# text's casefold before the pattern runs (`_redact`). Most short texts (summary items, first
# lines) hold none, and the ~35 patterns were most of an event's redaction time; the key-name
# patterns, which try every word start, half of it. Casefold, not lower: under (?i) "ſ" matches
# "s" and the Kelvin sign "k", and casefold maps them there. No "i" in a word of a (?i) pattern:
# "İ" and "ı" match "i" there but casefold elsewhere. Both rules, and that every match holds a
# word, are tested (tests/security/test_redact_needles.py).
_SECRET_WORDS = ("pass", "secret", "key", "token")

_CREDENTIALS: list[tuple[str, re.Pattern[str], int, tuple[str, ...]]] = [
    # A PEM block to its END line, or (truncated, pasted without its end) through its body lines.
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:"
            r"(?:(?!-----BEGIN )[\s\S])*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            rf"|{_KEY_LINES})"
        ),
        0,
        ("-----begin ",),
    ),
    # The body alone, without its BEGIN/END markers (an env var, a JSON field, a copied block).
    ("private_key", re.compile(rf"(?<![{_B64}]){_DER_KEY_START}[{_B64}]{{12,}}={{0,2}}{_KEY_LINES}"), 0, ()),
    # user:password@host; the password may itself contain '@' or ':' (the last '@' before the
    # path ends it), and the user may be empty (redis://:password@host).
    (
        "url_password",
        re.compile(
            r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@\"'\\]*:([^\s/?#\"'\\]+)@"
            r"(?=[^\s@/?#\"'\\]*(?:[/?#\s\"'\\]|$))"
        ),
        1,
        ("://",),
    ),
    # Credentials passed in a query string (?api_key=…, Azure SAS &sig=…).
    (
        "url_query_secret",
        re.compile(
            r"(?i)[?&](?:api[_-]?key|apikey|key|access[_-]?token|auth[_-]?token|token|"
            r"secret|client[_-]?secret|password|passwd|sig|signature)=([^&\s#\"'<>\\]{8,})"
        ),
        1,
        ("=",),
    ),
    # Webhook URLs are the credential themselves: whoever has the path can post.
    (
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{20,})"),
        1,
        ("hooks.slack.com",),
    ),
    (
        "discord_webhook",
        re.compile(r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/(\d+/[\w-]{20,})"),
        1,
        ("discord",),
    ),
    # Azure storage / Service Bus connection strings.
    (
        "azure_key",
        re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecretValue)=([^;\s\"'\\]{16,})"),
        1,
        ("accountkey", "sharedaccesskey", "sharedsecretvalue"),
    ),
    ("anthropic_key", re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}"), 0, ("sk-ant-",)),
    ("stripe_key", re.compile(r"(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0, ("_live_", "_test_")),
    ("openai_key", re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0, ("sk-",)),
    ("aws_access_key", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"), 0, ("akia", "asia")),
    (
        "aws_secret_key",
        re.compile(rf"(?i)aws_?secret\w*[\"']?\s*[:=]\s*[\"']?([{_B64}]{{40}})(?![{_B64}])"),
        1,
        ("aws",),
    ),
    (
        "github_token",
        re.compile(r"(?<![\w])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})"),
        0,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    ("gitlab_token", re.compile(r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}"), 0, ("glpat-",)),
    ("slack_token", re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"), 0, ("xox",)),
    ("google_api_key", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}"), 0, ("aiza",)),
    ("huggingface_token", re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{30,}"), 0, ("hf_",)),
    ("npm_token", re.compile(r"(?<![\w-])npm_[A-Za-z0-9]{36}"), 0, ("npm_",)),
    ("jwt", re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, ("eyj",)),
    (
        "bearer_token",
        re.compile(r"(?i)(?:\bbearer|authorization:\s*token)\s+([A-Za-z0-9\-._~+/]{16,}=*)"),
        1,
        ("bearer", "author"),
    ),
    ("basic_auth", re.compile(r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/]{12,}=*)"), 1, ("author",)),
    # Passwords on a command line: `mysql -pS3cret` (glued; `-p alone` prompts), `--password=…`,
    # `curl -u user:pass`, `sshpass -p …`, `openssl … -passin pass:…`.
    (
        "cli_password",
        re.compile(rf"(?<![\w-]){_MYSQL_CLIENTS}\b[^\n;|&]*?[ \t]-p({_SHELL_WORD})"),
        1,
        ("mysql", "mariadb"),
    ),
    (
        "cli_password",
        re.compile(
            r"(?<![\w-])--(?:password|passwd|pass|token|api[-_]?key|client[-_]secret|"
            rf"auth[-_]token|access[-_]token)(?:=|[ \t]+)((?![-$]){_SHELL_WORD})"
        ),
        1,
        ("--",),
    ),
    (
        "cli_password",
        re.compile(r"(?<![\w-])curl\b[^\n;|&]*?[ \t](?:-u|--user)[ \t]*['\"]?[^\s:'\"]+:([^\s'\"\\]+)"),
        1,
        ("curl",),
    ),
    ("cli_password", re.compile(r"(?<![\w-])sshpass[ \t]+-p[ \t]*([^\s\\]+)"), 1, ("sshpass",)),
    ("cli_password", re.compile(r"(?<![\w-])-pass(?:in|out)?[ \t]+pass:([^\s\\]+)"), 1, ("pass:",)),
    # .env style: a KEY whose name ends in a secret word (MAX_TOKENS is not one), any value that
    # is not a reference ($VAR, ${VAR}) or code (os.environ[...], get_token()).
    (
        "env_secret",
        re.compile(
            r"(?m)\b(?:export\s+)?[A-Z0-9_]*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|APIKEY|ACCESS_KEY|"
            r"PRIVATE_KEY|CREDENTIALS|AUTH_KEY)\s*[=:]\s*[\"']?((?!\$)[^\s\"'#()\[\]{},;]{3,}+)(?![(\[{])"
        ),
        1,
        ("secret", "passw", "token", "key", "credentials"),
    ),
    # JSON/YAML fields whose key ends in a secret word, with a quoted value.
    # (Anchored at a word start: unanchored, `[\w-]*` rescans a long word from every position.)
    (
        "json_secret",
        re.compile(
            r"(?i)(?<![\w-])[\"']?[\w-]*(?:password|passwd|secret|api_?key|access_?token|auth_?token|refresh_?token|"
            r"client_secret|private_?key|token)[\"']?"
            r"\s*:\s*[\"']((?!\$\{)[^\"'\s]{4,})[\"']"
        ),
        1,
        _SECRET_WORDS,
    ),
    # Code and config assignments with a quoted value, any case: db_password = "…", token := '…'.
    (
        "assigned_secret",
        re.compile(
            rf"(?i)(?<![\w.-])[\w.-]*{_SECRET_NAME}[ \t]*(?::=|=)[ \t]*([\"'])((?!\$)(?:(?!\1)[^\n\\]){{3,}})\1"
        ),
        2,
        _SECRET_WORDS,
    ),
    # INI/conf lines with a bare value (`password=hunter2` in .my.cnf): the value must be the whole
    # rest of the line, at least 6 chars, and not look like code (an identifier, a call, a number).
    (
        "assigned_secret",
        re.compile(
            rf"(?im)(?:^|(?<=\\n))[ \t]*[\w.-]*{_SECRET_NAME}[ \t]*=[ \t]*(?!{_NOT_A_VALUE})"
            r"((?![$\"'\[{(])(?=[^\s]*[^A-Za-z_.\s])(?!\d+\b)[^\s#;\"'\\()\[\]{}]{6,})[ \t]*(?:[#;][^\n]*)?(?=$|\\n)"
        ),
        1,
        _SECRET_WORDS,
    ),
    # The same anywhere in a line (a model's summary or a flattened quote joins lines): then the
    # value must mix letters and digits, which prose after "token:" does not.
    (
        "assigned_secret",
        re.compile(
            rf"(?i)(?<![\w.-])[\w.-]*{_SECRET_NAME}[\"']?[ \t]*[:=][ \t]*(?!{_NOT_A_VALUE})"
            rf"((?![$])(?={_INLINE_VALUE}*\d)(?={_INLINE_VALUE}*[A-Za-z]){_INLINE_VALUE}{{8,}})"
        ),
        1,
        _SECRET_WORDS,
    ),
    # YAML with a bare value: `token: value` (a value that runs to the end of its line).
    (
        "yaml_secret",
        re.compile(
            rf"(?im)(?:^|(?<=\\n))[ \t]*(?:-[ \t]+)?[\w.-]*{_SECRET_NAME}[ \t]*:[ \t]+(?!{_NOT_A_VALUE})"
            r"((?![$\[{!&*|>\"'])[^\s#\\\"']{4,})[ \t]*(?:#[^\n]*)?(?=$|\\n|\\r|\")"
        ),
        1,
        _SECRET_WORDS,
    ),
]

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
# The same address in other scripts or widths: a fullwidth or small at sign (＠ U+FF20, ﹫ U+FE6B),
# fullwidth or ideographic dots (．。｡), fullwidth letters, an internationalised domain. A person
# and a model read each as an address; the ASCII pattern above sees none of them. Only tried on
# text that is not plain ASCII (every such address holds a non-ASCII character).
_WIDE_ATS = "＠﹫"
_EMAIL_WIDE = re.compile(r"(?<![\w.+\-．])[\w.%+\-．]+[@＠﹫][\w\-]+(?:[.．。｡][\w\-]+)*[.．。｡][^\W\d_]{2,}(?![\w-])")
# International (+CC …) or North-American (3-3-4 with separators) numbers; bare digit runs are
# never phones (they are ids, ports, timestamps).
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}"
    r"|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4})(?![\w-])"
)
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
    # user@host:path is an scp/ssh remote (git@github.com:org/repo.git), and scheme://user@host
    # the user part of a URL: neither is a person's address.
    return not (match.string.startswith(":", match.end()) or match.string.endswith("://", 0, match.start()))


def _phone(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 10 <= len(digits) <= 15


def _protected_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _DATA_URL.finditer(text)]


def _sub(
    text: str,
    kind: str,
    pattern: re.Pattern[str],
    group: int,
    counts: Counter[str],
    accept: Callable[[re.Match[str]], bool] | None = None,
) -> str:
    protected: list[tuple[int, int]] | None = None  # found at the first match: most patterns have none
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        start, end = m.span(group)
        if protected is None:
            protected = _protected_spans(text)
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


# Short texts are redacted once and remembered (a pure function of text and policy): summary
# items are redacted again each time nodes fold, placeholders at every compaction event, and the
# ~40 patterns were most of an event's time. 8,192: with 2,048, a third of the texts an event
# redacted afresh had been redacted before in the session (coding replay, turns 401-560), with
# 8,192 one in 340. Bounded: COUNT × MAX_CHARS (~16 M characters at worst, ~1 MB in practice).
REDACT_CACHE_MAX_CHARS = 2_000
REDACT_CACHE_SIZE = 8_192


def redact(text: str, policy: RedactionPolicy = DEFAULT_POLICY) -> RedactionResult:
    """Replace secrets (and PII the policy asks for) by typed placeholders."""
    if not text:
        return RedactionResult(text or "", {})
    if len(text) <= REDACT_CACHE_MAX_CHARS:
        out, counts = _redact_short(text, policy)
        return RedactionResult(out, dict(counts))
    return _redact(text, policy)


@lru_cache(maxsize=REDACT_CACHE_SIZE)
def _redact_short(text: str, policy: RedactionPolicy) -> tuple[str, tuple[tuple[str, int], ...]]:
    result = _redact(text, policy)
    return result.text, tuple(result.counts.items())


def _redact(text: str, policy: RedactionPolicy) -> RedactionResult:
    counts: Counter[str] = Counter()
    if policy.credentials:
        folded = text.casefold()  # of the current text: a placeholder put in holds words too
        for kind, pattern, group, needles in _CREDENTIALS:
            if needles and not any(word in folded for word in needles):
                continue
            changed = _sub(text, kind, pattern, group, counts)
            if changed is not text:
                text, folded = changed, changed.casefold()
    if policy.emails:
        if "@" in text:  # every ASCII address holds one
            text = _sub(text, "email", _EMAIL, 0, counts, _email)
        if not text.isascii() and ("@" in text or any(at in text for at in _WIDE_ATS)):
            text = _sub(text, "email", _EMAIL_WIDE, 0, counts, _email)
    if policy.credit_cards:
        text = _sub(text, "credit_card", _CARD, 0, counts, _card)
    if policy.phones:
        text = _sub(text, "phone", _PHONE, 0, counts, _phone)
    return RedactionResult(text, dict(counts))


def _json_container(text: str) -> Any:
    """The object or list a string holds as JSON, else None."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "{[":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def redact_obj(value: Any, policy: RedactionPolicy = DEFAULT_POLICY) -> RedactedObject:
    """Redact every string inside a JSON-like value (dict keys are kept, values scanned)."""
    counts: Counter[str] = Counter()

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            # JSON inside a string (tool-call arguments) is redacted as the values it holds:
            # escaped quotes and newlines would hide `"password": "…"` or a YAML line.
            nested = _json_container(v)
            if nested is not None:
                inner = walk(nested)
                if inner != nested:
                    v = json.dumps(inner, ensure_ascii=False)
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
