"""`python -m causantic` runs the CLI."""

from causantic.cli.main import main

main()
