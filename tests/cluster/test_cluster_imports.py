from __future__ import annotations

import subprocess
import sys

from process_support import subprocess_env


def test_importing_causantic_cluster_loads_no_numpy_scipy_or_sklearn() -> None:
    code = "import sys, causantic.cluster\nprint(sorted(m for m in ('numpy', 'scipy', 'sklearn') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=subprocess_env())
    assert out.stdout.strip() == "[]"
