"""The first ingest after an upgrade that changed ingest's rules, beside one that skips every file.

Usage: python benchmarks/rules_upgrade.py [PATH] [--repeat N] [--embed] [--json OUT]

PATH defaults to ../shared/corpus/claude-code. A store is written as a release before today's rules
would have left it: Claude Code's compaction instruction read as a prompt, prompt-suggestion agents
ingested, its file marks one ingest-rules version behind (``causantic.ingest.rules.VERSION``). Then,
each ``--repeat`` times on a fresh copy of that store, with both cores as ``causantic batch-ingest``:
a plain ingest, which re-reads every file (the rules changed since it was read), and right after it
a second plain ingest, which skips every file: the baseline, measured in the same run. Printed:
seconds of each (the best of the repeats), their ratio, the chunks the re-read added, updated and
dropped, and whether the store then equals a fresh ingest of PATH (chunk ids, text hashes, times,
edges). ``--embed`` embeds as the default configuration does: the re-read then embeds only the
chunks whose text changed (the older store is embedded first, untimed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"


def _ingest(home: Path, path: Path, *, embed: bool, workers: int = 2) -> Any:
    from causantic.config import Config
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    os.environ["CAUSANTIC_HOME"] = str(home)
    with open_services(Config()) as services:
        return ingest_paths(services, [path], embed=embed, workers=workers)


def _older_store(home: Path, path: Path, *, embed: bool) -> Any:
    """The store an older release left: today's ambient-agent rules undone, marks a version behind."""
    from causantic.ingest import rules, subagents
    from causantic.transcripts import _system_text

    patched = {
        (_system_text, "COMPACTION_PROMPT_OPENING"): "\0",
        (subagents, "_PROMPT_SUGGESTION"): "\0",
        (subagents, "SUGGESTION_PROMPT_OPENING"): "\0",
        (rules, "VERSION"): rules.VERSION - 1,
    }
    saved = {key: getattr(*key) for key in patched}
    for (module, name), value in patched.items():
        setattr(module, name, value)
    try:
        return _ingest(home, path, embed=embed, workers=1)  # planned here: workers would not see the patches
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)


def _stored(home: Path) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    import sqlite3

    with sqlite3.connect(home / "memory.db") as conn:
        chunks = set(conn.execute("SELECT id, content_hash, start_time, end_time, agent FROM chunks"))
        edges = set(conn.execute("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges"))
    return chunks, edges


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the best is kept")
    parser.add_argument("--embed", action="store_true", help="embed as the default configuration does")
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="causantic-rules-"))
    try:
        older = work / "older"
        first = _older_store(older, args.path, embed=args.embed)
        fresh = work / "fresh"
        _ingest(fresh, args.path, embed=False)
        reread_s: list[float] = []
        skip_s: list[float] = []
        load = os.getloadavg()[0]
        for n in range(args.repeat):
            home = work / f"run{n}"
            shutil.copytree(older, home)
            started = time.perf_counter()
            upgraded = _ingest(home, args.path, embed=args.embed)
            reread_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            skipped = _ingest(home, args.path, embed=args.embed)
            skip_s.append(time.perf_counter() - started)
            assert skipped.files_unchanged == skipped.files, "the second ingest read files again"
        equal = _stored(home) == _stored(fresh)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {
        "files": upgraded.files,
        "files_rules_changed": upgraded.files_rules_changed,
        "mb": round(upgraded.bytes_read / 1e6, 1),
        "older_chunks": first.chunks_added,
        "chunks_added": upgraded.chunks_added,
        "chunks_updated": upgraded.chunks_updated,
        "chunks_renumbered": upgraded.chunks_renumbered,
        "chunks_removed": upgraded.chunks_removed,
        "vectors_added": upgraded.vectors_added,
        "reread_seconds": round(min(reread_s), 2),
        "skip_seconds": round(min(skip_s), 2),
        "reread_to_skip_ratio": round(min(reread_s) / min(skip_s), 1),
        "equals_fresh_ingest": equal,
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
    }
    print(
        f"{out['files']} files, {out['mb']} MB; store of the older rules: {out['older_chunks']:,} chunks\n"
        f"re-read (rules changed): {out['reread_seconds']:.2f} s, {out['files_rules_changed']} files re-read, "
        f"chunks +{out['chunks_added']} ~{out['chunks_updated']} -{out['chunks_removed']}"
        f" (renumbered {out['chunks_renumbered']})"
        + (f", {out['vectors_added']} embedded" if out["vectors_added"] is not None else "")
        + f"\nskip (all unchanged):    {out['skip_seconds']:.2f} s  (re-read / skip: {out['reread_to_skip_ratio']}x)\n"
        f"store after the re-read equals a fresh ingest: {'yes' if equal else 'NO'}\n"
        f"load average {out['load_average'][0]} -> {out['load_average'][1]}"
    )
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0 if equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
