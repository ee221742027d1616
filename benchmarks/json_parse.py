"""JSON line parsing for the transcript reader: orjson vs the standard library, on the real corpus.

Usage: python benchmarks/json_parse.py [--corpus DIR] [--rounds N] [--json OUT]

Every line of every ``.jsonl`` transcript under the corpus (``../shared/corpus``) is read into
memory once as bytes. Each parser then decodes all of them and keeps the values (as the reader
does; keeping them is much of the cost), ``--rounds`` times interleaved (so a burst of load from
other processes hits every parser alike), and the best round counts:

- ``json.loads(str)``: each line decoded, then the standard library (the baseline: what the reader
  did before, through ``JSONDecoder.scan_once``, a private API);
- ``json.loads(bytes)``: the standard library on the raw line (it sniffs the encoding first);
- ``orjson.loads(bytes)``: what ``causantic.transcripts.reader`` uses on its fast path;
- ``reader.read_records``: the product's whole line loop (orjson, with its fallback for lines
  orjson refuses), reading each file a line at a time (from the page cache: the files were just read).

It also prints the cost of adding orjson: its import time (a fresh interpreter, ``-X importtime``)
and its installed size. Timings come with the machine's load average; trust the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"


def best_of(rounds: int, runs: dict[str, Callable[[], Any]]) -> dict[str, float]:
    best = {name: float("inf") for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def import_ms(module: str) -> float:
    """Self plus cumulative import time of ``module`` in a fresh interpreter, in ms."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, check=True
    ).stderr
    line = next(line for line in out.splitlines() if line.rstrip().endswith(f"| {module}"))
    return int(line.split("|")[1]) / 1000


def installed_kb(module: str) -> float:
    import importlib

    root = Path(importlib.import_module(module).__file__ or "").parent
    files = root.rglob("*") if root.name == module else root.glob(f"{module}*")
    return sum(p.stat().st_size for p in files if p.is_file()) / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus} (the shared transcripts sit beside the repository)", file=sys.stderr)
        return 2
    import orjson

    from causantic.transcripts.reader import SkipReport, read_records

    paths = sorted(args.corpus.rglob("*.jsonl"))
    files = [p.read_bytes() for p in paths]
    lines = [line for data in files for line in data.split(b"\n") if line.strip()]
    megabytes = sum(len(line) for line in lines) / 1e6

    def each(parse: Callable[[Any], Any], items: list[Any]) -> Callable[[], list[Any]]:
        """Parse every line and keep the values, as the reader does (keeping them is most of the cost)."""

        def run() -> list[Any]:
            kept = []
            for item in items:
                try:
                    kept.append(parse(item))
                except ValueError:  # a damaged line: every parser pays for finding out
                    pass
            return kept

        return run

    texts = [line.decode("utf-8", errors="replace") for line in lines]
    best = best_of(
        args.rounds,
        {
            "json.loads(str)": each(json.loads, texts),
            "json.loads(bytes)": each(json.loads, lines),
            "orjson.loads(bytes)": each(orjson.loads, lines),
            "reader.read_records": lambda: [read_records(path, SkipReport()) for path in paths],
        },
    )
    base = best["json.loads(str)"]
    print(f"corpus           {len(files)} files, {len(lines)} lines, {megabytes:.1f} MB ({args.corpus})")
    print(f"load average     {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores, shared)")
    for name, seconds in best.items():
        print(f"{name:<20} {seconds * 1000:8.1f} ms  {megabytes / seconds:7.1f} MB/s  {base / seconds:5.2f}× baseline")
    cost = {"orjson_import_ms": import_ms("orjson"), "json_import_ms": import_ms("json")}
    size = installed_kb("orjson")
    print(
        f"orjson cost      import {cost['orjson_import_ms']:.1f} ms (json: {cost['json_import_ms']:.1f} ms), "
        f"installed {size:.0f} kB, no dependencies"
    )
    if args.json_out:
        figures = {name: round(seconds, 4) for name, seconds in best.items()}
        args.json_out.write_text(json.dumps({**figures, **cost, "orjson_installed_kb": round(size), "mb": megabytes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
