"""What ingest keeps of tool results, measured over real transcripts (../shared/corpus).

1. How a run ended. Every long command output (a result of a tool in ``results.COMMAND_TOOLS``
   longer than ``chunking.toolResultMaxChars``) that holds a line saying how it ended (pytest, jest,
   vitest, cargo, go and unittest summaries, a traceback's last line, ``error:`` lines, exit codes,
   mypy/ruff/tsc counts): how often its last such line is in the text kept of it, for the head alone
   (``chunking.toolResultTailChars`` 0) and for each ``--tails`` value (the product renders each).
   A line redaction changed counts as lost.
2. What is stored: the corpus ingested (embeddings off) into a fresh store by this checkout and, in
   the same run, by each ``--src`` checkout (e.g. ``/work/main``): chunks, approximate tokens,
   characters of chunk text, and tool-result sections (``[Result:…]``/``[Error:…]`` lines opening
   one).

Run: ``PYTHONPATH=src python benchmarks/tool_results.py [--src /work/main] [--tails 0,200,300,600]
[--json OUT]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"

# A line saying how a run ended; the last one in an output is the one that counts.
_ENDINGS = (
    r"^=+ .*\b(?:passed|failed|errors?|no tests ran|skipped|xfailed)\b.* in [\d.]+s\b.*$",  # pytest
    r"^\s*Tests?:\s+\d+.*total.*$",  # jest
    r"^\s*Test (?:Files|Suites):?\s.*$",  # vitest, jest
    r"^.*test result: (?:ok|FAILED).*$",  # cargo test
    r"^(?:ok|FAIL)\s+\S+.*$",  # go test
    r"^--- FAIL:.*$",
    r"^\w+(?:\.\w+)*(?:Error|Exception|Exit|Interrupt)(?::.*)?$",  # a traceback's last line
    r"^.*\berror(?:\[E\d+\])?:.*$",  # cargo, tsc, gcc, git
    r"^npm (?:ERR!|error).*$",
    r"^.*\bexit(?:ed)? (?:code|status) -?\d+.*$",
    r"^Exit code:? -?\d+.*$",
    r"^Found \d+ errors?\b.*$",  # mypy, tsc, ruff
    r"^Success: no issues found.*$",
    r"^All checks passed!.*$",
    r"^.*\b\d+ (?:passing|failing)\b.*$",  # mocha
    r"^BUILD (?:SUCCESS|FAILED|SUCCESSFUL).*$",
    r"^(?:Ran \d+ tests?|Tests run:).*$",  # unittest, JUnit
    r"^(?:OK|FAILED)(?: \(.*\))?$",
    r"^.*could not compile.*$",
)
ENDING = re.compile("|".join(f"(?:{p})" for p in _ENDINGS), re.MULTILINE | re.IGNORECASE)
_RESULT_SECTION = re.compile(r"^\[(?:Result|Error):", re.MULTILINE)


def last_ending(text: str) -> str | None:
    """The last line of ``text`` that says how a run ended, stripped; None when none does."""
    found = None
    for match in ENDING.finditer(text):
        found = match.group(0).strip()
    return found


def endings_kept(corpus: Path, tails: list[int]) -> dict[str, object]:
    """Of the long command outputs holding an ending, how many keep their last one, per tail size."""
    from causantic.config import Config
    from causantic.ingest.redact import redactor_from
    from causantic.ingest.render import render_turn
    from causantic.ingest.results import COMMAND_TOOLS
    from causantic.transcripts import assemble_turns
    from causantic.transcripts.discovery import discover, read_session
    from causantic.transcripts.model import ToolCall, ToolResult

    chunking = Config().chunking
    redact = redactor_from(Config().redaction)
    long_outputs = 0
    endings: dict[str, str] = {}  # result id → its ending
    kept: Counter[int] = Counter()
    for files in discover(corpus):
        for session in read_session(files)[0]:
            for transcript in ([session.main] if session.main else []) + list(session.subagents):
                names: dict[str, str] = {}
                for turn in assemble_turns(transcript):
                    ids: set[str] = set()
                    for block in (b for m in turn.messages for b in m.blocks):
                        if isinstance(block, ToolCall):
                            names[block.id] = block.name
                        elif isinstance(block, ToolResult) and names.get(block.tool_use_id) in COMMAND_TOOLS:
                            text = block.whole()
                            if len(text.strip()) > chunking.tool_result_max_chars:
                                long_outputs += 1
                                if (ending := last_ending(text)) is not None:
                                    key = f"{session.session_id}/{transcript.agent_id}/{block.tool_use_id}"
                                    endings[key] = ending
                                    ids.add(block.tool_use_id)
                    if not ids:
                        continue
                    for tail in tails:
                        rendered = render_turn(
                            turn,
                            tool_result_max_chars=chunking.tool_result_max_chars,
                            tool_result_tail_chars=tail,
                            tool_input_max_chars=chunking.tool_input_max_chars,
                            redact=redact,
                        )
                        for section in rendered.sections:
                            if section.tool_result_id in ids:
                                key = f"{session.session_id}/{transcript.agent_id}/{section.tool_result_id}"
                                kept[tail] += endings[key] in section.text
    return {"long_command_outputs": long_outputs, "with_ending": len(endings), "kept": {t: kept[t] for t in tails}}


def stored(corpus: Path, src: Path) -> dict[str, int]:
    """The corpus ingested by the checkout at ``src`` (embeddings off) into a fresh store: its figures."""
    with tempfile.TemporaryDirectory(prefix="causantic-results-") as home:
        code = (
            "import sys; from pathlib import Path; from causantic import Memory; from causantic.config import Config\n"
            "with Memory(config=Config()) as m: m.ingest([Path(sys.argv[1])], embed=False, workers=1)\n"
        )
        env = {**os.environ, "PYTHONPATH": str(src / "src"), "CAUSANTIC_HOME": home}
        subprocess.run([sys.executable, "-c", code, str(corpus)], env=env, check=True, capture_output=True)
        with sqlite3.connect(Path(home) / "memory.db") as conn:
            chunks, tokens, chars = conn.execute(
                "SELECT COUNT(*), SUM(approx_tokens), SUM(LENGTH(content)) FROM chunks"
            ).fetchone()
            sections = sum(len(_RESULT_SECTION.findall(c)) for (c,) in conn.execute("SELECT content FROM chunks"))
    return {"chunks": chunks, "tokens": tokens, "chars": chars, "result_sections": sections}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--tails", default="0,200,300,600", help="toolResultTailChars values to compare")
    parser.add_argument("--src", type=Path, action="append", default=[], help="another checkout to compare")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    from causantic.config import Config

    tails = [int(t) for t in args.tails.split(",")]
    default = Config().chunking.tool_result_tail_chars
    endings = endings_kept(args.corpus, sorted({*tails, default}))
    total = endings["with_ending"]
    print(
        f"{endings['long_command_outputs']} command outputs longer than the head kept, {total} of them saying how "
        "they ended:"
    )
    print(f"{'tail chars':>10}  {'last ending kept':>16}")
    for tail, count in endings["kept"].items():  # type: ignore[attr-defined]
        mark = "  (default)" if tail == default else ""
        print(f"{tail:>10}  {count:>6} of {total} ({100 * count / max(total, 1):4.1f}%){mark}")
    checkouts = {"this checkout": REPO} | {str(src): src for src in args.src}
    figures = {name: stored(args.corpus, src) for name, src in checkouts.items()}
    print(f"\n{'stored by':<24} {'chunks':>7} {'tokens':>10} {'characters':>11} {'result sections':>16}")
    for name, row in figures.items():
        print(f"{name:<24} {row['chunks']:>7,} {row['tokens']:>10,} {row['chars']:>11,} {row['result_sections']:>16,}")
    if args.json:
        args.json.write_text(json.dumps({"endings": endings, "stored": figures}, indent=2) + "\n")


if __name__ == "__main__":
    main()
