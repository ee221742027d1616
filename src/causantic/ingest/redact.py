"""Secret redaction: API keys, tokens, private keys and password assignments never reach the store.

Runs on every rendered section before chunking, so neither the stored text, the keyword index nor
the embeddings ever see a secret. Each match becomes ``[REDACTED:<kind>]``; for assignments
(``password = "…"``) only the value is replaced, so the chunk still says what was set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from causantic.errors import ConfigError

# (kind, regex, literals): a regex runs only on text containing one of its literals, a plain
# substring test that is far cheaper than the regex scan (redaction would otherwise dominate
# ingestion time).
_PATTERNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("private-key",
     r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
     ("PRIVATE KEY",)),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    ("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b",
     ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA")),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}", ("glpat-",)),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", ("xox",)),
    ("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", ("_live_", "_test_")),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b", ("AIza",)),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", ("hf_",)),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", ("eyJ",)),
    ("bearer-token", r"(?:(?<=Bearer )|(?<=bearer )|(?<=BEARER ))[A-Za-z0-9_\-\.=:+/]{16,}",
     ("Bearer ", "bearer ", "BEARER ")),
    ("url-credentials", r"(?<=://)[^\s/:@]+:[^\s/@]+(?=@)", ("://",)),
)

# key = value, key: value, KEY="value", "key": "value"; the value is replaced, the key kept.
_ASSIGNMENT = re.compile(
    r"""(?ix)
    (?P<key>\b[\w.\-]*(?:password|passwd|pwd|secret|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?token|
        access[_\-]?token|refresh[_\-]?token|client[_\-]?secret|private[_\-]?key|token)\b["']?)
    (?P<sep>\s*(?:=|:|:=|=>)\s*)
    (?P<quote>["']?)
    (?P<value>(?!\[REDACTED)[^\s"'`,;)}\]]{6,})
    (?P=quote)
    """
)


# Words without which the assignment pattern cannot match (checked on lower-cased text).
_ASSIGNMENT_HINTS = ("pass", "pwd", "secret", "key", "token")


@dataclass(frozen=True, slots=True)
class Redactor:
    patterns: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]
    enabled: bool = True

    def __call__(self, text: str) -> str:
        if not self.enabled or not text:
            return text
        for kind, pattern, literals in self.patterns:
            if not literals or any(literal in text for literal in literals):
                text = pattern.sub(f"[REDACTED:{kind}]", text)
        lowered = text.lower()
        if any(hint in lowered for hint in _ASSIGNMENT_HINTS):
            text = _ASSIGNMENT.sub(_redact_assignment, text)
        return text


def make_redactor(enabled: bool = True, extra_patterns: Sequence[str] = ()) -> Redactor:
    """Built-in patterns plus ``extra_patterns`` (custom ones run on every text)."""
    compiled = [(kind, re.compile(p), literals) for kind, p, literals in _PATTERNS]
    for pattern in extra_patterns:
        try:
            compiled.append(("custom", re.compile(pattern), ()))
        except re.error as exc:
            raise ConfigError(f"redaction.extraPatterns: {pattern!r} is not a valid regex: {exc}") from exc
    return Redactor(tuple(compiled), enabled)


def _redact_assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if _looks_like_code(value):
        return match.group(0)
    return f"{match.group('key')}{match.group('sep')}{match.group('quote')}[REDACTED:secret]{match.group('quote')}"


def _looks_like_code(value: str) -> bool:
    """`token = get_token()` or `password: str` is code, not a secret."""
    return (
        "(" in value
        or value.lower() in {"none", "null", "true", "false", "undefined", "string", "str", "optional"}
        or value.startswith(("$", "{", "<", "os.", "env.", "process.", "self.", "config.", "settings."))
    )
