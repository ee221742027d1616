"""CPU time of the text features a chunk keeps (stems, own-word stems, bulk share), against a baseline.

The baseline is ``store/features.py`` as it was at ``--base`` (a git revision; default: the commit
before the features were made cheaper), loaded from git into this process, so both sides run on the
same chunks in the same run, alternately, ``--repeat`` times each (the best run is kept; caches are
emptied before each run, as a fresh ingest finds them). Every chunk's values are compared too: the
figure is only worth something if nothing changed.

Two sets of chunks:
- ``corpus``: real transcript pieces (``[Assistant]``, ``[Tool:Bash]``, ``[Result:Grep]`` ...) from
  ``../shared/corpus`` packed into chunks of at most 1,400 characters, as the chunker packs them;
- ``line``: one ``--line-mb`` MB pasted line of corpus text (emoji included, as in
  ``benchmarks/ingest.py --huge-line``) cut by the product's chunker.

Run: ``PYTHONPATH=src python benchmarks/text_features.py`` (``--json PATH`` writes the figures).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
BASE = "92b9316"  # the branch point of h-featspeed: features.py before this work
CHUNK_MAX_CHARS = 1400


def baseline_module(revision: str) -> ModuleType:
    """``src/causantic/store/features.py`` at ``revision``, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{revision}:src/causantic/store/features.py"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="causantic-features-")) / "features_base.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("features_base", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus_chunks(corpus: Path, limit: int) -> list[str]:
    """Real labelled pieces packed, in corpus order, into chunks of at most 1,400 characters."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from _data import corpus_text

    chunks: list[str] = []
    current = ""
    for piece in corpus_text(corpus).pieces:
        if current and len(current) + 1 + len(piece) > CHUNK_MAX_CHARS:
            chunks.append(current)
            current = ""
        current = f"{current}\n{piece}" if current else piece
        if len(chunks) >= limit:
            break
    return chunks


def line_chunks(corpus: Path, megabytes: int) -> list[str]:
    """A ``megabytes`` MB line of corpus text (as ``ingest.py --huge-line``), cut by the chunker."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from ingest import corpus_text

    from causantic.ingest.chunker import split_text

    return split_text(corpus_text(corpus, megabytes * 1_000_000), CHUNK_MAX_CHARS)


def _emptied(module: ModuleType) -> None:
    for name in ("word_stems", "bulk_share", "own_word_stems", "stem"):
        clear = getattr(getattr(module, name, None), "cache_clear", None)
        if clear:
            clear()
    stems = getattr(module, "_STEMS", None)
    if stems is not None:
        stems.clear()


def cpu_seconds(module: ModuleType, chunks: list[str]) -> float:
    """CPU seconds ``module.feature_values`` takes over ``chunks``, from emptied caches."""
    _emptied(module)
    compute = module.feature_values
    start = time.process_time()
    for chunk in chunks:
        compute(chunk)
    return time.process_time() - start


def measure(name: str, chunks: list[str], base: ModuleType, new: ModuleType, repeat: int) -> dict[str, float]:
    mismatches = sum(base.feature_values(c) != new.feature_values(c) for c in chunks)
    base_times: list[float] = []
    new_times: list[float] = []
    for _ in range(repeat):  # alternate, so a change in the machine's load falls on both sides
        base_times.append(cpu_seconds(base, chunks))
        new_times.append(cpu_seconds(new, chunks))
    row = {
        "chunks": len(chunks),
        "megabytes": round(sum(map(len, chunks)) / 1e6, 1),
        "base_cpu_s": round(min(base_times), 3),
        "new_cpu_s": round(min(new_times), 3),
        "ratio": round(min(new_times) / min(base_times), 3),
        "chunks_differing": mismatches,
    }
    print(
        f"{name:<8} {row['chunks']:>7} {row['megabytes']:>6.1f} {row['base_cpu_s']:>8.3f} {row['new_cpu_s']:>7.3f} "
        f"{row['ratio']:>6.2f} {mismatches:>9}",
        flush=True,
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "claude-code")
    parser.add_argument("--base", default=BASE, help=f"git revision of the baseline features.py (default {BASE})")
    parser.add_argument("--line-mb", type=int, default=10)
    parser.add_argument("--corpus-chunks", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}: nothing to measure", file=sys.stderr)
        return 1

    from causantic.store import features

    base = baseline_module(args.base)
    sets = {"corpus": corpus_chunks(args.corpus, args.corpus_chunks), "line": line_chunks(args.corpus, args.line_mb)}
    load = os.getloadavg()[0]
    print(f"text features, CPU seconds, best of {args.repeat}; base {args.base}; load average {load:.2f} (2 cores)")
    print(f"{'chunks':<8} {'count':>7} {'MB':>6} {'base s':>8} {'new s':>7} {'ratio':>6} {'differing':>9}")
    out: dict[str, object] = {name: measure(name, chunks, base, features, args.repeat) for name, chunks in sets.items()}
    out["base"] = args.base
    out["load_average"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    print(f"load average {out['load_average']}")
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=2))
    differing = sum(row["chunks_differing"] for row in out.values() if isinstance(row, dict))
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
