"""The secret corpus of the redaction-sink suite: real-format secrets, each inside the text it
usually comes in, plus near-misses that must survive every sink.

Formats are generated the way their issuers make them (provider prefixes and lengths, JWTs
from real JSON, private keys from `openssl` and `ssh-keygen`), never typed in by hand, so a
redactor tuned to the corpus would also be tuned to the real thing. The issue's own list is
here: a URL password containing '@', lowercase `db_password = "…"`, `mysql -p<password>`, PEM
keys without their END line and without markers, Slack webhooks, Azure `AccountKey=`, YAML
`token: value`, and `?api_key=` in an endpoint URL.

Leak check: no 10-character window of the secret (whitespace and escaped newlines removed)
appears in what left through a sink, so a partly redacted secret (a clipped key, a key body
whose markers were removed) counts as a leak.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path

RNG = random.Random(20260112)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
WINDOW = 10  # chars of a secret that count as a leak when seen anywhere in a sink's output


@dataclass(frozen=True)
class Secret:
    name: str  # the format, for test ids and the closing figures
    text: str  # the secret in its usual surroundings
    secret: str  # the part that must not leave

    def fragments(self) -> list[str]:
        flat = re.sub(r"\s+|\\n", "", self.secret)
        if len(flat) <= WINDOW:
            return [flat]
        return [flat[i : i + WINDOW] for i in range(0, len(flat) - WINDOW + 1, WINDOW // 2)]

    def leaks_in(self, output: str) -> list[str]:
        flat = re.sub(r"\s+|\\n", "", output)
        return [f for f in self.fragments() if f in flat]


@dataclass(frozen=True)
class NearMiss:
    name: str
    text: str
    keep: str  # the part that must come out verbatim


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt() -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": rand(string.digits, 8), "name": "Ada", "iat": 1767225600}).encode())
    return f"{header}.{payload}.{_b64url(RNG.randbytes(32))}"


@cache
def private_keys() -> dict[str, str]:
    """Real private keys in their usual files (PEM), made by the tools people use."""
    keys: dict[str, str] = {}
    commands = {
        "rsa_pkcs1": ["openssl", "genrsa", "-traditional", "2048"],
        "rsa_pkcs8": ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        "ec_sec1": ["openssl", "ecparam", "-genkey", "-name", "prime256v1", "-noout"],
        "ed25519_pkcs8": ["openssl", "genpkey", "-algorithm", "ed25519"],
        "rsa_encrypted_pkcs8": [
            "openssl",
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-aes-128-cbc",
            "-pass",
            "pass:test",
        ],
    }
    for name, command in commands.items():
        keys[name] = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    with tempfile.TemporaryDirectory() as folder:
        for kind in ("ed25519", "rsa"):
            path = Path(folder) / f"id_{kind}"
            subprocess.run(
                ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "", "-f", str(path)],
                check=True,
                capture_output=True,
                timeout=60,
            )
            keys[f"openssh_{kind}"] = path.read_text().strip()
    return keys


def _body(pem: str) -> str:
    """The base64 lines of a PEM block, without its BEGIN/END markers (and headers)."""
    return "\n".join(
        line for line in pem.splitlines() if not line.startswith("-----") and ":" not in line and line.strip()
    )


def corpus() -> list[Secret]:
    s: list[Secret] = []

    def add(name: str, text: str, secret: str) -> None:
        assert secret in text, name
        s.append(Secret(name, text, secret))

    k = "sk-" + rand(ALNUM, 48)
    add("openai_key", f"then the key {k} was used", k)
    k = "sk-proj-" + rand(ALNUM + "_-", 64)
    add("openai_project_key", f"client = OpenAI(api_key='{k}')", k)
    k = "sk-ant-api03-" + rand(ALNUM + "_-", 80)
    add("anthropic_key", f"ANTHROPIC key is {k}.", k)
    k = "AKIA" + rand(UPPER_DIGITS, 16)
    add("aws_access_key", f"aws_access_key_id = {k}", k)
    k = rand(ALNUM + "/+", 40)
    add("aws_secret_key", f"aws_secret_access_key = {k}", k)
    k = "ghp_" + rand(ALNUM, 36)
    add("github_token", f"token {k} for the CI", k)
    k = "github_pat_" + rand(ALNUM + "_", 82)
    add("github_fine_grained", f"GH uses {k}", k)
    k = "glpat-" + rand(ALNUM + "_-", 20)
    add("gitlab_token", f"gitlab {k}", k)
    k = "xoxb-" + rand(string.digits, 12) + "-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24)
    add("slack_bot_token", f"slack bot {k} posted", k)
    k = "sk_live_" + rand(ALNUM, 24)
    add("stripe_key", f"stripe {k}", k)
    k = "AIza" + rand(ALNUM + "_-", 35)
    add("google_api_key", f"maps key {k}", k)
    k = "hf_" + rand(ALNUM, 34)
    add("huggingface_token", f"HF token {k}", k)
    k = "npm_" + rand(ALNUM, 36)
    add("npm_token", f"//registry.npmjs.org/:_authToken={k}", k)
    k = _jwt()
    add("jwt", f"cookie session={k}; path=/", k)
    k = rand(ALNUM + "-._~", 40)
    add("bearer_header", f"curl -H 'Authorization: Bearer {k}' https://api.example.com", k)
    k = base64.b64encode(f"admin:{rand(ALNUM, 16)}".encode()).decode()
    add("basic_auth_header", f"Authorization: Basic {k}", k)
    k = rand(ALNUM, 14)
    add("url_password", f"DATABASE at postgres://admin:{k}@db.internal:5432/app", k)
    k = rand(ALNUM, 6) + "@" + rand(ALNUM, 6) + ":" + rand(ALNUM, 4)
    add("url_password_with_at", f"connect to postgres://app:{k}@db.internal:5432/app now", k)
    k = rand(ALNUM, 18)
    add("url_password_no_user", f"REDIS_URL=redis://:{k}@cache:6379/0", k)
    k = rand(ALNUM, 32)
    add("url_query_api_key", f"api_base = http://127.0.0.1:8080/v1?api_key={k}", k)
    k = rand(ALNUM + "%", 44)
    add("azure_sas_sig", f"https://acct.blob.core.windows.net/c/b?sv=2024-01-01&sr=b&sig={k}", k)
    k = rand(ALNUM, 20)
    add("env_password", f"# .env\nDB_PASSWORD={k}\nDEBUG=1", k)
    k = rand(ALNUM, 24)
    add("env_webhook_secret", f"STRIPE_WEBHOOK_SECRET: {k}", k)
    k = rand(ALNUM, 32)
    add("env_api_key_export", f'export MY_SERVICE_API_KEY="{k}"', k)
    k = rand(ALNUM, 12)
    add("json_password", json.dumps({"user": "ada", "password": k}), k)
    k = rand(ALNUM + "!#%", 16)
    add("lowercase_db_password", f'db_password = "{k}"', k)
    k = rand(ALNUM, 16)
    add("python_kwarg_password", f"psycopg.connect(host='db', password='{k}')", k)
    k = rand(ALNUM, 20)
    add("toml_token", f'[service]\napi_token = "{k}"', k)
    k = rand(ALNUM, 14)
    add("ini_password", f"[client]\nuser=root\npassword={k}9", k + "9")
    k = rand(ALNUM, 12)
    add("mysql_p", f"mysql -uroot -p{k} -h db app < dump.sql", k)
    k = rand(ALNUM, 12)
    add("mysqldump_p_quoted", f"mysqldump -u admin -p'{k}' shop > shop.sql", k)
    k = rand(ALNUM, 16)
    add("cli_password_flag", f"docker login --username ci --password={k} registry.example.com", k)
    k = rand(ALNUM, 14)
    add("curl_user", f"curl -u deploy:{k} https://ci.example.com/api", k)
    k = rand(ALNUM, 24)
    add("yaml_token", f"github:\n  token: {k}\n  org: acme", k)
    k = rand(ALNUM, 18)
    add("yaml_password_list", f"users:\n  - name: ada\n    password: {k}", k)
    k = rand(ALNUM, 22)
    add("yaml_quoted_token", f'auth:\n  token: "{k}"', k)
    k = f"T{rand(UPPER_DIGITS, 8)}/B{rand(UPPER_DIGITS, 10)}/{rand(ALNUM, 24)}"
    add("slack_webhook", f"curl -X POST https://hooks.slack.com/services/{k} -d '{{}}'", k)
    k = f"{rand(string.digits, 18)}/{rand(ALNUM + '_-', 68)}"
    add("discord_webhook", f"webhook https://discord.com/api/webhooks/{k}", k)
    k = base64.b64encode(RNG.randbytes(64)).decode()
    add(
        "azure_account_key",
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={k};EndpointSuffix=core.windows.net",
        k,
    )
    k = base64.b64encode(RNG.randbytes(32)).decode()
    add(
        "azure_shared_access_key",
        f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={k}",
        k,
    )
    for name, pem in private_keys().items():
        add(f"pem_{name}", f"id_key contents:\n{pem}\nend of file", _body(pem))
        lines = pem.splitlines()
        truncated = "\n".join(lines[:-1])  # pasted without its END line
        add(f"pem_{name}_no_end", f"the key is\n{truncated}\nand that's all", _body(pem))
        if "ENCRYPTED" in lines[0] and "Proc-Type" not in pem:
            continue  # an encrypted PKCS#8 body is caught through its BEGIN line only
        body = _body(pem)
        add(f"pem_{name}_no_markers", f"PRIVATE_BLOB follows:\n{body}\n(end)", body)
        one_line = body.replace("\n", "")
        add(f"pem_{name}_one_line", f'{{"key_material": "{one_line}"}}', one_line)
    gcp = private_keys()["rsa_pkcs8"].replace("\n", "\\n") + "\\n"
    add(
        "gcp_service_account",
        json.dumps({"type": "service_account", "project_id": "acme"})[:-1] + f', "private_key": "{gcp}"}}',
        _body(private_keys()["rsa_pkcs8"]).replace("\n", "\\n"),
    )
    return s


def near_misses() -> list[NearMiss]:
    """Things a coding agent needs verbatim that look a bit like secrets."""
    sha = hashlib.sha1(b"x").hexdigest()
    sha256 = hashlib.sha256(b"x").hexdigest()
    u = str(uuid.UUID(int=RNG.getrandbits(128)))
    md5 = hashlib.md5(b"x", usedforsecurity=False).hexdigest()
    return [
        NearMiss("git_sha", f"commit {sha} fixed it", sha),
        NearMiss("sha256", f"sha256 {sha256}", sha256),
        NearMiss("md5", f"md5sum {md5}", md5),
        NearMiss("uuid", f"run {u} finished", u),
        NearMiss(
            "path",
            "src/auth/password_policy.py and tests/test_token_refresh.py",
            "src/auth/password_policy.py and tests/test_token_refresh.py",
        ),
        NearMiss("env_limits", "MAX_TOKENS=4096 TOKEN_LIMIT=8000", "MAX_TOKENS=4096 TOKEN_LIMIT=8000"),
        NearMiss(
            "env_reference", "PASSWORD=${DB_PASSWORD} API_KEY=$API_KEY", "PASSWORD=${DB_PASSWORD} API_KEY=$API_KEY"
        ),
        NearMiss("code_lookup", 'api_key = os.environ["API_KEY"]', 'api_key = os.environ["API_KEY"]'),
        NearMiss("code_call", "secret_key = get_secret_key()", "secret_key = get_secret_key()"),
        NearMiss("code_compare", 'if password == "":', 'if password == "":'),
        NearMiss("code_attribute", "token = self.tokens[0]", "token = self.tokens[0]"),
        NearMiss("yaml_count", "token_count: 1234", "token_count: 1234"),
        NearMiss("yaml_null", "password: null", "password: null"),
        NearMiss(
            "json_policy",
            '{"password_policy": "strict", "token_count": 12}',
            '{"password_policy": "strict", "token_count": 12}',
        ),
        NearMiss("password_stdin", "docker login --password-stdin ghcr.io", "docker login --password-stdin ghcr.io"),
        NearMiss("mysql_prompt", "mysql -u root -p app", "mysql -u root -p app"),
        NearMiss("mysql_port", "mysql -h db -P 3306 app", "mysql -h db -P 3306 app"),
        NearMiss(
            "url_no_password", "https://ada@git.example.com/acme/app.git", "https://ada@git.example.com/acme/app.git"
        ),
        NearMiss("url_port", "http://localhost:5432/db?sslmode=disable", "http://localhost:5432/db?sslmode=disable"),
        NearMiss("scp_remote", "git@github.com:org/repo.git", "git@github.com:org/repo.git"),
        NearMiss(
            "url_paging",
            "https://api.example.com/items?page=2&sort=desc",
            "https://api.example.com/items?page=2&sort=desc",
        ),
        NearMiss(
            "slack_docs", "see https://api.slack.com/messaging/webhooks", "https://api.slack.com/messaging/webhooks"
        ),
        NearMiss("azure_name", "AccountName=devstoreaccount1;", "AccountName=devstoreaccount1;"),
        NearMiss("versions", "python 3.11.4, node v20.10.0", "python 3.11.4, node v20.10.0"),
        NearMiss("listen", "listening on 127.0.0.1:8080 pid 123456", "127.0.0.1:8080 pid 123456"),
    ]


@cache
def public_key_material() -> list[NearMiss]:
    """Public halves and certificates: shared on purpose, must never be redacted."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "id"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ada@laptop", "-f", str(path)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        ssh_pub = path.with_suffix(".pub").read_text().split()[1]
        cert = subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ed25519",
                "-nodes",
                "-keyout",
                str(path) + ".k",
                "-subj",
                "/CN=test",
                "-days",
                "1",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        pub = subprocess.run(
            ["openssl", "pkey", "-pubout", "-in", str(path) + ".k"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    cert_line = cert.splitlines()[1]
    pub_line = pub.splitlines()[1]
    return [
        NearMiss("ssh_public_key", f"ssh-ed25519 {ssh_pub}", ssh_pub),
        NearMiss("certificate", cert.strip().splitlines()[0] + "\n" + cert_line, cert_line),
        NearMiss("public_key_pem", "-----BEGIN PUBLIC KEY-----\n" + pub_line, pub_line),
    ]
