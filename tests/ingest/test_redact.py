"""Secrets are redacted before anything is stored or indexed."""

from __future__ import annotations

import bisect
import json
import random
import re
from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark
from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.config import Config, db_path
from causantic.ingest import redact as redact_module
from causantic.ingest.redact import make_redactor
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

# Real-looking but fake credentials, assembled so no scanner mistakes this file for a leak.
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "x7Yz" * 9
ANTHROPIC = "sk-ant-api03-" + "Ab3dEf6hIj9kLm2nOp5q" * 2
OPENAI = "sk-proj-" + "T3BlbkFJ" * 5
SLACK = "xoxb-" + "123456789012-1234567890123-abcdefABCDEF"
JWT = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----"


def test_known_token_formats_are_replaced() -> None:
    redact = make_redactor()
    for secret in (AWS, GITHUB, ANTHROPIC, OPENAI, SLACK, JWT):
        out = redact(f"export TOKEN_VALUE_X {secret} done")
        assert secret not in out
        assert "[REDACTED:" in out


def test_a_private_key_block_is_removed_whole() -> None:
    out = make_redactor()(f"key:\n{PRIVATE_KEY}\nafter")
    assert "MIIEowIBAAKCAQEA7" not in out
    assert out.endswith("after")


def test_password_assignments_keep_the_key_and_lose_the_value() -> None:
    redact = make_redactor()
    assert redact('DB_PASSWORD="correct-horse-battery"') == 'DB_PASSWORD="[REDACTED:secret]"'
    assert "hunter2hunter2" not in redact("redis://default:hunter2hunter2@cache.internal:6379")
    assert "s3cr3tValue" not in redact('{"api_key": "s3cr3tValue"}')


def test_code_that_mentions_secrets_is_left_alone() -> None:
    redact = make_redactor()
    for code in ("token = get_token()", "password: str", "api_key = os.environ['KEY']", "secret = None"):
        assert redact(code) == code


def test_custom_patterns_and_switching_off() -> None:
    assert make_redactor(extra_patterns=[r"ACME-\d{6}"])("id ACME-123456") == "id [REDACTED:custom]"
    assert make_redactor(enabled=False)(f"x {AWS}") == f"x {AWS}"


# --- kinds an adversarial campaign found missing (issue 18) -----------------------------------------

SECRETS_BY_KIND = {
    "aws-secret-key": "the secret key is {}".format("wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "9xAmPl3K3y"),
    "slack-webhook": "https://hooks.slack.com/services/" + "T01ABCD2E/B02FGHI3J/" + "x7Yz" * 6,
    "sendgrid-key": "SG." + "aB3dEf6hIj9kLm2nOp5qRs" + "." + "T3BlbkFJ" * 5 + "xYz",
    "azure-storage-key": "AccountName=acme;AccountKey=" + "Eby8vdM02xNOcqFl" * 5 + "qUwJPL==;Endpoint",
    "twilio-sid": "SK" + "0123456789abcdef" * 2,
}


def _secret_part(text: str) -> str:
    return max(text.replace("=", " ").replace(";", " ").split(), key=len)


def test_the_kinds_the_campaign_found_missing_are_replaced() -> None:
    redact = make_redactor()
    for kind, text in SECRETS_BY_KIND.items():
        out = redact(f"note: {text} end")
        assert f"[REDACTED:{kind}]" in out, (kind, out)
        assert _secret_part(text)[8:20] not in out, (kind, out)
    azure_prose = "the storage account key is " + "Eby8vdM02xNOcqFl" * 5 + "qUwJPL=="
    assert "Eby8vdM02" not in redact(azure_prose)
    assert "AC" + "0123456789abcdef" * 2 not in redact("client = Client('AC" + "0123456789abcdef" * 2 + "')")


def test_a_high_entropy_value_near_a_secret_word_is_replaced_but_ordinary_code_survives() -> None:
    redact = make_redactor()
    out = redact("the deploy token is 9fK2mQ7xLp4Rt8Wz1Vb6Nc3Hd5Jg0Ys, keep it safe")
    assert "9fK2mQ7x" not in out and "[REDACTED:high-entropy-secret]" in out
    for code in (
        "sid = req.cookies['sid']",
        "key = tokenizer.eos_token",
        "params: { _csrf_token: csrfToken }",
        "the cache key is src/causantic/ingest/redact_rules_v2.py",
        "commit key 3f2a9c1b7d4e5f60718293a4b5c6d7e8f9a0b1c2 merged",
        "api_key: your-key-here",
        "max_tokens=4096",
    ):
        assert redact(code) == code


@pytest.mark.parametrize("odd_character", ["", "İ"])  # "İ" lower-cases to two characters
def test_secrets_sparse_in_a_long_pasted_line_are_all_replaced(odd_character: str) -> None:
    """A long line is redacted by looking only near the words that can introduce a secret; every
    secret is still found, wherever it sits, and nothing else changes."""
    aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
    azure_key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsu" + "Fq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw" + "=="
    entropy = "9fK2mQ7xLp4Rt8Wz1Vb6Nc3Hd5Jg0Ys"
    planted = [
        (f"aws secret access key {aws_secret} ", "aws secret access key [REDACTED:aws-secret-key] "),
        (f"AccountKey {azure_key} ", "AccountKey [REDACTED:azure-storage-key] "),
        (f"the deploy token is {entropy}, ", "the deploy token is [REDACTED:high-entropy-secret], "),
        ('DB_PASSWORD="hunter2hunter2" ', 'DB_PASSWORD="[REDACTED:secret]" '),
        ("refresh_token: r3fr3shT0k3nValue ", "refresh_token: [REDACTED:secret] "),
    ]
    rng = random.Random(7)
    filler = "function(e){return e&&e.__esModule?e:{default:e}};var n=Object.create(null);" + odd_character
    window_edge = 1 << 20  # the text is searched a window of this many characters at a time
    pieces, expected, length = [], [], 0
    for n in range(120):
        gap = filler * rng.randint(1, 600)
        if length < window_edge <= length + len(gap) + 40:  # a secret across the window's edge
            gap = gap[: window_edge - 3 - length]
        secret, replaced = planted[n % len(planted)]
        pieces += [gap, secret]
        expected += [gap, replaced]
        length += len(gap) + len(secret)
    line = "".join(pieces)
    assert len(line) > 2 * window_edge
    assert make_redactor()(line) == "".join(expected)


def test_kinds_can_be_switched_off_and_users_can_name_their_own_patterns() -> None:
    from causantic.errors import ConfigError

    text = SECRETS_BY_KIND["sendgrid-key"]
    assert make_redactor(disabled_kinds=["sendgrid-key"])(text) == text
    assert make_redactor(custom_patterns={"acme-id": r"ACME-\d{6}"})("id ACME-123456") == "id [REDACTED:acme-id]"
    with pytest.raises(ConfigError, match="unknown kind"):
        make_redactor(disabled_kinds=["no-such-kind"])
    with pytest.raises(ConfigError, match="customPatterns.bad"):
        make_redactor(custom_patterns={"bad": "("})


def test_redaction_settings_come_from_the_config_file(causantic_home: Path, tmp_path: Path) -> None:
    from causantic.config import load_config
    from causantic.ingest.redact import redactor_from

    (tmp_path / "causantic.config.json").write_text(
        json.dumps({"redaction": {"customPatterns": {"ticket": r"TKT-\d{4}"}, "disabledKinds": ["twilio-sid"]}})
    )
    redact = redactor_from(load_config(cwd=tmp_path).redaction)
    sid = "SK" + "0123456789abcdef" * 2
    assert redact(f"TKT-1234 {sid}") == f"[REDACTED:ticket] {sid}"


# --- redaction before truncation, on real sessions ------------------------------------------------


def test_secrets_planted_in_a_copy_of_a_real_session_never_reach_the_store(corpus_dir: Path, tmp_path: Path) -> None:
    """Every planted kind, in prose, code, a Bash command and a tool result, some across the
    200/600-character cuts: no 8-character piece of any secret is stored or keyword-searchable."""
    bench = load_benchmark("redaction.py")
    folder = tmp_path / "sessions"
    folder.mkdir()
    host = corpus_dir / bench.HOSTS[0]
    planted = bench.plant_session(host, folder / host.name, random.Random(3), bench.KINDS)
    assert {p.where for p in planted} >= {"bash (cut)", "result (cut)", "prose", "code"}
    with open_services(Config()) as services:
        ingest_paths(services, [folder], embed=False)
        assert services.store.counts()["chunks"] > 20
        stored = bench.stored_text(db_path(services.config))
        leaked = [f"{p.kind} ({p.where})" for p in planted if bench.leaked(p.secret, stored)]
        assert leaked == []
        for p in planted[:12]:
            assert services.store.keyword_search(p.secret[:20]) == []
    # A placeholder is never cut in half by truncation.
    assert all(m.endswith("]") for m in re.findall(r"\[REDACTED:[\w\-]*\]?", stored))


def test_truncation_keeps_a_placeholder_whole() -> None:
    from causantic.ingest.redact import redact_head

    token = "ghp_" + "x7Yz" * 9
    text = "a" * 590 + " " + token + " tail"
    out = redact_head(text, 600, make_redactor())
    assert "x7Yz" not in out and "[REDACTED:github-token]" in out and out.endswith("…[truncated]")


def _plain_redact(text: str) -> str:
    """The redactor's rules applied the plain way, each regex over the whole text (the speed-ups
    search for literals and hint words first, as ASCII bytes, and try the regexes only there): the
    oracle they are held to."""
    redactor = make_redactor()
    for rule in redactor.patterns:
        if not rule.literals or any(literal in text for literal in rule.literals):
            text = rule.pattern.sub(redact_module._replacer(rule.kind), text)
    lowered = text.lower()
    if len(lowered) == len(text) and not any(hint in lowered for hint in redact_module._ASSIGNMENT_HINTS):
        return text
    text = redact_module._ASSIGNMENT.sub(redact_module._redact_assignment, text)
    for context_rule in redactor.context_rules:
        text = _plain_in_context(text, context_rule)
    return text


def _plain_in_context(text: str, rule: redact_module._ContextRule) -> str:
    """A context rule applied the plain way: each value the rule's regex finds in the whole text is
    replaced when it starts within the rule's window after a context word (found by regex)."""
    words = re.compile("|".join(re.escape(word) for word in rule.context), re.IGNORECASE)
    ends = [match.end() for match in words.finditer(text)]
    spans = []
    for value in rule.value.finditer(text):
        before = bisect.bisect_right(ends, value.start())
        if before and value.start() < ends[before - 1] + rule.window and rule.accept(value.group(0)):
            spans.append(value.span())
    for start, end in reversed(spans):
        text = text[:start] + f"[REDACTED:{rule.kind}]" + text[end:]
    return text


# Secrets of every kind, the words and literals that lead to them in every case, and the characters
# where a search of ASCII bytes could part from one of the text: emoji, the Kelvin sign (lower-cases
# to "k"), "İ" (to two characters), "?" (what other characters become), CJK.
_SECRET_PIECES = st.sampled_from(
    [
        AWS,
        GITHUB,
        ANTHROPIC,
        OPENAI,
        SLACK,
        JWT,
        "SK" + "0123456789abcdef" * 2,
        "AC" + "0123456789abcdef" * 2,
        "SG." + "a" * 22 + "." + "B" * 43,
        "https://hooks.slack.com/services/T0000/B0000/" + "x" * 24,
        "https://alice:s3cr3tPa55@db.example.com/x",
        "://bob:pw@",
        "Bearer abcdefghijklmnop1234",
        "bearer ",
        "AccountKey=" + "Ab1" * 10 + "==",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "9fK2mQ7xLp4Rt8Wz1Vb6Nc3Hd5Jg0Ys",
        " the secret key is ",
        "aws ",
        "AWS_SECRET ",
        "password=",
        "PASSWORD: ",
        "api_key = '",
        "\u212aEY ",
        "to\u212aen: ",
        "İ",
        "🙂",
        "数据",
        "?",
        " ",
        "\n",
        '"',
        "=",
        "Token",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_SECRET_PIECES, st.text(max_size=40)), min_size=50, max_size=300))
def test_the_redactor_finds_what_each_rule_finds_in_long_texts_dense_with_context_words(pieces: list[str]) -> None:
    # Context words every few dozen characters: their windows merge and cover most of the text.
    text = "".join(pieces)
    assert make_redactor()(text) == _plain_redact(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_SECRET_PIECES, st.text(max_size=5)), max_size=25))
def test_the_redactor_finds_what_each_rule_over_the_whole_text_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    expected = _plain_redact(text)
    assert make_redactor()(text) == expected
    with pytest.MonkeyPatch.context() as patch:  # short texts searched as ASCII bytes too, as long ones are
        patch.setattr(redact_module, "_BYTES_SEARCH_CHARS", 0)
        assert make_redactor()(text) == expected
