"""The README's "Use it as a library" example runs as written, on a fresh store."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_library_example_runs(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Use it as a library") :]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    script = code.group(1).replace("/tmp/causantic-demo", str(tmp_path / "demo"))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] == "True"  # gibberish: nothing relevant
    assert any(line.endswith("match") for line in lines[:-1])  # the recall answer names its hits
    episodes = "\n".join(lines[:-1]).split("\nacme-shop best match ")  # each episode's heading, then its chunks
    assert lines[0].startswith("acme-shop best match ") and len(episodes) >= 1
    for episode in episodes:
        times = [line.split()[0] for line in episode.splitlines()[1:]]
        assert times and times == sorted(times)  # each episode in time order
