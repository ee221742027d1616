"""Peak memory of ``causantic ingest`` on a session holding one huge tool output, before and after.

Usage: python benchmarks/ingest_memory.py [--sizes 5 50] [--base COMMIT]

For each size, a Claude Code session is written to a temporary folder: a prompt, one ``Bash`` call
and its output of that many megabytes of log lines (holding a ✓ and an emoji, as real logs do), which
Claude Code writes twice on the result's line (the tool_result's content and ``toolUseResult.stdout``),
then an answer. ``causantic ingest --no-embed`` then reads it in a fresh process (its own
``CAUSANTIC_HOME``), once with the source of ``--base`` (default: where this branch left main,
extracted with ``git archive``) and once with this worktree's, alternately; the process's peak
resident memory is read from its ``ru_maxrss`` (``os.wait4``). A session with a one-line output gives
what a process holds for any ingest (imports, the store), so the table shows the peak, its ratio to
the file's size, and what the huge output added to that baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
LOG = "2026-11-25 08:00:01 INFO worker {n} took job quokka-{n} in 12ms ✓ 😀\n"


def write_session(folder: Path, megabytes: float) -> Path:
    """A one-call Claude Code session whose Bash output is ``megabytes`` MB of log lines."""
    lines, size, n = [], 0, 0
    while size < megabytes * 1e6:
        line = LOG.format(n=n)
        lines.append(line)
        size += len(line.encode())
        n += 1
    output = "".join(lines)
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


def base_source(commit: str, folder: Path) -> Path:
    """The ``src`` folder of ``commit``, extracted under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / "base.tar"
    subprocess.run(["git", "-C", str(HERE), "archive", "-o", str(archive), commit, "src"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def peak_mb(source: Path, transcript: Path) -> float:
    """Peak resident memory (MB) of ``causantic ingest --no-embed transcript`` run from ``source``."""
    with tempfile.TemporaryDirectory(prefix="causantic-mem-") as home:
        env = {**os.environ, "PYTHONPATH": str(source), "CAUSANTIC_HOME": home}
        command = [sys.executable, "-m", "causantic", "ingest", "--no-embed", "--json", str(transcript)]
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stderr is not None
        out, err = process.stdout.read(), process.stderr.read()  # small: read before the wait
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise SystemExit(f"ingest failed ({source}): {err.decode()[-2000:]}")
        if json.loads(out).get("chunks", 1) == 0:
            raise SystemExit(f"ingest stored nothing ({source})")
    return usage.ru_maxrss * 1024 / 1e6  # kilobytes on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[5.0, 50.0], help="tool output sizes, MB")
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
        small = write_session(folder / "sessions", 0.0001)
        floor = {name: peak_mb(src, small) for name, src in sources.items()}
        print(f"A session with a one-line output: peak {', '.join(f'{n} {mb:.0f} MB' for n, mb in floor.items())}")
        print()
        header = f"{'output':>8} {'file':>8}  " + "  ".join(f"{name:>26}" for name in sources)
        print(header)
        print(f"{'':>8} {'':>8}  " + "  ".join(f"{'peak MB  ×file  added MB':>26}" for _ in sources))
        for size in args.sizes:
            # Written by a child: a parent that held the output would lend its resident pages to the
            # ingest processes it forks, and their peak would count them.
            code = "import sys; sys.path.insert(0, sys.argv[1]); import ingest_memory as m; print(m.write_session("
            code += "m.Path(sys.argv[2]), float(sys.argv[3])))"
            written = [sys.executable, "-c", code, str(Path(__file__).parent), str(folder / "sessions"), str(size)]
            path = Path(subprocess.run(written, check=True, capture_output=True, text=True).stdout.strip())
            file_mb = path.stat().st_size / 1e6
            cells = []
            for name, src in sources.items():
                peak = peak_mb(src, path)
                cells.append(f"{peak:>7.0f} {peak / file_mb:>7.1f}× {peak - floor[name]:>9.0f}")
            print(f"{size:>6g}MB {file_mb:>6.1f}MB  " + "  ".join(f"{c:>26}" for c in cells))
            path.unlink()
    print("\nThe file holds the output twice (content and toolUseResult.stdout); ×file is the peak over its size.")


if __name__ == "__main__":
    main()
