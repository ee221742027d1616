"""`python -m causantic.hooks <hook>`: what Claude Code runs; imports no more than the hook needs."""

import sys

from causantic.hooks.runner import main

sys.exit(main(sys.argv[1:]))
