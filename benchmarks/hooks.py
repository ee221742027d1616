"""Hook latency: session-start (briefing) and pre-compact (time until Claude Code may go on).

Usage: python benchmarks/hooks.py [PATH] [--runs N] [--json OUT]

The store (a temporary CAUSANTIC_HOME) holds the transcripts under PATH (default: the example
sessions and every real project of daaain__claude-code-log in the shared corpus), without vectors:
no hook reads them. Each run is a fresh process fed the hook JSON on stdin, as Claude Code runs it:

- session-start, new session: the briefing is built (cache miss);
- session-start, resume: the same session again (served from the per-session cache);
- session-start through the ``causantic hook`` CLI instead of ``python -m causantic.hooks``;
- pre-compact: until the hook exits; its detached worker's ingest is waited for between runs and
  not counted.

Baselines measured in the same run, same way: ``python -c pass`` and a minimal Python hook that
parses stdin and prints a JSON object. Goal: session-start p95 ≤ 300 ms; pre-compact ≤ 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
EXAMPLES = SRC / "causantic" / "examples" / "sessions"
REAL = REPO.parent / "shared" / "corpus" / "claude-code" / "daaain__claude-code-log/test/test_data/real_projects"
MINIMAL_HOOK = "import json, sys; json.load(sys.stdin); print(json.dumps({'hookSpecificOutput': {}}))"
ACME = "/home/dev/acme-shop"


def timed(command: list[str], payload: str, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, input=payload, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - started, done.stdout


def start_payload(session: str) -> str:
    return json.dumps(
        {
            "session_id": session,
            "cwd": ACME,
            "hook_event_name": "SessionStart",
            "source": "startup",
            "transcript_path": f"/nowhere/{session}.jsonl",
        }
    )


def wait_for_workers(marker: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = False
        for entry in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                command = entry.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            running = running or ("ingest-worker" in command and marker in command)
        if not running:
            return
        time.sleep(0.1)


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered) * 1000, 1), "p95": round(p95 * 1000, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()
    targets = args.paths or [EXAMPLES, REAL]
    python = sys.executable
    hook = [python, "-m", "causantic.hooks"]
    with tempfile.TemporaryDirectory(prefix="causantic-bench-") as tmp:
        env = {
            **os.environ,
            "CAUSANTIC_HOME": str(Path(tmp) / "home"),
            "CAUSANTIC_EMBEDDING_EAGER": "false",
            "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p),
        }
        done = subprocess.run(
            [python, "-m", "causantic", "ingest", "--json", "--no-embed", *map(str, targets)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        chunks = json.loads(done.stdout)["chunks_added"]
        transcript = Path(tmp) / "projects" / "-home-dev-acme-shop" / "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec.jsonl"
        transcript.parent.mkdir(parents=True)
        shutil.copyfile(EXAMPLES / "-home-dev-acme-shop" / transcript.name, transcript)
        compact = json.dumps(
            {
                "session_id": transcript.stem,
                "transcript_path": str(transcript),
                "cwd": ACME,
                "hook_event_name": "PreCompact",
                "trigger": "auto",
                "custom_instructions": "",
            }
        )

        runs: dict[str, list[float]] = {
            name: []
            for name in (
                "python -c pass",
                "minimal python hook",
                "session-start (new session)",
                "session-start (resume)",
                "session-start via `causantic hook`",
                "pre-compact (until exit)",
            )
        }
        sizes = []
        for _ in range(args.runs):  # interleaved, so load on the machine hits every series alike
            session = str(uuid.uuid4())
            runs["python -c pass"].append(timed([python, "-c", "pass"], "", env)[0])
            runs["minimal python hook"].append(timed([python, "-c", MINIMAL_HOOK], start_payload(session), env)[0])
            seconds, out = timed([*hook, "session-start"], start_payload(session), env)
            runs["session-start (new session)"].append(seconds)
            sizes.append(len(json.loads(out)["hookSpecificOutput"]["additionalContext"]))
            runs["session-start (resume)"].append(timed([*hook, "session-start"], start_payload(session), env)[0])
            runs["session-start via `causantic hook`"].append(
                timed(
                    [python, "-m", "causantic", "hook", "session-start"],
                    start_payload(str(uuid.uuid4())),
                    env,
                )[0]
            )
            runs["pre-compact (until exit)"].append(timed([*hook, "pre-compact"], compact, env)[0])
            wait_for_workers(str(transcript))
    figures = {name: quantiles(values) for name, values in runs.items()}
    base = figures["python -c pass"]["p50"]
    print(f"store: {chunks} chunks; briefing {statistics.median(sizes):.0f} characters; {args.runs} runs per series")
    print(f"{'series':<36} {'p50 ms':>8} {'p95 ms':>8} {'×python':>8}")
    for name, q in figures.items():
        print(f"{name:<36} {q['p50']:>8.1f} {q['p95']:>8.1f} {q['p50'] / base:>8.1f}")
    start_ok = figures["session-start (new session)"]["p95"] <= 300
    compact_ok = figures["pre-compact (until exit)"]["p95"] <= 1000
    print(
        f"goals: session-start p95 ≤ 300 ms — {'met' if start_ok else 'NOT met on this machine'}; "
        f"pre-compact ≤ 1 s — {'met' if compact_ok else 'NOT met on this machine'}"
    )
    if args.json_out:
        result: dict[str, Any] = {
            "chunks": chunks,
            "runs": args.runs,
            "milliseconds": figures,
            "ratio_to_python": {k: round(v["p50"] / base, 2) for k, v in figures.items()},
        }
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
