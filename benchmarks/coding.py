"""Coding memory: "how did we do X?" over a real project's agent history.

Usage::

    python benchmarks/coding.py [--queries FILE [--transcripts DIR ...] | --mined] [--distractors]
        [--store DIR] [--json OUT]
        [--variants default,rrf60,...] [--set key=value ...] [--details OUT.jsonl]
        [--search-only] [--here] [--timing-rounds N]

Data: ``../shared/benchdata/coding/`` (read its README). Each query is a commit subject; the answer is
the Claude Code session that made the commit. The project's transcripts
(``../shared/corpus/claude-code/entireio__cli``) are ingested through the product's real path into a
fresh store (``--store DIR`` keeps it for reruns; a store already there is reused); ``--distractors``
ingests the whole ``corpus/claude-code`` folder, so other projects compete. A split whose sessions are
not in the corpus (the held-out one) names its transcripts: ``--queries FILE --transcripts DIR`` ingests
``DIR`` (repeatable) instead of the dev project's folder, and ``--distractors`` adds the corpus beside it.

Scored, per query, with the product's default settings unless a variant says otherwise:

- ``search``: the distinct sessions of the hits in rank order (limit 50): session-level R@1, R@5, R@10
  and MRR (first relevant session's reciprocal rank, 0 past rank 10), split verbatim / by meaning;
- ``recall`` and ``predict``: the share of answers that hold a relevant session, that tell a story (a
  turn that led to a match or followed it, not matches only: the old, weak measure), that tell a
  relevant session's story (``relevant story``: a request, the user's words opening a turn, and the
  chunks of that agent that follow it, in order with none left out between, at least
  :data:`STORY_RUN` of them or all the agent has left), the share of the answer's tokens spent on
  relevant sessions (``on relevant``, mean), whether the answer's first episode is of a relevant
  session (``first relevant``: what an agent reads first, and all a client that cuts the answer
  short keeps), the share of the answer's first :data:`LEAD_TOKENS` tokens as printed spent on
  relevant sessions (``lead on relevant``, mean; the heading and the lines between chunks count as
  not relevant), and the answer's size in tokens (median); with ``recall_chain`` (the seeds' chain
  walk) beside them. ``--here`` asks recall and predict from the folder of the project whose
  session made the commit, as the CLI (its cwd) and the MCP server (its start folder) ask, and
  ``--here FOLDER`` from another project's (a project memory knows that made none of the commits);
  ``--kept`` keeps them to that project (``project=``), as an agent passing its folder does;
- ``search_variants``: the same search metrics for other settings (``benchmarks/_variants.py``, names
  shared with ``benchmarks/locomo.py --variants``), each with a paired sign test against ``default`` on
  the per-query reciprocal rank (wins / losses / two-sided p), so noise is not read as gain, and each
  variant's search time per query (p50/p95 ms, limit 10, warm, three rounds; the variants take turns
  query by query, so each sees the same machine load: compare them with each other and report the load).

``--mined``: instead of the dev set, queries mined at run time from the corpus's own commits
(``benchmarks/_commits.py``: every real session under ``../shared/corpus`` where an agent ran
``git commit -m``; the subject, without its Conventional-Commits type, asks for that session), over a
store of the whole corpus (all agents; the other projects are the distractors). The answer session's
chunks that only mention the commit (the commit command, ``git log`` and other tool output holding the
subject) are dropped from the hits before sessions are ranked, so a query scores finding the work, not
the mention; ``by_meaning`` is then the "words differ" split (no other chunk of the session holds the
subject). Most commits come from a few long sessions, so ``work_variants`` also scores the piece of
the session the commit closed (the session cut after each of its commits), the sharper test there.
``mined`` in the JSON says how many queries each project gave and what was passed over. E.g.::

    python benchmarks/coding.py --mined --store /tmp/mined-store --search-only --timing-rounds 0 \
        --variants default,before19,rrf60 --json /tmp/mined.json

Against ``default`` each variant also gets a paired bootstrap (95%, 2,000 draws) of the MRR and R@10
differences, and a sign test on the words-differ queries alone (``vs_default_meaning``).

Percentages are 0–100. 27 queries is a small sample: one query moves R@k by 3.7 points.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _variants import VARIANTS  # noqa: E402

if TYPE_CHECKING:
    from causantic import Memory
    from causantic.retrieval.browse import Stream
    from causantic.retrieval.episodes import EpisodeAnswer
    from causantic.store.records import StoredChunk

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DEFAULT_QUERIES = SHARED / "benchdata" / "coding" / "entireio-commits-dev.jsonl"
ALL_CORPUS = SHARED / "corpus"
CORPUS = ALL_CORPUS / "claude-code"
PROJECT_FOLDER = "entireio__cli"
SEARCH_LIMIT = 50
RANK_CUTOFF = 10
STORY_RUN = 3  # a relevant story: a request and what followed it, at least this many chunks in a row
LEAD_TOKENS = 500  # the answer's lead: what a reader takes in first (lead on relevant)


@dataclass(frozen=True, slots=True)
class WorkUnits:
    """A finer answer than the session: the piece of work a commit closed. ``units`` names the unit of
    each chunk of a committing session (chunks of other sessions are their session); ``relevant`` the
    units a query asks for, by query id."""

    units: dict[str, str]
    relevant: dict[str, frozenset[str]]


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    relevant: frozenset[str]
    verbatim: bool
    ignored: frozenset[str] = frozenset()  # chunk ids that do not count as finding the session (mentions)
    project: str = ""  # mined queries: the corpus folder the commit came from


def load_queries(path: Path) -> list[Query]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Query(r["id"], r["query"], frozenset(r["relevant_sessions"]), bool(r.get("verbatim"))) for r in rows]


def distinct(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def reciprocal_rank(sessions: Sequence[str], relevant: frozenset[str], cutoff: int = RANK_CUTOFF) -> float:
    for rank, session in enumerate(sessions[:cutoff], start=1):
        if session in relevant:
            return 1.0 / rank
    return 0.0


def search_metrics(ranked: dict[str, list[str]], queries: Sequence[Query]) -> dict[str, float]:
    """R@1/5/10 and MRR over the queries given (percentages; MRR 0–1)."""
    if not queries:
        return {}
    out: dict[str, float] = {}
    for k in (1, 5, 10):
        hits = sum(1 for q in queries if q.relevant & set(ranked[q.id][:k]))
        out[f"r{k}"] = round(100 * hits / len(queries), 1)
    out["mrr"] = round(statistics.fmean(reciprocal_rank(ranked[q.id], q.relevant) for q in queries), 3)
    return out


def sign_test(ours: Sequence[float], base: Sequence[float]) -> dict[str, float]:
    """Paired two-sided sign test on per-query scores: wins, losses (ties dropped) and p."""
    wins = sum(1 for a, b in zip(ours, base, strict=True) if a > b)
    losses = sum(1 for a, b in zip(ours, base, strict=True) if a < b)
    n = wins + losses
    if n == 0:
        return {"wins": 0, "losses": 0, "p": 1.0}
    tail = sum(math.comb(n, i) for i in range(0, min(wins, losses) + 1)) / 2**n
    return {"wins": wins, "losses": losses, "p": round(min(1.0, 2 * tail), 4)}


def bootstrap_delta(ours: Sequence[float], base: Sequence[float], draws: int = 2000) -> dict[str, Any]:
    """Mean paired difference with a 95% bootstrap interval (queries resampled; fixed seed)."""
    import numpy as np

    diff = np.array(ours, dtype=float) - np.array(base, dtype=float)
    picks = np.random.default_rng(19).integers(0, len(diff), size=(draws, len(diff)))
    means = diff[picks].mean(axis=1)
    return {
        "delta": round(float(diff.mean()), 4),
        "ci95": [round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)), 4)],
    }


def mined_queries(home: Path, log: Callable[[str], None]) -> tuple[list[Query], WorkUnits, dict[str, Any]]:
    """Queries mined from the corpus's own commits (``benchmarks/_commits.py``), each with the chunks of
    its session that only mention the commit (not counted), and whether its words are still in the
    session (``verbatim``; False is the "words differ" split). Sessions memory does not hold are dropped.

    Also the work each commit closed: a committing session's chunks, in time order, are cut after each
    of its commits (at the last chunk holding that commit), and a query's work unit is the piece its
    commit ends. Many commits come from a few long sessions, so the session alone is easy to find;
    finding the right piece of it is the sharper test of "the work, not the mention"."""
    from _commits import mention_chunks, mine, work_pieces

    from causantic import Memory
    from causantic.retrieval.browse import SessionNotFound

    mined, skipped = mine(ALL_CORPUS)
    in_order: dict[str, list[StoredChunk]] = {}
    with Memory(home) as memory:
        for session in sorted({s for commit in mined for s in commit.sessions}):
            try:
                view = memory.session_view(session)
            except SessionNotFound:
                continue
            in_order[session] = sorted(
                (c for stream in streams_of([view.main, *view.detached]) for c in stream.chunks),
                key=lambda c: (c.start_time, c.turn_index, c.part),
            )
    units, closed = work_pieces({s: [(c.id, c.content) for c in chunks] for s, chunks in in_order.items()}, mined)
    queries: list[Query] = []
    relevant_work: dict[str, frozenset[str]] = {}
    per_project: Counter[str] = Counter()
    for commit in mined:
        held = sorted(commit.sessions & in_order.keys())
        if not held:
            skipped["sessions not in memory"] += 1
            continue
        chunks = [(c.id, c.content) for s in held for c in in_order[s]]
        ignored, verbatim = mention_chunks(commit.query, commit.subject, chunks)
        if len(ignored) == len(chunks):
            skipped["sessions with nothing but the mention"] += 1
            continue
        query = Query(f"mined{len(queries) + 1:03d}", commit.query, commit.sessions, verbatim, ignored, commit.project)
        queries.append(query)
        relevant_work[query.id] = closed.get(commit.subject, frozenset())
        per_project[commit.project] += 1
    info = {
        "queries_per_project": dict(per_project.most_common()),
        "words_differ": sum(1 for q in queries if not q.verbatim),
        "sessions": len({s for q in queries for s in q.relevant}),
        "work_units": len({u for r in relevant_work.values() for u in r}),
        "mention_chunks_ignored": sum(len(q.ignored) for q in queries),
        "passed_over": dict(skipped),
    }
    log(
        f"mined {len(queries)} queries ({info['words_differ']} words differ) from {info['sessions']} sessions "
        f"({info['work_units']} pieces of work): {info['queries_per_project']}"
    )
    return queries, WorkUnits(units, relevant_work), info


def streams_of(streams: Sequence[Stream]) -> Iterator[Stream]:
    """Each agent's stream of a session view, and the streams they started, depth first."""
    for stream in streams:
        yield stream
        for spawned in stream.spawned.values():
            yield from streams_of(spawned)


def tells_relevant_story(memory: Memory, answer: EpisodeAnswer, relevant: frozenset[str]) -> bool:
    """Whether ``answer`` tells a relevant session's story: a request (a turn's first chunk, opening on
    the user's words) and the chunks of that agent that follow it, none left out between, at least
    :data:`STORY_RUN` of them (or all the agent has from the request on)."""
    from causantic.retrieval.browse import SessionNotFound

    told = {c.id for c in answer.chunks}
    for session in relevant & {c.session_id for c in answer.chunks}:
        try:
            view = memory.session_view(session)
        except SessionNotFound:
            continue
        for stream in streams_of([view.main, *view.detached]):
            ids = [c.id for c in stream.chunks]
            for i, chunk in enumerate(stream.chunks):
                if chunk.id not in told or chunk.part != 0 or not chunk.content.startswith("[User]"):
                    continue
                needed = min(STORY_RUN, len(ids) - i)
                if all(cid in told for cid in ids[i : i + needed]):
                    return True
    return False


def printed_pieces(answer: EpisodeAnswer) -> Iterator[tuple[str | None, str]]:
    """The answer as :func:`causantic.retrieval.format.render_episodes` prints it, piece by piece, each
    with the session it tells (None: the heading, a line saying what was left out)."""
    from causantic.retrieval.format import (
        chunk_heading,
        episode_heading,
        episodes_heading,
        left_out_before,
        left_out_within,
    )

    yield None, f"{episodes_heading(answer)}:"
    for i, episode in enumerate(answer.episodes):
        session = episode.chunks[0].chunk.session_id
        if gap := left_out_before(answer, i):
            yield None, gap
        yield session, episode_heading(answer, i)
        for j, member in enumerate(episode.chunks):
            if gap := left_out_within(episode, j):
                yield None, gap
            yield member.chunk.session_id, f"{chunk_heading(answer, i, j)}\n{member.text}"


def lead_share(answer: EpisodeAnswer, relevant: frozenset[str], lead: int = LEAD_TOKENS) -> float:
    """The share of the answer's first ``lead`` tokens as printed (all of it when shorter) that tell
    a relevant session (an episode's heading counts as its session's)."""
    from causantic.ingest.tokens import approx_tokens

    read = on = 0
    for session, text in printed_pieces(answer):
        tokens = min(approx_tokens(f"{text}\n\n"), lead - read)
        read += tokens
        on += tokens if session in relevant else 0
        if read >= lead:
            break
    return on / read if read else 0.0


def project_folders(memory: Memory, queries: Sequence[Query]) -> dict[str, str]:
    """Per query, the folder of the project whose session made the commit (``--here``)."""
    from causantic.retrieval.browse import SessionNotFound

    paths = {p.name: p.path for p in memory.projects()}
    out: dict[str, str] = {}
    for q in queries:
        for session in sorted(q.relevant):
            try:
                out[q.id] = paths[memory.session_view(session).project]
                break
            except (SessionNotFound, KeyError):
                continue
    return out


def build_store(home: Path, folders: Sequence[Path], log: Callable[[str], None]) -> None:
    """Ingest ``folders`` into the store at ``home`` (a no-op for files already there)."""
    from causantic import Memory

    started = time.perf_counter()
    with Memory(home) as memory:
        report = memory.ingest(folders)
        stats = memory.stats()
    log(
        f"store {home}: {stats.chunk_count} chunks, {stats.vector_count} vectors, {stats.session_count} sessions "
        f"({report.chunks_added} new, {time.perf_counter() - started:.0f} s)"
    )


def run(
    home: Path,
    queries: Sequence[Query],
    variants: Sequence[str],
    overrides: dict[str, str],
    log: Callable[[str], None],
    episodic_kinds: Sequence[str] = ("recall", "predict", "recall_chain"),
    timing_rounds: int = 3,
    work: WorkUnits | None = None,
    here: str | None = None,
    kept_to_project: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from causantic import Memory

    details: list[dict[str, Any]] = []
    ranked: dict[str, dict[str, list[str]]] = {}
    work_ranked: dict[str, dict[str, list[str]]] = {}
    for name in variants:
        config_overrides, request = VARIANTS[name]
        with Memory(home, overrides={**overrides, **config_overrides}) as memory:
            ranked[name], work_ranked[name] = {}, {}
            for q in queries:
                answer = memory.search(q.text, limit=SEARCH_LIMIT, **request)
                kept = [h.chunk for h in answer.hits if h.chunk.id not in q.ignored]
                ranked[name][q.id] = distinct([c.session_id for c in kept])
                if work is not None:
                    work_ranked[name][q.id] = distinct([work.units.get(c.id, c.session_id) for c in kept])
                details.append(
                    {
                        "query": q.id,
                        # another variant's lines: "search:NAME", so runs can be paired (paired_runs.py)
                        "kind": "search" if name == "default" else f"search:{name}",
                        "sessions": ranked[name][q.id][:10],
                        "relevant": sorted(q.relevant),
                        "nothing_relevant": answer.nothing_relevant,
                    }
                )
                if work is not None and work.relevant.get(q.id):  # the piece of work, paired the same way
                    details.append(
                        {
                            "query": q.id,
                            "kind": "work" if name == "default" else f"work:{name}",
                            "sessions": work_ranked[name][q.id][:10],
                            "relevant": sorted(work.relevant[q.id]),
                        }
                    )
        log(f"  search {name}: done")
    timings = time_variants(home, queries, variants, overrides, timing_rounds) if timing_rounds else {}
    episodic: dict[str, dict[str, Any]] = {}
    with Memory(home, overrides=overrides) as memory:
        own = here == "own" or kept_to_project
        folders = project_folders(memory, queries) if own else dict.fromkeys((q.id for q in queries), here)
        # --kept: asked with the project as filter (project=), as an agent passing its working directory
        asked = {q.id: {"project" if kept_to_project else "here": folders.get(q.id)} for q in queries}
        for kind in episodic_kinds:
            held, tokens, told, stories, shares, firsts, leads = [], [], [], [], [], [], []
            for q in queries:
                if kind == "recall_chain":
                    answer = memory.recall(q.text, mode="chain", **asked[q.id])
                else:
                    answer = getattr(memory, kind)(q.text, **asked[q.id])
                sessions = distinct([c.session_id for c in answer.chunks if c.id not in q.ignored])
                held.append(bool(q.relevant & set(sessions)))
                tokens.append(answer.tokens)
                # a story: some turn that led to a match (recall) or followed it (predict), not matches only
                told.append(any(not part.is_hit for episode in answer.episodes for part in episode.chunks))
                stories.append(tells_relevant_story(memory, answer, q.relevant))
                spent = [(p.chunk.session_id, p.tokens) for e in answer.episodes for p in e.chunks]
                total = sum(t for _, t in spent)
                shares.append(sum(t for s, t in spent if s in q.relevant) / total if total else 0.0)
                firsts.append(bool(answer.episodes) and answer.episodes[0].chunks[0].chunk.session_id in q.relevant)
                leads.append(lead_share(answer, q.relevant))
                details.append(
                    {
                        "query": q.id,
                        "kind": kind,
                        "sessions": sessions,
                        "tokens": answer.tokens,
                        "holds_relevant": held[-1],
                        "relevant_story": stories[-1],
                        "on_relevant": round(shares[-1], 3),
                        "first_relevant": firsts[-1],
                        "lead_on_relevant": round(leads[-1], 3),
                        "relevant": sorted(q.relevant),
                        "notes": list(answer.notes),
                    }
                )
            episodic[kind] = {
                "holds_relevant": round(100 * sum(held) / len(held), 1),
                "tells_story": round(100 * sum(told) / len(told), 1),
                "relevant_story": round(100 * sum(stories) / len(stories), 1),
                "on_relevant": round(100 * statistics.fmean(shares), 1),
                "first_relevant": round(100 * sum(firsts) / len(firsts), 1),
                "lead_on_relevant": round(100 * statistics.fmean(leads), 1),
                "median_tokens": int(statistics.median(tokens)),
                "max_tokens": max(tokens),
            }
            log(f"  {kind}: done")
    variants_out = compare_variants(ranked, queries, timings)
    result = {
        "search": {k: variants_out["default"][k] for k in ("r1", "r5", "r10", "mrr")},
        **episodic,
        "search_variants": variants_out,
        "n_queries": len(queries),
        "load": os.getloadavg()[0],
    }
    if work is not None:
        asked = [replace(q, relevant=work.relevant[q.id]) for q in queries if work.relevant.get(q.id)]
        result["work_variants"] = compare_variants(work_ranked, asked, {})
        result["n_work_queries"] = len(asked)
    return result, details


def compare_variants(
    ranked: dict[str, dict[str, list[str]]], queries: Sequence[Query], timings: dict[str, list[float]]
) -> dict[str, Any]:
    """Each variant's metrics over ``queries`` (ranked answers by query id), and against ``default``
    a sign test and paired bootstraps; overall, verbatim, and by meaning (words differ)."""
    base_rr = [reciprocal_rank(ranked["default"][q.id], q.relevant) for q in queries]
    variants_out: dict[str, Any] = {}
    for name in ranked:
        metrics: dict[str, Any] = search_metrics(ranked[name], queries)
        metrics["verbatim"] = search_metrics(ranked[name], [q for q in queries if q.verbatim])
        metrics["by_meaning"] = search_metrics(ranked[name], [q for q in queries if not q.verbatim])
        ms = sorted(timings.get(name, ()))
        if ms:
            metrics["search_ms"] = {
                "p50": round(statistics.median(ms), 1),
                "p95": round(ms[min(len(ms) - 1, math.ceil(0.95 * len(ms)) - 1)], 1),
            }
        if name != "default":
            rr = [reciprocal_rank(ranked[name][q.id], q.relevant) for q in queries]
            metrics["vs_default"] = sign_test(rr, base_rr)
            metrics["vs_default"]["mrr"] = bootstrap_delta(rr, base_rr)
            hit10 = [float(bool(q.relevant & set(ranked[name][q.id][:10]))) for q in queries]
            base10 = [float(bool(q.relevant & set(ranked["default"][q.id][:10]))) for q in queries]
            metrics["vs_default"]["r10"] = bootstrap_delta(hit10, base10)
            differ = [i for i, q in enumerate(queries) if not q.verbatim]
            metrics["vs_default_meaning"] = sign_test([rr[i] for i in differ], [base_rr[i] for i in differ])
            # mined queries: which projects the wins and losses come from (a gain may be one project's habit)
            moved = Counter(q.project for i, q in enumerate(queries) if q.project and rr[i] != base_rr[i])
            if moved:
                metrics["vs_default"]["moved_by_project"] = dict(moved.most_common())
        variants_out[name] = metrics
    return variants_out


def time_variants(
    home: Path, queries: Sequence[Query], variants: Sequence[str], overrides: dict[str, str], rounds: int = 3
) -> dict[str, list[float]]:
    """Search time per query (ms, limit 10 as people search), the variants interleaved query by query
    so that each sees the same machine load, taking turns to go first; after one warm-up search each."""
    from causantic import Memory

    memories = {name: Memory(home, overrides={**overrides, **VARIANTS[name][0]}) for name in variants}
    try:
        for name, memory in memories.items():
            memory.search(queries[0].text, limit=10, **VARIANTS[name][1])
        timings: dict[str, list[float]] = {name: [] for name in variants}
        names = list(memories)
        for _ in range(rounds):
            for i, q in enumerate(queries):
                # Each variant goes first equally often: the first search of a query fills the
                # process's word caches that the others then find warm (about 10 ms a search).
                for name in names[i % len(names) :] + names[: i % len(names)]:
                    memory = memories[name]
                    started = time.perf_counter()
                    memory.search(q.text, limit=10, **VARIANTS[name][1])
                    timings[name].append(1000 * (time.perf_counter() - started))
        return timings
    finally:
        for memory in memories.values():
            memory.close()


def render(result: dict[str, Any]) -> str:
    lines = [
        f"Coding memory: {result['n_queries']} queries (session level; %, MRR 0–1); "
        f"load average {result['load']:.1f} on {os.cpu_count()} cores",
        "",
        *render_variants(result["search_variants"], "search variant"),
    ]
    if "work_variants" in result:
        lines += [
            "",
            f"The piece of work a commit closed ({result['n_work_queries']} queries; a session cut at its commits):",
            *render_variants(result["work_variants"], "work variant"),
        ]
    lines += [
        "",
        *([f"Recall and predict asked from {asked_from(result['here'])} (--here):"] if result.get("here") else []),
        *(["Recall and predict kept to the project that made the commit (--kept):"] if result.get("kept") else []),
        f"{'answer':<14}{'holds relevant':>15}{'tells story':>12}{'relevant story':>15}{'on relevant':>12}"
        f"{'first relevant':>15}{f'first {LEAD_TOKENS} on rel.':>19}{'median tokens':>14}{'max tokens':>11}",
    ]
    for kind in ("recall", "predict", "recall_chain"):
        if kind not in result:
            continue
        e = result[kind]
        lines.append(
            f"{kind:<14}{e['holds_relevant']:15.1f}{e['tells_story']:12.1f}{e['relevant_story']:15.1f}"
            f"{e['on_relevant']:12.1f}{e['first_relevant']:15.1f}{e['lead_on_relevant']:19.1f}"
            f"{e['median_tokens']:14d}{e['max_tokens']:11d}"
        )
    lines.append(f"{'search top 5':<14}{result['search']['r5']:15.1f}")
    return "\n".join(lines)


def asked_from(here: str) -> str:
    return "the folder of the project that made the commit" if here == "own" else here


def render_variants(variants: dict[str, Any], title: str) -> list[str]:
    head = f"{title:<16}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR':>7}{'R@10 meaning':>14}{'p95 ms':>8}  vs default"
    lines = [head, "-" * len(head)]
    for name, m in variants.items():
        test = m.get("vs_default")
        versus = (
            f"  +{test['wins']} −{test['losses']} (p={test['p']:.2f}) "
            f"MRR {test['mrr']['delta']:+.3f} [{test['mrr']['ci95'][0]:+.3f},{test['mrr']['ci95'][1]:+.3f}]"
            if test
            else ""
        )
        p95 = f"{m['search_ms']['p95']:8.0f}" if "search_ms" in m else f"{'–':>8}"  # not timed
        meaning_r10 = m["by_meaning"].get("r10")
        meaning = f"{meaning_r10:14.1f}" if meaning_r10 is not None else f"{'–':>14}"  # every query verbatim
        lines.append(f"{name:<16}{m['r1']:7.1f}{m['r5']:7.1f}{m['r10']:7.1f}{m['mrr']:7.3f}{meaning}{p95}{versus}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    parser.add_argument(
        "--transcripts",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of the queries' own transcripts, ingested instead of corpus/claude-code/entireio__cli "
        "(for a split whose sessions are not in the corpus); repeatable",
    )
    parser.add_argument("--distractors", action="store_true", help="ingest the whole corpus/claude-code folder")
    parser.add_argument("--store", type=Path, help="keep (or reuse) the ingested store in this folder")
    parser.add_argument(
        "--variants",
        default="default,keyword,vector,no_floor,rrf60",
        help=f"search variants to compare, from: {', '.join(VARIANTS)}",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a configuration override for every run (e.g. relevance.floor=0.3)",
    )
    parser.add_argument(
        "--mined",
        action="store_true",
        help="queries mined from the corpus's own commits over the whole corpus (benchmarks/_commits.py)",
    )
    parser.add_argument("--search-only", action="store_true", help="skip recall and predict (ranking work)")
    parser.add_argument(
        "--here",
        nargs="?",
        const="own",
        metavar="FOLDER",
        help="ask recall and predict from the folder of the project whose session made the commit, as the CLI "
        "does, or from FOLDER (another project's: what leading with the asker's project costs)",
    )
    parser.add_argument(
        "--kept",
        action="store_true",
        help="ask recall and predict kept to the project whose session made the commit (project=), as an agent "
        "passing its working directory does",
    )
    parser.add_argument(
        "--timing-rounds", type=int, default=3, help="rounds of timed searches per variant (0: no timing)"
    )
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--details", type=Path, help="one JSON line per (query, answer kind)")
    args = parser.parse_args()
    if args.mined and args.transcripts:
        parser.error("--transcripts names the sessions of --queries; --mined reads the whole corpus")
    project_folders = args.transcripts or [CORPUS / PROJECT_FOLDER]
    if args.mined:
        folders = [ALL_CORPUS]
    elif args.distractors:
        folders = [*args.transcripts, CORPUS]
    else:
        folders = project_folders
    needed = [ALL_CORPUS / "sources.tsv"] if args.mined else [args.queries, *folders]
    if not all(path.exists() for path in needed):
        missing = ", ".join(str(path) for path in needed if not path.exists())
        print(f"Not found: {missing} (the dev data needs ../shared beside the repository).", file=sys.stderr)
        return 2
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown or "default" not in variants:
        parser.error(f"variants must include default and come from {', '.join(VARIANTS)}")
    overrides = dict(item.split("=", 1) for item in args.set)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    home = args.store or Path(tempfile.mkdtemp(prefix="causantic-coding-"))
    build_store(home, folders, log)
    mined: dict[str, Any] = {}
    work: WorkUnits | None = None
    if args.mined:
        queries, work, mined = mined_queries(home, log)
    else:
        queries = load_queries(args.queries)
    kinds = () if args.search_only else ("recall", "predict", "recall_chain")
    result, details = run(
        home, queries, variants, overrides, log, kinds, args.timing_rounds, work, args.here, args.kept
    )
    result["here"] = args.here
    result["kept"] = args.kept
    if mined:
        result["mined"] = mined
    print(render(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.details:
        args.details.write_text("".join(json.dumps(d) + "\n" for d in details), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
