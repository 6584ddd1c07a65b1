"""python -m tvmnode: the command line (see tvmnode.cli)."""
import sys

from .cli import main

sys.exit(main())
