"""Ingest throughput on real transcripts, beside plain ``json.loads`` over the same lines.

Usage: python benchmarks/ingest.py [PATH] [--json OUT] [--workers N] [--repeat N] [--no-sources]
       python benchmarks/ingest.py --line-sweep [--sizes 1,2,4,8,16,32,64] [--kinds text,ascii,bundle] [--json OUT]
       python benchmarks/ingest.py --huge-line [--line-mb 50] [--json OUT]

PATH defaults to ../shared/corpus/claude-code; any folder of transcripts works, whatever its file
names. Without PATH, the same is then measured per source (Claude Code, Codex CLI, Gemini CLI: the
``claude-code``, ``codex`` and ``gemini`` folders of ../shared/corpus), each beside the raw JSON
parse rate of the same files (Gemini sessions are JSON documents: parsed whole).

Ingestion runs with embeddings off (chunks, edges, keyword index) into a fresh store in a
temporary CAUSANTIC_HOME. The rate is over the ingest itself (discovery to the last commit); the
one-time start-up (imports, opening a fresh store) is printed apart. The baseline, measured in the
same run, parses every line of the same files with ``json.loads`` and nothing else; the goal is at
least 25 MB/s and at least 1/5 of the baseline. Each side is run ``--repeat`` times; the best counts.

Embedding rate. ``--embed-sample`` real chunks of the ingested store (fixed seed) are embedded the
way ``causantic embed`` does with the default configuration (``embedding_text`` of each chunk, the
configured windows) and, in the same run, with the configuration before issue 13 (the whole chunk
text, up to four 256-word-piece windows): chunks per CPU-second of the process (every runtime thread
counted), alternating the two ``--embed-runs`` times; the medians are reported. Goal: ≥ 3x.

``--line-sweep`` ingests sessions whose prompt is one single line of 1 to 64 MB (real transcript
text from PATH, newlines removed, repeated to size), for each ``--kinds``: ``text`` (corpus text as
it is, emoji included), ``ascii`` (its non-ASCII characters dropped; ``--ascii`` runs only these)
and, when asked, ``bundle`` (minified code with nothing to redact), each point in a fresh process.
It prints seconds, MB/s and peak memory: the peak resident memory above the process's own just
before the ingest, divided by the line's size in bytes. The baseline, in the same run, is plain
``json.loads`` of the same session in another fresh process (its seconds and its peak ÷ line: what
holding the parsed line alone costs). Ingest is linear when the largest and smallest rates stay
within 2x, and its memory bounded when the ratio to the line stays flat (goal ≤ 3x). Python holds
text with any character beyond U+FFFF at four bytes per character, so corpus text (emoji) costs up
to four times an ASCII line of its size.

``--huge-line`` measures one ``--line-mb`` line (default 50 MB) three times, as corpus text, as
ASCII-only text and as minified code, each beside the same text in the same run written as normal-length lines (user and
assistant messages of about 2,000 characters: every character kept and keyword-indexed, as in the
line). It prints seconds for each, their ratio, and the line's peak resident memory divided by its
size; ``--json`` keys: ``huge_line_mb``, and per text kind (``text``, ``ascii``, ``bundle``)
``huge_line_seconds``, ``huge_line_cpu_seconds`` (the ingest's CPU time, its worker processes'
included: steadier than seconds on a loaded machine), ``normal_lines_seconds``,
``huge_to_normal_ratio``, ``peak_rss_over_line``, ``chunks``, ``json_loads_seconds`` and
``json_loads_peak_over_line`` (the baseline: plain ``json.loads`` of the same line in a fresh
process); and ``load_average`` before and after. Goal: a 50 MB line in 10 s or less on a quiet
machine, its peak memory at most 3x the line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"


def json_baseline(files: list[Path], documents: frozenset[Path] = frozenset()) -> tuple[float, int]:
    """Seconds and bytes to json.loads every line of every file (bad lines ignored); a file in
    ``documents`` (a Gemini session, one JSON document) is parsed whole."""
    total = 0
    started = time.perf_counter()
    for path in files:
        with path.open("rb") as handle:
            data = handle.read()
        total += len(data)
        for line in [data] if path in documents else data.split(b"\n"):
            if line.strip():
                try:
                    json.loads(line)
                except ValueError:
                    pass
    return time.perf_counter() - started, total


def best_ingest(
    path: Path, workers: int, repeat: int, after_last: Callable[[str], None] | None = None
) -> tuple[float, float, dict[str, object]]:
    """(ingest seconds, wall seconds, result) of the fastest of ``repeat`` runs into fresh stores;
    ``after_last`` is handed the last run's data directory before it is removed."""
    runs = []
    for n in range(repeat):
        with tempfile.TemporaryDirectory(prefix="causantic-bench-") as home:
            os.environ["CAUSANTIC_HOME"] = home
            started = time.perf_counter()
            result = run_ingest(path, workers)
            runs.append((result["report"].seconds, time.perf_counter() - started, result))  # type: ignore[attr-defined]
            if after_last is not None and n == repeat - 1:
                after_last(home)
    return min(runs, key=lambda run: run[0])


def per_source(corpus: Path, workers: int, repeat: int) -> dict[str, dict[str, float]]:
    """Ingest MB/s and json.loads MB/s for each source's folder of the corpus, over the files its
    discovery reads; prints one line per source."""
    from causantic.ingest.plan import group_paths
    from causantic.transcripts.discovery import discover

    out: dict[str, dict[str, float]] = {}
    print(f"\n{'source':<12} {'files':>5} {'MB':>6} {'ingest MB/s':>12} {'json MB/s':>10} {'ratio':>6}")
    for source in ("claude-code", "codex", "gemini"):
        folder = corpus / source
        if not folder.is_dir():
            continue
        groups = discover(folder)
        files = sorted(p for g in groups for p in group_paths(g))
        documents = frozenset(p for g in groups if g.source == "gemini" for p in group_paths(g))
        baseline_s, total = min(json_baseline(files, documents) for _ in range(repeat))
        seconds, _, result = best_ingest(folder, workers, repeat)
        mb = total / 1e6
        row = {
            "files": len(files),
            "megabytes": round(mb, 3),
            "mb_per_s": round(mb / seconds, 2),
            "baseline_json_mb_per_s": round(mb / baseline_s, 2),
            "chunks": result["report"].chunks_added,
        }  # type: ignore[attr-defined]
        out[source] = row
        ratio = row["mb_per_s"] / row["baseline_json_mb_per_s"]
        print(
            f"{source:<12} {len(files):>5} {mb:>6.2f} {row['mb_per_s']:>12.1f} {row['baseline_json_mb_per_s']:>10.1f}"
            f" {ratio:>6.2f}"
        )
    return out


def run_ingest(path: Path, workers: int) -> dict[str, object]:
    from causantic import Memory
    from causantic.config import Config

    with Memory(config=Config()) as memory:
        report = memory.ingest([path], embed=False, workers=workers)
        chunks = memory.stats().chunk_count
    return {"report": report, "chunks_total": chunks}


def embed_rates(home: str, sample: int, runs: int) -> dict[str, float]:
    """Chunks per CPU-second, product default vs the pre-issue-13 configuration, on the same chunks."""
    import random
    import sqlite3
    import statistics

    from causantic.config import Config
    from causantic.embedding.embedder import MAX_WINDOW_WORD_PIECES, MAX_WINDOWS_PER_DOCUMENT, Embedder
    from causantic.embedding.models import get_spec, locate
    from causantic.ingest.indexing import embedding_text

    with sqlite3.connect(Path(home) / "memory.db") as conn:
        texts = [r[0] for r in conn.execute("SELECT content FROM chunks ORDER BY rowid")]
    texts = random.Random(13).sample(texts, min(sample, len(texts)))
    cfg = Config().embedding
    spec = get_spec(cfg.model)
    product = Embedder(
        spec,
        locate(spec),
        batch_size=cfg.batch_size,
        threads=cfg.threads,
        max_windows=cfg.max_windows,
        document_word_pieces=cfg.document_word_pieces,
    )
    before = Embedder(
        spec,
        locate(spec),
        batch_size=1,
        max_windows=MAX_WINDOWS_PER_DOCUMENT,
        document_word_pieces=MAX_WINDOW_WORD_PIECES,
    )
    rates: dict[str, list[float]] = {"product": [], "baseline": []}
    for embedder in (product, before):
        embedder.embed_documents(texts[:4])  # load and warm up outside the timing
    for _ in range(runs):
        for name, embedder, prepare in (
            ("product", product, lambda t: embedding_text(t, cfg.tool_result_chars)),
            ("baseline", before, lambda t: t),
        ):
            started = time.process_time()
            embedder.embed_documents([prepare(t) for t in texts])
            rates[name].append(len(texts) / (time.process_time() - started))
    return {
        "embed_chunks_per_cpu_s": round(statistics.median(rates["product"]), 1),
        "baseline_embed_chunks_per_cpu_s": round(statistics.median(rates["baseline"]), 1),
        "embed_sample": len(texts),
    }


# A minified bundle: code without secrets, hint words or injected elements, so nothing is redacted.
_BUNDLE = 'function r(e,t){return e.map(function(n){return n*t+1})};var o={a:1,b:[2,3],c:"x"};if(o.a>0){o.b.push(4)};'
KINDS = {"text": "corpus text (holds emoji)", "ascii": "ASCII-only corpus text", "bundle": "minified code"}


def corpus_text(corpus: Path, size: int, kind: str = "text") -> str:
    """``size`` characters of ``kind`` (see :data:`KINDS`): real transcript text, whitespace collapsed
    to single spaces (``ascii``: every non-ASCII character dropped), or minified code (``bundle``)."""
    if kind == "bundle":
        return (_BUNDLE * (size // len(_BUNDLE) + 1))[:size]
    words: list[str] = []
    total = 0
    for path in sorted(corpus.rglob("*.jsonl")):
        text = " ".join(path.read_text(encoding="utf-8", errors="replace").split())
        if kind == "ascii":
            text = text.encode("ascii", "ignore").decode("ascii")
        words.append(text)
        total += len(text)
        if total > 4_000_000:
            break
    seed = " ".join(words)
    return (seed * (size // len(seed) + 1))[:size]


def _exchange(n: int, prompt: str, answer: str) -> list[dict[str, object]]:
    """A user message and the assistant's reply, one minute after the previous exchange."""
    at = f"2026-01-01T{10 + n // 3600 % 14:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
    common = {"sessionId": "long-line", "cwd": "/tmp/long-line", "timestamp": at}
    return [
        {"type": "user", "uuid": f"u{n}", **common, "message": {"role": "user", "content": prompt}},
        {
            "type": "assistant",
            "uuid": f"a{n}",
            "parentUuid": f"u{n}",
            **common,
            "message": {"id": f"m{n}", "role": "assistant", "content": [{"type": "text", "text": answer}]},
        },
    ]


def long_line_session(folder: Path, size: int, corpus: Path, kind: str = "text") -> Path:
    """A real-looking session whose first prompt is one line of ``size`` characters of ``kind``."""
    line = corpus_text(corpus, size, kind)
    records = _exchange(0, f"Why does this fail?\n{line}", "The bundle is minified; the error is in the loader.")
    path = folder / "long-line.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def normal_lines_session(folder: Path, size: int, corpus: Path, kind: str = "text", chars: int = 2000) -> Path:
    """The same ``size`` characters as :func:`long_line_session`, as prompts and replies of about
    ``chars`` characters each: the baseline of normal-length lines."""
    text = corpus_text(corpus, size, kind)
    path = folder / "normal-lines.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for n, start in enumerate(range(0, len(text), 2 * chars)):
            prompt, answer = text[start : start + chars], text[start + chars : start + 2 * chars] or "ok"
            out.writelines(json.dumps(r) + "\n" for r in _exchange(n, prompt, answer))
    return path


def _cpu_seconds() -> float:
    """CPU time of this process and of the worker processes it has waited for (the store computes a
    long session's text features in one), user and system."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _rss_mb() -> float:
    """This process's resident memory now (not its peak), from /proc; the peak is reset to it, so
    :func:`_peak_rss_mb` then reports what was reached after this call (not during start-up)."""
    with open("/proc/self/statm") as handle:
        rss = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets VmHWM to the current resident size (Linux)
    except OSError:
        pass  # then the peak is the process's whole life's: an upper bound
    return rss


def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM) since the last :func:`_rss_mb`."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e6
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def one_line_run(folder: Path) -> dict[str, float]:
    """Ingest one long-line session (written by the parent) in this fresh process: seconds, MB,
    chunks, and peak resident memory above what the process held just before the ingest."""

    with tempfile.TemporaryDirectory(prefix="causantic-line-") as tmp:
        os.environ["CAUSANTIC_HOME"] = tmp
        from causantic import Memory
        from causantic.config import Config

        size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
        with Memory(tmp, config=Config()) as memory:
            memory.stats()  # the store open and its schema made before the baseline
            import causantic.ingest.plan  # noqa: F401  (the pipeline's imports, also before it)

            before = _rss_mb()
            cpu = _cpu_seconds()
            report = memory.ingest([folder], embed=False, workers=1)
            cpu = _cpu_seconds() - cpu
            peak = _peak_rss_mb()
            found = memory.stats().chunk_count
    return {
        "megabytes": size / 1e6,
        "seconds": report.seconds,
        "cpu_seconds": cpu,
        "chunks": found,
        "rss_before_mb": before,
        "peak_rss_mb": peak,
        "peak_over_line": (peak - before) / (size / 1e6),
    }


def json_loads_run(folder: Path) -> dict[str, float]:
    """The baseline of a one-line point, in this fresh process: ``json.loads`` of every line of the
    same session (and nothing else): seconds and peak resident memory above the process's own
    just before, as :func:`one_line_run` measures the ingest."""

    size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    before = _rss_mb()
    started = time.perf_counter()
    for path in folder.glob("*.jsonl"):
        with path.open("rb") as handle:
            for line in handle:
                json.loads(line)
    seconds = time.perf_counter() - started
    peak = _peak_rss_mb()
    return {
        "megabytes": size / 1e6,
        "seconds": seconds,
        "rss_before_mb": before,
        "peak_rss_mb": peak,
        "peak_over_line": (peak - before) / (size / 1e6),
    }


def _in_fresh_process(flag: str, folder: Path) -> dict[str, float]:
    """One measurement (``--one-line`` or ``--json-loads-line``) of ``folder`` in a fresh process, so
    its peak memory is its own (not the making of the line, nor an earlier point's)."""
    import subprocess

    done = subprocess.run([sys.executable, __file__, flag, str(folder)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def line_sweep(sizes: list[int], corpus: Path, json_out: Path | None, kinds: list[str]) -> int:
    """Each size's session is written here, then ingested in a fresh process, and parsed with plain
    ``json.loads`` in another (the baseline, same line, same run)."""
    out: dict[str, object] = {"load_average": [round(os.getloadavg()[0], 2)]}
    print(f"one-line sessions, each ingested in a fresh process; load average {os.getloadavg()[0]:.2f}")
    for kind in kinds:
        rows = []
        print(f"\n{KINDS[kind]}")
        print(
            f"{'line':>7} {'seconds':>8} {'CPU s':>6} {'MB/s':>7} {'chunks':>7} {'peak ÷ line':>12} "
            f"{'json.loads s':>13} {'its peak ÷ line':>16}"
        )
        for mb in sizes:
            with tempfile.TemporaryDirectory(prefix="causantic-sweep-") as tmp:
                long_line_session(Path(tmp), mb * 1_000_000, corpus, kind)
                try:
                    row = _in_fresh_process("--one-line", Path(tmp))
                    base = _in_fresh_process("--json-loads-line", Path(tmp))
                except RuntimeError as exc:
                    print(exc, file=sys.stderr)
                    return 1
            row["mb_per_s"] = row["megabytes"] / row["seconds"]
            row["json_loads_seconds"] = base["seconds"]
            row["json_loads_peak_over_line"] = base["peak_over_line"]
            rows.append({"line_mb": mb, **{k: round(v, 3) for k, v in row.items()}})
            print(
                f"{mb:>5} MB {row['seconds']:>8.2f} {row['cpu_seconds']:>6.2f} {row['mb_per_s']:>7.2f} "
                f"{row['chunks']:>7.0f} "
                f"{row['peak_over_line']:>11.1f}x {base['seconds']:>13.2f} {base['peak_over_line']:>15.1f}x",
                flush=True,
            )
        rates = [r["mb_per_s"] for r in rows]
        ratio = max(rates) / min(rates)
        print(f"ratio fastest/slowest {ratio:.2f} (goal ≤ 2: time grows linearly with line length)")
        print(f"peak memory above start ÷ line size: at most {max(r['peak_over_line'] for r in rows):.1f}x (goal ≤ 3x)")
        out[kind] = {"sizes": rows, "ratio": round(ratio, 3)}
    out["load_average"] = [*out["load_average"], round(os.getloadavg()[0], 2)]  # type: ignore[misc]
    print(f"load average {out['load_average']} (2 cores)")
    if json_out:
        json_out.write_text(json.dumps(out, indent=2))
    return 0


def _fresh_process_run(
    write: Callable[[Path, int, Path, str], Path], size: int, corpus: Path, kind: str, baseline: bool = False
) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`one_line_run` in a fresh process over the session ``write`` puts in a new folder, and
    with ``baseline`` :func:`json_loads_run` of the same session in another."""
    with tempfile.TemporaryDirectory(prefix="causantic-huge-") as tmp:
        write(Path(tmp), size, corpus, kind)
        run = _in_fresh_process("--one-line", Path(tmp))
        return run, (_in_fresh_process("--json-loads-line", Path(tmp)) if baseline else {})


def huge_line(mb: int, corpus: Path, json_out: Path | None) -> int:
    """A ``mb`` MB line beside the same text as normal-length lines, for corpus and ASCII text."""
    size = mb * 1_000_000
    load_before = os.getloadavg()[0]
    out: dict[str, object] = {"huge_line_mb": mb}
    print(f"one {mb} MB line vs the same text as ~2,000-character lines; load average {load_before:.2f}")
    print(
        f"{'text':<6} {'line s':>7} {'CPU s':>6} {'lines s':>8} {'ratio':>6} {'line MB/s':>10} {'peak ÷ line':>12} "
        f"{'json.loads s':>13} {'its peak ÷ line':>16}"
    )
    for kind in KINDS:
        line, base = _fresh_process_run(long_line_session, size, corpus, kind, baseline=True)
        lines, _ = _fresh_process_run(normal_lines_session, size, corpus, kind)
        row = {
            "huge_line_seconds": round(line["seconds"], 2),
            "huge_line_cpu_seconds": round(line["cpu_seconds"], 2),
            "normal_lines_seconds": round(lines["seconds"], 2),
            "huge_to_normal_ratio": round(line["seconds"] / lines["seconds"], 2),
            "huge_line_mb_per_s": round(line["megabytes"] / line["seconds"], 2),
            "peak_rss_over_line": round(line["peak_over_line"], 2),
            "normal_lines_peak_rss_over_size": round(lines["peak_over_line"], 2),
            "chunks": int(line["chunks"]),
            "json_loads_seconds": round(base["seconds"], 2),
            "json_loads_peak_over_line": round(base["peak_over_line"], 2),
        }
        out[kind] = row
        print(
            f"{kind:<6} {row['huge_line_seconds']:>7.1f} {row['huge_line_cpu_seconds']:>6.1f} "
            f"{row['normal_lines_seconds']:>8.1f} "
            f"{row['huge_to_normal_ratio']:>6.2f} {row['huge_line_mb_per_s']:>10.1f} "
            f"{row['peak_rss_over_line']:>11.1f}x {row['json_loads_seconds']:>13.2f} "
            f"{row['json_loads_peak_over_line']:>15.1f}x",
            flush=True,
        )
    out["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    print(f"load average {out['load_average']} (2 cores); goal: a {mb} MB line in ≤ 10 s on a quiet machine")
    if json_out:
        json_out.write_text(json.dumps(out, indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the best is kept")
    parser.add_argument("--no-sources", action="store_true", help="skip the per-source table")
    parser.add_argument("--embed-sample", type=int, default=200, help="real chunks for the embedding rate (0: skip)")
    parser.add_argument("--embed-runs", type=int, default=3)
    parser.add_argument("--line-sweep", action="store_true", help="ingest single lines of --sizes MB")
    parser.add_argument("--sizes", default="1,2,4,8,16,32,64", help="line sizes in MB for --line-sweep")
    parser.add_argument("--ascii", action="store_true", help="--line-sweep: ASCII lines only (same as --kinds ascii)")
    parser.add_argument(
        "--kinds",
        default="text,ascii",
        help="--line-sweep: corpus text (text), ASCII-only (ascii), minified code (bundle)",
    )
    parser.add_argument("--huge-line", action="store_true", help="one --line-mb line vs normal-length lines")
    parser.add_argument("--line-mb", type=int, default=50, help="line size in MB for --huge-line")
    parser.add_argument("--one-line", type=Path, help=argparse.SUPPRESS)  # one sweep point, in a fresh process
    parser.add_argument("--json-loads-line", type=Path, help=argparse.SUPPRESS)  # its baseline, the same way
    args = parser.parse_args()
    if args.one_line:
        print(json.dumps(one_line_run(args.one_line)))
        return 0
    if args.json_loads_line:
        print(json.dumps(json_loads_run(args.json_loads_line)))
        return 0
    if args.huge_line:
        return huge_line(args.line_mb, args.path, args.json_out)
    if args.line_sweep:
        kinds = ["ascii"] if args.ascii else [k.strip() for k in args.kinds.split(",") if k.strip()]
        return line_sweep([int(s) for s in args.sizes.split(",")], args.path, args.json_out, kinds)
    if not args.path.exists():
        print(f"{args.path} does not exist", file=sys.stderr)
        return 2
    files = sorted(p for p in args.path.rglob("*.jsonl") if p.is_file())
    # Best of ``--repeat`` runs for both sides: this machine is shared, so single runs are noisy.
    baseline_s, total_bytes = min(json_baseline(files) for _ in range(args.repeat))
    embedding: dict[str, float] = {}
    load_before = os.getloadavg()[0]

    def measure_embedding(home: str) -> None:
        if args.embed_sample:
            embedding.update(embed_rates(home, args.embed_sample, args.embed_runs))

    # The ingest itself (discovery to the last commit and relink), as the report times it; the
    # one-time cost of importing the package and opening a fresh store is shown on its own.
    seconds, wall, result = best_ingest(args.path, args.workers, args.repeat, after_last=measure_embedding)
    report = result["report"]
    mb = total_bytes / 1e6
    figures = {
        "mb_per_s": round(mb / seconds, 2),
        "chunks_per_s": round(report.chunks_added / seconds, 1),  # type: ignore[attr-defined]
        "baseline_json_mb_per_s": round(mb / baseline_s, 2),
        "files": len(files),
        "skipped_lines": report.skipped_lines.total,  # type: ignore[attr-defined]
        "chunks": report.chunks_added,  # type: ignore[attr-defined]
        "seconds": round(seconds, 3),
        "megabytes": round(mb, 2),
        "startup_seconds": round(wall - seconds, 3),
        **embedding,
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    ratio = figures["mb_per_s"] / figures["baseline_json_mb_per_s"]
    print(f"transcripts      {len(files)} files, {mb:.1f} MB, {figures['skipped_lines']} lines skipped")
    print(f"json.loads       {figures['baseline_json_mb_per_s']:>8.1f} MB/s   (baseline, same files, same run)")
    print(
        f"causantic ingest {figures['mb_per_s']:>8.1f} MB/s   {figures['chunks_per_s']:.0f} chunks/s, "
        f"{figures['chunks']} chunks in {seconds:.2f} s"
    )
    print(f"ratio            {ratio:>8.2f}      (goal ≥ 0.20 and ≥ 25 MB/s)")
    print(f"start-up         {wall - seconds:>8.2f} s    (imports and opening a fresh store, not in the rate)")
    if embedding:
        gain = embedding["embed_chunks_per_cpu_s"] / embedding["baseline_embed_chunks_per_cpu_s"]
        print(
            f"embedding        {embedding['embed_chunks_per_cpu_s']:>8.1f} chunks/CPU-s, before issue 13 "
            f"{embedding['baseline_embed_chunks_per_cpu_s']:.1f} (same {embedding['embed_sample']} real chunks, "
            f"same run): {gain:.2f}x (goal ≥ 3x)"
        )
    if args.path == DEFAULT_CORPUS and not args.no_sources:
        figures["sources"] = per_source(DEFAULT_CORPUS.parent, args.workers, args.repeat)  # type: ignore[assignment]
    print(f"load average     {figures['load_average']} (2 cores)")
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
