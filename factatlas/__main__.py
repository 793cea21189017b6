"""`python3 -m factatlas ...`: the same as the `factatlas` command, from whichever tree is imported."""

from factatlas.app.cli import main

main()
