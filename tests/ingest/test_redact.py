"""Secrets are redacted before anything is stored or indexed."""

from __future__ import annotations

from causantic.ingest.redact import make_redactor

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
