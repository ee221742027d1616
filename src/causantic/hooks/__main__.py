"""`python -m causantic.hooks <hook>`: what Claude Code runs; imports no more than the hook needs.

The prompt hook, which Claude Code waits for on every prompt, first asks the warm process
(:mod:`causantic.hooks.warm`), importing nothing else unless it must run in-process.
"""

import sys

if sys.argv[1:] == ["user-prompt-submit"]:
    from causantic.hooks.warm import client

    sys.exit(client())

from causantic.hooks.runner import main

sys.exit(main(sys.argv[1:]))
