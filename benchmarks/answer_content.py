"""What recall's and predict's answers spend their tokens on, over the coding dev queries.

Usage::

    python benchmarks/answer_content.py --store DIR [--queries FILE] [--set key=value ...] [--json OUT]
        [--details OUT.jsonl]

``DIR`` is a store ``benchmarks/coding.py --store DIR`` built (or any store: the queries are only
asked). Each answer is rendered as the CLI prints it (``render_episodes``) and its lines are sorted
by what they are: headings (the answer's, the episodes' and the chunks'), user prompts, the
assistant's words, tool calls and tool results (by tool), and the elision lines the renderer writes
in place of left-out output. Tool results are also split by whether a line holds a query word (a
light stem of one, as relevance compares them), and all chunk text by whether it belongs to a match
or to the context around one (the story). The table gives each kind's share of all answers' tokens
(characters / 3.5, the product's measure) and its tokens per answer, with the tools whose results
cost most. ``--set`` changes the configuration as ``benchmarks/coding.py --set`` does; ``--details``
writes one line per (query, answer kind): its tokens, its chunks, how many are context (not matches),
and its tokens by kind, so two runs (the code before and after) can be compared query by query.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import Counter
from pathlib import Path

from coding import DEFAULT_QUERIES, load_queries

from causantic import Memory
from causantic.ingest.tokens import CHARS_PER_TOKEN
from causantic.retrieval.format import render_episodes
from causantic.store.features import word_stems
from causantic.store.fts import query_terms

_CHUNK_HEADER = re.compile(r"\[\d+/\d+ \|.*\]$")
_LABEL = re.compile(r"\[(User|Assistant)\]$|\[(Tool|Result|Error):([^\]\s]+)\]")
_ELISION = re.compile(r"\s*… .*(left out|more lines? like)")
TOP_TOOLS = 6


def kinds_of(text: str, stems: frozenset[str]) -> Counter[str]:
    """Characters of one rendered answer by kind (a line's newline counted with it)."""
    chars: Counter[str] = Counter()
    current, in_hit = "heading", False
    for line in text.split("\n"):
        size = len(line) + 1
        if _CHUNK_HEADER.match(line):
            current, in_hit = "heading", line.endswith("| match]")
            chars["heading"] += size
            continue
        if line.startswith("== Episode ") or line.startswith("Recall: ") or line.startswith("Predict: "):
            current = "heading"
            chars["heading"] += size
            continue
        if line.startswith("… ") and "chunk" in line and "between these episodes" in line:
            chars["heading"] += size
            continue
        label = _LABEL.match(line)
        if label is not None:
            if label.group(1):
                current = label.group(1).lower()
            else:
                what = "call" if label.group(2) == "Tool" else "result"
                current = f"tool {what}:{label.group(3)}"
        if _ELISION.match(line) and current.startswith("tool result"):
            chars["elision"] += size
            continue
        chars[current] += size
        chars[f"split: text of {'matches' if in_hit else 'context'}"] += size
        if current.startswith("tool result"):
            holds = bool(word_stems(line) & stems)
            chars[f"split: result lines {'with' if holds else 'without'} query words"] += size
    return chars


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a configuration override")
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--details", type=Path, help="one JSON line per (query, answer kind)")
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    queries = load_queries(args.queries)
    result: dict[str, object] = {}
    lines: list[str] = []
    details: list[dict[str, object]] = []
    with Memory(args.store, overrides=overrides) as memory:
        for kind in ("recall", "predict"):
            totals: Counter[str] = Counter()
            per_answer: list[Counter[str]] = []
            for q in queries:
                answer = getattr(memory, kind)(q.text)
                stems = word_stems(" ".join(query_terms(q.text)))
                counted = kinds_of(render_episodes(answer), stems)
                per_answer.append(counted)
                totals.update(counted)
                details.append(
                    {
                        "query": q.id,
                        "kind": kind,
                        "tokens": answer.tokens,
                        "chunks": len(answer.chunks),
                        "context": sum(not c.is_hit for e in answer.episodes for c in e.chunks),
                        "tokens_by_kind": {k: round(v / CHARS_PER_TOKEN) for k, v in counted.items()},
                    }
                )
            result[kind] = {"chars": dict(totals), "answers": len(per_answer)}
            lines += share_table(kind, totals, per_answer)
    print("\n".join(lines))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.details:
        args.details.write_text("".join(json.dumps(d) + "\n" for d in details), encoding="utf-8")
    return 0


def share_table(kind: str, totals: Counter[str], per_answer: list[Counter[str]]) -> list[str]:
    whole = sum(v for k, v in totals.items() if not k.startswith("split: "))
    results = sum(v for k, v in totals.items() if k.startswith("tool result:"))
    calls = sum(v for k, v in totals.items() if k.startswith("tool call:"))
    tools = Counter({k.split(":", 1)[1]: v for k, v in totals.items() if k.startswith("tool result:")})
    rows: list[tuple[str, float]] = [
        ("headings", totals["heading"]),
        ("user prompts", totals["user"]),
        ("assistant text", totals["assistant"]),
        ("tool calls", calls),
        ("tool results", results),
        *((f"  results of {name}", v) for name, v in tools.most_common(TOP_TOOLS)),
        ("  lines with query words", totals["split: result lines with query words"]),
        ("  lines without", totals["split: result lines without query words"]),
        ("elision lines", totals["elision"]),
        ("text of matches", totals["split: text of matches"]),
        ("text of context (story)", totals["split: text of context"]),
    ]
    median = statistics.median(sum(v for k, v in c.items() if not k.startswith("split: ")) for c in per_answer)
    out = [
        "",
        f"{kind}: {len(per_answer)} answers, {whole / CHARS_PER_TOKEN:,.0f} tokens in all, "
        f"median {median / CHARS_PER_TOKEN:,.0f} per answer",
        f"{'content':<28}{'share %':>9}{'tokens/answer':>15}",
        "-" * 52,
    ]
    for name, value in rows:
        share = 100 * value / whole if whole else 0.0
        out.append(f"{name:<28}{share:9.1f}{value / CHARS_PER_TOKEN / len(per_answer):15.0f}")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
