"""Redaction corpus: generated real-format secrets must be caught, near-misses must survive."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

import pytest

from myrm_tui.context.summary.schema import FileChange, StructuredSummary
from myrm_tui.redact import (
    CREDENTIALS_ONLY,
    RedactionPolicy,
    luhn_ok,
    redact,
    redact_obj,
    redact_summary,
)

RNG = random.Random(20260101)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": rand(string.digits, 8), "name": "Ada"}).encode())
    return f"{header}.{payload}.{b64url(RNG.randbytes(32))}"


def luhn_card(prefix: str, length: int) -> str:
    body = prefix + rand(string.digits, length - len(prefix) - 1)
    for check in string.digits:
        if luhn_ok(body + check):
            return body + check
    raise AssertionError("unreachable")


def pem() -> str:
    lines = "\n".join(base64.b64encode(RNG.randbytes(48)).decode() for _ in range(6))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{lines}\n-----END RSA PRIVATE KEY-----"


# (kind expected, text containing the secret, the secret itself)
def corpus() -> list[tuple[str, str, str]]:
    items: list[tuple[str, str, str]] = []
    for _ in range(5):
        k = "sk-" + rand(ALNUM, 48)
        items.append(("openai_key", f"export OPENAI_KEY_USED={k[:0]}then the key {k} was used", k))
        k = "sk-proj-" + rand(ALNUM + "_-", 64)
        items.append(("openai_key", f"client = OpenAI(api_key='{k}')", k))
        k = "sk-ant-api03-" + rand(ALNUM + "_-", 80)
        items.append(("anthropic_key", f"ANTHROPIC key is {k}.", k))
        k = "AKIA" + rand(UPPER_DIGITS, 16)
        items.append(("aws_access_key", f"aws_access_key_id = {k}", k))
        k = rand(ALNUM + "/+", 40)
        items.append(("aws_secret_key", f"aws_secret_access_key = {k}", k))
        k = "ghp_" + rand(ALNUM, 36)
        items.append(("github_token", f"git clone https://x-access-token:{k[:0]}@host; token {k}", k))
        k = "github_pat_" + rand(ALNUM + "_", 82)
        items.append(("github_token", f"GH={k[:0]} uses {k}", k))
        k = "xoxb-" + rand(string.digits, 12) + "-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24)
        items.append(("slack_token", f"slack bot {k} posted", k))
        k = jwt()
        items.append(("jwt", f"cookie session={k}; path=/", k))
        k = rand(ALNUM + "-._~", 40)
        items.append(("bearer_token", f"curl -H 'Authorization: Bearer {k}' https://api.example.com", k))
        k = rand(ALNUM, 14)
        items.append(("url_password", f"DATABASE at postgres://admin:{k}@db.internal:5432/app", k))
        k = rand(ALNUM, 20)
        items.append(("env_secret", f"# .env\nDB_PASSWORD={k}\nDEBUG=1", k))
        k = rand(ALNUM, 24)
        items.append(("env_secret", f"STRIPE_WEBHOOK_SECRET: {k}", k))
        k = rand(ALNUM, 32)
        items.append(("env_secret", f'export MY_SERVICE_API_KEY="{k}"', k))
        k = rand(ALNUM, 12)
        items.append(("json_secret", json.dumps({"user": "ada", "password": k}), k))
        k = "AIza" + rand(ALNUM + "_-", 35)
        items.append(("google_api_key", f"maps key {k}", k))
        k = "hf_" + rand(ALNUM, 34)
        items.append(("huggingface_token", f"HF token {k}", k))
    key = pem()
    items.append(("private_key", f"id_rsa contents:\n{key}\nend", key))
    return items


CORPUS = corpus()


@pytest.mark.parametrize("kind,text,secret", CORPUS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CORPUS)])
def test_generated_secrets_are_caught(kind, text, secret):
    result = redact(text)
    assert secret not in result.text
    assert f"[REDACTED:{kind}]" in result.text
    assert result.counts.get(kind, 0) >= 1


def test_context_around_a_secret_is_kept():
    key = "AKIA" + rand(UPPER_DIGITS, 16)
    result = redact(f"Configured profile prod with {key} in ~/.aws/credentials")
    assert result.text == "Configured profile prod with [REDACTED:aws_access_key] in ~/.aws/credentials"
    url = redact("postgres://admin:hunter2hunter2@db:5432/app")
    assert url.text == "postgres://admin:[REDACTED:url_password]@db:5432/app"
    bearer = redact("Authorization: Bearer " + rand(ALNUM, 30))
    assert bearer.text == "Authorization: Bearer [REDACTED:bearer_token]"


def near_misses() -> list[str]:
    png = base64.b64encode(RNG.randbytes(600) + b"AKIAIOSFODNN7EXAMPLEsk-" + rand(ALNUM, 40).encode()).decode()
    return [
        "commit 3f9c2ab1e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9 fixed it",
        hashlib.sha256(b"x").hexdigest(),
        f"run {uuid.UUID(int=RNG.getrandbits(128))} finished",
        "src/auth/password_policy.py and tests/test_password_policy.py",
        "MAX_TOKENS=4096 and TOKEN_LIMIT=8000 in config",
        "PASSWORD=${DB_PASSWORD} and API_KEY=$API_KEY",
        'api_key = os.environ["API_KEY"]',
        "SECRET_KEY = get_secret_key()",
        "version 1.2.3, python 3.11.4, node v20.10.0",
        "pip install scikit-learn; import sk-learn alias",
        "card 4111 1111 1111 1112 fails the check",  # Luhn-invalid
        "epoch ms 1767225600123 and id 4000000000000000000001",
        "listening on 127.0.0.1:8080, pid 123456",
        "git@github.com:org/repo.git remote",
        "the token count is 1234 and bearer tokens are discussed",
        f"![img](data:image/png;base64,{png})",
        # An image payload whose bytes happen to spell a key shape stays an image (the data-URL
        # span is protected; a random payload rarely tests that).
        "![img](data:image/png;base64,AKIAIOSFODNN7EXAMPLE)",
        "date 2026-01-01 10:30:45 line 1234567",
        '{"token_count": 12, "password_policy": "strict"}',
    ]


@pytest.mark.parametrize("text", near_misses())
def test_near_misses_survive(text):
    result = redact(text)
    assert result.text == text, result.counts
    assert result.counts == {}


def test_pii_by_policy():
    card = luhn_card("4", 16)
    spaced = " ".join(card[i : i + 4] for i in range(0, 16, 4))
    amex = luhn_card("37", 15)
    text = f"Mail ada.lovelace@example.org or call +44 20 7946 0958 / (555) 123-4567; card {spaced}, amex {amex}."
    result = redact(text)
    assert "ada.lovelace@example.org" not in result.text and "[REDACTED:email]" in result.text
    assert result.counts == {"email": 1, "phone": 2, "credit_card": 2}
    assert card[-4:] not in result.text and amex not in result.text
    kept = redact(text, CREDENTIALS_ONLY)
    assert kept.text == text
    no_email = redact(text, RedactionPolicy(emails=False))
    assert "ada.lovelace@example.org" in no_email.text and "[REDACTED:phone]" in no_email.text


@pytest.mark.parametrize(
    "address",
    [
        "alice＠example.com",  # fullwidth at sign
        "alice﹫example.com",  # small at sign
        "ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ",  # all fullwidth
        "résumé@mail.example.com",  # a non-ASCII local part
        "bob@例え.jp",  # an internationalised domain
        "山田@会社。日本",  # ideographic dot
    ],
)
def test_an_address_in_other_widths_and_scripts_is_redacted(address):
    """A person and a model read each as an e-mail address; the ASCII pattern saw none of them."""
    result = redact(f"write to {address} today")
    assert result.text == "write to [REDACTED:email] today" and result.counts == {"email": 1}
    assert redact(f"write to {address} today", RedactionPolicy(emails=False)).text == f"write to {address} today"


@pytest.mark.parametrize(
    "text", ["git＠github.com:org/repo.git", "ssh://git＠host.example.com/x", "café @ noon", "naïve ＠ mention"]
)
def test_wide_at_signs_that_are_not_addresses_survive(text):
    assert redact(text).text == text


def test_redact_obj_walks_json_and_keeps_keys():
    key = "ghp_" + rand(ALNUM, 36)
    obj = {"notes": ["use " + key, {"mail": "bob@example.com", "n": 3}], "token_count": 7, "ok": True}
    result = redact_obj(obj)
    assert result.value == {
        "notes": ["use [REDACTED:github_token]", {"mail": "[REDACTED:email]", "n": 3}],
        "token_count": 7,
        "ok": True,
    }
    assert result.counts == {"github_token": 1, "email": 1}


def test_redact_summary_scrubs_every_field_and_keeps_paths():
    key = "sk-" + rand(ALNUM, 40)
    summary = StructuredSummary(
        user_goal=f"rotate {key}",
        active_task="t",
        files_modified=[FileChange("config/password_policy.py", f"key {key} removed")],
        next_steps=["mail ops@example.com"],
    )
    redacted, counts = redact_summary(summary)
    assert key not in redacted.to_json()
    assert redacted.files_modified[0].path == "config/password_policy.py"
    assert counts == {"openai_key": 2, "email": 1}


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "postgres://app:p@ss:w@rd@db.internal:5432/app",
            "postgres://app:[REDACTED:url_password]@db.internal:5432/app",
        ),
        ("redis://:s3cretpass@cache:6379/0", "redis://:[REDACTED:url_password]@cache:6379/0"),
        (
            "http://127.0.0.1:8080/v1?api_key=abcdef0123456789&x=1",
            "http://127.0.0.1:8080/v1?api_key=[REDACTED:url_query_secret]&x=1",
        ),
        ('db_password = "Hunter2!x"', 'db_password = "[REDACTED:assigned_secret]"'),
        ("mysql -uroot -pS3cr3tPw -h db app", "mysql -uroot -p[REDACTED:cli_password] -h db app"),
        ("mysqldump -p'my pass' shop", "mysqldump -p[REDACTED:cli_password] shop"),
        ("github:\n  token: abcdefghijklmnop\n", "github:\n  token: [REDACTED:yaml_secret]\n"),
        (
            "https://hooks.slack.com/services/T0123ABCD/B0123ABCDE/abcdefghijklmnopqrstuvwx",
            "https://hooks.slack.com/services/[REDACTED:slack_webhook]",
        ),
        (
            "AccountName=acme;AccountKey=" + "A" * 86 + "==;EndpointSuffix=core.windows.net",
            "AccountName=acme;AccountKey=[REDACTED:azure_key];EndpointSuffix=core.windows.net",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 64 + "\n" + "B" * 64 + "\nend of paste",
            "[REDACTED:private_key]\nend of paste",
        ),
    ],
)
def test_issue_formats_are_replaced_and_their_context_kept(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p app",  # -p alone prompts for the password
        "docker login --password-stdin ghcr.io",
        "token = self.tokens[0]",
        'if password == "":',
        "password: null",
        "https://ada@git.example.com/acme/app.git",  # a URL's user is not an email address
        "-----BEGIN CERTIFICATE-----",
    ],
)
def test_issue_format_near_misses_survive(text):
    assert redact(text).text == text


def test_a_key_beside_an_image_payload_is_still_redacted() -> None:
    """The protected span covers the payload only: a secret after it in the same text goes."""
    result = redact("![img](data:image/png;base64,iVBORw0KGgo=) and the key AKIAIOSFODNN7EXAMPLE")
    assert result.text == "![img](data:image/png;base64,iVBORw0KGgo=) and the key [REDACTED:aws_access_key]"
