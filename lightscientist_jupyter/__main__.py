"""`python -m lightscientist_jupyter` is the `lightscientist` command."""

from lightscientist_jupyter.cli.leave import run

run()
