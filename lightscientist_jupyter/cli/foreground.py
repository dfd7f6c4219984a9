"""A project run by the command itself, in the terminal's foreground, and the line it ends on.

`research`, `resume`, and a `reply` or a hand-over step that sets an idle project running all
end here: the run goes on in this process until it stops, and the last line printed is the
project's status, which also gives the exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from lightscientist_jupyter.controller.state import PendingDecision
from lightscientist_jupyter.events import Subscriber, printable
from lightscientist_jupyter.vocab import DecisionKind, ProjectStatus

if TYPE_CHECKING:  # imported by the run itself: LangChain stays out of a quick command
    from lightscientist_jupyter.app.project import Project

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def finish_line(status: str) -> int:
    """Print the status as the last line; exit 1 for a project that ended without reaching
    its goal (`failed`, `cancelled`), 0 otherwise (as the README's command-line section says)."""
    print(status)
    ended = status in (ProjectStatus.FAILED, ProjectStatus.CANCELLED)
    return EXIT_FAILED if ended else EXIT_OK


def subscribers(args: argparse.Namespace) -> tuple[Subscriber, ...]:
    from lightscientist_jupyter.events import TerminalPrinter

    return (TerminalPrinter(sys.stdout),) if getattr(args, "watch", False) else ()


def next_step(pending: PendingDecision, reply: str) -> str:
    """What to do about a pending decision: `reply` for a gate or a question, one of its
    options for a coding agent's permission request."""
    if pending.permission is not None:
        names = " | ".join(o.name for o in pending.permission.options)
        return (
            f"options: {names} — `lightscientist reply y --comment OPTION` picks one; "
            "`reply y` allows once, `reply n` rejects"
        )
    if pending.kind != DecisionKind.HANDOFF:
        return reply
    return (
        f"do it (the outputs: {', '.join(pending.outputs)}), then `lightscientist deliver "
        '--summary "…"`, or `lightscientist give-back`'
    )


def _announce_gate(project: Project) -> Callable[[], None]:
    """With --wait: say once per decision that the run waits at a gate, and for what."""
    shown: set[str] = set()

    def announce() -> None:
        pending = project.controller.state.pending
        if pending is not None and pending.id not in shown:
            shown.add(pending.id)
            reply = "reply with `lightscientist reply y` or `n` (or from the side panel)"
            hint = next_step(pending, reply)
            print(f"waiting at {pending.stage}: {printable(pending.question)} — {hint}", flush=True)

    return announce


def run_project(project: Project, args: argparse.Namespace) -> int:
    import gc
    import signal

    # This process is the run's alone: what exists now (LangChain's, LangGraph's and
    # deepagents' modules, classes and caches: over 100,000 objects) lives until it exits, so
    # the collector's full passes need not walk it again (each took 60-100 ms here).
    gc.freeze()
    previous = signal.signal(signal.SIGTERM, lambda *_: project.stop())
    try:
        status = project.run(
            wait_for_replies=getattr(args, "wait", False), on_idle=_announce_gate(project)
        )
    except KeyboardInterrupt:
        project.stop()
        status = project.controller.status
    finally:
        signal.signal(signal.SIGTERM, previous)
        project.close()
    reason = project.controller.state.reason
    if status == ProjectStatus.FAILED and reason:
        print(f"reason: {printable(reason)}")
    pending = project.controller.state.pending
    if status == ProjectStatus.WAITING_USER and pending:
        question = printable(pending.question)
        hint = next_step(pending, "reply with `lightscientist reply y` or `n`")
        print(f"waiting: {question} — {hint}")
    return finish_line(status)
