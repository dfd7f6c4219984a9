"""Leaving the `lightscientist` process: every `atexit` handler runs, buffered output and logs
reach their files, the exit code is the command's, and the interpreter's teardown is skipped."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PROGRAM = textwrap.dedent(
    """
    import atexit, logging, logging.handlers, sys
    from pathlib import Path
    from lightscientist_jupyter.cli.leave import leave

    folder = Path(sys.argv[1])
    # a library's handler, registered after ours (as LangChain's are, on first use)
    atexit.register(lambda: (folder / "handler-ran").write_text("yes"))
    # a buffered log that only logging's own shutdown flushes
    target = logging.FileHandler(folder / "app.log")
    logging.getLogger("lib").addHandler(logging.handlers.MemoryHandler(1000, target=target))
    logging.getLogger("lib").warning("kept until shutdown")
    # a teardown that the skipped finalisation would have run
    class Finaliser:
        def __del__(self):
            (folder / "teardown-ran").write_text("yes")
    keep = Finaliser()
    sys.stdout.write("no newline, still buffered")
    leave(3)
    """
)


def test_leave_runs_the_exit_handlers_flushes_and_exits_with_the_code(tmp_path: Path):
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "no newline, still buffered"
    assert (tmp_path / "handler-ran").read_text() == "yes"
    assert (tmp_path / "app.log").read_text() == "kept until shutdown\n"
    assert not (tmp_path / "teardown-ran").exists(), "the interpreter's teardown still ran"
