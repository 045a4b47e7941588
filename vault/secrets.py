"""Find credentials in text before it becomes a memory file: refuse them, or redact them.

Memories are plain Markdown that gets committed and pushed, so a key pasted into one is a
leaked key. Detection favours precision: every pattern is anchored on a vendor prefix or a
structure (PEM block, JWT, URL with a password), and the one generic rule (`api_key = "…"`)
also needs a value that looks random. Placeholders (`sk-...`, `<your-token>`, `${TOKEN}`,
AWS's documented `…EXAMPLE` key) pass. A finding never carries the secret, only a masked form.
"""

from __future__ import annotations

import binascii
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from .errors import SecretError

REDACTED = "[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class Finding:
    """One credential-looking span: what it is, where (`where` line `line`), and a masked preview."""

    kind: str  # short name, also used in [REDACTED:kind]
    label: str  # what a person reads: "AWS access key"
    where: str  # "content", "title", ...
    line: int  # 1-based line within `where`
    masked: str

    def describe(self) -> str:
        return f"{self.where} line {self.line}: {self.label} ({self.masked})"


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    label: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None  # extra test on the secret group


_PLACEHOLDER_WORDS = ("example", "your", "xxxx", "placeholder", "redacted", "changeme", "change_me", "dummy",
                      "insert", "replace", "sample", "fake", "<", ">", "...", "…", "${", "{{", "%(", "****")


def _placeholder(value: str) -> bool:
    lowered = value.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return True
    return re.search(r"(.)\1{5,}", value) is not None or len(set(value)) <= 4


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_NOT_A_TOKEN = re.compile(
    r".*[()\[\]{}$<>].*"  # code or a template
    r"|[/~.].*|.*://.*|.*\.[a-z]{2,4}"  # a path, a URL, a file name
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # settings.secret_key
)


def _random(value: str) -> bool:
    """A generated token: long, letters and digits mixed, not code, a path or a template, and with
    the character spread of random text (entropy near the most its length and alphabet allow)."""
    if len(value) < 16 or _placeholder(value) or _NOT_A_TOKEN.fullmatch(value):
        return False
    if not (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
        return False
    alphabet = 16 if re.fullmatch(r"[0-9a-fA-F]+", value) else 64
    return _entropy(value) >= 0.75 * math.log2(min(len(value), alphabet))


def _real(value: str) -> bool:
    return not _placeholder(value)


_TEMPLATE = re.compile(r"[$%].*|<.*>|\{.*\}|\[.*\]|[*.…x]+", re.I)


def _password(value: str) -> bool:
    """A literal password in a URL (even `pass`); `$DB_PASSWORD`, `<password>`, `***` and `%s` are templates."""
    lowered = value.lower()
    return not (_TEMPLATE.fullmatch(value) or any(word in lowered for word in _PLACEHOLDER_WORDS))


_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # password_v2, DB_PASS_2
# What a setting about passwords holds that is not one: the scheme that hashes or encrypts them (Postgres'
# `password_encryption = scram-sha-256`, `password_hashing: argon2id`), a time (`password_changed_at: 2024-…Z`) or a
# duration. Letters and digits mixed, so the rule below took them for passwords, and an `add` saying so was refused.
_NOT_A_PASSWORD = re.compile(
    r"(?i)(?:argon2(?:id|i|d)?|bcrypt|s?crypt|yescrypt|pbkdf2|scram|sha-?\d*|md5|aes|hmac|blake2[bs]?|chacha20"
    r"|ed25519|rsa|des3?)(?:[-_][a-z0-9]+)*"  # an algorithm, with its variant's parts: aes-256-gcm, pbkdf2-sha512
    r"|\d{4}-\d\d-\d\d(?:[T ].*)?"  # a date or a time
    r"|\d+(?:ms|secs?|seconds?|mins?|minutes?|hours?|days?|weeks?|months?|years?|chars?|characters?)")


def _literal_password(value: str) -> bool:
    """A password typed after its name: letters and digits, not a template, code, path, URL, identifier, or what a
    setting about passwords holds (a scheme, a time)."""
    return (re.search(r"\d", value) is not None and re.search(r"[A-Za-z]", value) is not None
            and _password(value) and not _NOT_A_TOKEN.fullmatch(value) and not _IDENTIFIER.fullmatch(value)
            and not _NOT_A_PASSWORD.fullmatch(value))


# The group named `s` is the secret: it is what gets masked and what redaction replaces.
_RULES: tuple[_Rule, ...] = (
    _Rule("private-key", "private key (PEM)", re.compile(
        r"(?P<s>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\\n|\r?\n|\s)+"
        r"(?:[A-Za-z0-9-]+:[^\n]*(?:\\n|\r?\n))*(?:\\n|\r?\n|\s)*[A-Za-z0-9+/=]{40,}"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?)")),
    _Rule("anthropic-key", "Anthropic API key", re.compile(r"(?<![\w-])(?P<s>sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,})"),
          _real),
    _Rule("openai-key", "OpenAI API key", re.compile(
        r"(?<![\w-])(?P<s>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})"), _random),
    _Rule("aws-access-key", "AWS access key", re.compile(r"(?<![A-Za-z0-9])(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Za-z0-9])"),
          _real),
    _Rule("github-token", "GitHub token", re.compile(
        r"(?<![A-Za-z0-9_])(?P<s>(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}))"), _real),
    _Rule("slack-token", "Slack token", re.compile(r"(?<![A-Za-z0-9])(?P<s>xox[abposr]-[A-Za-z0-9-]{10,})"), _real),
    _Rule("slack-webhook", "Slack webhook URL", re.compile(
        r"(?P<s>https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,})"), _real),
    _Rule("stripe-key", "Stripe secret key", re.compile(r"(?<![A-Za-z0-9])(?P<s>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})"),
          _real),
    _Rule("google-api-key", "Google API key", re.compile(r"(?<![A-Za-z0-9])(?P<s>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"),
          _real),
    _Rule("jwt", "JSON Web Token", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<s>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})")),
    _Rule("bearer-token", "bearer token", re.compile(r"\b[Bb]earer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)"), _random),
    _Rule("basic-auth", "HTTP basic auth credentials", re.compile(
        r"\bAuthorization:[ \t]*Basic[ \t]+(?P<s>[A-Za-z0-9+/]{12,}=*)"), _real),
    _Rule("connection-password", "password in a connection string", re.compile(
        r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"]*:(?P<s>[^\s@/'\"]+)@[A-Za-z0-9._-]+"), _password),  # user may be empty: redis://:pw@host
    _Rule("secret-assignment", "secret assigned to a key-like name", re.compile(
        r"(?i)(?:api[_-]?key|apikey|secret|token|passwd|password|pwd|access[_-]?key|auth[_-]?key|credential)s?"
        r"[\w.-]{0,128}+[\"']?[ \t]*[:=][ \t]*(?P<q>[\"']?)(?P<s>[^\s\"'`,;]{16,})(?P=q)"), _random),
    # A human-chosen password is short and not random enough for the rule above, so a name that says
    # "password" takes a shorter value that mixes letters and digits (`PGPASSWORD=` and twelve of them).
    _Rule("password-assignment", "password assigned to a password-like name", re.compile(
        r"(?i)(?:passw(?:or)?d|passphrase|pwd)[\w.-]{0,128}+[\"']?[ \t]*[:=][ \t]*(?P<q>[\"']?)(?P<s>[^\s\"'`,;]{8,})(?P=q)"),
        _literal_password),
    # The -u of curl's own command (not of one after a `|`, `;` or `&&` on the line), and a user name that is not a
    # number: `docker run -u 1000:1000` is a uid and a gid.
    _Rule("cli-password", "password on a curl command line", re.compile(
        r"\bcurl\b[^\n;|&]*?[ \t](?:-u|--user)[ \t=]*[\"']?(?!\d+:)[^\s:\"'@]+:(?P<s>[^\s\"'@]+)"), _password),
    # Vendor formats with a prefix or a fixed structure (after gitleaks' rules of the same names).
    _Rule("gitlab-token", "GitLab token", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<s>gl(?:pat|dt|rt|ptt|cbt|ft|imt|soat|oas)-[A-Za-z0-9_-]{20,})"), _real),
    _Rule("huggingface-token", "Hugging Face token", re.compile(
        r"(?<![A-Za-z0-9_])(?P<s>(?:hf_|api_org_)[A-Za-z0-9]{30,40})(?![A-Za-z0-9])"), _random),
    _Rule("sendgrid-key", "SendGrid API key", re.compile(
        r"(?<![A-Za-z0-9])(?P<s>SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})"), _real),
    _Rule("digitalocean-token", "DigitalOcean token", re.compile(
        r"(?<![A-Za-z0-9_])(?P<s>do[opr]_v1_[a-f0-9]{64})(?![A-Za-z0-9])"), _real),
    _Rule("azure-account-key", "Azure storage or service key", re.compile(
        r"(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<s>[A-Za-z0-9+/]{30,}={0,2})"), _real),
    _Rule("npm-token", "npm access token", re.compile(r"(?<![A-Za-z0-9_])(?P<s>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])"),
          _random),
    _Rule("pypi-token", "PyPI upload token", re.compile(r"(?<![A-Za-z0-9_-])(?P<s>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})"),
          _real),
    _Rule("shopify-token", "Shopify token", re.compile(r"(?<![A-Za-z0-9_])(?P<s>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})"),
          _real),
    _Rule("square-token", "Square token", re.compile(r"(?<![A-Za-z0-9_-])(?P<s>sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43})"),
          _real),
    _Rule("databricks-token", "Databricks token", re.compile(r"(?<![A-Za-z0-9_])(?P<s>dapi[a-f0-9]{32}(?:-\d)?)(?![A-Za-z0-9])"),
          _random),
    _Rule("linear-key", "Linear API key", re.compile(r"(?<![A-Za-z0-9_])(?P<s>lin_api_[A-Za-z0-9]{40})"), _real),
    _Rule("grafana-token", "Grafana token", re.compile(
        r"(?<![A-Za-z0-9_])(?P<s>(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}))"), _real),
    _Rule("postman-key", "Postman API key", re.compile(r"(?<![A-Za-z0-9])(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})"), _real),
    _Rule("telegram-bot-token", "Telegram bot token", re.compile(
        r"(?<![A-Za-z0-9])(?P<s>\d{8,10}:AA[0-9A-Za-z_-]{33})(?![A-Za-z0-9_-])"), _real),
)

_AWS_SECRET_RULE = _Rule("aws-secret-key", "AWS secret access key", re.compile(""))

# The other half of a credential pair: an AWS secret access key is 40 characters of base64 with no prefix of
# its own, so it is only recognisable beside its key id ("aws AKIA… / <secret>", "key ID …, secret …").
# Redacting the id and keeping the secret would leave the half that matters.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
PAIR_DISTANCE = 300  # characters around a key id searched for its secret


# Something every rule above needs in what it matches (its vendor prefix, structure or key word),
# lowercased. Most text holds none of them, and looking for these with `in` costs less than a tenth
# of running the fourteen patterns (5,380 LoCoMo bodies: 0.75 -> 0.12 s). Keep it a superset when a rule
# is added: tests/vault/test_secrets.py checks every rule's examples against it.
_NEEDED = ("private key", "sk-", "akia", "asia", "abia", "acca", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
           "xox", "k_live_", "k_test_", "aiza", "eyj", "earer", "authorization:", "://", "key", "secret", "token", "passw",
           "pwd", "credential", "passphrase", "curl", "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glimt-", "glsoat-", "gloas-",
           "hf_", "api_org_", "sg.", "_v1_", "accountkey", "sharedaccesskey", "npm_", "pypi-", "shpat_", "shpca_",
           "shppa_", "shpss_", "sq0", "dapi", "lin_api_", "glc_", "glsa_", "pmak-", ":aa")


# The rules that name a token by its vendor prefix or fixed shape: the only ones looked for in a token cut by a line
# break or written in base64, where a match is as certain as in plain text. (A password rule would take any word.)
_TOKEN_KINDS = frozenset({"anthropic-key", "openai-key", "aws-access-key", "github-token", "slack-token", "stripe-key",
                          "google-api-key", "jwt", "gitlab-token", "huggingface-token", "sendgrid-key",
                          "digitalocean-token", "npm-token", "pypi-token", "shopify-token", "square-token",
                          "databricks-token", "linear-key", "grafana-token", "postman-key"})
_TOKEN_RULES = tuple(rule for rule in _RULES if rule.kind in _TOKEN_KINDS)
# A token cut by a line break or two (a terminal's wrap, a pasted log): a prefix of those rules, then its characters
# on the next line(s), from their start or after an indent (a log's or a YAML block's continuation line kept its tail
# before session 20). Joined only when the joined text is a token across the break.
_SPLIT_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_.-])(?:sk-|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|xox[abposr]-|[sr]k_(?:live|test)_|AIza|eyJ"
    r"|gl(?:pat|dt|rt|ptt|cbt|ft|imt|soat|oas)-|hf_|api_org_|SG\.|do[opr]_v1_|npm_|pypi-|shp(?:at|ca|pa|ss)_"
    r"|sq0(?:atp|csp)-|dapi|lin_api_|glc_|glsa_|PMAK-)[A-Za-z0-9_.-]*(?:\r?\n[ \t]*[A-Za-z0-9_.-]+){1,2}")
_BREAK = re.compile(r"\r?\n[ \t]*")  # with the next line's indent: neither is part of the token
# A base64 run (standard or URL-safe), also as `base64` and `openssl base64` wrap it (76 or 64 characters a line):
# `echo Z2hwX… | base64 -d` in a capture is the token. Decoded, it counts only if it is printable text holding a
# token of those rules, so a random blob, an image or a hash costs a decode and nothing else.
_BASE64_RUN = re.compile(
    r"(?<![A-Za-z0-9+/_-])(?:(?:[A-Za-z0-9+/]{76}|[A-Za-z0-9+/]{64})\r?\n)+[A-Za-z0-9+/]*={0,2}(?![A-Za-z0-9+/=_-])"
    r"|(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")


def _token_spans(text: str) -> list[tuple[int, int, _Rule, str]]:
    return [(match.start("s"), match.end("s"), rule, match.group("s")) for rule in _TOKEN_RULES
            for match in rule.pattern.finditer(text) if rule.check is None or rule.check(match.group("s"))]


def _split_tokens(text: str) -> list[tuple[int, int, _Rule, str]]:
    """Tokens a line break cut: the span from the prefix to the token's end on the next line, break included. A third
    line is joined only when the second is a full row (exactly as long as the first line, as a wrap cuts): a whole token
    on two lines does not take in the line after it. The next candidate is looked for from the end of a token found,
    else from the next line: a candidate's lines may hold the start of another token (two wrapped tokens one under the
    other: the second was kept whole when the search went on after all the lines the first candidate took in)."""
    found = []
    at = 0
    while (match := _SPLIT_TOKEN.search(text, at)) is not None:
        candidate = match.group()
        breaks = list(_BREAK.finditer(candidate))
        first_line = candidate[:breaks[0].start()]
        at = match.start() + breaks[0].end()
        if any(end == len(first_line) for _, end, _, _ in _token_spans(first_line)):
            continue  # a whole token that ends its line: the next line is something else
        row = match.start() + len(first_line) - (text.rfind("\n", 0, match.start()) + 1)  # the first line's length
        lines = 1
        while lines < len(breaks) and breaks[lines].start() - breaks[lines - 1].end() == row:
            lines += 1
        joined = _BREAK.sub("", candidate[:breaks[lines].start()] if lines < len(breaks) else candidate)
        spans = [(end, rule, secret) for start, end, rule, secret in _token_spans(joined)
                 if start == 0 and end > len(first_line)]  # the token runs across the break
        if spans:
            end, rule, secret = spans[0]
            cut = sum(len(b.group()) for b in breaks if _joined_position(breaks, b) < end)  # the breaks within it
            found.append((match.start(), match.start() + end + cut, rule, secret))
            at = match.start() + end + cut
    return found


def _joined_position(breaks: list[re.Match[str]], one: re.Match[str]) -> int:
    """Where the break `one` falls in the text joined without its breaks."""
    return one.start() - sum(len(b.group()) for b in breaks if b.start() < one.start())


def _encoded_tokens(text: str) -> list[tuple[int, int, _Rule, str]]:
    """Base64 runs that decode to text holding a token: the whole run is the secret."""
    found = []
    for match in _BASE64_RUN.finditer(text):
        run = match.group()
        decoded = _decoded(run)
        if decoded is None and "\n" in run:
            # A run whose last row is full (64 or 76 characters: a one-line run of that length too) takes in the
            # next line's first word as more of it, and decoded whole is not text: decoded without that line.
            run = run[:run.rindex("\n")].rstrip("\r")
            decoded = _decoded(run)
        if decoded is not None and _worth_scanning(decoded):
            tokens = _token_spans(decoded)
            if tokens:
                found.append((match.start(), match.start() + len(run), tokens[0][2], tokens[0][3]))
    return found


def _decoded(run: str) -> str | None:
    """A base64 run as the text it encodes, or None when it is not printable text (binary, or not base64 at all)."""
    run = "".join(run.split()).rstrip("=").replace("-", "+").replace("_", "/")
    if len(run) % 4 == 1:
        return None
    try:
        text = binascii.a2b_base64(run + "=" * (-len(run) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        return None
    return text if " ".join(text.split()).isprintable() else None


def _worth_scanning(text: str) -> bool:
    lowered = text.lower()
    return any(needed in lowered for needed in _NEEDED)


def scan(text: str, where: str = "content") -> list[Finding]:
    """Every credential-looking span in `text`, first to last, never two for one span."""
    return [finding for finding, _, _ in _matches(text, where)]


def redact(text: str) -> tuple[str, list[Finding]]:
    """`text` with each secret replaced by `[REDACTED:kind]`, and what was replaced."""
    found = _matches(text, "content")
    for finding, start, end in reversed(found):
        text = text[:start] + REDACTED.format(kind=finding.kind) + text[end:]
    return text, [f for f, _, _ in found]


def scan_values(values: Mapping[str, Any]) -> list[Finding]:
    """Scan every string (and list of strings) in a mapping such as frontmatter fields, each under its key."""
    findings: list[Finding] = []
    for key, value in values.items():
        items = value if isinstance(value, (list, tuple)) else [value]
        findings += [f for item in items if isinstance(item, str) for f in scan(item, key)]
    return findings


def refuse(findings: Iterable[Finding]) -> None:
    """Raise SecretError naming every finding (masked); does nothing when there are none."""
    found = list(findings)
    if not found:
        return
    listed = "; ".join(f.describe() for f in found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    raise SecretError(
        f"refused: this looks like a credential ({listed}). Memories are plain files that get committed and "
        "shared; keep secrets in a secret manager. Store it anyway only if the user explicitly asked to "
        "(CLI --allow-secret, tool argument allow_secret=true).",
        tuple(found),
    )


def mask(secret: str) -> str:
    """Enough to recognise which key it was (`sk-ab…9f`), never enough to use it."""
    secret = secret.strip()
    if secret.startswith("-----BEGIN"):
        return secret.split("-----")[1].removeprefix("BEGIN ").strip() + " block"
    if len(secret) >= 16:
        return f"{secret[:5]}…{secret[-2:]}"
    return f"{secret[:2]}…" if len(secret) >= 8 else "…"


def _paired_secrets(text: str, found: list[tuple[int, int, _Rule, str]]) -> list[tuple[int, int, _Rule, str]]:
    """The AWS secret access keys that stand near an AWS key id found in the same text."""
    paired = []
    for start, end, rule, _ in found:
        if rule.kind != "aws-access-key":
            continue
        for match in _AWS_SECRET.finditer(text, max(0, start - PAIR_DISTANCE), min(len(text), end + PAIR_DISTANCE)):
            secret = match.group("s")
            if _random(secret) and re.search(r"[a-z]", secret) and re.search(r"[A-Z]", secret):
                paired.append((match.start("s"), match.end("s"), _AWS_SECRET_RULE, secret))
    return paired


def _matches(text: str, where: str) -> list[tuple[Finding, int, int]]:
    spans: list[tuple[int, int, _Rule, str]] = _encoded_tokens(text)  # a base64 run holds no rule's prefix
    if not _worth_scanning(text) and not spans:
        return []
    for rule in _RULES:
        for match in rule.pattern.finditer(text):
            secret = match.group("s")
            if rule.check is None or rule.check(secret):
                spans.append((match.start("s"), match.end("s"), rule, secret))
    spans += _paired_secrets(text, spans) + _split_tokens(text)
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    kept: list[tuple[Finding, int, int]] = []
    end_of_last = -1
    for start, end, rule, secret in spans:
        if start < end_of_last:
            continue  # one span, one finding: `Bearer eyJ…` is a JWT, not also a bearer token
        line = text.count("\n", 0, start) + 1
        kept.append((Finding(rule.kind, rule.label, where, line, mask(secret)), start, end))
        end_of_last = end
    return kept
