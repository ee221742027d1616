"""Prompt memory: is what the user-prompt-submit hook adds relevant, is it quiet otherwise, and fast?

Usage::

    python benchmarks/prompt_memory.py [--work DIR] [--json OUT] [--runs N] [--large HOME] [--set key=value ...]

The prompts and stores are those of ``benchmarks/relevance_floor.py`` (imported, not copied): the
coding development queries against the coding store, the LoCoMo development questions against their
conversation (answerable), and at least 200 prompts with no answer in memory (gibberish, other walks
of life, projects never ingested), each asked of the coding store and of one LoCoMo conversation.
The stores are built keyword-only (no vectors): the hook never uses them.

- **precision**: share of the answerable prompts given an injection whose injection holds a relevant
  moment (coding: a session that made the commit; LoCoMo: a chunk holding an evidence turn);
  **precision_session** counts a LoCoMo moment as relevant when its session holds an evidence turn
  (what ``reconstruct`` of the named session would show);
- **inject_rate**: share of answerable prompts given an injection;
- **false_inject_rate**: share of the unanswerable prompts given any injection;
- **mean_tokens**: mean approximate tokens added per answerable prompt (0 when nothing is added);
  **mean_tokens_injected**: the same over the prompts given an injection;
- **p95_ms**: spawn-to-answer of the real hook (``python -m causantic.hooks user-prompt-submit`` with
  hook JSON on stdin) on the coding store, answered by its warm process (started by the first run,
  as in use; the first prompt after ``promptMemory.warmMinutes`` idle is cold), beside
  **baseline_p95_ms**, a bare ``python -c pass`` start, and **cold_p95_ms**, the hook run
  in-process (``promptMemory.warmMinutes`` 0); the three interleaved in the same run.

The selection runs in-process through the hook's own functions (``prompt_moments`` and ``render``)
at each ``promptMemory.sessionMargin`` of a sweep (every other key as configured), so the table shows
what a stricter or looser margin would give. Both starts run with compiled bytecode (a cache folder
under the work folder, filled by two warm-up runs), as an installed package has it.

``--large HOME`` (repeatable; a copy of a store like ``/work/bench-stores/quality-coding-d``: the coding
project among the whole corpus) asks that store the coding development queries from the coding
project's folder, and every off-topic prompt (``EVERYDAY``, a developer's working life, and the
unanswerable set above) from the folder of each of its ``LARGE_CWDS`` largest projects, as a user
working there would: the hook's cross-project pass searches the whole corpus.

Goals: precision ≥ 80%, false injections ≤ 5%, p95 ≤ 150 ms on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coding import CORPUS, DEFAULT_QUERIES, load_queries  # noqa: E402
from relevance_floor import EVERYDAY, LOCOMO, Trial, trials, unanswerable  # noqa: E402

SWEEP = (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 2.0)  # promptMemory.sessionMargin
SRC = Path(__file__).resolve().parents[1] / "src"
LARGE_CWDS = 12  # --large: off-topic prompts are asked from the folders of this many of its largest projects


@dataclass(slots=True)
class Outcome:
    trial: Trial
    # sessionMargin -> ([(relevant, session relevant) per moment added], approximate tokens added)
    by_margin: dict[float, tuple[list[tuple[bool, bool]], int]]


def store_config(work: Path, store: str, overrides: dict[str, str]) -> Any:
    from causantic.config import load_config

    home = work / store
    return load_config().with_overrides(
        {"storage.dbPath": str(home / "memory.db"), "storage.vectorPath": str(home / "vectors"), **overrides}
    )


def main_project(services: Any) -> str:
    from causantic.retrieval.listing import list_projects

    return max(list_projects(services.store), key=lambda p: p.chunks).path


def observe(work: Path, all_trials: Sequence[Trial], overrides: dict[str, str]) -> tuple[list[Outcome], dict[str, str]]:
    """What the hook's own selection (``prompt_moments``, ``render``) adds to each prompt, at each
    ``promptMemory.sessionMargin`` of the sweep and the configured one; every other key as configured."""
    from causantic.config import db_path
    from causantic.hooks.prompt_memory import render
    from causantic.prompt_services import open_prompt_index
    from causantic.retrieval.moments import MomentsRequest, prompt_moments
    from causantic.services import open_services

    out: list[Outcome] = []
    cwds: dict[str, str] = {}
    by_store: dict[str, list[Trial]] = {}
    for t in all_trials:
        by_store.setdefault(t.store, []).append(t)
    for store, group in by_store.items():
        config = store_config(work, store, overrides)
        pm = config.prompt_memory
        # Services, not Memory: this sweeps the prompt hook's own selection (prompt_moments) over its index.
        with open_services(config) as services, open_prompt_index(db_path(config)) as index:
            cwds[store] = cwd = main_project(services)
            for t in group:
                relevant_sessions: dict[str, bool] = {}
                by_margin = {}
                for margin in sorted({*SWEEP, pm.session_margin}):
                    found = prompt_moments(
                        index,
                        config.relevance,
                        MomentsRequest(
                            t.query,
                            cwd,
                            pm.bar,
                            pm.cross_project_bar,
                            pm.max_moments,
                            pm.min_terms,
                            margin,
                            pm.min_coverage,
                            pm.per_session,
                        ),
                    )
                    marks = []
                    for m in found.moments:
                        sid = m.chunk.session_id
                        if sid not in relevant_sessions:
                            relevant_sessions[sid] = session_relevant(services.store, t, sid)
                        marks.append((t.is_relevant(m.chunk), relevant_sessions[sid]))
                    tokens = round(len(render(found.moments, pm.max_tokens)[0]) / 3.5) if found.moments else 0
                    by_margin[margin] = (marks, tokens)
                out.append(Outcome(t, by_margin))
    return out, cwds


def session_relevant(store: Any, trial: Trial, session_id: str) -> bool:
    chunks = store.get_chunks(store.session_chunk_ids(session_id))
    return any(trial.is_relevant(c) for c in chunks.values())


def rates(outcomes: Sequence[Outcome], margin: float) -> dict[str, float]:
    answerable = [o for o in outcomes if o.trial.answerable]
    unanswerable = [o for o in outcomes if not o.trial.answerable]
    injected = [o.by_margin[margin][0] for o in answerable if o.by_margin[margin][0]]
    right = sum(1 for marks in injected if any(r for r, _ in marks))
    right_session = sum(1 for marks in injected if any(s for _, s in marks))
    false = sum(1 for o in unanswerable if o.by_margin[margin][0])
    return {
        "precision": round(100 * right / max(len(injected), 1), 2),
        "precision_session": round(100 * right_session / max(len(injected), 1), 2),
        "inject_rate": round(100 * len(injected) / max(len(answerable), 1), 2),
        "false_inject_rate": round(100 * false / max(len(unanswerable), 1), 2),
        "mean_tokens": round(statistics.fmean(o.by_margin[margin][1] for o in answerable), 1) if answerable else 0.0,
        "mean_tokens_injected": round(
            statistics.fmean(o.by_margin[margin][1] for o in answerable if o.by_margin[margin][0]), 1
        )
        if injected
        else 0.0,
    }


def large_store(home: Path, overrides: dict[str, str]) -> dict[str, Any]:
    """On a store of the whole corpus: the coding questions asked from the coding project's folder
    (the largest project), and the off-topic prompts from each of the ``LARGE_CWDS`` largest
    projects' folders; at the configured ``promptMemory.*``."""
    from causantic.prompt_services import open_prompt_index
    from causantic.retrieval.listing import list_projects
    from causantic.retrieval.moments import MomentsRequest, prompt_moments
    from causantic.services import open_services

    home = home.resolve()
    coding = [
        Trial(str(home), q.text, True, lambda c, rel=q.relevant: c.session_id in rel)
        for q in load_queries(DEFAULT_QUERIES)
    ]
    config = store_config(home, "", overrides)
    pm = config.prompt_memory
    outcomes, _ = observe(home, coding, overrides)
    answered = rates(outcomes, pm.session_margin)
    sets = {
        "everyday": [q for q in EVERYDAY.splitlines() if q.strip()],
        "unanswerable": unanswerable(),
    }
    with open_services(config) as services:
        projects = sorted(list_projects(services.store), key=lambda p: -p.chunks)[:LARGE_CWDS]
    injected = dict.fromkeys(sets, 0)
    with open_prompt_index(home / "memory.db") as index:
        for project in projects:
            for name, prompts in sets.items():
                for prompt in prompts:
                    request = MomentsRequest(
                        prompt,
                        project.path,
                        pm.bar,
                        pm.cross_project_bar,
                        pm.max_moments,
                        pm.min_terms,
                        pm.session_margin,
                        pm.min_coverage,
                        pm.per_session,
                    )
                    injected[name] += bool(prompt_moments(index, config.relevance, request).moments)
    out: dict[str, Any] = {
        "coding_inject_rate": answered["inject_rate"],
        "coding_precision": answered["precision"],
        "projects": len(projects),
    }
    for name, prompts in sets.items():
        out[f"{name}_prompts"] = len(prompts) * len(projects)
        out[f"{name}_injected"] = injected[name]
        out[f"{name}_false_rate"] = round(100 * injected[name] / max(len(prompts) * len(projects), 1), 2)
    print(
        f"large store {home}: coding questions {answered['inject_rate']}% given context (precision "
        f"{answered['precision']}%); off-topic prompts from {len(projects)} projects' folders given context: "
        + ", ".join(f"{name} {injected[name]} of {len(prompts) * len(projects)}" for name, prompts in sets.items())
    )
    return out


def latency(
    work: Path, store: str, cwd: str, prompts: Sequence[str], runs: int, overrides: dict[str, str]
) -> tuple[dict[str, float], int]:
    """p95 ms of a bare Python start and of the real hook, cold (in-process: no warm process) and
    warm (answered by the warm process the first warm run starts), the three interleaved; and how
    many warm hook runs printed."""
    env = dict(
        os.environ,
        CAUSANTIC_HOME=str(work / store),
        CAUSANTIC_PROMPT_MEMORY_ENABLED="true",
        PYTHONPATH=os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p),
        PYTHONPYCACHEPREFIX=str(work / "pycache"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an install has its bytecode; recompiling is not the hook's cost
    for key, value in overrides.items():
        section, _, name = key.partition(".")
        env[
            "CAUSANTIC_"
            + "".join("_" + c if c.isupper() else c for c in section).upper()
            + "_"
            + "".join("_" + c if c.isupper() else c for c in name).upper()
        ] = value
    # Cold: a copy of the store in a data directory of its own, so no warm process answers for it.
    cold_home = work / f"{store}-cold"
    cold_home.mkdir(exist_ok=True)
    with sqlite3.connect(work / store / "memory.db") as source, sqlite3.connect(cold_home / "memory.db") as copy:
        source.backup(copy)  # WAL included
    cold_env = dict(env, CAUSANTIC_HOME=str(cold_home), CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES="0")
    hook = [sys.executable, "-m", "causantic.hooks", "user-prompt-submit"]
    times: dict[str, list[float]] = {"bare": [], "cold": [], "warm": []}
    printed = 0
    pid_file = work / store / "run" / "prompt-server.pid"
    try:
        for i in range(-3, runs):  # warm-up runs: bytecode, the configuration cache, the warm process
            payload = json.dumps(
                {
                    "session_id": f"bench-{os.getpid()}-{i}",
                    "cwd": cwd,
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": prompts[i % len(prompts)],
                }
            )
            took: dict[str, float] = {}
            for name, command, run_env in (
                ("bare", [sys.executable, "-c", "pass"], env),
                ("cold", hook, cold_env),
                ("warm", hook, env),
            ):
                started = time.perf_counter()
                done = subprocess.run(command, input=payload, env=run_env, capture_output=True, text=True, check=True)
                took[name] = (time.perf_counter() - started) * 1000
                printed += name == "warm" and i >= 0 and bool(done.stdout.strip())
            if i == -1:
                for _ in range(100):  # the warm process starts detached: let it listen before measuring
                    if pid_file.exists():
                        break
                    time.sleep(0.1)
            if i >= 0:
                for name, ms in took.items():
                    times[name].append(ms)
    finally:
        if pid_file.exists():  # the warm process this benchmark started
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
    return {name: p95(values) for name, values in times.items()}, printed


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="keep (or reuse) the stores in this folder")
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--runs", type=int, default=60, help="hook and baseline starts for the latency (0: none)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--large",
        type=Path,
        action="append",
        default=[],
        metavar="HOME",
        help="also ask a copy of a whole-corpus store the coding and off-topic prompts (repeatable)",
    )
    args = parser.parse_args()
    if not LOCOMO.is_file() or not CORPUS.is_dir():
        print("Needs ../shared beside the repository.", file=sys.stderr)
        return 2
    overrides = dict(item.split("=", 1) for item in args.set)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    os.environ["CAUSANTIC_EMBEDDING_EAGER"] = "false"  # the hook is keyword-only: the stores need no vectors
    work = args.work or Path(tempfile.mkdtemp(prefix="causantic-prompt-memory-"))
    all_trials = trials(work, log)
    outcomes, cwds = observe(work, all_trials, overrides)
    pm = store_config(work, "coding", overrides).prompt_memory
    print(
        f"{'margin':>6} {'precision %':>12} {'by session %':>13} {'inject %':>9} {'false inject %':>15}"
        f" {'mean tokens':>12}"
    )
    for margin in sorted({*SWEEP, pm.session_margin}):
        r = rates(outcomes, margin)
        mark = "  <- configured" if margin == pm.session_margin else ""
        print(
            f"{margin:6.2f} {r['precision']:12.1f} {r['precision_session']:13.1f} {r['inject_rate']:9.1f}"
            f" {r['false_inject_rate']:15.1f} {r['mean_tokens']:12.1f}{mark}"
        )
    for name, keep in (
        ("coding", lambda o: o.trial.store == "coding"),
        ("LoCoMo", lambda o: o.trial.store != "coding"),
    ):
        part = rates([o for o in outcomes if keep(o)], pm.session_margin)
        print(
            f"  {name} as configured: precision {part['precision']}% (by session "
            f"{part['precision_session']}%), inject {part['inject_rate']}%, "
            f"false inject {part['false_inject_rate']}%"
        )
    prompts = [t.query for t in all_trials if t.store == "coding"]
    p95s = {"bare": float("nan"), "cold": float("nan"), "warm": float("nan")}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if args.runs > 0:  # --runs 0: precision only
        p95s, printed = latency(
            work, "coding", cwds["coding"], prompts[:: max(1, len(prompts) // 60)], args.runs, overrides
        )
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(
            f"latency over {args.runs} starts each (load {load:.2f}): bare python p95 {p95s['bare']} ms; hook "
            f"warm p95 {p95s['warm']} ms (ratio {p95s['warm'] / p95s['bare']:.2f}), cold (in-process) p95 "
            f"{p95s['cold']} ms (ratio {p95s['cold'] / p95s['bare']:.2f}); {printed} of {args.runs} warm runs "
            "added context"
        )
    result = rates(outcomes, pm.session_margin) | {
        "p95_ms": p95s["warm"],
        "baseline_p95_ms": p95s["bare"],
        "cold_p95_ms": p95s["cold"],
        "bar": pm.bar,
        "session_margin": pm.session_margin,
        "n_answerable": sum(1 for o in outcomes if o.trial.answerable),
        "n_unanswerable": sum(1 for o in outcomes if not o.trial.answerable),
        "load": round(load, 2),
    }
    for home in args.large:
        result.setdefault("large", {})[str(home)] = large_store(home, overrides)
    print(json.dumps(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
