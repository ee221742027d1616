"""Secret redaction: API keys, tokens, private keys and password assignments never reach the store.

Runs on the whole text of every rendered block, before any truncation or chunking, so neither the
stored text, the keyword index nor the embeddings ever see a secret (or the head of one cut in
half). Each match becomes ``[REDACTED:<kind>]``; for assignments (``password = "…"``) and for values
found by their context ("the secret key is …") only the value is replaced, so the chunk still says
what was set.

Three kinds of rule, cheapest first:

- token formats with a fixed shape (``ghp_…``, ``SG.….…``, Slack webhooks, Twilio SIDs);
- assignments whose key names a secret (``DB_PASSWORD=…``, ``"api_key": "…"``);
- values without a fixed shape that sit just after a word such as "secret", "key", "token" or
  "password" and look random (mixed case and digits, high Shannon entropy): AWS secret keys and Azure
  account keys in prose, and any other high-entropy credential.

Which kinds run is configurable (``redaction.disabledKinds``), and users add their own named
patterns (``redaction.customPatterns``) or anonymous ones (``redaction.extraPatterns``).
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from causantic.config import RedactionConfig
from causantic.errors import ConfigError

PLACEHOLDER = re.compile(r"\[REDACTED:[\w\-]+\]")

# _FAST_START: a pattern that opens with a case-insensitive alternation or a word boundary is
# tried at every position; a leading lookahead on the possible first letters, ``(?=[sS])``, lets
# the regex engine skip to those letters first, three times faster on a long text (a pasted
# bundle is redacted whole before it is kept for keyword search).
#
# (kind, regex, literals): a regex runs only on text containing one of its literals, a plain
# substring test that is far cheaper than the regex scan (redaction would otherwise dominate
# ingestion time). A regex with a group named ``value`` replaces only that group.
_PATTERNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "private-key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("PRIVATE KEY",),
    ),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    ("openai-key", r"(?=s)\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    (
        "aws-access-key",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b",
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"),
    ),
    (
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}", ("glpat-",)),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}",
        ("hooks.slack.com",),
    ),
    ("slack-token", r"(?=x)\bxox[abposr]-[A-Za-z0-9\-]{10,}", ("xox",)),
    ("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", ("_live_", "_test_")),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b", ("AIza",)),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", ("hf_",)),
    ("sendgrid-key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])", ("SG.",)),
    ("twilio-sid", r"(?=[SA])\b(?:SK|AC)[0-9a-f]{32}\b", ("SK", "AC")),
    (
        "azure-storage-key",
        r"(?i:AccountKey|SharedAccessKey)=(?P<value>[A-Za-z0-9+/]{20,}={0,2})",
        ("AccountKey=", "SharedAccessKey=", "accountkey="),
    ),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", ("eyJ",)),
    (
        "bearer-token",
        r"(?:(?<=Bearer )|(?<=bearer )|(?<=BEARER ))[A-Za-z0-9_\-\.=:+/]{16,}",
        ("Bearer ", "bearer ", "BEARER "),
    ),
    ("url-credentials", r"(?<=://)[^\s/:@]+:[^\s/@]+(?=@)", ("://",)),
)

# key = value, key: value, KEY="value", "key": "value"; the value is replaced, the key kept. The
# key is matched by its last word alone (DB_PASSWORD by PASSWORD): scanning identifier characters
# back from every word boundary made the pattern quadratic on long runs of them.
_ASSIGNMENT = re.compile(
    r"""(?ix)
    (?=[pPsSaAtTrRcC])  # first letters of the keys: see _FAST_START
    (?P<key>(?:password|passwd|pwd|secret|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?token|
        access[_\-]?token|refresh[_\-]?token|client[_\-]?secret|private[_\-]?key|token)\b["']?)
    (?P<sep>\s*(?:=|:|:=|=>)\s*)
    (?P<quote>["']?)
    (?P<value>(?!\[REDACTED)[^\s"'`,;)}\]]{6,})
    (?P=quote)
    """
)
# Words without which the assignment and context rules cannot match (checked on lower-cased text).
_ASSIGNMENT_HINTS = ("pass", "pwd", "secret", "key", "token")
_HINT_WINDOW = 1 << 20
# How far before its hint word an assignment's key can start: "refresh_token", "private_key".
_KEY_BEFORE_HINT = 8


def _occurrences(text: str, words: Sequence[str]) -> list[tuple[int, int, str]] | None:
    """Every (start, end, word) of the lower-case ``words`` in ``text``, ignoring case, sorted; found by plain
    substring search on lower-cased windows, many times faster than a case-insensitive regex scan
    of a long text (and without a lower-cased copy of a 50 MB pasted line: one more copy of it in
    memory). None when lower-casing changes a window's length (a rare character such as "İ"), as
    positions would shift: the caller then scans with a regex.

    A window is searched as ASCII bytes (:func:`_ascii_bytes`), lower-cased as bytes: the words are
    ASCII, and only two other characters lower-case to an ASCII letter (those of
    :data:`_LOWER_TO_ASCII`), so the same words are found at the same places, at a fraction of the
    time a search of text holding an emoji takes (four bytes a character)."""
    overlap = max(len(word) for word in words) - 1
    found: set[tuple[int, int, str]] = set()
    for start in range(0, len(text), _HINT_WINDOW):
        original = text[start : start + _HINT_WINDOW + overlap]
        window: str | bytes
        targets: Iterable[tuple[str, str | bytes]]
        if len(original) >= _BYTES_SEARCH_CHARS and not any(char in original for char in _LOWER_TO_ASCII):
            window, targets = _ascii_bytes(original).lower(), zip(words, _as_bytes(tuple(words)), strict=True)
        else:
            window, targets = original.lower(), zip(words, words, strict=True)
            if len(window) != len(original):
                return None
        for word, target in targets:
            at = window.find(target)  # type: ignore[arg-type]  # a str in a str, bytes in bytes
            while at >= 0:
                found.add((start + at, start + at + len(word), word))
                at = window.find(target, at + 1)  # type: ignore[arg-type]
    return sorted(found)


# The only characters beyond ASCII whose lower case holds an ASCII letter: "İ" (two characters, "i"
# and a dot) and the Kelvin sign (K to "k").
_LOWER_TO_ASCII = ("\u0130", "\u212a")
# Shorter text is searched as it is: making a copy of it costs more than the search saves.
_BYTES_SEARCH_CHARS = 4096


@functools.cache
def _as_bytes(words: tuple[str, ...]) -> tuple[bytes, ...]:
    """The ASCII ``words`` as bytes (made once: most texts are short and many)."""
    return tuple(word.encode("ascii") for word in words)


def _ascii_bytes(text: str) -> bytes:
    """``text`` as ASCII bytes, position for position: every other character becomes "?" (which no
    word or literal searched for holds), so an ASCII string is found at the same index. Searching
    text that holds one emoji costs four bytes a character; this, one."""
    return text.encode("ascii", "replace")


def _sub_at(text: str, pattern: re.Pattern[str], starts: Iterable[int], replace: Callable[[re.Match[str]], str]) -> str:
    """``pattern.sub(replace, text)`` for a pattern whose every match starts at one of ``starts``
    (ascending): trying those positions in order, skipping any inside the previous match, finds
    exactly the matches ``sub`` finds, without running the regex over every character of a long
    text (a regex scan of a 50 MB pasted line takes a second or more)."""
    out: list[str] = []
    last = 0
    for start in starts:
        if start < last:
            continue
        match = pattern.match(text, start)
        if match is None:
            continue
        out += [text[last:start], replace(match)]
        last = match.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _find_all(haystack: str | bytes, literals: Sequence[str], after: bool = False) -> list[int]:
    """Where any of ``literals`` starts in ``haystack`` (the text, or its :func:`_ascii_bytes`),
    ascending; with ``after``, where it ends."""
    found: set[int] = set()
    for target in literals if isinstance(haystack, str) else _as_bytes(tuple(literals)):
        at = haystack.find(target)  # type: ignore[arg-type]  # a str in a str, bytes in bytes
        while at >= 0:
            found.add(at + len(target) if after else at)
            at = haystack.find(target, at + 1)  # type: ignore[arg-type]
    return sorted(found)


def _redact_assignments(text: str, words: list[tuple[int, int, str]] | None) -> str:
    """``_ASSIGNMENT.sub(_redact_assignment, text)``, trying the regex only where a key can start:
    a key holds a hint word at most ``_KEY_BEFORE_HINT`` characters from its start."""
    if words is None:
        return _ASSIGNMENT.sub(_redact_assignment, text)
    hints = {start for start, _, word in words if word in _ASSIGNMENT_HINTS}
    starts = sorted({s for hint in hints for s in range(max(0, hint - _KEY_BEFORE_HINT), hint + 1)})
    return _sub_at(text, _ASSIGNMENT, starts, _redact_assignment)


@dataclass(frozen=True, slots=True)
class _ContextRule:
    """A value of a given shape within ``window`` characters after a context word."""

    kind: str
    context: tuple[str, ...]  # lower-case words, matched ignoring case
    value: re.Pattern[str]
    window: int
    accept: Callable[[str], bool]


_B64_VALUE = r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/]{%d}%s(?![A-Za-z0-9+/=_\-])"
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_\-.])[A-Za-z0-9+/_\-]{20,512}={0,2}(?![A-Za-z0-9+/=_\-])")


def _mixed(value: str) -> bool:
    """Upper case, lower case and digits all present: random keys are, words and identifiers rarely."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value``'s own character distribution."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


@dataclass(frozen=True, slots=True)
class _RandomLooking:
    """Accepts values that look generated rather than written (a class, so the redactor pickles
    into ingest worker processes)."""

    min_entropy: float

    def __call__(self, value: str) -> bool:
        core = value.rstrip("=")
        if not _mixed(core) or shannon_entropy(core) < self.min_entropy:
            return False
        # A path or a slug is words joined by separators; a key is not.
        parts = [p for p in re.split(r"[/_\-]", core) if p]
        return not any(p.isalpha() and p.islower() and len(p) >= 4 for p in parts[1:])


def _context_rules(min_entropy: float) -> tuple[_ContextRule, ...]:
    random_looking = _RandomLooking(min_entropy)
    return (
        _ContextRule(
            "aws-secret-key",
            ("aws", "secret"),
            re.compile(_B64_VALUE % (40, "")),
            60,
            random_looking,
        ),
        _ContextRule(
            "azure-storage-key",
            ("azure", "storage", "account key", "accountkey"),
            re.compile(_B64_VALUE % (86, "==")),
            80,
            random_looking,
        ),
        _ContextRule(
            "high-entropy-secret",
            ("secret", "key", "token", "password", "passwd", "pwd", "credential"),
            _CANDIDATE,
            40,
            random_looking,
        ),
    )


@dataclass(frozen=True, slots=True)
class _PatternRule:
    kind: str
    pattern: re.Pattern[str]
    literals: tuple[str, ...]
    opens_with_literal: bool = False
    opens_after_literal: bool = False


# Every word a hint or context rule looks for, found in one pass.
_WORDS = tuple(dict.fromkeys((*_ASSIGNMENT_HINTS, *(w for rule in _context_rules(0.0) for w in rule.context))))
# Kinds whose every match starts with one of their literals, or right after one: the regex is tried
# only there.
_OPENS_WITH_LITERAL = frozenset(
    """anthropic-key openai-key aws-access-key github-token gitlab-token slack-token google-api-key
    npm-token huggingface-token sendgrid-key twilio-sid jwt""".split()
)
_OPENS_AFTER_LITERAL = frozenset({"bearer-token", "url-credentials"})


def builtin_kinds() -> tuple[str, ...]:
    """Every built-in kind a user can switch off with ``redaction.disabledKinds``."""
    return (*(kind for kind, _, _ in _PATTERNS), "secret", *(rule.kind for rule in _context_rules(0.0)))


@dataclass(frozen=True, slots=True)
class Redactor:
    patterns: tuple[_PatternRule, ...]
    context_rules: tuple[_ContextRule, ...] = ()
    assignments: bool = True
    enabled: bool = True

    def __call__(self, text: str) -> str:
        if not self.enabled or not text:
            return text
        # Where the literals are searched, made again when the text changes. A short text is searched
        # for the literals a match follows (cheaper as one regex pass than as a search per literal).
        long = len(text) >= _BYTES_SEARCH_CHARS
        haystack, haystack_of = _haystack(text), text
        for rule in self.patterns:
            if rule.opens_with_literal or (long and rule.opens_after_literal):
                if haystack_of is not text:
                    haystack, haystack_of = _haystack(text), text
                starts = _find_all(haystack, rule.literals, after=rule.opens_after_literal)
                if starts:
                    text = _sub_at(text, rule.pattern, starts, _replacer(rule.kind))
            elif not rule.literals or any(literal in text for literal in rule.literals):
                text = rule.pattern.sub(_replacer(rule.kind), text)
        # The hint and context words are found once (lower-casing a long text is not free), and
        # again only when a rule that needs them follows one that changed the text.
        words, words_of = _occurrences(text, _WORDS), text
        if words is not None and not any(word in _ASSIGNMENT_HINTS for _, _, word in words):
            return text
        if self.assignments:
            text = _redact_assignments(text, words)
        for context_rule in self.context_rules:
            if words_of is not text:
                words, words_of = _occurrences(text, _WORDS), text
            text = _redact_in_context(text, context_rule, words)
        return text


def _haystack(text: str) -> str | bytes:
    """What the literals are searched in: a long text beyond ASCII as :func:`_ascii_bytes`, else the text."""
    return _ascii_bytes(text) if len(text) >= _BYTES_SEARCH_CHARS and not text.isascii() else text


def make_redactor(
    enabled: bool = True,
    extra_patterns: Sequence[str] = (),
    custom_patterns: Mapping[str, str] | None = None,
    disabled_kinds: Sequence[str] = (),
    min_entropy: float = RedactionConfig.model_fields["min_entropy"].default,
) -> Redactor:
    """Built-in rules minus ``disabled_kinds``, plus the user's patterns (which run on every text).

    ``custom_patterns`` maps a kind name (shown in the placeholder) to a regex; ``extra_patterns``
    are regexes reported as ``custom``.
    """
    known = builtin_kinds()
    unknown = sorted(set(disabled_kinds) - set(known))
    if unknown:
        raise ConfigError(f"redaction.disabledKinds: unknown kind(s) {', '.join(unknown)}; known: {', '.join(known)}.")
    off = set(disabled_kinds)
    compiled = [
        _PatternRule(kind, re.compile(p), literals, kind in _OPENS_WITH_LITERAL, kind in _OPENS_AFTER_LITERAL)
        for kind, p, literals in _PATTERNS
        if kind not in off
    ]
    user = [("custom", p, "redaction.extraPatterns") for p in extra_patterns]
    user += [(name, p, f"redaction.customPatterns.{name}") for name, p in (custom_patterns or {}).items()]
    for kind, pattern, key in user:
        if not re.fullmatch(r"[\w\-]+", kind):
            raise ConfigError(f"{key}: a pattern name may hold only letters, digits, '_' and '-'.")
        try:
            compiled.append(_PatternRule(kind, re.compile(pattern), ()))
        except re.error as exc:
            raise ConfigError(f"{key}: {pattern!r} is not a valid regex: {exc}") from exc
    context = tuple(r for r in _context_rules(min_entropy) if r.kind not in off)
    return Redactor(tuple(compiled), context, "secret" not in off, enabled)


def redactor_from(config: RedactionConfig) -> Redactor:
    return make_redactor(
        config.enabled, config.extra_patterns, config.custom_patterns, config.disabled_kinds, config.min_entropy
    )


def _replacer(kind: str) -> Callable[[re.Match[str]], str]:
    placeholder = f"[REDACTED:{kind}]"

    def replace(match: re.Match[str]) -> str:
        if "value" not in match.re.groupindex or match.group("value") is None:
            return placeholder
        start, end = match.span("value")
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + placeholder + whole[end - offset :]

    return replace


def _redact_assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if _looks_like_code(value):
        return match.group(0)
    return f"{match.group('key')}{match.group('sep')}{match.group('quote')}[REDACTED:secret]{match.group('quote')}"


# Where a value of any context rule can start: a character of its alphabet after one that is not
# (each value pattern opens with such a lookbehind, over these characters or more).
_VALUE_START = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]")


def _values_near(text: str, ends: list[int], rule: _ContextRule) -> Iterator[re.Match[str]]:
    """The value matches that start within ``rule.window`` characters after a context word, in order:
    the value pattern is tried only at the places in those windows where a value can start
    (:data:`_VALUE_START`), not over the whole text (coding text says "key" and "token" every few
    hundred characters, so the windows are few characters of many). A value's pattern cannot start
    inside a run of its own characters (its lookbehind), so these are the matches a scan of the
    whole text finds there."""
    region_start, region_end = ends[0], ends[0] + rule.window
    for end in [*ends[1:], None]:
        if end is not None and end <= region_end:  # windows that touch are tried as one
            region_end = end + rule.window
            continue
        for start in _VALUE_START.finditer(text, region_start, region_end):
            value = rule.value.match(text, start.start())
            if value is not None:
                yield value
        if end is not None:
            region_start, region_end = end, end + rule.window


def _redact_in_context(text: str, rule: _ContextRule, words: list[tuple[int, int, str]] | None) -> str:
    """Replace each accepted value that starts within ``rule.window`` characters after a context word.

    One pass over the values and a binary search among the context words' ends, instead of a
    search after every context word: coding text says "key" and "token" every few hundred
    characters, and a pasted bundle would otherwise be rescanned thousands of times. A value's
    pattern cannot start inside a run of its own characters (its lookbehind), so the values found
    in one pass are exactly those a search starting after each context word finds.
    """
    ends = _context_ends(text, rule.context, words)
    if not ends:
        return text
    spans: list[tuple[int, int]] = []
    for value in _values_near(text, ends, rule):
        before = bisect.bisect_right(ends, value.start())
        if before and value.start() < ends[before - 1] + rule.window and rule.accept(value.group(0)):
            spans.append(value.span())
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out += [text[last:start], f"[REDACTED:{rule.kind}]"]
        last = end
    out.append(text[last:])
    return "".join(out)


def _context_ends(text: str, context: tuple[str, ...], words: list[tuple[int, int, str]] | None) -> list[int]:
    """Where the ``context`` words end (``words``: every hint and context word in ``text``, or None
    to scan with a regex), as a case-insensitive regex alternation of them would find them: left to
    right, none starting inside the previous one."""
    if words is None:
        pattern = re.compile("|".join(re.escape(word) for word in context), re.IGNORECASE)
        return [match.end() for match in pattern.finditer(text)]
    ends: list[int] = []
    for start, end, word in words:
        if word in context and (not ends or start >= ends[-1]):
            ends.append(end)
    return ends


_CODE_VALUE = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # attribute access: tokenizer.eos_token, this.config.apiKey
    r"|[a-z]+(?:[A-Z][a-z]*)+"  # a camelCase identifier without digits: csrfToken, postHogApiKey
    r"|[A-Z][a-z]+(?:[A-Z][a-zA-Z]*)+"  # PascalCase: PostHogAPIKey
)
# Documentation placeholders, not secrets.
_PLACEHOLDER_WORDS = ("your-", "your_", "xxxx", "redacted", "example", "placeholder", "changeme")


def _looks_like_code(value: str) -> bool:
    """`token = get_token()`, `password: str` or `key = tokenizer.eos_token` is code, not a secret."""
    lowered = value.lower()
    return (
        "(" in value
        or "[" in value
        or lowered in {"none", "null", "true", "false", "undefined", "string", "str", "optional"}
        or value.startswith(("$", "{", "<", "os.", "env.", "process.", "self.", "config.", "settings."))
        or _CODE_VALUE.fullmatch(value) is not None
        or any(word in lowered for word in _PLACEHOLDER_WORDS)
    )


# How far past a cut the text is still redacted: a secret up to this long that crosses the cut is
# seen whole, so no head of it survives. Longer matches (private key blocks) run to the end of the
# redacted text, which their patterns accept. Redacting megabytes of tool output that is then
# dropped would cost ingest time for nothing.
REDACT_MARGIN = 16_384


def redact_head(text: str, limit: int, redact: Callable[[str], str]) -> str:
    """The first ``limit`` characters of ``text``, redacted before the cut; ``limit`` 0 keeps all."""
    if limit <= 0:
        return redact(text)
    return truncate(redact(text[: limit + REDACT_MARGIN]), limit, cut=len(text) > limit + REDACT_MARGIN)


def truncate(text: str, limit: int, *, cut: bool = False) -> str:
    """``text`` cut to about ``limit`` characters, never inside a ``[REDACTED:…]`` placeholder.

    ``cut`` says the text was already shortened, so the marker is due whatever its length.
    """
    if limit <= 0 or len(text) <= limit:
        return text + " …[truncated]" if cut else text
    end = limit
    for match in PLACEHOLDER.finditer(text, max(0, limit - 40), limit + 40):
        if match.start() < end < match.end():
            end = match.end()
    return text[:end].rstrip() + " …[truncated]"
