"""Leaving the `lightscientist` process without the interpreter's teardown.

After a run has loaded LangChain, LangGraph and deepagents, Python spends about 0.7 s
tearing down their modules and objects at exit, in native code, writing nothing. Every file
a command writes is closed, replaced atomically or appended with one write before it
returns, and the checkpoint database is closed by the runtime, so once the `atexit`
handlers have run and the standard streams are flushed there is nothing left to do.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from typing import NoReturn

from lightscientist_jupyter.cli import main


def leave(code: int) -> NoReturn:
    """Exit with `code`: the `atexit` handlers and a flush of stdout and stderr, then
    `os._exit`. With a non-daemon thread still running (none of ours is), the normal exit,
    which waits for it."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(not t.daemon for t in others):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said there
            pass
    os._exit(code)


def run() -> NoReturn:
    """The `lightscientist` command (`python -m lightscientist_jupyter` too). A reader that
    stops early (`lightscientist history | head`) ends it quietly, as it would `cat`."""
    try:
        code = main()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to say
        code = 128 + signal.SIGPIPE
    leave(code)
