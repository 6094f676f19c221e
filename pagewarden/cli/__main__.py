"""``python -m pagewarden.cli``."""

from pagewarden.cli import main

main()
