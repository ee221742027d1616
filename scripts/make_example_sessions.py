"""Write the example Claude Code sessions shipped in ``causantic/examples/sessions``.

They let a fresh machine without ``~/.claude/projects`` see the whole product work: three sessions
of one small web project, one of them with a sub-agent, in the layout Claude Code uses today
(``<project folder>/<session>.jsonl`` and ``<session>/subagents/agent-<id>.jsonl``).

Run: python scripts/make_example_sessions.py
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "causantic" / "examples" / "sessions"
PROJECT_DIR = ROOT / "-home-dev-acme-shop"
CWD = "/home/dev/acme-shop"
NAMESPACE = uuid.UUID("6f1c9a52-3c1e-4d7e-9a55-0d3c7e1b2a90")


class Session:
    def __init__(self, name: str, start: datetime, agent_id: str | None = None, session_id: str | None = None):
        self.session_id = session_id or str(uuid.uuid5(NAMESPACE, name))
        self.agent_id = agent_id
        self.now = start
        self.parent: str | None = None
        self.records: list[dict[str, object]] = []
        self.name = name

    def _base(self, kind: str) -> dict[str, object]:
        self.now += timedelta(seconds=20)
        rid = str(uuid.uuid5(NAMESPACE, f"{self.name}/{len(self.records)}"))
        record: dict[str, object] = {
            "parentUuid": self.parent,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session_id,
            "version": "2.1.3",
            "gitBranch": "main",
            "type": kind,
            "uuid": rid,
            "timestamp": self.now.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        }
        if self.agent_id:
            record["agentId"] = self.agent_id
        self.parent = rid
        return record

    def user(self, text: str) -> None:
        record = self._base("user")
        record["message"] = {"role": "user", "content": text}
        self.records.append(record)

    def assistant(self, *blocks: dict[str, object]) -> None:
        record = self._base("assistant")
        record["message"] = {
            "id": f"msg_{len(self.records):04d}{self.name[:6]}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": list(blocks),
        }
        self.records.append(record)

    def result(self, tool_use_id: str, text: str, extra: dict[str, object] | None = None) -> None:
        record = self._base("user")
        record["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": text}],
        }
        if extra:
            record["toolUseResult"] = extra
        self.records.append(record)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records))


def text(body: str) -> dict[str, object]:
    return {"type": "text", "text": body}


def thinking(body: str) -> dict[str, object]:
    return {"type": "thinking", "thinking": body, "signature": "example"}


def tool(tool_id: str, name: str, **inputs: object) -> dict[str, object]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": inputs}


def login_redirect_session() -> Session:
    s = Session("login-redirect", datetime(2026, 11, 2, 9, 15, tzinfo=UTC))
    s.user(
        "After logging in, users on Safari get stuck in a redirect loop between /login and /dashboard. "
        "Can you find out why?"
    )
    s.assistant(
        thinking("Probably the session cookie is not being sent back. Check the auth middleware."),
        text("Let me look at the auth middleware and the cookie settings."),
        tool("toolu_ex_001", "Grep", pattern="redirect\\(.*/login", path="src"),
    )
    s.result("toolu_ex_001", "src/middleware/requireAuth.ts:14:    return res.redirect('/login?next=' + req.url)")
    s.assistant(tool("toolu_ex_002", "Read", file_path="/home/dev/acme-shop/src/middleware/requireAuth.ts"))
    s.result(
        "toolu_ex_002",
        "export function requireAuth(req, res, next) {\n  const token = req.cookies['sid'];\n"
        "  if (!token || !verifySession(token)) {\n    return res.redirect('/login?next=' + req.url)\n  }\n"
        "  next()\n}",
    )
    s.assistant(tool("toolu_ex_003", "Read", file_path="/home/dev/acme-shop/src/auth/session.ts"))
    s.result("toolu_ex_003", "res.cookie('sid', token, { httpOnly: true, secure: true, sameSite: 'none' })")
    s.assistant(
        text(
            "Found it. The `sid` cookie is set with `sameSite: 'none'` but the dev server runs on "
            "plain http, and Safari drops `SameSite=None` cookies that are not `Secure` over http, "
            "and it also blocks them as third-party under ITP. So `requireAuth` never sees the "
            "cookie and redirects to /login, which redirects back to /dashboard.\n\n"
            "Fix: use `sameSite: 'lax'` for the first-party session cookie:\n\n"
            "```ts\nres.cookie('sid', token, { httpOnly: true, secure: isProd, sameSite: 'lax' })\n```"
        ),
        tool(
            "toolu_ex_004",
            "Edit",
            file_path="/home/dev/acme-shop/src/auth/session.ts",
            old_string="sameSite: 'none'",
            new_string="sameSite: 'lax'",
        ),
    )
    s.result("toolu_ex_004", "The file /home/dev/acme-shop/src/auth/session.ts has been updated.")
    s.user("Great, can you add a regression test for the Safari redirect loop?")
    s.assistant(
        text("I'll add a test that logs in and follows redirects with a cookie jar that enforces SameSite rules."),
        tool(
            "toolu_ex_005",
            "Write",
            file_path="/home/dev/acme-shop/test/auth/redirectLoop.test.ts",
            content="it('does not loop between /login and /dashboard', async () => { ... })",
        ),
    )
    s.result("toolu_ex_005", "File created successfully at: /home/dev/acme-shop/test/auth/redirectLoop.test.ts")
    s.assistant(tool("toolu_ex_006", "Bash", command="npm test -- test/auth", description="Run auth tests"))
    s.result(
        "toolu_ex_006", "PASS test/auth/redirectLoop.test.ts\nPASS test/auth/login.test.ts\n\nTests: 9 passed, 9 total"
    )
    s.assistant(
        text("All auth tests pass, including the new redirect-loop regression test. Committing."),
        tool(
            "toolu_ex_007",
            "Bash",
            command="git commit -am 'Fix Safari login redirect loop: first-party session cookie uses SameSite=Lax'",
        ),
    )
    s.result(
        "toolu_ex_007",
        "[main 4e1c2aa] Fix Safari login redirect loop: first-party session cookie uses "
        "SameSite=Lax\n 2 files changed, 31 insertions(+), 1 deletion(-)",
    )
    return s


def flaky_test_session() -> tuple[Session, Session]:
    s = Session("flaky-invoice-test", datetime(2026, 11, 3, 14, 2, tzinfo=UTC))
    agent_id = "a5e0c41b7d2f9e3a1"
    s.user(
        "The invoice test `test_invoice_due_date` fails on CI about one run in ten but never locally. "
        "Please investigate."
    )
    s.assistant(
        text(
            "I'll have a sub-agent search the CI logs and the test for time-dependent code while I "
            "read the invoice module."
        ),
        tool(
            "toolu_ex_101",
            "Task",
            description="Find time-dependence in invoice tests",
            subagent_type="Explore",
            prompt="Search tests/billing and src/billing for code that depends on the current "
            "date, time zone or locale. Report file paths and lines.",
        ),
    )
    sub = Session(
        "flaky-invoice-test/explore", s.now + timedelta(seconds=2), agent_id=agent_id, session_id=s.session_id
    )
    sub.user(
        "Search tests/billing and src/billing for code that depends on the current date, time zone or "
        "locale. Report file paths and lines."
    )
    sub.assistant(tool("toolu_ex_151", "Grep", pattern="datetime.now|date.today|TZ", path="src/billing"))
    sub.result(
        "toolu_ex_151",
        "src/billing/invoice.py:42:    issued = date.today()\n"
        "src/billing/invoice.py:57:    return issued + timedelta(days=terms)",
    )
    sub.assistant(tool("toolu_ex_152", "Grep", pattern="freeze_time|TZ=", path="tests/billing"))
    sub.result("toolu_ex_152", "tests/billing/test_invoice.py:12:@freeze_time('2026-01-31 23:30:00')")
    sub.assistant(
        text(
            "`Invoice.due_date` uses `date.today()` (local time of the runner) while the test "
            "freezes time at 23:30 UTC. CI runners in UTC+1 cross midnight, so the due date shifts "
            "by one day. Files: src/billing/invoice.py:42, tests/billing/test_invoice.py:12."
        )
    )
    s.now = sub.now + timedelta(seconds=5)
    s.result(
        "toolu_ex_101",
        "`Invoice.due_date` uses `date.today()` (runner local time) while the test freezes "
        "time at 23:30 UTC; runners in UTC+1 cross midnight.\nagentId: " + agent_id,
        extra={"status": "completed", "agentId": agent_id},
    )
    s.assistant(
        text(
            "The flakiness comes from mixing local dates with a UTC-frozen clock. I'll make the "
            "invoice module use timezone-aware UTC dates."
        ),
        tool(
            "toolu_ex_102",
            "Edit",
            file_path="/home/dev/acme-shop/src/billing/invoice.py",
            old_string="issued = date.today()",
            new_string="issued = datetime.now(UTC).date()",
        ),
    )
    s.result("toolu_ex_102", "The file /home/dev/acme-shop/src/billing/invoice.py has been updated.")
    s.assistant(tool("toolu_ex_103", "Bash", command="TZ=Europe/Berlin pytest tests/billing -q"))
    s.result("toolu_ex_103", "12 passed in 0.84s")
    s.assistant(
        text(
            "Fixed: `test_invoice_due_date` now passes under TZ=Europe/Berlin too. Root cause was "
            "`date.today()` in src/billing/invoice.py."
        )
    )
    return s, sub


def rate_limit_session() -> Session:
    s = Session("rate-limit", datetime(2026, 11, 4, 10, 30, tzinfo=UTC))
    s.user("Let's add rate limiting to the public /api/search endpoint: 30 requests per minute per IP.")
    s.assistant(
        text("I'll use a sliding-window limiter backed by Redis so it works across instances."),
        tool("toolu_ex_201", "Bash", command="npm install rate-limiter-flexible"),
    )
    s.result("toolu_ex_201", "added 1 package in 2s")
    s.assistant(
        tool(
            "toolu_ex_202",
            "Write",
            file_path="/home/dev/acme-shop/src/middleware/rateLimit.ts",
            content="const limiter = new RateLimiterRedis({ storeClient: redis, points: 30, duration: 60 })",
        )
    )
    s.result("toolu_ex_202", "File created successfully at: /home/dev/acme-shop/src/middleware/rateLimit.ts")
    s.assistant(
        text(
            "Added `rateLimit` middleware (30 points per 60 s per IP, Redis-backed) and mounted it "
            "on /api/search. Requests over the limit get HTTP 429 with a Retry-After header."
        )
    )
    s.user(
        "The REDIS_URL in staging is redis://default:hunter2hunter2@cache.internal:6379, make sure the "
        "limiter reads it from the environment."
    )
    s.assistant(
        text("Done: the limiter now reads `process.env.REDIS_URL`; nothing is hard-coded."),
        tool("toolu_ex_203", "Bash", command="npm test -- test/api/search"),
    )
    s.result("toolu_ex_203", "PASS test/api/search.test.ts\nTests: 6 passed, 6 total")
    return s


def main() -> None:
    login = login_redirect_session()
    login.write(PROJECT_DIR / f"{login.session_id}.jsonl")
    flaky, sub = flaky_test_session()
    flaky.write(PROJECT_DIR / f"{flaky.session_id}.jsonl")
    sub.write(PROJECT_DIR / flaky.session_id / "subagents" / f"agent-{sub.agent_id}.jsonl")
    rate = rate_limit_session()
    rate.write(PROJECT_DIR / f"{rate.session_id}.jsonl")
    print(f"wrote example sessions under {ROOT}")


if __name__ == "__main__":
    main()
