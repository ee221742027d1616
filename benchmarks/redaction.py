"""Redaction: recall on planted secrets, and false positives per MB of real transcripts.

Usage: python benchmarks/redaction.py [--corpus DIR] [--json OUT] [--show N]

Recall: realistic fake secrets of every planted kind (random values in the real formats) are
written into copies of real sessions in a temporary folder: in user prose, assistant code, a Bash
command and a tool result, some placed across the 200/600-character truncation points. The copies
are ingested by the product (embeddings off) and a secret counts as caught when no 8-character
piece of it is left in the stored chunks or the keyword index.

False positives: the product's redactor runs over every text block, tool input and tool result of
the real corpus (``../shared/corpus/claude-code``, public repositories, no live credentials), and
every replacement counts as a false positive: an upper bound, since the corpus holds a few example
keys. ``--show N`` prints N of them with context, per kind, to check by eye.

JSON: ``{"kinds": N, "planted": N, "caught": N, "false_positives_per_mb": x, ...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import string
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
# Real sessions the secrets are planted into (a small one and a long one).
HOSTS = (
    "marot__spotter/test/fixtures/transcripts/tool_heavy.jsonl",
    "marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
)
_PLACEHOLDER = re.compile(r"\[REDACTED:([\w\-]+)\]")

_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    """A random value; it holds a character of every class its alphabet has (as real keys do)."""
    classes = [c for c in (string.ascii_uppercase, string.ascii_lowercase, string.digits) if set(c) & set(alphabet)]
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if all(set(value) & set(c) for c in classes):
            return value


# kind -> (secret generator, sentence with {s})
KINDS: dict[str, tuple[Callable[[random.Random], str], str]] = {
    "aws-access-key": (
        lambda r: "AKIA" + _r(r, string.ascii_uppercase + string.digits, 16),
        "aws configure set aws_access_key_id {s}",
    ),
    "aws-secret-prose": (lambda r: _r(r, _B64, 40), "the secret key is {s} and it is for the prod account"),
    "aws-secret-env": (lambda r: _r(r, _B64, 40), "export AWS_SECRET_ACCESS_KEY={s}"),
    "github-classic": (lambda r: "ghp_" + _r(r, _ALNUM, 36), "git remote set-url origin https://{s}@github.com/x/y"),
    "github-fine": (lambda r: "github_pat_" + _r(r, _ALNUM + "_", 82), "use {s} for the CI job"),
    "gitlab": (lambda r: "glpat-" + _r(r, _ALNUM, 20), "GITLAB_TOKEN={s}"),
    "slack-bot": (lambda r: "xoxb-" + _r(r, string.digits, 12) + "-" + _r(r, _ALNUM, 24), "slack bot {s}"),
    "slack-webhook": (
        lambda r: (
            "T"
            + _r(r, string.ascii_uppercase + string.digits, 8)
            + "/B"
            + _r(r, string.ascii_uppercase + string.digits, 10)
            + "/"
            + _r(r, _ALNUM, 24)
        ),
        "post alerts to https://hooks.slack.com/services/{s} when the job fails",
    ),
    "stripe": (lambda r: "sk_live_" + _r(r, _ALNUM, 24), "stripe.api_key = '{s}'"),
    "google": (lambda r: "AIza" + _r(r, _ALNUM + "_-", 35), "maps key {s}"),
    "npm": (lambda r: "npm_" + _r(r, _ALNUM, 36), "//registry.npmjs.org/:_authToken={s}"),
    "huggingface": (lambda r: "hf_" + _r(r, _ALNUM, 34), "login with {s}"),
    "sendgrid-code": (
        lambda r: "SG." + _r(r, _ALNUM + "_-", 22) + "." + _r(r, _ALNUM + "_-", 43),
        "sg = SendGridAPIClient('{s}')",
    ),
    "sendgrid-prose": (
        lambda r: "SG." + _r(r, _ALNUM + "_-", 22) + "." + _r(r, _ALNUM + "_-", 43),
        "our sendgrid key is {s} for now",
    ),
    "azure-connection": (
        lambda r: _r(r, _B64, 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
    ),
    "azure-prose": (lambda r: _r(r, _B64, 86) + "==", "the storage account key is {s}"),
    "twilio-api-key": (lambda r: "SK" + _r(r, "0123456789abcdef", 32), "twilio api key sid {s}"),
    "twilio-account": (lambda r: "AC" + _r(r, "0123456789abcdef", 32), "client = Client('{s}', auth)"),
    "anthropic": (lambda r: "sk-ant-api03-" + _r(r, _ALNUM + "_-", 93) + "AA", "ANTHROPIC_API_KEY {s}"),
    "openai": (lambda r: "sk-proj-" + _r(r, _ALNUM, 48), "openai key {s}"),
    "jwt": (
        lambda r: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + _r(r, _ALNUM, 40) + "." + _r(r, _ALNUM + "_-", 43),
        "session cookie {s}",
    ),
    "bearer": (lambda r: _r(r, _ALNUM, 32), "curl -H 'Authorization: Bearer {s}' https://api.example.com"),
    "url-credentials": (lambda r: _r(r, _ALNUM, 16), "DATABASE_URL=postgres://app:{s}@db.internal:5432/app"),
    "password": (lambda r: _r(r, _ALNUM + "!#%", 14), 'DB_PASSWORD="{s}"'),
    "generic-token-prose": (lambda r: _r(r, _ALNUM, 32), "the deploy token is {s}, keep it safe"),
}
# Kinds also planted across the truncation points (tool result 600, tool input 200).
CUT_KINDS = ("github-classic", "npm", "google", "huggingface", "anthropic", "slack-bot")


@dataclass(frozen=True, slots=True)
class Planted:
    kind: str
    secret: str
    where: str


def plant_session(
    src: Path, dst: Path, rng: random.Random, kinds: dict[str, tuple[Callable[[random.Random], str], str]]
) -> list[Planted]:
    """Copy ``src`` to ``dst`` with one exchange per kind appended: a prompt, a Bash call and its result."""
    lines = src.read_text(encoding="utf-8").splitlines()
    last = next(json.loads(line) for line in reversed(lines) if '"sessionId"' in line)
    session, cwd = last.get("sessionId"), last.get("cwd", "/tmp")
    parent = last.get("uuid")
    planted: list[Planted] = []
    out = list(lines)

    def record(kind: str, role: str, content: object, n: int) -> dict[str, object]:
        nonlocal parent
        uuid = f"planted-{kind}-{n}-{rng.randrange(1 << 30)}"
        rec = {
            "type": role,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": session,
            "cwd": cwd,
            "timestamp": f"2099-01-01T00:00:{n % 60:02d}Z",
            "isSidechain": False,
            "message": {"role": role, "content": content},
        }
        if role == "assistant":
            rec["message"]["id"] = f"msg-{uuid}"  # type: ignore[index]
        parent = uuid
        return rec

    n = 0
    for kind, (make, sentence) in kinds.items():
        prose, code, command, result = (make(rng) for _ in range(4))
        call_id = f"toolu_{kind}_{n}"
        pad = "x" * (200 - len("DEPLOY=1 ") - 10) if kind in CUT_KINDS else ""
        head = "log line " * 80
        cut_at = 600 - len(head) - 12 if kind in CUT_KINDS else 0
        out.append(json.dumps(record(kind, "user", "Please check this: " + sentence.format(s=prose), n)))
        out.append(
            json.dumps(
                record(
                    kind,
                    "assistant",
                    [
                        {"type": "text", "text": "Here is the code:\n```\n" + sentence.format(s=code) + "\n```"},
                        {
                            "type": "tool_use",
                            "id": call_id,
                            "name": "Bash",
                            "input": {"command": f"DEPLOY=1 {pad}" + sentence.format(s=command)},
                        },
                    ],
                    n + 1,
                )
            )
        )
        out.append(
            json.dumps(
                record(
                    kind,
                    "user",
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": call_id,
                            "content": head[:cut_at] + sentence.format(s=result) + "\nok",
                        }
                    ],
                    n + 2,
                )
            )
        )
        planted += [
            Planted(kind, prose, "prose"),
            Planted(kind, code, "code"),
            Planted(kind, command, "bash" + (" (cut)" if pad else "")),
            Planted(kind, result, "result" + (" (cut)" if cut_at else "")),
        ]
        n += 3
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return planted


def leaked(secret: str, stored: str) -> bool:
    """Any 8-character piece of the secret in the stored text."""
    return any(secret[i : i + 8] in stored for i in range(max(1, len(secret) - 7)))


def stored_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        parts = [r[0] for r in conn.execute("SELECT content FROM chunks")]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in sorted(tables):
            if table.startswith("chunks_fts") and table.endswith("_content"):
                parts += [str(v) for row in conn.execute(f'SELECT * FROM "{table}"') for v in row]
    finally:
        conn.close()
    return "\n".join(parts)


def run_recall(corpus: Path, seed: int = 7) -> tuple[list[Planted], list[Planted]]:
    """Plant every kind into copies of the host sessions, ingest them; (planted, leaked)."""
    from causantic import Memory
    from causantic.config import Config, db_path

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="causantic-redaction-") as tmp:
        os.environ["CAUSANTIC_HOME"] = str(Path(tmp) / "home")
        folder = Path(tmp) / "sessions"
        folder.mkdir()
        planted: list[Planted] = []
        for host in HOSTS:
            planted += plant_session(corpus / host, folder / Path(host).name, rng, KINDS)
        config = Config()
        with Memory(config=config) as memory:
            memory.ingest([folder], embed=False)
        stored = stored_text(db_path(config))
        shutil.rmtree(folder)
    return planted, [p for p in planted if leaked(p.secret, stored)]


def corpus_texts(corpus: Path) -> list[str]:
    """Every text block, tool input and tool result of every transcript, as the product reads them."""
    from causantic.transcripts.model import TextBlock, ToolCall, ToolResult
    from causantic.transcripts.reader import read_file

    texts: list[str] = []
    for path in sorted(corpus.rglob("*.jsonl")):
        transcripts, _ = read_file(path)
        for transcript in transcripts:
            for message in transcript.messages:
                for block in message.blocks:
                    if isinstance(block, TextBlock):
                        texts.append(block.text)
                    elif isinstance(block, ToolResult):
                        texts.append(block.text)
                    elif isinstance(block, ToolCall):
                        texts.append(json.dumps(block.input, ensure_ascii=False))
    return texts


def run_false_positives(texts: list[str], show: int) -> tuple[Counter[str], float, float]:
    """(replacements per kind, megabytes scanned, seconds)."""
    from causantic.config import Config
    from causantic.ingest.redact import redactor_from

    redact = redactor_from(Config().redaction)
    kinds: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    started = time.perf_counter()
    size = 0
    for text in texts:
        size += len(text.encode("utf-8", "surrogatepass"))
        out = redact(text)
        if out is text or "[REDACTED:" not in out:
            continue
        for match in _PLACEHOLDER.finditer(out):
            kind = match.group(1)
            kinds[kind] += 1
            if shown[kind] < show:
                shown[kind] += 1
                context = out[max(0, match.start() - 60) : match.end() + 20].replace("\n", " ")
                print(f"  {kind:<22} …{context}…")
    return kinds, size / 1e6, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--show", type=int, default=0, help="print N replacements per kind from the real corpus")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"{args.corpus} does not exist; pass --corpus.", file=sys.stderr)
        return 2
    planted, missed = run_recall(args.corpus)
    texts = corpus_texts(args.corpus)
    fp_kinds, megabytes, seconds = run_false_positives(texts, args.show)
    fp_total = sum(fp_kinds.values())
    figures = {
        "kinds": len(KINDS),
        "planted": len(planted),
        "caught": len(planted) - len(missed),
        "false_positives_per_mb": round(fp_total / megabytes, 3),
        "false_positives": fp_total,
        "false_positives_by_kind": dict(fp_kinds.most_common()),
        "corpus_mb": round(megabytes, 2),
        "redact_mb_per_s": round(megabytes / seconds, 1),
        "missed": [f"{p.kind} ({p.where})" for p in missed],
    }
    print(
        f"planted          {figures['planted']} secrets of {figures['kinds']} kinds in copies of "
        f"{len(HOSTS)} real sessions"
    )
    print(
        f"caught           {figures['caught']} / {figures['planted']} "
        f"(recall {figures['caught'] / figures['planted']:.3f})"
    )
    for item in figures["missed"]:  # type: ignore[union-attr]
        print(f"  missed         {item}")
    print(
        f"false positives  {fp_total} in {megabytes:.1f} MB of real transcripts = "
        f"{figures['false_positives_per_mb']} per MB (upper bound: every replacement counted)"
    )
    for kind, count in fp_kinds.most_common():
        print(f"  {kind:<22} {count}")
    print(f"redactor speed   {figures['redact_mb_per_s']} MB/s over the corpus text")
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
