"""Benchmark the clustering core on real-text chunk embeddings.

Usage: ``python benchmarks/cluster.py [--json OUT]``

Text comes from the Claude Code transcripts in ``<repo>/../shared/corpus/claude-code`` (never copied
into the repository): user and assistant text, thinking, tool calls and tool results are split into
pieces of a few sentences (at most 200 characters), de-duplicated, and 50,000 of them are drawn with a
fixed seed; the first 6,000 of that draw are the small case. The pieces are embedded with the
product's embedder (``causantic.embedding.load_embedder``) and the matrix is cached in
``~/.cache/causantic-bench/`` keyed by a hash of the texts and the model, so reruns are fast.

Each case runs in its own subprocess, which reports the wall and CPU time of the clustering call
(libraries imported beforehand) and its peak RSS (``ru_maxrss``: the whole process, Python, libraries
and vectors included), so one case's memory never hides another's. Beside
``causantic.cluster.cluster_vectors`` on 6,000 and 50,000 points, the benchmark runs scikit-learn's
HDBSCAN with default settings (euclidean on the raw normalised vectors, ``min_cluster_size=4``) on
the same 6,000, and reports the adjusted Rand index (noise counted as one class) of each labelling
against it. Two extra rows calibrate that number: the default run again on the same rows shuffled
(HDBSCAN breaks distance ties by row order; ``--no-shuffled`` skips it), and ``cluster_vectors``
with the projected neighbour candidates it uses above 30,000 points, forced on the 6,000.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import flatten_content, message_records, transcript_files  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "causantic-bench"
PIECE_MAX_CHARS = 200
PIECE_MIN_CHARS = 24
SMALL, LARGE = 6_000, 50_000
MIN_CLUSTER_SIZE = 4
SEED = 20_240_601
GOAL_SECONDS = {SMALL: 3.0, LARGE: 60.0}
GOAL_PEAK_MB = 4_096
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


# --- real text --------------------------------------------------------------------------------


def _block_texts(record: dict[str, Any]) -> Iterator[str]:
    """The text a person or the model wrote or read in one user/assistant record."""
    message = record.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            yield flatten_content(block.get("text"))
        elif kind == "thinking":
            yield flatten_content(block.get("thinking"))
        elif kind == "tool_result":
            yield flatten_content(block.get("content"))
        elif kind == "tool_use" and isinstance(block.get("input"), dict):
            yield "\n".join(v for v in block["input"].values() if isinstance(v, str))


def _split(text: str, max_chars: int) -> Iterator[str]:
    """Consecutive sentences (or lines) packed into pieces of at most ``max_chars``."""
    current = ""
    for raw in _SPLIT.split(text):
        sentence = " ".join(raw.split())
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", max_chars // 2, max_chars)
            cut = cut if cut > 0 else max_chars
            if current:
                yield current
                current = ""
            yield sentence[:cut]
            sentence = sentence[cut:].strip()
        if not sentence:
            continue
        if current and len(current) + 1 + len(sentence) > max_chars:
            yield current
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        yield current


def corpus_pieces(root: Path, max_chars: int = PIECE_MAX_CHARS) -> list[str]:
    """Unique pieces of transcript text, in a deterministic order (sorted files, then file order)."""
    blocks: dict[str, None] = {}
    for record in message_records(transcript_files(root)):
        blocks.update(dict.fromkeys(_block_texts(record)))
    pieces: dict[str, None] = {}
    for block in blocks:
        for piece in _split(block, max_chars):
            if len(piece) >= PIECE_MIN_CHARS and sum(ch.isalpha() for ch in piece) >= PIECE_MIN_CHARS // 2:
                pieces[piece] = None
    return list(pieces)


def benchmark_texts(root: Path, n: int) -> list[str]:
    """``n`` pieces drawn with a fixed seed; any prefix of the result is itself a random sample."""
    pieces = corpus_pieces(root)
    if len(pieces) < n:
        raise SystemExit(f"The corpus gives {len(pieces):,} unique pieces; {n:,} are needed.")
    return random.Random(SEED).sample(pieces, n)


# --- embeddings, cached outside the repository -------------------------------------------------


def _load_embedder(spec: str) -> Any:
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function or "load_embedder")()


def _model_id(embedder: Any) -> str:
    for attribute in ("model_id", "model", "name"):
        value = getattr(embedder, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(embedder).__qualname__


def embeddings(texts: list[str], spec: str, cache_dir: Path) -> tuple[Path, str]:
    """The embedding matrix of ``texts`` as an ``.npy`` file, and a line saying how it was made.

    The cache key hashes the embedder's module, model id, two probe vectors and the texts, so a new
    model or a new text selection never reuses stale vectors.
    """
    import numpy as np

    embedder = _load_embedder(spec)
    model = _model_id(embedder)
    digest = hashlib.sha256(f"{spec}\0{model}\0".encode())
    # Two probe vectors stand for the model's weights: new weights under the same id change the key.
    probe = np.asarray(embedder.embed_documents(["cluster the chunks", "[User]\nfix the failing test"]))
    digest.update(np.round(probe.astype(np.float64), 4).tobytes())
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    path = cache_dir / f"{model}-{len(texts)}-{digest.hexdigest()[:16]}.npy"
    if path.exists():
        return path, f"{len(texts):,} vectors of {model} ({spec}), read from the cache {path}"
    cache_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    parts = []
    step = 2_000
    for start in range(0, len(texts), step):
        parts.append(np.asarray(embedder.embed_documents(texts[start : start + step]), dtype=np.float32))
        done = start + len(parts[-1])
        rate = done / (time.perf_counter() - started)
        print(f"  embedded {done:,}/{len(texts):,} ({rate:.0f}/s)", file=sys.stderr, flush=True)
    matrix = np.concatenate(parts)
    seconds = time.perf_counter() - started
    partial = path.with_suffix(".partial.npy")
    np.save(partial, matrix)
    partial.replace(path)
    return path, (
        f"{len(texts):,} vectors of {model} ({spec}), embedded now in {seconds:.0f} s "
        f"({len(texts) / seconds:.0f}/s), cached at {path}"
    )


# --- one case per subprocess ------------------------------------------------------------------

CASES = {
    "default": "scikit-learn HDBSCAN, default settings",
    "default-shuffled": "  the same, rows shuffled",
    "ours": "causantic cluster_vectors",
    "ours-projected": "  with projected candidates, as above 30k",
}


def run_child(case: str, vectors_path: Path, n: int, labels_path: Path) -> None:
    """Cluster the first ``n`` vectors as ``case``; print wall time and peak RSS as JSON."""
    import numpy as np
    import scipy.sparse  # noqa: F401 - imported before the clock starts, like the rest
    from sklearn.cluster import HDBSCAN

    from causantic.cluster import density

    vectors = np.load(vectors_path, mmap_mode="r")[:n].astype(np.float32)
    rss_before = _rss_mb()
    order = np.arange(n)
    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    if case == "default" or case == "default-shuffled":
        if case == "default-shuffled":
            order = np.random.default_rng(SEED).permutation(n)
        # copy=False only silences scikit-learn 1.9's FutureWarning; it does not change the result.
        found = HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, copy=False).fit_predict(vectors[order])
    else:
        if case == "ours-projected":
            density.PROJECT_ABOVE = 0
        found = density.cluster_vectors(vectors, MIN_CLUSTER_SIZE)
    seconds = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu_before
    labels = np.empty(n, dtype=np.int64)
    labels[order] = found
    np.save(labels_path, labels)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_mb": peak, "rss_before_mb": rss_before}))


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(case: str, vectors_path: Path, n: int, workdir: Path) -> dict[str, Any]:
    import numpy as np

    labels_path = workdir / f"{case}-{n}.npy"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])),
    }
    command = [
        sys.executable,
        __file__,
        "--child",
        case,
        "--vectors",
        str(vectors_path),
        "--n",
        str(n),
        "--labels",
        str(labels_path),
    ]
    load = os.getloadavg()[0]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"Case {case} on {n:,} points failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    labels = np.load(labels_path)
    result.update(
        case=case,
        n=n,
        labels=labels,
        load_before=load,
        clusters=int(labels.max()) + 1,
        noise=float((labels == -1).mean()),
    )
    print(f"  {CASES[case].strip():<40} {n:>7,} points: {result['seconds']:7.2f} s", file=sys.stderr, flush=True)
    return result


# --- report -----------------------------------------------------------------------------------


def report(rows: list[dict[str, Any]], how: str, texts: int) -> dict[str, Any]:
    from sklearn.metrics import adjusted_rand_score

    by = {(r["case"], r["n"]): r for r in rows}
    default = by[("default", SMALL)]
    for row in rows:
        row["ari"] = (
            float(adjusted_rand_score(default["labels"], row["labels"]))
            if row["n"] == SMALL and row["case"] != "default"
            else None
        )
    print()
    print(f"Embeddings: {how}")
    print(f"Text: {texts:,} pieces of Claude Code transcripts (<= {PIECE_MAX_CHARS} chars), seeded draw")
    load = os.getloadavg()[0]
    print(f"min_cluster_size={MIN_CLUSTER_SIZE}; load average {load:.1f} on {os.cpu_count()} cores")
    print()
    header = (
        f"{'case':<42} {'points':>7} {'seconds':>8} {'CPU s':>7} {'x faster':>9} {'MB before':>10} "
        f"{'peak MB':>8} {'clusters':>9} {'noise':>6} {'ARI vs default':>15}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        speed = f"{default['seconds'] / row['seconds']:.1f}x" if row["n"] == SMALL else "-"
        ari = f"{row['ari']:.4f}" if row["ari"] is not None else "-"
        print(
            f"{CASES[row['case']]:<42} {row['n']:>7,} {row['seconds']:>8.2f} {row['cpu_seconds']:>7.1f} "
            f"{speed:>9} {row['rss_before_mb']:>10.0f} {row['peak_mb']:>8.0f} {row['clusters']:>9,} "
            f"{row['noise']:>6.0%} {ari:>15}"
        )
    small, large = by[("ours", SMALL)], by[("ours", LARGE)]
    print()
    small_ok = small["seconds"] <= GOAL_SECONDS[SMALL]
    large_ok = large["seconds"] <= GOAL_SECONDS[LARGE]
    print(
        f"Goals: {SMALL:,} points <= {GOAL_SECONDS[SMALL]:.0f} s: {_verdict(small_ok)}; "
        f"{LARGE:,} <= {GOAL_SECONDS[LARGE]:.0f} s: {_verdict(large_ok)}; "
        f"peak <= {GOAL_PEAK_MB:,} MB: {_verdict(large['peak_mb'] <= GOAL_PEAK_MB)}"
    )
    print("Seconds are wall time of the clustering call (libraries already imported); CPU s adds up both")
    print("cores, so it shows the work done when other processes compete for them.")
    print("Peak MB is the whole subprocess's peak RSS (Python, libraries and vectors included); MB before")
    print("is its RSS just before the clustering call, so the difference is what clustering added.")
    print("ARI counts noise as one class; HDBSCAN breaks distance ties by row order, so the shuffled default")
    print("run shows how far two equally valid answers can differ.")
    result: dict[str, Any] = {
        "seconds_6000": small["seconds"],
        "seconds_50000": large["seconds"],
        "peak_mb_50000": large["peak_mb"],
        "sklearn_default_seconds_6000": default["seconds"],
        "ari_vs_default_6000": small["ari"],
        "peak_mb_6000": small["peak_mb"],
        "rss_before_mb_50000": large["rss_before_mb"],
        "sklearn_default_peak_mb_6000": default["peak_mb"],
        "cpu_seconds_6000": small["cpu_seconds"],
        "cpu_seconds_50000": large["cpu_seconds"],
        "sklearn_default_cpu_seconds_6000": default["cpu_seconds"],
        "load_average": os.getloadavg()[0],
        "clusters_6000": small["clusters"],
        "clusters_50000": large["clusters"],
        "noise_6000": small["noise"],
        "noise_50000": large["noise"],
        "embeddings": how,
    }
    if ("ours-projected", SMALL) in by:
        result["ari_projected_candidates_vs_default_6000"] = by[("ours-projected", SMALL)]["ari"]
    if ("default-shuffled", SMALL) in by:
        result["ari_shuffled_default_vs_default_6000"] = by[("default-shuffled", SMALL)]["ari"]
    return result


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the headline numbers to this JSON file")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of Claude Code *.jsonl")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="where embedding matrices are kept")
    parser.add_argument(
        "--embedder",
        default="causantic.embedding:load_embedder",
        help="module:function returning an object with embed_documents(texts)",
    )
    parser.add_argument(
        "--no-shuffled",
        action="store_true",
        help="skip the second default run (rows shuffled) that calibrates the ARI",
    )
    parser.add_argument("--child", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--labels", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_child(args.child, args.vectors, args.n, args.labels)
        return 0

    texts = benchmark_texts(args.corpus, LARGE)
    vectors_path, how = embeddings(texts, args.embedder, args.cache_dir)
    print(f"Embeddings: {how}", file=sys.stderr)
    cases = [("ours", SMALL), ("ours-projected", SMALL), ("default", SMALL)]
    if not args.no_shuffled:
        cases.append(("default-shuffled", SMALL))
    cases.append(("ours", LARGE))
    with tempfile.TemporaryDirectory(prefix="causantic-bench-") as workdir:
        rows = [measure(case, vectors_path, n, Path(workdir)) for case, n in cases]
    order = ["default", "default-shuffled", "ours", "ours-projected"]
    rows.sort(key=lambda r: (r["n"], order.index(r["case"])))
    result = report(rows, how, len(texts))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"Wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
