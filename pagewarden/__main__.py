"""`python -m pagewarden` runs the command line."""

from pagewarden.cli import main

main()
