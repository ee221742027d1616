"""Peak memory of ``causantic ingest`` on a session holding one huge tool output, and on a big file
of normal lines, before and after; with ``--corpus``, the normal corpus's ingest time and its store.

Usage: python benchmarks/ingest_memory.py [--kinds claude codex gemini damaged cut norecord codexjson]
       [--sizes 5 50] [--many 200]
       python benchmarks/ingest_memory.py --corpus [--rounds 3]
       [--base COMMIT]

For each kind and size, a session is written to a temporary folder in the shape of its agent's real
files, holding one tool output of that many megabytes of log lines (with a ✓ and an emoji, as real
logs have):

- ``claude``: a Claude Code session: a prompt, one ``Bash`` call and its output, which Claude Code
  writes twice on the result's line (the tool_result's content and ``toolUseResult.stdout``), then
  an answer;
- ``codex``: the first 40 records of a real Codex rollout of the corpus (``../shared/corpus/codex``,
  the Entire benchmark's, Codex 0.14x) with its first command output blown up (``Chunk ID`` …
  ``Output:`` header, then the log);
- ``gemini``: a real Gemini CLI session of the corpus (``run_shell_command`` of ``echo``; one JSON
  document, pretty-printed as Gemini CLI writes it) with that output blown up (``Output: `` log
  ``Process Group PGID``), its ``resultDisplay`` holding the log again, as Gemini CLI writes it.

Damaged and unusual files, of the same sizes:

- ``damaged``: the ``claude`` session with its result's line damaged after the output (``false``
  written ``fals``): the line is dropped and counted, the rest of the session kept;
- ``cut``: the ``claude`` session cut inside its result's output, as a file being written is (its
  truncated last line);
- ``norecord``: a file of that many megabytes holding no record: JSON lines each cut short (a
  damaged file, nothing stored);
- ``geminicut``: the ``gemini`` session cut three quarters into its output (caught while Gemini CLI
  rewrites it: nothing stored);
- ``codexjson``: the ``codex`` rollout with its output in the older JSON form
  (``{"output": …, "metadata": {"exit_code": 0}}`` as a string).

``--many MB`` adds a Claude Code file of about that many megabytes of normal lines: the corpus's
Claude Code sessions' messages one after another, in one session (uuids made unique per copy).

``causantic ingest --no-embed`` then reads each file in a fresh process (its own ``CAUSANTIC_HOME``),
once with the source of ``--base`` (default: where this branch left main, extracted with ``git
archive``) and once with this worktree's, alternately; the process's peak resident memory is read
from its ``ru_maxrss`` (``os.wait4``). A session of the same kind with a one-line output gives what a
process holds for any ingest (imports, the store), so the table shows the peak, its ratio to the
file's size, and what the file added to that baseline; the last column is this branch's peak over
the base's.

``--corpus`` ingests each source folder of ``../shared/corpus`` (Claude Code, Codex, Gemini, Cursor and
the other agents') with
both sources, alternately, ``--rounds`` times each, and prints the best wall seconds of each (the
whole process: start-up, reading, chunking, the store), their ratio and the peaks; then it compares
the two stores row by row: every chunk (all columns but ``created_at``), edge (but ``id`` and
``created_at``), session, file checkpoint (but ``ingested_at``) and project (its path and name).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CORPUS = HERE.parent / "shared" / "corpus"
LOG = "2026-11-25 08:00:01 INFO worker {n} took job quokka-{n} in 12ms ✓ 😀\n"
CODEX_ROLLOUT = CORPUS / "codex/blackgirlbytes__entire-token-costs-benchmark-tests/a7/1156299398/0/full.jsonl"
GEMINI_SESSION = CORPUS / "gemini/computermode__test-repo/72/9ac91fce19/0/full.jsonl"
CODEX_HEADER = (
    "Chunk ID: e63726\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\n"
)


def log_text(megabytes: float) -> str:
    """``megabytes`` MB (of UTF-8) of log lines."""
    lines, size, n = [], 0, 0
    while size < megabytes * 1e6:
        line = LOG.format(n=n)
        lines.append(line)
        size += len(line.encode())
        n += 1
    return "".join(lines)


def write_claude(folder: Path, megabytes: float) -> Path:
    """A one-call Claude Code session whose Bash output is ``megabytes`` MB of log lines."""
    output = log_text(megabytes)
    call = {"type": "tool_use", "id": "call-1", "name": "Bash", "input": {"command": "cat worker.log"}}
    result = {"type": "tool_result", "tool_use_id": "call-1", "content": output, "is_error": False}
    records = [
        ("user", "why does the nightly job hang?", {}),
        ("assistant", [call], {}),
        ("user", [result], {"toolUseResult": {"stdout": output, "stderr": "", "interrupted": False}}),
        ("assistant", [{"type": "text", "text": "The worker loop never yields."}], {}),
    ]
    path = folder / "-work-app" / f"s-{megabytes:g}mb.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for n, (kind, content, extra) in enumerate(records):
            message: dict[str, object] = {"role": kind, "content": content}
            if kind == "assistant":
                message["id"] = f"msg_{n}"
            record = {
                "type": kind,
                "uuid": f"u-{n}",
                "parentUuid": f"u-{n - 1}" if n else None,
                "sessionId": path.stem,
                "cwd": "/work/app",
                "timestamp": f"2026-11-25T08:0{n}:00Z",
                "message": message,
                **extra,
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def write_codex(folder: Path, megabytes: float, older_json: bool = False) -> Path:
    """The corpus rollout's first 40 records, its first command output ``megabytes`` MB of log lines
    (``older_json``: in the older Codex's JSON form, the text inside ``{"output": …, "metadata": …}``)."""
    path = folder / "codex" / f"rollout-2026-06-23T07-21-00-{megabytes:g}mb.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    blown = False
    with CODEX_ROLLOUT.open("rb") as source, path.open("w") as handle:
        for n, line in enumerate(source):
            if n == 40:
                break
            record = json.loads(line)
            payload = record.get("payload") or {}
            if not blown and payload.get("type") == "function_call_output":
                if older_json:
                    wrapped = {"output": log_text(megabytes), "metadata": {"exit_code": 0, "duration_seconds": 0.2}}
                    payload["output"] = json.dumps(wrapped, ensure_ascii=False)
                else:
                    payload["output"] = CODEX_HEADER + log_text(megabytes)
                blown = True
            handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    assert blown, "no command output in the first 40 records"
    return path


def write_gemini(folder: Path, megabytes: float) -> Path:
    """The corpus's Gemini session, its shell output ``megabytes`` MB of log lines (twice)."""
    document = json.loads(GEMINI_SESSION.read_bytes())
    call = next(c for m in document["messages"] for c in m.get("toolCalls") or [])
    output = log_text(megabytes)
    call["result"][0]["functionResponse"]["response"]["output"] = f"Output: {output}\nProcess Group PGID: 56705"
    call["resultDisplay"] = output
    path = folder / "gemini" / f"session-2026-03-17T22-22-{megabytes:g}mb.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        json.dump(document, handle, ensure_ascii=False, indent=2)
    return path


def write_damaged(folder: Path, megabytes: float) -> Path:
    """The ``claude`` session with its result's line made invalid JSON after the output."""
    path = write_claude(folder, megabytes)
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"is_error": false', b'"is_error": fals')
    path.write_bytes(b"\n".join(lines))
    return path


def write_cut(folder: Path, megabytes: float) -> Path:
    """The ``claude`` session cut halfway through its result's output (a file being written)."""
    path = write_claude(folder, megabytes)
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][: len(lines[2]) // 4])
    return path


def write_geminicut(folder: Path, megabytes: float) -> Path:
    """The ``gemini`` session cut three quarters into its output, as a document being rewritten."""
    whole = write_gemini(folder, megabytes)
    data = whole.read_bytes()
    whole.unlink()
    path = whole.with_name(f"session-2026-03-17T22-22-cut-{megabytes:g}mb.json")  # nothing stored: -cut-
    path.write_bytes(data[: data.index(b"quokka-0 ") + int(megabytes * 750_000)])
    return path


def write_norecord(folder: Path, megabytes: float) -> Path:
    """A file of ``megabytes`` MB of JSON lines each cut short: no record at all."""
    path = folder / "-work-broken" / f"broken-{megabytes:g}mb.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    size, n = 0, 0
    with path.open("w") as handle:
        while size < megabytes * 1e6:
            line = f'{{"type": "user", "uuid": "u-{n}", "message": {{"content": "{LOG.format(n=n).strip()}\n'
            handle.write(line)
            size += len(line.encode())
            n += 1
    return path


def write_codexjson(folder: Path, megabytes: float) -> Path:
    """The ``codex`` rollout with its command output in the older JSON form."""
    return write_codex(folder, megabytes, older_json=True)


def write_many(folder: Path, megabytes: float) -> Path:
    """A Claude Code file of about ``megabytes`` MB of normal lines: the messages of the corpus's
    Claude Code sessions (not sub-agent files), one copy after another, all in one session."""
    sources = sorted(
        p
        for p in (CORPUS / "claude-code").rglob("*.jsonl")
        if not p.name.startswith("agent-") and "subagents" not in p.parts
    )
    path = folder / "-work-many" / f"many-{megabytes:g}mb.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    size, copy = 0, 0
    with path.open("wb") as handle:
        while size < megabytes * 1e6:
            for source in sources:
                for line in source.read_bytes().splitlines():
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if type(record) is not dict or record.get("type") not in ("user", "assistant"):
                        continue
                    record["sessionId"] = "many"
                    for key in ("uuid", "parentUuid"):
                        if isinstance(record.get(key), str):
                            record[key] = f"c{copy}-{record[key]}"
                    message = record.get("message")
                    if isinstance(message, dict) and isinstance(message.get("id"), str):
                        message["id"] = f"c{copy}-{message['id']}"
                    out = json.dumps(record, ensure_ascii=False).encode() + b"\n"
                    handle.write(out)
                    size += len(out)
                if size >= megabytes * 1e6:
                    break
            copy += 1
    return path


WRITERS: dict[str, Callable[[Path, float], Path]] = {
    "claude": write_claude,
    "codex": write_codex,
    "gemini": write_gemini,
    "many": write_many,
    "damaged": write_damaged,
    "cut": write_cut,
    "norecord": write_norecord,
    "geminicut": write_geminicut,
    "codexjson": write_codexjson,
}
# The session of one line each kind is measured against (what a process holds for any ingest).
FLOORS = {"many": "claude", "damaged": "claude", "cut": "claude", "norecord": "claude", "codexjson": "codex"}
FLOORS["geminicut"] = "gemini"
KINDS = ["claude", "codex", "gemini", "damaged", "cut", "norecord", "geminicut", "codexjson"]


def written(kind: str, folder: Path, megabytes: float) -> Path:
    """The session of ``kind`` written by a child: a parent that held the output would lend its
    resident pages to the ingest processes it forks, and their peak would count them."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); import ingest_memory as m; "
    code += "print(m.WRITERS[sys.argv[2]](m.Path(sys.argv[3]), float(sys.argv[4])))"
    command = [sys.executable, "-c", code, str(Path(__file__).parent), kind, str(folder), str(megabytes)]
    return Path(subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip())


def base_source(commit: str, folder: Path) -> Path:
    """The ``src`` folder of ``commit``, extracted under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / "base.tar"
    subprocess.run(["git", "-C", str(HERE), "archive", "-o", str(archive), commit, "src"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def ingest(source: Path, transcript: Path, home: Path) -> tuple[float, float, dict[str, object]]:
    """(peak resident MB, wall seconds, --json report) of ``causantic ingest --no-embed transcript``
    run from ``source`` into ``home``."""
    env = {**os.environ, "PYTHONPATH": str(source), "CAUSANTIC_HOME": str(home)}
    command = [sys.executable, "-m", "causantic", "ingest", "--no-embed", "--json", str(transcript)]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()  # small: read before the wait
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"ingest failed ({source}): {err.decode()[-2000:]}")
    report = json.loads(out)
    if report.get("chunks_added", 1) == 0 and not any(k in transcript.name for k in ("broken-", "-cut-")):
        raise SystemExit(f"ingest stored nothing ({source})")
    return usage.ru_maxrss * 1024 / 1e6, seconds, report  # kilobytes on Linux


def peak_mb(source: Path, transcript: Path) -> float:
    """Peak resident memory (MB) of ``causantic ingest --no-embed transcript`` run from ``source``."""
    with tempfile.TemporaryDirectory(prefix="causantic-mem-") as home:
        return ingest(source, transcript, Path(home))[0]


def memory_table(sources: dict[str, Path], folder: Path, kinds: list[str], sizes: list[float], many: float) -> None:
    cases = [(kind, size) for kind in kinds for size in sizes] + ([("many", many)] if many else [])
    floors: dict[str, dict[str, float]] = {}
    names = list(sources)
    print(f"{'session':<8} {'output':>8} {'file':>8}  " + "  ".join(f"{name:>26}" for name in names) + "  this/base")
    print(f"{'':<8} {'':>8} {'':>8}  " + "  ".join(f"{'peak MB  ×file  added MB':>26}" for _ in names))
    for kind, size in cases:
        floor_kind = FLOORS.get(kind, kind)
        if floor_kind not in floors:
            small = written(floor_kind, folder / "floor", 0.0001)
            floors[floor_kind] = {name: peak_mb(src, small) for name, src in sources.items()}
            small.unlink()
            shown = ", ".join(f"{n} {mb:.0f} MB" for n, mb in floors[floor_kind].items())
            print(f"{floor_kind:<8} {'1 line':>8} {'':>8}  ({shown})")
        path = written(kind, folder / "sessions", size)
        file_mb = path.stat().st_size / 1e6
        peaks = {name: peak_mb(src, path) for name, src in sources.items()}
        cells = [f"{p:>7.0f} {p / file_mb:>7.2f}× {p - floors[floor_kind][n]:>9.0f}" for n, p in peaks.items()]
        label = "normal" if kind == "many" else f"{size:g}MB"
        ratio = peaks[names[1]] / peaks[names[0]]
        print(f"{kind:<8} {label:>8} {file_mb:>6.1f}MB  " + "  ".join(f"{c:>26}" for c in cells) + f"  {ratio:>8.2f}")
        path.unlink()
    print("\nA Claude Code file holds the output twice (content and toolUseResult.stdout), a Gemini session too")
    print("(output and resultDisplay); ×file is the peak over the file's size; 'added' is above the one-line session.")


def _rows(database: Path) -> dict[str, list[tuple[object, ...]]]:
    """What the store holds, table by table, without the columns that say when it was written."""
    queries = {
        "chunks": "SELECT * FROM chunks ORDER BY id",
        "edges": "SELECT source_chunk_id, target_chunk_id, edge_type, reference_type, initial_weight FROM edges"
        " ORDER BY 1, 2, 4",
        "sessions": "SELECT * FROM sessions ORDER BY id",
        "files": "SELECT path, size, mtime_ns, skipped_lines FROM files ORDER BY path",
        "projects": "SELECT path, name FROM projects ORDER BY path",
    }
    with sqlite3.connect(database) as conn:
        chunk_columns = [row[1] for row in conn.execute("PRAGMA table_xinfo(chunks)")]
        out = {table: conn.execute(query).fetchall() for table, query in queries.items()}
    keep = [i for i, name in enumerate(chunk_columns) if name not in ("created_at", "rowid")]
    out["chunks"] = [tuple(row[i] for i in keep if i < len(row)) for row in out["chunks"]]
    return out


def corpus_table(sources: dict[str, Path], folder: Path, rounds: int) -> None:
    names = list(sources)
    print(f"{'corpus':<12} {'MB':>6}  " + "  ".join(f"{name + ' s':>14} {'peak MB':>8}" for name in names))
    print(f"{'':<12} {'':>6}  " + "  ".join(f"{'(best)':>14} {'':>8}" for _ in names) + "  this/base s   stores")
    for source in ("claude-code", "codex", "gemini", "cursor", "other-agents"):
        corpus = CORPUS / source
        mb = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file()) / 1e6
        best: dict[str, tuple[float, float]] = {}
        stores: dict[str, Path] = {}
        for n in range(rounds):
            for name, src in sources.items() if n % 2 == 0 else reversed(sources.items()):
                home = folder / f"{source}-{names.index(name)}-{n}"
                peak, seconds, _ = ingest(src, corpus, home)
                if name not in best or seconds < best[name][0]:
                    best[name] = (seconds, peak)
                stores[name] = home / "memory.db"
        rows = [_rows(stores[name]) for name in names]
        differ = [table for table in rows[0] if rows[0][table] != rows[1][table]]
        counted = ", ".join(f"{len(rows[0][t]):,} {t if len(rows[0][t]) != 1 else t[:-1]}" for t in ("chunks", "edges"))
        said = f"same ({counted})" if not differ else f"DIFFER in {', '.join(differ)}"
        cells = "  ".join(f"{best[name][0]:>14.2f} {best[name][1]:>8.0f}" for name in names)
        print(f"{source:<12} {mb:>6.1f}  {cells}  {best[names[1]][0] / best[names[0]][0]:>11.3f}   {said}")
    print(f"\nWall seconds of the whole process (start-up included), best of {rounds}, the two alternating.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS[:3], help="(default: the first three)")
    parser.add_argument("--sizes", type=float, nargs="+", default=[5.0, 50.0], help="tool output sizes, MB")
    parser.add_argument(
        "--many", type=float, default=200.0, help="MB of normal Claude Code lines in one file (0: none)"
    )
    parser.add_argument("--corpus", action="store_true", help="the corpus's ingest time and stores, base and this")
    parser.add_argument("--rounds", type=int, default=3, help="--corpus: runs of each source")
    parser.add_argument("--base", default=None, help="commit to compare with (default: merge-base with main)")
    args = parser.parse_args()
    base = (
        args.base
        or subprocess.run(
            ["git", "-C", str(HERE), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    with tempfile.TemporaryDirectory(prefix="causantic-bigtool-") as tmp:
        folder = Path(tmp)
        sources = {f"base {base[:7]}": base_source(base, folder / "base"), "this branch": HERE / "src"}
        if args.corpus:
            corpus_table(sources, folder, args.rounds)
        else:
            memory_table(sources, folder, args.kinds, args.sizes, args.many)


if __name__ == "__main__":
    main()
