"""`python -m adarray ...` runs the command line (see adarray.cli)."""
import sys

from .cli import main

sys.exit(main())
