"""Leaving the `lightscientist` process without the interpreter's teardown.

After a run has loaded LangChain, LangGraph and deepagents, Python spends about 0.7 s
tearing down their modules and objects at exit, in native code, writing nothing. Every file
a command writes is closed, replaced atomically or appended with one write before it
returns, and the checkpoint database is closed by the runtime, so once the `atexit`
handlers have run and the standard streams are flushed there is nothing left to do.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import sys
import threading
from typing import NoReturn

from lightscientist_jupyter.cli import main

_leaving_with: int | None = None
"""The exit code `leave` was given; None until then (an uncaught exception, say, or a
non-daemon thread: the interpreter then ends as it always does)."""


def _end_without_teardown() -> None:
    """The last `atexit` handler to run (it is registered when this module is imported,
    before LangChain and the rest register theirs, and the handlers run newest first):
    logging's own shutdown (registered earlier, so it would come after this one), a flush of
    stdout and stderr, then `os._exit`."""
    if _leaving_with is None:
        return
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said there
            pass
    os._exit(_leaving_with)


atexit.register(_end_without_teardown)


def leave(code: int) -> NoReturn:
    """Exit with `code`: the interpreter waits for non-daemon threads (none is ours) and runs
    the `atexit` handlers as usual, then `_end_without_teardown` skips the teardown."""
    global _leaving_with
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if not any(not t.daemon for t in others):
        _leaving_with = code
    sys.exit(code)


def run() -> NoReturn:
    """The `lightscientist` command (`python -m lightscientist_jupyter` too). A reader that
    stops early (`lightscientist history | head`) ends it quietly, as it would `cat`."""
    try:
        code = main()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to say
        code = 128 + signal.SIGPIPE
    leave(code)
