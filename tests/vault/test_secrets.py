"""Credentials are found (and only credentials), named without being echoed, refused or redacted."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from mcp_server.config import default_config_text
from vault import Change, SecretError, Vault, init_vault
from vault.secrets import mask, redact, scan

# Built from parts so that this file itself does not look like it leaks keys.
GITHUB = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
OPENAI = "sk-" + "proj-Abc123Def456Ghi789Jkl012Mno345Pqr"
ANTHROPIC = "sk-ant-" + "api03-Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-d4C"
AWS = "AKIA" + "QWERTYUI0PASDF12"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkRhbmEifQ"
       + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
       + "QyNTUxOQAAACBhc2RmYXNkZmFzZGZhc2RmYXNkZmFzZGZhc2RmYXNkZgAAAJg=\n-----END OPENSSH PRIVATE KEY-----")

SECRETS = [
    ("aws-access-key", f"aws_access_key_id = {AWS}"),
    ("github-token", f"export GITHUB_TOKEN={GITHUB}"),
    ("github-token", "github_pat_" + "11ABCDEFG0abcdefghijkl_" + "mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZab"),
    ("openai-key", f"OPENAI_API_KEY={OPENAI}"),
    ("anthropic-key", f"the key is {ANTHROPIC}"),
    ("slack-token", "xoxb-" + "2048-40961-aBcDeFgHiJkLmNoP"),
    ("slack-webhook", "https://hooks.slack.com/services/" + "T0123ABCD/B0456EFGH/aB1cD2eF3gH4iJ5kL6mN7oP8"),
    ("stripe-key", "stripe: sk_live_" + "51HxQ2mKz8vR4tY7uW9pL3nB"),
    ("google-api-key", "maps key AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("jwt", f"session cookie {JWT}"),
    ("jwt", f"Authorization: Bearer {JWT}"),
    ("bearer-token", "curl -H 'Authorization: Bearer " + "9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c'"),
    ("basic-auth", "Authorization: Basic " + "ZGFuYTpodW50ZXIy"),
    ("private-key", PEM),
    ("private-key", '{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + '\\n"}'),
    ("connection-password", "DATABASE_URL=postgres://ledger:pass@db.internal:5432/ledger"),
    ("connection-password", "mongodb+srv://app:" + "Tr0ub4dor3@cluster0.example.net/app"),
    ("secret-assignment", 'api_key = "' + 'Zx8kQ2mN7vL4pR9sT1wY6bC3"'),
    ("secret-assignment", "client_secret: " + "d41d8cd98f00b204e9800998ecf8427e"),
    ("secret-assignment", '"password": "' + 'Tr0ub4dor&3xyzQ9Wv"'),
    ("gitlab-token", "the GitLab one: glpat-" + "xY9zA8bC7dE6fG5hI4jK"),
    ("huggingface-token", "HF_TOKEN is hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12345678"),
    ("sendgrid-key", "SG." + "ngeVfQFYQlKU0ufo8x5d1A." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"),
    ("digitalocean-token", "doctl auth init -t dop_v1_" + "3f9a" * 16),
    ("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + "Zm9vYmFyYmF6cXV4" * 5 + "ab==;"),
    ("npm-token", "publish with npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("pypi-token", "twine upload -p pypi-AgEIcHlwaS5vcmc" + "CJDk3ZjQ4YzJkLTk2YmUtNDk3NS1iMjRmLTk4ZWI3MGM5ZDE0YQ"),
    ("shopify-token", "shpat_" + "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"),
    ("linear-key", "lin_api_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3A"),
    ("postman-key", "PMAK-" + "5f3a9b2c8d1e4f7a6b0c9d2e" + "-" + "3f9a" * 8 + "b2"),
    ("connection-password", "REDIS_URL=redis://:" + "pA55w0rdXyZ123@cache:6379/0"),  # no user name, as Redis has it
    ("password-assignment", "export PGPASSWORD=" + "Zq8rT2vLx9Pw"),
    ("password-assignment", "the staging db password: " + "hunter22!x"),
    ("cli-password", "curl -u deploy:" + "Zq8rT2vLx9Pw https://api.example.com/v1/deploy"),
    ("password-assignment", "PGPASSWORD=" + "aes256Tide9"),  # begins like a cipher's name, and is not one
    ("telegram-bot-token", "bot 123456789:AA" + "Hk3jLm9Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk"),
    # Session 19: a token a terminal wrapped, and tokens written in base64 (plain, URL-safe, wrapped by `base64`).
    ("github-token", f"export GITHUB_TOKEN={GITHUB[:17]}\n{GITHUB[17:]}\nthen push"),
    ("aws-access-key", f"key id {AWS[:9]}\r\n{AWS[9:]} in the log"),
    ("github-token", "echo " + base64.b64encode(f"{GITHUB}\n".encode()).decode() + " | base64 -d > ~/.token"),
    ("openai-key", "OPENAI=" + base64.urlsafe_b64encode(f"key={OPENAI}".encode()).decode().rstrip("=")),
    ("github-token", "data:\n  token: " + base64.encodebytes(f"github_pat_11ABCDEFG0{'x1Y2z3' * 14}".encode()).decode()),
    # Session 20: the continuation line indented (a log's wrap, a YAML block).
    ("github-token", f"token: {GITHUB[:17]}\n    {GITHUB[17:]}\nthen push"),
    ("openai-key", f"  key={OPENAI[:12]}\r\n\t{OPENAI[12:]}"),
]

HARMLESS = [
    "AKIAIOSFODNN7EXAMPLE with wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, the pair in the AWS docs",
    "rotated in commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "model id hf_internal_testing and the hf_hub_offline flag",
    "SG.1 is the first security group",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the flaky ledger test",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "see [id:m-1234abcd] and [[m-4f8ddbe5]]",
    "docs at https://docs.example.com/api/v2/auth?lang=en#tokens",
    "git@github.com:dana/tidewater.git and https://dana@github.com/dana/tidewater",
    "set OPENAI_API_KEY=sk-... before running",
    "export GITHUB_TOKEN=<your-token>",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "api_key = os.environ['STRIPE_API_KEY']",
    "password = get_password_from_keyring()",
    "the example key AKIAIOSFODNN7EXAMPLE from the AWS docs",
    "postgres://ledger:${DB_PASSWORD}@db.internal/ledger",
    "postgres://ledger@localhost/ledger",
    "max_tokens: 4096 and token_budget = 120000",
    "Authorization: Bearer <token>",
    "sk-navigation-header is a CSS class",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "The file starts with -----BEGIN RSA PRIVATE KEY----- and that is all we say.",
    "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "password: str and PASSWORD=$PGPASS and password=None",
    "password: password_v2 and PGPASSWORD=ledger_dev and min_password_length: 12",
    "password_hash = hash_v2(x) and pwd=/home/dana/src",
    "use `password: ${{ secrets.DB_PASSWORD }}`",
    "docker run -u 1000:1000 img and curl -u $USER:$TOKEN https://api.example.com",
    # Settings about passwords that hold none (review of session 18): refused by `add` as passwords.
    "Since Postgres 14 the default is password_encryption = scram-sha-256",
    "password_hashing: argon2id and password_cipher = aes-256-gcm and password_scheme = pbkdf2-sha512",
    'password_changed_at: 2024-01-15T10:00:00Z and "password_updated_at": "2024-03-01T08:30:00Z"',
    "password_lockout_window=15minutes",
    # Another command's -u on a curl line, and a uid:gid in prose that names curl.
    "curl -fsSL https://get.docker.com | sh && docker run -u node:node img",
    "fetch the script with curl, then run the image as docker run -u 1000:1000 app",
    "a GitHub token looks like ghp_\nfollowed by 36 letters and digits",
    "a GitHub token looks like ghp_\n    followed by 36 letters and digits",
    "echo " + base64.b64encode(b"the deploy key lives in the vault, not here").decode() + " | base64 -d",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
]


@pytest.mark.parametrize(("kind", "text"), SECRETS, ids=[f"{k}-{n}" for n, (k, _) in enumerate(SECRETS)])
def test_a_credential_is_found_and_named_by_kind(kind: str, text: str):
    findings = scan(text)
    assert [f.kind for f in findings] == [kind]


@pytest.mark.parametrize(("kind", "text"), SECRETS, ids=[f"{k}-{n}" for n, (k, _) in enumerate(SECRETS)])
def test_the_quick_pre_check_lets_through_whatever_any_rule_matches(kind: str, text: str):
    from vault import secrets

    for rule in secrets._RULES:
        for match in rule.pattern.finditer(text):
            assert secrets._worth_scanning(match.group(0)), (rule.kind, match.group(0))


@pytest.mark.parametrize("text", HARMLESS)
def test_ordinary_text_ids_hashes_urls_and_placeholders_pass(text: str):
    assert scan(text) == []


def test_a_finding_names_the_line_and_shows_only_a_masked_form():
    finding, = scan(f"first line\nsecond line\nkey: {OPENAI}\n")
    assert finding.line == 3 and finding.label == "OpenAI API key"
    assert finding.masked == "sk-pr…qr" and OPENAI not in finding.describe()
    assert mask("hunter2hunter") == "hu…" and mask("abc") == "…"


def test_redaction_replaces_only_the_secret_and_keeps_the_rest():
    text = f"deploy with {GITHUB}\nthen connect to postgres://app:s3cretpw@db/app\nnothing else here"
    redacted, findings = redact(text)
    assert redacted == ("deploy with [REDACTED:github-token]\nthen connect to postgres://app:"
                        "[REDACTED:connection-password]@db/app\nnothing else here")
    assert [(f.kind, f.line) for f in findings] == [("github-token", 1), ("connection-password", 2)]
    assert redact(redacted) == (redacted, [])


def test_a_wrapped_or_encoded_token_is_redacted_whole_and_nothing_around_it():
    encoded = base64.b64encode(GITHUB.encode()).decode()
    text = f"run\n{GITHUB[:17]}\n{GITHUB[17:]}\nnext line\necho {encoded} | base64 -d"
    assert redact(text)[0] == "run\n[REDACTED:github-token]\nnext line\necho [REDACTED:github-token] | base64 -d"
    # A whole token that ends its line does not take in the next one.
    assert redact(f"{GITHUB}\nNextStepsAreToRotateIt weekly")[0] == "[REDACTED:github-token]\nNextStepsAreToRotateIt weekly"
    assert redact(f"token:\n  {GITHUB[:17]}\n      {GITHUB[17:]}\n  next: x")[0] == "token:\n  [REDACTED:github-token]\n  next: x"


def test_two_wrapped_tokens_one_under_the_other_are_both_redacted():
    # The second token's first line was taken into the first token's candidate, and the search went on after it: the
    # second token was kept whole (review of session 19). So was a wrapped token under a line ending in a prefix.
    other = "ghp_" + "Zz9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8"
    text = f"{GITHUB[:30]}\n{GITHUB[30:]}\n{other[:30]}\n{other[30:]}\ndone"
    assert redact(text)[0] == "[REDACTED:github-token]\n[REDACTED:github-token]\ndone"
    assert redact(f"claims: eyJ\n{GITHUB[:30]}\n{GITHUB[30:]}\ndone")[0] == "claims: eyJ\n[REDACTED:github-token]\ndone"


def test_a_base64_token_whose_last_row_is_full_is_redacted_and_not_the_line_after_it():
    # A 64- or 76-character row is taken for a row of `base64`'s wrapped output, and the next line's first word was
    # taken in as more of the run: decoded with it, the run was not text, and the token was kept (review of s19).
    one_row = base64.b64encode(f"token {GITHUB} x".encode()).decode()
    assert len(one_row) == 64
    assert redact(f"secret:\n{one_row}\nthen run it")[0] == "secret:\n[REDACTED:github-token]\nthen run it"
    full = base64.encodebytes(f"GITHUB_TOKEN={GITHUB} and the words after it".ljust(114, ".").encode()).decode()
    assert [len(row) for row in full.split()] == [76, 76]
    assert redact(f"{full}then run it")[0] == "[REDACTED:github-token]\nthen run it"


def test_a_pem_block_is_redacted_whole():
    redacted, _ = redact(f"key:\n{PEM}\nend")
    assert redacted == "key:\n[REDACTED:private-key]\nend"


# -- through the vault's one writer ------------------------------------------------------------

def test_the_writer_refuses_new_content_with_a_credential_and_writes_nothing(vault: Vault):
    with pytest.raises(SecretError) as refused:
        vault.add(f"Deploy token\nuse {GITHUB} for the release job", collection="patterns")
    message = str(refused.value)
    assert "content line 2: GitHub token (ghp_a…A5)" in message and GITHUB not in message
    assert "--allow-secret" in message and "allow_secret" in message
    assert [f.kind for f in refused.value.findings] == ["github-token"]
    assert list((vault.root / "patterns").iterdir()) == []


def test_a_title_cut_from_the_content_does_not_report_the_same_secret_twice(vault: Vault):
    with pytest.raises(SecretError) as refused:
        vault.add(f"{AWS} is the deploy key")
    assert len(refused.value.findings) == 1 and refused.value.findings[0].where == "content"


def test_a_note_on_how_passwords_are_stored_is_written_not_refused(vault: Vault):
    # The password-assignment rule took a setting's scheme for a password (review of session 18).
    memory = vault.add("Postgres 14 hashes logins with password_encryption = scram-sha-256; our old md5 users "
                       "had to reset (password_changed_at: 2024-01-15T10:00:00Z).", collection="patterns")
    assert "scram-sha-256" in (vault.root / memory.path).read_text()


def test_allow_secrets_stores_it_when_the_user_explicitly_asked(vault: Vault):
    memory = vault.add(f"use {GITHUB}", allow_secrets=True)
    assert GITHUB in (vault.root / memory.path).read_text()


def test_edits_are_checked_only_for_the_text_they_bring(vault_root: Path):
    human = vault_root / "history" / "notes.md"
    human.write_text(f"---\nid: m-0000beef\ntitle: Notes\nuses: 0\nscore: 0.5\n---\nold key {GITHUB}\n")
    vault = Vault(vault_root)
    memory = vault.load("history/notes.md")
    counted = vault.edit(memory, Change(fields={"uses": 1}))  # a human's own text never blocks scoring
    assert counted.uses == 1 and GITHUB in human.read_text()
    with pytest.raises(SecretError, match="Slack token"):
        vault.edit(counted, Change(append="and xoxb-" + "2048-40961-aBcDeFgHiJkLmNoP"))
    with pytest.raises(SecretError, match="tags line 1: Stripe secret key"):
        vault.edit(counted, Change(fields={"tags": ["sk_live_" + "51HxQ2mKz8vR4tY7uW9pL3nB"]}))
    assert "xoxb" not in human.read_text()


def test_scan_secrets_false_in_memdir_toml_turns_the_check_off(tmp_path: Path):
    root = tmp_path / "v"
    init_vault(root, default_config_text().replace("scan_secrets = true", "scan_secrets = false"))
    from mcp_server.config import load_config

    settings = load_config(root).vault
    assert settings.scan_secrets is False
    memory = Vault(root, settings).add(f"use {GITHUB}")
    assert GITHUB in (root / memory.path).read_text()


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "3x4mPl3K9z"


@pytest.mark.parametrize("text", [f"aws {AWS} / {AWS_SECRET}", f"key ID {AWS}, secret {AWS_SECRET}",
                                  f"{AWS_SECRET} is the secret for {AWS}",
                                  f"aws_access_key_id={AWS}\naws_secret_access_key={AWS_SECRET}"])
def test_both_halves_of_an_aws_key_pair_are_redacted(text: str):
    redacted, found = redact(text)
    assert AWS not in redacted and AWS_SECRET not in redacted
    assert {f.kind for f in found} >= {"aws-access-key"} and len(found) == 2


def test_a_lone_forty_character_value_is_not_taken_for_an_aws_secret():
    assert scan(f"the build artefact hash is {AWS_SECRET}") == []


def test_a_git_sha_or_memory_id_beside_an_aws_key_id_is_not_taken_for_its_secret():
    """Only the key id is a credential here: a 40-hex SHA has the AWS secret's length, and must survive."""
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    redacted, found = redact(f"key {AWS} leaked in commit {sha}, see [id:m-1234abcd] and {sha.upper()}")
    assert AWS not in redacted and sha in redacted and sha.upper() in redacted and "m-1234abcd" in redacted
    assert [f.kind for f in found] == ["aws-access-key"]
