"""`python -m headwater` runs the CLI."""

from headwater.cli import main

main()
