"""`python -m lightscientist_jupyter` is the `lightscientist` command."""

import sys

from lightscientist_jupyter.cli import main

sys.exit(main())
