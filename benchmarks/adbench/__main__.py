"""python -m benchmarks.adbench ...: the same as `adarray bench adbench ...` (run from the repository root)."""
import sys

from .run import main

sys.exit(main())
